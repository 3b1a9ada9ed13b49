//! IP6Fragmenter — fragments IPv6 packets larger than the MTU, as their source would
//!
//! Synopsis: `IP6Fragmenter(MTU)`
//!
//! Ports: 1 input, 1 or 2 outputs, push.
//!
//! Expects IPv6 packets with the network header annotation (or starting with their IPv6
//! header). Packets whose IPv6 length (40 plus the payload length) is at most MTU leave by
//! output 0 unchanged. Larger packets are fragmented as RFC 8200 §4.5 has a source do it:
//! - The unfragmentable part — the IPv6 header and the extension headers that nodes on the
//!   path process (up to the last Routing header, else the Hop-by-Hop Options header) — is
//!   repeated in every fragment, its last Next Header set to 44 and the payload length set to
//!   the fragment's.
//! - A fragment header follows, naming the first header of the fragmentable part, with an
//!   identification that the element counts up (one per fragmented packet), the fragment's
//!   offset, and More Fragments on all but the last.
//! - Then the fragment's share of the fragmentable part: as many bytes as fit under MTU,
//!   rounded down to a multiple of 8, except in the last fragment.
//!
//! A packet that already is a fragment (it has a fragment header) is split further: the
//! pieces keep its identification and unfragmentable part (everything before the fragment
//! header), their offsets are added to its offset, and the last keeps its More Fragments
//! flag. Fragments are sent in order on output 0, each with the original's annotations and
//! its network header annotation set.
//!
//! Packets too big whose unfragmentable part leaves no room under MTU for a fragment header
//! and 8 bytes of data go to output 1 (an `ICMP6Error(ADDR, 2, 0)`, packet too big, for
//! example), or are dropped if it is not connected; counted in `drops` either way. Packets
//! without a valid IPv6 header (too short, wrong version, a payload length beyond the packet,
//! extension headers running past it, offsets beyond 65,535) are dropped and counted in
//! `drop_details`.
//!
//! Arguments: `MTU` (unsigned, at least 56, mandatory).
//!
//! Handlers: `fragments` (r): fragments sent. `drops` (r): packets that could not be
//! fragmented. `drop_details` (r): packets dropped, by reason (bad header; could not be
//! fragmented with output 1 unconnected).
//!
//! Example: `IP6Encap(ipip, 2001:db8::1, 2001:db8::2) -> fr :: IP6Fragmenter(1280) -> ...;
//! fr[1] -> Discard;`

use sluice_core::toolkit::OutBatch;
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::ipv6::{frag_split, Ipv6FragRepr, FRAG_HEADER_LEN, HEADER_LEN, NH_FRAGMENT};
use sluice_wire::Ipv6Packet;

use crate::ip::common::ip_offset;

drop_reasons! {
    /// Why IP6Fragmenter drops a packet.
    enum Reason {
        BadHeader => "bad IPv6 header",
        BadExtension => "bad extension header",
    }
}

/// The smallest MTU: an IPv6 header, a fragment header and 8 bytes of data.
const MIN_MTU: usize = HEADER_LEN + FRAG_HEADER_LEN + 8;

/// The IP6Fragmenter element.
pub struct IP6Fragmenter {
    mtu: usize,
    ident: u32,
    fragments: u64,
    /// Packets too big that could not be fragmented (Click's `drops`).
    too_big: u64,
    drops: Drops<Reason>,
}

impl Default for IP6Fragmenter {
    fn default() -> Self {
        IP6Fragmenter {
            mtu: 1280,
            ident: 0,
            fragments: 0,
            too_big: 0,
            drops: Drops::default(),
        }
    }
}

/// The IPv6 length of `p` (header and payload) when it has a valid IPv6 header.
fn ip6_len(p: &Packet) -> Option<usize> {
    Ipv6Packet::new_checked(&p.data()[ip_offset(p)..])
        .ok()
        .map(|ip| HEADER_LEN + ip.payload_len() as usize)
}

impl IP6Fragmenter {
    fn handle(&mut self, p: Packet, o0: &mut OutBatch, o1: &mut OutBatch, cx: &mut Cx) {
        let Some(len) = ip6_len(&p) else {
            self.drops.count(Reason::BadHeader);
            return;
        };
        if len <= self.mtu {
            o0.add(p, cx);
            return;
        }
        let off = ip_offset(&p);
        let b = &p.data()[off..off + len];
        let Ok(split) = frag_split(b) else {
            self.drops.count(Reason::BadExtension);
            return;
        };
        let unfrag = split.unfrag_len;
        let chunk = self.mtu.saturating_sub(unfrag + FRAG_HEADER_LEN) & !7;
        if chunk == 0 {
            self.too_big += 1;
            o1.add(p, cx);
            return;
        }
        let (ident, base, more, next_header, start) = match split.fragment {
            Some(f) => (
                f.ident,
                f.offset as usize * 8,
                f.more,
                f.next_header,
                unfrag + FRAG_HEADER_LEN,
            ),
            None => (
                self.ident.wrapping_add(1),
                0,
                false,
                b[split.next_header_at],
                unfrag,
            ),
        };
        let data = &b[start..];
        if base + data.len() > usize::from(u16::MAX) {
            self.drops.count(Reason::BadHeader);
            return;
        }
        if split.fragment.is_none() {
            self.ident = ident;
        }
        for (i, piece) in data.chunks(chunk).enumerate() {
            let pos = i * chunk;
            let last = pos + piece.len() == data.len();
            let mut q = Packet::new(unfrag + FRAG_HEADER_LEN + piece.len());
            *q.anno_mut() = *p.anno();
            let d = q.data_mut();
            d[..unfrag].copy_from_slice(&b[..unfrag]);
            d[split.next_header_at] = NH_FRAGMENT;
            Ipv6FragRepr {
                next_header,
                offset: ((base + pos) / 8) as u16,
                more: more || !last,
                ident,
            }
            .emit(&mut d[unfrag..]);
            d[unfrag + FRAG_HEADER_LEN..].copy_from_slice(piece);
            let plen = d.len() - HEADER_LEN;
            Ipv6Packet::new_unchecked(&mut d[..]).set_payload_len(plen as u16);
            q.set_network_offset(0);
            q.set_transport_offset(HEADER_LEN as isize);
            self.fragments += 1;
            o0.add(q, cx);
        }
    }
}

impl Element for IP6Fragmenter {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.mtu = args.read_mp("MTU")?;
        if self.mtu < MIN_MTU {
            args.error(format!("MTU: must be at least {MIN_MTU}"));
            return Err(());
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        // Fast path: every packet is a valid IPv6 packet that fits the MTU, so the batch
        // leaves as it came.
        let mtu = self.mtu;
        if batch.iter().all(|p| ip6_len(p).is_some_and(|l| l <= mtu)) {
            cx.push(0, batch);
            return;
        }
        let mut o0 = OutBatch::new(0);
        let mut o1 = OutBatch::new(1);
        for p in batch {
            self.handle(p, &mut o0, &mut o1, cx);
        }
        o0.flush(cx);
        o1.flush(cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("fragments", |e| e.fragments)
            .read("drops", |e| e.too_big)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IP6Fragmenter",
    ports: "1/1-2",
    processing: "h/h",
    flow: "x/x",
    source: include_str!("ip6_fragmenter.rs"),
    make: || Box::<IP6Fragmenter>::default(),
};
