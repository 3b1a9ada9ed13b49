//! Wire formats: address types, zero-copy header views, checksums and the pcap file format.
//!
//! Every element that reads packet headers goes through the views in this crate: a view's
//! `new_checked` validates lengths once, after which no accessor can panic.

pub mod addr;

pub use addr::{EtherAddr, Ipv4Prefix, Ipv6Prefix};
