//! FastUDPSource — a benchmark source of one UDP/IP/Ethernet packet, sent again and again
//!
//! Synopsis: `FastUDPSource(RATE, LIMIT, LENGTH, SRCETH, SRCIP, SPORT, DSTETH, DSTIP, DPORT
//! [, CHECKSUM, INTERVAL, ACTIVE, STOP])`
//!
//! Ports: no inputs, 1 pull output.
//!
//! At initialisation builds one Ethernet frame of LENGTH bytes (at least 60; a smaller LENGTH
//! is raised to 60 with a warning): Ethernet header from SRCETH to DSTETH (type IPv4), a
//! 20-byte IPv4 header from SRCIP to DSTIP (TTL 250, ID 0, TOS 0, protocol UDP, checksum),
//! and a UDP header from SPORT to DPORT covering the rest, with its checksum when CHECKSUM is
//! true. The network header and destination IP annotations are set. Each pull returns copies
//! of that frame (sharing its buffer copy-on-write, so the sending costs no copy): as many as
//! asked when RATE is 0, otherwise at most RATE a second, evenly spaced (Click's gap rate),
//! until LIMIT packets are sent. With INTERVAL *n* > 0, after every *n* packets both ports
//! grow by one and the UDP checksum is recomputed. Nothing is dropped. While LIMIT is reached
//! or the source is inactive, its empty notifier tells pullers (Unqueue) to sleep.
//!
//! Arguments:
//! - `RATE` (unsigned): packets per second; 0 means as fast as pulled.
//! - `LIMIT` (integer): packets to send in all; negative means no limit.
//! - `LENGTH` (unsigned, at most 262144): frame length in bytes.
//! - `SRCETH`, `DSTETH`: Ethernet addresses; `SRCIP`, `DSTIP`: IPv4 addresses (AddressInfo
//!   names allowed); `SPORT`, `DPORT`: UDP ports (numbers or service names).
//! - `CHECKSUM` (bool, default true): fill in the UDP checksum.
//! - `INTERVAL` (unsigned, default 0): packets between port increments; 0 means never.
//! - `ACTIVE` (bool, default true): whether pulls return packets.
//! - `STOP` (bool, default false): raise a driver stop event when LIMIT is reached (as
//!   InfiniteSource's; not in Click's version of this element).
//!
//! Handlers: `count` (r): packets sent. `rate` (r): once LIMIT is reached, the average rate
//! between the first and the last packet in packets per second (0 before); (w): sets RATE.
//! `reset` (w): zero the count and restart the ports. `active` (w): set ACTIVE (true also
//! resets). `limit` (w): set LIMIT.
//!
//! Example: `FastUDPSource(100000, 500000, 60, 02:00:00:00:00:01, 198.18.0.1, 1234,
//! 02:00:00:00:00:02, 198.19.0.2, 1234) -> ToDevice(veth0)`

use std::net::Ipv4Addr;

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::EtherAddr;

use super::fast_source::{Frame, Pacing};
use crate::ip::common::PortArg;

/// The FastUDPSource element.
#[derive(Default)]
pub struct FastUDPSource {
    frame: Frame,
    sport: u16,
    dport: u16,
    interval: u64,
    pacing: Pacing,
    /// The frame every pull copies, and how much its ports have grown.
    sent: Option<(Packet, u16)>,
}

/// The port increment after `n` packets, with INTERVAL `interval`.
fn incr(interval: u64, n: u64) -> u16 {
    n.checked_div(interval).unwrap_or(0) as u16
}

impl Element for FastUDPSource {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.pacing.read_rate_limit(args)?;
        self.frame.length = Frame::read_length(args)?;
        self.frame.src_eth = args.read_mp::<EtherAddr>("SRCETH")?;
        self.frame.src = args.read_mp::<Ipv4Addr>("SRCIP")?;
        self.sport = args.read_mp::<PortArg>("SPORT")?.0;
        self.frame.dst_eth = args.read_mp::<EtherAddr>("DSTETH")?;
        self.frame.dst = args.read_mp::<Ipv4Addr>("DSTIP")?;
        self.dport = args.read_mp::<PortArg>("DPORT")?.0;
        self.frame.checksum = args.read_p("CHECKSUM")?.unwrap_or(self.frame.checksum);
        self.interval = args.read_p("INTERVAL")?.unwrap_or(self.interval);
        self.pacing.read_active(args, cx)
    }

    fn initialize(&mut self, _cx: &mut InitCx) -> Result<(), String> {
        self.sent = Some((self.frame.build(self.sport, self.dport), 0));
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let Some((mut frame, mut last)) = self.sent.take() else {
            return Batch::new();
        };
        let (spec, ports, interval) = (self.frame, (self.sport, self.dport), self.interval);
        let b = self.pacing.pull(max, cx, |n| {
            let want = incr(interval, n);
            if want != last {
                last = want;
                frame = spec.build(ports.0.wrapping_add(last), ports.1.wrapping_add(last));
            }
            frame.clone_packet()
        });
        self.sent = Some((frame, last));
        b
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .nest(|e| &mut e.pacing, Pacing::table())
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "FastUDPSource",
    ports: "0/1",
    processing: "l/l",
    flow: "",
    source: include_str!("fast_udp_source.rs"),
    make: || Box::<FastUDPSource>::default(),
};
