//! EtherEncap — encapsulates packets in an Ethernet header
//!
//! Synopsis: `EtherEncap(ETHERTYPE, SRC, DST)`
//!
//! Ports: 1 input, 1 output, agnostic. Prepends a 14-byte Ethernet header with the given
//! type, source and destination (using headroom, no copy when there is room) and sets the MAC
//! header annotation. Nothing is dropped.
//!
//! Arguments: `ETHERTYPE` (16-bit, e.g. `0x0800`); `SRC`, `DST` (Ethernet addresses or
//! AddressInfo names).
//!
//! Handlers: `src` (rw), `dst` (rw), `ethertype` (rw, read in decimal as in Click).
//!
//! Example: `EtherEncap(0x0800, 00:00:c0:ae:67:ef, 00:00:c0:4f:71:ef)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::EtherAddr;

use crate::ip::common::EthArg;

/// The EtherEncap element.
#[derive(Default)]
pub struct EtherEncap {
    hdr: [u8; 14],
}

impl EtherEncap {
    fn set(&mut self, src: Option<EtherAddr>, dst: Option<EtherAddr>, ty: Option<u16>) {
        if let Some(d) = dst {
            self.hdr[0..6].copy_from_slice(&d.0);
        }
        if let Some(s) = src {
            self.hdr[6..12].copy_from_slice(&s.0);
        }
        if let Some(t) = ty {
            self.hdr[12..14].copy_from_slice(&t.to_be_bytes());
        }
    }
}

fn eth(b: &[u8]) -> EtherAddr {
    let mut a = [0u8; 6];
    a.copy_from_slice(b);
    EtherAddr(a)
}

impl Element for EtherEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let ty: u16 = args.read_mp("ETHERTYPE")?;
        let src = args.read_mp::<EthArg>("SRC")?.0;
        let dst = args.read_mp::<EthArg>("DST")?.0;
        self.set(Some(src), Some(dst), Some(ty));
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        p.push_front(14).copy_from_slice(&self.hdr);
        p.set_mac_offset(0);
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::rw("src"),
                Handler::rw("dst"),
                Handler::rw("ethertype"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "dst" => eth(&self.hdr[0..6]).to_string(),
            "src" => eth(&self.hdr[6..12]).to_string(),
            "ethertype" => u16::from_be_bytes([self.hdr[12], self.hdr[13]]).to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, v: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "src" => self.set(Some(EthArg::from_arg(v)?.0), None, None),
            "dst" => self.set(None, Some(EthArg::from_arg(v)?.0), None),
            "ethertype" => self.set(None, None, Some(u16::from_arg(v)?)),
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "EtherEncap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("ether_encap.rs"),
    make: || Box::new(EtherEncap::default()),
};
