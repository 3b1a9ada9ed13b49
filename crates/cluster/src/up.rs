//! `sluice cluster up` and `down`: a whole cluster on one machine, for testing.
//!
//! `up` makes one network namespace per node (`P-NODE`), a veth pair per internal link (the
//! two ends born in the two node namespaces), and for each external port either a host
//! namespace (`P-NODE-hPORT`, the port's `host`) joined to it by a veth pair, or, without a
//! host, a veth pair whose other end (`stubN`) stays in the node namespace. Node namespaces
//! have no addresses and no kernel forwarding: Sluice is the router. Each node runs `sluice`
//! on its configuration from the state directory; the state file there lists the processes
//! and namespaces, and `down` removes exactly those. Nothing is made in the calling
//! namespace. Everything is done with the `ip`, `sysctl`, `ethtool` and `kill` commands.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::build;
use crate::desc::{self, Cluster};

/// Usage of `sluice cluster up`.
pub const USAGE_UP: &str = "\
Usage: sluice cluster up DESC [--prefix P] [--state DIR] [--sluice PATH] [-- SLUICE ARGS...]

Runs the cluster described in DESC on this machine, for testing (as root): a network
namespace P-NODE per node, a veth pair per internal link, and for each port with a `host`
a host namespace P-NODE-hPORT (eth0: the host address, default route via the port). Each
node runs `sluice -f DIR/NODE.click SLUICE ARGS...` in its namespace, logging to
DIR/NODE.log. A port without a host gets a veth pair whose other end (stubN) stays in
the node namespace. `up` returns once every node has run for 0.5 s with no error in its
log; on any failure it undoes what it made.

Options:
  --prefix P     namespace name prefix (default sluice-cl-NAME, NAME: the cluster's)
  --state DIR    configurations, logs and the state file (default /run/sluice-cluster/P)
  --sluice PATH  the sluice executable to run (default: this one)
  -- ARGS...     more arguments for every node's sluice; {node} stands for the node's name
";

/// Usage of `sluice cluster down`.
pub const USAGE_DOWN: &str = "\
Usage: sluice cluster down DESC [--prefix P] [--state DIR]

Stops the sluice processes `sluice cluster up` started (SIGTERM, then SIGKILL), deletes its
namespaces and removes its state directory. Succeeds if the cluster is already down.

Options:
  --prefix P     namespace name prefix, as given to `up` (default sluice-cl-NAME)
  --state DIR    state directory, as given to `up` (default /run/sluice-cluster/P)
";

/// How long a node's sluice must stay up, with no error in its log, to count as started.
const START_WAIT: Duration = Duration::from_millis(500);
/// How long `down` waits after SIGTERM before SIGKILL.
const STOP_WAIT: Duration = Duration::from_secs(3);

#[derive(Debug)]
struct Opts {
    desc: String,
    prefix: Option<String>,
    state: Option<PathBuf>,
    sluice: Option<PathBuf>,
    extra: Vec<String>,
}

/// Parses the options; `None` when help was asked for (and printed).
fn parse_opts(args: &[String], up: bool) -> Result<Option<Opts>, String> {
    let (cmd, usage) = if up {
        ("up", USAGE_UP)
    } else {
        ("down", USAGE_DOWN)
    };
    let mut o = Opts {
        desc: String::new(),
        prefix: None,
        state: None,
        sluice: None,
        extra: vec![],
    };
    let mut desc = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
            _ => (a, None),
        };
        let mut value = || match inline.clone() {
            Some(v) => Ok(v),
            None => {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| format!("cluster {cmd}: {key} needs a value\n{usage}"))
            }
        };
        match key {
            "-h" | "--help" => {
                print!("{usage}");
                return Ok(None);
            }
            "--prefix" => o.prefix = Some(value()?),
            "--state" => o.state = Some(PathBuf::from(value()?)),
            "--sluice" if up => o.sluice = Some(PathBuf::from(value()?)),
            "--" if up => {
                o.extra = args[i + 1..].to_vec();
                break;
            }
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(format!("cluster {cmd}: unknown option '{s}'\n{usage}"))
            }
            s if desc.is_none() => desc = Some(s.to_string()),
            s => return Err(format!("cluster {cmd}: unexpected argument '{s}'\n{usage}")),
        }
        i += 1;
    }
    o.desc = desc.ok_or_else(|| format!("cluster {cmd}: no description\n{usage}"))?;
    if let Some(p) = &o.prefix {
        let ok = !p.is_empty()
            && p.len() <= 64
            && p.bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(&c))
            && !p.starts_with('.');
        if !ok {
            return Err(format!(
                "cluster {cmd}: --prefix '{p}': use A-Z, a-z, 0-9, '_', '.', '-' (at most 64)"
            ));
        }
    }
    Ok(Some(o))
}

/// Namespace names and the state directory of a cluster under the options.
struct Names {
    prefix: String,
    dir: PathBuf,
    /// Whether `dir` is the default, under /run/sluice-cluster.
    default_dir: bool,
}

impl Names {
    fn new(c: &Cluster, o: &Opts) -> Result<Names, String> {
        let prefix = o
            .prefix
            .clone()
            .unwrap_or_else(|| format!("sluice-cl-{}", c.name));
        let dir = o
            .state
            .clone()
            .unwrap_or_else(|| Path::new("/run/sluice-cluster").join(&prefix));
        let dir = std::path::absolute(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Names {
            prefix,
            dir,
            default_dir: o.state.is_none(),
        })
    }

    fn node_ns(&self, c: &Cluster, k: usize) -> String {
        format!("{}-{}", self.prefix, c.nodes[k].name)
    }

    fn host_ns(&self, c: &Cluster, k: usize, p: usize) -> String {
        format!("{}-{}-h{p}", self.prefix, c.nodes[k].name)
    }

    /// Every namespace of the cluster: nodes, then hosts.
    fn all_ns(&self, c: &Cluster) -> Vec<String> {
        let mut v: Vec<String> = (0..c.nodes.len()).map(|k| self.node_ns(c, k)).collect();
        for (k, n) in c.nodes.iter().enumerate() {
            for (p, port) in n.ports.iter().enumerate() {
                if port.host.is_some() {
                    v.push(self.host_ns(c, k, p));
                }
            }
        }
        v
    }

    /// Removes /run/sluice-cluster once no cluster uses it.
    fn remove_parent(&self) {
        if let (true, Some(parent)) = (self.default_dir, self.dir.parent()) {
            let _ = std::fs::remove_dir(parent);
        }
    }

    fn state_file(&self) -> PathBuf {
        self.dir.join("state")
    }

    fn conf(&self, c: &Cluster, k: usize) -> PathBuf {
        self.dir.join(format!("{}.click", c.nodes[k].name))
    }

    fn log(&self, c: &Cluster, k: usize) -> PathBuf {
        self.dir.join(format!("{}.log", c.nodes[k].name))
    }
}

/// Runs a command to completion; an error quotes it and its standard error.
fn run(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("`{}`: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(format!("`{}` failed: {}", args.join(" "), err.trim()))
    }
}

/// Runs a command, ignoring failure (for tuning that may be unsupported).
fn try_run(args: &[&str]) {
    let _ = run(args);
}

/// Runs a command in a namespace.
fn nsx(ns: &str, args: &[&str]) -> Result<(), String> {
    let mut v = vec!["ip", "netns", "exec", ns];
    v.extend_from_slice(args);
    run(&v)
}

/// The network namespaces that exist.
fn existing_ns() -> Result<BTreeSet<String>, String> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .map_err(|e| format!("`ip netns list`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`ip netns list` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect())
}

/// The effective user id of this process.
fn euid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// The arguments of process `pid` (empty if it is gone or a zombie).
fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `pid` is still the sluice started on configuration `conf`.
fn is_ours(pid: u32, conf: &str) -> bool {
    cmdline(pid).iter().any(|a| a == conf)
}

fn signal(pid: u32, sig: &str) {
    try_run(&["kill", sig, &pid.to_string()]);
}

/// Stops processes (`pid`, configuration path): SIGTERM, then SIGKILL after [`STOP_WAIT`],
/// each only while it is still ours. Returns how many were running.
fn stop_pids(pids: &[(u32, String)], children: &mut [Child]) -> usize {
    let running: Vec<&(u32, String)> = pids.iter().filter(|(p, c)| is_ours(*p, c)).collect();
    for (p, _) in &running {
        signal(*p, "-TERM");
    }
    let reap = |children: &mut [Child]| {
        for ch in children.iter_mut() {
            let _ = ch.try_wait();
        }
    };
    let deadline = Instant::now() + STOP_WAIT;
    loop {
        reap(children);
        if running.iter().all(|(p, c)| !is_ours(*p, c)) {
            break;
        }
        if Instant::now() >= deadline {
            for (p, c) in &running {
                if is_ours(*p, c) {
                    signal(*p, "-KILL");
                }
            }
            for ch in children.iter_mut() {
                let _ = ch.wait();
            }
            let until = Instant::now() + Duration::from_secs(1);
            while Instant::now() < until && running.iter().any(|(p, c)| is_ours(*p, c)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    running.len()
}

/// What `up` has made so far, to undo on failure.
struct Made {
    state: Option<File>,
    created_dir: bool,
    namespaces: Vec<String>,
    pids: Vec<(u32, String)>,
    children: Vec<Child>,
}

impl Made {
    fn record(&mut self, line: &str) -> Result<(), String> {
        if let Some(f) = &mut self.state {
            writeln!(f, "{line}")
                .and_then(|()| f.flush())
                .map_err(|e| format!("state file: {e}"))?;
        }
        Ok(())
    }

    fn add_ns(&mut self, ns: &str, node: bool) -> Result<(), String> {
        self.record(&format!("netns {ns}"))?;
        run(&["ip", "netns", "add", ns])?;
        self.namespaces.push(ns.to_string());
        run(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
        nsx(
            ns,
            &[
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ],
        )?;
        if node {
            nsx(
                ns,
                &[
                    "sysctl",
                    "-qw",
                    "net.ipv4.ip_forward=0",
                    "net.ipv4.conf.all.forwarding=0",
                ],
            )?;
        }
        Ok(())
    }

    /// Stops what was started, deletes the namespaces and the state.
    fn undo(mut self, names: &Names) -> String {
        let stopped = stop_pids(&self.pids, &mut self.children);
        for ns in self.namespaces.iter().rev() {
            try_run(&["ip", "netns", "del", ns]);
        }
        self.state = None;
        if self.created_dir {
            let _ = std::fs::remove_dir_all(&names.dir);
            names.remove_parent();
        } else {
            let _ = std::fs::remove_file(names.state_file());
        }
        format!(
            "undone: stopped {stopped} sluice process(es), deleted {} namespace(s)",
            self.namespaces.len()
        )
    }
}

/// Runs `sluice cluster up ARGS`.
pub fn main_up(args: &[String]) -> Result<(), String> {
    let Some(o) = parse_opts(args, true)? else {
        return Ok(());
    };
    let c = desc::load(&o.desc)?;
    let names = Names::new(&c, &o)?;
    if euid() != Some(0) {
        return Err("cluster up: run as root (it creates network namespaces)".into());
    }
    let sluice = match &o.sluice {
        Some(p) => std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()))?,
        None => std::env::current_exe().map_err(|e| format!("cluster up: this executable: {e}"))?,
    };
    if !sluice.is_file() {
        return Err(format!(
            "cluster up: {}: no such executable",
            sluice.display()
        ));
    }
    if names.state_file().exists() {
        return Err(format!(
            "cluster up: {} exists: the cluster seems up; run `sluice cluster down {}` first",
            names.state_file().display(),
            o.desc
        ));
    }
    let existing = existing_ns()?;
    for ns in names.all_ns(&c) {
        if existing.contains(&ns) {
            return Err(format!(
                "cluster up: namespace {ns} exists already (another cluster? `sluice cluster down`)"
            ));
        }
    }
    let source = build::source_name(&o.desc);
    let configs: Vec<String> = (0..c.nodes.len())
        .map(|k| build::node_config(&c, k, &source))
        .collect();

    let mut made = Made {
        state: None,
        created_dir: !names.dir.exists(),
        namespaces: vec![],
        pids: vec![],
        children: vec![],
    };
    match bring_up(&c, &o, &names, &sluice, &configs, &mut made) {
        Ok(()) => {
            print!("{}", summary(&c, &o, &names, &made));
            Ok(())
        }
        Err(e) => Err(format!("cluster up: {e}\n{}", made.undo(&names))),
    }
}

fn bring_up(
    c: &Cluster,
    o: &Opts,
    names: &Names,
    sluice: &Path,
    configs: &[String],
    made: &mut Made,
) -> Result<(), String> {
    let dir = &names.dir;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let state = OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(names.state_file())
        .map_err(|e| format!("{}: {e}", names.state_file().display()))?;
    made.state = Some(state);
    made.record("# sluice cluster state: written by `sluice cluster up`, read by `down`")?;
    made.record(&format!("cluster {}", c.name))?;
    for (k, text) in configs.iter().enumerate() {
        let path = names.conf(c, k);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }

    // Namespaces.
    for k in 0..c.nodes.len() {
        made.add_ns(&names.node_ns(c, k), true)?;
    }
    for (k, n) in c.nodes.iter().enumerate() {
        for (p, port) in n.ports.iter().enumerate() {
            if port.host.is_some() {
                made.add_ns(&names.host_ns(c, k, p), false)?;
            }
        }
    }

    // Internal links: full mesh, MTU enough for the largest port's packets.
    let link_mtu = c
        .nodes
        .iter()
        .flat_map(|n| n.ports.iter().map(|p| p.mtu))
        .max()
        .unwrap_or(1500)
        .max(1500)
        .to_string();
    let router_tune = |ns: &str, dev: &str| {
        try_run(&[
            "ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro",
            "off", "lro", "off",
        ])
    };
    for a in 0..c.nodes.len() {
        for b in a + 1..c.nodes.len() {
            let (nsa, nsb) = (names.node_ns(c, a), names.node_ns(c, b));
            let (da, db) = (&c.nodes[a].links[b], &c.nodes[b].links[a]);
            run(&[
                "ip", "link", "add", da, "netns", &nsa, "type", "veth", "peer", "name", db,
                "netns", &nsb,
            ])?;
            for (ns, d) in [(&nsa, da), (&nsb, db)] {
                run(&[
                    "ip", "-n", ns, "link", "set", "dev", d, "mtu", &link_mtu, "up",
                ])?;
                router_tune(ns, d);
            }
        }
    }

    // External ports.
    for (k, n) in c.nodes.iter().enumerate() {
        let ns = names.node_ns(c, k);
        let devs: BTreeSet<&str> = n
            .ports
            .iter()
            .map(|p| p.device.as_str())
            .chain(n.links.iter().map(String::as_str))
            .collect();
        for (p, port) in n.ports.iter().enumerate() {
            let d = port.device.as_str();
            let mtu = port.mtu.to_string();
            match port.host {
                Some(h) => {
                    let hns = names.host_ns(c, k, p);
                    run(&[
                        "ip", "link", "add", d, "netns", &ns, "type", "veth", "peer", "name",
                        "eth0", "netns", &hns,
                    ])?;
                    run(&[
                        "ip", "-n", &hns, "link", "set", "dev", "eth0", "mtu", &mtu, "up",
                    ])?;
                    run(&[
                        "ip",
                        "-n",
                        &hns,
                        "addr",
                        "add",
                        &h.to_string(),
                        "dev",
                        "eth0",
                    ])?;
                    run(&[
                        "ip",
                        "-n",
                        &hns,
                        "route",
                        "add",
                        "default",
                        "via",
                        &port.address.addr.to_string(),
                    ])?;
                    try_run(&[
                        "ip", "netns", "exec", &hns, "ethtool", "-K", "eth0", "tx", "off", "tso",
                        "off", "gso", "off", "gro", "off",
                    ]);
                }
                None => {
                    // No host: the other end stays, unused, in the node's namespace.
                    let stub = (0..)
                        .map(|i| {
                            if i == 0 {
                                format!("stub{p}")
                            } else {
                                format!("stub{p}x{i}")
                            }
                        })
                        .find(|s| !devs.contains(s.as_str()))
                        .unwrap_or_default();
                    run(&[
                        "ip", "link", "add", d, "netns", &ns, "type", "veth", "peer", "name",
                        &stub, "netns", &ns,
                    ])?;
                    run(&[
                        "ip", "-n", &ns, "link", "set", "dev", &stub, "mtu", &mtu, "up",
                    ])?;
                }
            }
            run(&[
                "ip",
                "-n",
                &ns,
                "link",
                "set",
                "dev",
                d,
                "address",
                &port.ether.to_string(),
            ])?;
            run(&["ip", "-n", &ns, "link", "set", "dev", d, "mtu", &mtu, "up"])?;
            router_tune(&ns, d);
        }
    }

    // The routers.
    for k in 0..c.nodes.len() {
        let conf = names.conf(c, k).to_string_lossy().into_owned();
        let log_path = names.log(c, k);
        let log = File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
        let log2 = log
            .try_clone()
            .map_err(|e| format!("{}: {e}", log_path.display()))?;
        let extra = o
            .extra
            .iter()
            .map(|a| a.replace("{node}", &c.nodes[k].name));
        let child = Command::new("ip")
            .args(["netns", "exec", &names.node_ns(c, k)])
            .arg(sluice)
            .args(["-f", &conf])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("starting `ip netns exec ... {}`: {e}", sluice.display()))?;
        let pid = child.id();
        made.children.push(child);
        made.pids.push((pid, conf.clone()));
        made.record(&format!("pid {pid} {} {conf}", c.nodes[k].name))?;
    }
    let started = Instant::now();
    loop {
        for (k, ch) in made.children.iter_mut().enumerate() {
            if let Ok(Some(status)) = ch.try_wait() {
                return Err(format!(
                    "node {}: sluice exited ({status}) while starting; {}",
                    c.nodes[k].name,
                    log_text(&names.log(c, k))
                ));
            }
        }
        if started.elapsed() >= START_WAIT {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for k in 0..c.nodes.len() {
        let text = std::fs::read_to_string(names.log(c, k)).unwrap_or_default();
        if text
            .lines()
            .any(|l| l.to_ascii_lowercase().contains("error"))
        {
            return Err(format!(
                "node {}: sluice reported an error while starting; {}",
                c.nodes[k].name,
                log_text(&names.log(c, k))
            ));
        }
    }
    Ok(())
}

/// A node's log for an error message.
fn log_text(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = &lines[lines.len().saturating_sub(40)..];
    if tail.is_empty() {
        format!("its log {} is empty", path.display())
    } else {
        format!("its log ({}):\n  {}", path.display(), tail.join("\n  "))
    }
}

fn summary(c: &Cluster, o: &Opts, names: &Names, made: &Made) -> String {
    let mut s = format!(
        "cluster {} is up: {} nodes, state in {}\n",
        c.name,
        c.nodes.len(),
        names.dir.display()
    );
    let mut first_host = None;
    let mut other_host = None;
    for (k, n) in c.nodes.iter().enumerate() {
        s += &format!(
            "  node {} (index {k}): namespace {}, sluice pid {}, log {}\n",
            n.name,
            names.node_ns(c, k),
            made.pids[k].0,
            names.log(c, k).display()
        );
        for (p, port) in n.ports.iter().enumerate() {
            s += &format!("    {} {} ether {}", port.device, port.address, port.ether);
            match port.host {
                Some(h) => {
                    let hns = names.host_ns(c, k, p);
                    s += &format!(
                        " <-> host namespace {hns}: eth0 {h}, default via {}\n",
                        port.address.addr
                    );
                    if first_host.is_none() {
                        first_host = Some(hns);
                    } else if other_host.is_none() {
                        other_host = Some(h.addr);
                    }
                }
                None => s += " (no host)\n",
            }
        }
        let links: Vec<String> = (0..c.nodes.len())
            .filter(|&i| i != k)
            .map(|i| {
                format!(
                    "{} <-> {} {}",
                    n.links[i], c.nodes[i].name, c.nodes[i].links[k]
                )
            })
            .collect();
        s += &format!("    links: {}\n", links.join(", "));
    }
    if let (Some(ns), Some(dst)) = (first_host, other_host) {
        s += &format!("try:  ip netns exec {ns} ping -c 3 {dst}\n");
    }
    let mut down = format!("sluice cluster down {}", o.desc);
    if let Some(p) = &o.prefix {
        down += &format!(" --prefix {p}");
    }
    if let Some(d) = &o.state {
        down += &format!(" --state {}", d.display());
    }
    s += &format!("stop: {down}\n");
    s
}

/// What a state file lists: namespaces, and processes (pid, configuration path).
#[derive(Debug, Default, PartialEq)]
struct State {
    namespaces: Vec<String>,
    pids: Vec<(u32, String)>,
}

fn read_state(text: &str) -> State {
    let mut st = State::default();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["netns", ns] => st.namespaces.push(ns.to_string()),
            ["pid", pid, _node, conf] => {
                if let Ok(pid) = pid.parse() {
                    st.pids.push((pid, conf.to_string()));
                }
            }
            _ => {}
        }
    }
    st
}

/// Runs `sluice cluster down ARGS`.
pub fn main_down(args: &[String]) -> Result<(), String> {
    let Some(o) = parse_opts(args, false)? else {
        return Ok(());
    };
    let c = desc::load(&o.desc)?;
    let names = Names::new(&c, &o)?;
    let state = match std::fs::read_to_string(names.state_file()) {
        Ok(t) => read_state(&t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => State::default(),
        Err(e) => {
            return Err(format!(
                "cluster down: {}: {e}",
                names.state_file().display()
            ))
        }
    };
    if (!state.pids.is_empty() || !state.namespaces.is_empty()) && euid() != Some(0) {
        return Err("cluster down: run as root (it deletes network namespaces)".into());
    }
    let stopped = stop_pids(&state.pids, &mut []);

    // The namespaces the state lists, and those the description names (in case `up` was
    // interrupted before recording them).
    let existing = existing_ns()?;
    let mut wanted: Vec<String> = state.namespaces.clone();
    for ns in names.all_ns(&c) {
        if !wanted.contains(&ns) {
            wanted.push(ns);
        }
    }
    let mut deleted = Vec::new();
    let mut errors = Vec::new();
    for ns in wanted.iter().filter(|ns| existing.contains(*ns)) {
        if let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() {
            let left = String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if !left.is_empty() {
                eprintln!(
                    "cluster down: warning: processes still in {ns} (not started by up): {left}"
                );
            }
        }
        match run(&["ip", "netns", "del", ns]) {
            Ok(()) => deleted.push(ns.clone()),
            Err(e) => errors.push(e),
        }
    }
    if names.dir.exists() {
        std::fs::remove_dir_all(&names.dir)
            .map_err(|e| format!("cluster down: {}: {e}", names.dir.display()))?;
    }
    names.remove_parent();
    if !errors.is_empty() {
        return Err(format!("cluster down: {}", errors.join("\n")));
    }
    if stopped == 0 && deleted.is_empty() {
        println!("cluster {} is down (nothing to stop)", c.name);
    } else {
        println!(
            "cluster {} is down: stopped {stopped} sluice process(es), deleted {} namespace(s): {}",
            c.name,
            deleted.len(),
            deleted.join(" ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn options() {
        let o = parse_opts(
            &s(&[
                "d.toml",
                "--prefix",
                "x",
                "--state=/tmp/st",
                "--",
                "-j",
                "2",
            ]),
            true,
        )
        .unwrap()
        .unwrap();
        assert_eq!(o.desc, "d.toml");
        assert_eq!(o.prefix.as_deref(), Some("x"));
        assert_eq!(o.state, Some(PathBuf::from("/tmp/st")));
        assert_eq!(o.extra, s(&["-j", "2"]));
        assert!(parse_opts(&s(&["d.toml", "--sluice", "x"]), false).is_err());
        assert!(parse_opts(&s(&["d.toml", "--prefix", "a/b"]), true)
            .unwrap_err()
            .contains("--prefix"));
        assert!(parse_opts(&s(&["--prefix"]), true)
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse_opts(&s(&[]), false)
            .unwrap_err()
            .contains("no description"));
    }

    #[test]
    fn names_and_state() {
        let c = desc::parse(include_str!("../../../conf/cluster/rb4.toml"), "rb4.toml").unwrap();
        let o = parse_opts(&s(&["rb4.toml"]), true).unwrap().unwrap();
        let n = Names::new(&c, &o).unwrap();
        assert_eq!(n.dir, PathBuf::from("/run/sluice-cluster/sluice-cl-rb4"));
        assert_eq!(
            n.all_ns(&c),
            s(&[
                "sluice-cl-rb4-n1",
                "sluice-cl-rb4-n2",
                "sluice-cl-rb4-n3",
                "sluice-cl-rb4-n4",
                "sluice-cl-rb4-n1-h0",
                "sluice-cl-rb4-n2-h0",
                "sluice-cl-rb4-n3-h0",
                "sluice-cl-rb4-n4-h0",
            ])
        );
        let st = read_state(
            "# x\ncluster rb4\nnetns a-n1\nnetns a-n2\npid 12 n1 /s/n1.click\npid x n2 y\n",
        );
        assert_eq!(st.namespaces, s(&["a-n1", "a-n2"]));
        assert_eq!(st.pids, [(12, "/s/n1.click".to_string())]);
    }
}
