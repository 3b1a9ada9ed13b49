//! What Sluice's integration tests share: building a router from configuration text with the
//! element library, reading its handlers, pushing packets into it and collecting what comes
//! out, temporary directories that clean up after themselves, and the packet-conservation
//! account.
//!
//! ```
//! use sluice_testkit::{num, router};
//!
//! // Simulated time, one thread, the element library and the kit's test classes.
//! let mut r = router("InfiniteSource(LIMIT 10, STOP true) -> c :: Counter -> Discard");
//! r.run_until_idle();
//! assert_eq!(num(&mut r, "c.count"), 10);
//! ```
//!
//! Anything else — threads, defines, extra element classes, the wall clock, hot swap — goes
//! through [`Kit`]: `Kit::new().threads(2).defines(&[("LIMIT", "100")]).router(conf)`.
//!
//! Packets: a `TestInject` element ([`Inject`]) is a source the test pushes packets out of
//! with [`inject`]; a `TestCapture` element ([`Capture`]) keeps what reaches it until
//! [`taken`]. [`inject_packets`] and [`inject_bytes`] push out of any element (an `Idle`, say)
//! and [`pull`] and [`drain`] pull from any element's input (an inactive `Discard`).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::collections::HashMap;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use sluice_core::ports::{FlowCode, PortCount, ProcessingSpec};
use sluice_core::{
    Batch, Cx, Element, ElementClass, Library, Packet, Reconfigure, Router, RouterOptions,
    Timestamp, BATCH_MAX,
};
use sluice_lang::FlatConfig;

// ---------------------------------------------------------------------------------------------
// Building routers.

/// How to build a router: clock, threads, defines, extra element classes, hot swap. The
/// library is always the element library plus the kit's [`CLASSES`] plus the extra classes;
/// the configuration file is called `test.click`.
#[derive(Clone, Default)]
pub struct Kit {
    simtime: bool,
    threads: usize,
    defines: Vec<(String, String)>,
    classes: Vec<ElementClass>,
    hot_swap: bool,
    element_stats: bool,
}

impl Kit {
    /// The wall clock, one thread, no defines, no extra classes: as the `sluice` command runs.
    pub fn new() -> Kit {
        Kit::default()
    }

    /// Like [`Kit::new`], on simulated time (`--simtime`): timers fire at once, in order.
    pub fn sim() -> Kit {
        Kit::new().simtime(true)
    }

    /// Simulated time (`true`) or the wall clock.
    pub fn simtime(mut self, on: bool) -> Kit {
        self.simtime = on;
        self
    }

    /// `n` worker threads (`-j N`); 0 or 1 runs everything on the calling thread.
    pub fn threads(mut self, n: usize) -> Kit {
        self.threads = n;
        self
    }

    /// Adds configuration parameters (`NAME=VALUE` on the command line).
    pub fn defines(mut self, defines: &[(&str, &str)]) -> Kit {
        self.defines
            .extend(defines.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self
    }

    /// Adds element classes (test elements) to the library.
    pub fn classes(mut self, classes: &[ElementClass]) -> Kit {
        self.classes.extend_from_slice(classes);
        self
    }

    /// Click's `-R`: a write to the `hotconfig` handler installs a new configuration, parsed
    /// (as `config`, without the defines) and built with the same library.
    pub fn hot_swap(mut self) -> Kit {
        self.hot_swap = true;
        self
    }

    /// Counts packets and bytes per element (the `element_stats` router handler).
    pub fn element_stats(mut self) -> Kit {
        self.element_stats = true;
        self
    }

    /// The element library, the kit's [`CLASSES`] and the extra classes.
    pub fn library(&self) -> Library {
        let mut lib = sluice_elements::library();
        lib.add(CLASSES);
        lib.add(&self.classes);
        lib
    }

    /// The router options this kit builds with.
    pub fn options(&self) -> RouterOptions {
        let reconfigure = self.hot_swap.then(|| Reconfigure {
            library: self.library(),
            parse: Arc::new(|text: &str| {
                sluice_lang::parse_config(text, "config", &[])
                    .map_err(|d| d.iter().map(|e| e.to_string()).collect::<Vec<_>>())
            }),
        });
        RouterOptions {
            simtime: self.simtime,
            threads: self.threads,
            reconfigure,
            element_stats: self.element_stats,
            ..Default::default()
        }
    }

    /// Parses `conf` with the defines; the parse errors joined by newlines.
    pub fn parse(&self, conf: &str) -> Result<FlatConfig, String> {
        sluice_lang::parse_config(conf, "test.click", &self.defines).map_err(|d| {
            d.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    /// Parses, configures and initialises `conf`; the errors (of parsing, else of the
    /// router) joined by newlines.
    pub fn build(&self, conf: &str) -> Result<Router, String> {
        Router::new(self.parse(conf)?, &self.library(), self.options()).map_err(|e| e.join("\n"))
    }

    /// The router for `conf`; panics with the errors joined and the configuration.
    pub fn router(&self, conf: &str) -> Router {
        self.build(conf)
            .unwrap_or_else(|e| panic!("{e}\nin the configuration\n{conf}"))
    }

    /// The router errors of `conf`, joined by newlines; panics if `conf` does not parse or
    /// if the router builds.
    pub fn error(&self, conf: &str) -> String {
        let flat = self
            .parse(conf)
            .unwrap_or_else(|e| panic!("{e}\nin the configuration\n{conf}"));
        match Router::new(flat, &self.library(), self.options()) {
            Ok(_) => panic!("the configuration should fail:\n{conf}"),
            Err(e) => e.join("\n"),
        }
    }
}

/// The router for `conf` on simulated time, one thread ([`Kit::sim`]); panics with the
/// configuration errors.
pub fn router(conf: &str) -> Router {
    Kit::sim().router(conf)
}

/// The router for `conf` on the wall clock with `threads` threads, the `defines` and the
/// extra element `classes`; panics with the configuration errors.
pub fn router_with(
    conf: &str,
    threads: usize,
    defines: &[(&str, &str)],
    classes: &[ElementClass],
) -> Router {
    Kit::new()
        .threads(threads)
        .defines(defines)
        .classes(classes)
        .router(conf)
}

/// The errors of `conf`, which must parse and must fail to build (wall clock, one thread).
pub fn config_error(conf: &str) -> String {
    Kit::new().error(conf)
}

/// The text of `conf/NAME` at the top of the workspace (`NAME` may hold folders:
/// `smp/pipeline.click`).
pub fn conf_file(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conf")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The seed inputs of fuzz target `name` (the files of `fuzz/corpus/NAME`), sorted; panics
/// if the folder cannot be read.
pub fn fuzz_seeds(name: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(name);
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path()
        })
        .filter(|p| p.is_file())
        .map(|p| std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect();
    seeds.sort();
    seeds
}

// ---------------------------------------------------------------------------------------------
// Checking element classes.

/// Checks every class of `lib`: its port count, processing and flow codes parse, its
/// documentation (`sluice doc CLASS`) has a title and Synopsis, Ports, Arguments and Handlers
/// sections and names the class, and every handler an unconfigured instance declares is
/// named in it (or in the page it refers to with `sluice doc OTHER`; `activeN` covers
/// `active0`...) and reads without error on that instance. Returns the number of classes and
/// the problems found.
pub fn class_problems(lib: &Library) -> (usize, Vec<String>) {
    let mut problems = Vec::new();
    let mut n = 0;
    // Panics while reading are reported as problems below, without their messages.
    std::panic::set_hook(Box::new(|_| {}));
    for c in lib.classes() {
        n += 1;
        let mut bad = |what: String| problems.push(format!("{}: {what}", c.name));
        if PortCount::parse(c.ports).is_none() {
            bad(format!("bad port count {:?}", c.ports));
        }
        if ProcessingSpec::parse(c.processing).is_none() {
            bad(format!("bad processing code {:?}", c.processing));
        }
        if FlowCode::parse(c.flow).is_none() {
            bad(format!("bad flow code {:?}", c.flow));
        }
        let mut doc = c.doc();
        let title = doc.lines().next().unwrap_or("").to_string();
        if !title.contains(" — ") || !doc.contains(c.name) {
            bad(format!(
                "doc title {title:?} is not 'NAME — what it does' or omits the class"
            ));
        }
        let refs: Vec<String> = doc
            .replace('\n', " ")
            .split("sluice doc ")
            .skip(1)
            .filter_map(|r| r.split(|ch: char| !ch.is_alphanumeric()).next())
            .filter_map(|r| lib.get(r))
            .map(|o| o.doc())
            .collect();
        for r in refs {
            doc.push_str(&r);
        }
        for section in ["Synopsis:", "Ports:", "Arguments:", "Handlers:"] {
            if !doc.contains(section) {
                bad(format!("doc has no {section} section"));
            }
        }
        let mut el = (c.make)();
        let table = el.handler_table();
        let specs: Vec<_> = table.specs().copied().collect();
        for h in specs {
            let numbered = h.name.trim_end_matches(|ch: char| ch.is_ascii_digit());
            let named = [
                format!("`{}`", h.name),
                format!("`{} ", h.name),
                format!("`{numbered}N`"),
            ];
            if !named.iter().any(|n| doc.contains(n.as_str())) {
                bad(format!("handler `{}` is not documented", h.name));
            }
            if h.read && !h.param {
                let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    table.read(el.as_any_mut(), h.name, "")
                }));
                match read {
                    Ok(Some(Ok(_))) => {}
                    Ok(other) => bad(format!("handler `{}` does not read: {other:?}", h.name)),
                    Err(_) => bad(format!("handler `{}` panics when read", h.name)),
                }
            }
        }
    }
    drop(std::panic::take_hook());
    (n, problems)
}

// ---------------------------------------------------------------------------------------------
// Reading a router.

/// Reads handler `path` (`elem.handler`, or a router handler) as a number; panics with the
/// path and what it read.
pub fn num(r: &mut Router, path: &str) -> u64 {
    let v = r.read_path(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    v.trim()
        .parse()
        .unwrap_or_else(|e| panic!("{path} = {v:?}: {e}"))
}

/// Reads handler `path`, trimmed; panics with the path on an error.
pub fn read(r: &mut Router, path: &str) -> String {
    r.read_path(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .trim()
        .to_string()
}

/// Seconds since a router on simulated time started ([`Timestamp::SIM_START`]).
pub fn elapsed(r: &Router) -> f64 {
    (r.clock().now() - Timestamp::SIM_START).as_secs_f64()
}

/// The thread of each task, by element name, from the router's `tasks` handler; panics if
/// one element has tasks on two threads.
pub fn task_threads(r: &mut Router) -> HashMap<String, usize> {
    let mut threads = HashMap::new();
    for l in read(r, "tasks").lines().skip(1) {
        let f: Vec<&str> = l.split('\t').collect();
        let (Some(t), Some(name)) = (f.first().and_then(|t| t.parse().ok()), f.get(1)) else {
            panic!("tasks: bad line {l:?}");
        };
        if let Some(other) = threads.insert(name.to_string(), t) {
            assert_eq!(other, t, "{name} has tasks on threads {other} and {t}");
        }
    }
    threads
}

/// Each element's name and class, in element order.
pub fn element_classes(r: &mut Router) -> Vec<(String, String)> {
    (0..r.nelements())
        .map(|e| {
            let name = r.element_name(e).to_string();
            let class = r
                .read_handler(Some(e), "class")
                .unwrap_or_else(|err| panic!("{name}.class: {err}"));
            (name, class.trim().to_string())
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Packets in and out.

/// `TestInject` (no inputs, one push output): a source that does nothing by itself; the test
/// pushes packets out of it with [`inject`] or [`inject_packets`].
#[derive(Default)]
pub struct Inject;

impl Element for Inject {}

/// `TestCapture` (one push input, no outputs): keeps every packet it receives until the test
/// takes them with [`taken`].
#[derive(Default)]
pub struct Capture {
    got: Vec<Packet>,
}

impl Capture {
    /// The packets received since the last call, in arrival order.
    pub fn take(&mut self) -> Vec<Packet> {
        std::mem::take(&mut self.got)
    }
}

impl Element for Capture {
    fn push(&mut self, _port: usize, batch: Batch, _cx: &mut Cx) {
        self.got.extend(batch);
    }
}

/// The kit's element classes, in every [`Kit`]'s library: `TestInject` ([`Inject`]) and
/// `TestCapture` ([`Capture`]).
pub const CLASSES: &[ElementClass] = &[
    ElementClass {
        name: "TestInject",
        ports: "0/1",
        processing: "h/h",
        flow: "",
        source: "//! TestInject — test source: the test pushes packets out of it\n",
        make: || Box::new(Inject),
    },
    ElementClass {
        name: "TestCapture",
        ports: "1/0",
        processing: "h/h",
        flow: "",
        source: "//! TestCapture — test sink: keeps what it receives for the test\n",
        make: || Box::<Capture>::default(),
    },
];

/// The index of element `name`; panics if there is none.
fn index(r: &Router, name: &str) -> usize {
    r.element_index(name)
        .unwrap_or_else(|| panic!("no element named {name:?}"))
}

/// Runs `f` on element `name`; panics if it is busy.
fn with<R>(r: &mut Router, name: &str, f: impl FnOnce(&mut dyn Element, &mut Cx) -> R) -> R {
    let e = index(r, name);
    r.with_element(e, f)
        .unwrap_or_else(|| panic!("element {name:?} is busy"))
}

/// Pushes packet `p` out of output 0 of element `name` (a `TestInject`, an `Idle`, …).
pub fn inject(r: &mut Router, name: &str, p: Packet) {
    with(r, name, |_, cx| cx.push_one(0, p));
}

/// Pushes `packets` out of output `port` of element `name`, in batches of up to
/// [`BATCH_MAX`] (one batch when there are that few).
pub fn inject_packets(
    r: &mut Router,
    name: &str,
    port: usize,
    packets: impl IntoIterator<Item = Packet>,
) {
    let mut packets = packets.into_iter().peekable();
    while packets.peek().is_some() {
        let mut b = Batch::new();
        while !b.is_full() {
            let Some(p) = packets.next() else { break };
            if b.push(p).is_err() {
                unreachable!("a batch that is not full takes a packet");
            }
        }
        with(r, name, |_, cx| cx.push(port, b));
    }
}

/// Pushes one packet per byte string out of output `port` of element `name`, as
/// [`inject_packets`].
pub fn inject_bytes(r: &mut Router, name: &str, port: usize, data: &[&[u8]]) {
    inject_packets(r, name, port, data.iter().map(|d| Packet::from_bytes(d)));
}

/// Takes the packets the `TestCapture` `name` received so far.
pub fn taken(r: &mut Router, name: &str) -> Vec<Packet> {
    with(r, name, |el, _| {
        el.as_any_mut()
            .downcast_mut::<Capture>()
            .unwrap_or_else(|| panic!("{name} is not a TestCapture"))
            .take()
    })
}

/// One pull of up to `max` packets from input `port` of element `name` (an inactive
/// `Discard`, say).
pub fn pull(r: &mut Router, name: &str, port: usize, max: usize) -> Vec<Packet> {
    with(r, name, |_, cx| cx.pull(port, max))
        .into_iter()
        .collect()
}

/// Pulls from input `port` of element `name`, [`BATCH_MAX`] at a time, until a pull finds
/// nothing.
pub fn drain(r: &mut Router, name: &str, port: usize) -> Vec<Packet> {
    let mut out = Vec::new();
    loop {
        let b = pull(r, name, port, BATCH_MAX);
        if b.is_empty() {
            return out;
        }
        out.extend(b);
    }
}

/// The packets' data as text (invalid UTF-8 replaced).
pub fn strs(packets: &[Packet]) -> Vec<String> {
    packets
        .iter()
        .map(|p| String::from_utf8_lossy(p.data()).into_owned())
        .collect()
}

/// The packets' data.
pub fn bytes(packets: &[Packet]) -> Vec<Vec<u8>> {
    packets.iter().map(|p| p.data().to_vec()).collect()
}

// ---------------------------------------------------------------------------------------------
// Temporary directories.

/// A fresh, empty directory under the system's temporary directory, removed with everything
/// in it when dropped. Dereferences to its [`Path`].
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates `sluice-TAG-PID-N` (N counts the directories this process made).
    pub fn new(tag: &str) -> TempDir {
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("sluice-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        TempDir { path }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in the directory, as text for a configuration.
    pub fn file(&self, name: &str) -> String {
        self.path.join(name).to_string_lossy().into_owned()
    }
}

impl Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

// ---------------------------------------------------------------------------------------------
// Packet conservation.

/// Classes whose `count` handler counts packets put into the graph.
pub const SOURCES: &[&str] = &["InfiniteSource", "FromDump", "RatedSource", "TimedSource"];

/// Classes whose `count` handler counts packets taken out of the graph.
pub const SINKS: &[&str] = &["Discard", "ToDump"];

/// Packets put in by sources, taken out by sinks, held by queues and dropped, over the whole
/// router.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Account {
    /// Packets the [`SOURCES`] emitted.
    pub into: u64,
    /// Packets the [`SINKS`] took.
    pub out: u64,
    /// Packets every queue holds (the Storage interface).
    pub queued: u64,
    /// Packets dropped: the sum of the router-wide `drops` handler.
    pub dropped: u64,
}

impl Account {
    /// True if every packet put in is out, queued or dropped.
    pub fn balances(&self) -> bool {
        self.into == self.out + self.queued + self.dropped
    }
}

/// The sum of the router-wide `drops` handler: every drop of every element, by reason.
pub fn drops(r: &mut Router) -> u64 {
    r.read_path("drops")
        .unwrap_or_else(|e| panic!("drops: {e}"))
        .lines()
        .map(|l| {
            l.rsplit('\t')
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("drops: bad line {l:?}"))
        })
        .sum()
}

/// The router's [`Account`] now (after `cleanup`, so that elements have counted what they
/// still held as drops).
pub fn account(r: &mut Router) -> Account {
    let mut a = Account::default();
    for (e, (name, class)) in element_classes(r).into_iter().enumerate() {
        if SOURCES.contains(&class.as_str()) {
            a.into += num(r, &format!("{name}.count"));
        } else if SINKS.contains(&class.as_str()) {
            a.out += num(r, &format!("{name}.count"));
        }
        if let Some((len, _)) = r.storage_of(e) {
            a.queued += len as u64;
        }
    }
    a.dropped = drops(r);
    a
}

/// Asserts that packets flowed and that every one is accounted for (in = out + queued +
/// dropped); `what` names the run in the message. Returns the account.
pub fn assert_conserved(r: &mut Router, what: &str) -> Account {
    let a = account(r);
    assert!(a.into > 0, "{what}: nothing flowed");
    assert_eq!(a.into, a.out + a.queued + a.dropped, "{what}: {a:?}");
    a
}
