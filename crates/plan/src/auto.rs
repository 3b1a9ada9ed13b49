//! `sluice -j N --plan auto|show CONFIG`: the placement `sluice plan` chooses, written out as
//! the configuration to run (or to print).

/// A planned configuration.
pub struct Planned {
    /// The rewritten configuration: stages, queues and StaticThreadSched for the choice.
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
    let p = crate::plan(text, file, defines, threads, None, false)?;
    let (best, text) = p.placed()?;
    let mut summary = format!(
        "plan: {} ({}), predicted {:.3} Mpps on {} threads",
        best.kind.name(),
        crate::candidates::describe(&best.stages, &p.names()),
        best.prediction.rate / 1e6,
        threads
    );
    if let Some(next) = p.candidates.iter().find(|c| c.kind != best.kind) {
        summary += &format!(
            "; best {}: {:.3} Mpps",
            next.kind.name(),
            next.prediction.rate / 1e6
        );
    }
    Ok(Planned { text, summary })
}
