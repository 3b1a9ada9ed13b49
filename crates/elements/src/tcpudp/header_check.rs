//! The element behind CheckTCPHeader, CheckUDPHeader and CheckICMPHeader: each class gives
//! its check function and its reasons (a [`drop_reasons!`](sluice_core::drop_reasons) enum
//! in Click's order, with Click's texts); this file has the IP header fields they read, the
//! VERBOSE and DETAILS keywords, the per-reason counters and handlers, and sending a failed
//! packet to output 1 (or dropping it).

use std::net::Ipv4Addr;

use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};
use sluice_core::{Batch, ConfigCx, Cx, DropReason, Drops, Element, Handlers, Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::checksum;
use sluice_wire::Ipv4Packet;

use crate::ip::common::ip_offset;

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

/// A header check: `Ok` or the reason it failed.
pub type Check<R> = fn(&Packet) -> Result<(), R>;

/// A header check element.
pub struct HeaderCheck<R: DropReason> {
    what: &'static str,
    check: Check<R>,
    verbose: bool,
    /// Packets that failed, whether sent to output 1 or dropped (Click's `drops`).
    failed: Drops<R>,
    /// Packets that failed and were dropped (output 1 not connected).
    dropped: Drops<R>,
}

impl<R: DropReason> HeaderCheck<R> {
    /// A checker of `what` (`TCP`, …).
    pub fn new(what: &'static str, check: Check<R>) -> HeaderCheck<R> {
        HeaderCheck {
            what,
            check,
            verbose: false,
            failed: Drops::default(),
            dropped: Drops::default(),
        }
    }

    /// Output 0 when `p` passes; otherwise counted, reported (the first time, or every time
    /// when VERBOSE), and sent to output 1 (dropped without one).
    fn verdict(&mut self, p: Packet, cx: &mut Cx) -> Verdict {
        let Err(why) = (self.check)(&p) else {
            return Verdict::Out(0, p);
        };
        if self.verbose || self.failed.total() == 0 {
            eprintln!(
                "{}: {} header check failed: {}",
                cx.name(),
                self.what,
                R::NAMES[why.index()]
            );
        }
        self.failed.count(why);
        if cx.noutputs() < 2 {
            self.dropped.count(why);
            return Verdict::Gone;
        }
        Verdict::Out(1, p)
    }
}

impl<R: DropReason + Send> Element for HeaderCheck<R> {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        args.read_into("VERBOSE", &mut self.verbose)?;
        // The per-reason counts are always kept.
        let _: Option<bool> = args.read("DETAILS")?;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_sorted(batch, cx, |p, cx| self.verdict(p, cx));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, cx| self.verdict(p, cx))
    }

    /// `drops` and `drop_details` (`COUNT<TAB>REASON` lines, as Click prints them) count
    /// every packet that failed.
    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("drops", |e| e.failed.total())
            .read("drop_details", |e| {
                e.failed
                    .counts()
                    .map(|(r, d)| format!("{d}\t{r}\n"))
                    .collect::<String>()
            })
            .drops(|e| &e.dropped)
            .into()
    }
}
