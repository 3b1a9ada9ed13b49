//! The router: builds the element graph from a flat configuration, checks ports and
//! processing with Click's rules, configures and initialises elements in stages, moves batches
//! between elements, runs tasks and timers, and answers handlers.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use sluice_lang::args::Args;
use sluice_lang::{FlatConfig, Landmark};

use crate::batch::Batch;
use crate::context::{ConfigCx, Cx, InitCx, NotifierId};
use crate::element::{Element, ElementClass};
use crate::library::Library;
use crate::ports::{FlowCode, PortCount, Processing, ProcessingSpec};
use crate::sched::{Notifier, TaskList, TimerQueue};
use crate::time::Clock;

/// Sluice's version string.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortRef {
    pub(crate) elem: usize,
    pub(crate) port: usize,
}

pub(crate) struct Slot {
    pub(crate) elem: Option<Box<dyn Element>>,
    pending: Vec<(usize, Batch)>,
}

pub(crate) struct ElemInfo {
    pub(crate) name: String,
    pub(crate) class: ElementClass,
    pub(crate) config: String,
    pub(crate) landmark: Landmark,
    pub(crate) ninputs: usize,
    pub(crate) noutputs: usize,
    pub(crate) in_push: Vec<bool>,
    pub(crate) out_push: Vec<bool>,
    pub(crate) flow: FlowCode,
    /// All connections of each input / output (for router context).
    in_peers: Vec<Vec<PortRef>>,
    out_peers: Vec<Vec<PortRef>>,
    pub(crate) task: Option<usize>,
    pub(crate) empty_notifier: Option<NotifierId>,
}

/// Options for building a router.
#[derive(Clone, Debug, Default)]
pub struct RouterOptions {
    /// Run on a simulated clock (`--simtime`).
    pub simtime: bool,
    /// The original configuration text, for the `config` handler.
    pub source: String,
    /// Stop after configuring: check the configuration without initialising elements (no
    /// files or devices are opened).
    pub check_only: bool,
}

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

/// Handlers every element has, besides its own.
const ELEMENT_HANDLERS: &[&str] = &["name", "class", "config", "ports", "handlers"];
/// Router-wide read handlers.
const ROUTER_READ: &[&str] = &[
    "config",
    "flatconfig",
    "list",
    "classes",
    "version",
    "requirements",
    "handlers",
];

/// A running configuration.
pub struct Router {
    pub(crate) slots: Vec<Slot>,
    pub(crate) info: Vec<ElemInfo>,
    pub(crate) names: HashMap<String, usize>,
    outs: Vec<Box<[Option<PortRef>]>>,
    ins: Vec<Box<[Option<PortRef>]>>,
    pub(crate) tasks: TaskList,
    pub(crate) timers: TimerQueue,
    pub(crate) notifiers: Vec<Notifier>,
    pub(crate) selects: Vec<(i32, usize)>,
    pub(crate) clock: Clock,
    pub(crate) stopped: bool,
    pub(crate) pending_stop_events: u32,
    pub(crate) driver_managers: Vec<usize>,
    flat: FlatConfig,
    source: String,
    class_names: Arc<Vec<&'static str>>,
    initialized: bool,
}

fn element_desc(name: &str, class: &str) -> String {
    format!("'{} :: {}'", name, class)
}

impl Router {
    /// Builds, configures and initialises a router. On failure returns every error found,
    /// each prefixed with the configuration's `file:line`.
    pub fn new(
        flat: FlatConfig,
        lib: &Library,
        opts: RouterOptions,
    ) -> Result<Router, Vec<String>> {
        let mut errors = Vec::new();
        let n = flat.elements.len();
        let mut info = Vec::with_capacity(n);
        let mut slots = Vec::with_capacity(n);
        let mut names = HashMap::new();
        let mut ninputs = vec![0usize; n];
        let mut noutputs = vec![0usize; n];
        for c in &flat.connections {
            noutputs[c.from] = noutputs[c.from].max(c.from_port + 1);
            ninputs[c.to] = ninputs[c.to].max(c.to_port + 1);
        }
        for (i, fe) in flat.elements.iter().enumerate() {
            names.insert(fe.name.clone(), i);
            let class = match lib.get(&fe.class) {
                Some(c) => *c,
                None => {
                    errors.push(format!(
                        "{}: unknown element class '{}'",
                        fe.landmark, fe.class
                    ));
                    ElementClass {
                        name: "<unknown>",
                        ports: "-/-",
                        processing: "a/a",
                        flow: "",
                        source: "",
                        make: || Box::new(Unknown),
                    }
                }
            };
            if class.name != "<unknown>" {
                match PortCount::parse(class.ports) {
                    Some(pc) => {
                        if let Err(m) = pc.check(ninputs[i], noutputs[i]) {
                            errors.push(format!(
                                "{}: {} {}",
                                fe.landmark,
                                element_desc(&fe.name, &fe.class),
                                m
                            ));
                        }
                    }
                    None => errors.push(format!(
                        "{}: class {} has a bad port spec",
                        fe.landmark, fe.class
                    )),
                }
            }
            slots.push(Slot {
                elem: Some((class.make)()),
                pending: Vec::new(),
            });
            info.push(ElemInfo {
                name: fe.name.clone(),
                class,
                config: fe.config.clone(),
                landmark: fe.landmark.clone(),
                ninputs: ninputs[i],
                noutputs: noutputs[i],
                in_push: vec![true; ninputs[i]],
                out_push: vec![true; noutputs[i]],
                flow: FlowCode::parse(class.flow)
                    .unwrap_or_else(|| FlowCode::parse("").expect("default flow code")),
                in_peers: vec![Vec::new(); ninputs[i]],
                out_peers: vec![Vec::new(); noutputs[i]],
                task: None,
                empty_notifier: None,
            });
        }
        for c in &flat.connections {
            info[c.from].out_peers[c.from_port].push(PortRef {
                elem: c.to,
                port: c.to_port,
            });
            info[c.to].in_peers[c.to_port].push(PortRef {
                elem: c.from,
                port: c.from_port,
            });
        }
        let class_names = Arc::new(lib.classes().map(|c| c.name).collect());
        let mut rt = Router {
            slots,
            info,
            names,
            outs: Vec::new(),
            ins: Vec::new(),
            tasks: TaskList::default(),
            timers: TimerQueue::default(),
            notifiers: Vec::new(),
            selects: Vec::new(),
            clock: if opts.simtime {
                Clock::simulated()
            } else {
                Clock::real()
            },
            stopped: false,
            pending_stop_events: 0,
            driver_managers: Vec::new(),
            flat,
            source: opts.source,
            class_names,
            initialized: false,
        };
        if errors.is_empty() {
            rt.resolve_processing(&mut errors);
        }
        if errors.is_empty() {
            rt.check_connections(&mut errors);
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        rt.configure_all(&mut errors);
        if !errors.is_empty() {
            return Err(errors);
        }
        if opts.check_only {
            return Ok(rt);
        }
        rt.initialize_all(&mut errors);
        if !errors.is_empty() {
            return Err(errors);
        }
        rt.initialized = true;
        Ok(rt)
    }

    fn desc(&self, e: usize) -> String {
        element_desc(&self.info[e].name, &self.flat.elements[e].class)
    }

    /// Resolves agnostic ports: each element's agnostic ports take the processing of whatever
    /// they are connected to; unconstrained ones become push.
    fn resolve_processing(&mut self, errors: &mut Vec<String>) {
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
        // mode[e]: resolved processing of element e's agnostic ports.
        let mut mode: Vec<Option<Processing>> = vec![None; n];
        let mut changed = true;
        let mut conflict = vec![false; n];
        while changed {
            changed = false;
            for c in &self.flat.connections {
                let from = match spec(c.from).output(c.from_port) {
                    Processing::Agnostic => mode[c.from],
                    p => Some(p),
                };
                let to = match spec(c.to).input(c.to_port) {
                    Processing::Agnostic => mode[c.to],
                    p => Some(p),
                };
                let mut set =
                    |e: usize, p: Processing, mode: &mut Vec<Option<Processing>>| match mode[e] {
                        None => {
                            mode[e] = Some(p);
                            changed = true;
                        }
                        Some(q) if q != p => conflict[e] = true,
                        _ => {}
                    };
                if spec(c.from).output(c.from_port) == Processing::Agnostic {
                    if let Some(p) = to {
                        set(c.from, p, &mut mode);
                    }
                }
                if spec(c.to).input(c.to_port) == Processing::Agnostic {
                    if let Some(p) = from {
                        set(c.to, p, &mut mode);
                    }
                }
            }
        }
        for e in 0..n {
            if conflict[e] {
                errors.push(format!(
                    "{}: agnostic {} in mixed context: some ports push, some pull",
                    self.info[e].landmark,
                    self.desc(e)
                ));
            }
            let m = mode[e].unwrap_or(Processing::Push);
            let s = spec(e);
            let inf = &mut self.info[e];
            for p in 0..inf.ninputs {
                inf.in_push[p] = match s.input(p) {
                    Processing::Agnostic => m == Processing::Push,
                    x => x == Processing::Push,
                };
            }
            for p in 0..inf.noutputs {
                inf.out_push[p] = match s.output(p) {
                    Processing::Agnostic => m == Processing::Push,
                    x => x == Processing::Push,
                };
            }
        }
    }

    /// Click's connection rules: push to push, pull to pull, push outputs and pull inputs
    /// connected exactly once, every port in range used.
    fn check_connections(&mut self, errors: &mut Vec<String>) {
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
            let mut outs = Vec::with_capacity(inf.noutputs);
            for p in 0..inf.noutputs {
                let peers = &inf.out_peers[p];
                if peers.is_empty() {
                    errors.push(format!(
                        "{}: {} output {} not connected",
                        inf.landmark,
                        self.desc(e),
                        p
                    ));
                } else if inf.out_push[p] && peers.len() > 1 {
                    errors.push(format!(
                        "{}: {} push output {} connected more than once",
                        inf.landmark,
                        self.desc(e),
                        p
                    ));
                }
                outs.push(if inf.out_push[p] {
                    peers.first().copied()
                } else {
                    None
                });
            }
            let mut ins = Vec::with_capacity(inf.ninputs);
            for p in 0..inf.ninputs {
                let peers = &inf.in_peers[p];
                if peers.is_empty() {
                    errors.push(format!(
                        "{}: {} input {} not connected",
                        inf.landmark,
                        self.desc(e),
                        p
                    ));
                } else if !inf.in_push[p] && peers.len() > 1 {
                    errors.push(format!(
                        "{}: {} pull input {} connected more than once",
                        inf.landmark,
                        self.desc(e),
                        p
                    ));
                }
                ins.push(if inf.in_push[p] {
                    None
                } else {
                    peers.first().copied()
                });
            }
            self.outs.push(outs.into_boxed_slice());
            self.ins.push(ins.into_boxed_slice());
        }
    }

    fn configure_all(&mut self, errors: &mut Vec<String>) {
        for e in 0..self.slots.len() {
            let mut el = self.slots[e]
                .elem
                .take()
                .expect("element present while configuring");
            let mut args = Args::new(&self.info[e].config);
            let res = el.configure(&mut args, &mut ConfigCx { rt: self, me: e });
            let mut msgs: Vec<String> = args.errors().to_vec();
            match args.complete() {
                Ok(()) => {}
                Err(more) => {
                    for m in more {
                        if !msgs.contains(&m) {
                            msgs.push(m);
                        }
                    }
                }
            }
            if res.is_err() && msgs.is_empty() {
                msgs.push("configuration error".into());
            }
            if !msgs.is_empty() {
                errors.push(format!(
                    "{}: While configuring {}:",
                    self.info[e].landmark,
                    self.desc(e)
                ));
                for m in msgs {
                    errors.push(format!("  {}", m));
                }
            }
            self.slots[e].elem = Some(el);
        }
    }

    fn initialize_all(&mut self, errors: &mut Vec<String>) {
        for e in 0..self.slots.len() {
            let mut el = self.slots[e]
                .elem
                .take()
                .expect("element present while initialising");
            let res = el.initialize(&mut InitCx {
                cx: Cx { rt: self, me: e },
            });
            self.slots[e].elem = Some(el);
            if let Err(m) = res {
                errors.push(format!(
                    "{}: While initializing {}:",
                    self.info[e].landmark,
                    self.desc(e)
                ));
                errors.push(format!("  {}", m));
            }
        }
    }

    // ---- packet movement ----

    #[inline]
    pub(crate) fn push_out(&mut self, from: usize, port: usize, batch: Batch) {
        if let Some(Some(to)) = self.outs[from].get(port).copied() {
            self.push_into(to.elem, to.port, batch);
        }
    }

    /// Pushes `batch` into input `port` of element `e`. If that element is already running
    /// (a push cycle), the batch waits and is delivered when it returns.
    #[inline]
    pub(crate) fn push_into(&mut self, e: usize, port: usize, batch: Batch) {
        let Some(mut el) = self.slots[e].elem.take() else {
            self.slots[e].pending.push((port, batch));
            return;
        };
        el.push(port, batch, &mut Cx { rt: self, me: e });
        self.restore(e, el);
    }

    #[inline]
    fn restore(&mut self, e: usize, mut el: Box<dyn Element>) {
        while !self.slots[e].pending.is_empty() {
            let (port, batch) = self.slots[e].pending.remove(0);
            el.push(port, batch, &mut Cx { rt: self, me: e });
        }
        self.slots[e].elem = Some(el);
    }

    #[inline]
    pub(crate) fn pull_in(&mut self, to: usize, port: usize, max: usize) -> Batch {
        let Some(Some(from)) = self.ins[to].get(port).copied() else {
            return Batch::new();
        };
        let Some(mut el) = self.slots[from.elem].elem.take() else {
            return Batch::new();
        };
        let b = el.pull(
            from.port,
            max.min(crate::batch::BATCH_MAX),
            &mut Cx {
                rt: self,
                me: from.elem,
            },
        );
        self.restore(from.elem, el);
        b
    }

    /// Runs `f` on element `e` with a context; `None` if the element is busy (re-entrant call).
    pub fn with_element<R>(
        &mut self,
        e: usize,
        f: impl FnOnce(&mut dyn Element, &mut Cx) -> R,
    ) -> Option<R> {
        let mut el = self.slots.get_mut(e)?.elem.take()?;
        let r = f(&mut *el, &mut Cx { rt: self, me: e });
        self.restore(e, el);
        Some(r)
    }

    // ---- notifiers and router context ----

    pub(crate) fn new_notifier(&mut self, active: bool) -> NotifierId {
        self.notifiers.push(Notifier {
            active,
            listeners: Vec::new(),
        });
        self.notifiers.len() - 1
    }

    #[inline]
    pub(crate) fn set_notifier(&mut self, nid: NotifierId, active: bool) {
        let n = &mut self.notifiers[nid];
        if n.active != active {
            n.active = active;
            if active {
                for i in 0..self.notifiers[nid].listeners.len() {
                    let t = self.notifiers[nid].listeners[i];
                    self.tasks.schedule(t);
                }
            }
        }
    }

    pub(crate) fn upstream_empty_notifiers(
        &self,
        e: usize,
        port: usize,
    ) -> Option<Vec<NotifierId>> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.info.len()];
        let mut stack: Vec<PortRef> = self.info[e].in_peers.get(port)?.clone();
        while let Some(up) = stack.pop() {
            let inf = &self.info[up.elem];
            if let Some(n) = inf.empty_notifier {
                if !out.contains(&n) {
                    out.push(n);
                }
                continue;
            }
            if seen[up.elem] {
                continue;
            }
            seen[up.elem] = true;
            let mut any = false;
            for i in 0..inf.ninputs {
                if !inf.in_push[i] && inf.flow.flows(i, up.port) {
                    any = true;
                    stack.extend(inf.in_peers[i].iter().copied());
                }
            }
            if !any {
                return None;
            }
        }
        Some(out)
    }

    pub(crate) fn find_flow(
        &self,
        e: usize,
        port: usize,
        down: bool,
        pred: &dyn Fn(&dyn Element) -> bool,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.info.len()];
        let start = if down {
            self.info[e].out_peers.get(port)
        } else {
            self.info[e].in_peers.get(port)
        };
        let mut stack: Vec<PortRef> = start.cloned().unwrap_or_default();
        while let Some(pr) = stack.pop() {
            if seen[pr.elem] {
                continue;
            }
            seen[pr.elem] = true;
            if let Some(el) = self.slots[pr.elem].elem.as_deref() {
                if pred(el) {
                    out.push(pr.elem);
                    continue;
                }
            }
            let inf = &self.info[pr.elem];
            if down {
                for o in 0..inf.noutputs {
                    if inf.flow.flows(pr.port, o) {
                        stack.extend(inf.out_peers[o].iter().copied());
                    }
                }
            } else {
                for i in 0..inf.ninputs {
                    if inf.flow.flows(i, pr.port) {
                        stack.extend(inf.in_peers[i].iter().copied());
                    }
                }
            }
        }
        out
    }

    // ---- handlers ----

    /// Number of elements.
    pub fn nelements(&self) -> usize {
        self.info.len()
    }

    /// Name of element `e`.
    pub fn element_name(&self, e: usize) -> &str {
        &self.info[e].name
    }

    /// Index of the element called `name`.
    pub fn element_index(&self, name: &str) -> Option<usize> {
        self.names.get(name).copied()
    }

    /// Handler names of element `e` (or the router's with `None`), with "r", "w" or "rw".
    pub fn handler_list(&self, e: Option<usize>) -> Vec<(String, &'static str)> {
        match e {
            None => {
                let mut v: Vec<(String, &'static str)> =
                    ROUTER_READ.iter().map(|h| (h.to_string(), "r")).collect();
                v.push(("stop".into(), "w"));
                v
            }
            Some(e) => {
                let mut v: Vec<(String, &'static str)> = ELEMENT_HANDLERS
                    .iter()
                    .map(|h| (h.to_string(), "r"))
                    .collect();
                if let Some(el) = self.slots[e].elem.as_deref() {
                    for h in el.handlers() {
                        let mode = match (h.read, h.write) {
                            (true, true) => "rw",
                            (true, false) => "r",
                            _ => "w",
                        };
                        v.push((h.name.to_string(), mode));
                    }
                }
                v
            }
        }
    }

    fn split_path(&self, path: &str) -> Result<(Option<usize>, String), HandlerError> {
        match path.rsplit_once('.') {
            Some((el, h)) => match self.names.get(el) {
                Some(&e) => Ok((Some(e), h.to_string())),
                None => Err(HandlerError::NoElement(el.to_string())),
            },
            None => Ok((None, path.to_string())),
        }
    }

    /// Reads handler `path` (`elem.handler` or a router handler).
    pub fn read_path(&mut self, path: &str) -> Result<String, HandlerError> {
        let (e, h) = self.split_path(path)?;
        self.read_handler(e, &h)
    }

    /// Writes handler `path` (`elem.handler` or a router handler).
    pub fn write_path(&mut self, path: &str, value: &str) -> Result<(), HandlerError> {
        let (e, h) = self.split_path(path)?;
        self.write_handler(e, &h, value)
    }

    /// Reads handler `h` of element `e`, or of the router with `None`.
    pub fn read_handler(&mut self, e: Option<usize>, h: &str) -> Result<String, HandlerError> {
        let Some(e) = e else {
            return match h {
                "config" => Ok(if self.source.is_empty() {
                    sluice_lang::unparse(&self.flat)
                } else {
                    self.source.clone()
                }),
                "flatconfig" => Ok(sluice_lang::unparse(&self.flat)),
                "list" => {
                    let mut s = format!("{}\n", self.info.len());
                    for i in &self.info {
                        s.push_str(&i.name);
                        s.push('\n');
                    }
                    Ok(s)
                }
                "classes" => Ok(self
                    .class_names
                    .iter()
                    .map(|c| format!("{}\n", c))
                    .collect()),
                "version" => Ok(format!("{}\n", VERSION)),
                "requirements" => Ok(self
                    .flat
                    .requirements
                    .iter()
                    .map(|r| format!("{}\n", r))
                    .collect()),
                "handlers" => Ok(self
                    .handler_list(None)
                    .iter()
                    .map(|(n, m)| format!("{}\t{}\n", n, m))
                    .collect()),
                "stop" => Err(HandlerError::NotReadable(h.into())),
                _ => Err(HandlerError::NoHandler(h.into())),
            };
        };
        let inf = &self.info[e];
        match h {
            "name" => return Ok(format!("{}\n", inf.name)),
            "class" => return Ok(format!("{}\n", self.flat.elements[e].class)),
            "config" => return Ok(format!("{}\n", inf.config)),
            "ports" => {
                let side = |push: &[bool]| {
                    push.iter()
                        .map(|&p| if p { "push" } else { "pull" })
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Ok(format!(
                    "{} input{}\n{}\n{} output{}\n{}\n",
                    inf.ninputs,
                    if inf.ninputs == 1 { "" } else { "s" },
                    side(&inf.in_push),
                    inf.noutputs,
                    if inf.noutputs == 1 { "" } else { "s" },
                    side(&inf.out_push)
                ));
            }
            "handlers" => {
                return Ok(self
                    .handler_list(Some(e))
                    .iter()
                    .map(|(n, m)| format!("{}\t{}\n", n, m))
                    .collect());
            }
            _ => {}
        }
        let Some(el) = self.slots[e].elem.as_deref() else {
            return Err(HandlerError::Failed(format!(
                "element '{}' is busy",
                inf.name
            )));
        };
        match el.handlers().iter().find(|x| x.name == h) {
            None => Err(HandlerError::NoHandler(format!("{}.{}", inf.name, h))),
            Some(x) if !x.read => Err(HandlerError::NotReadable(format!("{}.{}", inf.name, h))),
            Some(_) => {
                let mut s = el.read_handler(h).unwrap_or_default();
                if !s.ends_with('\n') {
                    s.push('\n');
                }
                Ok(s)
            }
        }
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
                    self.stopped = true;
                    Ok(())
                }
                _ if ROUTER_READ.contains(&h) => Err(HandlerError::NotWritable(h.into())),
                _ => Err(HandlerError::NoHandler(h.into())),
            };
        };
        let full = format!("{}.{}", self.info[e].name, h);
        if ELEMENT_HANDLERS.contains(&h) {
            return Err(HandlerError::NotWritable(full));
        }
        let Some(el) = self.slots[e].elem.as_deref() else {
            return Err(HandlerError::Failed(format!(
                "element '{}' is busy",
                self.info[e].name
            )));
        };
        match el.handlers().iter().find(|x| x.name == h) {
            None => Err(HandlerError::NoHandler(full)),
            Some(x) if !x.write => Err(HandlerError::NotWritable(full)),
            Some(_) => {
                let h = h.to_string();
                self.with_element(e, |el, cx| el.write_handler(&h, value, cx))
                    .unwrap_or_else(|| Err("element is busy".into()))
                    .map_err(HandlerError::Failed)
            }
        }
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

    /// The flat configuration the router was built from.
    pub fn flat_config(&self) -> &FlatConfig {
        &self.flat
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
                for e in 0..self.info.len() {
                    if !glob_match(ep, &self.info[e].name) {
                        continue;
                    }
                    for (h, m) in self.handler_list(Some(e)) {
                        if m.contains('r') && glob_match(hp, &h) {
                            out.push(format!("{}.{}", self.info[e].name, h));
                        }
                    }
                }
            }
        }
        out
    }

    // ---- driver ----

    /// True once the router has been asked to stop.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Asks the router to stop.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    fn handle_stop_events(&mut self) {
        while self.pending_stop_events > 0 {
            self.pending_stop_events -= 1;
            if self.driver_managers.is_empty() {
                self.stopped = true;
            } else {
                for i in 0..self.driver_managers.len() {
                    let dm = self.driver_managers[i];
                    self.with_element(dm, |el, cx| el.driver_stop_event(cx));
                }
            }
        }
    }

    fn run_due_timers(&mut self) {
        let now = self.clock.now();
        while let Some((e, id)) = self.timers.pop_due(now) {
            self.with_element(e, |el, cx| el.run_timer(id, cx));
            if self.stopped {
                return;
            }
        }
    }

    fn poll_selects(&mut self, timeout_ms: i32) {
        if self.selects.is_empty() {
            if timeout_ms > 0 {
                std::thread::sleep(std::time::Duration::from_millis(timeout_ms as u64));
            }
            return;
        }
        let mut fds: Vec<libc::pollfd> = self
            .selects
            .iter()
            .map(|&(fd, _)| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfd structs.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if n <= 0 {
            return;
        }
        let ready: Vec<(i32, usize)> = fds
            .iter()
            .zip(self.selects.iter())
            .filter(|(p, _)| p.revents != 0)
            .map(|(_, &s)| s)
            .collect();
        for (fd, e) in ready {
            if self.selects.contains(&(fd, e)) {
                self.with_element(e, |el, cx| el.selected(fd, cx));
            }
        }
    }

    /// Runs the router until it stops: tasks by stride scheduling, timers, watched file
    /// descriptors. Stops on a driver stop event, a `stop` handler write, or when nothing can
    /// ever run again (no task, timer or watched descriptor).
    pub fn run(&mut self) {
        let mut rounds: u32 = 0;
        while !self.stopped {
            self.run_due_timers();
            self.handle_stop_events();
            if self.stopped {
                break;
            }
            if self.tasks.any_runnable() {
                for _ in 0..64 {
                    let Some(id) = self.tasks.next() else { break };
                    let e = self.tasks.get(id).elem;
                    if self.with_element(e, |el, cx| el.run_task(cx)) == Some(true) {
                        self.tasks.note_work(id);
                    }
                    if self.pending_stop_events > 0 || self.stopped {
                        break;
                    }
                }
                rounds = rounds.wrapping_add(1);
                if rounds % 64 == 0 {
                    self.poll_selects(0);
                }
                continue;
            }
            self.handle_stop_events();
            if self.stopped {
                break;
            }
            match self.timers.next_expiry() {
                Some(at) if self.clock.is_simulated() => {
                    self.poll_selects(0);
                    self.clock.advance_to(at);
                }
                Some(at) => {
                    let wait = (at - self.clock.now()).0;
                    if wait > 0 {
                        let ms = ((wait + 999_999) / 1_000_000).min(1000) as i32;
                        self.poll_selects(ms);
                    }
                }
                None if !self.selects.is_empty() => self.poll_selects(1000),
                None => self.stopped = true,
            }
        }
    }

    /// Calls every element's cleanup (flushing output files); the router stays inspectable.
    pub fn cleanup(&mut self) {
        if !self.initialized {
            return;
        }
        self.initialized = false;
        for e in 0..self.slots.len() {
            self.with_element(e, |el, cx| el.cleanup(cx));
        }
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        self.cleanup();
    }
}

/// Matches `*` and `?` shell-style wildcards.
pub fn glob_match(pattern: &str, s: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
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

/// Placeholder instance for a class that does not exist (the router reports the error).
struct Unknown;

impl Element for Unknown {}
