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
//! Ethernet header (14 bytes) are dropped and counted in `drops`, and so are packets still
//! held back when the router stops.
//!
//! Arguments:
//! - `DEVNAME` (string, mandatory): interface name.
//! - `BURST` (integer, default 32): packets per task run, at most 32.
//! - `QDISC_BYPASS` (boolean, default true): hand frames straight to the driver
//!   (`PACKET_QDISC_BYPASS`), skipping the interface's queueing discipline. Such frames are
//!   not seen by packet taps on this host (tcpdump, `FromDevice(.., OUTBOUND true)`).
//! - `METHOD` (`LINUX`, `PACKET` or `PCAP`): every one is served by AF_PACKET.
//! - `POLL` (`adaptive` or `busy`, default `adaptive`): `busy` keeps the task always scheduled.
//!
//! Handlers: `count` (r, packets sent), `drops` (r), `drop_details` (r, drops by reason),
//! `errors` (r, failed sends), `last_error` (r), `reset_counts` (w).
//!
//! Example:
//! ```text
//! FromDevice(veth0) -> Queue(1000) -> ToDevice(veth1);
//! ```

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Table};
use sluice_lang::args::{Args, Word};

use super::from_device::check_method;
use super::sys::TxSocket;
use super::tx::{transient, Reason, TxPath};

/// The ToDevice element.
pub struct ToDevice {
    devname: String,
    bypass: bool,
    sock: Option<TxSocket>,
    tx: TxPath,
}

impl Default for ToDevice {
    fn default() -> ToDevice {
        ToDevice {
            devname: String::new(),
            bypass: true,
            sock: None,
            tx: TxPath::default(),
        }
    }
}

impl ToDevice {
    /// Sends the pending packets; keeps what could not be sent yet. Returns packets sent.
    fn flush(&mut self) -> usize {
        let Some(sock) = self.sock.as_mut() else {
            return 0;
        };
        let tx = &mut self.tx;
        tx.drop_unsendable(usize::MAX);
        let mut frames: [&[u8]; sluice_core::BATCH_MAX] = [&[]; sluice_core::BATCH_MAX];
        let n = tx.pending.len();
        for (f, p) in frames.iter_mut().zip(tx.pending.iter()) {
            *f = p.data();
        }
        let mut done = 0;
        let mut sent = 0;
        let mut last_failure = None;
        while done < n {
            match sock.send(&frames[done..n]) {
                Ok(0) => break,
                Ok(k) => {
                    done += k;
                    sent += k;
                }
                Err(e) if transient(e) => break,
                Err(e) => {
                    // This frame failed for good: it is counted below; go on with the next.
                    last_failure = Some(e);
                    done += 1;
                }
            }
        }
        if let Some(e) = last_failure {
            let failed = (done - sent) as u64;
            tx.failed(failed, e);
            tx.drops.add(Reason::SendFailed, failed);
        }
        tx.done(done, sent);
        sent
    }
}

impl Element for ToDevice {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.devname = args.read_mp::<Word>("DEVNAME")?.0;
        self.tx.configure(args)?;
        self.bypass = args.read("QDISC_BYPASS")?.unwrap_or(true);
        if let Some(m) = args.read::<Word>("METHOD")? {
            if let Err(e) = check_method(&m.0) {
                args.error(e);
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
        self.tx.initialize(cx);
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        let had = self.tx.fill(cx);
        let sent = if had { self.flush() } else { 0 };
        self.tx.reschedule(had, false, cx);
        sent > 0
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.tx.count)
            .drops(|e| &e.tx.drops)
            .read("errors", |e| e.tx.errors)
            .read("last_error", |e| e.tx.last_error())
            .action("reset_counts", |e| {
                e.tx.reset();
                if let Some(s) = &e.sock {
                    let _ = s.take_error();
                }
            })
            .into()
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        // One last attempt for packets held back by a full transmit path.
        if !self.tx.pending.is_empty() {
            self.flush();
        }
        self.tx.drop_pending();
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
