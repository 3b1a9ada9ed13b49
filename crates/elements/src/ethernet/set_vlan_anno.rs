//! SetVLANAnno — sets the VLAN TCI annotation
//!
//! Synopsis: `SetVLANAnno([VLAN_TCI, VLAN_PCP, *keywords* VLAN_ID])`
//!
//! Ports: 1 input, 1 output, agnostic. Sets each packet's VLAN TCI annotation and passes it
//! on (EtherVLANEncap and VLANEncap with `VLAN_TCI ANNO` read it).
//!
//! Arguments:
//! - `VLAN_TCI` (integer 0–0xFFFF): the whole TCI.
//! - `VLAN_PCP` (integer 0–7, default 0): priority, ORed into the top 3 bits.
//! - `VLAN_ID` (integer 0–0xFFF, default 0): the VLAN ID when VLAN_TCI is not given.
//!
//! Handlers: `vlan_tci`, `vlan_id`, `vlan_pcp` (rw).
//!
//! Example: `... -> SetVLANAnno(VLAN_ID 7, VLAN_PCP 3) -> EtherVLANEncap(0x0800, a, b, ANNO)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;

use super::vlan::VlanTag;

/// The SetVLANAnno element.
#[derive(Default)]
pub struct SetVLANAnno {
    tag: VlanTag,
}

impl Element for SetVLANAnno {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.tag = VlanTag::read(args, false)?;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        p.anno_mut().vlan_tci = self.tag.tci;
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .nest(|e| &mut e.tag, VlanTag::table(false))
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SetVLANAnno",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("set_vlan_anno.rs"),
    make: || Box::new(SetVLANAnno::default()),
};
