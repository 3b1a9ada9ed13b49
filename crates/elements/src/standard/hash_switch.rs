//! HashSwitch — sends packets to an output chosen by a hash of their bytes
//!
//! Synopsis: `HashSwitch(OFFSET, LENGTH)`
//!
//! Ports: 1 push input, 1 or more push outputs. Hashes the LENGTH bytes at OFFSET of each
//! packet (FNV-1a, 32 bits) and sends the packet to output `hash mod N`. Packets with the same
//! bytes there always take the same output (for example, `HashSwitch(26, 8)` keeps every
//! IPv4 source/destination pair of an Ethernet frame on one output). Packets shorter than
//! OFFSET + LENGTH are dropped and counted.
//!
//! Arguments:
//! - `OFFSET` (integer, mandatory), `LENGTH` (integer, mandatory, at least 1).
//!
//! Handlers: `drops`, `drop_details` (r, packets too short).
//!
//! Example: `FromDevice(eth0) -> hs :: HashSwitch(26, 8); hs[0] -> q0 :: Queue; hs[1] -> q1 :: Queue`

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass};
use sluice_core::{Handlers, Table};
use sluice_lang::args::Args;

use super::util::PortBatches;

drop_reasons! {
    /// Why HashSwitch drops a packet.
    enum Reason { TooShort => "too short for the hashed bytes" }
}

/// The HashSwitch element.
pub struct HashSwitch {
    offset: usize,
    len: usize,
    drops: Drops<Reason>,
    outs: PortBatches,
}

impl Default for HashSwitch {
    fn default() -> HashSwitch {
        HashSwitch {
            offset: 0,
            len: 1,
            drops: Drops::default(),
            outs: PortBatches::new(0),
        }
    }
}

/// FNV-1a over `bytes`.
pub(crate) fn fnv1a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

impl Element for HashSwitch {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.offset = args.read_mp("OFFSET")?;
        self.len = args.read_mp("LENGTH")?;
        if self.len == 0 {
            args.error("LENGTH: must be positive");
            return Err(());
        }
        self.outs = PortBatches::new(cx.noutputs());
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let n = cx.noutputs().max(1) as u32;
        for p in batch {
            match p.data().get(self.offset..self.offset + self.len) {
                Some(key) => {
                    let o = (fnv1a(key) % n) as usize;
                    self.outs.add(o, p, cx);
                }
                None => self.drops.count(Reason::TooShort),
            }
        }
        self.outs.flush(cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "HashSwitch",
    ports: "1/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("hash_switch.rs"),
    make: || Box::new(HashSwitch::default()),
};

#[cfg(test)]
mod tests {
    #[test]
    fn fnv_known_values() {
        assert_eq!(super::fnv1a(b""), 0x811c_9dc5);
        assert_eq!(super::fnv1a(b"a"), 0xe40c_292c);
    }
}
