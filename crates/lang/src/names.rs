//! Address names defined by `AddressInfo`, usable wherever an address argument is expected.
//!
//! The table belongs to the configuration being built on this thread: the router clears it
//! before configuring, AddressInfo (configured first) fills it, and the address `FromArg`
//! impls consult it when an argument is not a literal address: `NAME` or `NAME:ip` for an IPv4
//! address, `NAME:bcast` for the subnet broadcast address, `NAME` or `NAME:eth` for an
//! Ethernet address, `NAME` or `NAME:net` for a prefix.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use sluice_wire::{EtherAddr, Ipv4Prefix};

/// One named address set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddressEntry {
    /// IPv4 address, if given.
    pub ip: Option<Ipv4Addr>,
    /// Prefix length given with the address (`/24`), if any.
    pub prefix_len: Option<u8>,
    /// Ethernet address, if given.
    pub eth: Option<EtherAddr>,
}

thread_local! {
    static TABLE: RefCell<BTreeMap<String, AddressEntry>> = const { RefCell::new(BTreeMap::new()) };
    static PORTS: RefCell<BTreeMap<(String, Option<u8>), u16>> = const { RefCell::new(BTreeMap::new()) };
}

/// Forgets every name (a new configuration starts).
pub fn clear() {
    TABLE.with(|t| t.borrow_mut().clear());
    PORTS.with(|t| t.borrow_mut().clear());
}

/// Defines the TCP/UDP port name `name` (PortInfo) for IP protocol `proto`, or for both TCP
/// and UDP when `None`.
pub fn define_port(name: &str, port: u16, proto: Option<u8>) {
    PORTS.with(|t| t.borrow_mut().insert((name.to_string(), proto), port));
}

/// The port named `name` for IP protocol `proto` (a definition for that protocol first, then
/// one for TCP and UDP alike); with `proto` `None`, any definition.
pub fn lookup_port(name: &str, proto: Option<u8>) -> Option<u16> {
    PORTS.with(|t| {
        let t = t.borrow();
        let key = |p| (name.to_string(), p);
        match proto {
            Some(_) => t.get(&key(proto)).or_else(|| t.get(&key(None))).copied(),
            None => t
                .range(key(None)..)
                .take_while(|((n, _), _)| n == name)
                .map(|(_, &v)| v)
                .next(),
        }
    })
}

/// Defines `name`, replacing an earlier definition.
pub fn define(name: &str, e: AddressEntry) {
    TABLE.with(|t| t.borrow_mut().insert(name.to_string(), e));
}

/// The entry named `name`.
pub fn lookup(name: &str) -> Option<AddressEntry> {
    TABLE.with(|t| t.borrow().get(name).copied())
}

/// Every defined name, in order.
pub fn all() -> Vec<(String, AddressEntry)> {
    TABLE.with(|t| t.borrow().iter().map(|(k, v)| (k.clone(), *v)).collect())
}

fn split(name: &str) -> (&str, &str) {
    match name.rsplit_once(':') {
        Some((n, s)) if matches!(s, "ip" | "eth" | "net" | "bcast") => (n, s),
        _ => (name, ""),
    }
}

/// Resolves `NAME` / `NAME:ip` / `NAME:bcast` to an IPv4 address.
pub fn lookup_ip(name: &str) -> Option<Ipv4Addr> {
    let (n, s) = split(name);
    let e = lookup(n)?;
    let ip = e.ip?;
    match s {
        "" | "ip" => Some(ip),
        "bcast" => {
            let m = Ipv4Prefix::mask_of(e.prefix_len?);
            Some(Ipv4Addr::from(u32::from(ip) | !m))
        }
        _ => None,
    }
}

/// Resolves `NAME` / `NAME:eth` to an Ethernet address.
pub fn lookup_eth(name: &str) -> Option<EtherAddr> {
    let (n, s) = split(name);
    match s {
        "" | "eth" => lookup(n)?.eth,
        _ => None,
    }
}

/// Resolves `NAME` / `NAME:net` to a network prefix (`NAME:ip` to a /32).
pub fn lookup_prefix(name: &str) -> Option<Ipv4Prefix> {
    let (n, s) = split(name);
    let e = lookup(n)?;
    let ip = e.ip?;
    match s {
        "" | "net" => Some(Ipv4Prefix::new(ip, e.prefix_len.unwrap_or(32))),
        "ip" => Some(Ipv4Prefix::new(ip, 32)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::FromArg;

    #[test]
    fn names_resolve_in_address_arguments() {
        clear();
        define(
            "eth0",
            AddressEntry {
                ip: Some(Ipv4Addr::new(198, 18, 0, 1)),
                prefix_len: Some(24),
                eth: Some("00:01:02:03:04:05".parse().unwrap()),
            },
        );
        assert_eq!(
            Ipv4Addr::from_arg("eth0").unwrap(),
            Ipv4Addr::new(198, 18, 0, 1)
        );
        assert_eq!(
            Ipv4Addr::from_arg("eth0:bcast").unwrap(),
            Ipv4Addr::new(198, 18, 0, 255)
        );
        assert_eq!(
            EtherAddr::from_arg("eth0:eth").unwrap().0,
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!(
            Ipv4Prefix::from_arg("eth0:net").unwrap().to_string(),
            "198.18.0.0/24"
        );
        assert!(Ipv4Addr::from_arg("eth1").is_err());
        clear();
        assert!(Ipv4Addr::from_arg("eth0").is_err());
    }
}
