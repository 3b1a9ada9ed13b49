//! The `sluice plan` report for a configuration planned as task groups on threads.

use std::fmt::Write as _;

use crate::graph::{self, Assignment};
use crate::machine::format_bytes;
use crate::GraphPlanning;

fn mpps(r: f64) -> String {
    if r.is_finite() {
        format!("{:.3}", r / 1e6)
    } else {
        "inf".into()
    }
}

/// Writes the report: machine, task groups, queues, candidates, choice and reason.
pub(crate) fn report(
    out: &mut String,
    file: &str,
    threads: usize,
    p: &GraphPlanning,
    top: usize,
) -> Result<(), String> {
    let w = |out: &mut String, s: String| {
        let _ = writeln!(out, "{}", s);
    };
    w(
        out,
        format!("# sluice plan: {}, {} thread(s)", file, threads),
    );
    crate::machine_section(out, &p.profile, &p.origin, &p.layout);
    let g = &p.graph;
    w(out, "\n## task groups".into());
    w(
        out,
        format!(
            "(cycles per source packet on one thread: measured, and the group's own without the model's misses; calibration: {} source packets in {:.3} s, fastest of three runs)",
            g.packets, g.seconds
        ),
    );
    w(
        out,
        format!(
            "{:<4} {:>9} {:>9} {:>9} {:>7}  tasks",
            "#", "measured", "own", "footprint", "written"
        ),
    );
    let written = p.written();
    for (i, u) in g.units.iter().enumerate() {
        let fp: f64 = u.footprints.iter().map(|f| f.bytes).sum();
        let mut tasks = u.tasks.join(" ");
        if !u.movable {
            tasks += " (stays: it watches its thread's descriptors)";
        }
        w(
            out,
            format!(
                "g{:<3} {:>9.1} {:>9.1} {:>9} {:>7}  {}",
                i,
                u.measured,
                u.cycles,
                if fp > 0.0 {
                    format_bytes(fp)
                } else {
                    "-".into()
                },
                format!("t{}", written[i]),
                tasks
            ),
        );
    }
    if !g.crossings.is_empty() {
        w(out, "\n## queues between groups".into());
        for x in &g.crossings {
            let from: Vec<String> = x.pushers.iter().map(|p| format!("g{}", p)).collect();
            w(
                out,
                format!(
                    "{}: {} -> g{}, {:.3} packets per source packet",
                    x.queue,
                    from.join(" "),
                    x.puller,
                    x.packets
                ),
            );
        }
    }
    w(out, "\n## candidates".into());
    w(
        out,
        "(predicted Mpps of source packets; per thread: compute + sync + contention = cycles per source packet, and how busy it is at that rate)".into(),
    );
    let best = p.candidates.first().ok_or("plan: no placement")?;
    for (k, c) in p.candidates.iter().enumerate() {
        let is_written = c.thread == written;
        if k >= top && !is_written {
            continue;
        }
        let mut line = format!(
            "{:>3}. {:>8}  {}{}",
            k + 1,
            mpps(c.rate),
            graph::describe(c),
            if is_written { "  (as written)" } else { "" }
        );
        for (t, tc) in c.threads.iter().enumerate() {
            let _ = write!(
                line,
                "\n       t{}: {:.0} + {:.0} + {:.0} = {:.0}, busy {:.0}%",
                t,
                tc.compute,
                tc.sync,
                tc.contention,
                tc.total,
                tc.busy * 100.0
            );
        }
        w(out, line);
    }
    if p.candidates.len() > top {
        w(
            out,
            format!(
                "({} more not listed: --top {})",
                p.candidates.len() - top,
                p.candidates.len()
            ),
        );
    }
    w(out, "\n## choice".into());
    w(
        out,
        format!(
            "{}: {} Mpps predicted",
            graph::describe(best),
            mpps(best.rate)
        ),
    );
    let one = p
        .candidates
        .iter()
        .find(|c| c.thread.iter().all(|&t| t == c.thread[0]));
    for (what, other) in [
        (
            "as written",
            p.candidates.iter().find(|c| c.thread == written),
        ),
        ("one thread", one),
    ] {
        let Some(o) = other else { continue };
        if o.thread == best.thread {
            w(out, format!("reason: {} is the choice", what));
            continue;
        }
        w(out, format!("reason: {}", why_slower(what, o, best)));
    }
    if !p.notes.is_empty() {
        w(out, "\n## notes".into());
        for n in &p.notes {
            w(out, format!("- {}", n));
        }
    }
    Ok(())
}

/// `other` against `best`: how much slower, and which cause of its busiest thread's cycles
/// exceeds the best's busiest thread most.
fn why_slower(what: &str, other: &Assignment, best: &Assignment) -> String {
    let (a, b) = (
        &other.threads[other.bottleneck()],
        &best.threads[best.bottleneck()],
    );
    let parts = [
        ("imbalance", a.compute - b.compute),
        ("synchronisation", a.sync - b.sync),
        ("contention", a.contention - b.contention),
    ];
    let top = parts
        .iter()
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .map_or("imbalance", |p| p.0);
    format!(
        "{} ({}) is predicted {:.0}% slower, {} Mpps; its busiest thread spends, per source packet, compute {:+.0}, synchronisation {:+.0}, contention {:+.0} cycles against the choice's: {} dominates",
        what,
        graph::describe(other),
        100.0 * (1.0 - other.rate / best.rate),
        mpps(other.rate),
        parts[0].1,
        parts[1].1,
        parts[2].1,
        top
    )
}
