//! The push path and handlers shared by the IPv4 route lookup elements.

use std::net::Ipv4Addr;

use sluice_core::{Batch, ConfigCx, Cx, Element, Handler, BATCH_MAX};
use sluice_lang::args::Args;
use sluice_wire::Ipv4Packet;

use super::table::{parse_prefix, Lpm, Route, RouteTable, NH_NONE};
use crate::ip::common::{push_by_port, NO_PORT};

/// Handlers of the lookup elements that accept route updates.
pub const DYNAMIC_HANDLERS: &[Handler] = &[
    Handler::r("table"),
    Handler::r("lookup").param(),
    Handler::w("add"),
    Handler::w("set"),
    Handler::w("remove"),
    Handler::w("flush"),
    Handler::r("drops"),
    Handler::w("reset_counts"),
];

/// Handlers of the static lookup elements.
pub const STATIC_HANDLERS: &[Handler] = &[
    Handler::r("table"),
    Handler::r("lookup").param(),
    Handler::r("drops"),
    Handler::w("reset_counts"),
];

/// A route lookup element over structure `T`.
pub struct LookupElem<T: Lpm> {
    table: RouteTable<T>,
    /// The routes as configured (a hot swap keeps the running table if they are unchanged).
    configured: Vec<String>,
    handlers: &'static [Handler],
    noutputs: usize,
    outs: Vec<Batch>,
    drops: u64,
}

impl<T: Lpm + Default> LookupElem<T> {
    /// An empty element with `handlers` (dynamic or static).
    pub fn new(handlers: &'static [Handler]) -> LookupElem<T> {
        LookupElem {
            table: RouteTable::default(),
            configured: Vec::new(),
            handlers,
            noutputs: 0,
            outs: Vec::new(),
            drops: 0,
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

    fn dynamic(&self) -> bool {
        self.handlers.len() == DYNAMIC_HANDLERS.len()
    }
}

impl<T: Lpm + 'static> Element for LookupElem<T> {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.noutputs = cx.noutputs();
        self.outs = (0..self.noutputs).map(|_| Batch::new()).collect();
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
            if self.dynamic() && old.configured == self.configured {
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
        self.drops += push_by_port(batch, &ports, &mut self.outs, cx);
    }

    fn handlers(&self) -> &'static [Handler] {
        self.handlers
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "table" => Some(self.table.unparse()),
            "drops" => Some(self.drops.to_string()),
            _ => None,
        }
    }

    fn read_handler_param(&self, name: &str, param: &str) -> Result<String, String> {
        if name != "lookup" {
            return Err(format!("no read handler '{}'", name));
        }
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

    fn write_handler(&mut self, name: &str, value: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "reset_counts" => {
                self.drops = 0;
                Ok(())
            }
            "add" | "set" if self.dynamic() => {
                let routes: Vec<Route> = route_items(value)
                    .map(|s| self.parse_route(s))
                    .collect::<Result<_, _>>()?;
                for r in routes {
                    self.table.add(r, name == "set")?;
                }
                Ok(())
            }
            "remove" if self.dynamic() => {
                for item in route_items(value) {
                    let w = item.split_whitespace().next().unwrap_or("");
                    let (addr, len) = parse_prefix(w)?;
                    if self.table.remove(addr, len).is_none() {
                        return Err(format!("remove: no route for '{}'", w));
                    }
                }
                Ok(())
            }
            "flush" if self.dynamic() => {
                self.table.flush();
                Ok(())
            }
            _ => Err(format!("no write handler '{}'", name)),
        }
    }
}
