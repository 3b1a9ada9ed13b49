//! What the benchmark sources FastUDPSource and FastUDPFlows share: their UDP/IP/Ethernet
//! frame, and their pacing (rate, limit, activity, counts, empty notifier) with its handlers.

use std::net::Ipv4Addr;

use sluice_core::{Batch, ConfigCx, Cx, Handlers, NotifierId, Packet, Table, Timestamp};
use sluice_lang::args::{Args, AtMost, FromArg, PacketLen};
use sluice_wire::ethernet::{EthernetFrame, ETHERTYPE_IPV4, HEADER_LEN as ETHER_LEN};
use sluice_wire::ipv4::{HEADER_LEN as IP_LEN, PROTO_UDP};
use sluice_wire::{EtherAddr, UdpPacket};

use crate::ip::common::{ipv4_header, push_ipv4_header};
use crate::standard::util::GapRate;

/// The smallest frame the fast sources send.
pub const MIN_LENGTH: usize = 60;
/// TTL of the IPv4 header.
const TTL: u8 = 250;

/// The Ethernet, IPv4 and UDP addresses of a fast source's frames.
#[derive(Clone, Copy)]
pub struct Frame {
    /// Frame length in bytes.
    pub length: usize,
    /// Ethernet source.
    pub src_eth: EtherAddr,
    /// Ethernet destination.
    pub dst_eth: EtherAddr,
    /// IPv4 source.
    pub src: Ipv4Addr,
    /// IPv4 destination.
    pub dst: Ipv4Addr,
    /// Whether the UDP checksum is filled in.
    pub checksum: bool,
}

impl Default for Frame {
    /// The smallest frame, all addresses zero, with a UDP checksum.
    fn default() -> Self {
        Frame {
            length: MIN_LENGTH,
            src_eth: EtherAddr([0; 6]),
            dst_eth: EtherAddr([0; 6]),
            src: Ipv4Addr::UNSPECIFIED,
            dst: Ipv4Addr::UNSPECIFIED,
            checksum: true,
        }
    }
}

impl Frame {
    /// Reads LENGTH (raising it to [`MIN_LENGTH`] with a warning).
    pub fn read_length(args: &mut Args) -> Result<usize, ()> {
        let AtMost(length) = args.read_mp::<PacketLen>("LENGTH")?;
        if length < MIN_LENGTH {
            eprintln!("warning: packet length < {MIN_LENGTH}, defaulting to {MIN_LENGTH}");
        }
        Ok(length.clamp(MIN_LENGTH, u16::MAX as usize + ETHER_LEN))
    }

    /// The frame from `sport` to `dport`, with the MAC, network header and destination IP
    /// annotations set.
    pub fn build(&self, sport: u16, dport: u16) -> Packet {
        let mut p = Packet::new(self.length - ETHER_LEN - IP_LEN);
        let ip = ipv4_header(PROTO_UDP, self.src, self.dst, TTL, 0);
        push_ipv4_header(&mut p, ip, 0);
        let (src, dst) = (self.src, self.dst);
        let mut udp = UdpPacket::new_unchecked(&mut p.data_mut()[IP_LEN..]);
        udp.set_src_port(sport);
        udp.set_dst_port(dport);
        udp.set_len((self.length - ETHER_LEN - IP_LEN) as u16);
        if self.checksum {
            udp.fill_checksum_v4(src, dst);
        }
        let mut eth = EthernetFrame::new_unchecked(p.push_front(ETHER_LEN));
        eth.set_dst(self.dst_eth);
        eth.set_src(self.src_eth);
        eth.set_ethertype(ETHERTYPE_IPV4);
        p.set_mac_offset(0);
        p
    }
}

/// A fast source's pacing: at most RATE packets a second (0: as fast as pulled), LIMIT in all,
/// while active, and a driver stop at LIMIT with STOP; the packets sent, and the times of the
/// first and of the last.
pub struct Pacing {
    rate: GapRate,
    limit: Option<u64>,
    active: bool,
    stop: bool,
    count: u64,
    first: Timestamp,
    last: Timestamp,
    /// Empty notifier: inactive while pulls would return nothing (LIMIT reached or not
    /// ACTIVE), so pullers sleep.
    note: Option<NotifierId>,
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing {
            rate: GapRate::new(0),
            limit: None,
            active: true,
            stop: false,
            count: 0,
            first: Timestamp::ZERO,
            last: Timestamp::ZERO,
            note: None,
        }
    }
}

impl Pacing {
    /// Reads RATE and LIMIT.
    pub fn read_rate_limit(&mut self, args: &mut Args) -> Result<(), ()> {
        let rate: u32 = args.read_mp("RATE")?;
        let limit: i64 = args.read_mp("LIMIT")?;
        self.rate = GapRate::new(rate);
        self.limit = u64::try_from(limit).ok();
        Ok(())
    }

    /// Reads ACTIVE and STOP, and declares the empty notifier.
    pub fn read_active(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.active = args.read_p("ACTIVE")?.unwrap_or(self.active);
        args.read_into("STOP", &mut self.stop)?;
        let note = cx.new_notifier(self.active && self.limit != Some(0));
        cx.provide_empty_notifier(note);
        self.note = Some(note);
        Ok(())
    }

    fn limit_reached(&self) -> bool {
        self.limit.is_some_and(|l| self.count >= l)
    }

    fn reset(&mut self) {
        self.count = 0;
        self.first = Timestamp::ZERO;
        self.last = Timestamp::ZERO;
    }

    /// Tells pullers whether pulls may return packets.
    fn signal(&self, cx: &mut Cx) {
        if let Some(n) = self.note {
            cx.set_notifier(n, self.active && !self.limit_reached());
        }
    }

    /// Up to `max` packets as pacing allows, the `n`th made by `next(n)` (counting from 0
    /// since the last reset).
    pub fn pull(&mut self, max: usize, cx: &mut Cx, mut next: impl FnMut(u64) -> Packet) -> Batch {
        let mut b = Batch::new();
        if !self.active {
            return b;
        }
        let now = cx.now();
        while b.len() < max && !self.limit_reached() {
            if self.rate.rate() != 0 {
                if !self.rate.ready(now) {
                    break;
                }
                self.rate.sent(1);
            }
            if b.push(next(self.count)).is_err() {
                break;
            }
            self.count += 1;
            if self.count == 1 {
                self.first = now;
            }
            if self.limit_reached() {
                self.last = now;
                if self.stop {
                    cx.request_driver_stop();
                }
            }
        }
        if self.limit_reached() {
            self.signal(cx);
        }
        b
    }

    /// The handlers `count`, `rate`, `reset`, `active` and `limit`, for an element to
    /// [`Table::nest`].
    pub fn table() -> Handlers {
        Table::<Pacing>::new()
            .read("count", |e| e.count)
            .read("rate", |e| {
                if e.last == Timestamp::ZERO {
                    return 0;
                }
                let ms = ((e.last - e.first).0 / 1_000_000).max(1) as u64;
                e.count * 1000 / ms
            })
            .write("rate", |e, v, cx| {
                let rate =
                    u32::from_arg(v.trim()).map_err(|_| "rate parameter must be integer >= 0")?;
                e.rate.set_rate(rate, cx.now());
                e.signal(cx);
                Ok(())
            })
            .write("reset", |e, _, cx| {
                e.reset();
                e.signal(cx);
                Ok(())
            })
            .write("active", |e, v, cx| {
                e.active =
                    bool::from_arg(v.trim()).map_err(|_| "active parameter must be boolean")?;
                if e.active {
                    e.reset();
                }
                e.signal(cx);
                Ok(())
            })
            .write("limit", |e, v, cx| {
                let limit =
                    i64::from_arg(v.trim()).map_err(|_| "limit parameter must be integer >= 0")?;
                e.limit = u64::try_from(limit).ok();
                e.signal(cx);
                Ok(())
            })
            .into()
    }
}
