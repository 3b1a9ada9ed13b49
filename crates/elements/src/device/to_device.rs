//! ToDevice — sends packets to a network interface (Linux AF_PACKET, batched `sendmmsg`)
//!
//! Synopsis: `ToDevice(DEVNAME [, BURST, QDISC_BYPASS, METHOD, POLL])`
//!
//! Ports: 1 input (pull), no outputs. A task pulls up to BURST packets at a time from upstream
//! (normally a Queue) and transmits them on DEVNAME with one `sendmmsg` call. Each packet must
//! be a complete Ethernet frame. The task sleeps while every upstream queue is empty (Click's
//! notifiers) and wakes as soon as one fills. Like Click's, ToDevice is pull-only: put a Queue
//! in front of it.
//!
//! When the interface's transmit path is full (`EAGAIN`/`ENOBUFS`), the unsent packets are kept
//! and retried on the next run, in order. Other send failures (interface down: `ENETDOWN`,
//! interface gone: `ENXIO`/`ENODEV`, frame longer than the MTU: `EMSGSIZE`) drop the packet
//! and count it in `errors` and `drops`; the element keeps running. Packets shorter than an
//! Ethernet header (14 bytes) are dropped and counted in `drops`.
//!
//! Arguments:
//! - `DEVNAME` (string, mandatory): interface name.
//! - `BURST` (integer, default 32): packets per task run, at most 32.
//! - `QDISC_BYPASS` (boolean, default true): hand frames straight to the driver
//!   (`PACKET_QDISC_BYPASS`), skipping the interface's queueing discipline. Such frames are
//!   not seen by packet taps on this host (tcpdump, `FromDevice(.., OUTBOUND true)`).
//! - `METHOD` (`LINUX`, default): only AF_PACKET is built in.
//! - `POLL` (`adaptive` or `busy`, default `adaptive`): `busy` keeps the task always scheduled.
//!
//! Handlers: `count` (r, packets sent), `drops` (r), `errors` (r, failed sends),
//! `reset_counts` (w).
//!
//! Example:
//! ```text
//! FromDevice(veth0) -> Queue(1000) -> ToDevice(veth1);
//! ```

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, InitCx, NotifierId};
use sluice_lang::args::{Args, Word};

use super::from_device::{check_method, parse_poll};
use super::sys::{self, TxSocket};

/// The ToDevice element.
pub struct ToDevice {
    devname: String,
    burst: usize,
    bypass: bool,
    busy: bool,
    sock: Option<TxSocket>,
    notifiers: Option<Vec<NotifierId>>,
    pending: Batch,
    count: u64,
    drops: u64,
    errors: u64,
    last_error: i32,
}

impl Default for ToDevice {
    fn default() -> ToDevice {
        ToDevice {
            devname: String::new(),
            burst: sluice_core::BATCH_MAX,
            bypass: true,
            busy: false,
            sock: None,
            notifiers: None,
            pending: Batch::new(),
            count: 0,
            drops: 0,
            errors: 0,
            last_error: 0,
        }
    }
}

/// True for send errors that mean "try again later" rather than "this packet failed".
fn transient(e: i32) -> bool {
    e == libc::EAGAIN || e == libc::EWOULDBLOCK || e == libc::ENOBUFS || e == libc::EINTR
}

impl ToDevice {
    /// Sends `self.pending`; keeps what could not be sent yet. Returns packets sent.
    fn flush(&mut self) -> usize {
        let Some(sock) = self.sock.as_mut() else {
            return 0;
        };
        let mut drops = 0u64;
        self.pending.retain(|p| {
            let ok = p.len() >= 14;
            if !ok {
                drops += 1;
            }
            ok
        });
        self.drops += drops;
        let mut frames: [&[u8]; sluice_core::BATCH_MAX] = [&[]; sluice_core::BATCH_MAX];
        let n = self.pending.len();
        for (f, p) in frames.iter_mut().zip(self.pending.iter()) {
            *f = p.data();
        }
        let mut done = 0;
        let mut sent = 0;
        while done < n {
            match sock.send(&frames[done..n]) {
                Ok(0) => break,
                Ok(k) => {
                    done += k;
                    sent += k;
                }
                Err(e) if transient(e) => break,
                Err(e) => {
                    // This frame failed for good: count it and go on with the next.
                    self.errors += 1;
                    self.drops += 1;
                    self.last_error = e;
                    done += 1;
                }
            }
        }
        self.count += sent as u64;
        let mut i = 0;
        self.pending.retain(|_| {
            i += 1;
            i > done
        });
        sent
    }
}

impl Element for ToDevice {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.devname = args.read_mp::<Word>("DEVNAME")?.0;
        self.burst = args
            .read::<usize>("BURST")?
            .unwrap_or(sluice_core::BATCH_MAX)
            .clamp(1, sluice_core::BATCH_MAX);
        self.bypass = args.read("QDISC_BYPASS")?.unwrap_or(true);
        let method = args.read::<Word>("METHOD")?;
        let poll = args.read::<Word>("POLL")?;
        if let Some(m) = method {
            if let Err(e) = check_method(&m.0) {
                args.error(e);
            }
        }
        if let Some(p) = poll {
            match parse_poll(&p.0) {
                Ok(b) => self.busy = b,
                Err(e) => args.error(e),
            }
        }
        if args.errors().is_empty() {
            Ok(())
        } else {
            Err(())
        }
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let sock = TxSocket::open(&self.devname, self.bypass)
            .map_err(|e| format!("ToDevice({}): {}", self.devname, e))?;
        self.sock = Some(sock);
        cx.add_task(sluice_core::sched::DEFAULT_TICKETS, true);
        self.notifiers = cx.upstream_empty_notifiers(0);
        for n in self.notifiers.clone().unwrap_or_default() {
            cx.listen(n);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if self.pending.is_empty() {
            self.pending = cx.pull(0, self.burst);
        }
        let had = !self.pending.is_empty();
        let sent = if had { self.flush() } else { 0 };
        let more = self.busy
            || !self.pending.is_empty()
            || match &self.notifiers {
                Some(n) => had || cx.any_active(n),
                None => true,
            };
        if more {
            cx.reschedule();
        }
        sent > 0
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("count"),
                Handler::r("drops"),
                Handler::r("errors"),
                Handler::r("last_error"),
                Handler::w("reset_counts"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "count" => self.count.to_string(),
            "drops" => self.drops.to_string(),
            "errors" => self.errors.to_string(),
            "last_error" => {
                if self.last_error == 0 {
                    String::new()
                } else {
                    sys::strerror(self.last_error)
                }
            }
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, _value: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "reset_counts" => {
                self.count = 0;
                self.drops = 0;
                self.errors = 0;
                self.last_error = 0;
                if let Some(s) = &self.sock {
                    let _ = s.take_error();
                }
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        // One last attempt for packets held back by a full transmit path.
        if !self.pending.is_empty() {
            self.flush();
        }
        self.drops += self.pending.len() as u64;
        self.pending = Batch::new();
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ToDevice",
    ports: "1/0",
    processing: "l/l",
    flow: "",
    source: include_str!("to_device.rs"),
    make: || Box::new(ToDevice::default()),
};
