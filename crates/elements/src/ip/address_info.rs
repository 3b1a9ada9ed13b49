//! AddressInfo — names for IP and Ethernet addresses
//!
//! Synopsis: `AddressInfo(NAME ADDRESS [ADDRESS...], ...)`
//!
//! Ports: none. Each argument gives a NAME followed by one or more addresses: an IPv4
//! address, an IPv4 address with prefix (`18.26.4.1/24`), an IPv4 network prefix, or an
//! Ethernet address. Other elements configured after this one may then use the name wherever
//! they expect an address:
//! - `NAME` or `NAME:ip` — the IPv4 address (in an IP address argument);
//! - `NAME` or `NAME:eth` — the Ethernet address (in an Ethernet address argument);
//! - `NAME` or `NAME:net` — the network prefix (in a prefix argument, e.g. a route);
//! - `NAME:bcast` — the subnet broadcast address; `NAME:gw` is not supported.
//!
//! AddressInfo is configured before every other element, wherever it is declared, and its
//! names work in the address arguments of every element.
//!
//! Handlers: `table` (r) — one line per name: `NAME IP/LEN ETH`.
//!
//! Example:
//! ```text
//! AddressInfo(eth0 198.18.0.1/24 00:00:c0:ae:67:ef, eth1 198.19.0.1/24 00:00:c0:4f:71:ef);
//! ARPResponder(eth0) -> ...; ... -> ARPQuerier(eth0) -> ...
//! ```

use std::net::Ipv4Addr;

use sluice_core::{ConfigCx, Element, ElementClass, Handler};
use sluice_lang::args::{split_words, Args};
use sluice_wire::{EtherAddr, Ipv4Prefix};

pub use sluice_lang::names::{define, lookup, lookup_eth, lookup_ip, lookup_prefix, AddressEntry};

/// The AddressInfo element.
#[derive(Default)]
pub struct AddressInfo {
    names: Vec<(String, AddressEntry)>,
}

fn parse_entry(words: &[String]) -> Result<AddressEntry, String> {
    let mut e = AddressEntry::default();
    for w in words {
        if let Ok(a) = w.parse::<Ipv4Addr>() {
            e.ip = Some(a);
        } else if let Ok(a) = w.parse::<EtherAddr>() {
            e.eth = Some(a);
        } else if let Some((a, l)) = w.split_once('/') {
            let a: Ipv4Addr = a.parse().map_err(|_| format!("bad address '{}'", w))?;
            let len = match l.parse::<u8>() {
                Ok(n) if n <= 32 => n,
                _ => {
                    let m: Ipv4Addr = l.parse().map_err(|_| format!("bad prefix '{}'", w))?;
                    Ipv4Prefix::mask_to_len(u32::from(m))
                        .ok_or_else(|| format!("bad netmask '{}'", w))?
                }
            };
            e.ip = Some(a);
            e.prefix_len = Some(len);
        } else {
            return Err(format!("bad address '{}'", w));
        }
    }
    Ok(e)
}

impl Element for AddressInfo {
    fn configure_phase(&self) -> i32 {
        sluice_core::element::CONFIGURE_PHASE_INFO
    }

    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let mut ok = true;
        for a in args.rest() {
            let w = split_words(&a);
            if w.len() < 2 {
                args.error(format!("expected 'NAME ADDRESS...', got '{}'", a));
                ok = false;
                continue;
            }
            match parse_entry(&w[1..]) {
                Ok(e) => {
                    define(&w[0], e);
                    self.names.push((w[0].clone(), e));
                }
                Err(m) => {
                    args.error(format!("{}: {}", w[0], m));
                    ok = false;
                }
            }
        }
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("table")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        if name != "table" {
            return None;
        }
        let mut s = String::new();
        for (n, e) in &self.names {
            s.push_str(n);
            if let Some(ip) = e.ip {
                s.push_str(&format!(" {}", ip));
                if let Some(l) = e.prefix_len {
                    s.push_str(&format!("/{}", l));
                }
            }
            if let Some(eth) = e.eth {
                s.push_str(&format!(" {}", eth));
            }
            s.push('\n');
        }
        Some(s)
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "AddressInfo",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("address_info.rs"),
    make: || Box::new(AddressInfo::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve() {
        let e = parse_entry(&["198.18.4.1/24".into(), "00:01:02:03:04:05".into()]).unwrap();
        define("t_eth0", e);
        assert_eq!(lookup_ip("t_eth0"), Some(Ipv4Addr::new(198, 18, 4, 1)));
        assert_eq!(lookup_ip("t_eth0:ip"), Some(Ipv4Addr::new(198, 18, 4, 1)));
        assert_eq!(
            lookup_ip("t_eth0:bcast"),
            Some(Ipv4Addr::new(198, 18, 4, 255))
        );
        assert_eq!(
            lookup_prefix("t_eth0:net"),
            Some(Ipv4Prefix::new(Ipv4Addr::new(198, 18, 4, 0), 24))
        );
        assert_eq!(lookup_eth("t_eth0:eth").unwrap().0, [0, 1, 2, 3, 4, 5]);
        assert_eq!(lookup_ip("nope"), None);
        assert!(parse_entry(&["x".into()]).is_err());
    }
}
