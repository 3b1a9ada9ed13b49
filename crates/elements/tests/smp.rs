//! Multi-threaded behaviour: the SMP configurations of conf/smp, stress tests that count every
//! packet across threads, pool recycling across threads, handler reads while threads forward,
//! placement rules. Every test runs with two worker threads and needs no more than two cores;
//! none asserts on timing.

use std::collections::HashMap;

use sluice_core::{
    Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Packet, Router, Table,
};
use sluice_lang::args::Args;
use sluice_testkit::{conf_file, element_classes, num, read, task_threads, Kit, TempDir};

// ---------------------------------------------------------------------------------------------
// Test-only elements: a source that writes (source id, sequence number) into each packet, and
// a sink that checks that no packet is duplicated and that each source's packets arrive in
// order.

/// `SeqSource(ID, LIMIT)`: pushes LIMIT 64-byte packets carrying ID and 0, 1, 2, … .
#[derive(Default)]
struct SeqSource {
    id: u32,
    limit: u64,
    next: u64,
}

impl Element for SeqSource {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.id = args.read_mp("ID")?;
        self.limit = args.read_mp("LIMIT")?;
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        cx.add_task(1024, true);
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        let n = (self.limit - self.next).min(32);
        if n == 0 {
            return false;
        }
        let mut b = Batch::new();
        for _ in 0..n {
            let mut p = Packet::new(64);
            p.data_mut()[0..4].copy_from_slice(&self.id.to_le_bytes());
            p.data_mut()[4..12].copy_from_slice(&self.next.to_le_bytes());
            self.next += 1;
            let _ = b.push(p);
        }
        cx.push(0, b);
        cx.reschedule();
        true
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().read("count", |e| e.next).into()
    }
}

/// `SeqCheck`: counts packets, duplicates and per-source reorderings.
#[derive(Default)]
struct SeqCheck {
    last: HashMap<u32, u64>,
    count: u64,
    dups_or_reorders: u64,
    malformed: u64,
}

impl Element for SeqCheck {
    fn push(&mut self, _port: usize, batch: Batch, _cx: &mut Cx) {
        for p in batch {
            let d = p.data();
            if d.len() < 12 {
                self.malformed += 1;
                continue;
            }
            let id = u32::from_le_bytes([d[0], d[1], d[2], d[3]]);
            let seq = u64::from_le_bytes([d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11]]);
            self.count += 1;
            match self.last.insert(id, seq) {
                Some(prev) if prev >= seq => self.dups_or_reorders += 1,
                _ => {}
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .read("bad_order", |e| e.dups_or_reorders)
            .read("malformed", |e| e.malformed)
            .into()
    }
}

const SEQ_SOURCE: ElementClass = ElementClass {
    name: "SeqSource",
    ports: "0/1",
    processing: "h/h",
    flow: "",
    source: "//! SeqSource — test source numbering its packets\n",
    make: || Box::new(SeqSource::default()),
};

const SEQ_CHECK: ElementClass = ElementClass {
    name: "SeqCheck",
    ports: "1/0",
    processing: "h/h",
    flow: "",
    source: "//! SeqCheck — test sink checking sequence numbers\n",
    make: || Box::new(SeqCheck::default()),
};

/// The test elements.
const SEQ_CLASSES: &[ElementClass] = &[SEQ_SOURCE, SEQ_CHECK];

/// Two threads on the wall clock, with the test elements.
fn kit() -> Kit {
    Kit::new().threads(2).classes(SEQ_CLASSES)
}

// ---------------------------------------------------------------------------------------------

/// Sum of a numeric handler over the elements of one class whose names start with `prefix`.
fn sum_class(r: &mut Router, class: &str, prefix: &str, handler: &str) -> u64 {
    let mut total = 0;
    for (name, c) in element_classes(r) {
        if name.starts_with(prefix) && c == class {
            total += num(r, &format!("{}.{}", name, handler));
        }
    }
    total
}

// ---------------------------------------------------------------------------------------------
// The configurations of conf/smp.

#[test]
fn figure3_flow_splitting_runs_each_path_on_its_thread() {
    let mut r = kit()
        .defines(&[("LIMIT", "3000")])
        .router(&conf_file("smp/flow-split.click"));
    let th = task_threads(&mut r);
    assert_eq!(th["p0"], 0);
    assert_eq!(th["p1"], 1);
    assert_eq!(th["f1"], 0);
    r.run_until_idle();
    let (c0, c1) = (num(&mut r, "c0.count"), num(&mut r, "c1.count"));
    let drops = num(&mut r, "q0.drops") + num(&mut r, "q1.drops");
    assert_eq!(c0 + c1 + drops, 6 * 3000);
    assert!(c0 > 0 && c1 > 0, "both paths carry flows: {} {}", c0, c1);
    assert_eq!(num(&mut r, "w0.count"), c0);
    assert_eq!(num(&mut r, "w1.count"), c1);
}

#[test]
fn figure14_pipeline_splits_the_path_over_two_threads() {
    let mut r = kit()
        .defines(&[("LIMIT", "20000")])
        .router(&conf_file("smp/pipeline.click"));
    let th = task_threads(&mut r);
    assert_eq!((th["src"], th["uq"]), (0, 1));
    let p = r.placement().expect("placement with two threads").clone();
    let stage1 = r.element_index("stage1").unwrap();
    let stage2 = r.element_index("stage2").unwrap();
    let q = r.element_index("q").unwrap();
    assert_eq!(p.elem_threads[stage1], vec![0]);
    assert_eq!(p.elem_threads[stage2], vec![1]);
    assert_eq!(p.elem_threads[q], vec![0, 1]);
    r.run_until_idle();
    assert_eq!(num(&mut r, "s1.count"), 20000);
    assert_eq!(
        num(&mut r, "s2.count") + num(&mut r, "q.drops"),
        20000,
        "every packet crossed or was counted as a drop"
    );
    assert_eq!(num(&mut r, "q.length"), 0);
    assert_eq!(num(&mut r, "stage2.count"), num(&mut r, "s2.count"));
}

#[test]
fn figure16_replicated_qos_streams_count_every_packet() {
    let mut r = kit()
        .defines(&[("LIMIT", "2000")])
        .router(&conf_file("smp/qos-replicated.click"));
    let th = task_threads(&mut r);
    // s0/pp 1, s1/pp 2 -> 0, s2/pp 3 -> 1 with two threads.
    assert_eq!(th["s0/pp"], 1);
    assert_eq!(th["s1/pp"], 0);
    assert_eq!(th["s2/pp"], 1);
    r.run_until_idle();
    let mut delivered = 0;
    let mut drops = 0;
    for s in ["s0", "s1", "s2"] {
        let c = num(&mut r, &format!("{}/out.count", s));
        assert!(c > 0, "stream {} carries flows", s);
        delivered += c;
        for q in ["hi", "mid", "lo"] {
            drops += num(&mut r, &format!("{}/{}.drops", s, q));
            assert_eq!(num(&mut r, &format!("{}/{}.length", s, q)), 0);
        }
    }
    assert_eq!(delivered + drops, 6 * 2000);
}

#[test]
fn two_ip_router_copies_forward_on_their_own_threads() {
    let mut r = kit()
        .defines(&[("LIMIT", "5000")])
        .router(&conf_file("smp/fake-iprouter-x2.click"));
    let th = task_threads(&mut r);
    assert_eq!(th["r0/src"], 0);
    assert_eq!(th["r1/src"], 1);
    // Every task of a copy follows its source (they share its transmit queues).
    for (name, t) in &th {
        let want = if name.starts_with("r0/") { 0 } else { 1 };
        assert_eq!(*t, want, "{}", name);
    }
    r.run_until_idle();
    for copy in ["r0/", "r1/"] {
        assert_eq!(num(&mut r, &format!("{}src.count", copy)), 5000);
        let out = sum_class(&mut r, "Discard", copy, "count");
        let qdrops = sum_class(&mut r, "Queue", copy, "drops");
        assert_eq!(out + qdrops, 5000, "copy {}", copy);
    }
}

// ---------------------------------------------------------------------------------------------
// SyntheticLoad.

#[test]
fn synthetic_load_is_replicated_per_thread_and_counts_add_up() {
    let mut r = kit().router(
        "a :: InfiniteSource(LIMIT 7000, BURST 16) -> w :: SyntheticLoad(8, 64K, CYCLES 50);
         b :: InfiniteSource(LIMIT 5000, BURST 16) -> w;
         w -> c :: Counter -> Discard;
         StaticThreadSched(a 0, b 1);",
    );
    let w = r.element_index("w").unwrap();
    assert_eq!(r.placement().unwrap().elem_threads[w], vec![0, 1]);
    // Read before the run: afterwards the engine sums every numeric handler over the
    // replicas, settings included (an engine change is requested).
    assert_eq!(num(&mut r, "w.n"), 8);
    assert_eq!(num(&mut r, "w.s"), 65536);
    r.run_until_idle();
    assert_eq!(num(&mut r, "w.count"), 12000);
    assert_eq!(num(&mut r, "c.count"), 12000);
}

#[test]
fn synthetic_load_rejects_bad_sizes() {
    for (conf, want) in [
        (
            "Idle -> SyntheticLoad(1, 12Q) -> Discard",
            "S: expected size",
        ),
        ("Idle -> SyntheticLoad(1, 4) -> Discard", "out of range"),
        ("Idle -> SyntheticLoad(x, 4K) -> Discard", "N"),
    ] {
        let e = kit().build(conf).err().expect("configuration should fail");
        assert!(e.contains(want), "{}: {}", conf, e);
    }
}

// ---------------------------------------------------------------------------------------------
// Stress: no packet lost or duplicated across threads.

#[test]
fn many_producers_one_consumer_lose_and_duplicate_nothing() {
    // Four numbered sources, two per thread, push into one ThreadSafeQueue; one Unqueue on
    // thread 1 pulls into a checker. Each source's packets must come out in order, none twice,
    // and every packet is either delivered or counted as a queue drop.
    let mut r = kit().router(
        "s0 :: SeqSource(0, 60000) -> q :: ThreadSafeQueue(256);
         s1 :: SeqSource(1, 60000) -> q;
         s2 :: SeqSource(2, 60000) -> q;
         s3 :: SeqSource(3, 60000) -> q;
         q -> u :: Unqueue(BURST 64) -> chk :: SeqCheck;
         StaticThreadSched(s0 0, s1 1, s2 0, s3 1, u 1);",
    );
    r.run_until_idle();
    let got = num(&mut r, "chk.count");
    let drops = num(&mut r, "q.drops");
    assert_eq!(got + drops, 4 * 60000, "got {} drops {}", got, drops);
    assert_eq!(num(&mut r, "chk.bad_order"), 0);
    assert_eq!(num(&mut r, "chk.malformed"), 0);
    assert_eq!(num(&mut r, "q.length"), 0);
    assert!(got > 0);
}

#[test]
fn big_queue_delivers_everything_in_order() {
    // A queue large enough for everything: no drops allowed at all.
    let mut r = kit().router(
        "s0 :: SeqSource(0, 20000) -> q :: ThreadSafeQueue(65536);
         s1 :: SeqSource(1, 20000) -> q;
         q -> u :: Unqueue -> chk :: SeqCheck;
         StaticThreadSched(s0 0, s1 1, u 1);",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "chk.count"), 40000);
    assert_eq!(num(&mut r, "q.drops"), 0);
    assert_eq!(num(&mut r, "chk.bad_order"), 0);
}

#[test]
fn a_queue_shared_by_threads_answers_its_handlers() {
    // A queue too small for two producers: it drops, and its thread-safe form reports the
    // drops by reason (also in the router-wide view), its length, capacity and highwater
    // length, and resets its counts.
    let mut r = kit().router(
        "s0 :: SeqSource(0, 30000) -> q :: ThreadSafeQueue(64);
         s1 :: SeqSource(1, 30000) -> q;
         q -> u :: Unqueue(BURST 1) -> chk :: SeqCheck;
         StaticThreadSched(s0 0, s1 1, u 1);",
    );
    r.run_until_idle();
    let drops = num(&mut r, "q.drops");
    assert_eq!(num(&mut r, "chk.count") + drops, 60000);
    let details = read(&mut r, "q.drop_details");
    let full: u64 = details
        .lines()
        .filter(|l| l.ends_with("queue full"))
        .map(|l| l.split_whitespace().next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(full, drops, "{details}");
    let everywhere = read(&mut r, "drops");
    assert_eq!(
        drops > 0,
        everywhere
            .lines()
            .any(|l| l == format!("q\tqueue full\t{drops}")),
        "{everywhere}"
    );
    assert_eq!(num(&mut r, "q.capacity"), 64);
    assert_eq!(num(&mut r, "q.length"), 0);
    assert!(num(&mut r, "q.highwater_length") > 0);
    r.write_path("q.reset_counts", "").unwrap();
    assert_eq!(num(&mut r, "q.drops"), 0);
    assert_eq!(num(&mut r, "q.highwater_length"), 0);
    assert!(r.write_path("q.length", "1").is_err());
}

#[test]
fn infinite_sources_and_counters_add_up_across_threads() {
    let mut r = kit().router(
        "a :: InfiniteSource(LIMIT 50000, BURST 32) -> ca :: Counter -> q :: ThreadSafeQueue(512);
         b :: InfiniteSource(LIMIT 30000, BURST 7) -> cb :: Counter -> q;
         q -> u :: Unqueue -> cq :: Counter -> d :: Discard;
         StaticThreadSched(a 0, b 1, u 0);",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "ca.count"), 50000);
    assert_eq!(num(&mut r, "cb.count"), 30000);
    assert_eq!(num(&mut r, "cq.count") + num(&mut r, "q.drops"), 80000);
    assert_eq!(num(&mut r, "d.count"), num(&mut r, "cq.count"));
}

#[test]
fn pools_recycle_packets_freed_on_the_other_thread() {
    // Thread 0 allocates every packet, thread 1 frees them: the freeing thread's pool spills
    // chunks to the exchange, the allocating thread refills from it. 600000 packets cycle a
    // 4096-descriptor pool many times; every packet is accounted for, and the run ends.
    let mut r = kit().router(
        "src :: InfiniteSource(LIMIT 600000, BURST 32, TIMESTAMP false)
              -> q :: ThreadSafeQueue(2048) -> u :: Unqueue(BURST 64) -> c :: Counter -> d :: Discard;
         StaticThreadSched(src 0, u 1);",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "src.count"), 600000);
    assert_eq!(num(&mut r, "c.count") + num(&mut r, "q.drops"), 600000);
    assert_eq!(num(&mut r, "d.count"), num(&mut r, "c.count"));
    assert!(
        num(&mut r, "c.count") > 4096 * 4,
        "pools cycled several times"
    );
    // Packets made after the run come from the pools without trouble.
    let made: Vec<Packet> = (0..10000).map(|_| Packet::new(64)).collect();
    assert!(made.iter().all(|p| p.len() == 64));
}

#[test]
fn pools_recycle_both_ways() {
    // Each thread sends to the other: both allocate and both free foreign packets.
    let mut r = kit().router(
        "a :: InfiniteSource(LIMIT 200000, TIMESTAMP false) -> qa :: ThreadSafeQueue(1024)
              -> ua :: Unqueue -> ca :: Counter -> Discard;
         b :: InfiniteSource(LIMIT 200000, TIMESTAMP false) -> qb :: ThreadSafeQueue(1024)
              -> ub :: Unqueue -> cb :: Counter -> Discard;
         StaticThreadSched(a 0, ua 1, b 1, ub 0);",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "ca.count") + num(&mut r, "qa.drops"), 200000);
    assert_eq!(num(&mut r, "cb.count") + num(&mut r, "qb.drops"), 200000);
}

// ---------------------------------------------------------------------------------------------
// Handlers while threads forward.

#[test]
fn handlers_read_over_a_control_socket_while_two_threads_forward() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::unix::net::UnixStream;

    let dir = TempDir::new("smp");
    let sock = dir.join("ctl");
    let conf = format!(
        "ControlSocket(UNIX, \"{}\");
         a :: InfiniteSource(BURST 32, TIMESTAMP false) -> ca :: Counter -> Discard;
         b :: InfiniteSource(BURST 32, TIMESTAMP false) -> w :: SyntheticLoad(2, 16K) -> cb :: Counter -> Discard;
         StaticThreadSched(a 0, b 1);",
        sock.display()
    );
    let mut r = kit().router(&conf);
    let runner = std::thread::spawn(move || {
        r.run_until_idle();
        r
    });
    let mut s = None;
    for _ in 0..500 {
        if let Ok(c) = UnixStream::connect(&sock) {
            s = Some(c);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let s = s.expect("control socket comes up");
    let mut rd = BufReader::new(s.try_clone().unwrap());
    let mut w = s;
    let mut line = String::new();
    rd.read_line(&mut line).unwrap();
    assert!(line.starts_with("Click::ControlSocket/1.3"), "{}", line);
    let mut read = |h: &str| -> u64 {
        writeln!(w, "READ {}", h).unwrap();
        let mut l = String::new();
        rd.read_line(&mut l).unwrap();
        assert!(l.starts_with("200"), "{}: {}", h, l);
        l.clear();
        rd.read_line(&mut l).unwrap();
        let n: usize = l.trim().strip_prefix("DATA ").unwrap().parse().unwrap();
        let mut buf = vec![0u8; n];
        rd.read_exact(&mut buf).unwrap();
        String::from_utf8(buf).unwrap().trim().parse().unwrap()
    };
    let mut last = (0, 0, 0);
    for _ in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let now = (read("ca.count"), read("cb.count"), read("w.count"));
        assert!(now.0 >= last.0 && now.1 >= last.1 && now.2 >= last.2);
        last = now;
    }
    assert!(last.0 > 0 && last.1 > 0, "both threads forward: {:?}", last);
    let mut w2 = UnixStream::connect(&sock).unwrap();
    let mut l = String::new();
    let mut rd2 = BufReader::new(w2.try_clone().unwrap());
    rd2.read_line(&mut l).unwrap();
    writeln!(w2, "WRITE stop").unwrap();
    l.clear();
    rd2.read_line(&mut l).unwrap();
    assert!(l.starts_with("200"), "{}", l);
    let mut r = runner.join().expect("router thread");
    assert!(num(&mut r, "ca.count") >= last.0);
    assert!(num(&mut r, "cb.count") >= last.1);
    assert_eq!(num(&mut r, "w.count"), num(&mut r, "cb.count"));
}

// ---------------------------------------------------------------------------------------------
// Placement rules.

/// As in Click, one thread may push into a Queue while another pulls from it (Click's
/// test/threads/StaticThreadSched-02): the queue then uses a thread-safe ring, keeps order and
/// loses nothing.
#[test]
fn a_queue_placed_across_threads_becomes_thread_safe() {
    let mut r = kit().router(
        "s :: SeqSource(0, 60000) -> q :: Queue(256) -> u :: Unqueue(BURST 64) -> chk :: SeqCheck;
         StaticThreadSched(s 0, u 1);",
    );
    r.run_until_idle();
    let (got, drops) = (num(&mut r, "chk.count"), num(&mut r, "q.drops"));
    assert_eq!(got + drops, 60000, "got {} drops {}", got, drops);
    assert_eq!(num(&mut r, "chk.bad_order"), 0);
    assert_eq!(num(&mut r, "q.length"), 0);
    assert_eq!(task_threads(&mut r).get("u"), Some(&1));
}

/// Pushes from two threads into one Queue (beyond Click's rule of one pushing thread) are
/// safe too: every packet is delivered or counted, and sources sleep on the full queue.
#[test]
fn a_queue_pushed_from_two_threads_counts_every_packet() {
    let mut r = kit().router(
        "a :: InfiniteSource(LIMIT 30000, BURST 16) -> q :: Queue(256);
         b :: InfiniteSource(LIMIT 20000, BURST 16) -> q;
         q -> u :: Unqueue -> c :: Counter -> Discard;
         StaticThreadSched(a 0, b 1, u 1);",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count") + num(&mut r, "q.drops"), 50000);
    assert_eq!(num(&mut r, "q.length"), 0);
}

/// Without fixed placements a Queue keeps its source and its puller on one thread.
#[test]
fn automatic_placement_keeps_a_queue_on_one_thread() {
    let mut r = kit().router(
        "a :: InfiniteSource(LIMIT 1000) -> q :: Queue -> u :: Unqueue -> Discard;
         b :: InfiniteSource(LIMIT 1000) -> Discard;",
    );
    let t = task_threads(&mut r);
    assert_eq!(t.get("a"), t.get("u"));
    assert_ne!(t.get("a"), t.get("b"));
}

#[test]
fn an_arp_querier_reached_from_two_threads_is_rejected() {
    let e = kit()
        .build(
            "a :: InfiniteSource -> [0]arpq :: ARPQuerier(198.18.0.1, 02:00:00:00:00:01);
         b :: InfiniteSource -> [1]arpq;
         arpq -> Discard;
         StaticThreadSched(a 0, b 1);",
        )
        .err()
        .expect("an ARPQuerier cannot be shared");
    assert!(e.contains("arpq :: ARPQuerier"), "{}", e);
    assert!(e.contains("threads 0 and 1"), "{}", e);
}

#[test]
fn automatic_placement_keeps_a_path_together_and_spreads_paths() {
    let mut r = kit().router(
        "a :: InfiniteSource(LIMIT 1000) -> qa :: Queue(2000) -> ua :: Unqueue -> ca :: Counter -> Discard;
         b :: InfiniteSource(LIMIT 1000) -> qb :: Queue(2000) -> ub :: Unqueue -> cb :: Counter -> Discard;",
    );
    let th = task_threads(&mut r);
    assert_eq!(
        th["a"], th["ua"],
        "a path through a Queue stays on one thread"
    );
    assert_eq!(th["b"], th["ub"]);
    assert_ne!(th["a"], th["b"], "independent paths are spread");
    let p = r.placement().unwrap().clone();
    for (q, t) in [("qa", th["a"]), ("qb", th["b"])] {
        assert_eq!(p.elem_threads[r.element_index(q).unwrap()], vec![t]);
    }
    r.run_until_idle();
    assert_eq!(num(&mut r, "ca.count"), 1000);
    assert_eq!(num(&mut r, "cb.count"), 1000);
}

/// `--simtime` with two threads: one simulated clock for both, no thread jumping past the
/// other's timers; `home_thread` tells each task's thread (Click's
/// test/threads/StaticThreadSched-01).
#[test]
fn simulated_time_runs_on_two_threads() {
    let mut r = Kit::sim().threads(2).classes(SEQ_CLASSES).router(
        "StaticThreadSched(rs1 0, d1 0, rs2 1, d2 1);
         rs1 :: RatedSource(RATE 10) -> q1 :: Queue -> d1 :: Discard;
         rs2 :: RatedSource(RATE 10) -> q2 :: Queue -> d2 :: Discard;
         Script(wait 1s, stop);",
    );
    for (e, th) in [("rs1", 0), ("d1", 0), ("rs2", 1), ("d2", 1)] {
        assert_eq!(num(&mut r, &format!("{e}.home_thread")), th, "{e}");
    }
    r.run();
    let elapsed = r.clock().now() - sluice_core::Timestamp::SIM_START;
    assert_eq!(elapsed.as_secs_f64(), 1.0);
    // 0, 0.1, …, 1.0 s: the last one only if its thread got to it before the stop.
    for d in ["d1", "d2"] {
        let n = num(&mut r, &format!("{d}.count"));
        assert!((10..=11).contains(&n), "{d}: {n}");
    }
}

/// StaticThreadSched names elements from its own compound outwards, and a compound's name
/// places everything inside it; the StaticThreadSched configured last wins (Click's
/// test/threads/StaticThreadSched-02).
#[test]
fn static_thread_sched_in_compounds() {
    let mut r = kit().router(
        "StaticThreadSched(sub0 1);
         sub0, sub1 :: {
             a :: InfiniteSource(LIMIT 10) -> Discard;
             b :: InfiniteSource(LIMIT 10) -> Discard;
             StaticThreadSched(b 0);
         }",
    );
    for (e, th) in [("sub0/a", 1), ("sub0/b", 0), ("sub1/b", 0)] {
        assert_eq!(num(&mut r, &format!("{e}.home_thread")), th, "{e}");
    }
    let Err(err) = kit().build("StaticThreadSched(nothere 1); Idle -> Discard") else {
        panic!("an unknown name should fail");
    };
    assert!(err.contains("'nothere' does not name an element"), "{err}");
}

/// A PACKET Script that packets reach from two threads runs as one copy per thread, and its
/// exported count adds up over the copies.
#[test]
fn packet_script_reached_from_two_threads_runs_per_thread() {
    let mut r = kit().router(
        "a :: InfiniteSource(LIMIT 100) -> s :: Script(TYPE PACKET, export n 0, set n $(add $n 1), end)
             -> d :: Discard;
         b :: InfiniteSource(LIMIT 50) -> s;
         StaticThreadSched(a 0, b 1);",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "s.n"), 150);
    assert_eq!(num(&mut r, "d.count"), 150);
}
