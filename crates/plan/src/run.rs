//! Short calibration runs: a configuration text built and run to completion through
//! `sluice_core::Router`, as `sluice bench scaling` does.

use std::time::Instant;

use sluice_core::{Router, RouterOptions};

use crate::counters::{Counters, Event};

/// The element classes calibration runs may use: Sluice's standard library.
pub fn library() -> sluice_core::Library {
    sluice_elements::library()
}

/// Parses `text` into a flat configuration; errors are joined into one message.
pub fn parse(
    text: &str,
    file: &str,
    defines: &[(String, String)],
) -> Result<sluice_lang::FlatConfig, String> {
    sluice_lang::parse_config(text, file, defines).map_err(|d| {
        d.iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// Builds a router for `text` on `threads` worker threads without running it.
pub fn build(text: &str, threads: usize) -> Result<Router, String> {
    let flat = parse(text, "<plan>", &[])?;
    Router::new(
        flat,
        &library(),
        RouterOptions {
            threads,
            ..Default::default()
        },
    )
    .map_err(|e| e.join("\n"))
}

/// Builds and runs `text` on `threads` threads until every source is done and the router is
/// idle; returns the seconds the run took and the router, for its handlers.
pub fn run(text: &str, threads: usize) -> Result<(f64, Router), String> {
    let (secs, r, _) = run_router(build(text, threads)?, false)?;
    Ok((secs, r))
}

/// Last-level cache references and misses a run made, or why hardware counters did not
/// count them.
pub type LlcCounts = Result<(u64, u64), String>;

/// [`run`], counting the run's last-level cache references and misses where
/// `perf_event_open` offers them ([`crate::counters`]).
pub fn run_counted(text: &str, threads: usize) -> Result<(f64, Router, LlcCounts), String> {
    run_router(build(text, threads)?, true)
}

/// Builds `flat` with `opts` and runs it as [`run`] does.
pub fn run_flat(
    flat: sluice_lang::FlatConfig,
    opts: RouterOptions,
) -> Result<(f64, Router), String> {
    let (secs, r, _) = run_router(
        Router::new(flat, &library(), opts).map_err(|e| e.join("\n"))?,
        false,
    )?;
    Ok((secs, r))
}

fn run_router(mut r: Router, count: bool) -> Result<(f64, Router, LlcCounts), String> {
    // A fresh thread per run: the engine pins the thread that calls `run` to the first CPU,
    // and worker threads choose among the CPUs their creator may use. Counters opened on it
    // count the run and its workers.
    std::thread::spawn(move || {
        let events = [Event::LlcReferences, Event::LlcMisses];
        let counters = count.then(|| Counters::open(&events));
        let t = Instant::now();
        r.run_until_idle();
        let secs = t.elapsed().as_secs_f64();
        let counts = match &counters {
            None => Err("not asked for".to_string()),
            Some(c) if !c.all_open() => Err(c.refusal().unwrap_or_default()),
            Some(c) => match (c.read(events[0]), c.read(events[1])) {
                (Some(refs), Some(misses)) => Ok((refs, misses)),
                _ => Err("the counters could not be read".to_string()),
            },
        };
        (secs, r, counts)
    })
    .join()
    .map_err(|_| "calibration run panicked".to_string())
}

/// A numeric read handler (`elem.handler`), 0 if absent or not a number.
pub fn number(r: &mut Router, path: &str) -> f64 {
    r.read_path(path)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Cycles spent by the tasks of the elements named in `names`, all tasks when `names` is
/// empty.
pub fn task_cycles(r: &Router, names: &[&str]) -> f64 {
    r.task_stats()
        .iter()
        .filter(|t| names.is_empty() || names.contains(&t.element.as_str()))
        .map(|t| t.cycles as f64)
        .sum()
}

/// The median of `v` (0 for an empty list).
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

/// The smallest of `v` (0 for an empty list): the least disturbed of several timings.
pub fn fastest(v: &[f64]) -> f64 {
    v.iter().copied().reduce(f64::min).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_a_short_configuration() {
        let (secs, mut r) = run(
            "s :: InfiniteSource(LENGTH 64, LIMIT 1000, BURST 32, TIMESTAMP false) -> d :: Discard;",
            1,
        )
        .unwrap();
        assert!(secs >= 0.0);
        assert_eq!(number(&mut r, "d.count"), 1000.0);
        assert!(task_cycles(&r, &["s"]) >= 0.0);
        assert!(run("nonsense ->", 1).is_err());
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(fastest(&[3.0, 1.0, 2.0]), 1.0);
        assert_eq!(fastest(&[]), 0.0);
    }
}
