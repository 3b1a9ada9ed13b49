//! SetUDPChecksum — sets the checksum of UDP packets
//!
//! Synopsis: `SetUDPChecksum()`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Expects UDP/IP packets with the network header annotation (or the IP header at the
//! start). Computes the UDP checksum over the pseudo header (from the IP header) and the UDP
//! length's bytes, and writes it into the UDP header (a computed zero is written as 0xFFFF,
//! RFC 768). Fragments and packets shorter than their UDP header or UDP length go, unchanged,
//! to output 1, or are dropped when output 1 is not connected; both counted in `drops`.
//!
//! Arguments: none.
//!
//! Handlers: `drops` (r). `drop_details` (r): packets dropped, by reason (output 1
//! unconnected).
//!
//! Example: `... -> SetUDPChecksum -> SetIPChecksum -> ...`

use sluice_core::{Batch, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_wire::{Ipv4Packet, UdpPacket};

use super::header_check::IpFields;
use crate::ip::common::ip_offset;
use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};

/// The SetUDPChecksum element.
#[derive(Default)]
pub struct SetUDPChecksum {
    /// Packets sent to output 1 or dropped.
    rejected: u64,
}

impl SetUDPChecksum {
    fn action(&mut self, mut p: Packet) -> Verdict {
        let fields = IpFields::of(&p).and_then(|ip| {
            let u = ip.bytes.get(ip.hl..ip.hl + 8)?;
            let ulen = u16::from_be_bytes([u[4], u[5]]) as usize;
            let frag = Ipv4Packet::new_unchecked(&ip.bytes[..ip.hl]).is_fragment();
            (!frag && ulen >= 8 && ip.hl + ulen <= ip.bytes.len())
                .then_some((ip.hl, ulen, ip.src, ip.dst))
        });
        let Some((hl, ulen, src, dst)) = fields else {
            self.rejected += 1;
            return Verdict::Out(1, p);
        };
        let off = ip_offset(&p);
        UdpPacket::new_unchecked(&mut p.data_mut()[off + hl..off + hl + ulen])
            .fill_checksum_v4(src, dst);
        Verdict::Out(0, p)
    }
}

impl Element for SetUDPChecksum {
    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_sorted(batch, cx, |p, _| self.action(p));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, _| self.action(p))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("drops", |e| e.rejected)
            .unconnected_drops()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SetUDPChecksum",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("set_udp_checksum.rs"),
    make: || Box::new(SetUDPChecksum::default()),
};
