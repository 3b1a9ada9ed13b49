//! The router: builds the element graph from a flat configuration, checks ports and
//! processing with Click's rules, configures and initialises elements in stages, moves batches
//! between elements, runs tasks and timers, and answers handlers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sluice_lang::args::Args;
use sluice_lang::FlatConfig;

use crate::context::{ConfigCx, Cx, InitCx};
use crate::element::{Element, ElementClass};
use crate::library::Library;
use crate::ports::{FlowCode, PortCount};
use crate::sched::{Notifier, TaskList, TimerQueue};
use crate::threads::{self, Concurrency, Placement, Runtime};
use crate::time::Clock;

mod datapath;
mod driver;
mod graph;
mod handler_routing;
mod hotswap;
mod placement;
mod wiring;

pub(crate) use datapath::Slot;
pub(crate) use graph::{element_desc, ElemInfo, Graph, PortRef};
pub use handler_routing::{glob_match, HandlerError, Query, TaskStat};

pub use hotswap::{ParseConfig, Reconfigure};
pub use wiring::PassThrough;

/// Sluice's version string.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

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
    /// Count the packets and bytes entering and leaving every element, for the
    /// `element_stats` router handler (monitoring: two counter updates per batch moved).
    pub element_stats: bool,
    /// Adaptive placement's policy (`sluice -j N --plan auto`: the planner's model); the
    /// default moves the heaviest movable groups to the least loaded threads.
    pub replan: Option<crate::threads::Replan>,
}

/// A running configuration: the shared [`Graph`] and this thread's worker state — the
/// elements it holds, its tasks, timers, watched descriptors and connection tables. Threads
/// beyond the first each run a worker made by [`Router::worker`].
pub struct Router {
    pub(crate) graph: Arc<Graph>,
    pub(crate) slots: Vec<Slot>,
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
    initialized: bool,
    /// This worker's thread number.
    pub(crate) thread: usize,
    pub(crate) runtime: Arc<Runtime>,
    /// True when the router counts packets per element (`RouterOptions::element_stats`).
    counting: bool,
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
    /// Packets each task's element had emitted at the last look (for a policy).
    balance_packets: Vec<u64>,
    /// Adaptive placement's policy, if not the default.
    replan: Option<crate::threads::Replan>,
    /// When a drain that has not ended by itself is cut short.
    drain_until: Option<std::time::Instant>,
    /// Elements whose `run` handler a signal calls (Script's TYPE SIGNAL): (signal, element).
    pub(crate) signal_runs: Vec<(i32, usize)>,
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
                config: Mutex::new(fe.config.clone()),
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
                table: Arc::default(),
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
        let graph = Graph {
            info,
            names,
            flat,
            source: opts.source,
            class_names: lib.classes().map(|c| c.name).collect(),
            static_threads: HashMap::new(),
            ticket_scale: HashMap::new(),
            placement: None,
        };
        let runtime = Runtime::new(
            opts.threads.max(1),
            n,
            opts.reconfigure,
            predecessors,
            opts.element_stats,
        );
        let mut rt = Router::fresh(Arc::new(graph), slots, clock, Arc::new(runtime), 0);
        rt.replan = opts.replan;
        if errors.is_empty() {
            rt.graph_mut().resolve_processing(&mut errors);
        }
        if errors.is_empty() {
            rt.graph_mut().check_connections(&mut errors);
            rt.rewire();
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
                Ok(p) => rt.graph_mut().placement = Some(p),
                Err(e) => {
                    rt.cleanup();
                    return Err(e);
                }
            }
        }
        Ok(rt)
    }

    /// A router for thread `thread` holding `slots` of `graph`, with empty per-thread state:
    /// no tasks, timers, descriptors or connection tables yet.
    pub(crate) fn fresh(
        graph: Arc<Graph>,
        slots: Vec<Slot>,
        clock: Clock,
        runtime: Arc<Runtime>,
        thread: usize,
    ) -> Router {
        let n = slots.len();
        Router {
            counting: !runtime.counts.is_empty(),
            graph,
            slots,
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
            initialized: false,
            thread,
            runtime,
            replicas: (0..n).map(|_| Vec::new()).collect(),
            running_threads: false,
            orphans: Vec::new(),
            woken_scratch: Vec::new(),
            balance_at: 0,
            balance_seen: Vec::new(),
            balance_packets: Vec::new(),
            replan: None,
            drain_until: None,
            signal_runs: Vec::new(),
        }
    }

    /// The graph, to change while the router is built (before threads share it).
    pub(crate) fn graph_mut(&mut self) -> &mut Graph {
        Arc::get_mut(&mut self.graph).expect("the graph changes only before threads share it")
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
            let mut args = Args::new(&self.graph.info[e].config());
            sluice_lang::names::set_scope(&self.graph.info[e].name);
            let res = el.configure(&mut args, &mut ConfigCx { rt: self, me: e });
            let table = el.handler_table();
            let info = &mut self.graph_mut().info[e];
            info.concurrency = el.concurrency();
            info.handlers = table.specs().copied().collect();
            info.table = Arc::new(table);
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
                    self.graph.info[e].landmark,
                    self.graph.desc(e)
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
                    self.graph.info[e].landmark,
                    self.graph.desc(e)
                ));
                errors.push(format!("  {}", m));
            }
        }
    }

    // ---- handlers ----

    /// Number of elements.
    pub fn nelements(&self) -> usize {
        self.graph.info.len()
    }

    /// Name of element `e`.
    pub fn element_name(&self, e: usize) -> &str {
        &self.graph.info[e].name
    }

    /// Index of the element called `name`.
    pub fn element_index(&self, name: &str) -> Option<usize> {
        self.graph.names.get(name).copied()
    }

    /// The flat configuration the router was built from.
    pub fn flat_config(&self) -> &FlatConfig {
        &self.graph.flat
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
        self.graph.placement.as_ref()
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

/// Placeholder instance for a class that does not exist (the router reports the error).
struct Unknown;

impl Element for Unknown {}
