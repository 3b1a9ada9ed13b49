//! HostEtherFilter — keeps Ethernet frames addressed to this host, sets the packet type
//!
//! Synopsis: `HostEtherFilter(ETHER [, DROP_OWN, DROP_OTHER, keywords OFFSET])`
//!
//! Ports: 1 input, 1 or 2 outputs, agnostic (output 1 push).
//!
//! Looks at the Ethernet header OFFSET bytes into each packet and sets the packet type
//! annotation: Host (destination ETHER), Broadcast (ff:ff:ff:ff:ff:ff), Multicast (group bit
//! set) or OtherHost. Host, broadcast and multicast frames leave by output 0. Frames for other
//! hosts are dropped if DROP_OTHER is true, otherwise sent to output 1 (dropped if it is not
//! connected). Frames whose source is ETHER (our own, looped back) are dropped when DROP_OWN
//! is true. Frames shorter than an Ethernet header are dropped. All drops are counted.
//!
//! Arguments:
//! - `ETHER` (Ethernet address, mandatory): this host's address.
//! - `DROP_OWN` (boolean, default false): drop frames whose source address is ETHER.
//! - `DROP_OTHER` (boolean, default true with one output, false with two): drop frames for
//!   other hosts instead of sending them to output 1.
//! - `OFFSET` (keyword, unsigned, default 0): where the Ethernet header starts in the packet.
//!
//! Handlers: `drops` (r), `drop_details` (r): frames dropped, by reason (runt frame, own
//! source, other host).
//!
//! Example: `FromDevice(eth0) -> HostEtherFilter(00:00:c0:ae:67:ef) -> Classifier(...)`

use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, PacketType, Table};
use sluice_lang::args::Args;
use sluice_wire::EtherAddr;

drop_reasons! {
    /// Why HostEtherFilter drops a frame.
    enum Reason {
        Runt => "runt frame",
        OwnSource => "own source",
        OtherHost => "other host",
    }
}

/// The HostEtherFilter element.
#[derive(Default)]
pub struct HostEtherFilter {
    me: EtherAddr,
    drop_own: bool,
    drop_other: bool,
    offset: usize,
    drops: Drops<Reason>,
}

impl HostEtherFilter {
    fn action(&mut self, mut p: Packet, two_outputs: bool) -> Verdict {
        let o = self.offset;
        let Some(h) = p.data().get(o..o + 14) else {
            self.drops.count(Reason::Runt);
            return Verdict::Gone;
        };
        let mut dst = [0u8; 6];
        dst.copy_from_slice(&h[0..6]);
        let own = h[6..12] == self.me.0;
        if self.drop_own && own {
            self.drops.count(Reason::OwnSource);
            return Verdict::Gone;
        }
        let d = EtherAddr(dst);
        let ty = if d == self.me {
            PacketType::Host
        } else if d.is_broadcast() {
            PacketType::Broadcast
        } else if d.is_group() {
            PacketType::Multicast
        } else {
            PacketType::OtherHost
        };
        p.anno_mut().packet_type = ty;
        if ty == PacketType::OtherHost {
            if self.drop_other || !two_outputs {
                self.drops.count(Reason::OtherHost);
                return Verdict::Gone;
            }
            return Verdict::Out(1, p);
        }
        Verdict::Out(0, p)
    }
}

impl Element for HostEtherFilter {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.me = args.read_mp::<EtherAddr>("ETHER")?;
        self.drop_own = args.read_p::<bool>("DROP_OWN")?.unwrap_or(false);
        let other = args.read_p::<bool>("DROP_OTHER")?;
        self.drop_other = other.unwrap_or(cx.noutputs() < 2);
        args.read_into("OFFSET", &mut self.offset)
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let two = cx.noutputs() > 1;
        push_sorted(batch, cx, |p, _| self.action(p, two));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let two = cx.noutputs() > 1;
        pull_sorted(max, cx, |p, _| self.action(p, two))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "HostEtherFilter",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("host_ether_filter.rs"),
    make: || Box::new(HostEtherFilter::default()),
};
