//! Sluice's element library. One folder per family, one element per file; each file's leading
//! `//!` comment is the element's documentation (`sluice doc CLASS`).

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod analysis;
pub mod aqm;
pub mod classify;
pub mod cluster;
pub mod device;
pub mod dfq;
pub mod ethernet;
pub mod etherswitch;
pub mod fuzzing;
pub mod icmp;
pub mod io;
pub mod ip;
pub mod ip6;
pub mod ipsec;
pub mod lookup;
pub mod nat;
pub mod qos;
pub mod routing;
pub mod script;
pub mod standard;
pub mod tcpudp;
pub mod threads;

use sluice_core::Library;

/// Every element class Sluice ships. Also lets address arguments name host network
/// interfaces (`eth0`, `eth0:gw`), as Click does at user level.
pub fn library() -> Library {
    sluice_lang::names::set_host_resolver(device::host_names::host_entry);
    let mut lib = Library::new();
    for family in [
        standard::CLASSES,
        io::CLASSES,
        script::CLASSES,
        device::CLASSES,
        classify::CLASSES,
        lookup::CLASSES,
        routing::CLASSES,
        ip::CLASSES,
        ip6::CLASSES,
        analysis::CLASSES,
        ethernet::CLASSES,
        etherswitch::CLASSES,
        icmp::CLASSES,
        tcpudp::CLASSES,
        threads::CLASSES,
        nat::CLASSES,
        ipsec::CLASSES,
        aqm::CLASSES,
        qos::CLASSES,
        dfq::CLASSES,
        cluster::CLASSES,
    ] {
        lib.add(family);
    }
    lib
}
