//! `sluice -j N --plan auto|show CONFIG`: the placement `sluice plan` chooses, written out as
//! the configuration to run (or to print), and the policy that re-plans it while it runs.

use std::sync::{Arc, Mutex};

use sluice_core::threads::Replan;

/// A planned configuration.
pub struct Planned {
    /// The rewritten configuration: the choice's stages, queues and StaticThreadSched.
    pub text: String,
    /// One line: the choice, its predicted rate and the best of another kind.
    pub summary: String,
}

/// Plans `text` (named `file`, with `defines`) for `threads` threads with the cached machine
/// profile (measured first if there is none) and rewrites it for the best candidate that
/// can be written as a configuration.
pub fn plan_config(
    text: &str,
    file: &str,
    defines: &[(String, String)],
    threads: usize,
) -> Result<Planned, String> {
    let placed = crate::plan(text, file, defines, threads, None, false, true)?.placed()?;
    Ok(Planned {
        text: placed.text,
        summary: format!("plan: {} on {} threads", placed.summary, threads),
    })
}

/// The re-planning policy for `text` (a planned configuration) on `threads` threads: its
/// task groups calibrated as [`crate::graph`] does, with the cached machine profile.
pub fn replanner(text: &str, threads: usize) -> Result<Replan, String> {
    let flat = crate::run::parse(text, "<planned>", &[])?;
    let mut notes = Vec::new();
    let (profile, _) = crate::machine::load_or_measure(None, false, &mut notes)?;
    let layout = profile.layout(threads, &crate::machine::current_cpus())?;
    let graph = crate::graph::calibrate(&flat, threads, &layout)
        .map_err(|e| format!("re-planning: {}", e))?;
    Ok(Replan(Arc::new(Mutex::new(
        crate::replan::ModelReplanner::new(graph, layout),
    ))))
}
