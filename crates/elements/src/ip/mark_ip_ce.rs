//! MarkIPCE — sets the ECN field of IP packets to Congestion Experienced
//!
//! Synopsis: `MarkIPCE([FORCE])`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Expects IP packets with the network header annotation (after CheckIPHeader or
//! MarkIPHeader). An ECN-capable packet (ECT(0) or ECT(1)) gets its ECN field set to CE (3)
//! and the header checksum updated incrementally (RFC 1624); a packet already marked CE passes
//! unchanged; both leave by output 0. A packet that is not ECN-capable (ECN field 0) is marked
//! the same way when FORCE is true; otherwise it goes, unchanged, to output 1, or is dropped
//! and counted if output 1 is not connected. Packets without the network header annotation or
//! too short to hold an IP header there are dropped and counted.
//!
//! Arguments: `FORCE` (bool, default false): mark packets that are not ECN-capable too.
//!
//! Handlers: `count` (r): packets that left by output 0, marked CE. `drops` (r): packets
//! dropped (not ECN-capable with output 1 unconnected, or without an IP header).
//!
//! Example: `CheckIPHeader -> m :: MarkIPCE -> Queue -> ...; m[1] -> Discard;`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::Args;
use sluice_wire::ipv4::{ECN_CE, ECN_NOT_ECT, HEADER_LEN};
use sluice_wire::Ipv4Packet;

use super::common::{Sorter, Verdict};

/// The MarkIPCE element.
#[derive(Default)]
pub struct MarkIPCE {
    force: bool,
    count: u64,
    drops: u64,
}

impl Sorter for MarkIPCE {
    fn sort(&mut self, mut p: Packet, _cx: &mut Cx) -> Verdict {
        let Some(h) = p.network_header_mut().filter(|h| h.len() >= HEADER_LEN) else {
            self.drops += 1;
            return Verdict::Gone;
        };
        let mut ip = Ipv4Packet::new_unchecked(h);
        match ip.ecn() {
            ECN_NOT_ECT if !self.force => return Verdict::Out(1, p),
            ECN_CE => {}
            _ => {
                let tos = ip.tos() | ECN_CE;
                ip.set_tos_update_checksum(tos);
            }
        }
        self.count += 1;
        Verdict::Out(0, p)
    }

    fn lost(&mut self) -> &mut u64 {
        &mut self.drops
    }
}

impl Element for MarkIPCE {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.force = args.read_p("FORCE")?.unwrap_or(false);
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        self.push_counted(batch, cx);
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        self.pull_counted(max, cx)
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("count"), Handler::r("drops")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "count" => Some(self.count.to_string()),
            "drops" => Some(self.drops.to_string()),
            _ => None,
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "MarkIPCE",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("mark_ip_ce.rs"),
    make: || Box::new(MarkIPCE::default()),
};
