//! CheckIP6Header — checks IPv6 header validity
//!
//! Synopsis: `CheckIP6Header([BADADDRS, OFFSET])`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Expects IPv6 packets starting OFFSET bytes into the packet (default 0). A packet passes
//! if it holds at least the 40-byte IPv6 header, its version is 6, its payload length fits
//! in the bytes after the header, and its source address is not bad. Bad sources are
//! multicast addresses (`ff00::/8`, which includes Click's all-ones address) and the
//! BADADDRS. Passing packets get their network header annotation set (the transport header
//! annotation 40 bytes later), and bytes beyond the payload length (Ethernet padding) are
//! trimmed off.
//!
//! Bad packets go to output 1 if it is connected, otherwise they are dropped. Either way they
//! are counted, per reason, in `drops` and `drop_details`; the first one is reported on
//! standard error (`IP6 header check failed`, as Click does).
//!
//! Arguments:
//! - `BADADDRS` (space-separated IPv6 addresses): more bad source addresses (`::` for a
//!   router, for example).
//! - `OFFSET` (unsigned, default 0): where the IPv6 header starts.
//!
//! Handlers: `drops` (r, bad packets), `drop_details` (r, bad packets per reason).
//!
//! Example: `Strip(14) -> CheckIP6Header(::) -> GetIP6Address(24) -> ...`

use std::net::Ipv6Addr;

use sluice_core::toolkit::Verdict;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass};
use sluice_core::{Handlers, Packet, Table};
use sluice_lang::args::{split_words, Args, FromArg};
use sluice_wire::ipv6::HEADER_LEN;
use sluice_wire::Ipv6Packet;

drop_reasons! {
    /// Why a packet was rejected.
    pub enum Reason {
        /// Fewer than 40 bytes.
        Tiny => "tiny packet",
        /// Version is not 6.
        BadVersion => "bad IPv6 version",
        /// Payload length beyond the packet.
        BadLength => "bad IPv6 payload length",
        /// Source address not allowed.
        BadSource => "bad source address",
    }
}

/// The CheckIP6Header element.
#[derive(Default)]
pub struct CheckIP6Header {
    offset: usize,
    bad_src: Vec<Ipv6Addr>,
    /// Bad packets by reason, whether dropped or sent to output 1 (Click's `drops`).
    bad: Drops<Reason>,
    /// Bad packets dropped (output 1 not connected).
    dropped: Drops<Reason>,
}

impl CheckIP6Header {
    /// Checks the IPv6 header at the offset of `data`; returns the IPv6 packet's length
    /// (header and payload) if it passes.
    fn check(&self, data: &[u8]) -> Result<usize, Reason> {
        let b = data.get(self.offset..).unwrap_or(&[]);
        if b.len() < HEADER_LEN {
            return Err(Reason::Tiny);
        }
        let ip = Ipv6Packet::new_unchecked(b);
        if ip.version() != 6 {
            return Err(Reason::BadVersion);
        }
        let len = HEADER_LEN + ip.payload_len() as usize;
        if len > b.len() {
            return Err(Reason::BadLength);
        }
        let src = ip.src();
        if src.is_multicast() || self.bad_src.contains(&src) {
            return Err(Reason::BadSource);
        }
        Ok(len)
    }
}

impl Element for CheckIP6Header {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(list) = args.read_p::<String>("BADADDRS")? {
            for w in split_words(&list) {
                match Ipv6Addr::from_arg(&w) {
                    Ok(a) if !self.bad_src.contains(&a) => self.bad_src.push(a),
                    Ok(_) => {}
                    Err(e) => {
                        args.error(format!("BADADDRS: {e}"));
                        return Err(());
                    }
                }
            }
        }
        self.offset = args.read_p("OFFSET")?.unwrap_or(0);
        Ok(())
    }

    fn action(&mut self, mut p: Packet, cx: &mut Cx) -> Verdict {
        match self.check(p.data()) {
            Ok(len) => {
                let end = self.offset + len;
                if p.len() > end {
                    p.take(p.len() - end);
                }
                p.set_network_offset(self.offset as isize);
                p.set_transport_offset((self.offset + HEADER_LEN) as isize);
                Verdict::Out(0, p)
            }
            Err(r) => {
                if self.bad.total() == 0 {
                    eprintln!("IP6 header check failed");
                }
                self.bad.count(r);
                if cx.noutputs() < 2 {
                    self.dropped.count(r);
                    return Verdict::Gone;
                }
                Verdict::Out(1, p)
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("drops", |e| e.bad.total())
            .read("drop_details", |e| e.bad.details())
            .drops(|e| &e.dropped)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "CheckIP6Header",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("check_ip6_header.rs"),
    make: || Box::<CheckIP6Header>::default(),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(src: &str, plen: u16, extra: usize) -> Vec<u8> {
        let mut v = vec![0x60, 0, 0, 0, 0, 0, 17, 64];
        v[4..6].copy_from_slice(&plen.to_be_bytes());
        v.extend_from_slice(&src.parse::<Ipv6Addr>().unwrap().octets());
        v.extend_from_slice(&"2001:db8::2".parse::<Ipv6Addr>().unwrap().octets());
        v.resize(40 + plen as usize + extra, 0);
        v
    }

    #[test]
    fn reasons() {
        let mut c = CheckIP6Header {
            bad_src: vec!["2001:db8::bad".parse().unwrap()],
            ..Default::default()
        };
        assert_eq!(c.check(&hdr("2001:db8::1", 8, 0)), Ok(48));
        assert_eq!(c.check(&hdr("2001:db8::1", 8, 6)), Ok(48));
        assert_eq!(c.check(&hdr("::", 0, 0)), Ok(40));
        assert_eq!(c.check(&hdr("2001:db8::1", 8, 0)[..39]), Err(Reason::Tiny));
        assert_eq!(
            c.check(&hdr("2001:db8::1", 8, 0)[..47]),
            Err(Reason::BadLength)
        );
        assert_eq!(c.check(&hdr("ff02::1", 8, 0)), Err(Reason::BadSource));
        assert_eq!(c.check(&hdr("2001:db8::bad", 8, 0)), Err(Reason::BadSource));
        let mut b = hdr("2001:db8::1", 8, 0);
        b[0] = 0x45;
        assert_eq!(c.check(&b), Err(Reason::BadVersion));
        c.offset = 14;
        assert_eq!(c.check(&b), Err(Reason::Tiny));
        let mut f = vec![0u8; 14];
        f.extend_from_slice(&hdr("2001:db8::1", 8, 0));
        assert_eq!(c.check(&f), Ok(48));
    }
}
