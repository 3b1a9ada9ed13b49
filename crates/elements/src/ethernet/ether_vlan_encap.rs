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

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::EtherAddr;

use super::vlan::{VlanTag, TPID_8021Q};
use crate::ip::common::EthArg;

/// The EtherVLANEncap element.
pub struct EtherVLANEncap {
    src: EtherAddr,
    dst: EtherAddr,
    ethertype: u16,
    tag: VlanTag,
}

impl Default for EtherVLANEncap {
    fn default() -> EtherVLANEncap {
        EtherVLANEncap {
            src: EtherAddr([0; 6]),
            dst: EtherAddr([0; 6]),
            ethertype: 0,
            tag: VlanTag::default(),
        }
    }
}

impl Element for EtherVLANEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.ethertype = args.read_mp("ETHERTYPE")?;
        self.src = args.read_mp::<EthArg>("SRC")?.0;
        self.dst = args.read_mp::<EthArg>("DST")?.0;
        self.tag = VlanTag::read(args, true, true)?;
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

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::rw("src").setting(),
                Handler::rw("dst").setting(),
                Handler::rw("ethertype").setting(),
                Handler::rw("vlan_tci").setting(),
                Handler::rw("vlan_id").setting(),
                Handler::rw("vlan_pcp").setting(),
                Handler::rw("native_vlan").setting(),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "src" => Some(self.src.to_string()),
            "dst" => Some(self.dst.to_string()),
            "ethertype" => Some(self.ethertype.to_string()),
            _ => self.tag.read_handler(name),
        }
    }

    fn write_handler(&mut self, name: &str, v: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "src" => self.src = EthArg::from_arg(v)?.0,
            "dst" => self.dst = EthArg::from_arg(v)?.0,
            "ethertype" => self.ethertype = u16::from_arg(v.trim())?,
            _ => {
                return self
                    .tag
                    .write_handler(name, v, true)
                    .unwrap_or_else(|| Err(format!("no handler {}", name)))
            }
        }
        Ok(())
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
