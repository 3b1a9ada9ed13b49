//! Recognising the configurations `sluice plan` handles: one push path
//! `SOURCE -> E1 -> ... -> EK -> SINK`, and editing element arguments.

use sluice_lang::args::{keyword_split, split_args};
use sluice_lang::{FlatConfig, FlatElement};

/// What `sluice plan` accepts, for error messages.
pub const SUPPORTED: &str = "sluice plan supports one push path SOURCE -> E1 -> ... -> EK -> SINK: \
one element without inputs, one without outputs, every other element with one input and one \
output connection on port 0 (e.g. InfiniteSource -> SyntheticLoad(200, 1M) -> SyntheticLoad(200, 1M) -> Discard); \
Queue -> Unqueue pairs on the path are removed, StaticThreadSched and DriverManager are ignored";

/// Classes of queues that a `Queue -> Unqueue` pair on the path may use.
const QUEUES: &[&str] = &[
    "Queue",
    "SimpleQueue",
    "ThreadSafeQueue",
    "CPUQueue",
    "NotifierQueue",
    "FullNoteQueue",
    "QuickNoteQueue",
];

/// Classes that pull from such a queue and push on.
const UNQUEUES: &[&str] = &["Unqueue", "PullToPush"];

/// Connection-less classes that only place or stop work: left out of the plan.
const IGNORED: &[&str] = &["StaticThreadSched", "DriverManager"];

/// A chain configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    /// The element without inputs.
    pub source: FlatElement,
    /// The elements between, in path order.
    pub elements: Vec<FlatElement>,
    /// The element without outputs.
    pub sink: FlatElement,
    /// What was removed or ignored, for the user.
    pub notes: Vec<String>,
}

impl Chain {
    /// Source, elements and sink in path order.
    pub fn all(&self) -> Vec<&FlatElement> {
        std::iter::once(&self.source)
            .chain(self.elements.iter())
            .chain(std::iter::once(&self.sink))
            .collect()
    }
}

fn not_chain(why: String) -> String {
    format!("not a chain: {}\n{}", why, SUPPORTED)
}

/// Finds the chain in `flat`, or says why it is not one.
pub fn extract(flat: &FlatConfig) -> Result<Chain, String> {
    let n = flat.elements.len();
    let name = |e: usize| format!("{} ({})", flat.elements[e].name, flat.elements[e].class);
    let mut ins: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut outs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, c) in flat.connections.iter().enumerate() {
        outs[c.from].push(k);
        ins[c.to].push(k);
    }
    let mut notes = Vec::new();
    let mut connected = 0;
    for e in 0..n {
        if ins[e].is_empty() && outs[e].is_empty() {
            if IGNORED.contains(&flat.elements[e].class.as_str()) {
                notes.push(format!(
                    "ignored {}: the plan decides placement and ends",
                    name(e)
                ));
            } else {
                return Err(not_chain(format!(
                    "{} is not connected to the path",
                    name(e)
                )));
            }
        } else {
            connected += 1;
        }
    }
    let sources: Vec<usize> = (0..n)
        .filter(|&e| ins[e].is_empty() && !outs[e].is_empty())
        .collect();
    let src = match sources.as_slice() {
        [s] => *s,
        [] if connected == 0 => return Err(not_chain("no connections".into())),
        [] => return Err(not_chain("no element without inputs (a loop?)".into())),
        many => {
            let v: Vec<String> = many.iter().map(|&e| name(e)).collect();
            return Err(not_chain(format!("several sources: {}", v.join(", "))));
        }
    };
    let mut path = vec![src];
    let mut seen = vec![false; n];
    seen[src] = true;
    let mut cur = src;
    loop {
        match outs[cur].as_slice() {
            [] => break,
            [k] => {
                let c = &flat.connections[*k];
                if c.from_port != 0 || c.to_port != 0 {
                    return Err(not_chain(format!(
                        "{} [{}] -> [{}] {}: only port 0 to port 0 is supported",
                        name(c.from),
                        c.from_port,
                        c.to_port,
                        name(c.to)
                    )));
                }
                if ins[c.to].len() != 1 {
                    return Err(not_chain(format!(
                        "{} has {} input connections (paths merge)",
                        name(c.to),
                        ins[c.to].len()
                    )));
                }
                if seen[c.to] {
                    return Err(not_chain(format!("{} closes a loop", name(c.to))));
                }
                seen[c.to] = true;
                path.push(c.to);
                cur = c.to;
            }
            many => {
                return Err(not_chain(format!(
                    "{} has {} output connections (the path branches)",
                    name(cur),
                    many.len()
                )))
            }
        }
    }
    if path.len() != connected {
        let off: Vec<String> = (0..n)
            .filter(|&e| !(seen[e] || ins[e].is_empty() && outs[e].is_empty()))
            .map(name)
            .collect();
        return Err(not_chain(format!("not on the path: {}", off.join(", "))));
    }
    // Queue -> Unqueue pairs on the path: the plan puts its own where it cuts.
    let mut kept = Vec::new();
    let mut i = 0;
    while i < path.len() {
        let e = path[i];
        let class = flat.elements[e].class.as_str();
        if i > 0 && i + 1 < path.len() - 1 && QUEUES.contains(&class) {
            let next = path[i + 1];
            if UNQUEUES.contains(&flat.elements[next].class.as_str()) {
                notes.push(format!(
                    "removed {} -> {}: the plan puts queues where it cuts the chain",
                    name(e),
                    name(next)
                ));
                i += 2;
                continue;
            }
        }
        kept.push(e);
        i += 1;
    }
    if kept.len() < 2 {
        return Err(not_chain("the path needs a source and a sink".into()));
    }
    for &e in &kept[1..kept.len() - 1] {
        let class = flat.elements[e].class.as_str();
        if QUEUES.contains(&class) || UNQUEUES.contains(&class) {
            return Err(not_chain(format!(
                "{} is not half of a Queue -> Unqueue pair",
                name(e)
            )));
        }
    }
    let el = |e: usize| flat.elements[e].clone();
    Ok(Chain {
        source: el(kept[0]),
        elements: kept[1..kept.len() - 1].iter().map(|&e| el(e)).collect(),
        sink: el(kept[kept.len() - 1]),
        notes,
    })
}

/// The value of an element argument given positionally at `pos` (0-based, among the
/// leading arguments that are not `KEYWORD value`) or as keyword `key`.
pub fn get_arg(config: &str, pos: Option<usize>, key: &str) -> Option<String> {
    let args = split_args(config);
    let positional = args
        .iter()
        .take_while(|a| keyword_split(a).is_none())
        .count();
    if let Some(p) = pos.filter(|&p| p < positional) {
        return Some(args[p].clone());
    }
    args.iter()
        .rev()
        .filter_map(|a| keyword_split(a))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.to_string())
}

/// `config` with an argument set: replaced in place when given positionally at `pos` or as
/// keyword `key` (other occurrences of the keyword dropped), appended as `key value`
/// otherwise.
pub fn set_arg(config: &str, pos: Option<usize>, key: &str, value: &str) -> String {
    let mut args = split_args(config);
    let positional = args
        .iter()
        .take_while(|a| keyword_split(a).is_none())
        .count();
    let is_key = |a: &String| keyword_split(a).is_some_and(|(k, _)| k == key);
    match pos.filter(|&p| p < positional) {
        Some(p) => args[p] = value.to_string(),
        None => match args.iter().rposition(is_key) {
            Some(last) => {
                args[last] = format!("{} {}", key, value);
                let mut k = 0;
                args.retain(|a| {
                    k += 1;
                    k - 1 == last || !is_key(a)
                });
            }
            None => args.push(format!("{} {}", key, value)),
        },
    }
    args.join(", ")
}

/// `config` without any `key ...` keyword argument.
pub fn drop_arg(config: &str, key: &str) -> String {
    let mut args = split_args(config);
    args.retain(|a| keyword_split(a).is_none_or(|(k, _)| k != key));
    args.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(text: &str) -> FlatConfig {
        sluice_lang::parse_config(text, "<test>", &[]).unwrap()
    }

    #[test]
    fn finds_a_chain() {
        let c = extract(&flat(
            "src :: InfiniteSource(LIMIT 10) -> a :: SyntheticLoad(4, 1M) -> b :: Counter -> d :: Discard;",
        ))
        .unwrap();
        assert_eq!(c.source.name, "src");
        assert_eq!(c.sink.name, "d");
        let names: Vec<&str> = c.elements.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(c.all().len(), 4);
        assert!(c.notes.is_empty());
    }

    #[test]
    fn strips_the_pipeline_of_conf_smp() {
        let text = include_str!("../../../conf/smp/pipeline.click");
        let f = sluice_lang::parse_config(text, "pipeline.click", &[]).unwrap();
        let c = extract(&f).unwrap();
        let names: Vec<&str> = c.elements.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["stage1", "s1", "stage2", "s2"]);
        assert_eq!(c.source.name, "src");
        assert_eq!(c.notes.len(), 2, "{:?}", c.notes);
        assert!(c
            .notes
            .iter()
            .any(|n| n.contains("q (ThreadSafeQueue) -> uq (Unqueue)")));
        assert!(c.notes.iter().any(|n| n.contains("StaticThreadSched")));
    }

    #[test]
    fn says_why_a_configuration_is_not_a_chain() {
        let err = |t: &str| extract(&flat(t)).unwrap_err();
        let e = err("s :: InfiniteSource -> t :: Tee(2); t[0] -> Discard; t[1] -> Discard;");
        assert!(e.contains("t (Tee) has 2 output connections"), "{}", e);
        assert!(e.contains("sluice plan supports"), "{}", e);
        let e = err("a :: InfiniteSource -> d :: Discard; b :: InfiniteSource -> d;");
        assert!(e.contains("several sources"), "{}", e);
        let e = err("s :: InfiniteSource -> c :: Classifier(12/0800, -); c[1] -> Discard;");
        assert!(e.contains("only port 0"), "{}", e);
        let e = err("s :: InfiniteSource -> Discard; i :: Idle;");
        assert!(e.contains("i (Idle) is not connected"), "{}", e);
        let e = err("s :: InfiniteSource -> q :: Queue -> d :: Discard;");
        assert!(e.contains("not half of a Queue -> Unqueue pair"), "{}", e);
        let e = err("");
        assert!(e.contains("no connections"), "{}", e);
    }

    #[test]
    fn edits_arguments() {
        let c = "200, 4M, CYCLES 0, SEED 2";
        assert_eq!(get_arg(c, Some(1), "S").as_deref(), Some("4M"));
        assert_eq!(set_arg(c, Some(1), "S", "4K"), "200, 4K, CYCLES 0, SEED 2");
        let k = "N 200, S 4M";
        assert_eq!(get_arg(k, Some(1), "S").as_deref(), Some("4M"));
        assert_eq!(set_arg(k, Some(1), "S", "4K"), "N 200, S 4K");
        let s = "LENGTH 64, LIMIT 1000, STOP true";
        assert_eq!(get_arg(s, Some(1), "LIMIT").as_deref(), Some("1000"));
        assert_eq!(
            set_arg(s, Some(1), "LIMIT", "5"),
            "LENGTH 64, LIMIT 5, STOP true"
        );
        assert_eq!(
            set_arg("LIMIT 1, LIMIT 2, X 3", None, "LIMIT", "5"),
            "LIMIT 5, X 3"
        );
        assert_eq!(drop_arg(s, "STOP"), "LENGTH 64, LIMIT 1000");
        assert_eq!(set_arg("", Some(1), "LIMIT", "5"), "LIMIT 5");
        assert_eq!(
            get_arg("\"abc\", 30", Some(1), "LIMIT").as_deref(),
            Some("30")
        );
        assert_eq!(get_arg("LENGTH 64", Some(1), "LIMIT"), None);
    }
}
