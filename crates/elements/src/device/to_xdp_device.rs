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
//! bytes) are dropped and counted in `drops`, and so are packets still held back or on the
//! ring when the router stops. Other send failures are counted in `errors` (the
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
//! Handlers: `count` (r, packets handed to the kernel), `drops` (r, the element's drops and
//! `kernel_drops`), `drop_details` (r, the element's drops by reason), `kernel_drops` (r),
//! `errors` (r), `last_error` (r), `reset_counts` (w).
//!
//! Example:
//! ```text
//! FromXDPDevice(veth0) -> Queue(1000) -> ToXDPDevice(veth1);
//! ```

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Table};
use sluice_lang::args::{Args, Word};

use super::from_xdp_device::read_socket_args;
use super::tx::{transient, Reason, TxPath};
use super::xsk::{XskOptions, XskSocket, XskTx, MAX_FRAME};

/// The ToXDPDevice element.
pub struct ToXDPDevice {
    devname: String,
    queue: u32,
    opts: XskOptions,
    sock: Option<XskTx>,
    tx: TxPath,
    kbase: u64,
    klast: u64,
}

impl Default for ToXDPDevice {
    fn default() -> ToXDPDevice {
        ToXDPDevice {
            devname: String::new(),
            queue: 0,
            opts: XskOptions {
                frames: 2048,
                zerocopy: false,
            },
            sock: None,
            tx: TxPath::default(),
            kbase: 0,
            klast: 0,
        }
    }
}

impl ToXDPDevice {
    /// Queues the pending packets on the tx ring and kicks the kernel; keeps what did not
    /// fit. Returns packets queued.
    fn flush(&mut self) -> usize {
        let Some(sock) = self.sock.as_mut() else {
            return 0;
        };
        let tx = &mut self.tx;
        tx.drop_unsendable(MAX_FRAME);
        let n = sock.enqueue(tx.pending.iter().map(|p| p.data()));
        if n > 0 || sock.queued() > 0 {
            if let Err(e) = sock.kick() {
                if !transient(e) {
                    tx.failed(1, e);
                }
            }
        }
        tx.done(n, n);
        n
    }

    fn kernel_drops(&self) -> u64 {
        match &self.sock {
            Some(t) => t
                .socket()
                .stats()
                .tx_invalid_descs
                .saturating_sub(self.kbase),
            None => self.klast,
        }
    }

    /// Frames on the tx ring that the kernel has not taken yet.
    fn ring_busy(&self) -> bool {
        self.sock.as_ref().is_some_and(|t| t.queued() > 0)
    }
}

impl Element for ToXDPDevice {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.devname = args.read_mp::<Word>("DEVNAME")?.0;
        self.queue = args.read("QUEUE")?.unwrap_or(0);
        self.tx.configure(args)?;
        read_socket_args(args, &mut self.opts)?;
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
        self.sock = Some(tx);
        self.tx.initialize(cx);
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        let had = self.tx.fill(cx);
        let sent = if had || self.ring_busy() {
            self.flush()
        } else {
            0
        };
        self.tx.reschedule(had, self.ring_busy(), cx);
        sent > 0
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.tx.count)
            .read("drops", |e| e.tx.drops.total() + e.kernel_drops())
            .drops(|e| &e.tx.drops)
            .read("kernel_drops", |e| e.kernel_drops())
            .read("errors", |e| e.tx.errors)
            .read("last_error", |e| e.tx.last_error())
            .action("reset_counts", |e| {
                e.tx.reset();
                if let Some(t) = &e.sock {
                    e.kbase = t.socket().stats().tx_invalid_descs;
                }
                e.klast = 0;
            })
            .into()
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        // Give held-back packets and the ring a last chance, briefly.
        for _ in 0..100 {
            if !self.tx.pending.is_empty() {
                self.flush();
            } else if let Some(t) = &self.sock {
                if t.queued() == 0 {
                    break;
                }
                let _ = t.kick();
            }
            if self.tx.pending.is_empty() && !self.ring_busy() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        self.tx.drop_pending();
        self.klast = self.kernel_drops();
        // Frames still on the ring are lost with the socket: count them.
        if let Some(t) = &self.sock {
            let q = t.queued() as u64;
            self.tx.drops.add(Reason::Unsent, q);
            self.tx.count = self.tx.count.saturating_sub(q);
        }
        self.sock = None;
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
