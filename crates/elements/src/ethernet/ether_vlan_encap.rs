//! EtherVLANEncap — encapsulates packets in an 802.1Q Ethernet header
//!
//! Synopsis: `EtherVLANEncap(ETHERTYPE, SRC, DST, VLAN_TCI [, VLAN_PCP, *keywords* VLAN_ID,
//! NATIVE_VLAN])`
//!
//! Ports: 1 input, 1 output, agnostic. Prepends an 18-byte header: DST, SRC, type 0x8100, the
//! TCI, then ETHERTYPE. A packet whose VLAN ID equals NATIVE_VLAN gets a plain 14-byte
//! Ethernet header with type ETHERTYPE instead. The MAC header offset is set to the new
//! header. Nothing is dropped.
//!
//! Arguments:
//! - `ETHERTYPE` (integer, mandatory): the encapsulated type (e.g. 0x0800).
//! - `SRC`, `DST` (Ethernet addresses or AddressInfo names, mandatory).
//! - `VLAN_TCI` (integer 0–0xFFFF, or `ANNO`: take each packet's VLAN TCI annotation).
//! - `VLAN_PCP` (integer 0–7, default 0): priority, ORed into the top 3 bits of the TCI.
//! - `VLAN_ID` (integer 0–0xFFF, default 0): the VLAN ID when VLAN_TCI is not given.
//! - `NATIVE_VLAN` (integer -1–0xFFF, default 0; -1: none).
//!
//! Handlers: `src`, `dst`, `ethertype` (rw), `vlan_tci` (rw; `ANNO` in annotation mode),
//! `vlan_id`, `vlan_pcp` (rw; empty in annotation mode), `native_vlan` (rw; the value last
//! given, empty if none).
//!
//! Example: `EtherVLANEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2, 1)` (IPv4 on VLAN 1)

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::EtherAddr;

use super::vlan::{VlanTag, TPID_8021Q};

/// The EtherVLANEncap element.
#[derive(Default)]
pub struct EtherVLANEncap {
    src: EtherAddr,
    dst: EtherAddr,
    ethertype: u16,
    tag: VlanTag,
}

impl Element for EtherVLANEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.ethertype = args.read_mp("ETHERTYPE")?;
        self.src = args.read_mp::<EtherAddr>("SRC")?;
        self.dst = args.read_mp::<EtherAddr>("DST")?;
        self.tag = VlanTag::read(args, true)?;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let tci = self.tag.tci_for(&p);
        let h = if self.tag.is_native(tci) {
            let h = p.push_front(14);
            h[12..14].copy_from_slice(&self.ethertype.to_be_bytes());
            h
        } else {
            let h = p.push_front(18);
            h[12..14].copy_from_slice(&TPID_8021Q.to_be_bytes());
            h[14..16].copy_from_slice(&tci.to_be_bytes());
            h[16..18].copy_from_slice(&self.ethertype.to_be_bytes());
            h
        };
        h[0..6].copy_from_slice(&self.dst.0);
        h[6..12].copy_from_slice(&self.src.0);
        p.set_mac_offset(0);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("src", |e| &mut e.src)
            .data("dst", |e| &mut e.dst)
            .data("ethertype", |e| &mut e.ethertype)
            .nest(|e| &mut e.tag, VlanTag::table(true))
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "EtherVLANEncap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("ether_vlan_encap.rs"),
    make: || Box::new(EtherVLANEncap::default()),
};
