//! `sluice -j N --plan auto|show CONFIG`: the placement `sluice plan` chooses, written out as
//! the configuration to run (or to print).

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
    let placed = crate::plan(text, file, defines, threads, None, false)?.placed()?;
    Ok(Planned {
        text: placed.text,
        summary: format!("plan: {} on {} threads", placed.summary, threads),
    })
}
