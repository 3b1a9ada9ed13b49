//! FromXDPDevice — reads packets from one queue of a network interface through an AF_XDP socket
//!
//! Synopsis: `FromXDPDevice(DEVNAME [, QUEUE, BURST, POLL, MODE, FRAMES, ZEROCOPY, TIMESTAMP])`
//!
//! Ports: no inputs, 1 output (push). Every frame that arrives on receive queue QUEUE of
//! DEVNAME is pushed out as an Ethernet packet: MAC header at offset 0, network header at
//! offset 14 for IPv4 and IPv6, packet type annotation (host, broadcast, multicast, otherhost)
//! from the destination address, timestamp annotation set to the time the batch was read.
//!
//! Unlike FromDevice (AF_PACKET), FromXDPDevice *steals* the frames: the element loads a tiny
//! XDP program (assembled in Sluice, no compiler needed) that redirects every frame of the
//! queue into an XSKMAP holding this element's socket, so the kernel stack no longer sees
//! them. Frames of queues that no FromXDPDevice reads still go to the kernel. The program is
//! attached in native (driver) mode where the driver supports it, else in generic (skb) mode
//! (`MODE`), through a BPF link: it is detached when the router stops, and also if Sluice
//! dies. The socket asks for zero-copy only with `ZEROCOPY true` and falls back to copy mode
//! where the driver lacks it (veth). Frames are copied from the UMEM into Sluice's pooled
//! packets (no allocation per packet) and their UMEM frames go back to the fill ring in
//! batches.
//!
//! The UMEM (FRAMES frames of 2 KiB; half receive, half for a ToXDPDevice on the same
//! interface and queue, which shares the socket) is registered as locked memory: keep all
//! sockets of a process within the locked-memory limit (8 MiB on our machines: 2 sockets of
//! the default 2048 frames; root, with CAP_IPC_LOCK, is not limited).
//!
//! Polling is adaptive by default: the socket is watched for readability; once readable the
//! element's task drains up to BURST frames per run and reschedules itself while frames keep
//! coming, and sleeps on the descriptor again when the ring is empty. `POLL busy` keeps the
//! task always scheduled (lowest latency, one busy core; benchmarks). The thread still yields
//! its core whenever a round of tasks finds no work and every few tens of microseconds, so a
//! kernel thread on the same core (such as the threaded NAPI poller that runs the XDP program
//! and fills the rx ring) is not kept waiting for a whole time slice; running a busy-polling
//! router at a low priority (`nice -n 19`) lets that kernel thread have the core whenever it
//! has work. At high rates give the socket more frames (e.g. `FRAMES 8192`: 4096 receive
//! frames, 10 ms at 400 kpps) so the rx ring rides out the moments the router is off its core.
//!
//! Drops, each counted: frames shorter than 14 bytes (`runts`), descriptors pointing outside
//! the UMEM (`invalid`, a kernel bug if ever), and frames the kernel dropped because the rx
//! ring was full or no fill buffer was available (`kernel_drops`, from `XDP_STATISTICS`).
//! `drops` is their sum; `drop_details` lists the element's own drops (runts, invalid) by
//! reason.
//!
//! Errors at initialisation name the element: no such interface, no permission (needs root,
//! or CAP_NET_ADMIN, CAP_NET_RAW and CAP_BPF), another XDP program already attached, no such
//! queue, UMEM beyond the locked-memory limit.
//!
//! Arguments:
//! - `DEVNAME` (string, mandatory): interface name.
//! - `QUEUE` (integer, default 0): receive queue.
//! - `BURST` (integer, default 32): frames per task run, at most 32 per batch.
//! - `POLL` (`adaptive` or `busy`, default `adaptive`).
//! - `MODE` (`auto`, `native` or `skb`; default `auto`: native, else skb): how the XDP program
//!   is attached. The first element on an interface decides.
//! - `FRAMES` (integer, default 2048, a power of two): UMEM frames of the socket.
//! - `ZEROCOPY` (boolean, default false): try zero-copy first.
//! - `TIMESTAMP` (boolean, default true): set the timestamp annotation.
//!
//! Handlers: `count` (r, packets emitted), `drops` (r), `drop_details` (r), `kernel_drops` (r),
//! `runts` (r), `invalid` (r), `fill_empty` (r, times the kernel found the fill ring empty),
//! `errors` (r), `mode` (r, e.g. `native copy`), `reset_counts` (w).
//!
//! Example:
//! ```text
//! FromXDPDevice(veth0, POLL busy) -> Queue(1000) -> ToXDPDevice(veth1);
//! ```

use std::cell::Cell;

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Packet, PacketType, BATCH_MAX};
use sluice_lang::args::{Args, Word};

use super::from_device::{parse_poll, push_received, rx_handlers, set_offsets};
use super::xsk::{XdpMode, XskOptions, XskRx, XskSocket, XskStats};

const ETH_HLEN: usize = 14;

drop_reasons! {
    /// Why FromXDPDevice drops a frame.
    enum Reason {
        /// Shorter than an Ethernet header (`runts`).
        Runt => "shorter than an Ethernet header",
        /// A descriptor pointing outside the UMEM (`invalid`).
        Invalid => "invalid descriptor",
    }
}

/// The FromXDPDevice element.
pub struct FromXDPDevice {
    devname: String,
    queue: u32,
    burst: usize,
    busy: bool,
    mode: XdpMode,
    opts: XskOptions,
    timestamp: bool,
    rx: Option<XskRx>,
    selecting: bool,
    mac: [u8; 6],
    mode_name: String,
    count: u64,
    drops: Drops<Reason>,
    errors: u64,
    /// Kernel statistics at the last reset.
    base: Cell<XskStats>,
    /// Kernel statistics (since the reset) when last read; kept after cleanup.
    last: Cell<XskStats>,
}

impl Default for FromXDPDevice {
    fn default() -> FromXDPDevice {
        FromXDPDevice {
            devname: String::new(),
            queue: 0,
            burst: BATCH_MAX,
            busy: false,
            mode: XdpMode::Auto,
            opts: XskOptions {
                frames: 2048,
                zerocopy: false,
            },
            timestamp: true,
            rx: None,
            selecting: false,
            mac: [0; 6],
            mode_name: String::new(),
            count: 0,
            drops: Drops::default(),
            errors: 0,
            base: Cell::new(XskStats::default()),
            last: Cell::new(XskStats::default()),
        }
    }
}

/// Reads the arguments shared with ToXDPDevice's socket (FRAMES, ZEROCOPY).
pub(crate) fn read_socket_args(args: &mut Args, opts: &mut XskOptions) -> Result<(), ()> {
    let frames: Option<usize> = args.read("FRAMES")?;
    if let Some(f) = frames {
        if !(64..=65536).contains(&f) || !f.is_power_of_two() {
            args.error("FRAMES: expected a power of two from 64 to 65536");
        }
        opts.frames = f;
    }
    opts.zerocopy = args.read("ZEROCOPY")?.unwrap_or(false);
    Ok(())
}

impl FromXDPDevice {
    fn kstats(&self) -> XskStats {
        let Some(rx) = &self.rx else {
            return self.last.get();
        };
        let now = rx.socket().stats();
        let b = self.base.get();
        let k = XskStats {
            rx_dropped: now.rx_dropped.saturating_sub(b.rx_dropped),
            rx_invalid_descs: now.rx_invalid_descs.saturating_sub(b.rx_invalid_descs),
            tx_invalid_descs: now.tx_invalid_descs.saturating_sub(b.tx_invalid_descs),
            rx_ring_full: now.rx_ring_full.saturating_sub(b.rx_ring_full),
            rx_fill_ring_empty_descs: now
                .rx_fill_ring_empty_descs
                .saturating_sub(b.rx_fill_ring_empty_descs),
            tx_ring_empty_descs: now
                .tx_ring_empty_descs
                .saturating_sub(b.tx_ring_empty_descs),
        };
        self.last.set(k);
        k
    }

    fn kernel_drops(&self) -> u64 {
        let k = self.kstats();
        k.rx_dropped + k.rx_ring_full
    }
}

impl Element for FromXDPDevice {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.devname = args.read_mp::<Word>("DEVNAME")?.0;
        self.queue = args.read("QUEUE")?.unwrap_or(0);
        self.burst = args
            .read::<usize>("BURST")?
            .unwrap_or(BATCH_MAX)
            .clamp(1, BATCH_MAX);
        let poll = args.read::<Word>("POLL")?;
        let mode = args.read::<Word>("MODE")?;
        read_socket_args(args, &mut self.opts)?;
        self.timestamp = args.read("TIMESTAMP")?.unwrap_or(true);
        if let Some(p) = poll {
            match parse_poll(&p.0) {
                Ok(b) => self.busy = b,
                Err(e) => args.error(e),
            }
        }
        if let Some(m) = mode {
            match XdpMode::parse(&m.0) {
                Some(m) => self.mode = m,
                None => args.error(format!(
                    "MODE: expected 'auto', 'native' or 'skb', not '{}'",
                    m.0
                )),
            }
        }
        if args.errors().is_empty() {
            Ok(())
        } else {
            Err(())
        }
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let err = |e: String| format!("FromXDPDevice({}): {}", self.devname, e);
        let sock = XskSocket::get(&self.devname, self.queue, &self.opts).map_err(err)?;
        let rx = XskSocket::take_rx(&sock, self.mode).map_err(err)?;
        self.mac = sock.mac();
        self.mode_name = format!("{} {}", rx.mode(), sock.copy_mode());
        self.base.set(sock.stats());
        cx.add_select(sock.fd());
        self.selecting = true;
        self.rx = Some(rx);
        cx.add_task(sluice_core::sched::DEFAULT_TICKETS, true);
        Ok(())
    }

    fn selected(&mut self, fd: i32, cx: &mut Cx) {
        let Some(rx) = &self.rx else { return };
        if rx.ready() {
            cx.reschedule();
        } else {
            // Woken without data: a socket error (the interface went away).
            let e = rx.socket().take_error();
            if e != 0 {
                self.errors += 1;
                if e == libc::ENETDOWN || e == libc::ENXIO || e == libc::ENODEV {
                    // The socket is unbound for good: stop watching it.
                    cx.remove_select(fd);
                    self.selecting = false;
                }
            }
        }
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        let Some(rx) = self.rx.as_mut() else {
            return false;
        };
        let mut batch = Batch::new();
        let mut runts = 0u64;
        let mac = self.mac;
        let (seen, invalid) = rx.recv(self.burst, |data| {
            if data.len() < ETH_HLEN {
                runts += 1;
                return;
            }
            let mut p = Packet::from_bytes(data);
            set_offsets(&mut p);
            let d = &data[..6];
            let pt = if d[0] & 1 == 0 {
                if d == mac {
                    PacketType::Host
                } else {
                    PacketType::OtherHost
                }
            } else if d == [0xff; 6] {
                PacketType::Broadcast
            } else {
                PacketType::Multicast
            };
            p.anno_mut().packet_type = pt;
            let _ = batch.push(p);
        });
        self.drops.add(Reason::Runt, runts);
        self.drops.add(Reason::Invalid, invalid as u64);
        if self.timestamp && !batch.is_empty() {
            let now = cx.now();
            for p in batch.iter_mut() {
                p.anno_mut().timestamp = now;
            }
        }
        push_received(batch, seen, self.busy, &mut self.count, cx)
    }

    fn handler_table(&self) -> Handlers {
        rx_handlers(|e: &Self| e.count, |e| &e.drops, Self::kernel_drops)
            .read("runts", |e| e.drops.get(Reason::Runt))
            .read("invalid", |e| e.drops.get(Reason::Invalid))
            .read("fill_empty", |e| e.kstats().rx_fill_ring_empty_descs)
            .read("errors", |e| e.errors)
            .read("mode", |e| e.mode_name.clone())
            .action("reset_counts", |e| {
                e.count = 0;
                e.drops.reset();
                e.errors = 0;
                if let Some(r) = &e.rx {
                    e.base.set(r.socket().stats());
                }
                e.last.set(XskStats::default());
            })
            .into()
    }

    fn cleanup(&mut self, cx: &mut Cx) {
        self.kstats();
        if let Some(r) = &self.rx {
            if self.selecting {
                cx.remove_select(r.socket().fd());
                self.selecting = false;
            }
        }
        // Dropping the receive half detaches the XDP program (if it was the last user on the
        // interface) and, with the last half, closes the socket and frees the UMEM.
        self.rx = None;
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "FromXDPDevice",
    ports: "0/1",
    processing: "h/h",
    flow: "",
    source: include_str!("from_xdp_device.rs"),
    make: || Box::new(FromXDPDevice::default()),
};
