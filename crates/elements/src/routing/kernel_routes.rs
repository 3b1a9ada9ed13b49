//! KernelRoutes — keeps route tables in step with a Linux kernel routing table
//!
//! Synopsis: `KernelRoutes(TABLE, [*keywords* TABLE, TABLE6, KTABLE, NETNS, DEV, BLACKHOLE,
//! LOCAL, RCVBUF, VERBOSE])`
//!
//! Ports: none.
//!
//! Follows one routing table of a Linux kernel (the `ip route ... table N` of a network
//! namespace) over rtnetlink, so that a routing daemon beside Sluice — BIRD or FRR exporting
//! its routes to that kernel table, as for a Linux router — steers Sluice's forwarding. At
//! initialisation the element dumps the interfaces and the routes of the namespace, then
//! follows their changes (`RTM_NEWROUTE`, `RTM_DELROUTE`, interface and address changes); each
//! change reaches the tables within milliseconds. Changes are made through the tables' own
//! `set` and `remove` write handlers (many routes per write), so every table that takes route
//! changes works and its `table` and `lookup` handlers show the same routes. The element
//! works from the router's event loop: the socket is non-blocking, and each turn reads for at
//! most 1 ms, then applies changes for at most 1 ms more (in writes of 512 routes), so a dump
//! of a full Internet table (500,000 routes in about 1.5 s) does not stall forwarding; only
//! the turns in which a table's structures double in size take longer (up to about 0.1 s, a
//! few times in a full load; see `longest_turn`).
//!
//! Each kernel route becomes a table route `PREFIX [GW] OUT`:
//! - a `unicast` route's output interface (of a multipath route, its first next hop's) picks
//!   OUT from the DEV arguments; its gateway (`RTA_GATEWAY` or `RTA_VIA`) becomes GW, none for
//!   a route straight onto the link. A route whose interface has no DEV port is skipped.
//! - `blackhole`, `unreachable` and `prohibit` routes go to output BLACKHOLE; `local` routes
//!   (table `local`) to output LOCAL; without those arguments they are skipped, as are
//!   `broadcast`, `multicast`, `anycast`, `throw` and `nat` routes, routes with a TOS, and
//!   gateways of the other address family.
//! - Of several kernel routes for one prefix (different metrics), the table gets the one the
//!   kernel uses, the lowest metric; when that one is skipped, the prefix is removed from the
//!   tables (Sluice then uses a shorter prefix, as it cannot do what the kernel does).
//! - A prefix the kernel adds is written with `set`: a route the table was configured with
//!   for the same prefix is replaced, and removed with the kernel's.
//!
//! The kernel removes IPv4 routes silently when an interface goes down or loses an address;
//! on those events, and when the socket overflows (`ENOBUFS`, a burst larger than RCVBUF),
//! the element dumps the table again and reconciles: routes it no longer reports are removed,
//! the others set. A dump that brings nothing for 5 s is started again.
//!
//! Hot swap: the new element dumps the kernel table afresh and sets every route it reports.
//!
//! Arguments:
//! - `TABLE` (element name; the first may be given by position; repeatable): an IPv4 route
//!   table that takes route changes (RadixIPLookup, DirectIPLookup, LinearIPLookup,
//!   RangeIPLookup). `TABLE6` (repeatable): an IPv6 table (LookupIP6Route). At least one of
//!   them.
//! - `KTABLE` (number or name from `/etc/iproute2/rt_tables`; default `main`): the kernel table.
//! - `NETNS` (name under `/run/netns`, or a path): the network namespace whose table to
//!   follow; by default Sluice's own. Sluice itself may run in another namespace.
//! - `DEV` (`NAME OUT`, repeatable): kernel interface NAME is output OUT of the tables.
//! - `BLACKHOLE` (output): for blackhole, unreachable and prohibit routes. `LOCAL` (output):
//!   for local routes.
//! - `RCVBUF` (bytes, default 33554432): the socket's receive buffer: how large a burst of
//!   changes is taken without a resync.
//! - `VERBOSE` (boolean, default false): print every change and each dump's summary on
//!   standard error.
//!
//! Handlers:
//! - `routes` (r): prefixes the tables hold through this element.
//! - `kernel_routes` (r): routes of the kernel table (every prefix, metric and TOS).
//!   `skipped` (r): those of them not installed (see above).
//! - `added`, `replaced`, `removed` (r): table changes made. `errors` (r): changes a table
//!   refused (the first are printed on standard error).
//! - `multipath` (r): multipath routes taken with their first next hop.
//! - `dumps` (r): complete dumps of the kernel table. `overruns` (r): socket overflows, each
//!   followed by a new dump. `malformed` (r): netlink messages that could not be read (the
//!   first is printed on standard error).
//! - `pending` (r): prefixes read but not yet applied. `synced` (r): true when the tables hold
//!   what the kernel table holds. `last_sync` (r): when they last came to hold it (0 before).
//! - `longest_turn` (r): the most CPU time, in microseconds, one turn of reading and applying
//!   took: how long the element held up its thread.
//! - `resync` (w): dump the kernel table again and reconcile.
//! - `verbose` (rw): VERBOSE.
//!
//! Example — the routes BIRD exports to kernel table 100 of namespace `rns`, for a router
//! with interfaces eth0 and eth1:
//! ```text
//! rt :: RadixIPLookup;
//! KernelRoutes(rt, KTABLE 100, NETNS rns, DEV eth0 0, DEV eth1 1);
//! ```

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, Instant};

use netlink_sys::Socket;
use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Table, Timestamp};
use sluice_lang::args::{Args, AtMost, Word};

use super::fib::{Change, Fib, Hop, Prefix};
use super::netlink::{self, Event, KernelRoute, Kind};

/// Time one turn may spend reading the socket, and then applying changes.
const TURN_BUDGET: Duration = Duration::from_millis(1);
/// Changes written to a table in one handler write.
const WRITE_BATCH: usize = 512;
/// Receive buffer for one datagram (a dump's datagrams are at most 32 KiB).
const DATAGRAM_MAX: usize = 64 * 1024;
/// Table errors printed before the rest are only counted.
const ERRORS_SHOWN: u64 = 5;
/// A dump that brings nothing for this long is abandoned and started again.
const DUMP_STALL: f64 = 5.0;
/// Timers: more work to do now; retry a dump the kernel refused for now; check that a dump
/// progresses.
const TIMER_WORK: usize = 0;
const TIMER_RETRY: usize = 1;
const TIMER_STALL: usize = 2;

/// Where the element is in its dumps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Following changes.
    Following,
    /// Dumping the interfaces (request sequence number).
    Links(u32),
    /// Dumping the routes (request sequence number).
    Routes(u32),
}

/// A route table the element drives.
struct TableRef {
    /// Its name: as configured, then (from initialisation) the full name.
    name: String,
    /// Its element index.
    index: usize,
    /// An IPv6 table.
    v6: bool,
}

/// The KernelRoutes element.
pub struct KernelRoutes {
    tables: Vec<TableRef>,
    ktable: u32,
    netns: Option<String>,
    devs: HashMap<String, u32>,
    blackhole: Option<u32>,
    local: Option<u32>,
    rcvbuf: usize,
    verbose: bool,
    sock: Option<Socket>,
    buf: Vec<u8>,
    events: Vec<Event>,
    /// Interface index to name and administrative state.
    links: HashMap<u32, (String, bool)>,
    fib: Fib,
    phase: Phase,
    seq: u32,
    resync_wanted: bool,
    added: u64,
    replaced: u64,
    removed: u64,
    errors: u64,
    multipath: u64,
    dumps: u64,
    overruns: u64,
    malformed: u64,
    last_sync: Timestamp,
    dump_started: Option<Instant>,
    /// When the socket last gave a datagram.
    last_datagram: Instant,
    /// The longest turn, in microseconds.
    longest_turn: u64,
}

impl Default for KernelRoutes {
    fn default() -> Self {
        KernelRoutes {
            tables: Vec::new(),
            ktable: 254,
            netns: None,
            devs: HashMap::new(),
            blackhole: None,
            local: None,
            rcvbuf: 32 << 20,
            verbose: false,
            sock: None,
            buf: Vec::new(),
            events: Vec::new(),
            links: HashMap::new(),
            fib: Fib::default(),
            phase: Phase::Following,
            seq: 0,
            resync_wanted: false,
            added: 0,
            replaced: 0,
            removed: 0,
            errors: 0,
            multipath: 0,
            dumps: 0,
            overruns: 0,
            malformed: 0,
            last_sync: Timestamp::ZERO,
            dump_started: None,
            last_datagram: Instant::now(),
            longest_turn: 0,
        }
    }
}

/// Parses a kernel table: a number, or a name of iproute2's table lists.
pub fn parse_ktable(s: &str) -> Result<u32, String> {
    let s = s.trim();
    if let Ok(n) = s.parse::<u32>() {
        return Ok(n);
    }
    let builtin = match s {
        "unspec" => Some(0),
        "default" => Some(253),
        "main" => Some(254),
        "local" => Some(255),
        _ => None,
    };
    if let Some(n) = builtin {
        return Ok(n);
    }
    let mut files = vec![
        "/etc/iproute2/rt_tables".to_string(),
        "/usr/share/iproute2/rt_tables".to_string(),
    ];
    for dir in [
        "/etc/iproute2/rt_tables.d",
        "/usr/share/iproute2/rt_tables.d",
    ] {
        if let Ok(rd) = std::fs::read_dir(dir) {
            let mut more: Vec<String> = rd
                .flatten()
                .map(|e| e.path().to_string_lossy().into_owned())
                .filter(|p| p.ends_with(".conf"))
                .collect();
            more.sort();
            files.extend(more);
        }
    }
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .find_map(|text| table_in(&text, s))
        .ok_or_else(|| format!("unknown kernel table '{s}' (not a number nor in rt_tables)"))
}

/// The id of table `name` in an rt_tables file's text.
fn table_in(text: &str, name: &str) -> Option<u32> {
    text.lines().find_map(|l| {
        let l = l.split('#').next()?;
        let mut w = l.split_whitespace();
        let id = w.next()?;
        (w.next()? == name).then(|| parse_id(id)).flatten()
    })
}

fn parse_id(s: &str) -> Option<u32> {
    match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// CPU time of the calling thread, in microseconds.
fn thread_cpu_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1000
}

/// A prefix in the tables' syntax.
fn show_prefix(p: &Prefix) -> String {
    format!("{}/{}", show_addr(p.v6, p.addr), p.len)
}

fn show_addr(v6: bool, a: u128) -> String {
    if v6 {
        Ipv6Addr::from(a).to_string()
    } else {
        Ipv4Addr::from(a as u32).to_string()
    }
}

/// The handler value for one change: `PREFIX [GW] OUT`, or `PREFIX` for a removal.
fn change_item(c: &Change) -> String {
    match c {
        Change::Add(p, h) | Change::Replace(p, h) if h.gw != 0 => {
            format!("{} {} {}", show_prefix(p), show_addr(p.v6, h.gw), h.port)
        }
        Change::Add(p, h) | Change::Replace(p, h) => format!("{} {}", show_prefix(p), h.port),
        Change::Remove(p) => show_prefix(p),
    }
}

impl KernelRoutes {
    fn has_family(&self, v6: bool) -> bool {
        self.tables.iter().any(|t| t.v6 == v6)
    }

    /// What a table does with kernel route `r`, or why it cannot be installed.
    fn hop_of(&self, r: &KernelRoute) -> Result<Hop, String> {
        let port = match r.kind {
            Kind::Unicast => {
                let (name, _) = self
                    .links
                    .get(&r.oif)
                    .ok_or_else(|| format!("unknown interface {}", r.oif))?;
                *self
                    .devs
                    .get(name)
                    .ok_or_else(|| format!("interface {name} has no DEV port"))?
            }
            Kind::Drop => self.blackhole.ok_or("drop route without BLACKHOLE")?,
            Kind::Local => self.local.ok_or("local route without LOCAL")?,
            Kind::Other => return Err("unsupported route type".into()),
        };
        if r.tos != 0 {
            return Err("route with a TOS".into());
        }
        let gw = match (r.gateway, r.prefix.v6) {
            (None, _) => 0,
            (Some(IpAddr::V4(a)), false) => u32::from(a) as u128,
            (Some(IpAddr::V6(a)), true) => u128::from(a),
            _ => return Err("gateway of the other address family".into()),
        };
        Ok(Hop { gw, port })
    }

    /// Dumps the interfaces and then the routes again, unless a dump is under way (then
    /// once it ends).
    fn resync(&mut self, cx: &mut Cx) {
        if self.phase != Phase::Following {
            self.resync_wanted = true;
            return;
        }
        self.resync_wanted = false;
        self.seq = self.seq.wrapping_add(1);
        let Some(s) = &self.sock else { return };
        match netlink::request_links(s, self.seq) {
            Ok(()) => {
                self.phase = Phase::Links(self.seq);
                self.dump_started = Some(Instant::now());
                cx.schedule_after(TIMER_STALL, Timestamp::from_secs_f64(DUMP_STALL));
            }
            Err(e) => {
                eprintln!("{}: interface dump: {e}", cx.name());
                cx.schedule_after(TIMER_RETRY, Timestamp::from_secs_f64(0.1));
            }
        }
    }

    fn event(&mut self, ev: Event, cx: &mut Cx) {
        match ev {
            Event::NewRoute(r) | Event::DelRoute(r)
                if r.table != self.ktable || !self.has_family(r.prefix.v6) => {}
            Event::NewRoute(r) => {
                let hop = self.hop_of(&r);
                if self.verbose {
                    match &hop {
                        Ok(_) => {}
                        Err(why) => {
                            eprintln!("{}: skip {}: {why}", cx.name(), show_prefix(&r.prefix))
                        }
                    }
                }
                self.multipath += r.multipath as u64;
                self.fib.update(r.prefix, r.tos, r.metric, hop.ok());
            }
            Event::DelRoute(r) => self.fib.delete(r.prefix, r.tos, r.metric),
            Event::Link { index, name, up } => {
                let old = self.links.insert(index, (name.clone(), up));
                let mapped = |n: &str| self.devs.contains_key(n);
                if let Some((old_name, old_up)) = old {
                    if (old_name != name && (mapped(&old_name) || mapped(&name))) || (old_up && !up)
                    {
                        self.resync_wanted = true;
                    }
                }
            }
            Event::LinkGone { index } => {
                if self.links.remove(&index).is_some() {
                    self.resync_wanted = true;
                }
            }
            Event::AddressGone => self.resync_wanted |= self.has_family(false),
            Event::Done { seq } => match self.phase {
                Phase::Links(s) if s == seq => {
                    self.seq = self.seq.wrapping_add(1);
                    let sent = self
                        .sock
                        .as_ref()
                        .map(|s| netlink::request_routes(s, self.seq));
                    match sent {
                        Some(Ok(())) => {
                            self.fib.begin_dump();
                            self.phase = Phase::Routes(self.seq);
                        }
                        Some(Err(e)) => {
                            eprintln!("{}: route dump: {e}", cx.name());
                            self.phase = Phase::Following;
                            cx.schedule_after(TIMER_RETRY, Timestamp::from_secs_f64(0.1));
                        }
                        None => self.phase = Phase::Following,
                    }
                }
                Phase::Routes(s) if s == seq => {
                    self.fib.end_dump();
                    self.phase = Phase::Following;
                    self.dumps += 1;
                    if self.verbose {
                        let ms = self
                            .dump_started
                            .map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
                        eprintln!(
                            "{}: dump {}: {} kernel routes, {} skipped, read in {ms:.0} ms",
                            cx.name(),
                            self.dumps,
                            self.fib.kernel_routes(),
                            self.fib.skipped()
                        );
                    }
                }
                _ => {}
            },
            Event::Failed { seq, errno } => {
                if matches!(self.phase, Phase::Links(s) | Phase::Routes(s) if s == seq) {
                    self.phase = Phase::Following;
                    if errno != libc::EBUSY {
                        eprintln!(
                            "{}: dump refused: {}",
                            cx.name(),
                            std::io::Error::from_raw_os_error(errno)
                        );
                    }
                    cx.schedule_after(TIMER_RETRY, Timestamp::from_secs_f64(0.1));
                }
            }
            Event::Malformed(e) => {
                self.malformed += 1;
                if self.malformed == 1 || self.verbose {
                    eprintln!("{}: unreadable netlink message: {e}", cx.name());
                }
            }
        }
    }

    /// Reads what the socket holds, for at most TURN_BUDGET; true if it may hold more.
    fn read(&mut self, cx: &mut Cx) -> bool {
        let start = Instant::now();
        loop {
            if start.elapsed() >= TURN_BUDGET {
                return true;
            }
            let Some(s) = &self.sock else { return false };
            self.buf.clear();
            self.buf.reserve(DATAGRAM_MAX);
            match s.recv(&mut self.buf, libc::MSG_TRUNC) {
                Ok(n) if n > self.buf.len() => {
                    self.malformed += 1;
                    eprintln!("{}: netlink datagram of {n} bytes truncated", cx.name());
                    self.resync_wanted = true;
                }
                Ok(_) => {
                    self.last_datagram = Instant::now();
                    let mut events = std::mem::take(&mut self.events);
                    netlink::parse(&self.buf, &mut events);
                    for ev in events.drain(..) {
                        self.event(ev, cx);
                    }
                    self.events = events;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                    self.overruns += 1;
                    if self.verbose {
                        eprintln!("{}: socket overrun, dumping again", cx.name());
                    }
                    self.resync_wanted = true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    eprintln!("{}: netlink: {e}", cx.name());
                    return false;
                }
            }
        }
    }

    /// Applies queued changes, batch by batch, for at most TURN_BUDGET.
    fn apply(&mut self, cx: &mut Cx) {
        let start = Instant::now();
        while self.fib.pending() > 0 && start.elapsed() < TURN_BUDGET {
            let changes = self.fib.next_changes(WRITE_BATCH);
            for v6 in [false, true] {
                for remove in [true, false] {
                    let group: Vec<Change> = changes
                        .iter()
                        .filter(|c| c.prefix().v6 == v6 && matches!(c, Change::Remove(_)) == remove)
                        .copied()
                        .collect();
                    if !group.is_empty() {
                        self.write(&group, v6, remove, cx);
                    }
                }
            }
        }
    }

    /// Writes `group` (all removals or all additions of one family) to every table of the
    /// family: in one write, or one by one if that fails.
    fn write(&mut self, group: &[Change], v6: bool, remove: bool, cx: &mut Cx) {
        let verb = if remove { "remove" } else { "set" };
        let items: Vec<String> = group.iter().map(change_item).collect();
        let mut failed = vec![false; group.len()];
        let tables: Vec<String> = self
            .tables
            .iter()
            .filter(|t| t.v6 == v6)
            .map(|t| t.name.clone())
            .collect();
        for t in &tables {
            let path = format!("{t}.{verb}");
            if cx.write_handler(&path, &items.join(",")).is_ok() {
                continue;
            }
            for (item, f) in items.iter().zip(failed.iter_mut()) {
                if let Err(e) = cx.write_handler(&path, item) {
                    *f = true;
                    self.errors += 1;
                    if self.errors <= ERRORS_SHOWN || self.verbose {
                        eprintln!("{}: {path} {item}: {e}", cx.name());
                    }
                }
            }
        }
        for ((c, f), item) in group.iter().zip(failed).zip(&items) {
            if !f {
                match c {
                    Change::Add(..) => self.added += 1,
                    Change::Replace(..) => self.replaced += 1,
                    Change::Remove(_) => self.removed += 1,
                }
                if self.verbose {
                    eprintln!("{}: {verb} {item}", cx.name());
                }
            }
            self.fib.done(*c, !f);
        }
    }

    /// One turn of work: read, apply, and come back at once if there is more.
    fn turn(&mut self, cx: &mut Cx) {
        let start = thread_cpu_us();
        let more = self.read(cx);
        if self.resync_wanted && self.phase == Phase::Following {
            self.resync(cx);
        }
        self.apply(cx);
        if more || self.fib.pending() > 0 {
            cx.schedule_after(TIMER_WORK, Timestamp::ZERO);
        } else if self.synced() {
            self.last_sync = cx.now();
        }
        self.longest_turn = self.longest_turn.max(thread_cpu_us().saturating_sub(start));
    }

    fn synced(&self) -> bool {
        self.dumps > 0
            && self.phase == Phase::Following
            && !self.resync_wanted
            && self.fib.pending() == 0
    }
}

impl Element for KernelRoutes {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let mut v4: Vec<Word> = args.read_all("TABLE")?;
        if let Some(first) = args.read_p::<Word>("TABLE")? {
            v4.insert(0, first);
        }
        let v6: Vec<Word> = args.read_all("TABLE6")?;
        let named = v4
            .into_iter()
            .map(|w| (w.0, false))
            .chain(v6.into_iter().map(|w| (w.0, true)));
        for (name, v6) in named {
            match cx.find_element(&name) {
                Some(index) => self.tables.push(TableRef { name, index, v6 }),
                None => {
                    args.error(format!("no element named '{name}'"));
                    return Err(());
                }
            }
        }
        if self.tables.is_empty() {
            args.error("no route table (TABLE or TABLE6)");
            return Err(());
        }
        if let Some(t) = args.read::<String>("KTABLE")? {
            match parse_ktable(&t) {
                Ok(n) => self.ktable = n,
                Err(e) => {
                    args.error(format!("KTABLE: {e}"));
                    return Err(());
                }
            }
        }
        self.netns = args.read::<String>("NETNS")?;
        for d in args.read_all::<String>("DEV")? {
            let w: Vec<&str> = d.split_whitespace().collect();
            match w[..] {
                [name, port] if port.parse::<u32>().is_ok() => {
                    self.devs
                        .insert(name.to_string(), port.parse().unwrap_or(0));
                }
                _ => {
                    args.error(format!("DEV: expected 'NAME OUT', got '{d}'"));
                    return Err(());
                }
            }
        }
        self.blackhole = args.read("BLACKHOLE")?;
        self.local = args.read("LOCAL")?;
        if let Some(AtMost(n)) = args.read::<AtMost<{ 1 << 30 }>>("RCVBUF")? {
            self.rcvbuf = n;
        }
        args.read_into("VERBOSE", &mut self.verbose)?;
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        for t in self.tables.iter_mut() {
            t.name = cx.element_name(t.index).to_string();
            let (name, v6) = (&t.name, t.v6);
            for h in ["set", "remove"] {
                cx.check_handler(&format!("{name}.{h}"), true)
                    .map_err(|_| {
                        format!("'{name}' is no route table that takes changes (no '{h}' handler)")
                    })?;
            }
            let probe = if v6 { "2001:db8::1" } else { "198.18.0.1" };
            cx.read_handler_param(&format!("{name}.lookup"), probe)
                .map_err(|_| {
                    format!(
                        "'{name}' is no {} route table",
                        if v6 { "IPv6 (TABLE6)" } else { "IPv4 (TABLE)" }
                    )
                })?;
        }
        let mut groups = vec![libc::RTNLGRP_LINK];
        if self.has_family(false) {
            groups.extend([libc::RTNLGRP_IPV4_ROUTE, libc::RTNLGRP_IPV4_IFADDR]);
        }
        if self.has_family(true) {
            groups.push(libc::RTNLGRP_IPV6_ROUTE);
        }
        let s = netlink::open(self.netns.as_deref(), self.rcvbuf, &groups)?;
        cx.add_select(std::os::fd::AsRawFd::as_raw_fd(&s));
        self.sock = Some(s);
        self.resync(cx);
        Ok(())
    }

    fn selected(&mut self, _fd: i32, cx: &mut Cx) {
        self.turn(cx);
    }

    fn run_timer(&mut self, id: usize, cx: &mut Cx) {
        match id {
            TIMER_RETRY => self.resync_wanted = true,
            TIMER_STALL if self.phase != Phase::Following => {
                if self.last_datagram.elapsed().as_secs_f64() >= DUMP_STALL {
                    eprintln!("{}: dump stalled, starting again", cx.name());
                    self.phase = Phase::Following;
                    self.resync_wanted = true;
                } else {
                    cx.schedule_after(TIMER_STALL, Timestamp::from_secs_f64(DUMP_STALL));
                }
            }
            _ => {}
        }
        self.turn(cx);
    }

    fn cleanup(&mut self, cx: &mut Cx) {
        if let Some(s) = self.sock.take() {
            cx.remove_select(std::os::fd::AsRawFd::as_raw_fd(&s));
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("routes", |e| e.fib.installed())
            .read("kernel_routes", |e| e.fib.kernel_routes())
            .read("skipped", |e| e.fib.skipped())
            .read("added", |e| e.added)
            .read("replaced", |e| e.replaced)
            .read("removed", |e| e.removed)
            .read("errors", |e| e.errors)
            .read("multipath", |e| e.multipath)
            .read("dumps", |e| e.dumps)
            .read("overruns", |e| e.overruns)
            .read("malformed", |e| e.malformed)
            .read("pending", |e| e.fib.pending())
            .read("synced", |e| e.synced())
            .read("last_sync", |e| e.last_sync)
            .read("longest_turn", |e| e.longest_turn)
            .write("resync", |e, _, cx| {
                e.resync_wanted = true;
                cx.schedule_after(TIMER_WORK, Timestamp::ZERO);
                Ok(())
            })
            .data("verbose", |e| &mut e.verbose)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "KernelRoutes",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("kernel_routes.rs"),
    make: || Box::new(KernelRoutes::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_table_names() {
        assert_eq!(parse_ktable("100"), Ok(100));
        assert_eq!(parse_ktable("main"), Ok(254));
        assert_eq!(parse_ktable("local"), Ok(255));
        assert!(parse_ktable("no-such-table-here").is_err());
        let text = "# comment\n255\tlocal\n0x10 isp # uplink\n200 bgp\n";
        assert_eq!(table_in(text, "isp"), Some(16));
        assert_eq!(table_in(text, "bgp"), Some(200));
        assert_eq!(table_in(text, "comment"), None);
    }

    #[test]
    fn hops_from_kernel_routes() {
        let mut k = KernelRoutes::default();
        k.devs.insert("eth1".into(), 1);
        k.links.insert(3, ("eth1".into(), true));
        k.links.insert(4, ("mgmt".into(), true));
        let mut r = KernelRoute {
            prefix: Prefix {
                v6: false,
                addr: 0xc612_6400,
                len: 24,
            },
            table: 254,
            tos: 0,
            metric: 0,
            kind: Kind::Unicast,
            gateway: Some(IpAddr::V4(Ipv4Addr::new(198, 18, 2, 2))),
            oif: 3,
            multipath: false,
        };
        assert_eq!(
            k.hop_of(&r),
            Ok(Hop {
                gw: 0xc612_0202,
                port: 1
            })
        );
        let item = change_item(&Change::Add(r.prefix, k.hop_of(&r).unwrap()));
        assert_eq!(item, "198.18.100.0/24 198.18.2.2 1");
        r.oif = 4;
        assert!(k.hop_of(&r).unwrap_err().contains("no DEV port"));
        r.kind = Kind::Drop;
        assert!(k.hop_of(&r).is_err());
        k.blackhole = Some(3);
        r.gateway = None;
        assert_eq!(k.hop_of(&r), Ok(Hop { gw: 0, port: 3 }));
        r.kind = Kind::Unicast;
        r.oif = 3;
        r.gateway = Some(IpAddr::V6(Ipv6Addr::LOCALHOST));
        assert!(k.hop_of(&r).is_err());
        assert_eq!(
            change_item(&Change::Remove(Prefix {
                v6: true,
                addr: 0x2001_0db8 << 96,
                len: 32
            })),
            "2001:db8::/32"
        );
    }
}
