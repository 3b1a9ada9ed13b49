//! The element behind CheckTCPHeader, CheckUDPHeader and CheckICMPHeader: each class gives
//! its check function and reason texts; this file has the IP header fields they read, the
//! VERBOSE and DETAILS keywords, the per-reason drop counters and handlers, and sending a
//! failed packet to output 1 (or dropping it).

use std::net::Ipv4Addr;

use sluice_core::{Batch, ConfigCx, Cx, Element, Handler, Packet};
use sluice_lang::args::Args;
use sluice_wire::checksum;
use sluice_wire::Ipv4Packet;

use crate::ip::common::{ip_offset, pull_sorted, push_sorted, Verdict};

/// The reasons a check fails, in Click's order (the indices of the reason texts).
pub const NOT_PROTO: usize = 0;
/// The lengths do not fit.
pub const BAD_LENGTH: usize = 1;
/// The checksum is wrong.
pub const BAD_CHECKSUM: usize = 2;

/// The IP header fields of a packet as the checks see them.
pub struct IpFields<'a> {
    /// The bytes from the IP header to the end of the packet.
    pub bytes: &'a [u8],
    /// IP header length.
    pub hl: usize,
    /// IP total length.
    pub total: usize,
    /// Protocol.
    pub proto: u8,
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
}

impl<'a> IpFields<'a> {
    /// The fields of the IP header at the network header annotation (or the packet's start);
    /// `None` when no IP header fits there.
    pub fn of(p: &'a Packet) -> Option<IpFields<'a>> {
        let bytes = &p.data()[ip_offset(p)..];
        if bytes.len() < 20 {
            return None;
        }
        let ip = Ipv4Packet::new_unchecked(bytes);
        let hl = ip.header_len();
        if hl < 20 || hl > bytes.len() {
            return None;
        }
        Some(IpFields {
            bytes,
            hl,
            total: ip.total_len() as usize,
            proto: ip.protocol(),
            src: ip.src(),
            dst: ip.dst(),
        })
    }

    /// True when the transport segment `bytes[hl..hl + len]` sums to zero with the pseudo
    /// header (the caller has checked that it is inside the packet).
    pub fn pseudo_checksum_ok(&self, len: usize) -> bool {
        let s = checksum::pseudo_header_v4(self.src, self.dst, self.proto, len as u16)
            + checksum::sum16(&self.bytes[self.hl..self.hl + len]);
        checksum::fold(s) == 0xffff
    }
}

/// A header check: `Ok` or the index of the reason it failed.
pub type Check = fn(&Packet) -> Result<(), usize>;

/// A header check element.
pub struct HeaderCheck {
    what: &'static str,
    reasons: [&'static str; 3],
    check: Check,
    verbose: bool,
    drops: [u64; 3],
}

impl HeaderCheck {
    /// A checker of `what` (`TCP`, …) with Click's reason texts.
    pub fn new(what: &'static str, reasons: [&'static str; 3], check: Check) -> HeaderCheck {
        HeaderCheck {
            what,
            reasons,
            check,
            verbose: false,
            drops: [0; 3],
        }
    }

    /// Output 0 when `p` passes; otherwise counted, reported (the first time, or every time
    /// when VERBOSE), and sent to output 1.
    fn verdict(&mut self, p: Packet, cx: &mut Cx) -> Verdict {
        let Err(why) = (self.check)(&p) else {
            return Verdict::Out(0, p);
        };
        if self.verbose || self.drops.iter().all(|d| *d == 0) {
            eprintln!(
                "{}: {} header check failed: {}",
                cx.name(),
                self.what,
                self.reasons[why]
            );
        }
        self.drops[why] += 1;
        Verdict::Out(1, p)
    }
}

impl Element for HeaderCheck {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.verbose = args.read("VERBOSE")?.unwrap_or(false);
        // The per-reason counts are always kept.
        let _: Option<bool> = args.read("DETAILS")?;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_sorted(batch, cx, |p, cx| self.verdict(p, cx));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, cx| self.verdict(p, cx)).0
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("drops"), Handler::r("drop_details")] }
    }

    /// `drops` and `drop_details` (`COUNT<TAB>REASON` lines, as Click prints them).
    fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "drops" => Some(self.drops.iter().sum::<u64>().to_string()),
            "drop_details" => Some(
                self.reasons
                    .iter()
                    .zip(self.drops)
                    .map(|(r, d)| format!("{d}\t{r}\n"))
                    .collect(),
            ),
            _ => None,
        }
    }
}
