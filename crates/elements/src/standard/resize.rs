//! Resize — adds or removes bytes at the head and tail of packets
//!
//! Synopsis: `Resize(HEAD, TAIL)`
//!
//! Ports: 1 input, 1 output, agnostic. A positive HEAD adds that many bytes at the front of
//! each packet (from the headroom: earlier stripped bytes reappear, new buffer space is zero); a
//! negative HEAD removes bytes from the front. TAIL does the same at the end (added tail bytes
//! are zero). As in Click, removing more bytes than a packet has leaves it empty; nothing is
//! dropped.
//!
//! Arguments:
//! - `HEAD` (integer, default 0), `TAIL` (integer, default 0): each between -262144 and
//!   262144 (`MAX_PACKET_LEN`).
//!
//! Handlers: `head` (rw), `tail` (rw).
//!
//! Example: `Resize(0, -4)` removes a trailing frame check sequence.

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::{Args, PacketLenDelta};

/// The Resize element.
#[derive(Default)]
pub struct Resize {
    head: i64,
    tail: i64,
}

impl Element for Resize {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.head = args
            .read_p("HEAD")?
            .map_or(self.head, |PacketLenDelta(d)| d as i64);
        self.tail = args
            .read_p("TAIL")?
            .map_or(self.tail, |PacketLenDelta(d)| d as i64);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if self.head < 0 {
            p.pull_front((self.head.unsigned_abs() as usize).min(p.len()));
        } else if self.head > 0 {
            let n = self.head as usize;
            if p.headroom() >= n {
                p.unstrip(n);
            } else {
                p.push_front(n).fill(0);
            }
        }
        if self.tail < 0 {
            p.take((self.tail.unsigned_abs() as usize).min(p.len()));
        } else if self.tail > 0 {
            p.put(self.tail as usize);
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("head", |e| e.head)
            .write_as("head", |e, PacketLenDelta(d)| e.head = d as i64)
            .read("tail", |e| e.tail)
            .write_as("tail", |e, PacketLenDelta(d)| e.tail = d as i64)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Resize",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("resize.rs"),
    make: || Box::new(Resize::default()),
};
