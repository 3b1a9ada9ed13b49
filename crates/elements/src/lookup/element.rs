//! The push path and handlers shared by the IPv4 and IPv6 route lookup elements, with the
//! `CACHE` keyword and `cache_*` handlers of those whose structure can have a route cache
//! ([`Cached`](super::route_cache::Cached)).

use sluice_core::toolkit::{push_by_port, NO_PORT};
use sluice_core::{
    drop_reasons, Batch, ConfigCx, Cx, Drops, Element, Footprint, Handlers, Table, BATCH_MAX,
};
use sluice_lang::args::Args;

use super::route_cache::CacheCtl;
use super::table::{Lpm, Route, RouteAddr, RouteTable, NH_NONE};

drop_reasons! {
    /// Why a lookup element drops a packet.
    pub enum Reason {
        /// No route matches the destination.
        NoRoute => "no route",
    }
}

/// A route lookup element over structure `T`.
pub struct LookupElem<T: Lpm> {
    table: RouteTable<T>,
    /// The routes as configured (a hot swap keeps the running table if they are unchanged).
    configured: Vec<String>,
    /// Routes may be added, set and removed at run time.
    dynamic: bool,
    /// The `CACHE` keyword: index bits of the route cache (0: none).
    cache_bits: u8,
    noutputs: usize,
    outs: Vec<Batch>,
    drops: Drops<Reason>,
}

impl<T: Lpm + Default> LookupElem<T> {
    /// An empty element; `dynamic` if it accepts route updates.
    pub fn new(dynamic: bool) -> LookupElem<T> {
        LookupElem {
            table: RouteTable::default(),
            configured: Vec::new(),
            dynamic,
            cache_bits: 0,
            noutputs: 0,
            outs: Vec::new(),
            drops: Drops::default(),
        }
    }
}

/// Splits a handler value into routes (comma- or newline-separated).
fn route_items(v: &str) -> impl Iterator<Item = &str> {
    v.split([',', '\n', ';'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

impl<T: Lpm> LookupElem<T> {
    fn parse_route(&self, s: &str) -> Result<Route<T::Addr>, String> {
        let r = Route::parse(s)?;
        if r.port as usize >= self.noutputs {
            return Err(format!("route '{}': output port out of range", s.trim()));
        }
        Ok(r)
    }

    /// The `lookup ADDR` handler: `OUT GW`, `OUT` without gateway, `-1` for no route.
    fn lookup(&self, param: &str) -> Result<String, String> {
        let a = T::Addr::parse_addr(param.trim()).map_err(|e| format!("lookup: {}", e))?;
        Ok(match self.table.lookup(a) {
            Some((gw, port)) if gw == T::Addr::default() => port.to_string(),
            Some((gw, port)) => format!("{} {}", port, gw.show()),
            None => "-1".to_string(),
        })
    }

    /// Parses one route change: `add ROUTE`, `set ROUTE` or `remove PREFIX`.
    fn parse_change(&self, verb: &str, item: &str) -> Result<Change<T::Addr>, String> {
        match verb {
            "add" | "set" => {
                let replace = verb == "set" || T::Addr::LENIENT_CHANGES;
                Ok(Change::Add(self.parse_route(item)?, replace))
            }
            "remove" => {
                let w = item.split_whitespace().next().unwrap_or("");
                let (addr, len) = T::Addr::parse_prefix(w)?;
                Ok(Change::Remove(addr, len))
            }
            _ => Err(format!(
                "bad command '{}' (expected add, set or remove)",
                verb
            )),
        }
    }

    /// The `add`, `set` and `remove` handlers: the change `verb` for each item of `value`.
    fn change_each(&mut self, verb: &str, value: &str) -> Result<(), String> {
        let changes = route_items(value)
            .map(|item| self.parse_change(verb, item))
            .collect::<Result<_, _>>()?;
        self.apply(changes)
    }

    /// The `ctrl` handler: one `add ROUTE`, `set ROUTE` or `remove PREFIX` per line.
    fn ctrl(&mut self, value: &str) -> Result<(), String> {
        let changes = value
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| {
                let (verb, rest) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
                self.parse_change(verb, rest)
            })
            .collect::<Result<_, _>>()?;
        self.apply(changes)
    }

    /// Applies `changes` in order, all or none: on the first failure the ones made are
    /// undone and the error returned.
    fn apply(&mut self, changes: Vec<Change<T::Addr>>) -> Result<(), String> {
        let mut undo: Vec<Change<T::Addr>> = Vec::new();
        for c in changes {
            let done = match c {
                Change::Add(r, replace) => {
                    let old = self.table.get(r.addr, r.len);
                    self.table.add(r, replace).map(|()| match old {
                        Some(o) => Some(Change::Add(o, true)),
                        None => Some(Change::Remove(r.addr, r.len)),
                    })
                }
                Change::Remove(addr, len) => match self.table.remove(addr, len) {
                    Some(o) => Ok(Some(Change::Add(o, true))),
                    None if T::Addr::LENIENT_CHANGES => Ok(None),
                    None => Err(format!("remove: no route for '{}/{}'", addr.show(), len)),
                },
            };
            match done {
                Ok(u) => undo.extend(u),
                Err(e) => {
                    for u in undo.into_iter().rev() {
                        match u {
                            Change::Add(r, _) => {
                                let _ = self.table.add(r, true);
                            }
                            Change::Remove(addr, len) => {
                                self.table.remove(addr, len);
                            }
                        }
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }
}

/// One route change of a handler.
enum Change<A> {
    /// Add a route; replacing one for the same prefix if the flag is set.
    Add(Route<A>, bool),
    /// Remove the route of a prefix.
    Remove(A, u8),
}

impl<T: Lpm + CacheCtl + 'static> Element for LookupElem<T> {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.noutputs = cx.noutputs();
        let mut ok = true;
        if T::CACHEABLE {
            args.read_into("CACHE", &mut self.cache_bits)?;
            if let Err(e) = self.table.lpm.set_cache_bits(self.cache_bits) {
                args.error(e);
                return Err(());
            }
        }
        self.configured = args.rest();
        for a in self.configured.clone() {
            let replace = T::Addr::LENIENT_CHANGES;
            match self
                .parse_route(&a)
                .and_then(|r| self.table.add(r, replace))
            {
                Ok(()) => {}
                Err(e) => {
                    args.error(e);
                    ok = false;
                }
            }
        }
        self.table.lpm.shrink();
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }

    /// Hot swap: a table that accepts updates and whose configured routes (and route cache
    /// size) are unchanged keeps the running table, routes added, set or removed since
    /// included.
    fn take_state(&mut self, old: &mut dyn Element, _cx: &mut Cx) {
        if let Some(old) = old.as_any_mut().downcast_mut::<LookupElem<T>>() {
            if self.dynamic
                && old.configured == self.configured
                && old.cache_bits == self.cache_bits
            {
                std::mem::swap(&mut self.table, &mut old.table);
            }
        }
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        let mut addrs = [T::Addr::default(); BATCH_MAX];
        let mut nhs = [NH_NONE; BATCH_MAX];
        let n = batch.len();
        for (p, a) in batch.iter_mut().zip(addrs.iter_mut()) {
            *a = T::Addr::packet_dst(p);
        }
        self.table.lpm.lookup_batch(&addrs[..n], &mut nhs[..n]);
        let mut ports = [NO_PORT; BATCH_MAX];
        for ((p, &nh), o) in batch.iter_mut().zip(nhs.iter()).zip(ports.iter_mut()) {
            if let Some(&(gw, port)) = self.table.nexthops.get(nh as usize) {
                if gw != T::Addr::default() {
                    T::Addr::set_packet_dst(p, gw);
                }
                *o = port;
            }
        }
        let unrouted = push_by_port(batch, &ports, self.noutputs, &mut self.outs, cx);
        self.drops.add(Reason::NoRoute, unrouted);
    }

    fn handler_table(&self) -> Handlers {
        let mut t = Table::<Self>::new()
            .read("table", |e| e.table.unparse())
            .read("size", |e| e.table.len())
            .read_param("lookup", Self::lookup)
            .footprint(|e| Footprint {
                bytes: e.table.lpm.lookup_bytes() as u64,
                accesses: e.table.lpm.accesses(),
            });
        if self.dynamic {
            t = t
                .write("add", |e, v, _| e.change_each("add", v))
                .write("set", |e, v, _| e.change_each("set", v))
                .write("remove", |e, v, _| e.change_each("remove", v))
                .write("ctrl", |e, v, _| e.ctrl(v))
                .action("flush", |e| e.table.flush());
        }
        if T::CACHEABLE {
            t = t
                .read("cache_hits", |e| e.table.lpm.cache_stats().hits)
                .read("cache_misses", |e| e.table.lpm.cache_stats().misses)
                .read("cache_invalidations", |e| {
                    e.table.lpm.cache_stats().invalidations
                })
                .read("cache_bits", |e| {
                    let bits = e.table.lpm.cache_stats().bits;
                    bits.iter().map(u8::to_string).collect::<Vec<_>>().join(" ")
                })
                .setting();
        }
        t.drops(|e| &e.drops)
            .action("reset_counts", |e| {
                e.drops.reset();
                e.table.lpm.reset_cache_counts();
            })
            .into()
    }
}
