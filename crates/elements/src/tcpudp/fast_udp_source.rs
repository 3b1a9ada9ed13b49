//! FastUDPSource — a benchmark source of one UDP/IP/Ethernet packet, sent again and again
//!
//! Synopsis: `FastUDPSource(RATE, LIMIT, LENGTH, SRCETH, SRCIP, SPORT, DSTETH, DSTIP, DPORT
//! [, CHECKSUM, INTERVAL, ACTIVE])`
//!
//! Ports: no inputs, 1 pull output.
//!
//! At initialisation builds one Ethernet frame of LENGTH bytes (at least 60; a smaller LENGTH
//! is raised to 60 with a warning): Ethernet header from SRCETH to DSTETH (type IPv4), a
//! 20-byte IPv4 header from SRCIP to DSTIP (TTL 250, ID 0, TOS 0, protocol UDP, checksum),
//! and a UDP header from SPORT to DPORT covering the rest, with its checksum when CHECKSUM is
//! true. The network header and destination IP annotations are set. Each pull returns copies
//! of that frame (sharing its buffer copy-on-write, so the sending costs no copy): as many as
//! asked when RATE is 0, otherwise at most RATE a second, evenly spaced (Click's gap rate),
//! until LIMIT packets are sent. With INTERVAL *n* > 0, after every *n* packets both ports
//! grow by one and the UDP checksum is recomputed. Nothing is dropped. While LIMIT is reached
//! or the source is inactive, its empty notifier tells pullers (Unqueue) to sleep.
//!
//! Arguments:
//! - `RATE` (unsigned): packets per second; 0 means as fast as pulled.
//! - `LIMIT` (integer): packets to send in all; negative means no limit.
//! - `LENGTH` (unsigned, at most 262144): frame length in bytes.
//! - `SRCETH`, `DSTETH`: Ethernet addresses; `SRCIP`, `DSTIP`: IPv4 addresses (AddressInfo
//!   names allowed); `SPORT`, `DPORT`: UDP ports (numbers or service names).
//! - `CHECKSUM` (bool, default true): fill in the UDP checksum.
//! - `INTERVAL` (unsigned, default 0): packets between port increments; 0 means never.
//! - `ACTIVE` (bool, default true): whether pulls return packets.
//!
//! Handlers: `count` (r): packets sent. `rate` (r): once LIMIT is reached, the average rate
//! between the first and the last packet in packets per second (0 before); (w): sets RATE.
//! `reset` (w): zero the count and restart the ports. `active` (w): set ACTIVE (true also
//! resets). `limit` (w): set LIMIT.
//!
//! Example: `FastUDPSource(100000, 500000, 60, 02:00:00:00:00:01, 198.18.0.1, 1234,
//! 02:00:00:00:00:02, 198.19.0.2, 1234) -> ToDevice(veth0)`

use std::net::Ipv4Addr;

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, NotifierId};
use sluice_core::{Packet, Table, Timestamp};
use sluice_lang::args::{Args, AtMost, FromArg, PacketLen};
use sluice_wire::ethernet::{EthernetFrame, ETHERTYPE_IPV4, HEADER_LEN as ETHER_LEN};
use sluice_wire::ipv4::{HEADER_LEN as IP_LEN, PROTO_UDP};
use sluice_wire::{EtherAddr, UdpPacket};

use crate::ip::common::{ipv4_header, push_ipv4_header, PortArg};
use crate::standard::util::GapRate;

/// The smallest frame FastUDPSource sends.
const MIN_LENGTH: usize = 60;
/// TTL of the IPv4 header.
const TTL: u8 = 250;

/// The FastUDPSource element.
pub struct FastUDPSource {
    rate: GapRate,
    limit: Option<u64>,
    length: usize,
    src_eth: EtherAddr,
    dst_eth: EtherAddr,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    sport: u16,
    dport: u16,
    checksum: bool,
    interval: u64,
    active: bool,
    /// The frame every pull copies.
    frame: Option<Packet>,
    /// How much the ports have grown.
    incr: u16,
    count: u64,
    first: Timestamp,
    last: Timestamp,
    /// Empty notifier: inactive while pulls would return nothing (LIMIT reached or not
    /// ACTIVE), so pullers sleep.
    note: Option<NotifierId>,
}

impl FastUDPSource {
    /// Builds the frame with the ports grown by `incr`.
    fn build(&self) -> Packet {
        let mut p = Packet::new(self.length - ETHER_LEN - IP_LEN);
        let ip = ipv4_header(PROTO_UDP, self.src, self.dst, TTL, 0);
        push_ipv4_header(&mut p, ip, 0);
        let (src, dst) = (self.src, self.dst);
        let mut udp = UdpPacket::new_unchecked(&mut p.data_mut()[IP_LEN..]);
        udp.set_src_port(self.sport.wrapping_add(self.incr));
        udp.set_dst_port(self.dport.wrapping_add(self.incr));
        udp.set_len((self.length - ETHER_LEN - IP_LEN) as u16);
        if self.checksum {
            udp.fill_checksum_v4(src, dst);
        }
        let mut eth = EthernetFrame::new_unchecked(p.push_front(ETHER_LEN));
        eth.set_dst(self.dst_eth);
        eth.set_src(self.src_eth);
        eth.set_ethertype(ETHERTYPE_IPV4);
        p.set_mac_offset(0);
        p
    }

    fn reset(&mut self) {
        self.count = 0;
        self.first = Timestamp::ZERO;
        self.last = Timestamp::ZERO;
        if self.incr != 0 {
            self.incr = 0;
            self.frame = Some(self.build());
        }
    }

    fn limit_reached(&self) -> bool {
        self.limit.is_some_and(|l| self.count >= l)
    }

    /// Tells pullers whether pulls may return packets.
    fn signal(&self, cx: &mut Cx) {
        if let Some(n) = self.note {
            cx.set_notifier(n, self.active && !self.limit_reached());
        }
    }

    /// Counts one packet sent at `now`.
    fn sent(&mut self, now: Timestamp) {
        self.count += 1;
        if self.count == 1 {
            self.first = now;
        }
        if self.limit_reached() {
            self.last = now;
        }
        if self.interval > 0 && self.count.is_multiple_of(self.interval) {
            self.incr = self.incr.wrapping_add(1);
            self.frame = Some(self.build());
        }
    }
}

impl Element for FastUDPSource {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let rate: u32 = args.read_mp("RATE")?;
        let limit: i64 = args.read_mp("LIMIT")?;
        let AtMost(length) = args.read_mp::<PacketLen>("LENGTH")?;
        self.src_eth = args.read_mp::<EtherAddr>("SRCETH")?;
        self.src = args.read_mp::<Ipv4Addr>("SRCIP")?;
        self.sport = args.read_mp::<PortArg>("SPORT")?.0;
        self.dst_eth = args.read_mp::<EtherAddr>("DSTETH")?;
        self.dst = args.read_mp::<Ipv4Addr>("DSTIP")?;
        self.dport = args.read_mp::<PortArg>("DPORT")?.0;
        self.checksum = args.read_p("CHECKSUM")?.unwrap_or(self.checksum);
        self.interval = args.read_p("INTERVAL")?.unwrap_or(self.interval);
        self.active = args.read_p("ACTIVE")?.unwrap_or(self.active);
        if length < MIN_LENGTH {
            eprintln!("warning: packet length < {MIN_LENGTH}, defaulting to {MIN_LENGTH}");
        }
        self.length = length.clamp(MIN_LENGTH, u16::MAX as usize + ETHER_LEN);
        self.rate = GapRate::new(rate);
        self.limit = u64::try_from(limit).ok();
        let note = cx.new_notifier(self.active && self.limit != Some(0));
        cx.provide_empty_notifier(note);
        self.note = Some(note);
        Ok(())
    }

    fn initialize(&mut self, _cx: &mut InitCx) -> Result<(), String> {
        self.frame = Some(self.build());
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut b = Batch::new();
        if !self.active {
            return b;
        }
        let now = cx.now();
        while b.len() < max && !self.limit_reached() {
            if self.rate.rate() != 0 {
                if !self.rate.ready(now) {
                    break;
                }
                self.rate.sent(1);
            }
            let Some(frame) = self.frame.as_mut() else {
                break;
            };
            if b.push(frame.clone_packet()).is_err() {
                break;
            }
            self.sent(now);
        }
        if self.limit_reached() {
            self.signal(cx);
        }
        b
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .read("rate", |e| {
                if e.last == Timestamp::ZERO {
                    return 0;
                }
                let ms = ((e.last - e.first).0 / 1_000_000).max(1) as u64;
                e.count * 1000 / ms
            })
            .write("rate", |e, v, cx| {
                let rate =
                    u32::from_arg(v.trim()).map_err(|_| "rate parameter must be integer >= 0")?;
                e.rate.set_rate(rate, cx.now());
                e.signal(cx);
                Ok(())
            })
            .write("reset", |e, _, cx| {
                e.reset();
                e.signal(cx);
                Ok(())
            })
            .write("active", |e, v, cx| {
                e.active =
                    bool::from_arg(v.trim()).map_err(|_| "active parameter must be boolean")?;
                if e.active {
                    e.reset();
                }
                e.signal(cx);
                Ok(())
            })
            .write("limit", |e, v, cx| {
                let limit =
                    i64::from_arg(v.trim()).map_err(|_| "limit parameter must be integer >= 0")?;
                e.limit = u64::try_from(limit).ok();
                e.signal(cx);
                Ok(())
            })
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "FastUDPSource",
    ports: "0/1",
    processing: "l/l",
    flow: "",
    source: include_str!("fast_udp_source.rs"),
    make: || {
        Box::new(FastUDPSource {
            rate: GapRate::new(0),
            limit: None,
            length: MIN_LENGTH,
            src_eth: EtherAddr([0; 6]),
            dst_eth: EtherAddr([0; 6]),
            src: Ipv4Addr::UNSPECIFIED,
            dst: Ipv4Addr::UNSPECIFIED,
            sport: 0,
            dport: 0,
            checksum: true,
            interval: 0,
            active: true,
            frame: None,
            incr: 0,
            count: 0,
            first: Timestamp::ZERO,
            last: Timestamp::ZERO,
            note: None,
        })
    },
};
