//! Shared bodies of the fuzz targets, also run over a seed corpus by the crate's tests.
//!
//! Each function feeds arbitrary bytes to the parsers, calls every accessor of every view
//! that validates, and checks a few invariants (a filled checksum verifies; a pcap file
//! read and rewritten reads back the same). Any panic is a bug.

use std::hint::black_box;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::ethernet::{self, EthernetFrame};
use crate::icmpv6::NeighborRepr;
use crate::ipv4::{self, Ipv4OptionKind, Ipv4Packet};
use crate::ipv6::{self, Ipv6Packet};
use crate::pcap::{PcapReader, PcapWriter, MAX_CAPLEN};
use crate::stp::BpduRepr;
use crate::{ArpPacket, IcmpPacket, Icmpv6Packet, TcpPacket, UdpPacket};

/// Parses `data` as an Ethernet frame and, independently, as each header type on its own.
pub fn wire_headers(data: &[u8]) {
    ethernet_frame(data);
    ipv4_packet(data);
    ipv6_packet(data);
    arp_packet(data);
    icmp_packet(data);
    let (s4, d4) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 19, 0, 1));
    let (s6, d6) = (Ipv6Addr::LOCALHOST, Ipv6Addr::UNSPECIFIED);
    udp_packet(data, s4, d4, &s6, &d6);
    tcp_packet(data, s4, d4, &s6, &d6);
    icmpv6_packet(data, &s6, &d6);
    bpdu_frame(data);
}

/// A BPDU frame that parses is emitted again and parses to the same.
fn bpdu_frame(data: &[u8]) {
    let Ok((src, repr)) = BpduRepr::parse_frame(data) else {
        return;
    };
    let again = BpduRepr::parse_frame(&repr.frame(src)).expect("an emitted BPDU parses");
    assert_eq!(again, (src, repr));
}

fn ethernet_frame(data: &[u8]) {
    let Ok(f) = EthernetFrame::new_checked(data) else {
        return;
    };
    black_box((f.dst(), f.src(), f.dst().is_group(), f.src().is_broadcast()));
    let (ty, payload) = match f.vlan() {
        Some((tci, inner)) => {
            black_box(tci);
            (inner, &f.payload()[ethernet::VLAN_TAG_LEN..])
        }
        None => (f.ethertype(), f.payload()),
    };
    match ty {
        ethernet::ETHERTYPE_IPV4 => ipv4_packet(payload),
        ethernet::ETHERTYPE_IPV6 => ipv6_packet(payload),
        ethernet::ETHERTYPE_ARP => arp_packet(payload),
        _ => {}
    }
    let mut copy = data.to_vec();
    let mut m = EthernetFrame::new_checked(&mut copy[..]).unwrap();
    m.set_dst(m.src());
    m.set_src(crate::EtherAddr::BROADCAST);
    m.set_ethertype(ty);
    black_box(m.payload_mut().len());
    assert_eq!(m.into_inner().len(), data.len());
}

fn ipv4_packet(data: &[u8]) {
    black_box(Ipv4Packet::new_checked_exact(data).is_ok());
    let strict = Ipv4Packet::new_checked(data).is_ok();
    let Ok(p) = Ipv4Packet::new_checked_truncated(data) else {
        assert!(!strict);
        return;
    };
    black_box((p.version(), p.ihl(), p.tos(), p.dscp(), p.ecn(), p.ident()));
    black_box((
        p.dont_frag(),
        p.more_frags(),
        p.frag_offset(),
        p.is_fragment(),
    ));
    black_box((p.ttl(), p.protocol(), p.checksum(), p.src(), p.dst()));
    if let Ok(r) = crate::Ipv4Repr::parse(&p) {
        let mut out = vec![0u8; r.header_len()];
        r.emit(&mut Ipv4Packet::new_unchecked(&mut out[..]));
        assert!(Ipv4Packet::new_unchecked(&out[..]).verify_checksum());
    }
    assert!(p.header_len() >= ipv4::HEADER_LEN && p.header_len() <= data.len());
    assert_eq!(p.options().len(), p.header_len() - ipv4::HEADER_LEN);
    assert!(p.payload().len() <= data.len() - p.header_len());
    let mut it = p.option_iter();
    for o in it.by_ref() {
        let Ok(o) = o else {
            assert!(it.offset() < p.header_len());
            break;
        };
        assert!(o.offset + o.len <= p.header_len());
        match o.kind {
            Ipv4OptionKind::RecordRoute(r)
            | Ipv4OptionKind::LooseSourceRoute(r)
            | Ipv4OptionKind::StrictSourceRoute(r) => {
                black_box((r.pointer, r.is_full(), r.pointer_valid()));
                r.addresses().for_each(|a| {
                    black_box(a);
                });
            }
            Ipv4OptionKind::Timestamp(t) => {
                black_box((t.pointer, t.overflow, t.flags, t.data));
            }
            k => {
                black_box(k);
            }
        }
    }
    let payload = p.payload();
    let (src, dst) = (p.src(), p.dst());
    let v6 = Ipv6Addr::LOCALHOST;
    match p.protocol() {
        ipv4::PROTO_ICMP => icmp_packet(payload),
        ipv4::PROTO_UDP => udp_packet(payload, src, dst, &v6, &v6),
        ipv4::PROTO_TCP => tcp_packet(payload, src, dst, &v6, &v6),
        _ => {}
    }

    let mut copy = data.to_vec();
    let mut m = Ipv4Packet::new_checked_truncated(&mut copy[..]).unwrap();
    m.fill_checksum();
    assert!(m.verify_checksum());
    m.decrement_ttl();
    assert!(m.verify_checksum());
    m.set_src_update_checksum(dst);
    m.set_dst_update_checksum(src);
    assert!(m.verify_checksum());
    m.set_dscp(0x3f);
    m.set_ecn(3);
    m.set_dont_frag(true);
    m.set_more_frags(false);
    m.set_frag_offset(0x1fff);
    m.set_ident(7);
    m.fill_checksum();
    assert!(m.verify_checksum());
    black_box(m.options_mut().len());
    black_box(m.payload_mut().len());
}

fn ipv6_packet(data: &[u8]) {
    black_box(Ipv6Packet::new_checked(data).is_ok());
    let Ok(p) = Ipv6Packet::new_checked_truncated(data) else {
        return;
    };
    black_box((
        p.version(),
        p.traffic_class(),
        p.flow_label(),
        p.payload_len(),
    ));
    black_box((p.next_header(), p.hop_limit(), p.src(), p.dst()));
    assert!(p.payload().len() <= p.payload_len() as usize);
    let (src, dst) = (p.src(), p.dst());
    let v4 = Ipv4Addr::UNSPECIFIED;
    match p.next_header() {
        ipv6::NH_ICMPV6 => icmpv6_packet(p.payload(), &src, &dst),
        ipv6::NH_UDP => udp_packet(p.payload(), v4, v4, &src, &dst),
        ipv6::NH_TCP => tcp_packet(p.payload(), v4, v4, &src, &dst),
        _ => {}
    }
    black_box(ipv6::frag_split(data).ok());
    let mut copy = data.to_vec();
    let mut m = Ipv6Packet::new_checked_truncated(&mut copy[..]).unwrap();
    m.set_traffic_class(0xff);
    m.set_flow_label(u32::MAX);
    m.set_hop_limit(m.hop_limit().wrapping_sub(1));
    m.set_src(&dst);
    m.set_dst(&src);
    assert_eq!(m.version(), 6);
    black_box(m.payload_mut().len());
}

fn arp_packet(data: &[u8]) {
    let Ok(p) = ArpPacket::new_checked(data) else {
        return;
    };
    black_box((
        p.htype(),
        p.ptype(),
        p.hlen(),
        p.plen(),
        p.op(),
        p.is_ether_ipv4(),
    ));
    black_box((p.sender_hw(), p.sender_ip(), p.target_hw(), p.target_ip()));
    let b = crate::build_arp(
        p.op(),
        p.sender_hw(),
        p.sender_ip(),
        p.target_hw(),
        p.target_ip(),
    );
    let q = ArpPacket::new_checked(&b[..]).unwrap();
    assert!(q.is_ether_ipv4());
    assert_eq!(q.target_ip(), p.target_ip());
}

fn icmp_packet(data: &[u8]) {
    let Ok(p) = IcmpPacket::new_checked(data) else {
        return;
    };
    black_box((p.msg_type(), p.code(), p.checksum(), p.rest_of_header()));
    black_box((
        p.ident(),
        p.seq(),
        p.gateway(),
        p.next_hop_mtu(),
        p.pointer(),
    ));
    black_box((p.is_error(), p.verify_checksum(), p.payload()));
    let mut copy = data.to_vec();
    let mut m = IcmpPacket::new_checked(&mut copy[..]).unwrap();
    m.set_msg_type(crate::icmp::TYPE_ECHO_REPLY);
    m.fill_checksum();
    assert!(m.verify_checksum());
}

fn udp_packet(data: &[u8], s4: Ipv4Addr, d4: Ipv4Addr, s6: &Ipv6Addr, d6: &Ipv6Addr) {
    let Ok(p) = UdpPacket::new_checked(data) else {
        return;
    };
    black_box((p.src_port(), p.dst_port(), p.len(), p.checksum()));
    black_box((p.verify_checksum_v4(s4, d4), p.verify_checksum_v6(s6, d6)));
    assert_eq!(p.payload().len() + 8, p.len() as usize);
    let mut copy = data.to_vec();
    let mut m = UdpPacket::new_checked(&mut copy[..]).unwrap();
    m.fill_checksum_v4(s4, d4);
    assert!(m.verify_checksum_v4(s4, d4));
    m.fill_checksum_v6(s6, d6);
    assert!(m.verify_checksum_v6(s6, d6));
    black_box(m.payload_mut().len());
}

fn tcp_packet(data: &[u8], s4: Ipv4Addr, d4: Ipv4Addr, s6: &Ipv6Addr, d6: &Ipv6Addr) {
    let Ok(p) = TcpPacket::new_checked(data) else {
        return;
    };
    black_box((
        p.src_port(),
        p.dst_port(),
        p.seq(),
        p.ack(),
        p.data_offset(),
    ));
    black_box((
        p.flags(),
        p.syn(),
        p.ack_flag(),
        p.fin(),
        p.rst(),
        p.window(),
    ));
    black_box((p.checksum(), p.urgent(), p.options(), p.payload()));
    for o in p.option_iter() {
        let _ = black_box(o);
    }
    black_box((p.verify_checksum_v4(s4, d4), p.verify_checksum_v6(s6, d6)));
    assert_eq!(p.options().len() + p.payload().len() + 20, data.len());
    let mut copy = data.to_vec();
    let mut m = TcpPacket::new_checked(&mut copy[..]).unwrap();
    m.set_flags(0x1ff);
    m.fill_checksum_v4(s4, d4);
    assert!(m.verify_checksum_v4(s4, d4));
    m.fill_checksum_v6(s6, d6);
    assert!(m.verify_checksum_v6(s6, d6));
    black_box((m.options_mut().len(), m.payload_mut().len()));
}

fn icmpv6_packet(data: &[u8], src: &Ipv6Addr, dst: &Ipv6Addr) {
    let Ok(p) = Icmpv6Packet::new_checked(data) else {
        return;
    };
    black_box((p.msg_type(), p.code(), p.checksum(), p.rest_of_header()));
    black_box((p.ident(), p.seq(), p.mtu(), p.pointer(), p.na_flags()));
    black_box((p.target(), p.payload(), p.verify_checksum(src, dst)));
    black_box(NeighborRepr::parse(&p).ok());
    for o in p.ndp_options() {
        match o {
            Ok(o) => {
                black_box((o.kind, o.data, o.link_layer_addr()));
            }
            Err(_) => break,
        }
    }
    let mut copy = data.to_vec();
    let mut m = Icmpv6Packet::new_checked(&mut copy[..]).unwrap();
    m.fill_checksum(src, dst);
    assert!(m.verify_checksum(src, dst));
    black_box(m.payload_mut().len());
}

/// Reads `data` as a pcap file to the end or the first error; if any records were read,
/// writes them back out and checks the copy reads back the same.
pub fn pcap_reader(data: &[u8]) {
    let Ok(mut r) = PcapReader::new(data) else {
        return;
    };
    black_box((r.link_type(), r.link_kind(), r.snaplen(), r.is_nanosecond()));
    black_box((r.is_big_endian(), r.version()));
    let (snaplen, nanos, lt) = (r.snaplen(), r.is_nanosecond(), r.link_type());
    let mut recs = Vec::new();
    let mut buf = Vec::new();
    loop {
        match r.next_into(&mut buf) {
            Ok(Some(h)) => {
                assert_eq!(h.caplen as usize, buf.len());
                assert!(h.caplen <= MAX_CAPLEN);
                recs.push((h, buf.clone()));
            }
            Ok(None) => break,
            Err(e) => {
                black_box(e.to_string());
                break;
            }
        }
    }
    // Records longer than the snapshot length are read whole; the copy's snapshot length
    // covers them so that it keeps them whole too.
    let longest = recs.iter().map(|(h, _)| h.caplen).max().unwrap_or(0);
    let snaplen = if snaplen == 0 {
        0
    } else {
        snaplen.max(longest)
    };
    let mut w = PcapWriter::new(Vec::new(), lt, snaplen, nanos).unwrap();
    for (h, d) in &recs {
        w.write_record(h.ts_sec, h.ts_nsec, h.orig_len, d).unwrap();
    }
    let out = w.into_inner();
    let mut r2 = PcapReader::new(&out[..]).unwrap();
    for (h, d) in &recs {
        let rec = r2.next_record().unwrap().unwrap();
        assert_eq!(rec.ts_sec, h.ts_sec);
        assert_eq!(&rec.data, d);
        assert_eq!(rec.orig_len, h.orig_len.max(h.caplen));
    }
    assert!(r2.next_record().unwrap().is_none());
}
