//! The push path and handlers shared by the IPv4 route lookup elements.

use std::net::Ipv4Addr;

use sluice_core::toolkit::{push_by_port, NO_PORT};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, Handlers, Table, BATCH_MAX};
use sluice_lang::args::Args;
use sluice_wire::Ipv4Packet;

use super::table::{parse_prefix, Lpm, Route, RouteTable, NH_NONE};

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
    fn parse_route(&self, s: &str) -> Result<Route, String> {
        let r = Route::parse(s)?;
        if r.port as usize >= self.noutputs {
            return Err(format!("route '{}': output port out of range", s.trim()));
        }
        Ok(r)
    }

    /// The `lookup ADDR` handler: `OUT GW`, `OUT` without gateway, `-1` for no route.
    fn lookup(&self, param: &str) -> Result<String, String> {
        let a: Ipv4Addr = param
            .trim()
            .parse()
            .map_err(|_| format!("lookup: expected an IP address, got '{}'", param.trim()))?;
        Ok(match self.table.lookup(u32::from(a)) {
            Some((0, port)) => port.to_string(),
            Some((gw, port)) => format!("{} {}", port, Ipv4Addr::from(gw)),
            None => "-1".to_string(),
        })
    }

    /// The `add` handler (`set` with `replace`): adds the routes of `value`.
    fn add_routes(&mut self, value: &str, replace: bool) -> Result<(), String> {
        let routes: Vec<Route> = route_items(value)
            .map(|s| self.parse_route(s))
            .collect::<Result<_, _>>()?;
        for r in routes {
            self.table.add(r, replace)?;
        }
        Ok(())
    }

    /// The `remove` handler: removes the routes of the prefixes of `value`.
    fn remove_routes(&mut self, value: &str) -> Result<(), String> {
        for item in route_items(value) {
            let w = item.split_whitespace().next().unwrap_or("");
            let (addr, len) = parse_prefix(w)?;
            if self.table.remove(addr, len).is_none() {
                return Err(format!("remove: no route for '{}'", w));
            }
        }
        Ok(())
    }
}

impl<T: Lpm + 'static> Element for LookupElem<T> {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.noutputs = cx.noutputs();
        let mut ok = true;
        self.configured = args.rest();
        for a in self.configured.clone() {
            match self.parse_route(&a).and_then(|r| self.table.add(r, false)) {
                Ok(()) => {}
                Err(e) => {
                    args.error(e);
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

    /// Hot swap: a table that accepts updates and whose configured routes are unchanged
    /// keeps the running table, routes added, set or removed since included.
    fn take_state(&mut self, old: &mut dyn Element, _cx: &mut Cx) {
        if let Some(old) = old.as_any_mut().downcast_mut::<LookupElem<T>>() {
            if self.dynamic && old.configured == self.configured {
                std::mem::swap(&mut self.table, &mut old.table);
            }
        }
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        let mut addrs = [0u32; BATCH_MAX];
        let mut nhs = [NH_NONE; BATCH_MAX];
        let n = batch.len();
        for (p, a) in batch.iter_mut().zip(addrs.iter_mut()) {
            let mut dst = p.dst_ip_anno();
            if dst.is_unspecified() {
                // No annotation: take the IP destination (network header, else data start).
                let hdr = p.network_header().unwrap_or_else(|| p.data());
                if let Ok(ip) = Ipv4Packet::new_checked(hdr) {
                    dst = ip.dst();
                    p.set_dst_ip_anno(dst);
                }
            }
            *a = u32::from(dst);
        }
        self.table.lpm.lookup_batch(&addrs[..n], &mut nhs[..n]);
        let mut ports = [NO_PORT; BATCH_MAX];
        for ((p, &nh), o) in batch.iter_mut().zip(nhs.iter()).zip(ports.iter_mut()) {
            if let Some(&(gw, port)) = self.table.nexthops.get(nh as usize) {
                if gw != 0 {
                    p.set_dst_ip_anno(Ipv4Addr::from(gw));
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
            .read_param("lookup", Self::lookup);
        if self.dynamic {
            t = t
                .write("add", |e, v, _| e.add_routes(v, false))
                .write("set", |e, v, _| e.add_routes(v, true))
                .write("remove", |e, v, _| e.remove_routes(v))
                .action("flush", |e| e.table.flush());
        }
        t.drops(|e| &e.drops)
            .action("reset_counts", |e| e.drops.reset())
            .into()
    }
}
