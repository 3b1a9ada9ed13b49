//! FromDevice — reads packets from a network interface (Linux AF_PACKET, TPACKET_V3 ring)
//!
//! Synopsis: `FromDevice(DEVNAME [, SNIFFER, PROMISC, BURST, SNAPLEN, FANOUT, FANOUT_MODE,
//! OUTBOUND, TIMESTAMP, METHOD, POLL])`
//!
//! Ports: no inputs, 1 output (push). Every frame received on DEVNAME is pushed out as an
//! Ethernet packet: MAC header at offset 0, network header at offset 14 for IPv4 and IPv6,
//! timestamp annotation set to the kernel's arrival time, packet type annotation (host,
//! broadcast, multicast, otherhost) from the link layer, VLAN TCI annotation when the kernel
//! stripped a tag. Packets this host sends on the interface are ignored (unless `OUTBOUND`).
//!
//! The frames come from a memory-mapped TPACKET_V3 receive ring (blocks of 128 KiB). Polling
//! is adaptive: the socket is watched for readability; once readable, the element's task
//! drains up to BURST frames per run and reschedules itself while frames keep coming, and
//! sleeps on the descriptor again when the ring is empty, so an idle router uses no CPU.
//! `POLL busy` keeps the task always scheduled (lowest latency, one busy core; benchmarks).
//! A busy-polling thread still yields its core whenever a round of tasks finds no work and
//! every few tens of microseconds, so a kernel thread on the same core (such as the threaded
//! NAPI poller that fills the ring) is not kept waiting for a whole time slice. On a core it
//! shares with such a kernel thread, run a busy-polling router at a low priority (`nice -n
//! 19`): the scheduler then gives the kernel thread the core whenever it has work.
//!
//! Drops, each counted: frames shorter than 14 bytes (`runts`), frames cut by the capture
//! length or longer than SNAPLEN (`too_long`), and frames the kernel dropped because the ring
//! was full (`kernel_drops`, from `PACKET_STATISTICS`). `drops` is their sum; `drop_details`
//! lists the element's own drops (runts, too long) by reason. An interface
//! that goes down or vanishes makes socket errors, counted in `errors`; the element keeps
//! running.
//!
//! AF_PACKET cannot steal frames from the kernel, so `SNIFFER false` behaves like `SNIFFER
//! true`: give the interface no IP address (and disable the kernel's forwarding) when Sluice
//! is the router.
//!
//! Arguments:
//! - `DEVNAME` (string, mandatory): interface name.
//! - `SNIFFER` (boolean, default true): accepted for Click compatibility (see above).
//! - `PROMISC` (boolean, default false): put the interface in promiscuous mode (released when
//!   the router stops).
//! - `BURST` (integer, default 32): frames per task run, at most 32 per batch.
//! - `SNAPLEN` (integer, default 2046): longest frame accepted.
//! - `FANOUT` (integer group id): join `PACKET_FANOUT` group ID, so several FromDevice elements
//!   (one per thread) on the same interface each receive a share of the flows.
//! - `FANOUT_MODE` (`hash`, `lb`, `cpu`, `queue`; default `hash`): how the group splits frames.
//! - `OUTBOUND` (boolean, default false): also emit frames this host sends.
//! - `TIMESTAMP` (boolean, default true): set the timestamp annotation.
//! - `METHOD` (`LINUX`, `PACKET` or `PCAP`): capture method; every one is served by AF_PACKET
//!   (on Linux, libpcap captures through AF_PACKET too).
//! - `POLL` (`adaptive` or `busy`, default `adaptive`).
//! - `BLOCKS` (integer, default 32): receive ring blocks of 128 KiB.
//! - `BLOCK_TIMEOUT` (integer ms, default 1): the kernel hands over a partly filled block after
//!   this long, which bounds the added latency at low rates.
//!
//! - `QUIET`, `HEADROOM`, `LENGTH`, `ALLOW_NONEXISTENT`, `UP_CALL`, `DOWN_CALL`: keywords of
//!   Click's kernel FromDevice and PollDevice, accepted and ignored (a missing device is an
//!   error; no calls are made when the link changes). As in Click, an UP_CALL or DOWN_CALL
//!   (`HANDLER [VALUE]`) whose HANDLER does not exist or is not writable is an initialisation
//!   error (`UP_CALL: HANDLER: error`).
//!
//! Handlers: `count` (r, packets emitted), `drops` (r), `drop_details` (r), `kernel_drops` (r),
//! `kernel_packets` (r, frames the kernel delivered), `runts` (r), `too_long` (r), `errors`
//! (r), `reset_counts` (w).
//!
//! Example:
//! ```text
//! FromDevice(veth0, PROMISC true) -> Queue(1000) -> ToDevice(veth1);
//! ```

use std::any::Any;
use std::cell::Cell;

use sluice_core::handlers::DropReason;
use sluice_core::toolkit::HandlerCall;
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Packet, PacketType, Table, Timestamp, BATCH_MAX};
use sluice_lang::args::{Args, Word};

use super::sys::{self, FanoutMode, RxOptions, RxRing};

const ETH_HLEN: usize = 14;

drop_reasons! {
    /// Why FromDevice drops a frame.
    enum Reason {
        /// Shorter than an Ethernet header (`runts`).
        Runt => "shorter than an Ethernet header",
        /// Cut by the capture length or longer than SNAPLEN (`too_long`).
        TooLong => "longer than SNAPLEN",
    }
}

/// The FromDevice element.
pub struct FromDevice {
    devname: String,
    promisc: bool,
    burst: usize,
    snaplen: usize,
    fanout: Option<(u16, FanoutMode)>,
    outbound: bool,
    timestamp: bool,
    busy: bool,
    /// Configured as PollDevice: BURST may be positional.
    poll_device: bool,
    blocks: usize,
    block_timeout: u32,
    /// UP_CALL and DOWN_CALL, checked at initialisation and never called.
    link_calls: [(&'static str, Option<HandlerCall>); 2],
    ring: Option<RxRing>,
    count: u64,
    drops: Drops<Reason>,
    kernel_drops: Cell<u64>,
    kernel_packets: Cell<u64>,
    errors: u64,
    runs: u64,
}

impl Default for FromDevice {
    fn default() -> FromDevice {
        FromDevice {
            devname: String::new(),
            promisc: false,
            burst: BATCH_MAX,
            snaplen: 2046,
            fanout: None,
            outbound: false,
            timestamp: true,
            busy: false,
            poll_device: false,
            blocks: 32,
            block_timeout: 1,
            link_calls: [("UP_CALL", None), ("DOWN_CALL", None)],
            ring: None,
            count: 0,
            drops: Drops::default(),
            kernel_drops: Cell::new(0),
            kernel_packets: Cell::new(0),
            errors: 0,
            runs: 0,
        }
    }
}

impl FromDevice {
    /// A FromDevice that busy-polls unless told `POLL adaptive` (PollDevice).
    pub(crate) fn polling() -> FromDevice {
        FromDevice {
            busy: true,
            poll_device: true,
            ..FromDevice::default()
        }
    }
}

/// Maps `sll_pkttype` to the packet type annotation.
pub(crate) fn packet_type(pkttype: u8) -> PacketType {
    match pkttype {
        0 => PacketType::Host,
        1 => PacketType::Broadcast,
        2 => PacketType::Multicast,
        3 => PacketType::OtherHost,
        4 => PacketType::Outgoing,
        5 => PacketType::Loopback,
        _ => PacketType::Host,
    }
}

/// Parses the `POLL` keyword: true for busy polling.
pub(crate) fn parse_poll(w: &str) -> Result<bool, String> {
    match w.to_ascii_lowercase().as_str() {
        "adaptive" | "select" | "interrupt" => Ok(false),
        "busy" | "spin" => Ok(true),
        _ => Err(format!("POLL: expected 'adaptive' or 'busy', not '{}'", w)),
    }
}

/// Checks the `METHOD` keyword.
pub(crate) fn check_method(w: &str) -> Result<(), String> {
    match w.to_ascii_uppercase().as_str() {
        "LINUX" | "PACKET" | "AF_PACKET" | "MMAP" | "TPACKET" | "PCAP" => Ok(()),
        _ => Err(format!(
            "METHOD: '{}' is not supported (only LINUX or PCAP, both served by AF_PACKET)",
            w
        )),
    }
}

/// Sets the MAC and network header offsets of a received Ethernet frame.
pub(crate) fn set_offsets(p: &mut Packet) {
    p.set_mac_offset(0);
    let d = p.data();
    if d.len() >= ETH_HLEN {
        let ty = u16::from_be_bytes([d[12], d[13]]);
        if ty == 0x0800 || ty == 0x86dd {
            p.set_network_offset(ETH_HLEN as isize);
        }
    }
}

/// Ends a receive run of FromDevice or FromXDPDevice: counts the packets of `batch` into
/// `count` and pushes them, and runs the task again while frames keep coming (`seen` frames
/// this run) or when busy polling. True if packets were pushed.
pub(crate) fn push_received(
    batch: Batch,
    seen: usize,
    busy: bool,
    count: &mut u64,
    cx: &mut Cx,
) -> bool {
    *count += batch.len() as u64;
    let got = !batch.is_empty();
    if got {
        cx.push(0, batch);
    }
    if seen > 0 || busy {
        cx.reschedule();
    }
    got
}

/// The handlers FromDevice and FromXDPDevice begin with: `count` (r), `drops` (r, the
/// element's drops and the kernel's), `drop_details` (r, the element's by reason) and
/// `kernel_drops` (r).
pub(crate) fn rx_handlers<E: Any, R: DropReason>(
    count: fn(&E) -> u64,
    drops: fn(&E) -> &Drops<R>,
    kernel_drops: fn(&E) -> u64,
) -> Table<E> {
    Table::<E>::new()
        .read_with("count", move |e| count(e).to_string())
        .read_with("drops", move |e| {
            (drops(e).total() + kernel_drops(e)).to_string()
        })
        .drops(drops)
        .read_with("kernel_drops", move |e| kernel_drops(e).to_string())
}

impl FromDevice {
    /// Folds in the kernel's counters (which reset when read).
    fn poll_stats(&self) {
        if let Some(r) = &self.ring {
            let (p, d) = r.stats();
            self.kernel_packets.set(self.kernel_packets.get() + p);
            self.kernel_drops.set(self.kernel_drops.get() + d);
        }
    }

    /// Kernel drops, brought up to date.
    fn kernel_drops(&self) -> u64 {
        self.poll_stats();
        self.kernel_drops.get()
    }
}

impl Element for FromDevice {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.devname = args.read_mp::<Word>("DEVNAME")?.0;
        let _sniffer: Option<bool> = args.read("SNIFFER")?;
        self.promisc = args.read("PROMISC")?.unwrap_or(false);
        let burst = if self.poll_device {
            args.read_p::<usize>("BURST")?
        } else {
            args.read::<usize>("BURST")?
        };
        self.burst = burst.unwrap_or(BATCH_MAX).clamp(1, BATCH_MAX);
        self.snaplen = args.read("SNAPLEN")?.unwrap_or(2046);
        let group: Option<u16> = args.read("FANOUT")?;
        let mode = args.read::<Word>("FANOUT_MODE")?;
        self.outbound = args.read("OUTBOUND")?.unwrap_or(false);
        self.timestamp = args.read("TIMESTAMP")?.unwrap_or(true);
        let method = args.read::<Word>("METHOD")?;
        let poll = args.read::<Word>("POLL")?;
        self.blocks = args.read("BLOCKS")?.unwrap_or(32usize).clamp(2, 1024);
        let _quiet: Option<bool> = args.read("QUIET")?;
        let _headroom: Option<usize> = args.read("HEADROOM")?;
        let _length: Option<usize> = args.read("LENGTH")?;
        let _nonexistent: Option<bool> = args.read("ALLOW_NONEXISTENT")?;
        for (what, call) in self.link_calls.iter_mut() {
            *call = args.read(what)?;
        }
        self.block_timeout = args.read("BLOCK_TIMEOUT")?.unwrap_or(1u32).max(1);
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
        let mode = match mode {
            None => FanoutMode::Hash,
            Some(m) => match FanoutMode::parse(&m.0) {
                Some(m) => m,
                None => {
                    args.error(format!(
                        "FANOUT_MODE: expected hash, lb, cpu or queue, not '{}'",
                        m.0
                    ));
                    FanoutMode::Hash
                }
            },
        };
        self.fanout = group.map(|g| (g, mode));
        if self.snaplen < ETH_HLEN {
            args.error("SNAPLEN: must be at least 14");
        }
        if args.errors().is_empty() {
            Ok(())
        } else {
            Err(())
        }
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        for (what, call) in &self.link_calls {
            if let Some(call) = call {
                call.check_as(what, cx)?;
            }
        }
        let opts = RxOptions {
            promisc: self.promisc,
            fanout: self.fanout,
            outbound: self.outbound,
            blocks: self.blocks,
            block_timeout_ms: self.block_timeout,
        };
        let ring = RxRing::open(&self.devname, &opts)
            .map_err(|e| format!("FromDevice({}): {}", self.devname, e))?;
        cx.add_select(ring.fd());
        self.ring = Some(ring);
        cx.add_task(sluice_core::sched::DEFAULT_TICKETS, true);
        Ok(())
    }

    fn selected(&mut self, _fd: i32, cx: &mut Cx) {
        let Some(r) = &self.ring else { return };
        if r.ready() {
            cx.reschedule();
        } else {
            // Woken without data: an error (interface down or gone). Clear and count it.
            if r.take_error() != 0 {
                self.errors += 1;
            }
        }
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        let Some(ring) = self.ring.as_mut() else {
            return false;
        };
        let mut batch = Batch::new();
        let (mut runts, mut too_long) = (0u64, 0u64);
        let snaplen = self.snaplen;
        let (stamp, outbound) = (self.timestamp, self.outbound);
        let seen = ring.recv(self.burst, |h, data| {
            if !outbound && h.pkttype == 4 {
                return;
            }
            if (h.len as usize) < ETH_HLEN || data.len() < ETH_HLEN {
                runts += 1;
                return;
            }
            if h.len > h.snaplen || data.len() > snaplen {
                too_long += 1;
                return;
            }
            let mut p = Packet::from_bytes(data);
            set_offsets(&mut p);
            let a = p.anno_mut();
            a.packet_type = packet_type(h.pkttype);
            if h.status & sys::TP_STATUS_VLAN_VALID != 0 {
                a.vlan_tci = h.vlan_tci;
            }
            if stamp {
                a.timestamp = Timestamp::from_parts(h.sec as i64, h.nsec as i64);
            }
            let _ = batch.push(p);
        });
        self.drops.add(Reason::Runt, runts);
        self.drops.add(Reason::TooLong, too_long);
        self.runs += 1;
        if self.runs.is_multiple_of(1024) {
            self.poll_stats();
        }
        push_received(batch, seen, self.busy, &mut self.count, cx)
    }

    fn handler_table(&self) -> Handlers {
        rx_handlers(|e: &Self| e.count, |e| &e.drops, Self::kernel_drops)
            .read("kernel_packets", |e| {
                e.poll_stats();
                e.kernel_packets.get()
            })
            .read("runts", |e| e.drops.get(Reason::Runt))
            .read("too_long", |e| e.drops.get(Reason::TooLong))
            .read("errors", |e| e.errors)
            .action("reset_counts", |e| {
                e.poll_stats();
                e.count = 0;
                e.drops.reset();
                e.kernel_drops.set(0);
                e.kernel_packets.set(0);
                e.errors = 0;
            })
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "FromDevice",
    ports: "0/1",
    processing: "h/h",
    flow: "",
    source: include_str!("from_device.rs"),
    make: || Box::new(FromDevice::default()),
};
