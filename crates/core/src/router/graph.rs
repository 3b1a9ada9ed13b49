//! The element graph: elements with their ports, processing and connections, checked with
//! Click's push/pull rules, and the notifier paths through it. Built once per configuration,
//! then read-only and shared by every thread.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sluice_lang::{FlatConfig, Landmark};

use crate::context::NotifierId;
use crate::element::{ElementClass, Handler};
use crate::handlers::Handlers;
use crate::ports::{FlowCode, Processing, ProcessingSpec};
use crate::threads::{Concurrency, Placement};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortRef {
    pub(crate) elem: usize,
    pub(crate) port: usize,
}

pub(crate) struct ElemInfo {
    pub(crate) name: String,
    pub(crate) class: ElementClass,
    /// The configuration arguments (changed by a writable `config` handler).
    pub(crate) config: Mutex<String>,
    pub(crate) landmark: Landmark,
    pub(crate) ninputs: usize,
    pub(crate) noutputs: usize,
    pub(crate) in_push: Vec<bool>,
    pub(crate) out_push: Vec<bool>,
    pub(crate) flow: FlowCode,
    /// All connections of each input / output (for router context).
    pub(crate) in_peers: Vec<Vec<PortRef>>,
    pub(crate) out_peers: Vec<Vec<PortRef>>,
    pub(crate) task: Option<usize>,
    pub(crate) empty_notifier: Option<NotifierId>,
    pub(crate) full_notifier: Option<NotifierId>,
    /// True if `empty_notifier` never becomes active (Click's idle signal).
    pub(crate) idle_notifier: bool,
    /// The element's handlers: those of its table, then those it answers itself.
    pub(crate) handlers: Vec<Handler>,
    /// The element's handler table (shared by its copies on every thread).
    pub(crate) table: Arc<Handlers>,
    pub(crate) concurrency: Concurrency,
}

impl ElemInfo {
    /// The element's configuration arguments.
    pub(crate) fn config(&self) -> String {
        self.config.lock().expect("config lock").clone()
    }

    /// Replaces the element's configuration arguments.
    pub(crate) fn set_config(&self, config: String) {
        *self.config.lock().expect("config lock") = config;
    }
}

/// The element graph of a configuration: elements, their ports and connections, handler
/// tables, notifier and task ids, placement. Built once, then read-only and shared by every
/// thread's worker (only an element's `config` text changes, through a writable `config`).
pub(crate) struct Graph {
    pub(crate) info: Vec<ElemInfo>,
    pub(crate) names: HashMap<String, usize>,
    pub(crate) flat: FlatConfig,
    pub(crate) source: String,
    pub(crate) class_names: Vec<&'static str>,
    /// Threads fixed by StaticThreadSched, by element.
    pub(crate) static_threads: HashMap<usize, usize>,
    /// Ticket multipliers set by ScheduleInfo, by element.
    pub(crate) ticket_scale: HashMap<usize, f64>,
    pub(crate) placement: Option<Placement>,
}

pub(crate) fn element_desc(name: &str, class: &str) -> String {
    format!("'{} :: {}'", name, class)
}

impl Graph {
    pub(crate) fn desc(&self, e: usize) -> String {
        element_desc(&self.info[e].name, &self.flat.elements[e].class)
    }

    /// Resolves agnostic ports: each element's agnostic ports take the processing of whatever
    /// they are connected to; unconstrained ones become push.
    pub(crate) fn resolve_processing(&mut self, errors: &mut Vec<String>) {
        let n = self.info.len();
        let specs: Vec<Option<ProcessingSpec>> = self
            .info
            .iter()
            .map(|i| ProcessingSpec::parse(i.class.processing))
            .collect();
        for (e, s) in specs.iter().enumerate() {
            if s.is_none() {
                errors.push(format!(
                    "{}: class {} has a bad processing spec",
                    self.info[e].landmark, self.info[e].class.name
                ));
            }
        }
        if !errors.is_empty() {
            return;
        }
        let spec = |e: usize| specs[e].as_ref().expect("checked above");
        // As Click's check_push_and_pull: each port starts with its class's processing;
        // agnostic ports take the processing of what they connect to, and an element's
        // agnostic input and output are tied (by a fake connection) when packets flow from
        // one to the other, so Idle's (flow x/y) input and output resolve apart.
        let mut ins: Vec<Vec<Processing>> = (0..n)
            .map(|e| {
                (0..self.info[e].ninputs)
                    .map(|p| spec(e).input(p))
                    .collect()
            })
            .collect();
        let mut outs: Vec<Vec<Processing>> = (0..n)
            .map(|e| {
                (0..self.info[e].noutputs)
                    .map(|p| spec(e).output(p))
                    .collect()
            })
            .collect();
        // (from, output, to, input, fake)
        let mut conns: Vec<(usize, usize, usize, usize, bool)> = self
            .flat
            .connections
            .iter()
            .map(|c| (c.from, c.from_port, c.to, c.to_port, false))
            .collect();
        for (e, (ei, eo)) in ins.iter().zip(&outs).enumerate() {
            for (i, pi) in ei.iter().enumerate() {
                for (o, po) in eo.iter().enumerate() {
                    if *pi == Processing::Agnostic
                        && *po == Processing::Agnostic
                        && self.info[e].flow.flows(i, o)
                    {
                        conns.push((e, o, e, i, true));
                    }
                }
            }
        }
        let mut conflict = vec![false; n];
        let mut changed = true;
        while changed {
            changed = false;
            for c in conns.iter_mut() {
                let (from, fp, to, tp, fake) = *c;
                let (pf, pt) = (outs[from][fp], ins[to][tp]);
                match (pf, pt) {
                    (Processing::Agnostic, Processing::Agnostic) => {}
                    (x, Processing::Agnostic) => {
                        ins[to][tp] = x;
                        changed = true;
                    }
                    (Processing::Agnostic, x) => {
                        outs[from][fp] = x;
                        changed = true;
                    }
                    (x, y) if x != y && fake => {
                        conflict[to] = true;
                        // Click drops the fake connection after reporting it.
                        c.0 = usize::MAX;
                    }
                    _ => {}
                }
            }
            conns.retain(|c| c.0 != usize::MAX);
        }
        for e in 0..n {
            if conflict[e] {
                errors.push(format!(
                    "{}: agnostic {} in mixed context: some ports push, some pull",
                    self.info[e].landmark,
                    self.desc(e)
                ));
            }
            let inf = &mut self.info[e];
            for (p, x) in ins[e].iter().enumerate() {
                inf.in_push[p] = *x != Processing::Pull;
            }
            for (p, x) in outs[e].iter().enumerate() {
                inf.out_push[p] = *x != Processing::Pull;
            }
        }
    }

    /// Click's connection rules: push to push, pull to pull, push outputs and pull inputs
    /// connected exactly once, every port in range used.
    pub(crate) fn check_connections(&mut self, errors: &mut Vec<String>) {
        let pname = |push: bool| if push { "push" } else { "pull" };
        for c in &self.flat.connections {
            let (fp, tp) = (
                self.info[c.from].out_push[c.from_port],
                self.info[c.to].in_push[c.to_port],
            );
            if fp != tp {
                errors.push(format!(
                    "{}: {} output {} is {}, but {} input {} is {}",
                    c.landmark,
                    self.desc(c.from),
                    c.from_port,
                    pname(fp),
                    self.desc(c.to),
                    c.to_port,
                    pname(tp)
                ));
            }
        }
        if !errors.is_empty() {
            return;
        }
        for e in 0..self.info.len() {
            let inf = &self.info[e];
            for p in 0..inf.ninputs {
                let peers = &inf.in_peers[p];
                if peers.is_empty() {
                    errors.push(format!(
                        "{}: {} input {} unused",
                        inf.landmark,
                        self.desc(e),
                        p
                    ));
                } else if !inf.in_push[p] && peers.len() > 1 {
                    errors.push(format!(
                        "{}: illegal reuse of {} pull input {}",
                        inf.landmark,
                        self.desc(e),
                        p
                    ));
                }
            }
            for p in 0..inf.noutputs {
                let peers = &inf.out_peers[p];
                if peers.is_empty() {
                    errors.push(format!(
                        "{}: {} output {} unused",
                        inf.landmark,
                        self.desc(e),
                        p
                    ));
                } else if inf.out_push[p] && peers.len() > 1 {
                    errors.push(format!(
                        "{}: illegal reuse of {} push output {}",
                        inf.landmark,
                        self.desc(e),
                        p
                    ));
                }
            }
        }
    }

    /// The empty notifiers upstream of input `port` of `e`: pulling there returns nothing
    /// while all of them are inactive. `None` if some upstream path has none.
    pub(crate) fn upstream_empty_notifiers(
        &self,
        e: usize,
        port: usize,
    ) -> Option<Vec<NotifierId>> {
        self.notifiers_along(e, port, false)
    }

    /// The full notifiers downstream of output `port` of `e`: pushing there is pointless while
    /// all of them are inactive (every queue on the way is full). `None` if some downstream
    /// path ends without one (it never fills).
    pub(crate) fn downstream_full_notifiers(
        &self,
        e: usize,
        port: usize,
    ) -> Option<Vec<NotifierId>> {
        self.notifiers_along(e, port, true)
    }

    /// Walks from port `port` of `e` along the packet flow — upstream through pull inputs, or
    /// downstream through push outputs — collecting the first empty (upstream) or full
    /// (downstream) notifier on every path. `None` if a path ends without one.
    pub(crate) fn notifiers_along(
        &self,
        e: usize,
        port: usize,
        down: bool,
    ) -> Option<Vec<NotifierId>> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.info.len()];
        let start = if down {
            self.info[e].out_peers.get(port)
        } else {
            self.info[e].in_peers.get(port)
        };
        let mut stack: Vec<PortRef> = start?.clone();
        while let Some(at) = stack.pop() {
            let inf = &self.info[at.elem];
            let provided = if down {
                inf.full_notifier
            } else {
                inf.empty_notifier
            };
            if let Some(n) = provided {
                if !out.contains(&n) {
                    out.push(n);
                }
                continue;
            }
            if std::mem::replace(&mut seen[at.elem], true) {
                continue;
            }
            let mut any = false;
            if down {
                for o in 0..inf.noutputs {
                    if inf.out_push[o] && inf.flow.flows(at.port, o) {
                        any = true;
                        stack.extend(inf.out_peers[o].iter().copied());
                    }
                }
            } else {
                for i in 0..inf.ninputs {
                    if !inf.in_push[i] && inf.flow.flows(i, at.port) {
                        any = true;
                        stack.extend(inf.in_peers[i].iter().copied());
                    }
                }
            }
            if !any {
                return None;
            }
        }
        Some(out)
    }

    /// Click's `ports` handler: per port its processing (`~` when the class's port is
    /// agnostic), `-` for packet counts, and the ports it connects to, in Click's order.
    pub(crate) fn ports_string(&self, e: usize) -> String {
        let inf = &self.info[e];
        let spec = ProcessingSpec::parse(inf.class.processing);
        let mut conns: Vec<_> = self.flat.connections.iter().collect();
        conns.sort_by_key(|c| (c.to, c.to_port, c.from, c.from_port));
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let mut s = format!("{} input{}\n", inf.ninputs, plural(inf.ninputs));
        for p in 0..inf.ninputs {
            let agnostic = spec.as_ref().map(|sp| sp.input(p)) == Some(Processing::Agnostic);
            let peers: Vec<String> = conns
                .iter()
                .filter(|c| c.to == e && c.to_port == p)
                .map(|c| format!("{} [{}]", self.info[c.from].name, c.from_port))
                .collect();
            s.push_str(&format!(
                "{}{}\t-\t{}\n",
                if inf.in_push[p] { "push" } else { "pull" },
                if agnostic { "~" } else { "" },
                peers.join(", ")
            ));
        }
        s.push_str(&format!(
            "{} output{}\n",
            inf.noutputs,
            plural(inf.noutputs)
        ));
        for p in 0..inf.noutputs {
            let agnostic = spec.as_ref().map(|sp| sp.output(p)) == Some(Processing::Agnostic);
            let peers: Vec<String> = conns
                .iter()
                .filter(|c| c.from == e && c.from_port == p)
                .map(|c| format!("[{}] {}", c.to_port, self.info[c.to].name))
                .collect();
            s.push_str(&format!(
                "{}{}\t-\t{}\n",
                if inf.out_push[p] { "push" } else { "pull" },
                if agnostic { "~" } else { "" },
                peers.join(", ")
            ));
        }
        s
    }
}
