//! Wire formats: address types, zero-copy header views, checksums and the pcap file format.
//!
//! Every element that reads packet headers goes through the views in this crate. A view
//! such as [`Ipv4Packet`] wraps any `T: AsRef<[u8]>` (and offers setters when
//! `T: AsMut<[u8]>`); its `new_checked` validates lengths once, after which no accessor can
//! panic. `new_unchecked` skips validation for buffers the caller has already checked.
//! Integers are returned in host byte order.
//!
//! ```
//! use sluice_wire::{EthernetFrame, Ipv4Packet, ethernet};
//! # let frame = [0u8; 14];
//! if let Ok(eth) = EthernetFrame::new_checked(&frame[..]) {
//!     if eth.ethertype() == ethernet::ETHERTYPE_IPV4 {
//!         if let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) {
//!             let _ttl = ip.ttl();
//!         }
//!     }
//! }
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod addr;
pub mod arp;
pub mod checksum;
pub mod dfq;
mod error;
pub mod ethernet;
#[doc(hidden)]
pub mod fuzzing;
pub mod icmp;
pub mod icmpv6;
pub mod ipv4;
pub mod ipv6;
pub mod pcap;
pub mod stp;
pub mod tcp;
pub mod udp;

pub use addr::{EtherAddr, Ipv4Prefix, Ipv6Prefix};
pub use arp::{build_arp, ArpPacket};
pub use error::{Result, WireError};
pub use ethernet::EthernetFrame;
pub use icmp::IcmpPacket;
pub use icmpv6::{Icmpv6Packet, NdpOption, NdpOptions};
pub use ipv4::{Ipv4Option, Ipv4OptionKind, Ipv4Options, Ipv4Packet, Ipv4Repr};
pub use ipv6::Ipv6Packet;
pub use pcap::{PcapError, PcapReader, PcapRecord, PcapRecordHeader, PcapWriter};
pub use tcp::{TcpOption, TcpOptions, TcpPacket};
pub use udp::UdpPacket;

/// Largest packet Sluice builds or reads, in bytes (256 KiB, libpcap's largest snapshot
/// length): configuration arguments that size packets (`LENGTH`, `HEAD`, `TAIL`, …) are
/// refused above it, and capture records longer than it are refused.
pub const MAX_PACKET_LEN: usize = 256 * 1024;
