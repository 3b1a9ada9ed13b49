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

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::EtherAddr;

/// The EtherEncap element.
#[derive(Default)]
pub struct EtherEncap {
    /// The header prepended: destination, source, type.
    hdr: [u8; 14],
}

fn eth(b: &[u8]) -> EtherAddr {
    let mut a = [0u8; 6];
    a.copy_from_slice(b);
    EtherAddr(a)
}

impl Element for EtherEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let ty: u16 = args.read_mp("ETHERTYPE")?;
        let src = args.read_mp::<EtherAddr>("SRC")?;
        let dst = args.read_mp::<EtherAddr>("DST")?;
        self.hdr[0..6].copy_from_slice(&dst.0);
        self.hdr[6..12].copy_from_slice(&src.0);
        self.hdr[12..14].copy_from_slice(&ty.to_be_bytes());
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        p.push_front(14).copy_from_slice(&self.hdr);
        p.set_mac_offset(0);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("src", |e| eth(&e.hdr[6..12]))
            .write_as("src", |e, a: EtherAddr| e.hdr[6..12].copy_from_slice(&a.0))
            .setting()
            .read("dst", |e| eth(&e.hdr[0..6]))
            .write_as("dst", |e, a: EtherAddr| e.hdr[0..6].copy_from_slice(&a.0))
            .setting()
            .read("ethertype", |e| u16::from_be_bytes([e.hdr[12], e.hdr[13]]))
            .write_as("ethertype", |e, t: u16| {
                e.hdr[12..14].copy_from_slice(&t.to_be_bytes())
            })
            .setting()
            .into()
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
