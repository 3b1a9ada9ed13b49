//! Address names defined by `AddressInfo`, usable wherever an address argument is expected.
//!
//! The table belongs to the configuration being built on this thread: the router clears it
//! before configuring, AddressInfo (configured first) fills it, and the address `FromArg`
//! impls consult it when an argument is not a literal address. A name may hold an IPv4
//! address, an IPv4 prefix, an Ethernet address, an IPv6 address and an IPv6 prefix at once;
//! the argument's type picks one, and Click's suffixes pick explicitly: `NAME:ip` (`:ip4`),
//! `NAME:ipnet` (`:net`, `:ip4net`), `NAME:bcast`, `NAME:gw`, `NAME:eth` (`:ether`,
//! `:ethernet`), `NAME:ip6`, `NAME:ip6net`. A name no AddressInfo defines may name a host
//! network interface ([`set_host_resolver`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use sluice_wire::{EtherAddr, Ipv4Prefix, Ipv6Prefix};

/// One named address set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddressEntry {
    /// IPv4 address, if given.
    pub ip: Option<Ipv4Addr>,
    /// IPv4 prefix as written: the address (host bits kept, as Click keeps them) and length.
    pub net: Option<(Ipv4Addr, u8)>,
    /// Ethernet address, if given.
    pub eth: Option<EtherAddr>,
    /// IPv6 address, if given.
    pub ip6: Option<Ipv6Addr>,
    /// IPv6 prefix, if given.
    pub ip6net: Option<Ipv6Prefix>,
    /// Gateway (`NAME:gw`), known for host interfaces; an AddressInfo name's is its
    /// prefix's first host.
    pub gw: Option<Ipv4Addr>,
    /// The entry describes a host network interface (whose gateway is never guessed).
    pub device: bool,
}

impl AddressEntry {
    /// Adds the meanings of one address word as Click's AddressInfo does: a word that is one
    /// kind of address defines (or redefines) that kind; a word that could be several kinds
    /// (`10.0.0.1/24` is an address and a prefix) fills only the kinds not yet defined.
    /// Returns false when the word is no address at all.
    pub fn add_word(&mut self, w: &str) -> bool {
        let eth = w.parse::<EtherAddr>().ok();
        let (mut ip, mut net) = (None, None);
        if let Ok(a) = w.parse::<Ipv4Addr>() {
            ip = Some(a);
        } else if let Some((a, len)) = parse_v4_with_len(w) {
            net = Some((a, len));
            if u32::from(a) & !Ipv4Prefix::mask_of(len) != 0 {
                ip = Some(a);
            }
        }
        let (mut ip6, mut ip6net) = (None, None);
        if let Ok(a) = w.parse::<Ipv6Addr>() {
            ip6 = Some(a);
        } else if let Some((a, l)) = w.split_once('/') {
            if let (Ok(a), Ok(l)) = (a.parse::<Ipv6Addr>(), l.parse::<u8>()) {
                if l <= 128 {
                    let p = Ipv6Prefix::new(a, l);
                    ip6net = Some(p);
                    if p.addr != a {
                        ip6 = Some(a);
                    }
                }
            }
        }
        let kinds = [
            eth.is_some(),
            ip.is_some(),
            net.is_some(),
            ip6.is_some(),
            ip6net.is_some(),
        ];
        let n = kinds.iter().filter(|k| **k).count();
        let one = n == 1;
        fn set<T>(slot: &mut Option<T>, v: Option<T>, one: bool) {
            if v.is_some() && (one || slot.is_none()) {
                *slot = v;
            }
        }
        set(&mut self.eth, eth, one);
        set(&mut self.ip, ip, one);
        set(&mut self.net, net, one);
        set(&mut self.ip6, ip6, one);
        set(&mut self.ip6net, ip6net, one);
        n > 0
    }
}

/// `A.B.C.D/LEN` or `A.B.C.D/MASK`, the address kept as written.
fn parse_v4_with_len(w: &str) -> Option<(Ipv4Addr, u8)> {
    let (a, l) = w.split_once('/')?;
    let a: Ipv4Addr = a.parse().ok()?;
    let len = match l.parse::<u8>() {
        Ok(n) if n <= 32 && !l.contains('.') => n,
        _ => Ipv4Prefix::mask_to_len(u32::from(l.parse::<Ipv4Addr>().ok()?))?,
    };
    Some((a, len))
}

thread_local! {
    /// The compound path (`a/b/`, or empty) of the element being configured: names it defines
    /// belong to that compound, and names it uses are looked up there first, then in each
    /// enclosing compound, as Click scopes AddressInfo and PortInfo names.
    static SCOPE: RefCell<String> = const { RefCell::new(String::new()) };
    static TABLE: RefCell<BTreeMap<String, AddressEntry>> = const { RefCell::new(BTreeMap::new()) };
    static PORTS: RefCell<BTreeMap<(String, Option<u8>), u16>> = const { RefCell::new(BTreeMap::new()) };
}

/// Forgets every name (a new configuration starts).
pub fn clear() {
    TABLE.with(|t| t.borrow_mut().clear());
    PORTS.with(|t| t.borrow_mut().clear());
    set_scope("");
}

/// Sets the scope to the compound that holds the element named `element` (`a/b/e` is in
/// `a/b/`; a top-level element's scope is empty).
pub fn set_scope(element: &str) {
    let prefix = element.rfind('/').map_or("", |i| &element[..=i]);
    SCOPE.with(|s| {
        let mut s = s.borrow_mut();
        s.clear();
        s.push_str(prefix);
    });
}

/// `name` qualified by the current scope.
fn scoped(name: &str) -> String {
    SCOPE.with(|s| format!("{}{}", s.borrow(), name))
}

/// The first answer of `f` for `name` in the current scope, then each enclosing one.
fn find_scoped<T>(name: &str, f: impl Fn(&str) -> Option<T>) -> Option<T> {
    let scope = SCOPE.with(|s| s.borrow().clone());
    let mut prefix = scope.as_str();
    loop {
        if let Some(v) = f(&format!("{prefix}{name}")) {
            return Some(v);
        }
        if prefix.is_empty() {
            return None;
        }
        let outer = &prefix[..prefix.len() - 1];
        prefix = outer.rfind('/').map_or("", |i| &outer[..=i]);
    }
}

/// Defines the TCP/UDP port name `name` (PortInfo) for IP protocol `proto`, or for both TCP
/// and UDP when `None`.
pub fn define_port(name: &str, port: u16, proto: Option<u8>) {
    PORTS.with(|t| t.borrow_mut().insert((scoped(name), proto), port));
}

/// The port named `name` for IP protocol `proto` (a definition for that protocol first, then
/// one for TCP and UDP alike); with `proto` `None`, any definition.
pub fn lookup_port(name: &str, proto: Option<u8>) -> Option<u16> {
    find_scoped(name, |name| lookup_port_exact(name, proto))
}

fn lookup_port_exact(name: &str, proto: Option<u8>) -> Option<u16> {
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
    TABLE.with(|t| t.borrow_mut().insert(scoped(name), e));
}

/// Resolves names that no AddressInfo defines to the host's network interfaces.
pub type HostResolver = fn(&str) -> Option<AddressEntry>;

static HOST: OnceLock<HostResolver> = OnceLock::new();

/// Lets a name that AddressInfo does not define mean a host network interface, as in Click at
/// user level (`eth0`: its IPv4 address, prefix or Ethernet address; `eth0:gw`: its default
/// gateway). Set once; later calls change nothing.
pub fn set_host_resolver(f: HostResolver) {
    let _ = HOST.set(f);
}

/// The entry named `name`: an AddressInfo name, else a host interface.
pub fn lookup(name: &str) -> Option<AddressEntry> {
    find_scoped(name, |name| TABLE.with(|t| t.borrow().get(name).copied()))
        .or_else(|| HOST.get().and_then(|f| f(name)))
}

/// Every defined name, in order.
pub fn all() -> Vec<(String, AddressEntry)> {
    TABLE.with(|t| t.borrow().iter().map(|(k, v)| (k.clone(), *v)).collect())
}

/// Splits `NAME:suffix` into the name and the lowercased suffix (empty when there is none).
fn split(name: &str) -> (&str, String) {
    match name.rsplit_once(':') {
        Some((n, s)) => (n, s.to_ascii_lowercase()),
        None => (name, String::new()),
    }
}

/// Resolves `NAME`, `NAME:ip` (`:ip4`) to the IPv4 address, `NAME:bcast` to the broadcast
/// address of NAME's prefix, `NAME:gw` to the first host of NAME's prefix.
pub fn lookup_ip(name: &str) -> Option<Ipv4Addr> {
    let (n, s) = split(name);
    lookup_kind(n, |e| match s.as_str() {
        "" | "ip" | "ip4" => e.ip,
        "bcast" => {
            let (a, l) = e.net?;
            Some(Ipv4Addr::from(u32::from(a) | !Ipv4Prefix::mask_of(l)))
        }
        "gw" if e.device => e.gw,
        "gw" => e.gw.or_else(|| {
            let (a, l) = e.net?;
            Some(Ipv4Addr::from((u32::from(a) & Ipv4Prefix::mask_of(l)) | 1))
        }),
        _ => None,
    })
}

/// One kind of address of `name`: from its AddressInfo entry, else (as Click's lookups fall
/// back to the host's devices kind by kind) from the host interface of that name.
fn lookup_kind<T>(name: &str, kind: impl Fn(&AddressEntry) -> Option<T>) -> Option<T> {
    find_scoped(name, |n| TABLE.with(|t| t.borrow().get(n).copied()))
        .and_then(|e| kind(&e))
        .or_else(|| HOST.get().and_then(|h| h(name)).and_then(|e| kind(&e)))
}

/// Resolves `NAME`, `NAME:ipnet` (`:net`, `:ip4net`) to the IPv4 prefix as written: the
/// address with its host bits, and the length.
pub fn lookup_net(name: &str) -> Option<(Ipv4Addr, u8)> {
    let (n, s) = split(name);
    match s.as_str() {
        "" | "net" | "ipnet" | "ip4net" => lookup_kind(n, |e| e.net),
        _ => None,
    }
}

/// Resolves `NAME`, `NAME:ipnet` (`:net`, `:ip4net`) to the IPv4 prefix.
pub fn lookup_prefix(name: &str) -> Option<Ipv4Prefix> {
    lookup_net(name).map(|(a, l)| Ipv4Prefix::new(a, l))
}

/// Resolves `NAME`, `NAME:eth` (`:ether`, `:ethernet`) to the Ethernet address.
pub fn lookup_eth(name: &str) -> Option<EtherAddr> {
    let (n, s) = split(name);
    match s.as_str() {
        "" | "eth" | "ether" | "ethernet" => lookup_kind(n, |e| e.eth),
        _ => None,
    }
}

/// Resolves `NAME`, `NAME:ip6` to the IPv6 address.
pub fn lookup_ip6(name: &str) -> Option<Ipv6Addr> {
    let (n, s) = split(name);
    match s.as_str() {
        "" | "ip6" => lookup_kind(n, |e| e.ip6),
        _ => None,
    }
}

/// Resolves `NAME`, `NAME:ip6net` to the IPv6 prefix.
pub fn lookup_ip6_prefix(name: &str) -> Option<Ipv6Prefix> {
    let (n, s) = split(name);
    match s.as_str() {
        "" | "ip6net" => lookup_kind(n, |e| e.ip6net),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::FromArg;

    fn entry(words: &[&str]) -> AddressEntry {
        let mut e = AddressEntry::default();
        for w in words {
            assert!(e.add_word(w), "{w}");
        }
        e
    }

    #[test]
    fn address_and_prefix_keep_their_meanings() {
        clear();
        define(
            "r0",
            entry(&["198.18.1.1", "198.18.1.0/24", "02:00:00:00:01:01"]),
        );
        define("foo", entry(&["1.2.3.4/20"]));
        define("v6", entry(&["2001:db8::1", "2001:db8::/32"]));
        let ip = |s| Ipv4Addr::from_arg(s).ok();
        let pfx = |s| Ipv4Prefix::from_arg(s).ok().map(|p| p.to_string());
        assert_eq!(ip("r0"), Some(Ipv4Addr::new(198, 18, 1, 1)));
        assert_eq!(ip("r0:ip"), Some(Ipv4Addr::new(198, 18, 1, 1)));
        assert_eq!(ip("r0:IP4"), Some(Ipv4Addr::new(198, 18, 1, 1)));
        assert_eq!(ip("r0:bcast"), Some(Ipv4Addr::new(198, 18, 1, 255)));
        assert_eq!(ip("r0:gw"), Some(Ipv4Addr::new(198, 18, 1, 1)));
        assert_eq!(ip("r0:ipnet"), None);
        assert_eq!(ip("r0:eth"), None);
        // A prefix argument prefers the address, as Click's does; `:ipnet` asks for the prefix.
        assert_eq!(pfx("r0").as_deref(), Some("198.18.1.1/32"));
        assert_eq!(pfx("r0:ipnet").as_deref(), Some("198.18.1.0/24"));
        assert_eq!(pfx("r0:net").as_deref(), Some("198.18.1.0/24"));
        assert_eq!(pfx("r0/16").as_deref(), Some("198.18.0.0/16"));
        assert_eq!(pfx("foo").as_deref(), Some("1.2.3.4/32"));
        assert_eq!(pfx("foo:ipnet").as_deref(), Some("1.2.0.0/20"));
        assert_eq!(ip("foo:bcast"), Some(Ipv4Addr::new(1, 2, 15, 255)));
        let eth = |s| EtherAddr::from_arg(s).ok().map(|e| e.0);
        assert_eq!(eth("r0"), Some([2, 0, 0, 0, 1, 1]));
        assert_eq!(eth("r0:ether"), Some([2, 0, 0, 0, 1, 1]));
        assert_eq!(eth("r0:ip"), None);
        assert_eq!(
            Ipv6Addr::from_arg("v6:ip6").ok(),
            "2001:db8::1".parse().ok()
        );
        assert_eq!(
            Ipv6Prefix::from_arg("v6:ip6net")
                .ok()
                .map(|p| p.to_string()),
            Some("2001:db8::/32".to_string())
        );
        assert!(Ipv4Addr::from_arg("v6").is_err());
        assert!(Ipv4Addr::from_arg("nope").is_err());
        clear();
        assert!(Ipv4Addr::from_arg("r0").is_err());
    }

    #[test]
    fn later_single_meaning_words_redefine() {
        let e = entry(&["10.0.0.1/24", "10.0.0.7"]);
        assert_eq!(e.ip, Some(Ipv4Addr::new(10, 0, 0, 7)));
        assert_eq!(e.net, Some((Ipv4Addr::new(10, 0, 0, 1), 24)));
        let e = entry(&["10.0.0.7", "10.0.0.1/24"]);
        assert_eq!(e.ip, Some(Ipv4Addr::new(10, 0, 0, 7)));
        assert!(!AddressEntry::default().add_word("x"));
    }

    /// Names defined inside a compound belong to it: its elements see them first, the rest
    /// of the configuration does not (Click's test/tcpudp/UDPIPEncap-01).
    #[test]
    fn names_are_scoped_by_compound() {
        clear();
        set_scope("PortInfo@9");
        define_port("foo", 79, Some(17));
        define("h", entry(&["10.0.0.1"]));
        set_scope("c/PortInfo@2");
        define_port("foo", 80, Some(17));
        define_port("ssh", 80, Some(17));
        set_scope("c/d/UDPIPEncap@1");
        assert_eq!(lookup_port("foo", Some(17)), Some(80));
        assert_eq!(lookup_ip("h"), Some(Ipv4Addr::new(10, 0, 0, 1)));
        set_scope("UDPIPEncap@3");
        assert_eq!(lookup_port("foo", Some(17)), Some(79));
        assert_eq!(lookup_port("ssh", Some(17)), None);
        set_scope("");
    }
}
