//! CheckIPHeader — checks IP header validity; CheckIPHeader2 does the same without the checksum
//!
//! Synopsis: `CheckIPHeader([BADSRC, OFFSET, keywords OFFSET, BADSRC, INTERFACES, CHECKSUM,
//! VERBOSE, DETAILS])` and `CheckIPHeader2(...)` (same arguments, CHECKSUM defaults to false).
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Expects IP packets starting OFFSET bytes into the packet (default 0). A packet passes if:
//! it holds at least 20 bytes of IP header; the version is 4; the header length is at least
//! 20 and fits in the packet; the total length is at least the header length and no more
//! than the bytes present; the header checksum is right (unless CHECKSUM is false); and the
//! source address is not bad. Bad sources are 0.0.0.0, 255.255.255.255, multicast and class E
//! addresses, the BADSRC addresses, and the broadcast addresses of the INTERFACES prefixes.
//! Passing packets get their network header annotation set (and the transport header after
//! the IP header), and bytes beyond the IP total length (Ethernet padding) are trimmed off.
//!
//! Bad packets go to output 1 if it is connected, otherwise they are dropped. Either way they
//! are counted, per reason, in `drops` and `drop_details`.
//!
//! Arguments:
//! - `BADSRC` (space-separated IP addresses): more bad source addresses. For compatibility
//!   with old configurations (`CheckIPHeader(18.26.4.255 1.255.255.255)`) a first positional
//!   argument that is not a number is BADSRC; otherwise it is OFFSET.
//! - `OFFSET` (unsigned, default 0): where the IP header starts.
//! - `INTERFACES` (space-separated `ADDR/LEN`): the router's interfaces; their subnet
//!   broadcast addresses are bad sources.
//! - `CHECKSUM` (bool, default true; false for CheckIPHeader2): verify the header checksum.
//! - `VERBOSE` (bool, default false): print a message for each bad packet.
//! - `DETAILS` (bool): accepted for compatibility; details are always kept.
//!
//! Handlers: `count` (r, packets passed), `drops` (r, bad packets), `drop_details` (r, bad
//! packets per reason), `reset` (w).
//!
//! Example: `Strip(14) -> CheckIPHeader(INTERFACES 198.18.0.1/24 198.19.0.1/24) -> ...`

use sluice_wire::Ipv4Prefix;
use std::net::Ipv4Addr;

use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, DropReason, Drops, Element, ElementClass};
use sluice_core::{Handlers, Packet, Table};
use sluice_lang::args::{split_words, Args, FromArg};
use sluice_wire::ipv4::HEADER_LEN;
use sluice_wire::Ipv4Packet;

use super::common::{is_martian_src, IpList};

drop_reasons! {
    /// Why a packet was rejected.
    pub enum Reason {
        /// Fewer than 20 bytes.
        Tiny => "tiny packet",
        /// Version is not 4.
        BadVersion => "bad IP version",
        /// IHL below 5 or beyond the packet.
        BadHeaderLength => "bad IP header length",
        /// Total length below the header length or beyond the packet.
        BadLength => "bad IP length",
        /// Wrong header checksum.
        BadChecksum => "bad IP checksum",
        /// Source address not allowed.
        BadSource => "bad source address",
    }
}

/// True if the IP header of `hl` bytes at the start of `b` has a correct checksum; the
/// usual 20-byte header is summed with straight-line code.
#[inline]
fn checksum_ok(b: &[u8], hl: usize) -> bool {
    if hl == HEADER_LEN {
        let h: &[u8; HEADER_LEN] = b[..HEADER_LEN].try_into().expect("20 bytes");
        let mut s: u64 = 0;
        for w in h.chunks_exact(4) {
            s += u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as u64;
        }
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s == 0xffff
    } else {
        Ipv4Packet::new_unchecked(b).verify_checksum()
    }
}

/// The CheckIPHeader / CheckIPHeader2 element.
pub struct CheckIPHeader {
    offset: usize,
    bad_src: Vec<Ipv4Addr>,
    checksum: bool,
    verbose: bool,
    count: u64,
    /// Bad packets by reason, whether dropped or sent to output 1 (Click's `drops`).
    bad: Drops<Reason>,
    /// Bad packets dropped (output 1 not connected).
    dropped: Drops<Reason>,
}

impl CheckIPHeader {
    fn new(checksum: bool) -> CheckIPHeader {
        CheckIPHeader {
            offset: 0,
            bad_src: Vec::new(),
            checksum,
            verbose: false,
            count: 0,
            bad: Drops::default(),
            dropped: Drops::default(),
        }
    }

    /// Checks the IP header at `offset` of `data`; returns the IP total length if it passes.
    pub fn check(&self, data: &[u8]) -> Result<usize, Reason> {
        let b = data.get(self.offset..).unwrap_or(&[]);
        if b.len() < HEADER_LEN {
            return Err(Reason::Tiny);
        }
        let ip = Ipv4Packet::new_unchecked(b);
        if ip.version() != 4 {
            return Err(Reason::BadVersion);
        }
        let hl = ip.header_len();
        if hl < HEADER_LEN || hl > b.len() {
            return Err(Reason::BadHeaderLength);
        }
        let tl = ip.total_len() as usize;
        if tl < hl || tl > b.len() {
            return Err(Reason::BadLength);
        }
        if self.checksum && !checksum_ok(b, hl) {
            return Err(Reason::BadChecksum);
        }
        let src = ip.src();
        if src.is_unspecified() || is_martian_src(src) || self.bad_src.contains(&src) {
            return Err(Reason::BadSource);
        }
        Ok(tl)
    }
}

impl CheckIPHeader {
    /// Trims a passing packet to its IP length `tl` and sets its header annotations.
    #[inline]
    fn mark(&self, p: &mut Packet, tl: usize) {
        let end = self.offset + tl;
        if p.len() > end {
            p.take(p.len() - end);
        }
        let hl = ((p.data()[self.offset] & 0x0f) as usize) * 4;
        p.set_network_offset(self.offset as isize);
        p.set_transport_offset((self.offset + hl) as isize);
    }

    fn sort(&mut self, mut p: Packet, cx: &mut Cx) -> Verdict {
        match self.check(p.data()) {
            Ok(tl) => {
                self.mark(&mut p, tl);
                self.count += 1;
                Verdict::Out(0, p)
            }
            Err(r) => {
                self.bad.count(r);
                if self.verbose {
                    eprintln!("{}: {}", cx.name(), Reason::NAMES[r.index()]);
                }
                if cx.noutputs() < 2 {
                    self.dropped.count(r);
                    return Verdict::Gone;
                }
                Verdict::Out(1, p)
            }
        }
    }
}

impl Element for CheckIPHeader {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let mut bad = Vec::new();
        // Compatibility: a non-numeric first positional argument is BADSRC.
        let first: Option<String> = args.read_p("BADSRC")?;
        match first {
            Some(s) if u32::from_arg(&s).is_ok() => {
                self.offset = u32::from_arg(&s).unwrap() as usize
            }
            Some(s) => match IpList::from_arg(&s) {
                Ok(l) => bad.extend(l.0),
                Err(e) => {
                    args.error(format!("BADSRC: {}", e));
                    return Err(());
                }
            },
            None => {}
        }
        if let Some(o) = args.read_p::<usize>("OFFSET")? {
            self.offset = o;
        }
        for l in args.read_all::<IpList>("BADSRC")? {
            bad.extend(l.0);
        }
        if let Some(ifs) = args.read::<String>("INTERFACES")? {
            for w in split_words(&ifs) {
                match Ipv4Prefix::from_arg(&w) {
                    Ok(pfx) => {
                        // The interface address keeps its host bits: compute its broadcast.
                        let (a, len) = match w.split_once('/') {
                            Some((a, l)) => (a.parse::<Ipv4Addr>().ok(), l.parse::<u8>().ok()),
                            None => (None, None),
                        };
                        let base = a.map(u32::from).unwrap_or(u32::from(pfx.addr));
                        let m = Ipv4Prefix::mask_of(len.unwrap_or(pfx.len));
                        bad.push(Ipv4Addr::from(base | !m));
                        bad.push(Ipv4Addr::from(base & m));
                    }
                    Err(e) => {
                        args.error(format!("INTERFACES: {}", e));
                        return Err(());
                    }
                }
            }
        }
        if let Some(c) = args.read::<bool>("CHECKSUM")? {
            self.checksum = c;
        }
        self.verbose = args.read::<bool>("VERBOSE")?.unwrap_or(false);
        let _ = args.read::<bool>("DETAILS")?;
        let _ = args.read::<String>("GOODDST")?;
        bad.sort();
        bad.dedup();
        self.bad_src = bad;
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        // Fast path: packets are checked and marked in place while they pass, and a batch
        // of good headers leaves as it came. From the first bad one on, the rest is sorted.
        let mut good = 0;
        for p in batch.iter_mut() {
            match self.check(p.data()) {
                Ok(tl) => self.mark(p, tl),
                Err(_) => break,
            }
            good += 1;
        }
        self.count += good as u64;
        if good == batch.len() {
            if good > 0 {
                cx.push(0, batch);
            }
            return;
        }
        let mut seen = 0;
        push_sorted(batch, cx, |p, cx| {
            seen += 1;
            if seen <= good {
                Verdict::Out(0, p)
            } else {
                self.sort(p, cx)
            }
        });
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, cx| self.sort(p, cx))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .read("drops", |e| e.bad.total())
            .read("drop_details", |e| e.bad.details())
            .write("reset", |e, _, _| {
                e.count = 0;
                e.bad.reset();
                Ok(())
            })
            .drops(|e| &e.dropped)
            .into()
    }
}

/// Class description of CheckIPHeader.
pub const CLASS: ElementClass = ElementClass {
    name: "CheckIPHeader",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("check_ip_header.rs"),
    make: || Box::new(CheckIPHeader::new(true)),
};

/// Class description of CheckIPHeader2 (no checksum check).
pub const CLASS2: ElementClass = ElementClass {
    name: "CheckIPHeader2",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("check_ip_header.rs"),
    make: || Box::new(CheckIPHeader::new(false)),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(src: [u8; 4], total: u16) -> Vec<u8> {
        let mut v = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0];
        v.extend_from_slice(&src);
        v.extend_from_slice(&[198, 19, 0, 2]);
        v[2..4].copy_from_slice(&total.to_be_bytes());
        let c = sluice_wire::checksum::checksum(&v);
        v[10..12].copy_from_slice(&c.to_be_bytes());
        v.resize(total as usize, 0);
        v
    }

    #[test]
    fn reasons() {
        let c = CheckIPHeader::new(true);
        assert_eq!(c.check(&hdr([198, 18, 0, 2], 28)), Ok(28));
        assert_eq!(c.check(&hdr([198, 18, 0, 2], 28)[..19]), Err(Reason::Tiny));
        assert_eq!(
            c.check(&hdr([198, 18, 0, 2], 28)[..27]),
            Err(Reason::BadLength)
        );
        assert_eq!(
            c.check(&hdr([255, 255, 255, 255], 28)),
            Err(Reason::BadSource)
        );
        assert_eq!(c.check(&hdr([224, 0, 0, 1], 28)), Err(Reason::BadSource));
        assert_eq!(c.check(&hdr([0, 0, 0, 0], 28)), Err(Reason::BadSource));
        let mut b = hdr([198, 18, 0, 2], 28);
        b[11] ^= 1;
        assert_eq!(c.check(&b), Err(Reason::BadChecksum));
        assert_eq!(CheckIPHeader::new(false).check(&b), Ok(28));
        b[0] = 0x44;
        assert_eq!(c.check(&b), Err(Reason::BadHeaderLength));
        b[0] = 0x65;
        assert_eq!(c.check(&b), Err(Reason::BadVersion));
    }

    #[test]
    fn fast_checksum_agrees_with_the_general_one() {
        // Words chosen to make every fold carry: all ones, near-overflow sums, and a sweep.
        let mut h = [0u8; HEADER_LEN];
        for seed in 0u32..20_000 {
            for (i, b) in h.iter_mut().enumerate() {
                *b = match seed % 4 {
                    0 => 0xff,
                    1 => (seed.wrapping_mul(2_654_435_761).rotate_left(i as u32) >> 3) as u8,
                    2 => {
                        if i % 2 == 0 {
                            0xff
                        } else {
                            (seed >> (i % 8)) as u8
                        }
                    }
                    _ => (seed as u8).wrapping_mul(i as u8 + 1),
                };
            }
            if seed % 3 == 0 {
                h[10..12].fill(0);
                let c = sluice_wire::checksum::checksum(&h);
                h[10..12].copy_from_slice(&c.to_be_bytes());
            }
            let general = Ipv4Packet::new_unchecked(&h[..]).verify_checksum();
            assert_eq!(checksum_ok(&h, HEADER_LEN), general, "header {:02x?}", h);
        }
    }
}
