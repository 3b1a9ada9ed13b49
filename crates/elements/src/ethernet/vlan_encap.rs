//! VLANEncap — adds an 802.1Q tag to Ethernet packets
//!
//! Synopsis: `VLANEncap([VLAN_TCI, VLAN_PCP, *keywords* VLAN_ID, NATIVE_VLAN, ETHERTYPE])`
//!
//! Ports: 1 input, 1 output, agnostic. Expects Ethernet frames. Inserts a 4-byte 802.1Q tag
//! (tag protocol ETHERTYPE, then the TCI) after the source address, so the frame's type
//! becomes ETHERTYPE and the original type follows the tag. A frame whose VLAN ID equals
//! NATIVE_VLAN passes untagged. The MAC header offset is set to the frame start. Frames
//! shorter than 14 bytes are dropped and counted.
//!
//! Arguments:
//! - `VLAN_TCI` (integer 0–0xFFFF, or `ANNO`: take each packet's VLAN TCI annotation).
//! - `VLAN_PCP` (integer 0–7, default 0): priority, ORed into the top 3 bits of the TCI.
//! - `VLAN_ID` (integer 0–0xFFF, default 0): the VLAN ID when VLAN_TCI is not given.
//! - `NATIVE_VLAN` (integer -1–0xFFF, default 0; -1: none).
//! - `ETHERTYPE` (integer, default 0x8100; 0x88a8 for 802.1ad, 0x9100).
//!
//! Handlers: `vlan_tci` (rw; `ANNO` in annotation mode), `vlan_id`, `vlan_pcp`,
//! `native_vlan`, `ethertype` (rw; `vlan_id` and `vlan_pcp` read empty in annotation mode,
//! `native_vlan` and `ethertype` read the value last given, empty if none), `drops`,
//! `drop_details` (r): runt frames dropped.
//!
//! Example: `FromDevice(eth0) -> VLANEncap(VLAN_ID 10) -> ToDevice(eth1)`

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::{Args, FromArg};

use super::vlan::{VlanTag, TPID_8021Q};

drop_reasons! {
    /// Why VLANEncap drops a packet.
    enum Reason { Runt => "runt frame" }
}

/// The VLANEncap element.
#[derive(Default)]
pub struct VLANEncap {
    tag: VlanTag,
    /// ETHERTYPE as last given (`None`: never given, 0x8100 is used and the handler reads
    /// empty).
    ethertype: Option<u16>,
    drops: Drops<Reason>,
}

impl Element for VLANEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.tag = VlanTag::read(args, true)?;
        self.ethertype = args.read("ETHERTYPE")?;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if p.len() < 14 {
            self.drops.count(Reason::Runt);
            return None;
        }
        let tci = self.tag.tci_for(&p);
        if !self.tag.is_native(tci) {
            p.push_front(4);
            let d = p.data_mut();
            d.copy_within(4..16, 0);
            let ethertype = self.ethertype.unwrap_or(TPID_8021Q);
            d[12..14].copy_from_slice(&ethertype.to_be_bytes());
            d[14..16].copy_from_slice(&tci.to_be_bytes());
        }
        p.set_mac_offset(0);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .nest(|e| &mut e.tag, VlanTag::table(true))
            .read("ethertype", |e| {
                e.ethertype.map_or(String::new(), |t| t.to_string())
            })
            .write("ethertype", |e, v, _| {
                let t = u16::from_arg(v.trim()).map_err(|e| format!("ETHERTYPE: {}", e))?;
                e.ethertype = Some(t);
                Ok(())
            })
            .setting()
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "VLANEncap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("vlan_encap.rs"),
    make: || Box::new(VLANEncap::default()),
};
