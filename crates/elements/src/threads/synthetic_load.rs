//! SyntheticLoad — per-packet work of a chosen memory footprint and CPU cost
//!
//! Synopsis: `SyntheticLoad(N, S [, CYCLES C, SEED s])`
//!
//! Ports: 1 input, 1 output, agnostic. Packets pass through unchanged apart from one
//! annotation.
//!
//! The synthetic element of the placement study (Dobrescu et al., §3.1): for each packet it
//! reads the first bytes of the packet, then N random 8-byte words of a private S-byte array
//! (addresses from a xorshift generator per element), then optionally burns about C processor
//! cycles in a dependent arithmetic loop. The checksum of what it read is XORed into user
//! annotation bytes 4–11 (little-endian), so that the reads cannot be optimised away and a
//! chain of SyntheticLoads leaves one combined value. The array is allocated and filled with
//! pseudo-random data at configure time.
//!
//! Under `-j`, every thread that reaches the element gets its own copy (its own array and
//! generator, like a cloned element); handlers add up the copies' counts.
//!
//! Arguments:
//! - `N` (integer): random reads per packet (0 allowed: only the cycle burn).
//! - `S` (size in bytes, suffix `K`, `M` or `G` for powers of 1024, e.g. `2M`): array size,
//!   from 8 bytes to 1G.
//! - `CYCLES` (integer, default 0): extra cycles to burn per packet (two dependent one-cycle
//!   operations per loop round, so the cost follows the core clock).
//! - `SEED` (integer, default 1): seed of the array contents and of the address generator.
//!
//! Handlers: `count` (r, packets processed), `n` (r), `s` (r, bytes), `footprint_bytes` and
//! `accesses_per_packet` (r: `s` and `n`, as every element with a data structure reports
//! them), `cycles` (rw: the extra cycles per packet, changed at run time on every copy),
//! `reset` (w, zero the count).
//!
//! Example: `InfiniteSource -> SyntheticLoad(4, 2M, CYCLES 200) -> Discard`

use sluice_core::{
    Concurrency, ConfigCx, Cx, Element, ElementClass, Footprint, Handlers, Packet, Table,
};
use sluice_lang::args::Args;

/// Where the checksum goes in `Anno::user`.
pub const CHECKSUM_ANNO: std::ops::Range<usize> = 4..12;
/// Largest array accepted.
const MAX_SIZE: u64 = 1 << 30;

/// The SyntheticLoad element.
pub struct SyntheticLoad {
    n: u32,
    size: u64,
    cycles: u64,
    seed: u64,
    words: Vec<u64>,
    rng: u64,
    count: u64,
}

impl Default for SyntheticLoad {
    fn default() -> SyntheticLoad {
        SyntheticLoad {
            n: 0,
            size: 8,
            cycles: 0,
            seed: 1,
            words: vec![0],
            rng: 1,
            count: 0,
        }
    }
}

/// Parses a byte size with an optional `K`, `M` or `G` suffix (powers of 1024; a trailing `B`
/// or `iB` is accepted too: `64K`, `2MB`, `1GiB`, `4096`).
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (num, mul) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1u64 << 10),
        'm' | 'M' => (&t[..t.len() - 1], 1 << 20),
        'g' | 'G' => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mul)
}

/// One xorshift64 step.
#[inline]
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Burns about `c` core cycles: a chain of dependent rotate/xor operations the compiler cannot
/// fold away.
#[inline(never)]
pub fn burn(c: u64, seed: u64) -> u64 {
    let mut x = seed;
    for i in 0..c / 2 {
        x = x.rotate_left(5) ^ i;
    }
    x
}

impl SyntheticLoad {
    /// The work on one packet; returns the checksum of what was read.
    #[inline]
    fn work(&mut self, p: &Packet) -> u64 {
        let d = p.data();
        let mut head = [0u8; 8];
        let k = d.len().min(8);
        head[..k].copy_from_slice(&d[..k]);
        let mut sum = u64::from_le_bytes(head);
        let len = self.words.len() as u64;
        let mut r = self.rng;
        for _ in 0..self.n {
            let x = xorshift(&mut r);
            // Multiply-shift maps the 64-bit value onto 0..len without a division.
            let i = ((x as u128 * len as u128) >> 64) as usize;
            sum = sum.rotate_left(1) ^ self.words[i];
        }
        self.rng = r;
        if self.cycles > 0 {
            sum ^= burn(self.cycles, sum);
        }
        sum
    }
}

impl Element for SyntheticLoad {
    fn concurrency(&self) -> Concurrency {
        Concurrency::Replicated
    }

    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let n: u32 = args.read_mp("N")?;
        let s: String = args.read_mp("S")?;
        args.read_into("CYCLES", &mut self.cycles)?;
        args.read_into("SEED", &mut self.seed)?;
        let size = match parse_size(&s) {
            Some(v) if (8..=MAX_SIZE).contains(&v) => v,
            Some(_) => {
                args.error(format!("S: size {} out of range (8 bytes to 1G)", s));
                return Err(());
            }
            None => {
                args.error(format!(
                    "S: expected size in bytes (e.g. 64K, 2M), got '{}'",
                    s
                ));
                return Err(());
            }
        };
        self.n = n;
        self.size = size;
        let mut g = self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut words = Vec::new();
        if words.try_reserve_exact((size / 8) as usize).is_err() {
            args.error(format!("S: out of memory for {} bytes", size));
            return Err(());
        }
        words.extend((0..size / 8).map(|_| xorshift(&mut g)));
        self.words = words;
        self.rng = xorshift(&mut g) | 1;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let sum = self.work(&p);
        self.count += 1;
        let u = &mut p.anno_mut().user[CHECKSUM_ANNO];
        let old = u64::from_le_bytes([u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7]]);
        u.copy_from_slice(&(old ^ sum).to_le_bytes());
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .read("n", |e| e.n)
            .setting()
            .read("s", |e| e.size)
            .setting()
            .footprint(|e| Footprint {
                bytes: e.size,
                accesses: e.n as f64,
            })
            .read("cycles", |e| e.cycles)
            .write("cycles", |e, v, _| {
                v.trim()
                    .parse()
                    .map(|c| e.cycles = c)
                    .map_err(|_| format!("expected a number of cycles, got '{}'", v.trim()))
            })
            .action("reset", |e| e.count = 0)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SyntheticLoad",
    ports: "1/1",
    processing: "a/a",
    flow: "",
    source: include_str!("synthetic_load.rs"),
    make: || Box::new(SyntheticLoad::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64K"), Some(65536));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("2MB"), Some(2 << 20));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("1k"), Some(1024));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("-3"), None);
        assert_eq!(parse_size("99999999999999999999G"), None);
    }

    #[test]
    fn reads_stay_inside_the_array_and_depend_on_the_seed() {
        let mk = |seed: u64, size: u64| {
            let mut e = SyntheticLoad {
                n: 16,
                size,
                seed,
                ..SyntheticLoad::default()
            };
            let mut g = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            e.words = (0..size / 8).map(|_| xorshift(&mut g)).collect();
            e.rng = xorshift(&mut g) | 1;
            e
        };
        let p = Packet::from_bytes(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let (mut a, mut b, mut c) = (mk(1, 8), mk(1, 1 << 16), mk(2, 1 << 16));
        for _ in 0..1000 {
            a.work(&p);
        }
        assert_ne!(b.work(&p), c.work(&p));
    }
}
