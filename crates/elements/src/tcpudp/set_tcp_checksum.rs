//! SetTCPChecksum — sets the checksum of TCP packets
//!
//! Synopsis: `SetTCPChecksum([FIXOFF])`
//!
//! Ports: 1 input, 1 output, agnostic.
//!
//! Expects TCP/IP packets with the network header annotation (or the IP header at the
//! start). Computes the TCP checksum over the pseudo header (from the IP header) and the IP
//! payload, and writes it into the TCP header. With FIXOFF, a TCP header length below 20 is
//! set to 20, and one beyond the IP payload (in an unfragmented packet) is set to the
//! payload's length. A packet whose IP payload is shorter than a TCP header or longer than
//! the packet is dropped and counted in `drops` and, by reason, `drop_details`.
//!
//! Arguments: `FIXOFF` (bool, default false).
//!
//! Handlers: `drops` (r), `drop_details` (r).
//!
//! Example: `... -> SetTCPChecksum -> SetIPChecksum -> ...`

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::Args;
use sluice_wire::{Ipv4Packet, TcpPacket};

use super::header_check::IpFields;
use crate::ip::common::ip_offset;

drop_reasons! {
    /// Why SetTCPChecksum drops a packet.
    enum Reason {
        NoHeader => "no IP header",
        BadLength => "bad packet length",
    }
}

/// The SetTCPChecksum element.
#[derive(Default)]
pub struct SetTCPChecksum {
    fixoff: bool,
    drops: Drops<Reason>,
}

impl Element for SetTCPChecksum {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.fixoff = args.read_p("FIXOFF")?.unwrap_or(self.fixoff);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let Some(ip) = IpFields::of(&p) else {
            self.drops.count(Reason::NoHeader);
            return None;
        };
        let (hl, src, dst) = (ip.hl, ip.src, ip.dst);
        let plen = match ip.total.checked_sub(hl) {
            Some(n) if n >= 20 && hl + n <= ip.bytes.len() => n,
            _ => {
                self.drops.count(Reason::BadLength);
                return None;
            }
        };
        let off = ip_offset(&p);
        let b = &mut p.data_mut()[off..];
        let frag = Ipv4Packet::new_unchecked(&b[..hl]).is_fragment();
        let mut tcp = TcpPacket::new_unchecked(&mut b[hl..hl + plen]);
        if self.fixoff {
            let o = tcp.header_len();
            if o < 20 {
                tcp.set_header_len(20);
            } else if o > plen && !frag {
                tcp.set_header_len(plen);
            }
        }
        tcp.fill_checksum_v4(src, dst);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SetTCPChecksum",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("set_tcp_checksum.rs"),
    make: || Box::new(SetTCPChecksum::default()),
};
