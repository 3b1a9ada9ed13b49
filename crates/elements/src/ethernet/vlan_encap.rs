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
//! `native_vlan` and `ethertype` read the value last given, empty if none), `drops` (r).
//!
//! Example: `FromDevice(eth0) -> VLANEncap(VLAN_ID 10) -> ToDevice(eth1)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::{Args, FromArg};

use super::vlan::{VlanTag, TPID_8021Q};

/// The VLANEncap element.
#[derive(Default)]
pub struct VLANEncap {
    tag: VlanTag,
    ethertype: u16,
    /// ETHERTYPE as given, for its read handler (empty if never given).
    ethertype_given: bool,
    drops: u64,
}

impl Element for VLANEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.tag = VlanTag::read(args, true, true)?;
        let ethertype = args.read("ETHERTYPE")?;
        self.ethertype_given = ethertype.is_some();
        self.ethertype = ethertype.unwrap_or(TPID_8021Q);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if p.len() < 14 {
            self.drops += 1;
            return None;
        }
        let tci = self.tag.tci_for(&p);
        if !self.tag.is_native(tci) {
            p.push_front(4);
            let d = p.data_mut();
            d.copy_within(4..16, 0);
            d[12..14].copy_from_slice(&self.ethertype.to_be_bytes());
            d[14..16].copy_from_slice(&tci.to_be_bytes());
        }
        p.set_mac_offset(0);
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::rw("vlan_tci").setting(),
                Handler::rw("vlan_id").setting(),
                Handler::rw("vlan_pcp").setting(),
                Handler::rw("native_vlan").setting(),
                Handler::rw("ethertype").setting(),
                Handler::r("drops"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "ethertype" if self.ethertype_given => Some(self.ethertype.to_string()),
            "ethertype" => Some(String::new()),
            "drops" => Some(self.drops.to_string()),
            _ => self.tag.read_handler(name),
        }
    }

    fn write_handler(&mut self, name: &str, v: &str, _cx: &mut Cx) -> Result<(), String> {
        if name == "ethertype" {
            self.ethertype = u16::from_arg(v.trim()).map_err(|e| format!("ETHERTYPE: {}", e))?;
            self.ethertype_given = true;
            return Ok(());
        }
        self.tag
            .write_handler(name, v, true)
            .unwrap_or_else(|| Err(format!("no handler {}", name)))
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
