//! Runs the fuzz targets' bodies over the seed corpus in `fuzz/corpus/` and over a
//! deterministic stream of mutations of it, so CI exercises the parsers without a fuzzer.

use std::fs;
use std::path::PathBuf;

use sluice_wire::fuzzing;

fn corpus(name: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(name);
    let mut v: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            (n, fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    assert!(v.len() >= 5, "corpus {name} has too few seeds");
    v
}

/// xorshift64* PRNG.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const INTERESTING: [u8; 12] = [0, 1, 2, 4, 5, 7, 0x0f, 0x45, 0x60, 0x7f, 0x80, 0xff];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut d = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(7) {
            0 if !d.is_empty() => {
                let i = rng.below(d.len());
                d[i] ^= 1 << rng.below(8);
            }
            1 if !d.is_empty() => {
                let i = rng.below(d.len());
                d[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => {
                let n = rng.below(d.len() + 1);
                d.truncate(n);
            }
            3 => {
                let at = rng.below(d.len() + 1);
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                d.splice(at..at, bytes);
            }
            4 if d.len() >= 4 => {
                // Overwrite a 32-bit word with an extreme value (length fields).
                let i = rng.below(d.len() - 3);
                let v: u32 = [0, 1, 0xffff, 0x7fff_ffff, 0xffff_ffff][rng.below(5)];
                d[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            5 if d.len() >= 2 => {
                let i = rng.below(d.len() - 1);
                let v: u16 = [0, 8, 20, 40, 0xffff][rng.below(5)];
                d[i..i + 2].copy_from_slice(&v.to_be_bytes());
            }
            _ => {
                let n = rng.below(8);
                for _ in 0..n {
                    d.push(rng.next() as u8);
                }
            }
        }
    }
    d
}

fn run(name: &str, target: fn(&[u8]), iterations: usize, seed: u64) {
    let seeds = corpus(name);
    for (n, s) in &seeds {
        let r = std::panic::catch_unwind(|| target(s));
        assert!(r.is_ok(), "seed {name}/{n} panicked");
    }
    let mut rng = Rng(seed);
    for i in 0..iterations {
        let (n, s) = &seeds[rng.below(seeds.len())];
        let input = mutate(&mut rng, s);
        let r = std::panic::catch_unwind(|| target(&input));
        assert!(
            r.is_ok(),
            "iteration {i} (from seed {n}) panicked on input {input:02x?}"
        );
    }
}

#[test]
fn wire_headers_corpus_and_mutations() {
    run("wire_headers", fuzzing::wire_headers, 5000, 0x5eed_0001);
}

#[test]
fn pcap_reader_corpus_and_mutations() {
    run("pcap_reader", fuzzing::pcap_reader, 5000, 0x5eed_0002);
}

#[test]
fn seeds_parse_as_intended() {
    use sluice_wire::pcap::{PcapError, PcapReader};
    use sluice_wire::{EthernetFrame, Ipv4Packet};

    let seeds: std::collections::HashMap<_, _> = corpus("pcap_reader").into_iter().collect();
    let count = |f: &[u8]| -> (usize, Option<String>) {
        let mut r = PcapReader::new(f).unwrap();
        let mut n = 0;
        loop {
            match r.next_record() {
                Ok(Some(_)) => n += 1,
                Ok(None) => return (n, None),
                Err(PcapError::Truncated) => return (n, Some("truncated".into())),
                Err(e) => return (n, Some(e.to_string())),
            }
        }
    };
    assert_eq!(count(&seeds["le_micro"]), (3, None));
    assert_eq!(count(&seeds["le_nano"]), (3, None));
    assert_eq!(count(&seeds["be_micro_raw"]), (1, None));
    assert_eq!(count(&seeds["be_nano_snapped"]), (1, None));
    assert_eq!(count(&seeds["file_header_only"]), (0, None));
    assert_eq!(
        count(&seeds["truncated_record"]).1.as_deref(),
        Some("truncated")
    );
    assert_eq!(
        count(&seeds["truncated_header"]).1.as_deref(),
        Some("truncated")
    );
    // A record longer than the snapshot length is read whole, as tcpdump and Click do.
    assert_eq!(count(&seeds["caplen_over_snaplen"]), (1, None));
    assert!(count(&seeds["huge_caplen"]).1.unwrap().contains("256 KiB"));
    assert!(PcapReader::new(&seeds["short_file_header"][..]).is_err());

    let w: std::collections::HashMap<_, _> = corpus("wire_headers").into_iter().collect();
    let ip = |k: &str| {
        let f = EthernetFrame::new_checked(&w[k][..]).unwrap();
        Ipv4Packet::new_checked(f.payload()).map(|p| p.verify_checksum())
    };
    assert_eq!(ip("eth_ipv4_udp"), Ok(true));
    assert_eq!(ip("eth_ipv4_options"), Ok(true));
    assert_eq!(ip("eth_ipv4_icmp_echo_padded"), Ok(true));
    assert!(ip("truncated_ipv4").is_err());
    let f = EthernetFrame::new_checked(&w["eth_ipv4_bad_option"][..]).unwrap();
    let p = Ipv4Packet::new_checked(f.payload()).unwrap();
    assert!(p.option_iter().any(|o| o.is_err()));
}
