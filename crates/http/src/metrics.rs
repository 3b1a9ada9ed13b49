//! `GET /metrics`: the router's counters in Prometheus's text exposition format (version
//! 0.0.4), read from the router's handlers on the router's thread.
//!
//! Families: `sluice_build_info{version}`, `sluice_element_packets_total` and
//! `sluice_element_bytes_total` `{element,class,direction="in"|"out"}` (when the router
//! counts packets per element), `sluice_drops_total{element,reason}`,
//! `sluice_queue_length`, `sluice_queue_capacity` and `sluice_queue_drops_total` `{element}`
//! for every queue (an element with `length` and `capacity` handlers),
//! `sluice_thread_busy_cycles_total{thread}`, `sluice_route_table_routes{element}` for every
//! route lookup element, and `sluice_elements`.

use std::collections::HashMap;
use std::fmt::Write;

use sluice_core::HandlerError;

use crate::api::Control;
use crate::graph;

/// The content type of the exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A metric family's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Only grows (restarts at 0 with the router).
    Counter,
    /// Goes up and down.
    Gauge,
}

/// One sample: label pairs and a value.
pub type Sample = (Vec<(&'static str, String)>, u64);

/// A text exposition being written.
#[derive(Default)]
pub struct Exposition {
    text: String,
}

/// A label value escaped for the exposition format: backslash, double quote and line feed.
pub fn escape_label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// A `# HELP` text escaped: backslash and line feed.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

impl Exposition {
    /// A new, empty exposition.
    pub fn new() -> Exposition {
        Exposition::default()
    }

    /// Writes family `name` (`HELP`, `TYPE`, then its samples); a family without samples is
    /// left out.
    pub fn family(&mut self, name: &str, help: &str, kind: Kind, samples: &[Sample]) {
        if samples.is_empty() {
            return;
        }
        let kind = match kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        };
        let _ = writeln!(self.text, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.text, "# TYPE {name} {kind}");
        for (labels, value) in samples {
            self.text.push_str(name);
            if !labels.is_empty() {
                let l: Vec<String> = labels
                    .iter()
                    .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                    .collect();
                let _ = write!(self.text, "{{{}}}", l.join(","));
            }
            let _ = writeln!(self.text, " {value}");
        }
    }

    /// The text written.
    pub fn finish(self) -> String {
        self.text
    }
}

/// The route lookup classes, whose `size` handler counts their routes.
fn is_route_table(class: &str) -> bool {
    sluice_elements::lookup::CLASSES
        .iter()
        .any(|c| c.name == class)
}

/// Reads a number from handler `path`, if it reads as one.
fn number(ctl: &mut dyn Control, path: &str) -> Option<u64> {
    ctl.read(path, None).ok()?.trim().parse().ok()
}

/// The metrics, read from the router's handlers.
pub fn collect(ctl: &mut dyn Control) -> Result<String, HandlerError> {
    let mut x = Exposition::new();
    let version = ctl.read("version", None)?.trim().to_string();
    x.family(
        "sluice_build_info",
        "Sluice's version; always 1.",
        Kind::Gauge,
        &[(vec![("version", version)], 1)],
    );
    let elements = graph::elements(ctl)?;
    x.family(
        "sluice_elements",
        "Elements in the running configuration.",
        Kind::Gauge,
        &[(vec![], elements.len() as u64)],
    );
    let class: HashMap<&str, &str> = elements
        .iter()
        .map(|e| (e.name.as_str(), e.class.as_str()))
        .collect();
    if let Some(rows) = graph::element_stats(ctl)? {
        let (mut packets, mut bytes) = (Vec::new(), Vec::new());
        for (name, [ip, ib, op, ob]) in rows {
            let c = class
                .get(name.as_str())
                .copied()
                .unwrap_or_default()
                .to_string();
            for (dir, p, b) in [("in", ip, ib), ("out", op, ob)] {
                let labels = vec![
                    ("element", name.clone()),
                    ("class", c.clone()),
                    ("direction", dir.to_string()),
                ];
                packets.push((labels.clone(), p));
                bytes.push((labels, b));
            }
        }
        x.family(
            "sluice_element_packets_total",
            "Packets that entered (direction in) or left (direction out) each element.",
            Kind::Counter,
            &packets,
        );
        x.family(
            "sluice_element_bytes_total",
            "Bytes of the packets that entered or left each element.",
            Kind::Counter,
            &bytes,
        );
    }
    let drops: Vec<Sample> = graph::parse_drops(&ctl.read("drops", None)?)
        .into_iter()
        .map(|(e, r, n)| (vec![("element", e), ("reason", r)], n))
        .collect();
    x.family(
        "sluice_drops_total",
        "Packets dropped, by element and reason.",
        Kind::Counter,
        &drops,
    );
    let (mut length, mut capacity, mut qdrops, mut routes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for e in &elements {
        if is_route_table(&e.class) {
            if let Some(n) = ctl
                .read(&format!("{}.size", e.name), None)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
            {
                routes.push((vec![("element", e.name.clone())], n));
            }
            continue;
        }
        let handlers = graph::handlers_of(ctl, &e.name)?;
        let readable = |n: &str| handlers.iter().any(|h| h.name == n && h.read);
        if !(readable("length") && readable("capacity")) {
            continue;
        }
        let label = || vec![("element", e.name.clone())];
        if let Some(n) = number(ctl, &format!("{}.length", e.name)) {
            length.push((label(), n));
        }
        if let Some(n) = number(ctl, &format!("{}.capacity", e.name)) {
            capacity.push((label(), n));
        }
        if readable("drops") {
            if let Some(n) = number(ctl, &format!("{}.drops", e.name)) {
                qdrops.push((label(), n));
            }
        }
    }
    x.family(
        "sluice_queue_length",
        "Packets each queue holds.",
        Kind::Gauge,
        &length,
    );
    x.family(
        "sluice_queue_capacity",
        "Packets each queue can hold.",
        Kind::Gauge,
        &capacity,
    );
    x.family(
        "sluice_queue_drops_total",
        "Packets each queue dropped.",
        Kind::Counter,
        &qdrops,
    );
    let cycles: Vec<Sample> = graph::parse_thread_cycles(&ctl.read("thread_cycles", None)?)
        .into_iter()
        .map(|(t, n)| (vec![("thread", t.to_string())], n))
        .collect();
    x.family(
        "sluice_thread_busy_cycles_total",
        "CPU cycles each thread spent in tasks that did work.",
        Kind::Counter,
        &cycles,
    );
    x.family(
        "sluice_route_table_routes",
        "Routes in each route table.",
        Kind::Gauge,
        &routes,
    );
    Ok(x.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape_label("two\nlines"), "two\\nlines");
        assert_eq!(escape_label("plain/name@@x"), "plain/name@@x");
    }

    #[test]
    fn families_have_help_type_and_samples() {
        let mut x = Exposition::new();
        x.family(
            "m_total",
            "What\nit counts \\ here.",
            Kind::Counter,
            &[
                (
                    vec![("element", "q\"1".into()), ("reason", "full".into())],
                    3,
                ),
                (vec![("element", "q2".into()), ("reason", "full".into())], 0),
            ],
        );
        x.family("empty", "Nothing.", Kind::Gauge, &[]);
        x.family("g", "A gauge.", Kind::Gauge, &[(vec![], 7)]);
        assert_eq!(
            x.finish(),
            "# HELP m_total What\\nit counts \\\\ here.\n# TYPE m_total counter\n\
             m_total{element=\"q\\\"1\",reason=\"full\"} 3\n\
             m_total{element=\"q2\",reason=\"full\"} 0\n\
             # HELP g A gauge.\n# TYPE g gauge\ng 7\n"
        );
    }

    #[test]
    fn route_tables_are_the_lookup_classes() {
        assert!(is_route_table("RadixIPLookup"));
        assert!(is_route_table("LookupIP6Route"));
        assert!(!is_route_table("ARPTable"));
    }
}
