//! Element profiles for a chain: `C(i)` from timed runs of each element alone, `S(i)` and
//! `N(i)` from what the element reports.
//!
//! - `C(i)`: the source, the element and a Discard (`SRC -> ELEMENT -> Discard`, one
//!   thread), minus the source and the Discard alone; cycles per packet sent, from the
//!   `tasks` handler (wall time × `B` without a cycle counter); the fastest of three runs
//!   after a warm-up run, each of about 50 ms (other work on the machine only slows a run). SyntheticLoad runs with a 4 KB array, so that its
//!   reads hit L1: the model adds the misses. The source is the chain's own InfiniteSource
//!   (its packets, LIMIT replaced) when it is one, 64-byte generated packets in the source's
//!   batches otherwise (its BURST; FromDump's default is 1). The
//!   source and the sink share the baseline, half each; a FromDump's own cost is then timed
//!   by reading its file into a Discard for up to 0.2 s (other sources, such as devices,
//!   cannot be read twice).
//! - `S(i)`, `N(i)`: the element's `footprint_bytes` and `accesses_per_packet` handlers
//!   (SyntheticLoad, the route tables); others have none.
//!   Each thread that runs an element has its own copy of its data (SyntheticLoad is
//!   replicated per thread, and a cloned configuration has one copy of the chain per thread).

use sluice_core::handlers;

use crate::chain::{self, Chain};
use crate::counters::{self, CacheCounts};
use crate::model;
use crate::run;

/// SyntheticLoad's array size while its `C(i)` is measured.
pub const CALIBRATION_ARRAY: &str = "4K";

/// Seconds one calibration run aims at.
const RUN_SECONDS: f64 = 0.05;

/// Where an element sits in the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The element without inputs.
    Source,
    /// One of the elements between.
    Element,
    /// The element without outputs.
    Sink,
}

/// What the planner knows about one element of the chain.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementProfile {
    /// Element name in the configuration.
    pub name: String,
    /// Element class.
    pub class: String,
    /// Configuration string.
    pub config: String,
    /// Position in the chain.
    pub role: Role,
    /// `C(i)`, cycles per packet alone without misses.
    pub cycles: f64,
    /// `S(i)`, bytes of data structure.
    pub bytes: u64,
    /// `N(i)`, accesses to it per packet.
    pub accesses: f64,
    /// Where `S` and `N` came from.
    pub footprint_from: String,
    /// Last-level cache references and misses per packet of the element alone, beyond the
    /// source's and the sink's, where hardware counters counted them.
    pub llc: Option<CacheCounts>,
}

impl ElementProfile {
    /// The model's view of the element.
    pub fn model(&self) -> model::Element {
        model::Element {
            name: self.name.clone(),
            cycles: self.cycles,
            bytes: self.bytes as f64,
            accesses: self.accesses,
            per_thread: true,
        }
    }
}

/// The calibration runs' common facts, for the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// The source configuration the runs used (`InfiniteSource(...)`).
    pub source: String,
    /// Cycles per packet of the source and the Discard alone.
    pub baseline: f64,
    /// Notes for the user.
    pub notes: Vec<String>,
}

/// The source every calibration run uses, without its LIMIT: the chain's InfiniteSource
/// (LIMIT, STOP and END_CALL taken out, ACTIVE true), else 64-byte generated packets.
pub fn calibration_source(c: &Chain, notes: &mut Vec<String>) -> String {
    if c.source.class == "InfiniteSource" {
        let mut cfg = chain::set_arg(&c.source.config, Some(3), "ACTIVE", "true");
        for k in ["STOP", "END_CALL", "LIMIT"] {
            cfg = chain::drop_arg(&cfg, k);
        }
        // A positional LIMIT stays in place; `limited` replaces it.
        return cfg;
    }
    let burst = source_burst(c);
    notes.push(format!(
        "source {} ({}) replaced by InfiniteSource(LENGTH 64, BURST {}) for calibration: its own \
         cost is not measured",
        c.source.name, c.source.class, burst
    ));
    format!("LENGTH 64, BURST {}, TIMESTAMP false", burst)
}

/// Packets per batch from the chain's source: its BURST, else its class's default
/// (InfiniteSource's and FromDump's is 1, as Click's; 32 for the others). Batches this small
/// make every element, queue and crossing work per packet, so calibration keeps them.
pub fn source_burst(c: &Chain) -> u32 {
    let pos = (c.source.class == "InfiniteSource").then_some(2);
    chain::get_arg(&c.source.config, pos, "BURST")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(match c.source.class.as_str() {
            "InfiniteSource" | "FromDump" => 1,
            _ => 32,
        })
}

/// The source configuration with a LIMIT of `n` packets.
fn limited(src: &str, n: u64) -> String {
    chain::set_arg(src, Some(1), "LIMIT", &n.to_string())
}

/// The configuration an element is calibrated with: SyntheticLoad with a small array.
pub fn calibration_config(class: &str, config: &str) -> String {
    if class == "SyntheticLoad" {
        chain::set_arg(config, Some(1), "S", CALIBRATION_ARRAY)
    } else {
        config.to_string()
    }
}

/// Last-level cache references and misses per packet, or why they were not counted.
type Counted = Result<CacheCounts, String>;

/// Cycles per packet sent of `src -> middle -> d :: Discard`: the fastest of three runs
/// after a pilot run that sizes them to about [`RUN_SECONDS`]; and, where hardware counters
/// count them, its last-level references and misses per packet (the fewest of the three).
fn per_packet(src: &str, middle: &str, hz: f64) -> Result<(f64, Counted), String> {
    let text = |n: u64| {
        format!(
            "src :: InfiniteSource({}) -> {}d :: Discard;",
            limited(src, n),
            middle
        )
    };
    let once = |n: u64| -> Result<(f64, Counted), String> {
        let (secs, mut r, llc) = run::run_counted(&text(n), 1)?;
        let sent = run::number(&mut r, "src.count");
        if sent <= 0.0 {
            return Err("the source sent no packets".into());
        }
        let c = run::task_cycles(&r, &[]);
        let counted = llc.map(|(refs, misses)| CacheCounts {
            references: refs as f64 / sent,
            misses: misses as f64 / sent,
        });
        Ok((if c > 0.0 { c } else { secs * hz } / sent, counted))
    };
    let pilot = once(20_000)?.0;
    let n = ((RUN_SECONDS * hz / pilot.max(1.0)) as u64).clamp(20_000, 500_000);
    let runs = (0..3)
        .map(|_| once(n))
        .collect::<Result<Vec<(f64, Counted)>, String>>()?;
    let cycles: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let counted = runs
        .into_iter()
        .map(|r| r.1)
        .reduce(|a, b| {
            let (a, b) = (a?, b?);
            Ok(CacheCounts {
                references: a.references.min(b.references),
                misses: a.misses.min(b.misses),
            })
        })
        .unwrap_or_else(|| Err("no run".into()));
    Ok((run::fastest(&cycles), counted))
}

/// `S` and `N` of each element between source and sink, read from a router built with
/// their configurations (`Idle -> E1 -> ... -> EK -> Discard`, configured, not run).
fn footprints(c: &Chain) -> Result<Vec<(u64, f64, String)>, String> {
    if c.elements.is_empty() {
        return Ok(Vec::new());
    }
    let mut text = String::from("Idle");
    for (i, e) in c.elements.iter().enumerate() {
        text.push_str(&format!(" -> e{} :: {}({})", i, e.class, e.config));
    }
    text.push_str(" -> Discard;");
    let flat = run::parse(&text, "<plan>", &[])?;
    let mut r = sluice_core::Router::new(
        flat,
        &run::library(),
        sluice_core::RouterOptions {
            check_only: true,
            ..Default::default()
        },
    )
    .map_err(|e| e.join("\n"))?;
    Ok(c.elements
        .iter()
        .enumerate()
        .map(|(i, _)| footprint(&mut r, &format!("e{}", i)))
        .collect())
}

/// `S` and `N` of element `name` of router `r`, and where they came from: its
/// `footprint_bytes` and `accesses_per_packet` handlers; `(0, 0, "none reported")` without
/// them.
pub fn footprint(r: &mut sluice_core::Router, name: &str) -> (u64, f64, String) {
    let idx = r.element_index(name);
    if !r
        .handler_list(idx)
        .iter()
        .any(|(n, _)| n == handlers::FOOTPRINT_BYTES)
    {
        return (0, 0.0, "none reported".to_string());
    }
    (
        run::number(r, &format!("{}.{}", name, handlers::FOOTPRINT_BYTES)) as u64,
        run::number(r, &format!("{}.{}", name, handlers::ACCESSES_PER_PACKET)),
        "footprint_bytes, accesses_per_packet handlers".to_string(),
    )
}

/// Cycles per packet of the chain's FromDump and a Discard: the file read for at most
/// [`FILE_SECONDS`] on one thread (its END_CALL left out; STOP true).
fn file_source_cycles(c: &Chain, hz: f64) -> Result<f64, String> {
    let cfg = chain::set_arg(
        &chain::drop_arg(&c.source.config, "END_CALL"),
        None,
        "STOP",
        "true",
    );
    let text = format!(
        "src :: FromDump({}) -> Discard; Script(wait {}s, stop);",
        cfg, FILE_SECONDS
    );
    let (secs, mut r) = run::run(&text, 1)?;
    let sent = run::number(&mut r, "src.count");
    if sent <= 0.0 {
        return Err("the file gave no packets".into());
    }
    let cyc = run::task_cycles(&r, &[]);
    Ok(if cyc > 0.0 { cyc } else { secs * hz } / sent)
}

/// For the elements that report no footprint but whose counters show last-level references
/// alone: `S` and `N` from the counts ([`counters::footprint`]) on the machine's last two
/// cache levels, and `C` without what the model charges for those accesses alone (it adds
/// them back, with the other elements' footprints, wherever it places the element).
pub fn apply_counters(elements: &mut [ElementProfile], levels: &[model::Level]) {
    let mut by_size: Vec<&model::Level> = levels.iter().collect();
    by_size.sort_by(|a, b| a.bytes.total_cmp(&b.bytes));
    let [.., private, last] = by_size.as_slice() else {
        return;
    };
    for e in elements.iter_mut().filter(|e| e.bytes == 0) {
        let Some(c) = e.llc else { continue };
        let Some((bytes, accesses)) = counters::footprint(&c, private.bytes, last.bytes) else {
            continue;
        };
        let alone: f64 = levels
            .iter()
            .map(|l| accesses * model::miss_probability(l.bytes, bytes) * l.penalty)
            .sum();
        e.bytes = bytes as u64;
        e.accesses = accesses;
        e.cycles = (e.cycles - alone).max(0.0);
        e.footprint_from = format!(
            "hardware counters: {:.2} {} references, {:.2} misses per packet alone",
            c.references, last.name, c.misses
        );
    }
}

/// Seconds a file source is read for when it is timed.
const FILE_SECONDS: f64 = 0.2;

/// The flow split a rewrite puts after a source that cannot be copied: the IPv4 source and
/// destination addresses of an Ethernet frame hashed to one ThreadSafeQueue per thread.
pub const SPLIT: &str = "HashSwitch(26, 8)";

/// Cycles per packet of the flow split on the source's thread: `SRC -> HashSwitch ->
/// ThreadSafeQueue -> Unqueue -> Discard` on one thread, minus `baseline` (the source and
/// the Discard).
pub fn split_cycles(c: &Chain, baseline: f64, hz: f64) -> Result<f64, String> {
    let mut notes = Vec::new();
    let src = calibration_source(c, &mut notes);
    let middle = format!(
        "hs :: {} -> q :: ThreadSafeQueue(4096) -> u :: Unqueue(BURST 32) -> ",
        SPLIT
    );
    Ok((per_packet(&src, &middle, hz)?.0 - baseline).max(0.0))
}

/// Profiles every element of `c`; `hz` converts wall time to cycles where there is no
/// cycle counter.
pub fn profile_chain(c: &Chain, hz: f64) -> Result<(Vec<ElementProfile>, Calibration), String> {
    let mut notes = Vec::new();
    let src = calibration_source(c, &mut notes);
    if c.sink.class != "Discard" {
        notes.push(format!(
            "sink {} ({}) calibrated as a Discard",
            c.sink.name, c.sink.class
        ));
    }
    let fps = footprints(c).map_err(|e| format!("reading element footprints: {}", e))?;
    let (baseline, base_llc) =
        per_packet(&src, "", hz).map_err(|e| format!("calibrating the source: {}", e))?;
    if let Err(why) = &base_llc {
        notes.push(format!(
            "no hardware counters ({}): S and N come only from what elements report",
            why
        ));
    }
    let mut out = Vec::new();
    let end = |e: &sluice_lang::FlatElement, role| ElementProfile {
        name: e.name.clone(),
        class: e.class.clone(),
        config: e.config.clone(),
        role,
        cycles: baseline / 2.0,
        bytes: 0,
        accesses: 0.0,
        footprint_from: "none (source and sink share the baseline)".into(),
        llc: None,
    };
    let mut source = end(&c.source, Role::Source);
    if c.source.class == "FromDump" {
        // A file can be read again: its real cost replaces the stand-in's.
        let own = file_source_cycles(c, hz)
            .map_err(|e| format!("calibrating source {}: {}", c.source.name, e))?;
        source.cycles = (own - baseline / 2.0).max(0.0);
        source.footprint_from = "none (timed reading its file for up to 0.2 s)".into();
    }
    out.push(source);
    for (e, (bytes, accesses, from)) in c.elements.iter().zip(fps) {
        let middle = format!(
            "e :: {}({}) -> ",
            e.class,
            calibration_config(&e.class, &e.config)
        );
        let (cyc, llc) = per_packet(&src, &middle, hz).map_err(|err| {
            format!(
                "cannot run {} ({}) alone to calibrate it: {}",
                e.name, e.class, err
            )
        })?;
        out.push(ElementProfile {
            name: e.name.clone(),
            class: e.class.clone(),
            config: e.config.clone(),
            role: Role::Element,
            cycles: (cyc - baseline).max(0.0),
            bytes,
            accesses,
            footprint_from: from,
            llc: match (&llc, &base_llc) {
                (Ok(e), Ok(b)) => Some(e.beyond(b)),
                _ => None,
            },
        });
    }
    out.push(end(&c.sink, Role::Sink));
    Ok((
        out,
        Calibration {
            source: format!("InfiniteSource({})", src),
            baseline,
            notes,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(text: &str) -> Chain {
        chain::extract(&sluice_lang::parse_config(text, "<t>", &[]).unwrap()).unwrap()
    }

    #[test]
    fn calibration_configurations() {
        assert_eq!(
            calibration_config("SyntheticLoad", "200, 64M, SEED 3"),
            "200, 4K, SEED 3"
        );
        assert_eq!(calibration_config("Counter", ""), "");
        let mut notes = Vec::new();
        let c = chain("s :: InfiniteSource(LENGTH 64, LIMIT 5, STOP true, BURST 32) -> Discard;");
        let src = calibration_source(&c, &mut notes);
        assert_eq!(src, "LENGTH 64, BURST 32, ACTIVE true");
        assert_eq!(
            limited(&src, 9),
            "LENGTH 64, BURST 32, ACTIVE true, LIMIT 9"
        );
        assert!(notes.is_empty());
        let c = chain("s :: TimedSource(1) -> Discard;");
        let src = calibration_source(&c, &mut notes);
        assert!(src.contains("LENGTH 64, BURST 32"));
        assert_eq!(notes.len(), 1);
        let c = chain("s :: FromDump(f.pcap) -> Discard;");
        assert!(calibration_source(&c, &mut notes).contains("BURST 1,"));
        let c = chain("s :: FromDump(f.pcap, BURST 8) -> Discard;");
        assert!(calibration_source(&c, &mut notes).contains("BURST 8,"));
    }

    #[test]
    fn profiles_a_synthetic_chain() {
        let c = chain(
            "src :: InfiniteSource(LENGTH 64, LIMIT 1000, BURST 32, TIMESTAMP false) \
             -> a :: SyntheticLoad(200, 1M, SEED 1) -> b :: SyntheticLoad(20, 64K, CYCLES 100) \
             -> n :: Null -> rt :: RadixIPLookup(0.0.0.0/0 0) -> d :: Discard;",
        );
        let (p, cal) = profile_chain(&c, 1e9).unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(p[0].role, Role::Source);
        assert_eq!(p[5].role, Role::Sink);
        assert_eq!((p[1].bytes, p[1].accesses), (1 << 20, 200.0));
        assert_eq!((p[2].bytes, p[2].accesses), (64 << 10, 20.0));
        assert_eq!((p[3].bytes, p[3].accesses), (0, 0.0));
        // A route table reports its structure: the trie's 65,536 root slots, one read.
        assert!(p[4].bytes >= 65536 * 8, "{:?}", p[4]);
        assert_eq!(p[4].accesses, 1.0);
        assert!(cal.baseline > 0.0);
        assert!((p[0].cycles - cal.baseline / 2.0).abs() < 1e-9);
        // 200 reads cost more than 20 reads and a few cycles; Null costs little.
        assert!(p[1].cycles > p[3].cycles, "{:?}", p);
        assert!(p[1].cycles > 0.0);
        assert!(p[1].model().per_thread);
    }

    #[test]
    fn counters_give_a_footprint_to_elements_that_report_none() {
        let level = |name: &str, bytes: f64, penalty: f64| model::Level {
            name: name.into(),
            bytes,
            penalty,
            instance: Vec::new(),
        };
        let levels = [
            level("L1d", 32e3, 1.0),
            level("L3", 16e6, 100.0),
            level("L2", 1e6, 10.0),
        ];
        let elem = |bytes: u64, llc: Option<CacheCounts>| ElementProfile {
            name: "e".into(),
            class: "X".into(),
            config: String::new(),
            role: Role::Element,
            cycles: 1000.0,
            bytes,
            accesses: if bytes > 0 { 1.0 } else { 0.0 },
            footprint_from: "none reported".into(),
            llc,
        };
        // 64 MB read ten times a packet: the counts alone give it back.
        let pi = |cap: f64| model::miss_probability(cap, 64e6);
        let counts = CacheCounts {
            references: 10.0 * pi(1e6),
            misses: 10.0 * pi(16e6),
        };
        let mut e = [
            elem(0, Some(counts)),
            elem(0, None),
            elem(4096, Some(counts)),
            elem(0, Some(CacheCounts::default())),
        ];
        apply_counters(&mut e, &levels);
        assert!((e[0].bytes as f64 - 64e6).abs() < 2.0, "{:?}", e[0]);
        assert!((e[0].accesses - 10.0).abs() < 1e-6);
        // What the model charges alone comes off C: 10 accesses at every level's rate.
        let alone = 10.0 * (pi(32e3) * 1.0 + pi(1e6) * 10.0 + pi(16e6) * 100.0);
        assert!((e[0].cycles - (1000.0 - alone)).abs() < 1e-6, "{:?}", e[0]);
        assert!(e[0].footprint_from.contains("L3 references"));
        // No counts, a footprint of its own, or nothing beyond the private caches: unchanged.
        for x in &e[1..] {
            assert_eq!(x.cycles, 1000.0);
            assert_eq!(x.footprint_from, "none reported");
        }
        assert_eq!(e[2].bytes, 4096);
    }

    #[test]
    fn a_rewriter_is_calibrated_though_its_reap_timer_never_ends() {
        let c = chain(
            "s :: InfiniteSource(LENGTH 20, LIMIT 100, BURST 32) \
             -> UDPIPEncap(198.18.1.2, 5000, 198.18.2.2, 80) \
             -> rw :: IPRewriter(pattern 198.18.0.1 1024-65535 - - 0 0) -> d :: Discard;",
        );
        let (p, _) = profile_chain(&c, 1e9).unwrap();
        assert_eq!(p[2].class, "IPRewriter");
        assert_eq!(p[2].accesses, 2.0);
    }

    #[test]
    fn an_element_that_cannot_run_alone_is_an_error() {
        let c = chain("s :: InfiniteSource -> x :: SyntheticLoad(4, 0) -> Discard;");
        let e = profile_chain(&c, 1e9).unwrap_err();
        assert!(e.contains("footprints"), "{}", e);
    }
}
