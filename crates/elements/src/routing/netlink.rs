//! rtnetlink for KernelRoutes: a non-blocking route socket opened in a network namespace,
//! dump requests, and the translation of the kernel's messages into [`Event`]s.

use std::fs::File;
use std::io;
use std::net::IpAddr;
use std::os::fd::AsRawFd;

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkMessage};
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteMessage, RouteType, RouteVia,
};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use super::fib::Prefix;

const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const RTM_NEWLINK: u16 = 16;
const RTM_DELLINK: u16 = 17;
const RTM_DELADDR: u16 = 21;
const RTM_NEWROUTE: u16 = 24;
const RTM_DELROUTE: u16 = 25;
const NLMSG_HDRLEN: usize = 16;

/// What a kernel route does with packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Forwarded: through a gateway or straight to the destination on a link.
    Unicast,
    /// Delivered to the host itself (`local`).
    Local,
    /// Dropped (`blackhole`, `unreachable`, `prohibit`).
    Drop,
    /// Anything else (`broadcast`, `multicast`, `anycast`, `nat`, `throw`, ...).
    Other,
}

/// One route of a kernel table, as a message describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRoute {
    /// The destination.
    pub prefix: Prefix,
    /// Kernel table id.
    pub table: u32,
    /// Type of service (routes with TOS other than 0 are kept apart by the kernel).
    pub tos: u8,
    /// Metric (`RTA_PRIORITY`): the lowest wins.
    pub metric: u32,
    /// Route type.
    pub kind: Kind,
    /// Gateway (`RTA_GATEWAY` or `RTA_VIA`), of the first next hop of a multipath route.
    pub gateway: Option<IpAddr>,
    /// Output interface index (0: none), of the first next hop of a multipath route.
    pub oif: u32,
    /// The route has several next hops (`RTA_MULTIPATH`).
    pub multipath: bool,
}

/// A message from the kernel that matters to KernelRoutes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `RTM_NEWROUTE`: a route added or replaced (or reported by a dump).
    NewRoute(KernelRoute),
    /// `RTM_DELROUTE`: a route deleted.
    DelRoute(KernelRoute),
    /// `RTM_NEWLINK`: an interface, its name and whether it is up.
    Link {
        /// Interface index.
        index: u32,
        /// Interface name.
        name: String,
        /// Administratively up.
        up: bool,
    },
    /// `RTM_DELLINK`: an interface is gone.
    LinkGone {
        /// Interface index.
        index: u32,
    },
    /// `RTM_DELADDR`: an address was removed (IPv4 routes through it go silently).
    AddressGone,
    /// The end of dump `seq`.
    Done {
        /// Sequence number of the request.
        seq: u32,
    },
    /// Request `seq` failed with `errno`.
    Failed {
        /// Sequence number of the request.
        seq: u32,
        /// The error number.
        errno: i32,
    },
    /// A message that could not be parsed.
    Malformed(String),
}

/// The route socket of a namespace (`netns`: a name under /run/netns or a path; `None`: this
/// process's namespace), with a receive buffer of `rcvbuf` bytes, subscribed to `groups`,
/// non-blocking.
pub fn open(netns: Option<&str>, rcvbuf: usize, groups: &[u32]) -> Result<Socket, String> {
    let Some(ns) = netns else {
        return open_here(rcvbuf, groups);
    };
    let path = if ns.contains('/') {
        ns.to_string()
    } else {
        format!("/run/netns/{ns}")
    };
    // setns changes the namespace of the calling thread only: a short-lived thread enters
    // it, and the socket it opens stays bound to that namespace.
    std::thread::scope(|s| {
        s.spawn(|| {
            let f = File::open(&path).map_err(|e| format!("namespace {path}: {e}"))?;
            // SAFETY: setns on a descriptor this thread owns; it changes only this thread,
            // which ends after opening the socket.
            if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(format!("namespace {path}: {}", io::Error::last_os_error()));
            }
            open_here(rcvbuf, groups)
        })
        .join()
        .unwrap_or_else(|_| Err("namespace thread failed".into()))
    })
}

fn open_here(rcvbuf: usize, groups: &[u32]) -> Result<Socket, String> {
    let err = |what: &str, e: io::Error| format!("netlink {what}: {e}");
    let mut s = Socket::new(NETLINK_ROUTE).map_err(|e| err("socket", e))?;
    s.bind_auto().map_err(|e| err("bind", e))?;
    let size = rcvbuf.min(i32::MAX as usize) as libc::c_int;
    // Beyond net.core.rmem_max only with CAP_NET_ADMIN (SO_RCVBUFFORCE); else the capped size.
    for opt in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        // SAFETY: setsockopt with a pointer to a live c_int and its size.
        let r = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r == 0 {
            break;
        }
    }
    for &g in groups {
        s.add_membership(g).map_err(|e| err("group", e))?;
    }
    s.set_non_blocking(true)
        .map_err(|e| err("non-blocking", e))?;
    Ok(s)
}

/// Asks for a dump of every route (both families, every table) with sequence number `seq`.
pub fn request_routes(s: &Socket, seq: u32) -> io::Result<()> {
    let mut m = RouteMessage::default();
    m.header.address_family = AddressFamily::Unspec;
    send(s, RouteNetlinkMessage::GetRoute(m), seq)
}

/// Asks for a dump of every interface with sequence number `seq`.
pub fn request_links(s: &Socket, seq: u32) -> io::Result<()> {
    send(s, RouteNetlinkMessage::GetLink(LinkMessage::default()), seq)
}

fn send(s: &Socket, m: RouteNetlinkMessage, seq: u32) -> io::Result<()> {
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_DUMP;
    header.sequence_number = seq;
    let mut msg = NetlinkMessage::new(header, NetlinkPayload::from(m));
    msg.finalize();
    let mut buf = vec![0u8; msg.buffer_len()];
    msg.serialize(&mut buf);
    s.send_to(&buf, &SocketAddr::new(0, 0), 0).map(|_| ())
}

/// The events of one datagram (several messages for a dump), appended to `out`.
pub fn parse(buf: &[u8], out: &mut Vec<Event>) {
    let mut off = 0;
    while buf.len() - off >= NLMSG_HDRLEN {
        let len = u32::from_ne_bytes([buf[off], buf[off + 1], buf[off + 2], buf[off + 3]]) as usize;
        if len < NLMSG_HDRLEN || len > buf.len() - off {
            out.push(Event::Malformed(format!("bad message length {len}")));
            return;
        }
        let kind = u16::from_ne_bytes([buf[off + 4], buf[off + 5]]);
        if matches!(
            kind,
            NLMSG_ERROR
                | NLMSG_DONE
                | RTM_NEWLINK
                | RTM_DELLINK
                | RTM_DELADDR
                | RTM_NEWROUTE
                | RTM_DELROUTE
        ) {
            out.extend(message(&buf[off..off + len]));
        }
        off += (len + 3) & !3;
    }
}

/// The event of one message, if it matters.
fn message(buf: &[u8]) -> Option<Event> {
    let m = match NetlinkMessage::<RouteNetlinkMessage>::deserialize(buf) {
        Ok(m) => m,
        Err(e) => return Some(Event::Malformed(e.to_string())),
    };
    let seq = m.header.sequence_number;
    match m.payload {
        NetlinkPayload::Done(_) => Some(Event::Done { seq }),
        NetlinkPayload::Error(e) => e.code.map(|c| Event::Failed {
            seq,
            errno: -c.get(),
        }),
        NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewRoute(r)) => {
            route(&r).map(Event::NewRoute)
        }
        NetlinkPayload::InnerMessage(RouteNetlinkMessage::DelRoute(r)) => {
            route(&r).map(Event::DelRoute)
        }
        NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewLink(l)) => {
            let name = l.attributes.iter().find_map(|a| match a {
                LinkAttribute::IfName(n) => Some(n.clone()),
                _ => None,
            })?;
            Some(Event::Link {
                index: l.header.index,
                name,
                up: l.header.flags.contains(LinkFlags::Up),
            })
        }
        NetlinkPayload::InnerMessage(RouteNetlinkMessage::DelLink(l)) => Some(Event::LinkGone {
            index: l.header.index,
        }),
        NetlinkPayload::InnerMessage(RouteNetlinkMessage::DelAddress(_)) => {
            Some(Event::AddressGone)
        }
        _ => None,
    }
}

fn ip(a: &RouteAddress) -> Option<IpAddr> {
    match a {
        RouteAddress::Inet(a) => Some(IpAddr::V4(*a)),
        RouteAddress::Inet6(a) => Some(IpAddr::V6(*a)),
        _ => None,
    }
}

fn via(v: &RouteVia) -> Option<IpAddr> {
    match v {
        RouteVia::Inet(a) => Some(IpAddr::V4(*a)),
        RouteVia::Inet6(a) => Some(IpAddr::V6(*a)),
        _ => None,
    }
}

/// The gateway among a route's (or a next hop's) attributes.
fn gateway(attrs: &[RouteAttribute]) -> Option<IpAddr> {
    attrs.iter().find_map(|a| match a {
        RouteAttribute::Gateway(g) => ip(g),
        RouteAttribute::Via(v) => via(v),
        _ => None,
    })
}

/// The route a route message describes; `None` for families other than IPv4 and IPv6.
pub fn route(m: &RouteMessage) -> Option<KernelRoute> {
    let h = &m.header;
    let v6 = match h.address_family {
        AddressFamily::Inet => false,
        AddressFamily::Inet6 => true,
        _ => return None,
    };
    let bits = if v6 { 128 } else { 32 };
    let len = h.destination_prefix_length.min(bits);
    let mut addr: u128 = 0;
    let mut table = h.table as u32;
    let mut metric = 0;
    let mut oif = 0;
    let mut hops = None;
    for a in &m.attributes {
        match a {
            RouteAttribute::Destination(RouteAddress::Inet(d)) if !v6 => {
                addr = u32::from(*d) as u128
            }
            RouteAttribute::Destination(RouteAddress::Inet6(d)) if v6 => addr = u128::from(*d),
            RouteAttribute::Table(t) => table = *t,
            RouteAttribute::Priority(p) => metric = *p,
            RouteAttribute::Oif(i) => oif = *i,
            RouteAttribute::MultiPath(v) => hops = Some(v),
            _ => {}
        }
    }
    let host_bits = bits - len;
    if host_bits > 0 {
        addr &= !((1u128 << host_bits) - 1);
    }
    let mut gw = gateway(&m.attributes);
    let mut multipath = false;
    if let Some(first) = hops.and_then(|v| v.first()) {
        multipath = hops.is_some_and(|v| v.len() > 1);
        oif = first.interface_index;
        gw = gateway(&first.attributes);
    }
    let kind = match h.kind {
        RouteType::Unicast => Kind::Unicast,
        RouteType::Local => Kind::Local,
        RouteType::BlackHole | RouteType::Unreachable | RouteType::Prohibit => Kind::Drop,
        _ => Kind::Other,
    };
    Some(KernelRoute {
        prefix: Prefix { v6, addr, len },
        table,
        tos: h.tos,
        metric,
        kind,
        gateway: gw,
        oif,
        multipath,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_route::route::{RouteHeader, RouteNextHop};
    use std::net::{Ipv4Addr, Ipv6Addr};

    /// A datagram of messages as the kernel sends it.
    fn datagram(msgs: Vec<(u16, RouteNetlinkMessage)>) -> Vec<u8> {
        let mut out = Vec::new();
        for (flags, m) in msgs {
            let mut header = NetlinkHeader::default();
            header.flags = flags;
            header.sequence_number = 7;
            let mut msg = NetlinkMessage::new(header, NetlinkPayload::from(m));
            msg.finalize();
            let mut buf = vec![0u8; msg.buffer_len()];
            msg.serialize(&mut buf);
            out.extend_from_slice(&buf);
            while out.len() % 4 != 0 {
                out.push(0);
            }
        }
        out
    }

    fn v4_route(dst: [u8; 4], len: u8, attrs: Vec<RouteAttribute>) -> RouteMessage {
        let mut m = RouteMessage::default();
        m.header.address_family = AddressFamily::Inet;
        m.header.destination_prefix_length = len;
        m.header.table = RouteHeader::RT_TABLE_MAIN;
        m.header.kind = RouteType::Unicast;
        m.attributes
            .push(RouteAttribute::Destination(RouteAddress::Inet(dst.into())));
        m.attributes.extend(attrs);
        m
    }

    #[test]
    fn new_route_with_gateway_and_table() {
        let m = v4_route(
            [198, 18, 100, 0],
            24,
            vec![
                RouteAttribute::Table(1000),
                RouteAttribute::Priority(32),
                RouteAttribute::Gateway(RouteAddress::Inet(Ipv4Addr::new(198, 18, 2, 2))),
                RouteAttribute::Oif(5),
            ],
        );
        let mut ev = Vec::new();
        parse(
            &datagram(vec![(0, RouteNetlinkMessage::NewRoute(m))]),
            &mut ev,
        );
        assert_eq!(
            ev,
            vec![Event::NewRoute(KernelRoute {
                prefix: Prefix {
                    v6: false,
                    addr: 0xc612_6400,
                    len: 24
                },
                table: 1000,
                tos: 0,
                metric: 32,
                kind: Kind::Unicast,
                gateway: Some(IpAddr::V4(Ipv4Addr::new(198, 18, 2, 2))),
                oif: 5,
                multipath: false,
            })]
        );
    }

    #[test]
    fn dump_datagram_with_done_and_other_messages() {
        let del = v4_route([198, 18, 1, 0], 24, vec![RouteAttribute::Oif(2)]);
        let mut blackhole = v4_route([198, 18, 3, 0], 24, vec![]);
        blackhole.header.kind = RouteType::BlackHole;
        let link = {
            let mut l = LinkMessage::default();
            l.header.index = 4;
            l.header.flags = LinkFlags::Up;
            l.attributes.push(LinkAttribute::IfName("veth1".into()));
            l
        };
        let bytes = datagram(vec![
            (0, RouteNetlinkMessage::DelRoute(del)),
            (0, RouteNetlinkMessage::NewRoute(blackhole)),
            (0, RouteNetlinkMessage::NewLink(link)),
            (0, RouteNetlinkMessage::GetLink(LinkMessage::default())),
        ]);
        let mut ev = Vec::new();
        parse(&bytes, &mut ev);
        assert_eq!(ev.len(), 3);
        assert!(matches!(&ev[0], Event::DelRoute(r) if r.oif == 2 && r.prefix.len == 24));
        assert!(matches!(&ev[1], Event::NewRoute(r) if r.kind == Kind::Drop));
        assert_eq!(
            ev[2],
            Event::Link {
                index: 4,
                name: "veth1".into(),
                up: true
            }
        );
        // NLMSG_DONE as the kernel ends a dump: a header and a 4-byte status.
        let mut done = vec![0u8; 20];
        done[..4].copy_from_slice(&20u32.to_ne_bytes());
        done[4..6].copy_from_slice(&NLMSG_DONE.to_ne_bytes());
        done[8..12].copy_from_slice(&9u32.to_ne_bytes());
        ev.clear();
        parse(&done, &mut ev);
        assert_eq!(ev, vec![Event::Done { seq: 9 }]);
    }

    #[test]
    fn multipath_takes_the_first_hop() {
        let mut h1 = RouteNextHop::default();
        h1.interface_index = 3;
        h1.attributes
            .push(RouteAttribute::Gateway(RouteAddress::Inet(Ipv4Addr::new(
                198, 18, 2, 2,
            ))));
        let mut h2 = RouteNextHop::default();
        h2.interface_index = 4;
        h2.attributes
            .push(RouteAttribute::Gateway(RouteAddress::Inet(Ipv4Addr::new(
                198, 18, 3, 2,
            ))));
        let m = v4_route(
            [0, 0, 0, 0],
            0,
            vec![RouteAttribute::MultiPath(vec![h1, h2])],
        );
        let r = route(&m).unwrap();
        assert!(r.multipath);
        assert_eq!(r.oif, 3);
        assert_eq!(r.gateway, Some(IpAddr::V4(Ipv4Addr::new(198, 18, 2, 2))));
    }

    #[test]
    fn ipv6_route_host_bits_cleared() {
        let mut m = RouteMessage::default();
        m.header.address_family = AddressFamily::Inet6;
        m.header.destination_prefix_length = 48;
        m.header.kind = RouteType::Unicast;
        let dst: Ipv6Addr = "2001:db8:7:1::5".parse().unwrap();
        m.attributes
            .push(RouteAttribute::Destination(RouteAddress::Inet6(dst)));
        m.attributes.push(RouteAttribute::Via(RouteVia::Inet6(
            "fe80::1".parse().unwrap(),
        )));
        let r = route(&m).unwrap();
        let want: Ipv6Addr = "2001:db8:7::".parse().unwrap();
        assert_eq!(r.prefix.addr, u128::from(want));
        assert!(r.prefix.v6);
        assert_eq!(r.gateway, Some("fe80::1".parse().unwrap()));
    }

    #[test]
    fn truncated_datagram_is_malformed() {
        let m = v4_route([198, 18, 100, 0], 24, vec![]);
        let bytes = datagram(vec![(0, RouteNetlinkMessage::NewRoute(m))]);
        let mut ev = Vec::new();
        parse(&bytes[..bytes.len() - 4], &mut ev);
        assert!(matches!(ev[..], [Event::Malformed(_)]));
        // Families other than IPv4 and IPv6 are not routes to follow.
        let mut other = RouteMessage::default();
        other.header.address_family = AddressFamily::Mpls;
        assert_eq!(route(&other), None);
    }
}
