//! Host network interfaces as address names, as Click resolves them at user level: in an
//! address argument, `eth0` means the interface's IPv4 address (or prefix, or Ethernet
//! address, as the argument expects) and `eth0:gw` its default gateway.

use sluice_lang::names::AddressEntry;
use sluice_wire::EtherAddr;

use super::sys;

/// The addresses of host interface `name`, if there is one.
pub(crate) fn host_entry(name: &str) -> Option<AddressEntry> {
    let sane = !name.is_empty()
        && name.len() < 16
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !name.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if !sane || sys::if_index(name).is_err() {
        return None;
    }
    let mut e = AddressEntry {
        eth: sys::if_ether(name).ok().map(EtherAddr),
        gw: sys::default_gateway(name),
        device: true,
        ..AddressEntry::default()
    };
    if let Ok((ip, len)) = sys::if_ipv4(name) {
        e.ip = Some(ip);
        e.net = Some((ip, len));
    }
    Some(e)
}
