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
//! Handlers: `count` (r): packets that left by output 0, marked CE. `drops` (r), `drop_details`
//! (r): packets dropped (without an IP header, or not ECN-capable with output 1 unconnected).
//!
//! Example: `CheckIPHeader -> m :: MarkIPCE -> Queue -> ...; m[1] -> Discard;`

use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::ipv4::{ECN_CE, ECN_NOT_ECT, HEADER_LEN};
use sluice_wire::Ipv4Packet;

drop_reasons! {
    /// Why MarkIPCE drops a packet.
    enum Reason { NoHeader => "no IP header" }
}

/// The MarkIPCE element.
#[derive(Default)]
pub struct MarkIPCE {
    force: bool,
    count: u64,
    drops: Drops<Reason>,
}

impl MarkIPCE {
    fn sort(&mut self, mut p: Packet) -> Verdict {
        let Some(h) = p.network_header_mut().filter(|h| h.len() >= HEADER_LEN) else {
            self.drops.count(Reason::NoHeader);
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
}

impl Element for MarkIPCE {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.force = args.read_p("FORCE")?.unwrap_or(false);
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_sorted(batch, cx, |p, _| self.sort(p));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, _| self.sort(p))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .drops(|e| &e.drops)
            .into()
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
