//! ClusterDecap — delivers cluster frames to the output node's external ports
//!
//! Synopsis: `ClusterDecap`
//!
//! Ports: 1 push input, one push output per external port of this node. Runs on the output
//! node of a cluster router. Takes frames addressed by ClusterEncap (destination
//! `02:5b:00:00:NODE:PORT`, source `02:FROM:A:B:C:D`), sets the destination IP annotation to
//! the next hop A.B.C.D found by the input node's route lookup, strips the 14-byte header and
//! sends the IP packet to output PORT, typically an ARPQuerier of that port. The IP header
//! is not read. Frames that are not cluster frames, or name a port this node lacks, are
//! dropped and counted.
//!
//! Arguments: none.
//!
//! Handlers: `drops`, `drop_details` (r).
//!
//! Example: `vlb[0] -> dec :: ClusterDecap; dec[0] -> [0]arpq_ext0`

use sluice_core::{
    drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Table,
};
use sluice_lang::args::Args;

use super::frame;
use crate::standard::util::PortBatches;

drop_reasons! {
    /// Why ClusterDecap drops a packet.
    enum Reason {
        NotCluster => "not a cluster frame",
        NoPort => "no such output port",
        TooShort => "too short for a cluster frame",
    }
}

/// The ClusterDecap element.
#[derive(Default)]
pub struct ClusterDecap {
    outs: PortBatches,
    drops: Drops<Reason>,
}

impl Element for ClusterDecap {
    fn configure(&mut self, _args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.outs = PortBatches::new(cx.noutputs());
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let n = cx.noutputs();
        for mut p in batch {
            if p.len() < 34 {
                self.drops.count(Reason::TooShort);
                continue;
            }
            let Some((_, port)) = frame::parse_dst(&p.data()[0..6]) else {
                self.drops.count(Reason::NotCluster);
                continue;
            };
            if usize::from(port) >= n {
                self.drops.count(Reason::NoPort);
                continue;
            }
            let hop = frame::next_hop(&p.data()[6..12]);
            p.set_dst_ip_anno(hop);
            p.pull_front(14);
            p.set_mac_offset(-14);
            p.set_network_offset(0);
            self.outs.add(usize::from(port), p, cx);
        }
        self.outs.flush(cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ClusterDecap",
    ports: "1/1-",
    processing: "h/h",
    flow: "x/x",
    source: include_str!("cluster_decap.rs"),
    make: || Box::new(ClusterDecap::default()),
};
