//! EtherSwitch benchmark: a four-port switch that has learned 1K or 100K addresses (spread
//! over the ports) switches 64-byte frames between random learned hosts, in batches of 32
//! from one input at a time, as the engine pushes them; the frames of a batch go to
//! different outputs, as on a real switch. Prints ns/packet for the switch path and for a
//! baseline measured in the same run (the same frames made and pushed straight into a
//! Discard), and the difference: what EtherSwitch itself costs. Median of five runs.
//!
//! Run: `cargo run --release -p sluice-elements --example etherswitch_bench -- [PACKETS]`
//! (default 4,000,000 packets per run).

use std::time::Instant;

use sluice_core::{Batch, Packet, Router, BATCH_MAX};
use sluice_testkit::{read, router};

const PORTS: usize = 4;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Host `h`'s address; it sits on port `h % PORTS`.
fn host(h: u32) -> [u8; 6] {
    let b = h.to_be_bytes();
    [2, 0, b[0], b[1], b[2], b[3]]
}

fn frame(dst: [u8; 6], src: [u8; 6]) -> [u8; 60] {
    let mut d = [0u8; 60];
    d[0..6].copy_from_slice(&dst);
    d[6..12].copy_from_slice(&src);
    d[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    d
}

/// Pushes `packets` frames between random hosts of `hosts`, a batch at a time from input
/// `port` of element `into` (its port `port % PORTS` on the switch); returns the seconds.
fn run(r: &mut Router, into: &str, hosts: u32, packets: usize, seed: u64) -> f64 {
    let e = r.element_index(into).expect("injector");
    let mut rng = XorShift(seed);
    let per_port = hosts / PORTS as u32;
    let t = Instant::now();
    for b in 0..packets / BATCH_MAX {
        let port = b % PORTS;
        let mut batch = Batch::new();
        for _ in 0..BATCH_MAX {
            let x = rng.next();
            // A source on this port, a destination on another one.
            let src = (x as u32 % per_port) * PORTS as u32 + port as u32;
            let other = (port + 1 + (x >> 32) as usize % (PORTS - 1)) % PORTS;
            let dst = ((x >> 40) as u32 % per_port) * PORTS as u32 + other as u32;
            let _ = batch.push(Packet::from_bytes(&frame(host(dst), host(src))));
        }
        r.with_element(e, |_, cx| cx.push(port, batch));
    }
    t.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let packets: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("PACKETS: a number"))
        .unwrap_or(4_000_000);
    println!("EtherSwitch, {PORTS} ports, 64-byte frames, batches of {BATCH_MAX}, {packets} packets per run, median of 5");
    for hosts in [1_000u32, 100_000] {
        let mut r = router(
            "sw :: EtherSwitch;
             fwd :: Idle;
             fwd[0] -> [0]sw[0] -> Discard; fwd[1] -> [1]sw[1] -> Discard;
             fwd[2] -> [2]sw[2] -> Discard; fwd[3] -> [3]sw[3] -> Discard;
             b :: Idle; b[0] -> Discard; b[1] -> Discard; b[2] -> Discard; b[3] -> Discard;",
        );
        // Learn every host on its port.
        let fwd = r.element_index("fwd").expect("fwd");
        for h in 0..hosts {
            let p = Packet::from_bytes(&frame([0xff; 6], host(h)));
            r.with_element(fwd, |_, cx| cx.push_one(h as usize % PORTS, p));
        }
        assert_eq!(read(&mut r, "sw.count"), hosts.to_string());
        let mut sw = Vec::new();
        let mut base = Vec::new();
        for i in 0..5 {
            base.push(run(&mut r, "b", hosts, packets, 7 + i) * 1e9 / packets as f64);
            sw.push(run(&mut r, "fwd", hosts, packets, 7 + i) * 1e9 / packets as f64);
        }
        let (s, b) = (median(sw), median(base));
        println!(
            "{hosts:>7} learned: switch path {s:.1} ns/packet, baseline {b:.1} ns/packet, EtherSwitch {:.1} ns/packet ({:.1} Mpps)",
            s - b,
            1e3 / (s - b)
        );
        assert_eq!(read(&mut r, "sw.drops"), "0");
        assert_eq!(read(&mut r, "sw.flooded"), hosts.to_string());
    }
}
