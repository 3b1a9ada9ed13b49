//! `sluice plan`: chooses cloning, pipelining or a mix of both for a chain configuration on
//! N threads, or a thread for each task group of any other configuration, from a measured
//! cost model, and predicts its rate.
//!
//! The pieces, one concern each:
//! - [`model`]: Eq. 1 of Dobrescu et al. (PRESTO 2010), generalised to groups of cores
//!   sharing a cache level and to several cache levels;
//! - [`machine`]: the machine profile (sysfs caches, cycles per second, `O_s`, miss
//!   penalties), measured once and cached in a TOML file;
//! - [`chain`]: recognising a chain configuration;
//! - [`profile`]: each element's `C`, `S`, `N`;
//! - [`candidates`]: every cloned, pipelined and mixed placement, scored and ranked;
//! - [`rewrite`]: the chosen placement as a configuration;
//! - [`graph`]: configurations that are not chains, as task groups placed on threads;
//! - [`replan`]: the model as adaptive placement's policy while the router runs;
//! - [`run`]: the short calibration runs.

#![warn(missing_docs)]

pub mod auto;
pub mod candidates;
pub mod chain;
pub mod counters;
pub mod graph;
mod graph_report;
pub mod machine;
pub mod model;
pub mod profile;
pub mod replan;
pub mod rewrite;
pub mod run;
pub mod trial;

use std::fmt::Write as _;
use std::path::PathBuf;

use candidates::{Candidate, Kind};
use machine::{format_bytes, Layout, Origin, Profile};
use profile::{Calibration, ElementProfile};

/// Usage of `sluice plan`.
pub const USAGE: &str = "\
Usage: sluice plan CONFIG [-j N] [PARAM=VALUE...] [OPTIONS]
       sluice plan -e EXPR [-j N] [OPTIONS]

Predicts the packet rate of a chain configuration (SOURCE -> E1 -> ... -> EK -> SINK) run
cloned (every thread runs the whole chain), pipelined (each group of threads runs a
contiguous stage, ThreadSafeQueues between) or mixed, on N threads, and chooses the fastest.
The model is Eq. 1 of Dobrescu et al. (PRESTO 2010): per group of cores sharing a cache,
compute + synchronisation (O_s per packet entering from another group) + contention (misses
at each cache level, probability 1 - cache/footprint). Machine costs are measured once
(about a second) and cached; each element's cost is measured by running it alone (about
0.3 s per element).

Any other configuration is planned as task groups (tasks joined by the elements they share;
they meet at ThreadSafeQueues): it runs on one thread (each InfiniteSource's LIMIT lowered,
about 0.1 s; other sources must end by themselves), each group's cycles per source packet
are measured, and every assignment of groups to threads is scored with the same model. The
rewrite is the configuration with one StaticThreadSched line.

Options:
  -j, --threads N        threads to plan for (default: the CPUs this process may use)
  -e, --expression EXPR  the configuration text itself
  --machine FILE         machine profile to read, or to write when absent (default
                         $XDG_CACHE_HOME/sluice/machine.toml, else ~/.cache/sluice/machine.toml,
                         measured again when an hour old; a FILE named here is used as given)
  --remeasure            measure the machine again and rewrite the profile
  --show                 print the chosen placement as a configuration
  --show-all             print every listed candidate as a configuration, to run by hand
  --no-trial             choose by the model alone: do not run the placements it cannot tell
                         apart (a chain from an InfiniteSource to a Discard, about 0.5 s each)
  --top K                candidates to list (default 40; pure cloning and pipelining always)
  -h, --help             this text
";

/// Parsed command line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    /// Configuration file.
    pub file: Option<String>,
    /// Configuration text (`-e`).
    pub expr: Option<String>,
    /// `PARAM=VALUE` definitions.
    pub defines: Vec<(String, String)>,
    /// `-j`.
    pub threads: Option<usize>,
    /// `--machine`.
    pub machine: Option<PathBuf>,
    /// `--remeasure`.
    pub remeasure: bool,
    /// `--show`.
    pub show: bool,
    /// `--show-all`.
    pub show_all: bool,
    /// `--top`.
    pub top: usize,
    /// Not `--no-trial`.
    pub trial: bool,
    /// `--help`.
    pub help: bool,
}

/// Parses `sluice plan` arguments (those after `plan`).
pub fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        top: 40,
        trial: true,
        ..Args::default()
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let mut value = |what: &str| -> Result<String, String> {
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("plan: {} needs a value\n{}", what, USAGE))
        };
        match arg {
            "-h" | "--help" => a.help = true,
            "-j" | "--threads" => {
                let v = value(arg)?;
                a.threads = Some(parse_threads(&v)?);
            }
            "-e" | "--expression" => a.expr = Some(value(arg)?),
            "-f" | "--file" => a.file = Some(value(arg)?),
            "--machine" => a.machine = Some(PathBuf::from(value(arg)?)),
            "--remeasure" => a.remeasure = true,
            "--show" => a.show = true,
            "--show-all" => a.show_all = true,
            "--no-trial" => a.trial = false,
            "--top" => {
                let v = value(arg)?;
                a.top = v
                    .parse()
                    .map_err(|_| format!("plan: --top: expected a number, got '{}'", v))?;
            }
            _ if arg.starts_with("-j") && arg.len() > 2 => {
                a.threads = Some(parse_threads(&arg[2..])?)
            }
            _ if arg.starts_with("--threads=") => {
                a.threads = Some(parse_threads(&arg["--threads=".len()..])?)
            }
            _ if arg.starts_with('-') && arg != "-" => {
                return Err(format!("plan: unknown option {}\n{}", arg, USAGE))
            }
            _ if arg.contains('=') => {
                let (k, v) = arg.split_once('=').unwrap_or((arg, ""));
                a.defines.push((k.to_string(), v.to_string()));
            }
            _ if a.file.is_none() => a.file = Some(arg.to_string()),
            _ => {
                return Err(format!(
                    "plan: one configuration only ('{}')\n{}",
                    arg, USAGE
                ))
            }
        }
        i += 1;
    }
    Ok(a)
}

fn parse_threads(v: &str) -> Result<usize, String> {
    v.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=sluice_core::threads::MAX_THREADS).contains(n))
        .ok_or_else(|| {
            format!(
                "plan: -j: expected 1 to {} threads, got '{}'",
                sluice_core::threads::MAX_THREADS,
                v
            )
        })
}

/// Runs `sluice plan ARGS`; an error is a message for the user.
pub fn main(args: &[String]) -> Result<(), String> {
    let a = parse_args(args)?;
    if a.help {
        print!("{}", USAGE);
        return Ok(());
    }
    let (text, file) = match (&a.expr, &a.file) {
        (Some(e), None) => (e.clone(), "<expr>".to_string()),
        (None, Some(f)) if f == "-" => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                .map_err(|e| format!("plan: stdin: {}", e))?;
            (s, "<stdin>".to_string())
        }
        (None, Some(f)) => (
            std::fs::read_to_string(f).map_err(|e| format!("plan: {}: {}", f, e))?,
            f.clone(),
        ),
        (Some(_), Some(_)) => return Err("plan: a file or -e, not both".into()),
        (None, None) => return Err(format!("plan: no configuration\n{}", USAGE)),
    };
    let cpus = machine::current_cpus();
    let threads = a.threads.unwrap_or(cpus.len().max(1));
    let profile_file = a.machine.clone().or_else(machine::default_path);
    if a.remeasure || profile_file.is_none_or(|p| !p.exists()) {
        eprintln!("plan: measuring the machine (about a second)...");
    }
    let p = plan(
        &text,
        &file,
        &a.defines,
        threads,
        a.machine.as_deref(),
        a.remeasure,
        a.trial,
    )?;
    let mut out = String::new();
    match &p {
        Plan::Chain(p) => report(
            &mut out,
            &Report {
                file: &file,
                threads,
                profile: &p.profile,
                origin: &p.origin,
                layout: &p.layout,
                elements: &p.elements,
                calibration: &p.calibration,
                candidates: &p.candidates,
                trials: p.trials.as_ref(),
                notes: &p.notes,
                top: a.top,
            },
        )?,
        Plan::Graph(g) => graph_report::report(&mut out, &file, threads, g, a.top)?,
    }
    print!("{}", out);
    if a.show_all {
        for (what, text) in p.listed_configurations(a.top) {
            println!(
                "\n## configuration of candidate {} ({} threads: sluice -j {} -f FILE)",
                what, threads, threads
            );
            print!("{}", text);
        }
    }
    if a.show {
        let placed = p.placed()?;
        if let Some(why) = placed.instead {
            println!("\n({})", why);
        }
        println!(
            "\n## configuration ({} threads: sluice -j {} -f FILE)",
            threads, threads
        );
        print!("{}", placed.text);
    }
    Ok(())
}

/// What [`plan`] found: a chain's cloned, pipelined and mixed placements, or another
/// configuration's task groups placed on threads.
pub enum Plan {
    /// A chain configuration.
    Chain(Box<Planning>),
    /// Any other configuration.
    Graph(Box<GraphPlanning>),
}

/// The chosen placement written as a configuration.
pub struct Placed {
    /// The configuration text.
    pub text: String,
    /// One line: the choice, its predicted rate and the best alternative.
    pub summary: String,
    /// Why the written placement is not the model's first choice, if it is not.
    pub instead: Option<String>,
}

impl Plan {
    /// Every candidate the report lists (`top` of them, and the best of each kind), as
    /// `K. kind stages` and its configuration; those that cannot be written are left out.
    pub fn listed_configurations(&self, top: usize) -> Vec<(String, String)> {
        match self {
            Plan::Chain(p) => {
                let names = p.names();
                listed(&p.candidates, top)
                    .into_iter()
                    .filter_map(|k| {
                        let c = &p.candidates[k];
                        let text = rewrite::rewrite(
                            &p.chain,
                            &c.stages,
                            &p.layout.groups,
                            &c.rewrite_options(),
                        )
                        .ok()?;
                        let what = format!(
                            "{}. {} {}",
                            k + 1,
                            c.kind.name(),
                            candidates::describe(&c.stages, &names)
                        );
                        Some((what, text))
                    })
                    .collect()
            }
            Plan::Graph(g) => g
                .candidates
                .iter()
                .take(top)
                .enumerate()
                .map(|(k, c)| {
                    let what = format!("{}. {}", k + 1, graph::describe(c));
                    (what, graph::rewrite(&g.flat, &g.graph, c))
                })
                .collect(),
        }
    }

    /// The best placement that can be written, as a configuration.
    pub fn placed(&self) -> Result<Placed, String> {
        match self {
            Plan::Chain(p) => {
                let (best, text) = p.placed()?;
                let names = p.names();
                let mut summary = format!(
                    "{} ({}), predicted {:.3} Mpps",
                    best.kind.name(),
                    candidates::describe(&best.stages, &names),
                    best.prediction.rate / 1e6
                );
                if let Some(t) = &p.trials {
                    if let Some(x) = t
                        .tried
                        .iter()
                        .find(|x| std::ptr::eq(&p.candidates[x.candidate], best))
                    {
                        summary += &format!(", measured {:.3} in a trial", x.best() / 1e6);
                    }
                }
                if let Some(next) = p.candidates.iter().find(|c| c.kind != best.kind) {
                    summary += &format!(
                        "; best {}: {:.3} Mpps",
                        next.kind.name(),
                        next.prediction.rate / 1e6
                    );
                }
                let first = p.trials.as_ref().map_or(0, |t| t.chosen);
                let instead = (!std::ptr::eq(best, &p.candidates[first])).then(|| {
                    format!(
                        "the choice cannot be written as a configuration; the best one that can is {} {}",
                        best.kind.name(),
                        candidates::describe(&best.stages, &names)
                    )
                });
                Ok(Placed {
                    text,
                    summary,
                    instead,
                })
            }
            Plan::Graph(g) => {
                let best = g.candidates.first().ok_or("plan: no placement")?;
                let written = g
                    .candidates
                    .iter()
                    .find(|c| c.thread == g.written())
                    .unwrap_or(best);
                Ok(Placed {
                    text: graph::rewrite(&g.flat, &g.graph, best),
                    summary: format!(
                        "task groups {}, predicted {:.3} Mpps; as written: {:.3} Mpps",
                        graph::describe(best),
                        best.rate / 1e6,
                        written.rate / 1e6
                    ),
                    instead: None,
                })
            }
        }
    }
}

/// A configuration that is not a chain, planned as task groups on threads.
pub struct GraphPlanning {
    /// The configuration.
    pub flat: sluice_lang::FlatConfig,
    /// Its calibrated task groups and queues.
    pub graph: graph::TaskGraph,
    /// The machine profile.
    pub profile: Profile,
    /// Where the profile came from.
    pub origin: Origin,
    /// Groups of the planned threads and the model's machine.
    pub layout: Layout,
    /// Placements, best first.
    pub candidates: Vec<graph::Assignment>,
    /// Notes for the user.
    pub notes: Vec<String>,
}

impl GraphPlanning {
    /// The thread of each group as the configuration is written.
    pub fn written(&self) -> Vec<usize> {
        let n = self
            .layout
            .groups
            .iter()
            .map(|g| g.threads.len())
            .sum::<usize>();
        self.graph
            .units
            .iter()
            .map(|u| u.written.min(n.max(1) - 1))
            .collect()
    }
}

/// A configuration planned for some threads: what the model was given and its ranking.
pub struct Planning {
    /// The chain.
    pub chain: chain::Chain,
    /// The machine profile.
    pub profile: Profile,
    /// Where the profile came from.
    pub origin: Origin,
    /// Groups of the planned threads and the model's machine.
    pub layout: Layout,
    /// Element profiles, chain order.
    pub elements: Vec<ElementProfile>,
    /// Calibration facts.
    pub calibration: Calibration,
    /// Candidates, best first.
    pub candidates: Vec<Candidate>,
    /// The contenders run when the model could not tell them apart, and the one chosen.
    pub trials: Option<trial::Trials>,
    /// Notes for the user.
    pub notes: Vec<String>,
}

impl Planning {
    /// Element names, chain order.
    pub fn names(&self) -> Vec<String> {
        self.elements.iter().map(|e| e.name.clone()).collect()
    }

    /// The chosen candidate (by trial, else the model's best) or, when it cannot be written
    /// as a configuration, the best that can; and that configuration.
    pub fn placed(&self) -> Result<(&Candidate, String), String> {
        let mut why = String::from("plan: no placement");
        let first = self.trials.as_ref().map(|t| &self.candidates[t.chosen]);
        for c in first.into_iter().chain(&self.candidates) {
            match rewrite::rewrite(
                &self.chain,
                &c.stages,
                &self.layout.groups,
                &c.rewrite_options(),
            ) {
                Ok(text) => return Ok((c, text)),
                Err(e) => why = format!("plan: {}", e),
            }
        }
        Err(why)
    }
}

/// Plans `text` (named `file`, with `defines`) for `threads` threads: reads the machine
/// profile (`machine`, else the default file; measured when absent or with `remeasure`),
/// profiles the chain's elements and ranks every placement; with `trial`, runs the
/// placements of a chain that the model cannot tell apart ([`trial`]).
pub fn plan(
    text: &str,
    file: &str,
    defines: &[(String, String)],
    threads: usize,
    machine: Option<&std::path::Path>,
    remeasure: bool,
    trial: bool,
) -> Result<Plan, String> {
    let flat = run::parse(text, file, defines)?;
    let cpus = machine::current_cpus();
    let mut notes = Vec::new();
    let chain = match chain::extract(&flat) {
        Ok(c) => c,
        Err(why) => {
            let (profile, origin) = machine::load_or_measure(machine, remeasure, &mut notes)?;
            let layout = profile.layout(threads, &cpus)?;
            notes.push(format!(
                "{}: its task groups are placed on threads as they are",
                why.lines().next().unwrap_or("")
            ));
            let graph = graph::calibrate(&flat, threads, &layout)
                .map_err(|e| format!("plan: {}: {}", file, e))?;
            if graph.units.len() < 2 {
                notes.push(
                    "one task group: the configuration runs on one thread whatever -j says; \
                     ThreadSafeQueues between its paths (or a chain) let threads share the work"
                        .into(),
                );
            }
            let candidates = graph::search(&graph, &layout);
            return Ok(Plan::Graph(Box::new(GraphPlanning {
                flat,
                graph,
                profile,
                origin,
                layout,
                candidates,
                notes,
            })));
        }
    };
    let (profile, origin) = machine::load_or_measure(machine, remeasure, &mut notes)?;
    let mut layout = profile.layout(threads, &cpus)?;
    layout.machine.burst = f64::from(profile::source_burst(&chain));
    if profile.sync_cycles_single <= profile.sync_cycles {
        notes.push(
            "the machine profile has no O_s in batches of one: crossings cost O_s whatever \
             their batch size (--remeasure measures it)"
                .into(),
        );
    }
    let (mut elements, calibration) = profile::profile_chain(&chain, profile.cycles_per_second)
        .map_err(|e| format!("plan: {}", e))?;
    profile::apply_counters(&mut elements, &layout.machine.levels);
    let model_chain: Vec<model::Element> = elements.iter().map(ElementProfile::model).collect();
    // A source that cannot be copied is split instead of cloned.
    let split = if chain.source.class == "InfiniteSource" {
        None
    } else {
        Some(
            profile::split_cycles(&chain, calibration.baseline, profile.cycles_per_second)
                .map_err(|e| format!("plan: calibrating the flow split: {}", e))?,
        )
    };
    let mut candidates = candidates::rank(&layout.machine, &model_chain, split)?;
    if split.is_some() {
        let copies_source = |c: &Candidate| {
            c.kind != Kind::Split
                && c.stages[0]
                    .groups
                    .iter()
                    .map(|&g| layout.groups[g].threads.len())
                    .sum::<usize>()
                    > 1
        };
        candidates.retain(|c| !copies_source(c));
        notes.push(format!(
            "source {} ({}) cannot be copied: placements that would run it on several threads \
             are left out, and the flow split ({}) stands for cloning",
            chain.source.name,
            chain.source.class,
            profile::SPLIT
        ));
    }
    let contenders = if trial {
        trial::contenders(&layout.machine, &model_chain, split, &candidates)?
    } else {
        Vec::new()
    };
    let trials = if contenders.len() < 2 {
        None
    } else {
        match trial::run_trials(&chain, &candidates, &contenders, &layout.groups, threads) {
            Ok(t) => Some(t),
            Err(why) => {
                notes.push(format!(
                    "the model cannot tell {} placements apart, and they were not run: {}",
                    contenders.len(),
                    why
                ));
                None
            }
        }
    };
    notes.extend(chain.notes.iter().cloned());
    notes.extend(calibration.notes.iter().cloned());
    Ok(Plan::Chain(Box::new(Planning {
        chain,
        profile,
        origin,
        layout,
        elements,
        calibration,
        candidates,
        trials,
        notes,
    })))
}

/// Everything the report shows.
pub struct Report<'a> {
    /// Configuration file name.
    pub file: &'a str,
    /// Threads planned for.
    pub threads: usize,
    /// Machine profile.
    pub profile: &'a Profile,
    /// Where the profile came from.
    pub origin: &'a Origin,
    /// Groups and model machine.
    pub layout: &'a Layout,
    /// Element profiles, chain order.
    pub elements: &'a [ElementProfile],
    /// Calibration facts.
    pub calibration: &'a Calibration,
    /// Candidates, best first.
    pub candidates: &'a [Candidate],
    /// Contenders run, if any.
    pub trials: Option<&'a trial::Trials>,
    /// Notes for the user.
    pub notes: &'a [String],
    /// Candidates to list.
    pub top: usize,
}

fn mpps(r: f64) -> String {
    if r.is_finite() {
        format!("{:.3}", r / 1e6)
    } else {
        "inf".into()
    }
}

fn cpu_list(v: &[usize]) -> String {
    v.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Writes the `## machine` section: the profile, its caches and the groups of threads.
pub(crate) fn machine_section(
    out: &mut String,
    profile: &Profile,
    origin: &Origin,
    layout: &Layout,
) {
    let w = |out: &mut String, s: String| {
        let _ = writeln!(out, "{}", s);
    };
    let p = profile;
    let origin = match origin {
        Origin::Loaded(f) => format!("profile {}", f.display()),
        Origin::Measured(Some(f)) => format!("measured now, saved to {}", f.display()),
        Origin::Measured(None) => "measured now, not saved".into(),
    };
    w(out, "\n## machine".into());
    w(
        out,
        format!(
            "{} (measured {} on {}, sluice {}, {:.1} s, CPUs {}, load average {:.2})",
            origin,
            p.measured_at,
            p.host,
            p.sluice_version,
            p.calibration_seconds,
            cpu_list(&p.cpus),
            p.load_average
        ),
    );
    w(
        out,
        format!(
            "B = {:.3} G{}/s; O_s = {:.0} cycles per packet crossing in batches of 32, {:.0} in batches of one ({}; the pushing side {:.0} and {:.0}; the crossing alone {:.0}; a cache line's round trip between the first two CPUs {:.0} ns); miss latency (pointer chase) {:.0} cycles",
            p.cycles_per_second / 1e9,
            if p.cycle_counter { "cycles" } else { "ns (no cycle counter)" },
            p.sync_cycles,
            p.sync_cycles_single,
            p.sync_source,
            p.push_cycles,
            p.push_cycles_single,
            p.sync_cycles_unloaded,
            p.round_trip_ns,
            p.miss_latency_cycles
        ),
    );
    w(
        out,
        format!(
            "{:<6} {:>8} {:>10} {:>10} {:>13}  instances (CPUs)",
            "cache", "size", "alone", "shared", "miss penalty"
        ),
    );
    for c in &p.caches {
        let inst: Vec<String> = c.shared.iter().map(|s| cpu_list(s)).collect();
        let shared = if c.concurrent.is_empty() {
            "-".to_string()
        } else {
            format_bytes(c.effective_bytes as f64)
        };
        w(
            out,
            format!(
                "{:<6} {:>8} {:>10} {:>10} {:>13.1}  {}",
                c.name(),
                format_bytes(c.bytes as f64),
                format_bytes(c.effective_alone as f64),
                shared,
                c.penalty_cycles,
                inst.join(" | ")
            ),
        );
    }
    w(
        out,
        format!(
            "(alone: the capacity one CPU sees; shared: what the CPUs of an instance see reading at once, against their total footprint; independent random reads hitting L1 cost {:.1} cycles; fitted to {} sizes from {} to {})",
            p.base_access_cycles,
            p.access.len(),
            format_bytes(p.access.first().map_or(0.0, |a| a.bytes as f64)),
            format_bytes(p.access.last().map_or(0.0, |a| a.bytes as f64))
        ),
    );
    let groups: Vec<String> = layout
        .groups
        .iter()
        .enumerate()
        .map(|(j, g)| {
            format!(
                "g{} = threads {} on CPUs {}",
                j,
                cpu_list(&g.threads),
                cpu_list(&g.cpus)
            )
        })
        .collect();
    w(
        out,
        format!("groups ({} instances): {}", layout.level, groups.join("; ")),
    );
}

/// The candidates a report lists: the first `top`, and the best of each kind but mixes.
fn listed(cands: &[Candidate], top: usize) -> Vec<usize> {
    (0..cands.len())
        .filter(|&k| {
            k < top
                || (cands[k].kind != Kind::Mix
                    && cands.iter().position(|c| c.kind == cands[k].kind) == Some(k))
        })
        .collect()
}

/// Writes the `## trial` section: the contenders run and what they measured.
fn trial_section(out: &mut String, t: &trial::Trials, cands: &[Candidate], names: &[String]) {
    let scales: Vec<String> = trial::SCALES.iter().map(|s| format!("{}x", s)).collect();
    let _ = writeln!(
        out,
        "\n## trial\nthe model cannot tell these apart (the best with every cache at {} its profiled capacity, or within {:.0}% of the best); each ran {} times, interleaved, on {} threads for about {} s (Mpps; measured: the fastest run)",
        scales.join(" or "),
        trial::MARGIN * 100.0,
        trial::ROUNDS,
        t.threads,
        trial::RUN_SECONDS
    );
    for x in &t.tried {
        let c = &cands[x.candidate];
        let _ = writeln!(
            out,
            "{:>3}. {:<10} predicted {:>8}  measured {:>8}  {}{}",
            x.candidate + 1,
            c.kind.name(),
            mpps(c.prediction.rate),
            mpps(x.best()),
            candidates::describe(&c.stages, names),
            if x.candidate == t.chosen {
                "  (chosen)"
            } else {
                ""
            }
        );
    }
}

/// Writes the report: machine, elements, candidates, choice and reason.
pub fn report(out: &mut String, r: &Report) -> Result<(), String> {
    let w = |out: &mut String, s: String| {
        let _ = writeln!(out, "{}", s);
    };
    w(
        out,
        format!("# sluice plan: {}, {} thread(s)", r.file, r.threads),
    );
    machine_section(out, r.profile, r.origin, r.layout);
    w(out, "\n## elements".into());
    w(
        out,
        format!(
            "(C: cycles per packet alone, no misses; S: data bytes per copy; N: accesses per packet; calibrated with {}, source + Discard {:.1} cycles)",
            r.calibration.source, r.calibration.baseline
        ),
    );
    w(
        out,
        format!(
            "{:<3} {:<16} {:<16} {:>9} {:>8} {:>7}  footprint from",
            "#", "element", "class", "C", "S", "N"
        ),
    );
    for (i, e) in r.elements.iter().enumerate() {
        w(
            out,
            format!(
                "{:<3} {:<16} {:<16} {:>9.1} {:>8} {:>7}  {}",
                i,
                e.name,
                e.class,
                e.cycles,
                format_bytes(e.bytes as f64),
                e.accesses,
                e.footprint_from
            ),
        );
    }
    let names: Vec<String> = r.elements.iter().map(|e| e.name.clone()).collect();
    let cands = r.candidates;
    w(out, "\n## candidates".into());
    w(
        out,
        "(predicted Mpps; per group: compute + sync + contention = C_j cycles per packet it handles, and how busy it is at that rate)".into(),
    );
    let listed = listed(cands, r.top);
    for &k in &listed {
        let c = &cands[k];
        let mut line = format!(
            "{:>3}. {:<10} {:>8}  {}",
            k + 1,
            c.kind.name(),
            mpps(c.prediction.rate),
            candidates::describe(&c.stages, &names)
        );
        for (j, g) in c.prediction.groups.iter().enumerate() {
            if g.rate == 0.0 {
                let _ = write!(line, "\n       g{}: idle", j);
                continue;
            }
            let levels: Vec<String> = r
                .layout
                .machine
                .levels
                .iter()
                .zip(&g.by_level)
                .filter(|(_, &c)| c >= 0.5)
                .map(|(l, c)| format!("{} {:.0}", l.name, c))
                .collect();
            let _ = write!(
                line,
                "\n       g{}: {:.0} + {:.0} + {:.0}{} = {:.0}, busy {:.0}%",
                j,
                g.compute,
                g.sync,
                g.contention,
                if levels.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", levels.join(", "))
                },
                g.total,
                g.busy * 100.0
            );
        }
        w(out, line);
    }
    if listed.len() < cands.len() {
        w(
            out,
            format!(
                "({} more mixes not listed: --top {})",
                cands.len() - listed.len(),
                cands.len()
            ),
        );
    }
    let best = cands.first().ok_or("plan: no placement")?;
    let chosen = r.trials.map_or(best, |t| &cands[t.chosen]);
    if let Some(t) = r.trials {
        trial_section(out, t, cands, &names);
    }
    w(out, "\n## choice".into());
    w(
        out,
        format!(
            "{} {}: {} Mpps predicted",
            chosen.kind.name(),
            candidates::describe(&chosen.stages, &names),
            mpps(chosen.prediction.rate)
        ),
    );
    if !std::ptr::eq(chosen, best) {
        w(
            out,
            format!(
                "chosen by trial over the model's first choice, {} {} (the reasons below are the model's)",
                best.kind.name(),
                candidates::describe(&best.stages, &names)
            ),
        );
    }
    let model_chain: Vec<model::Element> = r.elements.iter().map(ElementProfile::model).collect();
    let pp = &chosen.prediction.per_packet;
    w(
        out,
        format!(
            "its cycles per packet, all cores: compute {:.0}, synchronisation {:.0}, contention {:.0}, idle {:.0}",
            pp.compute, pp.sync, pp.contention, pp.idle
        ),
    );
    for other in candidates::best_of_each_kind(cands) {
        if std::ptr::eq(other, best) {
            continue;
        }
        let (top, d) = candidates::excess(&r.layout.machine, &model_chain, other, best)?;
        let slower = 100.0 * (1.0 - other.prediction.rate / best.prediction.rate);
        let parts: Vec<String> = d
            .iter()
            .map(|(o, v)| format!("{} {:+.0}", o.name(), v))
            .collect();
        w(
            out,
            format!(
                "reason: the best {} ({}) is predicted {:.0}% slower, {} Mpps; extra cycles per packet: {}: {} dominates",
                other.kind.name(),
                candidates::describe(&other.stages, &names),
                slower,
                mpps(other.prediction.rate),
                parts.join(", "),
                top.name()
            ),
        );
    }
    if cands.len() == 1 {
        w(
            out,
            "reason: one group of cores: only cloning is possible".into(),
        );
    }
    if !r.notes.is_empty() {
        w(out, "\n## notes".into());
        for n in r.notes {
            w(out, format!("- {}", n));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_arguments() {
        let a = parse_args(&s(&[
            "conf.click",
            "-j",
            "2",
            "LIMIT=5",
            "--show",
            "--machine",
            "m.toml",
        ]))
        .unwrap();
        assert_eq!(a.file.as_deref(), Some("conf.click"));
        assert_eq!(a.threads, Some(2));
        assert_eq!(a.defines, vec![("LIMIT".to_string(), "5".to_string())]);
        assert!(a.show && !a.remeasure);
        assert_eq!(a.machine, Some(PathBuf::from("m.toml")));
        assert_eq!(
            parse_args(&s(&["-j4", "-e", "x"])).unwrap().threads,
            Some(4)
        );
        assert!(parse_args(&s(&["-j", "0"])).is_err());
        assert!(parse_args(&s(&["-j"])).is_err());
        assert!(parse_args(&s(&["--bogus"]))
            .unwrap_err()
            .contains("unknown option"));
        assert!(parse_args(&s(&["a", "b"])).is_err());
        assert!(parse_args(&s(&["--help"])).unwrap().help);
        assert!(main(&s(&["--help"])).is_ok());
    }

    #[test]
    fn the_trial_section_lists_what_ran() {
        let m = model::Machine::uniform(2, 1, 1e6, 10.0, 100.0, 1e9);
        let chain = [
            model::Element {
                name: "src".into(),
                cycles: 10.0,
                bytes: 0.0,
                accesses: 0.0,
                per_thread: false,
            },
            model::Element {
                name: "d".into(),
                cycles: 10.0,
                bytes: 0.0,
                accesses: 0.0,
                per_thread: false,
            },
        ];
        let cands = candidates::rank(&m, &chain, None).unwrap();
        let t = trial::Trials {
            tried: vec![
                trial::Tried {
                    candidate: 0,
                    rates: vec![1e6, 2e6],
                },
                trial::Tried {
                    candidate: 1,
                    rates: vec![3e6, 2.5e6],
                },
            ],
            chosen: 1,
            threads: 2,
        };
        let mut out = String::new();
        trial_section(&mut out, &t, &cands, &s(&["src", "d"]));
        assert!(out.contains("## trial"), "{}", out);
        let lines: Vec<&str> = out
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .collect();
        assert_eq!(lines.len(), 2, "{}", out);
        assert!(lines[0].contains("measured    2.000") && !lines[0].contains("(chosen)"));
        assert!(lines[1].contains("measured    3.000") && lines[1].ends_with("(chosen)"));
    }

    #[test]
    fn other_configurations_are_planned_as_task_groups() {
        let machine = std::env::temp_dir().join(format!("sluice-plan-{}.toml", std::process::id()));
        // One branching path: one task group, nothing to place.
        let one =
            "s :: InfiniteSource(LIMIT 2000) -> t :: Tee(2); t[0] -> Discard; t[1] -> Discard;";
        let Plan::Graph(p) = plan(one, "t", &[], 2, Some(&machine), false, true).unwrap() else {
            panic!("a branching path is not a chain");
        };
        assert_eq!(p.graph.units.len(), 1);
        assert!(
            p.notes.iter().any(|n| n.contains("one task group")),
            "{:?}",
            p.notes
        );
        // Two sources meeting at a ThreadSafeQueue, pulled by a third task.
        let three = "a :: InfiniteSource(LIMIT 3000) -> q :: ThreadSafeQueue(4096); \
                     b :: InfiniteSource(LIMIT 1000) -> q; q -> u :: Unqueue -> c :: Counter -> Discard; \
                     StaticThreadSched(a 0, b 0, u 0);";
        let planned = plan(three, "t", &[], 2, Some(&machine), false, true).unwrap();
        let Plan::Graph(p) = &planned else {
            panic!("two sources are not a chain");
        };
        assert_eq!(p.graph.units.len(), 3);
        assert_eq!(p.graph.packets, 4000.0);
        assert_eq!(p.graph.crossings.len(), 1);
        let x = &p.graph.crossings[0];
        assert_eq!(
            (x.queue.as_str(), x.packets, x.pushers.len()),
            ("q", 1.0, 2)
        );
        assert_eq!(p.graph.units[x.puller].tasks, vec!["u".to_string()]);
        assert_eq!(p.written(), vec![0, 0, 0]);
        let text = planned.placed().unwrap().text;
        assert_eq!(text.matches("StaticThreadSched").count(), 1, "{}", text);
        let mut out = String::new();
        graph_report::report(&mut out, "t", 2, p, 40).unwrap();
        assert!(out.contains("q: g"), "{}", out);
        assert!(out.contains("(as written)"), "{}", out);
        assert!(main(&s(&[])).unwrap_err().contains("no configuration"));
        let _ = std::fs::remove_file(&machine);
    }
}
