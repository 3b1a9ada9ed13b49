//! IPGWOptions — processes the IP options a gateway must handle (Record Route, Timestamp)
//!
//! Synopsis: `IPGWOptions(MYADDR [, OTHERADDRS])`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Expects IP packets with the network header annotation (place it after CheckIPHeader).
//! Packets without options pass unchanged. For the others, each option is examined:
//! - Record Route (7): if there is room, MYADDR is stored at the pointer and the pointer
//!   advanced by 4. A full option (pointer just past its end) is left alone; any other
//!   pointer that does not point at a free slot (0 to 3, unaligned, beyond the end) is an
//!   error.
//! - Timestamp (68): a pointer below 5 is an error. Flag 0 stores a timestamp (milliseconds
//!   since midnight UT, from the router's clock); flag 1 stores MYADDR and a timestamp; when
//!   there is no room left for that (the pointer at or past the end), the overflow counter
//!   is incremented instead. Flag 3 (prespecified) stores a timestamp if the next
//!   prespecified address is MYADDR or one of OTHERADDRS; with no room left, flag 3 is an
//!   error, like any other flag (Click's rules).
//! - Other options (including the source routes LSRR/SSRR, which Click's IPGWOptions does
//!   not follow either) are skipped.
//!
//! If any option was changed the header checksum is recomputed. A malformed option (bad
//! length, pointer out of range, unknown timestamp flag, overflow counter already at 15)
//! sends the packet, unchanged, to output 1 with its parameter-problem annotation (`param_off`)
//! set to the offset of the offending byte from the start of the IP header — connect output 1
//! to `ICMPError(ADDR, parameterproblem)`. Without output 1 such packets are dropped. Both
//! cases are counted in `drops`. Packets without a complete IP header are dropped.
//!
//! Arguments:
//! - `MYADDR` (IP address, mandatory): this router's address, written into Record Route and
//!   Timestamp options.
//! - `OTHERADDRS` (space-separated IP addresses, default none): the router's other addresses;
//!   a prespecified Timestamp slot for one of them (or MYADDR) is filled in.
//!
//! Handlers: `drops` (r): packets with bad options (Click's count). `drop_details` (r):
//! packets dropped, by reason (no complete IP header; bad options with output 1
//! unconnected).
//!
//! Example: `gio :: IPGWOptions(198.18.0.1) -> FixIPSrc(198.18.0.1) -> ...;
//! gio[1] -> ICMPError(198.18.0.1, parameterproblem) -> rt;`

use std::net::Ipv4Addr;

use sluice_core::toolkit::{pull_sorted, push_sorted_or_pass, Verdict};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, Table, Timestamp};
use sluice_lang::args::Args;
use sluice_wire::ipv4::{OPT_EOL, OPT_NOP, OPT_RR, OPT_TS};
use sluice_wire::Ipv4Packet;

use super::common::{ip_offset, IpList};

drop_reasons! {
    /// Why IPGWOptions drops a packet.
    enum Reason { BadHeader => "bad IP header" }
}

/// The IPGWOptions element.
pub struct IPGWOptions {
    my: Ipv4Addr,
    others: Vec<Ipv4Addr>,
    /// Packets with bad options, sent to output 1 (Click's `drops`).
    bad: u64,
    drops: Drops<Reason>,
}

/// Processes the options of the IP header `h` (exactly the header bytes) in place.
/// Returns `Ok(changed)` or `Err(offset)` of the offending byte.
pub fn process_options(
    h: &mut [u8],
    my: Ipv4Addr,
    others: &[Ipv4Addr],
    ms: u32,
) -> Result<bool, usize> {
    let hlen = h.len();
    let mut changed = false;
    let mut oi = 20;
    while oi < hlen {
        let t = h[oi];
        if t == OPT_NOP {
            oi += 1;
            continue;
        }
        if t == OPT_EOL {
            break;
        }
        if oi + 1 >= hlen {
            return Err(oi + 1);
        }
        let xlen = h[oi + 1] as usize;
        if xlen < 2 || oi + xlen > hlen {
            return Err(oi + 1);
        }
        if t == OPT_RR {
            if xlen < 3 {
                return Err(oi + 1);
            }
            // The pointer is 1-origin: p is the offset of the next free slot. A full option
            // (p just past the end) passes; any other pointer outside the slots is an error.
            let p = h[oi + 2] as usize;
            if p >= 4 && p + 3 <= xlen {
                h[oi + p - 1..oi + p + 3].copy_from_slice(&my.octets());
                h[oi + 2] += 4;
                changed = true;
            } else if p != xlen + 1 {
                return Err(oi + 2);
            }
        } else if t == OPT_TS {
            if xlen < 4 {
                return Err(oi + 1);
            }
            // As in Click: a pointer before the first slot is an error; one past the room
            // left is an overflow for flags 0 and 1, and an error for flag 3 (prespecified
            // addresses) and unknown flags.
            let p = h[oi + 2] as usize;
            let oflw = h[oi + 3] >> 4;
            let flg = h[oi + 3] & 0x0f;
            let mut overflowed = false;
            if p < 5 {
                return Err(oi + 2);
            }
            let p = p - 1;
            if flg == 0 {
                if p + 4 <= xlen {
                    h[oi + p..oi + p + 4].copy_from_slice(&ms.to_be_bytes());
                    h[oi + 2] += 4;
                    changed = true;
                } else {
                    overflowed = true;
                }
            } else if flg == 1 {
                if p + 8 <= xlen {
                    h[oi + p..oi + p + 4].copy_from_slice(&my.octets());
                    h[oi + p + 4..oi + p + 8].copy_from_slice(&ms.to_be_bytes());
                    h[oi + 2] += 8;
                    changed = true;
                } else {
                    overflowed = true;
                }
            } else if flg == 3 && p + 8 <= xlen {
                let a = Ipv4Addr::new(h[oi + p], h[oi + p + 1], h[oi + p + 2], h[oi + p + 3]);
                if a == my || others.contains(&a) {
                    h[oi + p + 4..oi + p + 8].copy_from_slice(&ms.to_be_bytes());
                    h[oi + 2] += 8;
                    changed = true;
                }
            } else {
                return Err(oi + 3);
            }
            if overflowed {
                if oflw < 15 {
                    h[oi + 3] = ((oflw + 1) << 4) | flg;
                    changed = true;
                } else {
                    return Err(oi + 3);
                }
            }
        }
        oi += xlen;
    }
    Ok(changed)
}

/// Milliseconds since midnight UT, as the IP Timestamp option wants.
pub fn ms_since_midnight(t: Timestamp) -> u32 {
    let ns = t.0.rem_euclid(86_400_000_000_000);
    (ns / 1_000_000) as u32
}

impl IPGWOptions {
    fn action(&mut self, mut p: Packet, cx: &mut Cx) -> Verdict {
        let off = ip_offset(&p);
        let hl = match p.data().get(off) {
            Some(b) if b >> 4 == 4 => ((b & 0x0f) as usize) * 4,
            _ => {
                self.drops.count(Reason::BadHeader);
                return Verdict::Gone;
            }
        };
        if hl < 20 || off + hl > p.len() {
            self.drops.count(Reason::BadHeader);
            return Verdict::Gone;
        }
        if hl == 20 {
            return Verdict::Out(0, p);
        }
        // Work on a copy of the header so a bad packet leaves unchanged.
        let mut h = [0u8; 60];
        h[..hl].copy_from_slice(&p.data()[off..off + hl]);
        match process_options(
            &mut h[..hl],
            self.my,
            &self.others,
            ms_since_midnight(cx.now()),
        ) {
            Ok(false) => Verdict::Out(0, p),
            Ok(true) => {
                let d = &mut p.data_mut()[off..];
                d[..hl].copy_from_slice(&h[..hl]);
                Ipv4Packet::new_unchecked(&mut d[..hl]).fill_checksum();
                Verdict::Out(0, p)
            }
            Err(o) => {
                self.bad += 1;
                p.anno_mut().param_off = o as u16;
                Verdict::Out(1, p)
            }
        }
    }
}

impl Element for IPGWOptions {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.my = args.read_mp::<Ipv4Addr>("MYADDR")?;
        self.others = args.read_p::<IpList>("OTHERADDRS")?.unwrap_or_default().0;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        // A header without options passes untouched.
        let plain = |p: &Packet| {
            let off = ip_offset(p);
            p.data().get(off) == Some(&0x45) && off + 20 <= p.len()
        };
        push_sorted_or_pass(batch, cx, plain, |p, cx| self.action(p, cx));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, cx| self.action(p, cx))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("drops", |e| e.bad)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPGWOptions",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("ip_gw_options.rs"),
    make: || {
        Box::new(IPGWOptions {
            my: Ipv4Addr::UNSPECIFIED,
            others: Vec::new(),
            bad: 0,
            drops: Drops::default(),
        })
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    fn header(opts: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; 20];
        h[0] = 0x40 | ((20 + opts.len()) / 4) as u8;
        h.extend_from_slice(opts);
        h
    }

    #[test]
    fn record_route_and_timestamp() {
        let me = Ipv4Addr::new(198, 18, 0, 1);
        // RR with two slots, then TS flag 1 with one slot.
        let mut h = header(&[
            7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 68, 12, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ]);
        assert_eq!(process_options(&mut h, me, &[], 1234), Ok(true));
        assert_eq!(&h[23..27], &[198, 18, 0, 1]);
        assert_eq!(h[22], 8);
        assert_eq!(&h[35..39], &[198, 18, 0, 1]);
        assert_eq!(&h[39..43], &1234u32.to_be_bytes());
        assert_eq!(h[33], 13);
        // Second pass: RR slot 2 filled, TS full -> overflow 1.
        assert_eq!(process_options(&mut h, me, &[], 1), Ok(true));
        assert_eq!(h[22], 12);
        assert_eq!(h[34] >> 4, 1);
        // Third pass: RR full stays, TS overflow 2.
        assert_eq!(process_options(&mut h, me, &[], 1), Ok(true));
        assert_eq!(h[22], 12);
    }

    #[test]
    fn bad_options() {
        let me = Ipv4Addr::new(1, 2, 3, 4);
        let mut h = header(&[7, 40, 4, 0]);
        assert_eq!(process_options(&mut h, me, &[], 0), Err(21));
        let mut h = header(&[7, 7, 2, 0, 0, 0, 0, 0]);
        assert_eq!(process_options(&mut h, me, &[], 0), Err(22));
        let mut h = header(&[68, 8, 5, 2, 0, 0, 0, 0]);
        assert_eq!(process_options(&mut h, me, &[], 0), Err(23));
        let mut h = header(&[1, 1, 1, 130]);
        assert_eq!(process_options(&mut h, me, &[], 0), Err(24));
        let mut h = header(&[131, 7, 4, 9, 9, 9, 9, 0]);
        assert_eq!(process_options(&mut h, me, &[], 0), Ok(false));
    }

    /// The cases where Click's rules differ from a naive reading: checked against
    /// elements/ip/ipgwoptions.cc.
    #[test]
    fn pointers_at_the_edges_follow_click() {
        let me = Ipv4Addr::new(1, 2, 3, 4);
        // Record Route: pointers 0 to 3 and unaligned ones are errors at the pointer; the
        // full option (pointer 8 in a 7-byte option) passes unchanged.
        for ptr in [0u8, 1, 2, 3, 5, 6, 9, 200] {
            let mut h = header(&[7, 7, ptr, 0, 0, 0, 0, 0]);
            assert_eq!(process_options(&mut h, me, &[], 0), Err(22), "RR ptr {ptr}");
        }
        let mut h = header(&[7, 7, 8, 9, 9, 9, 9, 0]);
        assert_eq!(process_options(&mut h, me, &[], 0), Ok(false));
        // Timestamp flag 0 or 1 with the pointer past the end, even far past: overflow + 1.
        for (ptr, flg) in [(13u8, 0u8), (45, 0), (255, 1), (9, 1)] {
            let mut h = header(&[68, 12, ptr, 0x20 | flg, 0, 0, 0, 0, 0, 0, 0, 0]);
            assert_eq!(
                process_options(&mut h, me, &[], 0),
                Ok(true),
                "TS ptr {ptr}"
            );
            assert_eq!(h[23], 0x30 | flg);
            assert_eq!(h[22], ptr);
        }
        // Overflow already at 15: error at the flags byte.
        let mut h = header(&[68, 12, 13, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(process_options(&mut h, me, &[], 0), Err(23));
        // Pointer below 5: error at the pointer.
        let mut h = header(&[68, 12, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(process_options(&mut h, me, &[], 0), Err(22));
        // Flag 3 with no room for another address and timestamp: error at the flags byte,
        // whichever address is next.
        let mut h = header(&[68, 12, 9, 3, 1, 2, 3, 4, 0, 0, 0, 0]);
        assert_eq!(process_options(&mut h, me, &[], 7), Err(23));
        let mut h = header(&[68, 12, 5, 3, 1, 2, 3, 4, 0, 0, 0, 0]);
        assert_eq!(process_options(&mut h, me, &[], 7), Ok(true));
        assert_eq!(&h[28..32], &7u32.to_be_bytes());
        assert_eq!(h[22], 13);
    }
}
