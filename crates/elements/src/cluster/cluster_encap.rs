//! ClusterEncap — addresses a routed packet to its output node in a cluster router
//!
//! Synopsis: `ClusterEncap(FROM, TO, PORT)`
//!
//! Ports: 1 input, 1 output, agnostic. Runs on the input node of a cluster router (RouteBricks
//! Direct VLB), after the IP route lookup: takes an IP packet whose destination IP annotation
//! holds the next hop (when it is 0.0.0.0, the IP header's destination is used) and prepends
//! an Ethernet header that carries the lookup's result across the cluster: destination
//! `02:5b:00:00:TO:PORT` (output node TO, its external port PORT), source
//! `02:FROM:A:B:C:D` (input node FROM, next hop A.B.C.D), type 0x0800. Intermediate and
//! output nodes forward by these addresses alone (DirectVLB, ClusterDecap); no node after
//! the input node reads the IP header. Packets too short for an IP header are dropped and
//! counted.
//!
//! Arguments: `FROM`, `TO` — node indices (0–63), `PORT` — the output node's port (0–254).
//!
//! Handlers: `from`, `to`, `port` (r); `drops`, `drop_details` (r).
//!
//! Example: `rt[2] -> DecIPTTL -> ClusterEncap(0, 1, 0) -> [0]vlb :: DirectVLB(0, 4, 100Mbps)`

use std::net::Ipv4Addr;

use sluice_core::{
    drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet, Table,
};
use sluice_lang::args::Args;

use super::frame;
use crate::ip::common::ip_offset;

drop_reasons! {
    /// Why ClusterEncap drops a packet.
    enum Reason { TooShort => "too short for an IP header" }
}

/// The ClusterEncap element.
#[derive(Default)]
pub struct ClusterEncap {
    from: u8,
    to: u8,
    port: u8,
    drops: Drops<Reason>,
}

impl Element for ClusterEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let from: u8 = args.read_mp("FROM")?;
        let to: u8 = args.read_mp("TO")?;
        let port: u8 = args.read_mp("PORT")?;
        if usize::from(from.max(to)) >= super::vlb::MAX_NODES {
            args.error(format!(
                "FROM, TO: node indices are below {}",
                super::vlb::MAX_NODES
            ));
            return Err(());
        }
        if port == 0xff {
            args.error("PORT: 255 is reserved");
            return Err(());
        }
        (self.from, self.to, self.port) = (from, to, port);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let off = ip_offset(&p);
        if p.len() < off + 20 {
            self.drops.count(Reason::TooShort);
            return None;
        }
        let mut hop = p.dst_ip_anno();
        if hop == Ipv4Addr::UNSPECIFIED {
            let d = &p.data()[off + 16..off + 20];
            hop = Ipv4Addr::new(d[0], d[1], d[2], d[3]);
        }
        let h = p.push_front(14);
        h[0..6].copy_from_slice(&frame::dst_addr(self.to, self.port));
        h[6..12].copy_from_slice(&frame::src_addr(self.from, hop));
        h[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        p.set_mac_offset(0);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("from", |e| e.from)
            .read("to", |e| e.to)
            .read("port", |e| e.port)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ClusterEncap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("cluster_encap.rs"),
    make: || Box::new(ClusterEncap::default()),
};
