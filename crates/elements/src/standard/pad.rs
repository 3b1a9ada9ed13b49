//! Pad — pads packets to a minimum length
//!
//! Synopsis: `Pad([LENGTH, *keywords* ZERO])`
//!
//! Ports: 1 input, 1 output, agnostic. A packet shorter than LENGTH is extended at the tail to
//! LENGTH bytes; longer packets pass unchanged. The added bytes are always zero (Sluice has no
//! extra-length annotation, so unlike Click the default LENGTH is the Ethernet minimum).
//!
//! Arguments:
//! - `LENGTH` (integer, default 60, at most 262144: `MAX_PACKET_LEN`).
//! - `ZERO` (boolean, default true): accepted for compatibility; padding is always zero.
//!
//! Handlers: `length` (r), `count` (r, packets padded).
//!
//! Example: `... -> Pad(60) -> ToDevice(eth0)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::{Args, PacketLen};

/// The Pad element.
pub struct Pad {
    len: usize,
    count: u64,
}

impl Default for Pad {
    fn default() -> Pad {
        Pad { len: 60, count: 0 }
    }
}

impl Element for Pad {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.len = args
            .read_p::<PacketLen>("LENGTH")?
            .map_or(self.len, |l| l.0);
        let _zero: Option<bool> = args.read("ZERO")?;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if p.len() < self.len {
            let n = self.len - p.len();
            p.put(n);
            self.count += 1;
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("length", |e| e.len)
            .read("count", |e| e.count)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Pad",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("pad.rs"),
    make: || Box::new(Pad::default()),
};
