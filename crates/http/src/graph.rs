//! The element graph and per-element statistics, read from the router's handlers and shaped
//! for JSON: the router's `list`, `flatconfig`, `element_stats` and `drops`, and each
//! element's `class`, `config`, `ports` and `handlers`. The parsers of those handlers' texts
//! are public for the metrics and for tests.

use std::collections::BTreeMap;

use serde::Serialize;
use sluice_core::HandlerError;

use crate::api::Control;

/// The element graph of `GET /api/graph`.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// Every element, in configuration order.
    pub elements: Vec<Node>,
    /// Every connection.
    pub connections: Vec<Connection>,
}

/// One element of the graph.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The element's index in the router (configuration order, from 0).
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Its class.
    pub class: String,
    /// Its configuration string, as its `config` handler reads now.
    pub config: String,
    /// Number of input ports.
    pub inputs: usize,
    /// Number of output ports.
    pub outputs: usize,
    /// Its handlers.
    pub handlers: Vec<HandlerInfo>,
}

/// One handler of an element and what it allows.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct HandlerInfo {
    /// The handler's name.
    pub name: String,
    /// It can be read.
    pub read: bool,
    /// It can be written.
    pub write: bool,
}

/// A connection from an output port to an input port.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// The source element's name.
    pub from: String,
    /// Its output port.
    pub from_port: usize,
    /// The destination element's name.
    pub to: String,
    /// Its input port.
    pub to_port: usize,
}

/// The counters of one element in `GET /api/stats`.
#[derive(Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Packets that entered the element.
    pub in_packets: u64,
    /// Their bytes.
    pub in_bytes: u64,
    /// Packets that left it.
    pub out_packets: u64,
    /// Their bytes.
    pub out_bytes: u64,
    /// Packets it dropped, for every reason.
    pub drops: u64,
}

/// `GET /api/stats`: cumulative counters per element at router time `time`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Stats {
    /// The router's clock, in seconds.
    pub time: f64,
    /// False when the router does not count packets per element (no `element_stats`
    /// handler: the packet and byte counts are then 0).
    pub counting: bool,
    /// Counters by element name.
    pub elements: BTreeMap<String, Counts>,
}

/// One element's name and class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    /// Its name.
    pub name: String,
    /// Its class.
    pub class: String,
}

/// The element names of the router's `list` handler (a count, then one name a line).
pub fn parse_list(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// The handlers of an element's `handlers` handler (`NAME<TAB>MODE` lines, MODE `r`, `w`
/// or `rw`).
pub fn parse_handlers(text: &str) -> Vec<HandlerInfo> {
    text.lines()
        .filter_map(|l| {
            let (name, mode) = l.split_once('\t')?;
            Some(HandlerInfo {
                name: name.to_string(),
                read: mode.contains('r'),
                write: mode.contains('w'),
            })
        })
        .collect()
}

/// The numbers of inputs and outputs of an element's `ports` handler (`N input(s)`, a line
/// per input, `M output(s)`, a line per output).
pub fn parse_port_counts(text: &str) -> (usize, usize) {
    let count = |l: &str| l.split_whitespace().next()?.parse::<usize>().ok();
    let mut lines = text.lines();
    let inputs = lines.next().and_then(count).unwrap_or(0);
    let outputs = lines.nth(inputs).and_then(count).unwrap_or(0);
    (inputs, outputs)
}

/// The rows of the router's `element_stats` handler: `NAME IN_PACKETS IN_BYTES OUT_PACKETS
/// OUT_BYTES` per element.
pub fn parse_element_stats(text: &str) -> Vec<StatsRow> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next()?.to_string();
            let mut n = [0u64; 4];
            for v in &mut n {
                *v = w.next()?.parse().ok()?;
            }
            Some((name, n))
        })
        .collect()
}

/// The rows of the router's `drops` handler: `ELEMENT<TAB>REASON<TAB>COUNT`.
pub fn parse_drops(text: &str) -> Vec<(String, String, u64)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            let (e, r, n) = (f.next()?, f.next()?, f.next()?);
            Some((e.to_string(), r.to_string(), n.trim().parse().ok()?))
        })
        .collect()
}

/// The rows of the router's `thread_cycles` handler: `THREAD CYCLES`, the cycles each
/// thread spent in tasks that did work.
pub fn parse_thread_cycles(text: &str) -> Vec<(usize, u64)> {
    text.lines()
        .filter_map(|l| {
            let (t, n) = l.trim().split_once(' ')?;
            Some((t.parse().ok()?, n.trim().parse().ok()?))
        })
        .collect()
}

/// The routes of a route table's `table` handler, one string each with single spaces
/// (`198.18.5.0/24 198.18.0.2 1`, `-` for no gateway); headings and comments left out.
pub fn parse_routes(table: &str) -> Vec<String> {
    table
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The connections of a flat configuration text (the `flatconfig` handler).
pub fn parse_connections(flatconfig: &str) -> Result<Vec<Connection>, String> {
    let flat = sluice_lang::parse_config(flatconfig, "flatconfig", &[]).map_err(|d| {
        d.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    Ok(flat
        .connections
        .iter()
        .map(|c| Connection {
            from: flat.elements[c.from].name.clone(),
            from_port: c.from_port,
            to: flat.elements[c.to].name.clone(),
            to_port: c.to_port,
        })
        .collect())
}

/// Reads handler `path` and trims the newline it ends with.
fn read_line(ctl: &mut dyn Control, path: &str) -> Result<String, HandlerError> {
    Ok(ctl.read(path, None)?.trim_end_matches('\n').to_string())
}

/// Every element's name and class, in configuration order.
pub fn elements(ctl: &mut dyn Control) -> Result<Vec<Element>, HandlerError> {
    parse_list(&ctl.read("list", None)?)
        .into_iter()
        .map(|name| {
            let class = read_line(ctl, &format!("{name}.class"))?;
            Ok(Element { name, class })
        })
        .collect()
}

/// The handlers of element `name`.
pub fn handlers_of(ctl: &mut dyn Control, name: &str) -> Result<Vec<HandlerInfo>, HandlerError> {
    Ok(parse_handlers(
        &ctl.read(&format!("{name}.handlers"), None)?,
    ))
}

/// The element graph.
pub fn graph(ctl: &mut dyn Control) -> Result<Graph, HandlerError> {
    let mut nodes = Vec::new();
    for (index, e) in elements(ctl)?.into_iter().enumerate() {
        let config = read_line(ctl, &format!("{}.config", e.name))?;
        let (inputs, outputs) = parse_port_counts(&ctl.read(&format!("{}.ports", e.name), None)?);
        let handlers = handlers_of(ctl, &e.name)?;
        nodes.push(Node {
            index,
            name: e.name,
            class: e.class,
            config,
            inputs,
            outputs,
            handlers,
        });
    }
    let connections =
        parse_connections(&ctl.read("flatconfig", None)?).map_err(HandlerError::Failed)?;
    Ok(Graph {
        elements: nodes,
        connections,
    })
}

/// One row of the router's `element_stats` handler: the element's name and its in packets,
/// in bytes, out packets and out bytes.
pub type StatsRow = (String, [u64; 4]);

/// The router's `element_stats` rows, or `None` when the router does not count packets.
pub fn element_stats(ctl: &mut dyn Control) -> Result<Option<Vec<StatsRow>>, HandlerError> {
    match ctl.read("element_stats", None) {
        Ok(text) => Ok(Some(parse_element_stats(&text))),
        Err(HandlerError::NoHandler(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Counters of every element.
pub fn stats(ctl: &mut dyn Control) -> Result<Stats, HandlerError> {
    let names = parse_list(&ctl.read("list", None)?);
    let mut elements: BTreeMap<String, Counts> =
        names.into_iter().map(|n| (n, Counts::default())).collect();
    let rows = element_stats(ctl)?;
    let counting = rows.is_some();
    for (name, [ip, ib, op, ob]) in rows.unwrap_or_default() {
        if let Some(c) = elements.get_mut(&name) {
            (c.in_packets, c.in_bytes, c.out_packets, c.out_bytes) = (ip, ib, op, ob);
        }
    }
    for (name, _, n) in parse_drops(&ctl.read("drops", None)?) {
        if let Some(c) = elements.get_mut(&name) {
            c.drops = c.drops.saturating_add(n);
        }
    }
    Ok(Stats {
        time: ctl.now(),
        counting,
        elements,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_texts() {
        assert_eq!(parse_list("2\nsrc\nc\n"), vec!["src", "c"]);
        assert_eq!(parse_list("0\n"), Vec::<String>::new());
        let h = parse_handlers("name\tr\ncount\tr\nreset\tw\nactive\trw\n");
        assert_eq!(h.len(), 4);
        assert_eq!(
            h[3],
            HandlerInfo {
                name: "active".into(),
                read: true,
                write: true
            }
        );
        assert!(!h[2].read && h[2].write);
        assert_eq!(
            parse_port_counts("1 input\npush~\t-\tsrc [0]\n2 outputs\npush\t-\t\npush\t-\t\n"),
            (1, 2)
        );
        assert_eq!(
            parse_port_counts("0 inputs\n1 output\npush\t-\t[0] c\n"),
            (0, 1)
        );
        assert_eq!(
            parse_element_stats("src 0 0 10 600\nc 10 600 10 600\nbad row\n"),
            vec![
                ("src".to_string(), [0, 0, 10, 600]),
                ("c".to_string(), [10, 600, 10, 600])
            ]
        );
        assert_eq!(
            parse_drops("q\tqueue full\t7\nr\tno route\t2\n"),
            vec![
                ("q".to_string(), "queue full".to_string(), 7),
                ("r".to_string(), "no route".to_string(), 2)
            ]
        );
    }

    #[test]
    fn thread_cycles() {
        assert_eq!(
            parse_thread_cycles("0 123456\n1 0\nbad\n"),
            vec![(0, 123456), (1, 0)]
        );
    }

    #[test]
    fn routes_and_connections() {
        let ipv4 = "198.18.5.0/24\t\t198.18.0.2\t1\n0.0.0.0/0\t\t-\t\t0\n";
        assert_eq!(
            parse_routes(ipv4),
            vec!["198.18.5.0/24 198.18.0.2 1", "0.0.0.0/0 - 0"]
        );
        assert_eq!(
            parse_routes("# Active routes\n2001:db8::/32\t::\t0\n"),
            vec!["2001:db8::/32 :: 0"]
        );
        let c =
            parse_connections("src :: InfiniteSource;\nc :: Counter;\nsrc -> [1] c;\n").unwrap();
        assert_eq!(
            c,
            vec![Connection {
                from: "src".into(),
                from_port: 0,
                to: "c".into(),
                to_port: 1
            }]
        );
        assert!(parse_connections("a -> ").is_err());
    }
}
