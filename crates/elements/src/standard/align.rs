//! Align — aligns packet data in memory
//!
//! Synopsis: `Align(MODULUS, OFFSET)`
//!
//! Ports: 1 input, 1 output, agnostic. Moves each packet's data within its buffer so that the
//! first data byte sits OFFSET bytes past a MODULUS-byte boundary in memory (forward into the
//! tailroom when there is room, otherwise back into the headroom; a packet with room on
//! neither side is first copied into a fresh buffer, losing headers stripped before it).
//! Headers the packet remembers move with the data. Packets already aligned pass untouched.
//! Nothing is dropped. Sluice reads headers without alignment assumptions, so Align matters
//! only to configurations written for Click's click-align.
//!
//! Arguments:
//! - `MODULUS` (2, 4 or 8, mandatory).
//! - `OFFSET` (integer below MODULUS, mandatory).
//!
//! Handlers: none besides the router's.
//!
//! Example: `FromDevice(eth0) -> Align(4, 2) -> ...` (IP header 4-aligned after 14 bytes)

use sluice_core::packet::DEFAULT_HEADROOM;
use sluice_core::{ConfigCx, Cx, Element, ElementClass, Packet};
use sluice_lang::args::Args;

/// The Align element.
#[derive(Default)]
pub struct Align {
    modulus: usize,
    offset: usize,
}

/// Bytes of remembered headers in front of the data (after a strip).
fn front_headers(p: &Packet) -> usize {
    [p.mac_offset(), p.network_offset(), p.transport_offset()]
        .iter()
        .flatten()
        .fold(0isize, |m, &o| m.min(o))
        .unsigned_abs()
}

/// A copy of `p` in a fresh buffer with room on both sides; headers in front of the data are
/// not kept.
fn roomy_copy(p: &Packet) -> Packet {
    let mut q = Packet::with_room(DEFAULT_HEADROOM, p.len(), 16);
    q.data_mut().copy_from_slice(p.data());
    *q.anno_mut() = *p.anno();
    if let Some(o) = p.mac_offset().filter(|&o| o >= 0) {
        q.set_mac_offset(o);
    }
    if let Some(o) = p.network_offset().filter(|&o| o >= 0) {
        q.set_network_offset(o);
    }
    if let Some(o) = p.transport_offset().filter(|&o| o >= 0) {
        q.set_transport_offset(o);
    }
    q
}

/// Moves the data of `p` `by` bytes forward (positive) or back (negative) in its buffer,
/// together with the headers in front of it; the caller checks the room.
fn shift(p: &mut Packet, by: isize) {
    let offs = [p.mac_offset(), p.network_offset(), p.transport_offset()];
    let pre = front_headers(p);
    let len = p.len();
    p.unstrip(pre);
    let n = by.unsigned_abs();
    if by > 0 {
        p.put(n);
        p.data_mut().copy_within(0..pre + len, n);
        p.pull_front(n + pre);
    } else {
        p.push_front(n);
        p.data_mut().copy_within(n.., 0);
        p.take(n);
        p.pull_front(pre);
    }
    if let Some(o) = offs[0] {
        p.set_mac_offset(o);
    }
    if let Some(o) = offs[1] {
        p.set_network_offset(o);
    }
    if let Some(o) = offs[2] {
        p.set_transport_offset(o);
    }
}

impl Element for Align {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.modulus = args.read_mp("MODULUS")?;
        self.offset = args.read_mp("OFFSET")?;
        if !matches!(self.modulus, 2 | 4 | 8) {
            args.error("MODULUS must be 2, 4, or 8");
            return Err(());
        }
        if self.offset >= self.modulus {
            args.error("OFFSET must be smaller than MODULUS");
            return Err(());
        }
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        loop {
            let at = p.data().as_ptr() as usize % self.modulus;
            if at == self.offset {
                return Some(p);
            }
            let fwd = (self.offset + self.modulus - at) % self.modulus;
            let back = self.modulus - fwd;
            if p.tailroom() >= fwd {
                shift(&mut p, fwd as isize);
            } else if p.headroom() >= back + front_headers(&p) {
                shift(&mut p, -(back as isize));
            } else {
                p = roomy_copy(&p);
            }
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Align",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("align.rs"),
    make: || Box::new(Align::default()),
};
