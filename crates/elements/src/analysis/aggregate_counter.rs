//! AggregateCounter — counts packets or bytes per aggregate annotation
//!
//! Synopsis: `AggregateCounter([keywords BYTES, IP_BYTES, MULTIPACKET, EXTRA_LENGTH,
//! AGGREGATE_STOP, AGGREGATE_FREEZE, AGGREGATE_CALL, COUNT_STOP, COUNT_FREEZE, COUNT_CALL,
//! BANNER])`
//!
//! Ports: 1 or 2 inputs, 1 or 2 outputs, agnostic.
//!
//! Keeps a count for each value of the packets' aggregate annotation (set by
//! FromIPSummaryDump's `aggregate` field, AggregateIPFlows, …): packets, or bytes with BYTES.
//! A frozen counter only updates aggregates it already has; input 1 is always frozen. With
//! two outputs, counted packets leave on output 0 and the others on output 1; with one, every
//! packet leaves on output 0. While inactive nothing is counted.
//!
//! The files written by the `write_*` handlers start with `!IPAggregate 1.0`, the BANNER,
//! and `!num_nonzero N`, then one line per aggregate with a nonzero count, in increasing
//! aggregate order: `AGG COUNT` (`write_text_file`, `write_ascii_file`), the aggregate as an
//! IPv4 address after a `!ip` line (`write_ip_file`), or, after `!packed_le`, 8-byte
//! little-endian records of aggregate and count (`write_file`). The file name `-` is standard
//! output.
//!
//! Arguments:
//! - `BYTES` (bool, default false): count bytes. `IP_BYTES` (bool, default false): not the
//!   bytes before the network header. `EXTRA_LENGTH` (bool, default true): add the
//!   extra-length annotation to byte counts. `MULTIPACKET` (bool): accepted (every packet
//!   counts once).
//! - `AGGREGATE_STOP N`, `AGGREGATE_FREEZE N`, `AGGREGATE_CALL 'N HANDLER [VALUE]'`: when a
//!   new aggregate arrives after N have been seen, stop the router (and go inactive), freeze,
//!   or call the write handler (at most one of the three).
//! - `COUNT_STOP N`, `COUNT_FREEZE N`, `COUNT_CALL 'N HANDLER [VALUE]'`: the same once the
//!   total count reaches N.
//! - As in Click, a call whose HANDLER does not exist or is not writable is an initialisation
//!   error naming the argument (`COUNT_CALL: HANDLER: error`).
//! - `BANNER` (string): written after the first line of every file.
//!
//! Handlers: `write_text_file`, `write_ascii_file`, `write_ip_file`, `write_file` (w: file
//! name); `freeze` (rw), `active` (rw), `stop` (w), `banner` (rw), `nagg` (r: aggregates
//! seen), `clear` (w: forget every count).
//!
//! Example: `FromIPSummaryDump(-, STOP true) -> ac :: AggregateCounter -> Discard;
//! DriverManager(wait_pause, write ac.write_text_file -)`

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::net::Ipv4Addr;

use sluice_core::toolkit::{push_sorted, CountCall, HandlerCall, Verdict};
use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Packet, Table};
use sluice_lang::args::Args;

use crate::io::extra_length;

/// What happens when a threshold is reached.
#[derive(Clone, Debug)]
enum Action {
    Stop,
    Freeze,
    /// The handler call of AGGREGATE_CALL or COUNT_CALL (the argument's name).
    Call(&'static str, HandlerCall),
}

/// A threshold and its action.
type Trigger = Option<(u64, Action)>;

/// The AggregateCounter element.
pub struct AggregateCounter {
    counts: BTreeMap<u32, u64>,
    total: u64,
    bytes: bool,
    ip_bytes: bool,
    extra_length: bool,
    frozen: bool,
    active: bool,
    banner: String,
    on_agg: Trigger,
    on_count: Trigger,
}

impl Default for AggregateCounter {
    fn default() -> Self {
        AggregateCounter {
            counts: BTreeMap::new(),
            total: 0,
            bytes: false,
            ip_bytes: false,
            extra_length: true,
            frozen: false,
            active: true,
            banner: String::new(),
            on_agg: None,
            on_count: None,
        }
    }
}

/// Reads the STOP, FREEZE and CALL keywords of one family (`what`: `AGGREGATE` or `COUNT`;
/// `call_arg` is its CALL keyword).
fn read_trigger(args: &mut Args, what: &str, call_arg: &'static str) -> Result<Trigger, ()> {
    let stop: Option<u64> = args.read(&format!("{what}_STOP"))?;
    let freeze: Option<u64> = args.read(&format!("{what}_FREEZE"))?;
    let call: Option<CountCall> = args.read(call_arg)?;
    let n = stop.is_some() as u8 + freeze.is_some() as u8 + call.is_some() as u8;
    if n > 1 {
        args.error(format!(
            "'{what}_FREEZE', '{what}_STOP', and '{what}_CALL' are mutually exclusive"
        ));
        return Err(());
    }
    if let Some(c) = call {
        return Ok(Some((c.at, Action::Call(call_arg, c.call))));
    }
    Ok(stop
        .map(|n| (n, Action::Stop))
        .or(freeze.map(|n| (n, Action::Freeze))))
}

impl AggregateCounter {
    /// Sets the BANNER, ending it with a newline unless it is empty.
    fn set_banner(&mut self, b: &str) {
        self.banner = b.to_string();
        if !self.banner.is_empty() && !self.banner.ends_with('\n') {
            self.banner.push('\n');
        }
    }

    fn fire(&mut self, a: Action, cx: &mut Cx) {
        match a {
            Action::Stop => {
                self.active = false;
                cx.request_driver_stop();
            }
            Action::Freeze => self.frozen = true,
            Action::Call(what, call) => call.call(what, cx),
        }
    }

    /// Counts `p`; true when it was counted.
    fn update(&mut self, p: &Packet, frozen: bool, cx: &mut Cx) -> bool {
        if !self.active {
            return false;
        }
        let agg = p.anno().aggregate;
        let known = self.counts.get(&agg).is_some_and(|c| *c > 0);
        if !known {
            if frozen || self.frozen {
                return false;
            }
            if let Some((n, _)) = &self.on_agg {
                if self.counts.len() as u64 >= *n {
                    let (_, a) = self.on_agg.take().expect("checked above");
                    self.fire(a, cx);
                    return self.update(p, frozen, cx);
                }
            }
        }
        let amount = if self.bytes {
            let mut n = p.len() as u64;
            if self.extra_length {
                n += extra_length(p) as u64;
            }
            if self.ip_bytes {
                n -= p.network_offset().filter(|o| *o > 0).unwrap_or(0) as u64;
            }
            n
        } else {
            1
        };
        if amount == 0 {
            return true;
        }
        *self.counts.entry(agg).or_insert(0) += amount;
        self.total += amount;
        if self
            .on_count
            .as_ref()
            .is_some_and(|(n, _)| self.total >= *n)
        {
            let (_, a) = self.on_count.take().expect("checked above");
            self.fire(a, cx);
        }
        true
    }

    fn write(&self, file: &str, how: &str) -> Result<(), String> {
        let mut head = String::from("!IPAggregate 1.0\n");
        head.push_str(&self.banner);
        let _ = writeln!(head, "!num_nonzero {}", self.counts.len());
        let mut body = Vec::new();
        match how {
            "ip" => {
                head.push_str("!ip\n");
                for (a, c) in &self.counts {
                    let _ = writeln!(body, "{} {}", Ipv4Addr::from(*a), c);
                }
            }
            "packed" => {
                head.push_str("!packed_le\n");
                for (a, c) in &self.counts {
                    body.extend_from_slice(&a.to_le_bytes());
                    body.extend_from_slice(&(*c as u32).to_le_bytes());
                }
            }
            _ => {
                for (a, c) in &self.counts {
                    let _ = writeln!(body, "{a} {c}");
                }
            }
        }
        let mut out: Box<dyn Write> = if file == "-" {
            Box::new(std::io::stdout())
        } else {
            Box::new(std::fs::File::create(file).map_err(|e| format!("{file}: {e}"))?)
        };
        out.write_all(head.as_bytes())
            .and_then(|_| out.write_all(&body))
            .and_then(|_| out.flush())
            .map_err(|e| format!("{file}: {e}"))
    }
}

impl Element for AggregateCounter {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        args.read_into("BYTES", &mut self.bytes)?;
        args.read_into("IP_BYTES", &mut self.ip_bytes)?;
        let _: Option<bool> = args.read("MULTIPACKET")?;
        args.read_into("EXTRA_LENGTH", &mut self.extra_length)?;
        self.on_agg = read_trigger(args, "AGGREGATE", "AGGREGATE_CALL")?;
        self.on_count = read_trigger(args, "COUNT", "COUNT_CALL")?;
        if let Some(b) = args.read::<String>("BANNER")? {
            self.set_banner(&b);
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        for (_, action) in self.on_agg.iter().chain(&self.on_count) {
            if let Action::Call(what, call) = action {
                call.check_as(what, cx)?;
            }
        }
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let two = cx.noutputs() > 1;
        push_sorted(batch, cx, |p, cx| {
            let counted = self.update(&p, port == 1, cx);
            Verdict::Out(if counted || !two { 0 } else { 1 }, p)
        });
    }

    fn pull(&mut self, port: usize, max: usize, cx: &mut Cx) -> Batch {
        let b = cx.pull(port, max);
        for p in b.iter() {
            self.update(p, port == 1, cx);
        }
        b
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .write("write_text_file", |e, v, _| e.write(v.trim(), "text"))
            .write("write_ascii_file", |e, v, _| e.write(v.trim(), "text"))
            .write("write_ip_file", |e, v, _| e.write(v.trim(), "ip"))
            .write("write_file", |e, v, _| e.write(v.trim(), "packed"))
            .read("freeze", |e| e.frozen)
            .write_as("freeze", |e, b: bool| e.frozen = b)
            .read("active", |e| e.active)
            .write_as("active", |e, b: bool| e.active = b)
            .write("stop", |e, _, cx| {
                e.fire(Action::Stop, cx);
                Ok(())
            })
            .read("banner", |e| e.banner.clone())
            .write("banner", |e, v, _| {
                e.set_banner(v);
                Ok(())
            })
            .read("nagg", |e| e.counts.len())
            .action("clear", |e| {
                e.counts.clear();
                e.total = 0;
            })
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "AggregateCounter",
    ports: "1-2/1-2",
    processing: "a/a",
    flow: "",
    source: include_str!("aggregate_counter.rs"),
    make: || Box::<AggregateCounter>::default(),
};
