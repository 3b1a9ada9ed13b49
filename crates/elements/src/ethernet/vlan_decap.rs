//! VLANDecap — removes the 802.1Q tag from Ethernet packets
//!
//! Synopsis: `VLANDecap([ANNO, *keywords* ETHERTYPE])`
//!
//! Ports: 1 input, 1 output, agnostic. Expects Ethernet frames, tagged or not. A frame whose
//! type is ETHERTYPE (and that holds a whole tag) loses its 4-byte tag, leaving a plain
//! Ethernet frame with the encapsulated type; other frames pass unchanged. The MAC header
//! offset is set to the frame start. Nothing is dropped.
//!
//! Arguments:
//! - `ANNO` (boolean, default true): set each packet's VLAN TCI annotation to the removed
//!   TCI, or to 0 for an untagged frame.
//! - `ETHERTYPE` (integer, default 0x8100).
//!
//! Handlers: none besides the router's.
//!
//! Example: `FromDevice(eth0) -> VLANDecap -> Classifier(12/0800, -)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Packet};
use sluice_lang::args::Args;

use super::vlan::TPID_8021Q;

/// The VLANDecap element.
pub struct VLANDecap {
    anno: bool,
    ethertype: u16,
}

impl Default for VLANDecap {
    fn default() -> VLANDecap {
        VLANDecap {
            anno: true,
            ethertype: TPID_8021Q,
        }
    }
}

impl Element for VLANDecap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(anno) = args.read_p("ANNO")? {
            self.anno = anno;
        }
        args.read_into("ETHERTYPE", &mut self.ethertype)
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let d = p.data();
        let mut tci = 0;
        if d.len() >= 18 && u16::from_be_bytes([d[12], d[13]]) == self.ethertype {
            tci = u16::from_be_bytes([d[14], d[15]]);
            p.data_mut().copy_within(0..12, 4);
            p.pull_front(4);
        }
        p.set_mac_offset(0);
        if self.anno {
            p.anno_mut().vlan_tci = tci;
        }
        Some(p)
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "VLANDecap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("vlan_decap.rs"),
    make: || Box::new(VLANDecap::default()),
};
