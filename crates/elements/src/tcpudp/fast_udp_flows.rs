//! FastUDPFlows — a benchmark source of many UDP flows
//!
//! Synopsis: `FastUDPFlows(RATE, LIMIT, LENGTH, SRCETH, SRCIP, DSTETH, DSTIP, FLOWS, FLOWSIZE
//! [, CHECKSUM, ACTIVE, STOP, SEED])`
//!
//! Ports: no inputs, 1 pull output.
//!
//! Sends UDP/IP/Ethernet frames of LENGTH bytes (at least 60; a smaller LENGTH is raised to
//! 60 with a warning) from SRCETH/SRCIP to DSTETH/DSTIP, as FastUDPSource does, in FLOWS
//! flows that differ by their UDP ports, chosen at random (0 to 65534, as Click). The flows
//! take turns, one packet each; once a flow has sent FLOWSIZE packets it is replaced by a new
//! one (new random ports). The ports are a function of the flow's number and how many times
//! it was replaced, so a million flows cost no memory; each packet is a copy of one frame
//! with its ports written and its UDP checksum updated (RFC 1624). Pacing (RATE, LIMIT,
//! ACTIVE) and the empty notifier are as FastUDPSource's. Nothing is dropped.
//!
//! Arguments:
//! - `RATE` (unsigned): packets per second; 0 means as fast as pulled.
//! - `LIMIT` (integer): packets to send in all; negative means no limit.
//! - `LENGTH` (unsigned, at most 262144): frame length in bytes.
//! - `SRCETH`, `DSTETH`: Ethernet addresses; `SRCIP`, `DSTIP`: IPv4 addresses.
//! - `FLOWS` (unsigned, at least 1): flows at a time; `FLOWSIZE` (unsigned, at least 1):
//!   packets per flow before it is replaced.
//! - `CHECKSUM` (bool, default true): fill in the UDP checksum.
//! - `ACTIVE` (bool, default true): whether pulls return packets.
//! - `STOP` (bool, default false): raise a driver stop event when LIMIT is reached (as
//!   InfiniteSource's; not in Click's version of this element).
//! - `SEED` (unsigned, default 1): chooses the ports; the same seed gives the same flows.
//!
//! Handlers: `count` (r): packets sent. `rate` (r): once LIMIT is reached, the average rate
//! between the first and the last packet in packets per second (0 before); (w): sets RATE.
//! `reset` (w): zero the count and restart the flows. `active` (w): set ACTIVE (true also
//! resets). `limit` (w): set LIMIT.
//!
//! Unlike Click's, which keeps one packet per flow and hands out clones of it, every packet
//! is a fresh copy, so downstream elements may modify it.
//!
//! Example: `FastUDPFlows(0, 2000000, 64, 02:00:00:00:00:01, 198.18.0.1, 02:00:00:00:00:02,
//! 198.19.0.2, 100000, 1000000) -> Unqueue -> ...`

use std::net::Ipv4Addr;

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::checksum::fold;
use sluice_wire::EtherAddr;

use super::fast_source::{Frame, Pacing};

/// Offset of the UDP header in the frame.
const UDP_AT: usize = 14 + 20;

/// The FastUDPFlows element.
pub struct FastUDPFlows {
    frame: Frame,
    flows: u64,
    flow_size: u64,
    seed: u64,
    pacing: Pacing,
    /// The frame with ports 0 (and its checksum over them) that each packet copies.
    template: Option<Packet>,
}

/// SplitMix64's output function: a well-mixed 64-bit value from `x`.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl FastUDPFlows {
    /// The source and destination ports of packet `n`.
    fn ports(flows: u64, flow_size: u64, seed: u64, n: u64) -> (u16, u16) {
        let (flow, round) = (n % flows, n / flows / flow_size);
        let r = mix(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ mix(flow ^ (round << 40)));
        ((r % 0xffff) as u16, ((r >> 32) % 0xffff) as u16)
    }
}

impl Element for FastUDPFlows {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.pacing.read_rate_limit(args)?;
        self.frame.length = Frame::read_length(args)?;
        self.frame.src_eth = args.read_mp::<EtherAddr>("SRCETH")?;
        self.frame.src = args.read_mp::<Ipv4Addr>("SRCIP")?;
        self.frame.dst_eth = args.read_mp::<EtherAddr>("DSTETH")?;
        self.frame.dst = args.read_mp::<Ipv4Addr>("DSTIP")?;
        self.flows = args.read_mp("FLOWS")?;
        self.flow_size = args.read_mp("FLOWSIZE")?;
        if self.flows == 0 || self.flow_size == 0 {
            args.error("FLOWS and FLOWSIZE must be at least 1");
            return Err(());
        }
        self.frame.checksum = args.read_p("CHECKSUM")?.unwrap_or(self.frame.checksum);
        self.pacing.read_active(args, cx)?;
        args.read_into("SEED", &mut self.seed)
    }

    fn initialize(&mut self, _cx: &mut InitCx) -> Result<(), String> {
        self.template = Some(self.frame.build(0, 0));
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let Some(template) = self.template.as_ref() else {
            return Batch::new();
        };
        let (flows, size, seed, sum) = (self.flows, self.flow_size, self.seed, self.frame.checksum);
        self.pacing.pull(max, cx, |n| {
            let (sport, dport) = Self::ports(flows, size, seed, n);
            let mut p = template.deep_copy();
            let udp = &mut p.data_mut()[UDP_AT..];
            udp[0..2].copy_from_slice(&sport.to_be_bytes());
            udp[2..4].copy_from_slice(&dport.to_be_bytes());
            if sum {
                let old = u16::from_be_bytes([udp[6], udp[7]]);
                let c = !fold(u32::from(!old) + u32::from(sport) + u32::from(dport));
                let c = if c == 0 { 0xffff } else { c };
                udp[6..8].copy_from_slice(&c.to_be_bytes());
            }
            p
        })
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .nest(|e| &mut e.pacing, Pacing::table())
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "FastUDPFlows",
    ports: "0/1",
    processing: "l/l",
    flow: "",
    source: include_str!("fast_udp_flows.rs"),
    make: || {
        Box::new(FastUDPFlows {
            frame: Frame::default(),
            flows: 1,
            flow_size: 1,
            seed: 1,
            pacing: Pacing::default(),
            template: None,
        })
    },
};
