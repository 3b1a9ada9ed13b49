//! Handler routing: the handlers every element and the router have, reading and writing an
//! element's handlers on whichever thread holds its copies (merging the copies' values), the
//! router-wide `drops`, and handler globs.

use std::fmt;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::context::Cx;
use crate::element::{Element, SharedElement};
use crate::handlers::{self, Handlers};
use crate::threads::{self, Request};

use super::datapath::Deferred;
use super::{Router, VERSION};

/// Why a handler call failed; maps onto ControlSocket reply codes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandlerError {
    /// No element of that name.
    NoElement(String),
    /// The element has no handler of that name.
    NoHandler(String),
    /// The handler exists but cannot be read.
    NotReadable(String),
    /// The handler exists but cannot be written.
    NotWritable(String),
    /// The handler ran and reported an error.
    Failed(String),
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandlerError::NoElement(e) => write!(f, "no element named '{}'", e),
            HandlerError::NoHandler(h) => write!(f, "no handler named '{}'", h),
            HandlerError::NotReadable(h) => write!(f, "handler '{}' is write-only", h),
            HandlerError::NotWritable(h) => write!(f, "handler '{}' is read-only", h),
            HandlerError::Failed(m) => write!(f, "{}", m),
        }
    }
}

/// Handlers every element has, besides its own (and [`TASK_HANDLERS`] for every element
/// with a task).
const ELEMENT_HANDLERS: &[&str] = &["name", "class", "config", "ports", "handlers"];

/// Click's read-only task handlers: whether the task is on the run list, and the thread it
/// runs on.
const TASK_HANDLERS: &[&str] = &["scheduled", "home_thread"];

/// Router-wide read handlers.
const ROUTER_READ: &[&str] = &[
    "config",
    "flatconfig",
    "list",
    "classes",
    "version",
    "driver",
    "requirements",
    "handlers",
    "timewarp",
    "drops",
    "thread_cycles",
];

/// What a read of an element's copies asks for.
#[derive(Clone, Debug)]
pub enum Query {
    /// A handler, with its parameter.
    Handler(String, Option<String>),
    /// The typed drop counts, as `drop_details` lines, whatever the element's own handlers
    /// are called.
    Drops,
}

/// The drop reason of packets an element of a replaced configuration held at a hot swap.
const RETIRED: &str = "freed at hot swap";

/// The drop reason of packets pushed to an output that is not connected.
const UNCONNECTED: &str = "pushed to an unconnected output";

impl Router {
    /// Handler names of element `e` (or the router's with `None`), with "r", "w" or "rw".
    pub fn handler_list(&self, e: Option<usize>) -> Vec<(String, &'static str)> {
        match e {
            None => {
                // `timewarp` is writable on the wall clock only.
                let warpable = |h: &str| h == "timewarp" && !self.clock.is_simulated();
                let mut v: Vec<(String, &'static str)> = ROUTER_READ
                    .iter()
                    .map(|&h| (h.to_string(), if warpable(h) { "rw" } else { "r" }))
                    .collect();
                if self.counting {
                    v.push(("element_stats".into(), "r"));
                }
                v.push(("stop".into(), "w"));
                if self.reconfigurable() {
                    v.push(("hotconfig".into(), "w"));
                }
                v
            }
            Some(e) => {
                // An element may make a generic handler writable (Click's writable `config`).
                let own_write = |n: &str| {
                    self.graph.info[e]
                        .handlers
                        .iter()
                        .any(|h| h.name == n && h.write)
                };
                let mut v: Vec<(String, &'static str)> = ELEMENT_HANDLERS
                    .iter()
                    .map(|h| (h.to_string(), if own_write(h) { "rw" } else { "r" }))
                    .collect();
                if self.has_task_handlers(e) {
                    v.extend(TASK_HANDLERS.iter().map(|h| (h.to_string(), "r")));
                }
                for h in &self.graph.info[e].handlers {
                    if ELEMENT_HANDLERS.contains(&h.name) {
                        continue;
                    }
                    let mode = match (h.read, h.write) {
                        (true, true) => "rw",
                        (true, false) => "r",
                        _ => "w",
                    };
                    v.push((h.name.to_string(), mode));
                }
                v
            }
        }
    }

    pub(crate) fn split_path(&self, path: &str) -> Result<(Option<usize>, String), HandlerError> {
        match path.rsplit_once('.') {
            Some((el, h)) => match self.graph.names.get(el) {
                Some(&e) => Ok((Some(e), h.to_string())),
                None => Err(HandlerError::NoElement(el.to_string())),
            },
            None => Ok((None, path.to_string())),
        }
    }

    /// Reads handler `path` (`elem.handler` or a router handler).
    pub fn read_path(&mut self, path: &str) -> Result<String, HandlerError> {
        self.read_path_param(path, None)
    }

    /// Reads handler `path` with a parameter (for handlers declared with [`Handler::param`];
    /// any other handler refuses a parameter).
    pub fn read_path_param(
        &mut self,
        path: &str,
        param: Option<&str>,
    ) -> Result<String, HandlerError> {
        let (e, h) = self.split_path(path)?;
        self.read_handler_param(e, &h, param)
    }

    /// Reads handler `path` as the handler wrote it, without the newline that
    /// [`Router::read_path`] adds to a value lacking one (what ControlSocket sends, as Click's
    /// does).
    pub fn read_path_verbatim(
        &mut self,
        path: &str,
        param: Option<&str>,
    ) -> Result<String, HandlerError> {
        let (e, h) = self.split_path(path)?;
        self.read_value(e, &h, param, true)
    }

    /// Writes handler `path` (`elem.handler` or a router handler).
    pub fn write_path(&mut self, path: &str, value: &str) -> Result<(), HandlerError> {
        let (e, h) = self.split_path(path)?;
        self.write_handler(e, &h, value)
    }

    pub(crate) fn router_read(&self, h: &str) -> Result<String, HandlerError> {
        match h {
            "config" => Ok(
                if self.graph.source.is_empty()
                    || self
                        .graph
                        .flat
                        .requirements
                        .iter()
                        .any(|r| r == "compact_config")
                {
                    sluice_lang::unparse(&self.graph.flat)
                } else {
                    self.graph.source.clone()
                },
            ),
            "flatconfig" => Ok(sluice_lang::unparse(&self.graph.flat)),
            "list" => {
                let mut s = format!("{}\n", self.graph.info.len());
                for i in &self.graph.info {
                    s.push_str(&i.name);
                    s.push('\n');
                }
                Ok(s)
            }
            "classes" => Ok(self
                .graph
                .class_names
                .iter()
                .map(|c| format!("{}\n", c))
                .collect()),
            "version" => Ok(format!("{}\n", VERSION)),
            "driver" => Ok("userlevel\n".to_string()),
            "timewarp" => Ok(format!("{}\n", self.clock.warp_desc())),
            "requirements" => Ok(self
                .graph
                .flat
                .requirement_pairs()
                .into_iter()
                .map(|(kind, value)| format!("{}\n{}\n", kind, value.unwrap_or_default()))
                .collect()),
            "handlers" => Ok(self
                .handler_list(None)
                .iter()
                .map(|(n, m)| format!("{}\t{}\n", n, m))
                .collect()),
            "tasks" => Ok(self.task_report()),
            "element_stats" if self.counting => Ok(self.element_stats()),
            "thread_cycles" => Ok(self
                .runtime
                .links
                .iter()
                .enumerate()
                .map(|(t, l)| format!("{} {}\n", t, l.busy_cycles.load(Ordering::Relaxed)))
                .collect()),
            "stop" => Err(HandlerError::NotReadable(h.into())),
            _ => Err(HandlerError::NoHandler(h.into())),
        }
    }

    pub(crate) fn generic_read(&self, e: usize, h: &str) -> Option<String> {
        let inf = &self.graph.info[e];
        Some(match h {
            "name" => format!("{}\n", inf.name),
            "class" => format!("{}\n", self.graph.flat.elements[e].class),
            "config" => inf.config(),
            "ports" => self.graph.ports_string(e),
            "handlers" => self
                .handler_list(Some(e))
                .iter()
                .map(|(n, m)| format!("{}\t{}\n", n, m))
                .collect(),
            "scheduled" if self.has_task_handlers(e) => {
                format!("{}\n", self.tasks.get(inf.task?).scheduled)
            }
            "home_thread" if self.has_task_handlers(e) => {
                let t = inf.task?;
                let thread = match self.runtime.task_thread.get(t) {
                    Some(th) => th.load(Ordering::Acquire),
                    None => self
                        .graph
                        .placement
                        .as_ref()
                        .map_or(0, |p| p.task_thread[t]),
                };
                format!("{}\n", thread)
            }
            _ => return None,
        })
    }

    /// True if element `e` has Click's task handler `scheduled`: it has a task and no
    /// handler of that name of its own.
    pub(crate) fn has_task_handlers(&self, e: usize) -> bool {
        let inf = &self.graph.info[e];
        inf.task.is_some() && !inf.handlers.iter().any(|h| h.name == "scheduled")
    }

    /// Reads handler `h` of element `e`, or of the router with `None`.
    pub fn read_handler(&mut self, e: Option<usize>, h: &str) -> Result<String, HandlerError> {
        self.read_handler_param(e, h, None)
    }

    /// Reads handler `h` of element `e` (or of the router), with a parameter if `param` is
    /// given. Replicas of a parameterised handler are not merged: the first one answers. An
    /// element handler's value ends with a newline.
    pub fn read_handler_param(
        &mut self,
        e: Option<usize>,
        h: &str,
        param: Option<&str>,
    ) -> Result<String, HandlerError> {
        self.read_value(e, h, param, false)
    }

    /// [`Router::read_handler_param`]; `verbatim` leaves an element handler's value as the
    /// element wrote it.
    pub(crate) fn read_value(
        &mut self,
        e: Option<usize>,
        h: &str,
        param: Option<&str>,
        verbatim: bool,
    ) -> Result<String, HandlerError> {
        let no_param = |full: String| {
            HandlerError::Failed(format!("handler '{}' does not take parameters", full))
        };
        let Some(e) = e else {
            if param.is_some() {
                return Err(no_param(h.to_string()));
            }
            if h == handlers::DROPS {
                return self.all_drops();
            }
            return self.router_read(h);
        };
        let full = format!("{}.{}", self.graph.info[e].name, h);
        if let Some(v) = self.generic_read(e, h) {
            return match param {
                Some(_) => Err(no_param(full)),
                None => Ok(v),
            };
        }
        let (takes_param, setting) = match self.graph.info[e].handlers.iter().find(|x| x.name == h)
        {
            None => return Err(HandlerError::NoHandler(full)),
            Some(x) if !x.read => return Err(HandlerError::NotReadable(full)),
            Some(x) if param.is_some() && !x.param => return Err(no_param(full)),
            Some(x) => (x.param, x.setting),
        };
        let mut v = if self.graph.info[e].table.counts_drops(h) {
            // Typed drops are answered from every copy's counts, with the packets the element
            // pushed to unconnected outputs, as the router-wide `drops` handler shows them.
            let counts = self.drop_counts(e)?;
            match h {
                handlers::DROPS => counts.iter().map(|c| c.1).sum::<u64>().to_string(),
                _ => handlers::details(counts.iter().map(|(r, n)| (r.as_str(), *n))),
            }
        } else {
            // A setting, or a parameterised handler, is answered by one copy: the first
            // reached.
            let single = setting || takes_param;
            let query = Query::Handler(h.to_string(), param.map(str::to_string));
            let mut vals = self.read_copies(e, &query, single)?;
            if vals.len() == 1 || single {
                vals.truncate(1);
                vals.pop().unwrap_or_default()
            } else {
                threads::merge_values(&vals)
            }
        };
        if !verbatim && !v.ends_with('\n') {
            v.push('\n');
        }
        Ok(v)
    }

    /// Answers `query` from every copy of element `e`: its shared form, or the copy here, its
    /// replicas and the copies other threads hold (only the first reached when `single`).
    pub(crate) fn read_copies(
        &mut self,
        e: usize,
        query: &Query,
        single: bool,
    ) -> Result<Vec<String>, HandlerError> {
        let mut vals = Vec::new();
        if let Some(sh) = &self.slots[e].shared {
            vals.push(shared_read(&**sh, query)?);
        } else {
            let table = self.graph.info[e].table.clone();
            if let Some(el) = self.slots[e].elem.as_deref_mut() {
                vals.push(call_read(&table, el, query)?);
            } else if self.other_threads(e).is_empty() {
                return Err(HandlerError::Failed(format!(
                    "element '{}' is busy",
                    self.graph.info[e].name
                )));
            }
            for r in &mut self.replicas[e] {
                if single && !vals.is_empty() {
                    break;
                }
                vals.push(call_read(&table, r.as_mut(), query)?);
            }
            for t in self.other_threads(e) {
                if single && !vals.is_empty() {
                    break;
                }
                let (tx, rx) = std::sync::mpsc::channel();
                let query = query.clone();
                self.runtime.post(
                    t,
                    Request::Read {
                        elem: e,
                        query,
                        reply: tx,
                    },
                );
                vals.push(self.await_reply(&rx)??);
            }
        }
        Ok(vals)
    }

    /// Element `e`'s drops by reason, summed over its copies, with the packets it pushed to
    /// unconnected outputs; reasons in declaration order.
    pub(crate) fn drop_counts(&mut self, e: usize) -> Result<Vec<(String, u64)>, HandlerError> {
        let mut counts = Vec::new();
        if self.graph.info[e].table.has_drops() {
            let copies = self.read_copies(e, &Query::Drops, false)?;
            counts = handlers::parse_details(&threads::merge_values(&copies));
        }
        let lost = self.runtime.lost[e].load(Ordering::Relaxed);
        if lost > 0 {
            counts.push((UNCONNECTED.to_string(), lost));
        }
        Ok(counts)
    }

    /// Packets element `e` dropped, for every reason and on every thread, pushes to
    /// unconnected outputs included: the sum of its lines in the router-wide `drops` handler.
    pub fn element_drops(&mut self, e: usize) -> Result<u64, HandlerError> {
        Ok(self.drop_counts(e)?.iter().map(|c| c.1).sum())
    }

    /// The router-wide `drops` handler: every drop of every element, as `ELEMENT<TAB>REASON<TAB>COUNT`
    /// lines, in element order (reasons with no drops left out).
    pub(crate) fn all_drops(&mut self) -> Result<String, HandlerError> {
        let mut s = String::new();
        for e in 0..self.graph.info.len() {
            for (reason, n) in self.drop_counts(e)?.into_iter().filter(|c| c.1 > 0) {
                s.push_str(&format!("{}\t{}\t{}\n", self.graph.info[e].name, reason, n));
            }
        }
        let retired = self
            .runtime
            .retired
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (name, n) in retired.iter() {
            s.push_str(&format!("{}\t{}\t{}\n", name, RETIRED, n));
        }
        Ok(s)
    }

    /// Waits for another thread's answer, serving this thread's own mail meanwhile so that
    /// two threads calling each other's handlers cannot deadlock.
    pub(crate) fn await_reply<T>(
        &mut self,
        rx: &std::sync::mpsc::Receiver<T>,
    ) -> Result<T, HandlerError> {
        let mut waited = 0;
        loop {
            match rx.recv_timeout(Duration::from_millis(1)) {
                Ok(v) => return Ok(v),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    self.service_mail(false);
                    if self.runtime.stop.load(Ordering::Relaxed) {
                        waited += 1;
                        if waited > 200 {
                            break;
                        }
                    }
                }
            }
        }
        Err(HandlerError::Failed(
            "the thread running that element has stopped".into(),
        ))
    }

    /// Writes handler `h` of element `e`, or of the router with `None`.
    pub fn write_handler(
        &mut self,
        e: Option<usize>,
        h: &str,
        value: &str,
    ) -> Result<(), HandlerError> {
        let Some(e) = e else {
            return match h {
                "stop" => {
                    self.runtime.stop_event();
                    Ok(())
                }
                "hotconfig" if self.reconfigurable() => self.hotconfig(value),
                // Click has no `timewarp` write handler under simulated time.
                "timewarp" if !self.clock.is_simulated() => {
                    self.clock.set_warp(value).map_err(HandlerError::Failed)
                }
                _ if ROUTER_READ.contains(&h) || h == "tasks" => {
                    Err(HandlerError::NotWritable(h.into()))
                }
                _ => Err(HandlerError::NoHandler(h.into())),
            };
        };
        let full = format!("{}.{}", self.graph.info[e].name, h);
        if TASK_HANDLERS.contains(&h) && self.has_task_handlers(e) {
            return Err(HandlerError::NotWritable(full));
        }
        match self.graph.info[e].handlers.iter().find(|x| x.name == h) {
            _ if ELEMENT_HANDLERS.contains(&h)
                && !self.graph.info[e]
                    .handlers
                    .iter()
                    .any(|x| x.name == h && x.write) =>
            {
                return Err(HandlerError::NotWritable(full))
            }
            None => return Err(HandlerError::NoHandler(full)),
            Some(x) if !x.write => return Err(HandlerError::NotWritable(full)),
            Some(_) => {}
        }
        if h == "config" {
            // A writable `config` reconfigures the element; reads then show the new value.
            self.write_handler_inner(e, h, value)?;
            self.graph.info[e].set_config(value.to_string());
            return Ok(());
        }
        self.write_handler_inner(e, h, value)
    }

    /// Runs element `e`'s write handler `h` on every copy of the element.
    pub(crate) fn write_handler_inner(
        &mut self,
        e: usize,
        h: &str,
        value: &str,
    ) -> Result<(), HandlerError> {
        if let Some(sh) = self.slots[e].shared.clone() {
            return sh
                .handler_table()
                .write_ref(sh.as_any(), h, value, &mut Cx { rt: self, me: e })
                .unwrap_or_else(|| Err(format!("handler '{}' is read-only", h)))
                .map_err(HandlerError::Failed);
        }
        let local = self.slots[e].elem.is_some();
        let others = self.other_threads(e);
        if !local && self.moved_to(e).is_none() {
            // The element is running on this thread (the write comes from inside its own
            // push, pull, task or timer): it runs the write when it returns, in order with
            // the pushes that reached it meanwhile.
            self.slots[e]
                .pending
                .push(Deferred::Write(h.to_string(), value.to_string()));
        }
        let table = self.graph.info[e].table.clone();
        if local {
            self.with_element(e, |el, cx| call_write(&table, el, h, value, cx))
                .unwrap_or_else(|| Err("element is busy".into()))
                .map_err(HandlerError::Failed)?;
        }
        // Replicas are swapped in for the primary copy, which must be here to do so.
        let replicas = if local { self.replicas[e].len() } else { 0 };
        for i in 0..replicas {
            std::mem::swap(
                &mut self.replicas[e][i],
                self.slots[e].elem.as_mut().expect("primary present"),
            );
            let r = self.with_element(e, |el, cx| call_write(&table, el, h, value, cx));
            std::mem::swap(
                &mut self.replicas[e][i],
                self.slots[e].elem.as_mut().expect("primary present"),
            );
            r.unwrap_or_else(|| Err("element is busy".into()))
                .map_err(HandlerError::Failed)?;
        }
        for t in others {
            let (tx, rx) = std::sync::mpsc::channel();
            self.runtime.post(
                t,
                Request::Write {
                    elem: e,
                    handler: h.to_string(),
                    value: value.to_string(),
                    reply: tx,
                },
            );
            self.await_reply(&rx)??;
        }
        Ok(())
    }

    /// True if the handler path names an existing readable (`write` false) or writable handler.
    pub fn check_handler(&self, path: &str, write: bool) -> Result<(), HandlerError> {
        let (e, h) = self.split_path(path)?;
        let list = self.handler_list(e);
        match list.iter().find(|(n, _)| *n == h) {
            None => Err(HandlerError::NoHandler(path.into())),
            Some((_, m)) if write && !m.contains('w') => {
                Err(HandlerError::NotWritable(path.into()))
            }
            Some((_, m)) if !write && !m.contains('r') => {
                Err(HandlerError::NotReadable(path.into()))
            }
            Some(_) => Ok(()),
        }
    }

    /// Expands a handler glob such as `*.count` or `c*.drops` into existing readable handler paths.
    pub fn expand_handler_glob(&self, pattern: &str) -> Vec<String> {
        let (ep, hp) = match pattern.rsplit_once('.') {
            Some((a, b)) => (Some(a), b),
            None => (None, pattern),
        };
        let mut out = Vec::new();
        match ep {
            None => {
                for (h, m) in self.handler_list(None) {
                    if m.contains('r') && glob_match(hp, &h) {
                        out.push(h);
                    }
                }
            }
            Some(ep) => {
                for e in 0..self.graph.info.len() {
                    if !glob_match(ep, &self.graph.info[e].name) {
                        continue;
                    }
                    for (h, m) in self.handler_list(Some(e)) {
                        if m.contains('r') && glob_match(hp, &h) {
                            out.push(format!("{}.{}", self.graph.info[e].name, h));
                        }
                    }
                }
            }
        }
        out
    }

    /// The `element_stats` router handler: for each element in configuration order, `NAME
    /// IN_PACKETS IN_BYTES OUT_PACKETS OUT_BYTES` since the router started, all threads.
    /// Elements that pass packets straight through count nothing.
    fn element_stats(&self) -> String {
        let mut s = String::new();
        for (inf, c) in self.graph.info.iter().zip(self.runtime.counts.iter()) {
            let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
            s.push_str(&format!(
                "{} {} {} {} {}\n",
                inf.name,
                get(&c.in_packets),
                get(&c.in_bytes),
                get(&c.out_packets),
                get(&c.out_bytes)
            ));
        }
        s
    }

    pub(crate) fn task_report(&self) -> String {
        let mut s = String::from("thread\telement\ttickets\truns\twork\tcycles/run\n");
        for (t, st) in self.tasks.all().iter().zip(self.task_stats()) {
            let per = st.cycles.checked_div(st.runs).unwrap_or(0);
            s.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\n",
                st.thread, st.element, t.tickets, st.runs, t.work, per
            ));
        }
        s
    }

    /// Each task's thread, element, runs and cycles spent, in task order (what the `tasks`
    /// handler prints, with the exact cycle total).
    pub fn task_stats(&self) -> Vec<TaskStat> {
        self.tasks
            .all()
            .iter()
            .enumerate()
            .map(|(id, t)| TaskStat {
                thread: match self.runtime.task_thread.get(id) {
                    Some(t) => t.load(Ordering::Acquire),
                    None => self
                        .graph
                        .placement
                        .as_ref()
                        .map(|p| p.task_thread[id])
                        .unwrap_or(0),
                },
                element: self.graph.info[t.elem].name.clone(),
                runs: t.runs,
                cycles: t.cycles,
            })
            .collect()
    }
}

/// One task's statistics ([`Router::task_stats`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskStat {
    /// The thread it runs on.
    pub thread: usize,
    /// Its element's name.
    pub element: String,
    /// Times it ran.
    pub runs: u64,
    /// Cycles it spent in all.
    pub cycles: u64,
}

/// Answers `query` for `el`, a copy of an element whose table is `table`.
pub(crate) fn call_read(
    table: &Handlers,
    el: &mut dyn Element,
    query: &Query,
) -> Result<String, HandlerError> {
    match query {
        Query::Drops => Ok(handlers::details(table.drop_counts(el.as_any()))),
        Query::Handler(h, param) => {
            match table.read(el.as_any_mut(), h, param.as_deref().unwrap_or("")) {
                Some(r) => r.map_err(HandlerError::Failed),
                None => Err(HandlerError::NotReadable(h.clone())),
            }
        }
    }
}

/// Answers `query` for the thread-safe form `sh` of an element.
fn shared_read(sh: &dyn SharedElement, query: &Query) -> Result<String, HandlerError> {
    let table = sh.handler_table();
    match query {
        Query::Drops => Ok(handlers::details(table.drop_counts(sh.as_any()))),
        Query::Handler(h, param) => {
            match table.read_ref(sh.as_any(), h, param.as_deref().unwrap_or("")) {
                Some(r) => r.map_err(HandlerError::Failed),
                None => Err(HandlerError::NotReadable(h.clone())),
            }
        }
    }
}

/// Writes element handler `h` of `el` through its table.
pub(crate) fn call_write(
    table: &Handlers,
    el: &mut dyn Element,
    h: &str,
    value: &str,
    cx: &mut Cx,
) -> Result<(), String> {
    table
        .write(el.as_any_mut(), h, value, cx)
        .unwrap_or_else(|| Err(format!("handler '{}' is read-only", h)))
}

/// Matches `*` and `?` shell-style wildcards.
pub fn glob_match(pattern: &str, s: &str) -> bool {
    pub(crate) fn go(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], s) || (!s.is_empty() && go(p, &s[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &s[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), s.as_bytes())
}
