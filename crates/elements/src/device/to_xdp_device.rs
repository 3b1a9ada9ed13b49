//! ToXDPDevice — sends packets on one queue of a network interface through an AF_XDP socket
//!
//! Synopsis: `ToXDPDevice(DEVNAME [, QUEUE, BURST, POLL, FRAMES, ZEROCOPY])`
//!
//! Ports: 1 input (pull), no outputs. A task pulls up to BURST packets at a time from upstream
//! (normally a Queue), copies them into free transmit frames of the socket's UMEM, puts them
//! on the tx ring and asks the kernel to send them with one `sendto` per batch (in copy mode
//! the kernel transmits in that call). Sent frames come back through the completion ring and
//! are reused. Each packet must be a complete Ethernet frame. The task sleeps while every
//! upstream queue is empty (Click's notifiers) and wakes as soon as one fills. Like ToDevice,
//! ToXDPDevice is pull-only: put a Queue in front of it.
//!
//! The socket on (DEVNAME, QUEUE) is shared with a FromXDPDevice on the same interface and
//! queue (one AF_XDP socket per queue; the receive and transmit halves use disjoint rings and
//! UMEM frames, so each element may run in its own thread). A ToXDPDevice alone attaches no
//! XDP program: the interface's received traffic still goes to the kernel.
//!
//! When the tx ring or the free frames run out (the kernel has not completed earlier frames)
//! or the kernel answers `EAGAIN`/`EBUSY`/`ENOBUFS`, the unsent packets are kept and retried on
//! the next run, in order. Packets shorter than 14 bytes or longer than a UMEM frame (2048
//! bytes) are dropped and counted in `drops`. Other send failures are counted in `errors` (the
//! frames stay on the ring, the kernel retries them). Frames the kernel rejected are counted in
//! `kernel_drops` (`tx_invalid_descs`). Frames longer than the interface's MTU are dropped by
//! the interface itself (its `tx_dropped` counter).
//!
//! Arguments:
//! - `DEVNAME` (string, mandatory): interface name.
//! - `QUEUE` (integer, default 0): transmit queue.
//! - `BURST` (integer, default 32): packets per task run, at most 32.
//! - `POLL` (`adaptive` or `busy`, default `adaptive`): `busy` keeps the task always scheduled.
//! - `FRAMES`, `ZEROCOPY`: as for FromXDPDevice (the first element on the socket decides).
//!
//! Handlers: `count` (r, packets handed to the kernel), `drops` (r), `kernel_drops` (r),
//! `errors` (r), `last_error` (r), `reset_counts` (w).
//!
//! Example:
//! ```text
//! FromXDPDevice(veth0) -> Queue(1000) -> ToXDPDevice(veth1);
//! ```

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, InitCx, NotifierId};
use sluice_lang::args::{Args, Word};

use super::from_device::parse_poll;
use super::from_xdp_device::read_socket_args;
use super::sys;
use super::xsk::{XskOptions, XskSocket, XskTx, MAX_FRAME};

/// The ToXDPDevice element.
pub struct ToXDPDevice {
    devname: String,
    queue: u32,
    burst: usize,
    busy: bool,
    opts: XskOptions,
    tx: Option<XskTx>,
    notifiers: Option<Vec<NotifierId>>,
    pending: Batch,
    count: u64,
    drops: u64,
    errors: u64,
    last_error: i32,
    kbase: u64,
    klast: u64,
}

impl Default for ToXDPDevice {
    fn default() -> ToXDPDevice {
        ToXDPDevice {
            devname: String::new(),
            queue: 0,
            burst: sluice_core::BATCH_MAX,
            busy: false,
            opts: XskOptions {
                frames: 2048,
                zerocopy: false,
            },
            tx: None,
            notifiers: None,
            pending: Batch::new(),
            count: 0,
            drops: 0,
            errors: 0,
            last_error: 0,
            kbase: 0,
            klast: 0,
        }
    }
}

/// True for send errors that mean "try again later".
fn transient(e: i32) -> bool {
    e == libc::EAGAIN
        || e == libc::EWOULDBLOCK
        || e == libc::EBUSY
        || e == libc::ENOBUFS
        || e == libc::EINTR
}

impl ToXDPDevice {
    /// Queues `self.pending` on the tx ring and kicks the kernel; keeps what did not fit.
    /// Returns packets queued.
    fn flush(&mut self) -> usize {
        let Some(tx) = self.tx.as_mut() else {
            return 0;
        };
        let mut drops = 0u64;
        self.pending.retain(|p| {
            let ok = p.len() >= 14 && p.len() <= MAX_FRAME;
            if !ok {
                drops += 1;
            }
            ok
        });
        self.drops += drops;
        let n = tx.enqueue(self.pending.iter().map(|p| p.data()));
        if n > 0 || tx.queued() > 0 {
            if let Err(e) = tx.kick() {
                if !transient(e) {
                    self.errors += 1;
                    self.last_error = e;
                }
            }
        }
        self.count += n as u64;
        let mut i = 0;
        self.pending.retain(|_| {
            i += 1;
            i > n
        });
        n
    }

    fn kernel_drops(&self) -> u64 {
        match &self.tx {
            Some(t) => t
                .socket()
                .stats()
                .tx_invalid_descs
                .saturating_sub(self.kbase),
            None => self.klast,
        }
    }
}

impl Element for ToXDPDevice {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.devname = args.read_mp::<Word>("DEVNAME")?.0;
        self.queue = args.read("QUEUE")?.unwrap_or(0);
        self.burst = args
            .read::<usize>("BURST")?
            .unwrap_or(sluice_core::BATCH_MAX)
            .clamp(1, sluice_core::BATCH_MAX);
        let poll = args.read::<Word>("POLL")?;
        read_socket_args(args, &mut self.opts)?;
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
        let err = |e: String| format!("ToXDPDevice({}): {}", self.devname, e);
        let sock = XskSocket::get(&self.devname, self.queue, &self.opts).map_err(err)?;
        let tx = XskSocket::take_tx(&sock).map_err(err)?;
        self.kbase = sock.stats().tx_invalid_descs;
        self.tx = Some(tx);
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
        let queued_before = self.tx.as_ref().map(|t| t.queued()).unwrap_or(0);
        let sent = if had || queued_before > 0 {
            self.flush()
        } else {
            0
        };
        let ring_busy = self.tx.as_ref().map(|t| t.queued() > 0).unwrap_or(false);
        let more = self.busy
            || !self.pending.is_empty()
            || ring_busy
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
                Handler::r("kernel_drops"),
                Handler::r("errors"),
                Handler::r("last_error"),
                Handler::w("reset_counts"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "count" => self.count.to_string(),
            "drops" => (self.drops + self.kernel_drops()).to_string(),
            "kernel_drops" => self.kernel_drops().to_string(),
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
                if let Some(t) = &self.tx {
                    self.kbase = t.socket().stats().tx_invalid_descs;
                }
                self.klast = 0;
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        // Give held-back packets and the ring a last chance, briefly.
        for _ in 0..100 {
            if !self.pending.is_empty() {
                self.flush();
            } else if let Some(t) = &self.tx {
                if t.queued() == 0 {
                    break;
                }
                let _ = t.kick();
            }
            if self.pending.is_empty() && self.tx.as_ref().is_none_or(|t| t.queued() == 0) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        self.drops += self.pending.len() as u64;
        self.pending = Batch::new();
        self.klast = self.kernel_drops();
        // Frames still on the ring are lost with the socket: count them.
        if let Some(t) = &self.tx {
            let q = t.queued() as u64;
            self.drops += q;
            self.count = self.count.saturating_sub(q);
        }
        self.tx = None;
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ToXDPDevice",
    ports: "1/0",
    processing: "l/l",
    flow: "",
    source: include_str!("to_xdp_device.rs"),
    make: || Box::new(ToXDPDevice::default()),
};
