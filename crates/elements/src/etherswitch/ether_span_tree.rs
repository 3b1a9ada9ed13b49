//! EtherSpanTree — IEEE 802.1D spanning tree for an EtherSwitch
//!
//! Synopsis: `EtherSpanTree(ADDR, INPUT_SUPPRESSOR, OUTPUT_SUPPRESSOR, SWITCH [, keywords
//! PRIORITY, HELLO_TIME, MAX_AGE, FORWARD_DELAY, PATH_COST])`
//!
//! Ports: any number of push inputs and as many push outputs, one pair per switch port.
//! Input *i* takes the BPDUs received on port *i* (a Classifier such as
//! `Classifier(0/0180c2000000 14/4242, -)` separates them from the data frames); output *i*
//! sends the BPDUs for port *i*.
//!
//! Runs the spanning tree protocol of IEEE 802.1D-1998 with the other bridges of the
//! network, in its 802.1D-1998 frame format (802.3 length, LLC 42 42 03, group address
//! 01:80:c2:00:00:00), as Linux's bridge does with STP on, and controls an EtherSwitch
//! through two Suppressor elements, one before and one after the switch, each with as many
//! ports as the switch (Figure 16 of the Click paper):
//! - The bridge with the lowest identifier (PRIORITY, then ADDR) becomes the root; each
//!   other bridge chooses as root port the port with the cheapest path to it, and on each LAN
//!   the bridge with the cheapest path is designated. Root and designated ports forward; the
//!   others block, so the active topology has no loop.
//! - A port that blocks has both its Suppressor ports suppressed. A port on its way to
//!   forwarding spends FORWARD_DELAY listening (still suppressed both ways), then
//!   FORWARD_DELAY learning (input allowed, output suppressed, and the switch's `learn_only`
//!   set so that it learns source addresses without forwarding), then forwards (both
//!   allowed).
//! - The root sends configuration BPDUs every HELLO_TIME; other bridges relay the root's on
//!   their designated ports. Information not refreshed within the root's max age is
//!   discarded and the tree recomputed. The root's hello time, max age and forward delay
//!   apply throughout the network.
//! - When a port starts or stops forwarding, the bridge sends topology change notifications
//!   on its root port until the upstream bridge acknowledges them; the root then sets the
//!   topology change flag for max age plus forward delay, and while that flag is set every
//!   bridge ages addresses out after the forward delay: EtherSpanTree writes the forward
//!   delay (whole seconds, rounded up) to the switch's `timeout` handler and restores the
//!   earlier value afterwards.
//!
//! Every BPDU input is consumed. Configuration and topology change notification BPDUs of
//! any protocol version are read (802.1D-2004's rule); anything else is dropped and counted
//! (`drop_details`): frames that are not a well-formed BPDU, BPDUs of other types (RSTP's)
//! or protocols, and configuration BPDUs whose message age has reached their max age.
//! BPDUs are sent from ADDR. The protocol starts when the router starts (ports listening);
//! a hot swap starts it afresh.
//!
//! Differences from Click's EtherSpanTree, which follows the protocol loosely: Click sends
//! its configuration BPDUs from every bridge every hello time and moves ports between
//! states on its own rules; its bridge identifiers carry the address bytes reversed on
//! little-endian machines, and its port identifiers are the bare port numbers. Here the
//! procedures, port identifiers (priority 128, ports numbered from 1) and frames are
//! 802.1D's, so the switch interoperates with other bridges; the keywords are additions.
//!
//! Arguments:
//! - `ADDR` (Ethernet address): this bridge's address, the low 48 bits of its identifier.
//! - `INPUT_SUPPRESSOR`, `OUTPUT_SUPPRESSOR` (element names): the Suppressors before and
//!   after the switch, with at least as many ports as EtherSpanTree (at most 64).
//! - `SWITCH` (element name): the EtherSwitch.
//! - `PRIORITY` (integer 0–65535, default 0xdead as in Click, which makes the switch
//!   unlikely to become root; 802.1D's default is 32768): the high 16 bits of the bridge
//!   identifier.
//! - `HELLO_TIME` (seconds, 1–10, default 2), `MAX_AGE` (seconds, 6–40, default 20),
//!   `FORWARD_DELAY` (seconds, 4–30, default 15): the timers this bridge announces when it
//!   is the root; they must satisfy 2 × (FORWARD_DELAY − 1) ≥ MAX_AGE ≥ 2 × (HELLO_TIME + 1).
//! - `PATH_COST` (integer 1–65535, default 19, 802.1D's value for 100 Mb/s): the cost of
//!   every port.
//!
//! Handlers: `msgs` (r, as in Click): one line per port with the information the port
//! holds about its LAN's designated bridge (`N root ROOT cost C bridge BRIDGE port P`), then
//! the bridge's own (`best root ROOT cost C bridge BRIDGE tc BOOL`), bridge identifiers as
//! `PRIO.ADDRESS` in hexadecimal. `port_states` (r): one `N STATE ROLE` line per port, STATE
//! `blocking`, `listening`, `learning` or `forwarding`, ROLE `root`, `designated` or
//! `alternate`. `bridge_id` (r). `root_id` (r). `root_cost` (r). `root_port` (r: a port
//! number, or `none` on the root). `topology_change` (r: whether the topology change flag
//! is set). `hello_time`, `max_age`, `forward_delay` (r: the root's values in use, seconds).
//! `received` (r): BPDUs processed. `sent` (r): BPDUs sent. `drops`, `drop_details` (r).
//!
//! Example:
//! `stp :: EtherSpanTree(00:1f:29:4d:f8:31, in_supp, out_supp, sw); sw :: EtherSwitch;
//! in_supp, out_supp :: Suppressor; from0 -> c0 :: Classifier(0/0180c2000000 14/4242, -);
//! c0[0] -> [0]stp[0] -> q0; c0[1] -> [0]in_supp[0] -> [0]sw[0] -> [0]out_supp[0] -> q0;`
//! and the same for each port; `conf/ether-switch.click` is a whole switch.

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Packet, Table, Timestamp};
use sluice_lang::args::{Args, Seconds, Word};
use sluice_wire::stp::{BpduRepr, BridgeId};
use sluice_wire::{EtherAddr, WireError};

use super::stp::{Bridge, Outbox, PortState, Settings};

drop_reasons! {
    /// Why EtherSpanTree drops a frame.
    enum Reason {
        Malformed => "malformed BPDU",
        Unsupported => "not an STP configuration or TCN BPDU",
        TooOld => "message age not below max age",
    }
}

/// The protocol timer.
const TIMER: usize = 0;

/// The elements EtherSpanTree controls, by their full names, and the handlers it writes.
#[derive(Default)]
struct Controls {
    input: String,
    output: String,
    switch: String,
    /// `INPUT.activeN` and `OUTPUT.activeN` for each port.
    in_active: Vec<String>,
    out_active: Vec<String>,
}

/// What the controlled elements were last told.
#[derive(Default)]
struct Applied {
    input_allowed: Vec<bool>,
    output_allowed: Vec<bool>,
    learn_only: u64,
    /// The switch's timeout before a topology change shortened it.
    long_timeout: Option<String>,
}

/// The EtherSpanTree element.
pub struct EtherSpanTree {
    addr: EtherAddr,
    priority: u16,
    hello_time: Seconds,
    max_age: Seconds,
    forward_delay: Seconds,
    path_cost: u32,
    controls: Controls,
    bridge: Option<Bridge>,
    started: bool,
    applied: Applied,
    outbox: Outbox,
    received: u64,
    sent: u64,
    drops: Drops<Reason>,
}

impl Default for EtherSpanTree {
    fn default() -> Self {
        EtherSpanTree {
            addr: EtherAddr::default(),
            priority: 0xdead,
            hello_time: Seconds(2.0),
            max_age: Seconds(20.0),
            forward_delay: Seconds(15.0),
            path_cost: 19,
            controls: Controls::default(),
            bridge: None,
            started: false,
            applied: Applied::default(),
            outbox: Vec::new(),
            received: 0,
            sent: 0,
            drops: Drops::default(),
        }
    }
}

/// The full name of the element `name` refers to from the element configured in `cx`, as
/// Click finds it: in the element's compound, else in each enclosing one, else at the top.
fn full_name(cx: &ConfigCx, name: &str) -> Option<String> {
    let mut context = cx.name_context().to_string();
    loop {
        let full = format!("{context}{name}");
        if cx.element_index(&full).is_some() {
            return Some(full);
        }
        if context.is_empty() {
            return None;
        }
        context.pop();
        let outer = context.rfind('/').map_or(0, |i| i + 1);
        context.truncate(outer);
    }
}

/// Checks a time argument's range.
fn check_range(args: &mut Args, key: &str, v: Seconds, lo: f64, hi: f64) -> Result<(), ()> {
    if v.0 < lo || v.0 > hi {
        args.error(format!("{key}: must be between {lo} and {hi} seconds"));
        return Err(());
    }
    Ok(())
}

impl EtherSpanTree {
    fn settings(&self) -> Settings {
        Settings {
            bridge_id: BridgeId::new(self.priority, self.addr),
            hello_time: Timestamp::from_secs_f64(self.hello_time.0),
            max_age: Timestamp::from_secs_f64(self.max_age.0),
            forward_delay: Timestamp::from_secs_f64(self.forward_delay.0),
            path_cost: self.path_cost,
            port_priority: 0x80,
        }
    }

    /// Handles one frame from port `port`: a BPDU for the protocol, or a counted drop.
    fn receive(&mut self, port: usize, p: &Packet, now: Timestamp) {
        let repr = match BpduRepr::parse_frame(p.data()) {
            Ok((_, r)) => r,
            Err(WireError::Unsupported) => return self.drops.count(Reason::Unsupported),
            Err(_) => return self.drops.count(Reason::Malformed),
        };
        if let BpduRepr::Config(c) = &repr {
            if c.message_age >= c.max_age {
                return self.drops.count(Reason::TooOld);
            }
        }
        self.received += 1;
        if let Some(b) = &mut self.bridge {
            b.receive(port, &repr, now, &mut self.outbox);
        }
    }

    /// Starts the protocol if it has not started yet.
    fn start(&mut self, now: Timestamp) {
        if !self.started {
            self.started = true;
            if let Some(b) = &mut self.bridge {
                b.start(now, &mut self.outbox);
            }
        }
    }

    /// Sends the BPDUs the protocol asked for, tells the suppressors and the switch about
    /// port state and topology changes, and sets the timer for the protocol's next deadline.
    fn flush(&mut self, cx: &mut Cx) {
        let Some(bridge) = &self.bridge else {
            return;
        };
        for (port, bpdu) in self.outbox.drain(..) {
            if port < cx.noutputs() {
                self.sent += 1;
                cx.push_one(port, Packet::from_bytes(&bpdu.frame(self.addr)));
            }
        }
        let c = &self.controls;
        let a = &mut self.applied;
        let mut learn_only = 0u64;
        for p in 0..bridge.nports() {
            let state = bridge.state(p);
            let input = matches!(state, PortState::Learning | PortState::Forwarding);
            let output = state == PortState::Forwarding;
            if state == PortState::Learning {
                learn_only |= 1 << p;
            }
            if a.input_allowed[p] != input {
                a.input_allowed[p] = input;
                let _ = cx.write_handler(&c.in_active[p], if input { "true" } else { "false" });
            }
            if a.output_allowed[p] != output {
                a.output_allowed[p] = output;
                let _ = cx.write_handler(&c.out_active[p], if output { "true" } else { "false" });
            }
        }
        if a.learn_only != learn_only {
            a.learn_only = learn_only;
            let ports: Vec<String> = (0..64)
                .filter(|i| learn_only & (1u64 << i) != 0)
                .map(|i| i.to_string())
                .collect();
            let _ = cx.write_handler(&format!("{}.learn_only", c.switch), &ports.join(" "));
        }
        let timeout = format!("{}.timeout", c.switch);
        match (bridge.topology_change(), &a.long_timeout) {
            (true, None) => {
                a.long_timeout = Some(cx.read_handler(&timeout).unwrap_or_default());
                let fd = (bridge.forward_delay().0.max(0) as u64).div_ceil(1_000_000_000);
                let _ = cx.write_handler(&timeout, &fd.to_string());
            }
            (false, Some(long)) => {
                let long = long.trim().to_string();
                a.long_timeout = None;
                let _ = cx.write_handler(&timeout, &long);
            }
            _ => {}
        }
        if let Some(at) = bridge.next_deadline() {
            cx.schedule_timer(TIMER, at);
        }
    }

    fn msgs(&self) -> String {
        let Some(b) = &self.bridge else {
            return String::new();
        };
        let mut s: String = (0..b.nports())
            .map(|p| {
                let d = b.designated(p);
                format!(
                    "{p} root {} cost {} bridge {} port {:04x}\n",
                    d.root, d.cost, d.bridge, d.port
                )
            })
            .collect();
        s.push_str(&format!(
            "best root {} cost {} bridge {} tc {}\n",
            b.root_id(),
            b.root_path_cost(),
            b.settings().bridge_id,
            b.topology_change()
        ));
        s
    }

    fn port_states(&self) -> String {
        let Some(b) = &self.bridge else {
            return String::new();
        };
        (0..b.nports())
            .map(|p| format!("{p} {} {}\n", b.state(p).name(), b.role(p).name()))
            .collect()
    }

    fn time(&self, f: fn(&Bridge) -> Timestamp) -> String {
        self.bridge
            .as_ref()
            .map(|b| f(b).as_secs_f64().to_string())
            .unwrap_or_default()
    }
}

impl Element for EtherSpanTree {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.addr = args.read_mp("ADDR")?;
        let names: [Word; 3] = [
            args.read_mp("INPUT_SUPPRESSOR")?,
            args.read_mp("OUTPUT_SUPPRESSOR")?,
            args.read_mp("SWITCH")?,
        ];
        args.read_into("PRIORITY", &mut self.priority)?;
        args.read_into("HELLO_TIME", &mut self.hello_time)?;
        args.read_into("MAX_AGE", &mut self.max_age)?;
        args.read_into("FORWARD_DELAY", &mut self.forward_delay)?;
        args.read_into("PATH_COST", &mut self.path_cost)?;
        check_range(args, "HELLO_TIME", self.hello_time, 1.0, 10.0)?;
        check_range(args, "MAX_AGE", self.max_age, 6.0, 40.0)?;
        check_range(args, "FORWARD_DELAY", self.forward_delay, 4.0, 30.0)?;
        let (h, m, f) = (self.hello_time.0, self.max_age.0, self.forward_delay.0);
        if 2.0 * (f - 1.0) < m || m < 2.0 * (h + 1.0) {
            args.error(
                "timers must satisfy 2 * (FORWARD_DELAY - 1) >= MAX_AGE >= 2 * (HELLO_TIME + 1)",
            );
            return Err(());
        }
        if !(1..=65535).contains(&self.path_cost) {
            args.error("PATH_COST: must be between 1 and 65535");
            return Err(());
        }
        let mut full = Vec::new();
        for (w, key) in names
            .iter()
            .zip(["INPUT_SUPPRESSOR", "OUTPUT_SUPPRESSOR", "SWITCH"])
        {
            match full_name(cx, &w.0) {
                Some(n) => full.push(n),
                None => {
                    args.error(format!("{key}: no element named '{}'", w.0));
                    return Err(());
                }
            }
        }
        let n = cx.noutputs();
        if n > 64 {
            args.error("at most 64 ports");
            return Err(());
        }
        let [input, output, switch] = <[String; 3]>::try_from(full).map_err(|_| ())?;
        self.controls = Controls {
            in_active: (0..n).map(|i| format!("{input}.active{i}")).collect(),
            out_active: (0..n).map(|i| format!("{output}.active{i}")).collect(),
            input,
            output,
            switch,
        };
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let c = &self.controls;
        for (name, key, class) in [
            (&c.input, "INPUT_SUPPRESSOR", "Suppressor"),
            (&c.output, "OUTPUT_SUPPRESSOR", "Suppressor"),
            (&c.switch, "SWITCH", "EtherSwitch"),
        ] {
            let found = cx
                .read_handler(&format!("{name}.class"))
                .unwrap_or_default();
            if found.trim() != class {
                return Err(format!("{key}: '{name}' is not a {class}"));
            }
        }
        for (paths, key) in [
            (&c.in_active, "INPUT_SUPPRESSOR"),
            (&c.out_active, "OUTPUT_SUPPRESSOR"),
        ] {
            if let Some(last) = paths.last() {
                if cx.check_handler(last, true).is_err() {
                    return Err(format!("{key}: has fewer than {} ports", paths.len()));
                }
            }
        }
        let n = cx.noutputs();
        self.bridge = Some(Bridge::new(self.settings(), n));
        // Suppressors start with every port active: the first flush blocks them all.
        self.applied = Applied {
            input_allowed: vec![true; n],
            output_allowed: vec![true; n],
            learn_only: u64::MAX,
            long_timeout: None,
        };
        let now = cx.now();
        cx.schedule_timer(TIMER, now);
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let now = cx.now();
        self.start(now);
        // Timers due by now come first, whatever the frames are.
        if let Some(b) = &mut self.bridge {
            b.tick(now, &mut self.outbox);
        }
        for p in batch.iter() {
            self.receive(port, p, now);
        }
        drop(batch);
        self.flush(cx);
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        let now = cx.now();
        if self.started {
            if let Some(b) = &mut self.bridge {
                b.tick(now, &mut self.outbox);
            }
        } else {
            self.start(now);
        }
        self.flush(cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("msgs", Self::msgs)
            .read("port_states", Self::port_states)
            .read("bridge_id", |e| e.settings().bridge_id)
            .read("root_id", |e| {
                e.bridge
                    .as_ref()
                    .map(|b| b.root_id().to_string())
                    .unwrap_or_default()
            })
            .read("root_cost", |e| {
                e.bridge.as_ref().map_or(0, |b| b.root_path_cost())
            })
            .read("root_port", |e| {
                e.bridge
                    .as_ref()
                    .and_then(|b| b.root_port())
                    .map_or("none".to_string(), |p| p.to_string())
            })
            .read("topology_change", |e| {
                e.bridge.as_ref().is_some_and(|b| b.topology_change())
            })
            .read("hello_time", |e| e.time(Bridge::hello_time))
            .read("max_age", |e| e.time(Bridge::max_age))
            .read("forward_delay", |e| e.time(Bridge::forward_delay))
            .read("received", |e| e.received)
            .read("sent", |e| e.sent)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "EtherSpanTree",
    ports: "-/=",
    processing: "h/h",
    flow: "",
    source: include_str!("ether_span_tree.rs"),
    make: || Box::new(EtherSpanTree::default()),
};
