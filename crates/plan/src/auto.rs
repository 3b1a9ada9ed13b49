//! `sluice -j N --plan auto|show CONFIG`: the placement `sluice plan` chooses, written out as
//! the configuration to run (or to print).

use crate::{candidates, chain, machine, model, profile, rewrite, run};

/// A planned configuration.
pub struct Planned {
    /// The rewritten configuration: stages, queues and StaticThreadSched for the choice.
    pub text: String,
    /// One line: the choice, its predicted rate and the runner-up's.
    pub summary: String,
}

/// Plans `text` (named `file`, with `defines`) for `threads` threads with the cached machine
/// profile (measured first if there is none) and rewrites it for the best candidate.
pub fn plan_config(
    text: &str,
    file: &str,
    defines: &[(String, String)],
    threads: usize,
) -> Result<Planned, String> {
    let flat = run::parse(text, file, defines)?;
    let chain = chain::extract(&flat).map_err(|e| format!("--plan: {}: {}", file, e))?;
    let cpus = machine::current_cpus();
    let mut notes = Vec::new();
    let (prof, _) = machine::load_or_measure(None, false, &mut notes)?;
    let layout = prof.layout(threads, &cpus)?;
    let (elements, _) = profile::profile_chain(&chain, prof.cycles_per_second)
        .map_err(|e| format!("--plan: {}", e))?;
    let model_chain: Vec<model::Element> = elements
        .iter()
        .map(profile::ElementProfile::model)
        .collect();
    let cands = candidates::rank(&layout.machine, &model_chain)?;
    let best = cands.first().ok_or("--plan: no placement")?;
    let text = rewrite::rewrite(
        &chain,
        &best.stages,
        &layout.groups,
        &rewrite::Options::default(),
    )?;
    let names: Vec<String> = elements.iter().map(|e| e.name.clone()).collect();
    let mut summary = format!(
        "plan: {} ({}), predicted {:.3} Mpps on {} threads",
        best.kind.name(),
        candidates::describe(&best.stages, &names),
        best.prediction.rate / 1e6,
        threads
    );
    if let Some(next) = cands.iter().find(|c| c.kind != best.kind) {
        summary += &format!(
            "; best {}: {:.3} Mpps",
            next.kind.name(),
            next.prediction.rate / 1e6
        );
    }
    Ok(Planned { text, summary })
}
