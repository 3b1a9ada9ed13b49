//! The IEEE 802.1D-1998 spanning tree protocol of one bridge, without packets or elements:
//! EtherSpanTree feeds it the BPDUs its ports receive and the time, and sends what it asks
//! for. Kept apart so that tests can run several bridges against each other on a virtual
//! clock.
//!
//! The procedures are those of 802.1D-1998 clause 8 (the ones Linux's bridge also follows):
//! configuration BPDUs replace a port's information when they are better (lower root, then
//! cost, then bridge, then port); the bridge picks the port with the best path to the root
//! as its root port and is designated bridge on every LAN where its own information is the
//! best; the root port and designated ports move from blocking through listening and
//! learning (one forward delay each) to forwarding, the others block. Only the root sends
//! configuration BPDUs on its own (every hello time); the others send theirs on their
//! designated ports when their root port hears from the root. Information ages out after
//! max age. A bridge that sees a port start or stop forwarding tells the root with topology
//! change notifications on its root port (repeated every hello time until acknowledged); the
//! root then sets the topology change flag in its BPDUs for max age plus forward delay, and
//! every bridge ages its addresses out after one forward delay while that flag is set.

use sluice_core::Timestamp;
use sluice_wire::stp::{BpduRepr, BridgeId, ConfigBpdu};

/// 802.1D's hold time: at most one configuration BPDU per port per second.
const HOLD_TIME: Timestamp = Timestamp(1_000_000_000);
/// What each bridge adds to the message age of the information it passes on (1/256 s, the
/// smallest step the protocol carries, as Linux does).
const MESSAGE_AGE_INCREMENT: u16 = 1;

/// Converts protocol time (1/256 s) to a timestamp.
pub fn from_ticks(t: u16) -> Timestamp {
    Timestamp(i64::from(t) * 1_000_000_000 / 256)
}

/// Converts a timestamp to protocol time (1/256 s), saturating.
pub fn to_ticks(t: Timestamp) -> u16 {
    (t.0.max(0) as i128 * 256 / 1_000_000_000).min(i128::from(u16::MAX)) as u16
}

/// A port's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortState {
    /// Neither forwards nor learns; only BPDUs are received.
    Blocking,
    /// On the way to forwarding: still blocking, for one forward delay.
    Listening,
    /// Learns source addresses but forwards nothing, for one forward delay.
    Learning,
    /// Forwards and learns.
    Forwarding,
}

impl PortState {
    /// The state's name, as Linux's `bridge link` shows it.
    pub fn name(self) -> &'static str {
        match self {
            PortState::Blocking => "blocking",
            PortState::Listening => "listening",
            PortState::Learning => "learning",
            PortState::Forwarding => "forwarding",
        }
    }
}

/// A port's role in the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortRole {
    /// The port with the best path to the root.
    Root,
    /// The port through which this bridge serves its LAN.
    Designated,
    /// Neither: another bridge serves the LAN, so the port blocks.
    Alternate,
}

impl PortRole {
    /// The role's name.
    pub fn name(self) -> &'static str {
        match self {
            PortRole::Root => "root",
            PortRole::Designated => "designated",
            PortRole::Alternate => "alternate",
        }
    }
}

/// A bridge's own settings: the timer values it uses when it is the root, its identifier,
/// and the path cost of its ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The bridge identifier (priority and address).
    pub bridge_id: BridgeId,
    /// Interval between configuration BPDUs when root.
    pub hello_time: Timestamp,
    /// Age at which information is discarded, when root.
    pub max_age: Timestamp,
    /// Time in each of listening and learning, when root.
    pub forward_delay: Timestamp,
    /// Path cost of every port.
    pub path_cost: u32,
    /// Port priority (the high byte of each port identifier).
    pub port_priority: u8,
}

/// The information a port holds about its LAN's designated bridge: a priority vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Designated {
    /// The root that bridge believes in.
    pub root: BridgeId,
    /// Its cost to the root.
    pub cost: u32,
    /// The designated bridge.
    pub bridge: BridgeId,
    /// The designated port on that bridge.
    pub port: u16,
}

/// One port of the bridge.
#[derive(Clone, Debug)]
struct Port {
    id: u16,
    path_cost: u32,
    state: PortState,
    designated: Designated,
    /// When the recorded information was new at the root (its message age was 0).
    age_base: Timestamp,
    /// Whether the next configuration BPDU on this port acknowledges a topology change.
    tc_ack: bool,
    /// A configuration BPDU waits for the hold timer.
    config_pending: bool,
    message_age_timer: Option<Timestamp>,
    forward_delay_timer: Option<Timestamp>,
    hold_timer: Option<Timestamp>,
}

/// Which timer expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Due {
    Hello,
    Tcn,
    TopologyChange,
    MessageAge(usize),
    ForwardDelay(usize),
    Hold(usize),
}

/// The spanning tree state of one bridge. Every entry point takes the current time and a
/// list to which it appends the BPDUs to send, each with its port.
#[derive(Clone, Debug)]
pub struct Bridge {
    settings: Settings,
    designated_root: BridgeId,
    root_path_cost: u32,
    root_port: Option<usize>,
    max_age: Timestamp,
    hello_time: Timestamp,
    forward_delay: Timestamp,
    topology_change_detected: bool,
    topology_change: bool,
    hello_timer: Option<Timestamp>,
    tcn_timer: Option<Timestamp>,
    topology_change_timer: Option<Timestamp>,
    ports: Vec<Port>,
}

/// The BPDUs to send, with their ports.
pub type Outbox = Vec<(usize, BpduRepr)>;

impl Bridge {
    /// A bridge with `nports` ports (numbered 1 to `nports` in their identifiers), not yet
    /// started: every port blocks until [`Bridge::start`].
    pub fn new(settings: Settings, nports: usize) -> Bridge {
        let me = settings.bridge_id;
        let ports = (0..nports)
            .map(|i| {
                let id = u16::from(settings.port_priority) << 8 | ((i + 1) & 0xff) as u16;
                Port {
                    id,
                    path_cost: settings.path_cost,
                    state: PortState::Blocking,
                    designated: Designated {
                        root: me,
                        cost: 0,
                        bridge: me,
                        port: id,
                    },
                    age_base: Timestamp::ZERO,
                    tc_ack: false,
                    config_pending: false,
                    message_age_timer: None,
                    forward_delay_timer: None,
                    hold_timer: None,
                }
            })
            .collect();
        Bridge {
            settings,
            designated_root: me,
            root_path_cost: 0,
            root_port: None,
            max_age: settings.max_age,
            hello_time: settings.hello_time,
            forward_delay: settings.forward_delay,
            topology_change_detected: false,
            topology_change: false,
            hello_timer: None,
            tcn_timer: None,
            topology_change_timer: None,
            ports,
        }
    }

    /// Starts the protocol at `now`: the bridge believes itself root, every port is
    /// designated and starts listening, and the first configuration BPDUs go out.
    pub fn start(&mut self, now: Timestamp, out: &mut Outbox) {
        self.port_state_selection(now, out);
        self.config_bpdu_generation(now, out);
        self.hello_timer = Some(now + self.hello_time);
    }

    /// This bridge's settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Number of ports.
    pub fn nports(&self) -> usize {
        self.ports.len()
    }

    /// The root as this bridge knows it.
    pub fn root_id(&self) -> BridgeId {
        self.designated_root
    }

    /// This bridge's cost to the root.
    pub fn root_path_cost(&self) -> u32 {
        self.root_path_cost
    }

    /// The root port; `None` on the root.
    pub fn root_port(&self) -> Option<usize> {
        self.root_port
    }

    /// True if this bridge is the root.
    pub fn is_root(&self) -> bool {
        self.designated_root == self.settings.bridge_id
    }

    /// True while the topology change flag is set (the root's, or heard from the root): the
    /// bridge should then age addresses out after [`Bridge::forward_delay`].
    pub fn topology_change(&self) -> bool {
        self.topology_change
    }

    /// The max age in use (the root's).
    pub fn max_age(&self) -> Timestamp {
        self.max_age
    }

    /// The hello time in use (the root's).
    pub fn hello_time(&self) -> Timestamp {
        self.hello_time
    }

    /// The forward delay in use (the root's).
    pub fn forward_delay(&self) -> Timestamp {
        self.forward_delay
    }

    /// The state of port `p`.
    pub fn state(&self, p: usize) -> PortState {
        self.ports[p].state
    }

    /// The role of port `p`.
    pub fn role(&self, p: usize) -> PortRole {
        if self.root_port == Some(p) {
            PortRole::Root
        } else if self.is_designated_port(p) {
            PortRole::Designated
        } else {
            PortRole::Alternate
        }
    }

    /// The identifier of port `p`.
    pub fn port_id(&self, p: usize) -> u16 {
        self.ports[p].id
    }

    /// What port `p` knows of its LAN's designated bridge.
    pub fn designated(&self, p: usize) -> Designated {
        self.ports[p].designated
    }

    /// When the next timer expires, if any: call [`Bridge::tick`] then.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.due().map(|(t, _)| t)
    }

    /// Handles the BPDU `bpdu` received on port `p` at `now`. The caller has checked that
    /// a configuration BPDU's message age is below its max age.
    pub fn receive(&mut self, p: usize, bpdu: &BpduRepr, now: Timestamp, out: &mut Outbox) {
        if p >= self.ports.len() {
            return;
        }
        self.tick(now, out);
        match bpdu {
            BpduRepr::Config(c) => self.received_config(p, c, now, out),
            BpduRepr::Tcn => self.received_tcn(p, now, out),
        }
    }

    /// Runs the timers that expired at or before `now`, earliest first.
    pub fn tick(&mut self, now: Timestamp, out: &mut Outbox) {
        while let Some((at, which)) = self.due().filter(|&(t, _)| t <= now) {
            match which {
                Due::Hello => {
                    self.hello_timer = None;
                    self.config_bpdu_generation(at, out);
                    self.hello_timer = Some(at + self.hello_time);
                }
                Due::Tcn => {
                    self.tcn_timer = None;
                    self.transmit_tcn(out);
                    self.tcn_timer = Some(at + self.settings.hello_time);
                }
                Due::TopologyChange => {
                    self.topology_change_timer = None;
                    self.topology_change_detected = false;
                    self.topology_change = false;
                }
                Due::MessageAge(p) => {
                    self.ports[p].message_age_timer = None;
                    self.message_age_expired(p, at, out);
                }
                Due::ForwardDelay(p) => {
                    self.ports[p].forward_delay_timer = None;
                    self.forward_delay_expired(p, at, out);
                }
                Due::Hold(p) => {
                    self.ports[p].hold_timer = None;
                    if self.ports[p].config_pending {
                        self.transmit_config(p, at, out);
                    }
                }
            }
        }
    }

    /// The earliest pending timer.
    fn due(&self) -> Option<(Timestamp, Due)> {
        let bridge = [
            (self.hello_timer, Due::Hello),
            (self.tcn_timer, Due::Tcn),
            (self.topology_change_timer, Due::TopologyChange),
        ];
        let ports = self.ports.iter().enumerate().flat_map(|(i, p)| {
            [
                (p.message_age_timer, Due::MessageAge(i)),
                (p.forward_delay_timer, Due::ForwardDelay(i)),
                (p.hold_timer, Due::Hold(i)),
            ]
        });
        bridge
            .into_iter()
            .chain(ports)
            .filter_map(|(t, d)| t.map(|t| (t, d)))
            .min_by_key(|&(t, _)| t)
    }

    fn is_designated_port(&self, p: usize) -> bool {
        let port = &self.ports[p];
        port.designated.bridge == self.settings.bridge_id && port.designated.port == port.id
    }

    /// Sends a configuration BPDU on port `p`, unless the hold timer runs (then once it
    /// expires).
    fn transmit_config(&mut self, p: usize, now: Timestamp, out: &mut Outbox) {
        if self.ports[p].hold_timer.is_some() {
            self.ports[p].config_pending = true;
            return;
        }
        let message_age = match self.root_port {
            None => 0,
            Some(rp) => {
                to_ticks(now - self.ports[rp].age_base).saturating_add(MESSAGE_AGE_INCREMENT)
            }
        };
        let max_age = to_ticks(self.max_age);
        if message_age >= max_age {
            // Stale information is not passed on; it ages out here too.
            return;
        }
        let port = &mut self.ports[p];
        out.push((
            p,
            BpduRepr::Config(ConfigBpdu {
                tc: self.topology_change,
                tca: port.tc_ack,
                root: self.designated_root,
                root_path_cost: self.root_path_cost,
                bridge: self.settings.bridge_id,
                port_id: port.id,
                message_age,
                max_age,
                hello_time: to_ticks(self.hello_time),
                forward_delay: to_ticks(self.forward_delay),
            }),
        ));
        port.tc_ack = false;
        port.config_pending = false;
        port.hold_timer = Some(now + HOLD_TIME);
    }

    /// True if configuration BPDU `c` received on port `p` is better than the information
    /// the port holds (or is the same designated bridge and port speaking again).
    fn supersedes(&self, p: usize, c: &ConfigBpdu) -> bool {
        let d = &self.ports[p].designated;
        if c.root != d.root {
            return c.root < d.root;
        }
        if c.root_path_cost != d.cost {
            return c.root_path_cost < d.cost;
        }
        if c.bridge != d.bridge {
            return c.bridge < d.bridge;
        }
        c.bridge != self.settings.bridge_id || c.port_id <= d.port
    }

    fn record_config_information(&mut self, p: usize, c: &ConfigBpdu, now: Timestamp) {
        let port = &mut self.ports[p];
        port.designated = Designated {
            root: c.root,
            cost: c.root_path_cost,
            bridge: c.bridge,
            port: c.port_id,
        };
        port.age_base = now - from_ticks(c.message_age);
        port.message_age_timer = Some(port.age_base + from_ticks(c.max_age));
    }

    fn record_config_timeout_values(&mut self, c: &ConfigBpdu) {
        self.max_age = from_ticks(c.max_age);
        self.hello_time = from_ticks(c.hello_time);
        self.forward_delay = from_ticks(c.forward_delay);
        self.topology_change = c.tc;
    }

    fn config_bpdu_generation(&mut self, now: Timestamp, out: &mut Outbox) {
        for p in 0..self.ports.len() {
            if self.is_designated_port(p) {
                self.transmit_config(p, now, out);
            }
        }
    }

    fn transmit_tcn(&mut self, out: &mut Outbox) {
        if let Some(rp) = self.root_port {
            out.push((rp, BpduRepr::Tcn));
        }
    }

    /// True if port `p` offers a better path to the root than port `best`.
    fn better_root_path(&self, p: usize, best: usize) -> bool {
        let (a, b) = (&self.ports[p], &self.ports[best]);
        let key = |x: &Port| {
            (
                x.designated.root,
                x.designated.cost.saturating_add(x.path_cost),
                x.designated.bridge,
                x.designated.port,
                x.id,
            )
        };
        key(a) < key(b)
    }

    fn root_selection(&mut self) {
        let me = self.settings.bridge_id;
        let mut root_port: Option<usize> = None;
        for p in 0..self.ports.len() {
            if self.is_designated_port(p) || self.ports[p].designated.root >= me {
                continue;
            }
            if root_port.is_none_or(|rp| self.better_root_path(p, rp)) {
                root_port = Some(p);
            }
        }
        self.root_port = root_port;
        match root_port {
            None => {
                self.designated_root = me;
                self.root_path_cost = 0;
            }
            Some(rp) => {
                let port = &self.ports[rp];
                self.designated_root = port.designated.root;
                self.root_path_cost = port.designated.cost.saturating_add(port.path_cost);
            }
        }
    }

    fn become_designated_port(&mut self, p: usize) {
        let (root, cost, me) = (
            self.designated_root,
            self.root_path_cost,
            self.settings.bridge_id,
        );
        let port = &mut self.ports[p];
        port.designated = Designated {
            root,
            cost,
            bridge: me,
            port: port.id,
        };
    }

    fn should_become_designated(&self, p: usize) -> bool {
        let port = &self.ports[p];
        let d = &port.designated;
        if self.is_designated_port(p) || d.root != self.designated_root {
            return true;
        }
        if self.root_path_cost != d.cost {
            return self.root_path_cost < d.cost;
        }
        if self.settings.bridge_id != d.bridge {
            return self.settings.bridge_id < d.bridge;
        }
        port.id < d.port
    }

    fn designated_port_selection(&mut self) {
        for p in 0..self.ports.len() {
            if self.should_become_designated(p) {
                self.become_designated_port(p);
            }
        }
    }

    fn configuration_update(&mut self) {
        self.root_selection();
        self.designated_port_selection();
    }

    fn port_state_selection(&mut self, now: Timestamp, out: &mut Outbox) {
        for p in 0..self.ports.len() {
            if self.root_port == Some(p) {
                self.ports[p].config_pending = false;
                self.ports[p].tc_ack = false;
                self.make_forwarding(p, now);
            } else if self.is_designated_port(p) {
                self.ports[p].message_age_timer = None;
                self.make_forwarding(p, now);
            } else {
                self.ports[p].config_pending = false;
                self.ports[p].tc_ack = false;
                self.make_blocking(p, now, out);
            }
        }
    }

    fn make_forwarding(&mut self, p: usize, now: Timestamp) {
        let port = &mut self.ports[p];
        if port.state == PortState::Blocking {
            port.state = PortState::Listening;
            port.forward_delay_timer = Some(now + self.forward_delay);
        }
    }

    fn make_blocking(&mut self, p: usize, now: Timestamp, out: &mut Outbox) {
        let state = self.ports[p].state;
        if state == PortState::Blocking {
            return;
        }
        if matches!(state, PortState::Forwarding | PortState::Learning) {
            self.topology_change_detection(now, out);
        }
        self.ports[p].state = PortState::Blocking;
        self.ports[p].forward_delay_timer = None;
    }

    fn topology_change_detection(&mut self, now: Timestamp, out: &mut Outbox) {
        if self.is_root() {
            self.topology_change = true;
            self.topology_change_timer =
                Some(now + self.settings.max_age + self.settings.forward_delay);
        } else if !self.topology_change_detected {
            self.transmit_tcn(out);
            self.tcn_timer = Some(now + self.settings.hello_time);
        }
        self.topology_change_detected = true;
    }

    fn received_config(&mut self, p: usize, c: &ConfigBpdu, now: Timestamp, out: &mut Outbox) {
        let was_root = self.is_root();
        if self.supersedes(p, c) {
            self.record_config_information(p, c, now);
            self.configuration_update();
            self.port_state_selection(now, out);
            if was_root && !self.is_root() {
                self.hello_timer = None;
                if self.topology_change_detected {
                    self.topology_change_timer = None;
                    self.transmit_tcn(out);
                    self.tcn_timer = Some(now + self.settings.hello_time);
                }
            }
            if self.root_port == Some(p) {
                self.record_config_timeout_values(c);
                self.config_bpdu_generation(now, out);
                if c.tca {
                    self.topology_change_detected = false;
                    self.tcn_timer = None;
                }
            }
        } else if self.is_designated_port(p) {
            self.transmit_config(p, now, out);
        }
    }

    fn received_tcn(&mut self, p: usize, now: Timestamp, out: &mut Outbox) {
        if self.is_designated_port(p) {
            self.topology_change_detection(now, out);
            self.ports[p].tc_ack = true;
            self.transmit_config(p, now, out);
        }
    }

    fn message_age_expired(&mut self, p: usize, now: Timestamp, out: &mut Outbox) {
        let was_root = self.is_root();
        self.become_designated_port(p);
        self.configuration_update();
        self.port_state_selection(now, out);
        if self.is_root() && !was_root {
            self.max_age = self.settings.max_age;
            self.hello_time = self.settings.hello_time;
            self.forward_delay = self.settings.forward_delay;
            self.topology_change_detection(now, out);
            self.tcn_timer = None;
            self.config_bpdu_generation(now, out);
            self.hello_timer = Some(now + self.hello_time);
        }
    }

    fn forward_delay_expired(&mut self, p: usize, now: Timestamp, out: &mut Outbox) {
        match self.ports[p].state {
            PortState::Listening => {
                self.ports[p].state = PortState::Learning;
                self.ports[p].forward_delay_timer = Some(now + self.forward_delay);
            }
            PortState::Learning => {
                self.ports[p].state = PortState::Forwarding;
                let me = self.settings.bridge_id;
                if self.ports.iter().any(|q| q.designated.bridge == me) {
                    self.topology_change_detection(now, out);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_convert_both_ways() {
        assert_eq!(from_ticks(256), Timestamp(1_000_000_000));
        assert_eq!(to_ticks(Timestamp(1_500_000_000)), 384);
        assert_eq!(to_ticks(Timestamp(-5)), 0);
        assert_eq!(to_ticks(Timestamp(i64::MAX)), u16::MAX);
        for t in [0, 1, 255, 256, 5120, u16::MAX] {
            assert_eq!(to_ticks(from_ticks(t)), t);
        }
    }
}
