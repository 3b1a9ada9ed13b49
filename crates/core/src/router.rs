//! The router: builds the element graph from a flat configuration, checks ports and
//! processing with Click's rules, configures and initialises elements in stages, moves batches
//! between elements, runs tasks and timers, and answers handlers.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use sluice_lang::args::Args;
use sluice_lang::{FlatConfig, Landmark};

use crate::batch::Batch;
use crate::context::{ConfigCx, Cx, InitCx, NotifierId};
use crate::cpu::cycles;
use crate::element::{Element, ElementClass, Handler, SharedElement};
use crate::library::Library;
use crate::ports::{FlowCode, PortCount, Processing, ProcessingSpec};
use crate::sched::{Notifier, TaskList, TimerQueue};
use crate::threads::{self, Adoption, Concurrency, Placement, PlacementInput, Request, Runtime};
use crate::time::Clock;

mod driver;
mod hotswap;
mod wiring;

pub use hotswap::{ParseConfig, Reconfigure};
pub use wiring::PassThrough;

/// Sluice's version string.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortRef {
    pub(crate) elem: usize,
    pub(crate) port: usize,
}

pub(crate) struct Slot {
    pub(crate) elem: Option<Box<dyn Element>>,
    pub(crate) shared: Option<Arc<dyn SharedElement>>,
    /// What reached the element while it was running, in order, to be done when it returns.
    pending: Vec<Deferred>,
}

/// A push or a handler write that reached an element while it was running (re-entrantly,
/// from its own push, pull, task or timer).
enum Deferred {
    /// A batch for an input port.
    Push(usize, Batch),
    /// A write handler call: handler name and value.
    Write(String, String),
}

impl Slot {
    fn empty() -> Slot {
        Slot {
            elem: None,
            shared: None,
            pending: Vec::new(),
        }
    }
}

#[derive(Clone)]
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
    pub(crate) full_notifier: Option<NotifierId>,
    /// True if `empty_notifier` never becomes active (Click's idle signal).
    pub(crate) idle_notifier: bool,
    /// The element's handler table, kept so that handlers of elements owned by another
    /// thread can be listed.
    handlers: Vec<Handler>,
    concurrency: Concurrency,
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
    /// Worker threads (`-j`); 0 or 1 runs everything on the calling thread.
    pub threads: usize,
    /// Click's `-R`: a `hotconfig` write handler that replaces the configuration while the
    /// router runs, built this way.
    pub reconfigure: Option<Reconfigure>,
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
];

/// A running configuration.
pub struct Router {
    pub(crate) slots: Vec<Slot>,
    pub(crate) info: Vec<ElemInfo>,
    pub(crate) names: HashMap<String, usize>,
    outs: Vec<Box<[Option<PortRef>]>>,
    ins: Vec<Box<[Option<PortRef>]>>,
    /// Elements that pass packets straight through ([`PassThrough`]), by element.
    pass: HashMap<usize, PassThrough>,
    pub(crate) tasks: TaskList,
    pub(crate) timers: TimerQueue,
    pub(crate) notifiers: Arc<Vec<Notifier>>,
    pub(crate) selects: Vec<(i32, usize)>,
    pub(crate) clock: Clock,
    pub(crate) stopped: bool,
    pub(crate) driver_managers: Vec<usize>,
    flat: FlatConfig,
    source: String,
    class_names: Arc<Vec<&'static str>>,
    initialized: bool,
    /// This worker's thread number.
    pub(crate) thread: usize,
    pub(crate) runtime: Arc<Runtime>,
    /// Threads fixed by StaticThreadSched, by element.
    pub(crate) static_threads: HashMap<usize, usize>,
    /// Ticket multipliers set by ScheduleInfo, by element.
    pub(crate) ticket_scale: HashMap<usize, f64>,
    placement: Option<Placement>,
    /// Per-thread copies of replicated elements, gathered back after a multi-threaded run.
    replicas: Vec<Vec<Box<dyn Element>>>,
    /// True while workers run on several threads.
    running_threads: bool,
    /// Tasks woken here before their group arrived from another thread.
    orphans: Vec<usize>,
    /// Reused list of tasks woken by other threads.
    woken_scratch: Vec<usize>,
    /// Adaptive placement (worker 0): when to look next, and task cycles at the last look.
    balance_at: u64,
    balance_seen: Vec<u64>,
    /// When a drain that has not ended by itself is cut short.
    drain_until: Option<std::time::Instant>,
    /// Elements whose `run` handler a signal calls (Script's TYPE SIGNAL): (signal, element).
    pub(crate) signal_runs: Vec<(i32, usize)>,
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
        let clock = if opts.simtime {
            Clock::simulated()
        } else {
            Clock::real()
        };
        Router::build(flat, lib, opts, clock, HashMap::new())
    }

    /// [`Router::new`] on a given clock (a hot-swapped router keeps its predecessor's), knowing
    /// the class of each element of the router it replaces, by name.
    fn build(
        mut flat: FlatConfig,
        lib: &Library,
        opts: RouterOptions,
        clock: Clock,
        predecessors: HashMap<String, &'static str>,
    ) -> Result<Router, Vec<String>> {
        if opts.threads > threads::MAX_THREADS {
            return Err(vec![format!(
                "{} threads: at most {} are supported",
                opts.threads,
                threads::MAX_THREADS
            )]);
        }
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
                    Some(pc) => (ninputs[i], noutputs[i]) = pc.clamp(ninputs[i], noutputs[i]),
                    None => errors.push(format!(
                        "{}: class {} has a bad port spec",
                        fe.landmark, fe.class
                    )),
                }
            }
            let instance = (class.make)();
            slots.push(Slot {
                elem: Some(instance),
                shared: None,
                pending: Vec::new(),
            });
            let flow = FlowCode::parse(class.flow).unwrap_or_else(|| {
                errors.push(format!(
                    "{}: element class '{}' has a malformed flow code {:?}",
                    fe.landmark, class.name, class.flow
                ));
                FlowCode::all()
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
                flow,
                in_peers: vec![Vec::new(); ninputs[i]],
                out_peers: vec![Vec::new(); noutputs[i]],
                task: None,
                empty_notifier: None,
                full_notifier: None,
                idle_notifier: false,
                // Both depend on the configuration: filled in once the element is configured.
                handlers: Vec::new(),
                concurrency: Concurrency::Exclusive,
            });
        }
        // Click's check_hookup_range: a connection to a port the element does not have is
        // an error (reported at the element), and the connection is dropped.
        flat.connections.retain(|c| {
            let mut ok = true;
            for (e, port, n, what) in [
                (c.to, c.to_port, ninputs[c.to], "input"),
                (c.from, c.from_port, noutputs[c.from], "output"),
            ] {
                if port >= n && info[e].class.name != "<unknown>" {
                    errors.push(format!(
                        "{}: {} has no {} {}",
                        info[e].landmark,
                        element_desc(&info[e].name, &flat.elements[e].class),
                        what,
                        port
                    ));
                }
                ok &= port < n;
            }
            ok
        });
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
            pass: HashMap::new(),
            tasks: TaskList::default(),
            timers: TimerQueue::default(),
            notifiers: Arc::new(Vec::new()),
            selects: Vec::new(),
            clock,
            stopped: false,
            driver_managers: Vec::new(),
            flat,
            source: opts.source,
            class_names,
            initialized: false,
            thread: 0,
            runtime: Arc::new(Runtime::new(
                opts.threads.max(1),
                opts.reconfigure,
                predecessors,
            )),
            static_threads: HashMap::new(),
            ticket_scale: HashMap::new(),
            placement: None,
            replicas: Vec::new(),
            running_threads: false,
            orphans: Vec::new(),
            woken_scratch: Vec::new(),
            balance_at: 0,
            balance_seen: Vec::new(),
            drain_until: None,
            signal_runs: Vec::new(),
        };
        rt.replicas = (0..n).map(|_| Vec::new()).collect();
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
            rt.initialized = true;
            rt.cleanup();
            return Err(errors);
        }
        rt.initialized = true;
        if rt.runtime.nthreads() > 1 {
            match rt.compute_placement() {
                Ok(p) => rt.placement = Some(p),
                Err(e) => {
                    rt.cleanup();
                    return Err(e);
                }
            }
        }
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
        self.rewire();
    }

    fn configure_all(&mut self, errors: &mut Vec<String>) {
        sluice_lang::names::clear();
        let mut order: Vec<usize> = (0..self.slots.len()).collect();
        order.sort_by_key(|&e| {
            self.slots[e]
                .elem
                .as_ref()
                .map(|el| el.configure_phase())
                .unwrap_or(0)
        });
        for e in order {
            let mut el = self.slots[e]
                .elem
                .take()
                .expect("element present while configuring");
            let mut args = Args::new(&self.info[e].config);
            sluice_lang::names::set_scope(&self.info[e].name);
            let res = el.configure(&mut args, &mut ConfigCx { rt: self, me: e });
            self.info[e].concurrency = el.concurrency();
            self.info[e].handlers = el.handlers().to_vec();
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
        sluice_lang::names::set_scope("");
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
            // A shared element: this thread's handle is taken out while it runs (no reference
            // count traffic on the handle other threads use), like an exclusive element.
            match self.slots[e].shared.take() {
                Some(sh) => {
                    sh.push(port, batch, &mut Cx { rt: self, me: e });
                    self.restore_shared(e, sh);
                }
                None => self.slots[e].pending.push(Deferred::Push(port, batch)),
            }
            return;
        };
        el.push(port, batch, &mut Cx { rt: self, me: e });
        self.restore(e, el);
    }

    /// Puts element `e` back after it ran, first giving it what reached it meanwhile.
    #[inline]
    fn restore(&mut self, e: usize, mut el: Box<dyn Element>) {
        while !self.slots[e].pending.is_empty() {
            match self.slots[e].pending.remove(0) {
                Deferred::Push(port, batch) => el.push(port, batch, &mut Cx { rt: self, me: e }),
                Deferred::Write(h, value) => self.deferred_write(e, &mut *el, &h, &value),
            }
        }
        self.slots[e].elem = Some(el);
    }

    fn restore_shared(&mut self, e: usize, sh: Arc<dyn SharedElement>) {
        while !self.slots[e].pending.is_empty() {
            // A shared element takes handler writes while it runs: only pushes wait.
            if let Deferred::Push(port, batch) = self.slots[e].pending.remove(0) {
                sh.push(port, batch, &mut Cx { rt: self, me: e });
            }
        }
        self.slots[e].shared = Some(sh);
    }

    /// Runs a handler write that reached element `e` (here `el`) while it was running. Its
    /// caller has gone on, so an error is reported on standard error.
    fn deferred_write(&mut self, e: usize, el: &mut dyn Element, h: &str, value: &str) {
        if let Err(m) = el.write_handler(h, value, &mut Cx { rt: self, me: e }) {
            eprintln!("{}.{}: {}", self.info[e].name, h, m);
        }
    }

    /// Runs the handler writes that reached element `e` (here `el`, still running) since it
    /// started, as an element does that must see their effect before it returns (TimeFilter
    /// after its END_CALL); pushes still wait for its return.
    pub(crate) fn run_deferred_writes(&mut self, e: usize, el: &mut dyn Element) {
        let pending = std::mem::take(&mut self.slots[e].pending);
        let (writes, pushes): (Vec<_>, Vec<_>) = pending
            .into_iter()
            .partition(|d| matches!(d, Deferred::Write(..)));
        self.slots[e].pending = pushes;
        for w in writes {
            if let Deferred::Write(h, value) = w {
                self.deferred_write(e, el, &h, &value);
            }
        }
    }

    #[inline]
    pub(crate) fn pull_in(&mut self, to: usize, port: usize, max: usize) -> Batch {
        let Some(Some(from)) = self.ins[to].get(port).copied() else {
            return Batch::new();
        };
        let Some(mut el) = self.slots[from.elem].elem.take() else {
            let Some(sh) = self.slots[from.elem].shared.take() else {
                return Batch::new();
            };
            let b = sh.pull(
                from.port,
                max.min(crate::batch::BATCH_MAX),
                &mut Cx {
                    rt: self,
                    me: from.elem,
                },
            );
            self.restore_shared(from.elem, sh);
            return b;
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

    /// The Storage interface of element `e` (packets held, capacity), whichever thread shares
    /// it; `None` if it is no queue or is busy.
    pub fn storage_of(&self, e: usize) -> Option<(usize, usize)> {
        let slot = &self.slots[e];
        match (&slot.elem, &slot.shared) {
            (Some(el), _) => el.storage(),
            (None, Some(sh)) => sh.storage(),
            (None, None) => None,
        }
    }

    // ---- notifiers and router context ----

    pub(crate) fn new_notifier(&mut self, owner: usize, active: bool) -> NotifierId {
        let ns =
            Arc::get_mut(&mut self.notifiers).expect("notifiers are created before threads start");
        ns.push(Notifier {
            active: active.into(),
            listeners: Vec::new(),
            owner,
        });
        ns.len() - 1
    }

    pub(crate) fn add_listener(&mut self, nid: NotifierId, task: usize) {
        let ns =
            Arc::get_mut(&mut self.notifiers).expect("listeners are added before threads start");
        if !ns[nid].listeners.contains(&task) {
            ns[nid].listeners.push(task);
        }
    }

    /// Schedules task `t`, here or on the thread that owns it.
    #[inline]
    pub(crate) fn wake(&mut self, t: usize) {
        match self
            .runtime
            .task_thread
            .get(t)
            .map(|th| th.load(Ordering::Acquire))
        {
            Some(th) if th != self.thread => self.runtime.wake_task(th, t),
            _ => self.tasks.schedule(t),
        }
    }

    #[inline]
    pub(crate) fn set_notifier(&mut self, nid: NotifierId, active: bool) {
        // A plain load first: when the state does not change (the common case, e.g. a queue
        // that stays non-empty) the cache line is only read, not bounced between threads.
        if self.notifiers[nid].active.load(Ordering::Acquire) == active {
            return;
        }
        let was = self.notifiers[nid].active.swap(active, Ordering::AcqRel);
        if active && !was {
            for i in 0..self.notifiers[nid].listeners.len() {
                let t = self.notifiers[nid].listeners[i];
                self.wake(t);
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
    fn notifiers_along(&self, e: usize, port: usize, down: bool) -> Option<Vec<NotifierId>> {
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
                // `timewarp` is writable on the wall clock only.
                let warpable = |h: &str| h == "timewarp" && !self.clock.is_simulated();
                let mut v: Vec<(String, &'static str)> = ROUTER_READ
                    .iter()
                    .map(|&h| (h.to_string(), if warpable(h) { "rw" } else { "r" }))
                    .collect();
                v.push(("stop".into(), "w"));
                if self.reconfigurable() {
                    v.push(("hotconfig".into(), "w"));
                }
                v
            }
            Some(e) => {
                // An element may make a generic handler writable (Click's writable `config`).
                let own_write =
                    |n: &str| self.info[e].handlers.iter().any(|h| h.name == n && h.write);
                let mut v: Vec<(String, &'static str)> = ELEMENT_HANDLERS
                    .iter()
                    .map(|h| (h.to_string(), if own_write(h) { "rw" } else { "r" }))
                    .collect();
                if self.has_task_handlers(e) {
                    v.extend(TASK_HANDLERS.iter().map(|h| (h.to_string(), "r")));
                }
                for h in &self.info[e].handlers {
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

    fn router_read(&self, h: &str) -> Result<String, HandlerError> {
        match h {
            "config" => Ok(
                if self.source.is_empty()
                    || self.flat.requirements.iter().any(|r| r == "compact_config")
                {
                    sluice_lang::unparse(&self.flat)
                } else {
                    self.source.clone()
                },
            ),
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
            "driver" => Ok("userlevel\n".to_string()),
            "timewarp" => Ok(format!("{}\n", self.clock.warp_desc())),
            "requirements" => Ok(self
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
            "stop" => Err(HandlerError::NotReadable(h.into())),
            _ => Err(HandlerError::NoHandler(h.into())),
        }
    }

    fn generic_read(&self, e: usize, h: &str) -> Option<String> {
        let inf = &self.info[e];
        Some(match h {
            "name" => format!("{}\n", inf.name),
            "class" => format!("{}\n", self.flat.elements[e].class),
            "config" => inf.config.clone(),
            "ports" => self.ports_string(e),
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
                    None => self.placement.as_ref().map_or(0, |p| p.task_thread[t]),
                };
                format!("{}\n", thread)
            }
            _ => return None,
        })
    }

    /// True if element `e` has Click's task handler `scheduled`: it has a task and no
    /// handler of that name of its own.
    fn has_task_handlers(&self, e: usize) -> bool {
        let inf = &self.info[e];
        inf.task.is_some() && !inf.handlers.iter().any(|h| h.name == "scheduled")
    }

    /// Click's `ports` handler: per port its processing (`~` when the class's port is
    /// agnostic), `-` for packet counts, and the ports it connects to, in Click's order.
    fn ports_string(&self, e: usize) -> String {
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

    /// Threads other than this one that hold a copy of element `e` while threads run.
    fn other_threads(&self, e: usize) -> Vec<usize> {
        match &self.placement {
            Some(p) if self.running_threads => {
                if p.elem_threads[e].len() == 1 {
                    self.moved_to(e).into_iter().collect()
                } else {
                    p.elem_threads[e]
                        .iter()
                        .copied()
                        .filter(|&t| t != self.thread)
                        .collect()
                }
            }
            _ => Vec::new(),
        }
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
    fn read_value(
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
            return self.router_read(h);
        };
        let full = format!("{}.{}", self.info[e].name, h);
        if let Some(v) = self.generic_read(e, h) {
            return match param {
                Some(_) => Err(no_param(full)),
                None => Ok(v),
            };
        }
        let (takes_param, setting) = match self.info[e].handlers.iter().find(|x| x.name == h) {
            None => return Err(HandlerError::NoHandler(full)),
            Some(x) if !x.read => return Err(HandlerError::NotReadable(full)),
            Some(x) if param.is_some() && !x.param => return Err(no_param(full)),
            Some(x) => (x.param, x.setting),
        };
        // A setting, or a parameterised handler, is answered by one copy: the first reached.
        let single = setting || takes_param;
        let mut vals = Vec::new();
        if let Some(sh) = &self.slots[e].shared {
            vals.push(sh.read_handler(h).unwrap_or_default());
        } else {
            if let Some(el) = self.slots[e].elem.as_deref() {
                vals.push(call_read(el, h, param, takes_param)?);
            } else if self.other_threads(e).is_empty() {
                return Err(HandlerError::Failed(format!(
                    "element '{}' is busy",
                    self.info[e].name
                )));
            }
            for r in &self.replicas[e] {
                if single && !vals.is_empty() {
                    break;
                }
                vals.push(call_read(r.as_ref(), h, param, takes_param)?);
            }
            for t in self.other_threads(e) {
                if single && !vals.is_empty() {
                    break;
                }
                let (tx, rx) = std::sync::mpsc::channel();
                self.runtime.post(
                    t,
                    Request::Read {
                        elem: e,
                        handler: h.to_string(),
                        param: param.map(str::to_string),
                        reply: tx,
                    },
                );
                vals.push(self.await_reply(&rx)??);
            }
        }
        let mut v = if vals.len() == 1 || single {
            vals.truncate(1);
            vals.pop().unwrap_or_default()
        } else {
            threads::merge_values(&vals)
        };
        if !verbatim && !v.ends_with('\n') {
            v.push('\n');
        }
        Ok(v)
    }

    /// Waits for another thread's answer, serving this thread's own mail meanwhile so that
    /// two threads calling each other's handlers cannot deadlock.
    fn await_reply<T>(&mut self, rx: &std::sync::mpsc::Receiver<T>) -> Result<T, HandlerError> {
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
        let full = format!("{}.{}", self.info[e].name, h);
        if TASK_HANDLERS.contains(&h) && self.has_task_handlers(e) {
            return Err(HandlerError::NotWritable(full));
        }
        match self.info[e].handlers.iter().find(|x| x.name == h) {
            _ if ELEMENT_HANDLERS.contains(&h)
                && !self.info[e].handlers.iter().any(|x| x.name == h && x.write) =>
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
            self.info[e].config = value.to_string();
            return Ok(());
        }
        self.write_handler_inner(e, h, value)
    }

    /// Runs element `e`'s write handler `h` on every copy of the element.
    fn write_handler_inner(&mut self, e: usize, h: &str, value: &str) -> Result<(), HandlerError> {
        if let Some(sh) = self.slots[e].shared.clone() {
            return sh
                .write_handler(h, value, &mut Cx { rt: self, me: e })
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
        if local {
            let h2 = h.to_string();
            self.with_element(e, |el, cx| el.write_handler(&h2, value, cx))
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
            let h2 = h.to_string();
            let r = self.with_element(e, |el, cx| el.write_handler(&h2, value, cx));
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

    /// Answers handler calls posted by other threads, schedules tasks they woke, and (when
    /// `migrate`, i.e. between task runs) hands over or takes over task groups.
    pub(crate) fn service_mail(&mut self, migrate: bool) {
        if !self.runtime.links[self.thread]
            .pending
            .load(Ordering::Acquire)
        {
            return;
        }
        let mut woken = std::mem::take(&mut self.woken_scratch);
        let runtime = self.runtime.clone();
        let mail = runtime.take(self.thread, |t| woken.push(t));
        for &t in &woken {
            self.wake(t);
        }
        woken.clear();
        self.woken_scratch = woken;
        for m in mail {
            match m {
                Request::Read {
                    elem,
                    handler,
                    param,
                    reply,
                } => match self.slots[elem].elem.as_deref() {
                    Some(el) => {
                        let takes_param = self.info[elem]
                            .handlers
                            .iter()
                            .any(|x| x.name == handler && x.param);
                        let _ = reply.send(call_read(el, &handler, param.as_deref(), takes_param));
                    }
                    None => match self.moved_to(elem) {
                        Some(t) => self.runtime.post(
                            t,
                            Request::Read {
                                elem,
                                handler,
                                param,
                                reply,
                            },
                        ),
                        None => {
                            let _ = reply.send(Err(HandlerError::Failed("element is busy".into())));
                        }
                    },
                },
                Request::Write {
                    elem,
                    handler,
                    value,
                    reply,
                } => {
                    if self.slots[elem].elem.is_none() {
                        if let Some(t) = self.moved_to(elem) {
                            self.runtime.post(
                                t,
                                Request::Write {
                                    elem,
                                    handler,
                                    value,
                                    reply,
                                },
                            );
                            continue;
                        }
                    }
                    let r = match self
                        .with_element(elem, |el, cx| el.write_handler(&handler, &value, cx))
                    {
                        Some(r) => r.map_err(HandlerError::Failed),
                        None => {
                            // Running here (this thread waits inside it for another thread's
                            // answer): the write runs when it returns.
                            self.slots[elem]
                                .pending
                                .push(Deferred::Write(handler, value));
                            Ok(())
                        }
                    };
                    let _ = reply.send(r);
                }
                Request::Release { group, to } if migrate => self.release(group, to),
                Request::Adopt(a) if migrate => self.adopt(*a),
                r => self.runtime.post(self.thread, r),
            }
        }
    }

    /// The thread element `e` moved to, if it is no longer here.
    fn moved_to(&self, e: usize) -> Option<usize> {
        let home = self.runtime.elem_home.get(e)?.load(Ordering::Acquire);
        (home != self.thread).then_some(home)
    }

    /// Hands task group `g` (elements, tasks, timers, watched descriptors) to thread `to`.
    fn release(&mut self, g: usize, to: usize) {
        let Some(group) = self.placement.as_ref().map(|p| p.groups[g].clone()) else {
            return;
        };
        let mut a = Adoption {
            elems: Vec::new(),
            tasks: Vec::new(),
            timers: TimerQueue::default(),
            selects: Vec::new(),
        };
        for &e in &group.elems {
            if let Some(el) = self.slots[e].elem.take() {
                a.elems.push((e, el));
            }
            self.runtime.elem_home[e].store(to, Ordering::Release);
        }
        for &t in &group.tasks {
            a.tasks.push((t, self.tasks.get(t).scheduled));
            self.tasks.unschedule(t);
            self.runtime.task_thread[t].store(to, Ordering::Release);
        }
        a.timers = self.timers.split_off(|e| group.elems.contains(&e));
        a.selects = self
            .selects
            .iter()
            .copied()
            .filter(|(_, e)| group.elems.contains(e))
            .collect();
        self.selects.retain(|(_, e)| !group.elems.contains(e));
        self.runtime.post(to, Request::Adopt(Box::new(a)));
    }

    /// Takes over a task group released by another thread.
    fn adopt(&mut self, a: Adoption) {
        for (e, el) in a.elems {
            self.slots[e].elem = Some(el);
        }
        for (t, scheduled) in a.tasks {
            if scheduled {
                self.tasks.schedule(t);
            }
        }
        self.timers.absorb(a.timers);
        self.selects.extend(a.selects);
        for t in std::mem::take(&mut self.orphans) {
            self.wake(t);
        }
        self.runtime.migrating.fetch_sub(1, Ordering::AcqRel);
    }

    /// Adaptive placement, run by thread 0 now and then: measures what each task group cost
    /// since the last look and moves groups so the busiest thread gets lighter.
    fn balance(&mut self) {
        let now = cycles();
        if now < self.balance_at || self.runtime.migrating.load(Ordering::Acquire) > 0 {
            return;
        }
        self.balance_at = now + BALANCE_CYCLES;
        let Some(p) = &self.placement else { return };
        let tc: Vec<u64> = self
            .runtime
            .task_cycles
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        if self.balance_seen.len() != tc.len() {
            self.balance_seen = tc;
            return;
        }
        let cost: Vec<u64> = p
            .groups
            .iter()
            .map(|g| {
                g.tasks
                    .iter()
                    .map(|&t| tc[t].wrapping_sub(self.balance_seen[t]))
                    .sum()
            })
            .collect();
        let current: Vec<usize> = p
            .groups
            .iter()
            .map(|g| {
                g.tasks
                    .first()
                    .map(|&t| self.runtime.task_thread[t].load(Ordering::Acquire))
                    .unwrap_or(0)
            })
            .collect();
        self.balance_seen = tc;
        let moves = threads::rebalance(&p.groups, &cost, &current, self.runtime.nthreads());
        for (g, to) in moves {
            self.runtime.migrating.fetch_add(1, Ordering::AcqRel);
            self.runtime
                .post(current[g], Request::Release { group: g, to });
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

    /// Stops the router now, on every thread, without draining (a signal; a drain that
    /// takes too long).
    pub fn stop(&mut self) {
        self.stopped = true;
        self.runtime.stop_all();
    }

    /// The clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Where tasks and elements run, for a router with several threads.
    pub fn placement(&self) -> Option<&Placement> {
        self.placement.as_ref()
    }

    fn task_report(&self) -> String {
        let mut s = String::from("thread\telement\ttickets\truns\twork\tcycles/run\n");
        for (id, t) in self.tasks.all().iter().enumerate() {
            let th = match self.runtime.task_thread.get(id) {
                Some(t) => t.load(Ordering::Acquire),
                None => self
                    .placement
                    .as_ref()
                    .map(|p| p.task_thread[id])
                    .unwrap_or(0),
            };
            let per = t.cycles.checked_div(t.runs).unwrap_or(0);
            s.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\n",
                th, self.info[t.elem].name, t.tickets, t.runs, t.work, per
            ));
        }
        s
    }

    fn compute_placement(&mut self) -> Result<Placement, Vec<String>> {
        let n = self.info.len();
        let mut next = vec![Vec::new(); n];
        for (e, nx) in next.iter_mut().enumerate() {
            let inf = &self.info[e];
            for o in 0..inf.noutputs {
                if inf.out_push[o] {
                    nx.extend(inf.out_peers[o].iter().map(|p| p.elem));
                }
            }
            for i in 0..inf.ninputs {
                if !inf.in_push[i] {
                    nx.extend(inf.in_peers[i].iter().map(|p| p.elem));
                }
            }
        }
        let describe = |e: usize| self.desc(e);
        let inp = PlacementInput {
            nthreads: self.runtime.nthreads(),
            task_elem: self.tasks.all().iter().map(|t| t.elem).collect(),
            next,
            concurrency: self.info.iter().map(|i| i.concurrency).collect(),
            fixed: &self.static_threads,
            describe: &describe,
        };
        threads::place(&inp).map_err(|errs| {
            errs.into_iter()
                .map(|m| {
                    format!(
                        "{}: {}",
                        self.flat
                            .elements
                            .first()
                            .map(|e| e.landmark.to_string())
                            .unwrap_or_default(),
                        m
                    )
                })
                .collect()
        })
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

/// How often thread 0 reconsiders task placement (processor cycles: some tens of
/// milliseconds).
const BALANCE_CYCLES: u64 = 100_000_000;

/// Reads element handler `h`: through [`Element::read_handler_param`] when it takes a
/// parameter (the router has checked that no other handler is given one), else plainly.
fn call_read(
    el: &dyn Element,
    h: &str,
    param: Option<&str>,
    takes_param: bool,
) -> Result<String, HandlerError> {
    if takes_param {
        el.read_handler_param(h, param.unwrap_or(""))
            .map_err(HandlerError::Failed)
    } else {
        Ok(el.read_handler(h).unwrap_or_default())
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
