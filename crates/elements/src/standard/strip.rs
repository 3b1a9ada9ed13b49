//! Strip — removes bytes from the front of packets
//!
//! Synopsis: `Strip(LENGTH)`
//!
//! Ports: 1 input, 1 output, agnostic. Removes LENGTH bytes from the front of each packet (the
//! bytes stay in the buffer's headroom, so Unstrip can restore them). A packet shorter than
//! LENGTH is dropped and counted.
//!
//! Arguments:
//! - `LENGTH` (integer, mandatory, at most 262144: `MAX_PACKET_LEN`): bytes to remove.
//!
//! Handlers: `length` (r), `drops` (r, packets shorter than LENGTH).
//!
//! Example: `FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> ...`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::{Args, PacketLen};

/// The Strip element.
#[derive(Default)]
pub struct Strip {
    len: usize,
    drops: u64,
}

impl Element for Strip {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.len = args.read_mp::<PacketLen>("LENGTH")?.0;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if p.len() < self.len {
            self.drops += 1;
            return None;
        }
        p.pull_front(self.len);
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("length"), Handler::r("drops")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "length" => self.len.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        })
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Strip",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("strip.rs"),
    make: || Box::new(Strip::default()),
};
