//! The chosen placement as a configuration: one copy of each stage per thread of its
//! groups, ThreadSafeQueue -> Unqueue between stages, a StaticThreadSched line pinning every
//! task.
//!
//! - The first stage starts with a copy of the source per thread; an InfiniteSource's LIMIT
//!   is divided among the copies (the first ones take the remainder). Any other source is
//!   refused on more than one thread: each copy would send every packet. With several copies
//!   and STOP true, each copy stops and `DriverManager(wait_stop K, stop)` ends the run.
//! - A later stage's copy starts with `ThreadSafeQueue(CAP) -> Unqueue(BURST 32)`; a stage
//!   with several threads after it sends to one queue per thread through a RoundRobinSwitch
//!   (an InfiniteSource's synthetic packets) or a HashSwitch over the IPv4 addresses (real
//!   traffic: each flow stays on one thread, in order).
//! - A sink other than a Discard is not copied: copies of the last stage push into one
//!   ThreadSafeQueue, drained by an Unqueue into the sink on that stage's first thread.
//! - A flow split ([`Options::split`]) puts the source alone on the first thread of the
//!   first stage's groups, hashing flows to copies of the rest on every thread.
//! - Elements keep their names when they have one copy; copies are named `NAME_tT` for
//!   thread `T`. Anonymous elements (`Class@3`) are named after their class and position.

use crate::candidates::Stage;
use crate::chain::{self, Chain};
use crate::machine::GroupInfo;

/// Settings of the generated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Capacity of each ThreadSafeQueue.
    pub queue_capacity: usize,
    /// BURST of each Unqueue.
    pub burst: usize,
    /// A flow split: the first stage is the source alone, on the first thread of its groups.
    pub split: bool,
    /// An element (`Class(args)`) put in front of every copy of a Discard sink, named after
    /// the copy with `_rate` appended: a trial's AverageCounter.
    pub meter: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            queue_capacity: 4096,
            burst: 32,
            split: false,
            meter: None,
        }
    }
}

/// `name :: Class(config)`, or `name :: Class` without a configuration.
fn decl(name: &str, class: &str, config: &str) -> String {
    if config.trim().is_empty() {
        format!("{} :: {}", name, class)
    } else {
        format!("{} :: {}({})", name, class, config)
    }
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == '-')
}

/// Writes the configuration that runs `chain` placed as `stages` on `groups`.
pub fn rewrite(
    chain: &Chain,
    stages: &[Stage],
    groups: &[GroupInfo],
    opts: &Options,
) -> Result<String, String> {
    let els = chain.all();
    let n = els.len();
    if stages.is_empty()
        || stages[0].first != 0
        || stages.last().map(|s| s.last) != Some(n - 1)
        || stages.windows(2).any(|w| w[0].last + 1 != w[1].first)
    {
        return Err("the stages do not cover the chain in order".into());
    }
    // Threads of each stage.
    let mut threads: Vec<Vec<usize>> = Vec::new();
    for s in stages {
        let mut t: Vec<usize> = Vec::new();
        for &g in &s.groups {
            let g = groups
                .get(g)
                .ok_or_else(|| format!("group g{} does not exist", g))?;
            t.extend(&g.threads);
        }
        t.sort_unstable();
        t.dedup();
        if t.is_empty() {
            return Err("a stage has no thread".into());
        }
        if opts.split && threads.is_empty() {
            t.truncate(1);
        }
        threads.push(t);
    }
    // Copies of a synthetic source's packets may go anywhere; real traffic keeps each flow
    // on one thread, in order.
    let spread = if chain.source.class == "InfiniteSource" {
        "RoundRobinSwitch"
    } else {
        crate::profile::SPLIT
    };
    // Base names.
    let mut names: Vec<String> = Vec::new();
    for (i, e) in els.iter().enumerate() {
        let mut nm = if is_identifier(&e.name) {
            e.name.clone()
        } else {
            format!("{}{}", e.class.to_lowercase(), i)
        };
        while names.contains(&nm) {
            nm.push('_');
        }
        names.push(nm);
    }
    let name = |i: usize, s: usize, t: usize| -> String {
        if threads[s].len() == 1 {
            names[i].clone()
        } else {
            format!("{}_t{}", names[i], t)
        }
    };
    let suffix = |s: usize, t: usize| -> String {
        if threads[s].len() == 1 {
            format!("{}", s)
        } else {
            format!("{}_t{}", s, t)
        }
    };
    let src = &chain.source;
    let copies = threads[0].len();
    let limit: Option<i64> =
        chain::get_arg(&src.config, Some(1), "LIMIT").and_then(|v| v.trim().parse().ok());
    let stop = chain::get_arg(&src.config, None, "STOP").is_some_and(|v| v.trim() == "true");
    if src.class != "InfiniteSource" && copies > 1 {
        // Copies of a device, a file or a timed source would each send every packet.
        return Err(format!(
            "cloning source {} ({}) over {} threads would send each of its packets {} times",
            src.name, src.class, copies, copies
        ));
    }
    let mut out = String::new();
    out.push_str(&format!(
        "// sluice plan: {} stage(s) on {} thread(s)\n",
        stages.len(),
        threads
            .iter()
            .flatten()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
    ));
    if src.class == "InfiniteSource" && limit.is_some_and(|l| l >= 0) && copies > 1 {
        out.push_str(&format!(
            "// the source's LIMIT {} is divided among its {} copies\n",
            limit.unwrap_or(0),
            copies
        ));
    }
    let mut sched: Vec<String> = Vec::new();
    // A sink other than a Discard (a file, a device) is not copied: the last stage's copies
    // meet at one queue that the sink's Unqueue drains on the stage's first thread.
    let last = threads.last().cloned().unwrap_or_default();
    let merge = last.len() > 1 && chain.sink.class != "Discard";
    if merge {
        let sink = &chain.sink;
        out.push_str(&format!(
            "qsink :: ThreadSafeQueue({}) -> usink :: Unqueue(BURST {})\n    -> {};\n",
            opts.queue_capacity,
            opts.burst,
            decl(&names[n - 1], &sink.class, &sink.config)
        ));
        sched.push(format!("usink {}", last[0]));
    }
    for (s, st) in stages.iter().enumerate() {
        for (k, &t) in threads[s].iter().enumerate() {
            let mut line = String::new();
            let mut first = st.first;
            if s == 0 {
                let mut cfg = src.config.clone();
                if src.class == "InfiniteSource" && copies > 1 {
                    if let Some(l) = limit.filter(|&l| l >= 0) {
                        let share = l / copies as i64 + i64::from((k as i64) < l % copies as i64);
                        cfg = chain::set_arg(&cfg, Some(1), "LIMIT", &share.to_string());
                    }
                }
                let nm = name(0, 0, t);
                line.push_str(&decl(&nm, &src.class, &cfg));
                sched.push(format!("{} {}", nm, t));
                first = 1;
            } else {
                let u = format!("u{}", suffix(s, t));
                line.push_str(&format!(
                    "q{} :: ThreadSafeQueue({}) -> {} :: Unqueue(BURST {})",
                    suffix(s, t),
                    opts.queue_capacity,
                    u,
                    opts.burst
                ));
                sched.push(format!("{} {}", u, t));
            }
            for (i, e) in els.iter().enumerate().take(st.last + 1).skip(first) {
                if i == n - 1 && merge {
                    line.push_str("\n    -> qsink");
                    continue;
                }
                if let Some(m) = opts
                    .meter
                    .as_ref()
                    .filter(|_| i == n - 1 && e.class == "Discard")
                {
                    line.push_str(&format!("\n    -> {}_rate :: {}", name(i, s, t), m));
                }
                line.push_str(&format!(
                    "\n    -> {}",
                    decl(&name(i, s, t), &e.class, &e.config)
                ));
            }
            if s + 1 < stages.len() {
                let next = &threads[s + 1];
                if next.len() == 1 {
                    line.push_str(&format!("\n    -> q{}", suffix(s + 1, next[0])));
                } else {
                    let rr = format!("rr{}", suffix(s, t));
                    line.push_str(&format!("\n    -> {} :: {};\n", rr, spread));
                    for (o, &t2) in next.iter().enumerate() {
                        line.push_str(&format!("{}[{}] -> q{}", rr, o, suffix(s + 1, t2)));
                        if o + 1 < next.len() {
                            line.push_str(";\n");
                        }
                    }
                }
            }
            line.push_str(";\n");
            out.push_str(&line);
        }
    }
    out.push_str(&format!("StaticThreadSched({});\n", sched.join(", ")));
    if stop && copies > 1 {
        out.push_str(&format!("DriverManager(wait_stop {}, stop);\n", copies));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run;

    const TEXT: &str = "src :: InfiniteSource(LENGTH 64, LIMIT 20001, BURST 32, TIMESTAMP false) \
        -> a :: SyntheticLoad(8, 64K) -> c :: Counter -> SyntheticLoad(8, 64K, SEED 2) -> d :: Discard;";

    fn chain(text: &str) -> Chain {
        chain::extract(&run::parse(text, "<t>", &[]).unwrap()).unwrap()
    }

    fn groups(k: usize) -> Vec<GroupInfo> {
        (0..k)
            .map(|t| GroupInfo {
                threads: vec![t],
                cpus: vec![t],
            })
            .collect()
    }

    fn st(first: usize, last: usize, groups: &[usize]) -> Stage {
        Stage {
            first,
            last,
            groups: groups.to_vec(),
        }
    }

    /// Runs `text` on `threads` threads: (packets the Discards got, packets queues dropped).
    fn forwarded(text: &str, threads: usize) -> (f64, f64) {
        let (_, mut r) = run::run(text, threads).unwrap_or_else(|e| panic!("{}\n{}", e, text));
        let (mut got, mut lost) = (0.0, 0.0);
        for e in 0..r.nelements() {
            let class = r.read_handler(Some(e), "class").unwrap_or_default();
            let nm = r.element_name(e).to_string();
            let path = |h: &str| format!("{}.{}", nm, h);
            match class.trim() {
                "Discard" => got += run::number(&mut r, &path("count")),
                "ThreadSafeQueue" => lost += run::number(&mut r, &path("drops")),
                _ => {}
            }
        }
        (got, lost)
    }

    fn big_queues() -> Options {
        Options {
            queue_capacity: 32768,
            burst: 32,
            split: false,
            meter: None,
        }
    }

    #[test]
    fn flow_split_hashes_flows_and_merges_a_file_sink() {
        let c = chain(
            "src :: FromDump(in.pcap, STOP true) -> a :: SyntheticLoad(8, 64K) \
             -> out :: ToDump(out.pcap);",
        );
        let opts = Options {
            split: true,
            ..Options::default()
        };
        let t = rewrite(&c, &[st(0, 0, &[0]), st(1, 2, &[0, 1])], &groups(2), &opts).unwrap();
        assert!(
            t.contains("src :: FromDump(in.pcap, STOP true)\n    -> rr0 :: HashSwitch(26, 8);"),
            "{}",
            t
        );
        assert!(t.contains("rr0[0] -> q1_t0;\nrr0[1] -> q1_t1;"), "{}", t);
        assert_eq!(t.matches("ToDump").count(), 1, "{}", t);
        assert!(t.contains("qsink :: ThreadSafeQueue(4096) -> usink :: Unqueue(BURST 32)\n    -> out :: ToDump(out.pcap);"), "{}", t);
        assert!(
            t.contains("-> a_t1 :: SyntheticLoad(8, 64K)\n    -> qsink;"),
            "{}",
            t
        );
        assert!(
            t.contains("StaticThreadSched(usink 0, src 0, u1_t0 0, u1_t1 1);"),
            "{}",
            t
        );
        assert!(
            t.starts_with("// sluice plan: 2 stage(s) on 2 thread(s)"),
            "{}",
            t
        );
        run::parse(&t, "t", &[]).unwrap();
    }

    #[test]
    fn original_forwards_everything() {
        assert_eq!(forwarded(TEXT, 1), (20001.0, 0.0));
    }

    #[test]
    fn pipelined_rewrite_forwards_the_same_packets() {
        let c = chain(TEXT);
        let t = rewrite(
            &c,
            &[st(0, 1, &[0]), st(2, 4, &[1])],
            &groups(2),
            &big_queues(),
        )
        .unwrap();
        assert!(
            t.contains("q1 :: ThreadSafeQueue(32768) -> u1 :: Unqueue(BURST 32)"),
            "{}",
            t
        );
        assert!(t.contains("StaticThreadSched(src 0, u1 1);"), "{}", t);
        assert!(
            t.contains("syntheticload3 :: SyntheticLoad(8, 64K, SEED 2)"),
            "{}",
            t
        );
        assert_eq!(forwarded(&t, 2), (20001.0, 0.0));
    }

    #[test]
    fn a_source_that_cannot_be_split_is_not_copied() {
        let c = chain(
            "src :: FromDump(in.pcap, STOP true) -> a :: SyntheticLoad(8, 64K) -> d :: Discard;",
        );
        let e = rewrite(&c, &[st(0, 2, &[0, 1])], &groups(2), &Options::default()).unwrap_err();
        assert!(e.contains("each of its packets 2 times"), "{}", e);
        // Pipelined, the source keeps one thread.
        let t = rewrite(
            &c,
            &[st(0, 0, &[0]), st(1, 2, &[1])],
            &groups(2),
            &Options::default(),
        )
        .unwrap();
        assert!(t.contains("src :: FromDump(in.pcap, STOP true)"), "{}", t);
    }

    #[test]
    fn cloned_rewrite_divides_the_limit() {
        let c = chain(TEXT);
        let t = rewrite(&c, &[st(0, 4, &[0, 1])], &groups(2), &Options::default()).unwrap();
        assert!(
            t.contains("src_t0 :: InfiniteSource(LENGTH 64, LIMIT 10001,"),
            "{}",
            t
        );
        assert!(
            t.contains("src_t1 :: InfiniteSource(LENGTH 64, LIMIT 10000,"),
            "{}",
            t
        );
        assert!(t.contains("-> c_t1 :: Counter\n"), "{}", t);
        assert!(
            t.contains("StaticThreadSched(src_t0 0, src_t1 1);"),
            "{}",
            t
        );
        assert!(!t.contains("ThreadSafeQueue"), "{}", t);
        assert_eq!(forwarded(&t, 2), (20001.0, 0.0));
    }

    #[test]
    fn mixed_rewrite_spreads_over_queues() {
        let text = TEXT.replace("TIMESTAMP false", "TIMESTAMP false, STOP true");
        let c = chain(&text);
        // Source and first load on threads 0 and 1, the rest on thread 2.
        let t = rewrite(
            &c,
            &[st(0, 1, &[0, 1]), st(2, 4, &[2])],
            &groups(3),
            &big_queues(),
        )
        .unwrap();
        assert!(t.contains("DriverManager(wait_stop 2, stop);"), "{}", t);
        assert_eq!(forwarded(&t, 3), (20001.0, 0.0));
        // The other way round: one producer, two consumers behind a RoundRobinSwitch.
        let t = rewrite(
            &c,
            &[st(0, 1, &[0]), st(2, 4, &[1, 2])],
            &groups(3),
            &big_queues(),
        )
        .unwrap();
        assert!(t.contains("rr0 :: RoundRobinSwitch"), "{}", t);
        assert!(t.contains("q1_t2 :: ThreadSafeQueue"), "{}", t);
        assert_eq!(forwarded(&t, 3), (20001.0, 0.0));
    }

    #[test]
    fn rejects_stages_that_do_not_cover_the_chain() {
        let c = chain(TEXT);
        assert!(rewrite(&c, &[st(0, 2, &[0])], &groups(1), &Options::default()).is_err());
        assert!(rewrite(&c, &[st(0, 4, &[5])], &groups(1), &Options::default()).is_err());
    }
}
