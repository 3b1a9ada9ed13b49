//! AddressInfo — names for IP and Ethernet addresses
//!
//! Synopsis: `AddressInfo(NAME ADDRESS [ADDRESS...], ...)`
//!
//! Ports: none.
//!
//! Other elements may use a name AddressInfo defines wherever they expect an address, and the
//! argument's type picks the meaning:
//! - an IPv4 address argument: `NAME`, `NAME:ip` (`:ip4`) — the address; `NAME:bcast` — the
//!   prefix's broadcast address; `NAME:gw` — the prefix's first host;
//! - an IPv4 prefix argument: `NAME` — the address as a /32 when NAME has one, else the
//!   prefix; `NAME:ipnet` (`:net`, `:ip4net`) — the prefix; `NAME/LEN`;
//! - an Ethernet address argument: `NAME`, `NAME:eth` (`:ether`, `:ethernet`);
//! - IPv6 arguments: `NAME`, `NAME:ip6`; `NAME:ip6net`.
//!
//! AddressInfo is configured before every other element, wherever it is declared, and its
//! names work in the address arguments of every element in the compound that holds the
//! AddressInfo and the compounds inside it, as Click scopes them (a name defined in a
//! compound hides an outer one).
//!
//! Arguments:
//! - `NAME ADDRESS...` (any number of arguments): a NAME followed by one or more addresses:
//!   IPv4 addresses, IPv4 prefixes (`198.18.1.0/24`; `198.18.1.1/24` is both an address and a
//!   prefix), Ethernet addresses, IPv6 addresses and IPv6 prefixes. A word that is one kind of
//!   address defines that kind for NAME; a word of several kinds defines only the kinds not
//!   yet defined. Empty arguments are ignored.
//!
//! Handlers: `table` (r) — one line per name: the name, then its IPv4 address, IPv4
//! prefix, Ethernet address, IPv6 address and IPv6 prefix, those it has.
//!
//! Example:
//! ```text
//! AddressInfo(r0 198.18.1.1 198.18.1.0/24 02:00:00:00:01:01);
//! ARPResponder(r0) -> ...;                // answers for 198.18.1.1 with 02:00:00:00:01:01
//! rt :: LinearIPLookup(r0 0, r0:ipnet 1); // 198.18.1.1/32 and 198.18.1.0/24
//! ```

use std::fmt::Write;

use sluice_core::{ConfigCx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::{split_words, Args};

pub use sluice_lang::names::{define, lookup, lookup_eth, lookup_ip, lookup_prefix, AddressEntry};

/// The AddressInfo element.
#[derive(Default)]
pub struct AddressInfo {
    names: Vec<(String, AddressEntry)>,
}

impl AddressInfo {
    /// The `table` text: one line per name with its addresses.
    fn table(&self) -> String {
        let mut s = String::new();
        for (n, e) in &self.names {
            s.push_str(n);
            if let Some(a) = e.ip {
                let _ = write!(s, " {}", a);
            }
            if let Some((a, l)) = e.net {
                let _ = write!(s, " {}/{}", a, l);
            }
            if let Some(a) = e.eth {
                let _ = write!(s, " {}", a);
            }
            if let Some(a) = e.ip6 {
                let _ = write!(s, " {}", a);
            }
            if let Some(p) = e.ip6net {
                let _ = write!(s, " {}", p);
            }
            s.push('\n');
        }
        s
    }
}

impl Element for AddressInfo {
    fn configure_phase(&self) -> i32 {
        sluice_core::element::CONFIGURE_PHASE_INFO
    }

    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let mut ok = true;
        for a in args.take_raw() {
            let w = split_words(&a);
            if w.is_empty() {
                continue;
            }
            if w.len() < 2 {
                args.error("expected 'NAME [ADDRS]'");
                ok = false;
                continue;
            }
            let mut e = AddressEntry::default();
            for word in &w[1..] {
                if !e.add_word(word) {
                    args.error(format!("'{}' is not a recognizable address", word));
                    ok = false;
                }
            }
            define(&w[0], e);
            self.names.push((w[0].clone(), e));
        }
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("table", AddressInfo::table)
            .into()
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
