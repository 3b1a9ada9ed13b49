//! Transmit bookkeeping shared by ToDevice and ToXDPDevice: the BURST and POLL arguments, the
//! pull task and its upstream notifiers, the packets held back by a full transmit path, and
//! the counters behind their common handlers. (Not an element.)

use sluice_core::{drop_reasons, Batch, Cx, Drops, InitCx, NotifierId, BATCH_MAX};
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

drop_reasons! {
    /// Why a transmitting element drops a packet.
    pub(crate) enum Reason {
        /// Shorter than an Ethernet header.
        Runt => "shorter than an Ethernet header",
        /// Longer than a transmit frame (ToXDPDevice).
        TooLong => "longer than a frame",
        /// The send failed for good.
        SendFailed => "send failed",
        /// Not sent when the router stopped.
        Unsent => "unsent at stop",
    }
}

/// A pull task feeding a transmit path, with its held-back packets and counters.
pub(crate) struct TxPath {
    burst: usize,
    busy: bool,
    notifiers: Option<Vec<NotifierId>>,
    /// Packets pulled but not yet handed to the kernel, in order.
    pub(crate) pending: Batch,
    /// Packets handed to the kernel.
    pub(crate) count: u64,
    /// Packets dropped here, by reason.
    pub(crate) drops: Drops<Reason>,
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
            drops: Drops::default(),
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
        let drops = &mut self.drops;
        self.pending.retain(|p| match p.len() {
            0..14 => {
                drops.count(Reason::Runt);
                false
            }
            n if n > max_len => {
                drops.count(Reason::TooLong);
                false
            }
            _ => true,
        });
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
        let unsent = std::mem::take(&mut self.pending);
        self.drops.add(Reason::Unsent, unsent.len() as u64);
    }

    /// The `last_error` handler: the last send error's text, empty if none.
    pub(crate) fn last_error(&self) -> String {
        match self.last_error {
            0 => String::new(),
            e => sys::strerror(e),
        }
    }

    /// Zeroes the counters (`reset_counts`).
    pub(crate) fn reset(&mut self) {
        self.count = 0;
        self.drops.reset();
        self.errors = 0;
        self.last_error = 0;
    }
}
