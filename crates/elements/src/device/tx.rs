//! Transmit bookkeeping shared by ToDevice and ToXDPDevice: the BURST and POLL arguments, the
//! pull task and its upstream notifiers, the packets held back by a full transmit path, and
//! the counters behind their common handlers. (Not an element.)

use sluice_core::{Batch, Cx, Handler, InitCx, NotifierId, BATCH_MAX};
use sluice_lang::args::{Args, Word};

use super::from_device::parse_poll;
use super::sys;

/// True for send errors that mean "try again later" rather than "this packet failed".
pub(crate) fn transient(e: i32) -> bool {
    e == libc::EAGAIN
        || e == libc::EWOULDBLOCK
        || e == libc::EBUSY
        || e == libc::ENOBUFS
        || e == libc::EINTR
}

/// The handlers every transmitting element has.
pub(crate) const TX_HANDLERS: [Handler; 5] = [
    Handler::r("count"),
    Handler::r("drops"),
    Handler::r("errors"),
    Handler::r("last_error"),
    Handler::w("reset_counts"),
];

/// A pull task feeding a transmit path, with its held-back packets and counters.
pub(crate) struct TxPath {
    burst: usize,
    busy: bool,
    notifiers: Option<Vec<NotifierId>>,
    /// Packets pulled but not yet handed to the kernel, in order.
    pub(crate) pending: Batch,
    /// Packets handed to the kernel.
    pub(crate) count: u64,
    /// Packets dropped here (malformed, failed for good, lost at cleanup).
    pub(crate) drops: u64,
    /// Failed sends.
    pub(crate) errors: u64,
    /// The last send error (errno), 0 if none.
    pub(crate) last_error: i32,
}

impl Default for TxPath {
    fn default() -> TxPath {
        TxPath {
            burst: BATCH_MAX,
            busy: false,
            notifiers: None,
            pending: Batch::new(),
            count: 0,
            drops: 0,
            errors: 0,
            last_error: 0,
        }
    }
}

impl TxPath {
    /// Reads `BURST` (at most 32) and `POLL` (`adaptive` or `busy`).
    pub(crate) fn configure(&mut self, args: &mut Args) -> Result<(), ()> {
        self.burst = args
            .read::<usize>("BURST")?
            .unwrap_or(BATCH_MAX)
            .clamp(1, BATCH_MAX);
        if let Some(p) = args.read::<Word>("POLL")? {
            match parse_poll(&p.0) {
                Ok(b) => self.busy = b,
                Err(e) => args.error(e),
            }
        }
        Ok(())
    }

    /// Adds the task and listens to the upstream queues' empty notifiers.
    pub(crate) fn initialize(&mut self, cx: &mut InitCx) {
        cx.add_task(sluice_core::sched::DEFAULT_TICKETS, true);
        self.notifiers = cx.upstream_empty_notifiers(0);
        for n in self.notifiers.clone().unwrap_or_default() {
            cx.listen(n);
        }
    }

    /// Pulls up to BURST packets unless some are still held back; true if any are pending.
    pub(crate) fn fill(&mut self, cx: &mut Cx) -> bool {
        if self.pending.is_empty() {
            self.pending = cx.pull(0, self.burst);
        }
        !self.pending.is_empty()
    }

    /// Drops (and counts) pending packets shorter than an Ethernet header or longer than
    /// `max_len`.
    pub(crate) fn drop_unsendable(&mut self, max_len: usize) {
        let mut drops = 0u64;
        self.pending.retain(|p| {
            let ok = p.len() >= 14 && p.len() <= max_len;
            if !ok {
                drops += 1;
            }
            ok
        });
        self.drops += drops;
    }

    /// Records `n` failed sends, the last with error `e`.
    pub(crate) fn failed(&mut self, n: u64, e: i32) {
        self.errors += n;
        self.last_error = e;
    }

    /// Forgets the first `n` pending packets: `sent` of them reached the kernel.
    pub(crate) fn done(&mut self, n: usize, sent: usize) {
        self.count += sent as u64;
        let mut i = 0;
        self.pending.retain(|_| {
            i += 1;
            i > n
        });
    }

    /// Reschedules the task if it has more to do: busy polling, packets held back, `busy_ring`
    /// (frames still in the kernel's hands), or upstream queues that may hold packets.
    pub(crate) fn reschedule(&self, had: bool, busy_ring: bool, cx: &mut Cx) {
        let more = self.busy
            || !self.pending.is_empty()
            || busy_ring
            || match &self.notifiers {
                Some(n) => had || cx.any_active(n),
                None => true,
            };
        if more {
            cx.reschedule();
        }
    }

    /// Counts what is still pending as dropped (the router stops).
    pub(crate) fn drop_pending(&mut self) {
        self.drops += self.pending.len() as u64;
        self.pending = Batch::new();
    }

    /// Reads `count`, `errors` or `last_error`.
    pub(crate) fn read(&self, name: &str) -> Option<String> {
        Some(match name {
            "count" => self.count.to_string(),
            "errors" => self.errors.to_string(),
            "last_error" if self.last_error == 0 => String::new(),
            "last_error" => sys::strerror(self.last_error),
            _ => return None,
        })
    }

    /// Zeroes the counters (`reset_counts`).
    pub(crate) fn reset(&mut self) {
        self.count = 0;
        self.drops = 0;
        self.errors = 0;
        self.last_error = 0;
    }
}
