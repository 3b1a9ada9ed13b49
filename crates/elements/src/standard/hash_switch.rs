//! HashSwitch — sends packets to an output chosen by a hash of their bytes
//!
//! Synopsis: `HashSwitch(OFFSET, LENGTH)`
//!
//! Ports: 1 push input, 1 or more push outputs. Adds up the LENGTH bytes at OFFSET of each
//! packet into `d`; with 2, 4 or 8 outputs the packet goes to output `(d xor (d >> 4)) mod N`,
//! with any other number N to output `d mod N`, as in Click. Packets with the same bytes there
//! always take the same output (for example, `HashSwitch(26, 8)` keeps every IPv4
//! source/destination pair of an Ethernet frame on one output). Packets shorter than
//! OFFSET + LENGTH go to output 0.
//!
//! Arguments:
//! - `OFFSET` (integer, mandatory), `LENGTH` (integer, mandatory, at least 1).
//!
//! Handlers: none.
//!
//! Example: `FromDevice(eth0) -> hs :: HashSwitch(26, 8); hs[0] -> q0 :: Queue; hs[1] -> q1 :: Queue`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass};
use sluice_lang::args::Args;

use super::util::PortBatches;

/// The HashSwitch element.
pub struct HashSwitch {
    offset: usize,
    len: usize,
    outs: PortBatches,
}

impl Default for HashSwitch {
    fn default() -> HashSwitch {
        HashSwitch {
            offset: 0,
            len: 1,
            outs: PortBatches::new(0),
        }
    }
}

/// The output of a packet whose hashed bytes are `key` (none: too short), among `n`.
fn output(key: Option<&[u8]>, n: usize) -> usize {
    let Some(key) = key else { return 0 };
    let d: usize = key.iter().map(|&b| usize::from(b)).sum();
    if matches!(n, 2 | 4 | 8) {
        (d ^ (d >> 4)) & (n - 1)
    } else {
        d % n
    }
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
        let n = cx.noutputs().max(1);
        for p in batch {
            let o = output(p.data().get(self.offset..self.offset + self.len), n);
            self.outs.add(o, p, cx);
        }
        self.outs.flush(cx);
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
    use super::output;

    #[test]
    fn outputs_as_click_chooses_them() {
        // 0x12 + 0x34 = 70; 70 xor 4 = 66; 66 mod 4 = 2.
        assert_eq!(output(Some(&[0x12, 0x34]), 4), 2);
        // 5 + 7 = 12; 12 xor 0 = 12; mod 4 = 0, mod 8 = 4, mod 2 = 0.
        assert_eq!(output(Some(&[5, 7]), 4), 0);
        assert_eq!(output(Some(&[5, 7]), 8), 4);
        assert_eq!(output(Some(&[5, 7]), 2), 0);
        // Other output counts: the plain sum modulo N.
        assert_eq!(output(Some(&[5, 7]), 5), 2);
        assert_eq!(output(Some(&[0x12, 0x34]), 3), 1);
        // Too short: output 0.
        assert_eq!(output(None, 4), 0);
    }
}
