//! IPFragmenter — fragments IP packets larger than the MTU
//!
//! Synopsis: `IPFragmenter(MTU, [keywords HONOR_DF, VERBOSE])`
//!
//! Ports: 1 input, 1 or 2 outputs, push.
//!
//! Expects IP packets with the network header annotation (or starting with their IP header).
//! Packets whose IP total length is at most MTU leave by output 0 unchanged. Larger packets:
//! - with the Don't Fragment bit set (and HONOR_DF true, the default) go to output 1 — connect
//!   it to `ICMPError(ADDR, unreachable, needfrag, PMTU MTU)`; without output 1 they are
//!   dropped. Counted in `drops` either way (Click's count).
//! - otherwise are split into fragments of at most MTU bytes, sent in order on output 0. Each
//!   fragment carries at most `(MTU − header length) & ~7` data bytes, its fragment offset
//!   (added to the original's) and More Fragments on all but the last (which keeps the
//!   original's MF bit). The first fragment keeps all the options; later fragments keep only
//!   the options with the copied bit (type ≥ 128), padded with End-of-Options to a 4-byte
//!   boundary (RFC 791 §3.2). Fragments get fresh checksums and copy the annotations.
//!
//! Packets without a valid IP header, or whose header leaves no room under the MTU for 8 data
//! bytes, are dropped and counted in `drop_details`.
//!
//! Arguments: `MTU` (unsigned); `HONOR_DF` (bool, default true); `VERBOSE` (bool).
//!
//! Handlers: `fragments` (r): fragments sent. `fragmented` (r): packets fragmented.
//! `drops` (r): DF packets too big. `drop_details` (r): packets dropped, by reason (bad
//! header; MTU too small; DF packets with output 1 unconnected). `mtu` (rw).
//!
//! Example: `fr :: IPFragmenter(1500) -> arpq; fr[1] -> ICMPError(198.18.0.1, unreachable,
//! needfrag, PMTU 1500) -> rt;`

use sluice_core::toolkit::OutBatch;
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, Table};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::ipv4::OPT_EOL;
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;

drop_reasons! {
    /// Why IPFragmenter drops a packet.
    enum Reason {
        BadHeader => "bad IP header",
        SmallMtu => "MTU too small for the header",
    }
}

/// The IPFragmenter element.
pub struct IPFragmenter {
    mtu: usize,
    honor_df: bool,
    verbose: bool,
    fragments: u64,
    fragmented: u64,
    /// DF packets too big, sent to output 1 (Click's `drops`).
    df: u64,
    drops: Drops<Reason>,
}

impl Default for IPFragmenter {
    fn default() -> Self {
        IPFragmenter {
            mtu: 1500,
            honor_df: true,
            verbose: false,
            fragments: 0,
            fragmented: 0,
            df: 0,
            drops: Drops::default(),
        }
    }
}

/// The header of later fragments: the fixed header plus the options to copy, padded.
fn later_header(h: &[u8], out: &mut [u8; 60]) -> usize {
    out[..20].copy_from_slice(&h[..20]);
    let mut n = 20;
    let mut i = 20;
    while i < h.len() {
        let t = h[i];
        if t == OPT_EOL {
            break;
        }
        if t == 1 {
            i += 1;
            continue;
        }
        let l = match h.get(i + 1) {
            Some(&l) if l >= 2 && i + l as usize <= h.len() => l as usize,
            _ => break,
        };
        if t & 0x80 != 0 {
            out[n..n + l].copy_from_slice(&h[i..i + l]);
            n += l;
        }
        i += l;
    }
    while n % 4 != 0 {
        out[n] = OPT_EOL;
        n += 1;
    }
    n
}

impl IPFragmenter {
    fn handle(&mut self, p: Packet, o0: &mut OutBatch, o1: &mut OutBatch, cx: &mut Cx) {
        let off = ip_offset(&p);
        let ip = match Ipv4Packet::new_checked(&p.data()[off..]) {
            Ok(ip) => ip,
            Err(_) => {
                self.drops.count(Reason::BadHeader);
                return;
            }
        };
        let total = ip.total_len() as usize;
        if total <= self.mtu {
            o0.add(p, cx);
            return;
        }
        if ip.dont_frag() && self.honor_df {
            self.df += 1;
            if self.verbose {
                eprintln!("{}: DF packet of {} bytes too big", cx.name(), total);
            }
            o1.add(p, cx);
            return;
        }
        let hl = ip.header_len();
        let mut later = [0u8; 60];
        let later_hl = later_header(&ip.as_bytes()[..hl], &mut later);
        let first_chunk = self.mtu.saturating_sub(hl) & !7;
        let later_chunk = self.mtu.saturating_sub(later_hl) & !7;
        if first_chunk == 0 || later_chunk == 0 {
            self.drops.count(Reason::SmallMtu);
            return;
        }
        let base_off = ip.frag_offset() as usize; // in 8-byte units
        let orig_mf = ip.more_frags();
        let payload = &ip.as_bytes()[hl..total];
        let mut pos = 0;
        self.fragmented += 1;
        while pos < payload.len() {
            let (h, h_len, chunk) = if pos == 0 {
                (&ip.as_bytes()[..hl], hl, first_chunk)
            } else {
                (&later[..later_hl], later_hl, later_chunk)
            };
            let n = chunk.min(payload.len() - pos);
            let last = pos + n == payload.len();
            let mut q = Packet::new(h_len + n);
            *q.anno_mut() = *p.anno();
            {
                let d = q.data_mut();
                d[..h_len].copy_from_slice(h);
                d[h_len..].copy_from_slice(&payload[pos..pos + n]);
                let mut f = Ipv4Packet::new_unchecked(&mut d[..]);
                f.set_header_len(h_len);
                f.set_total_len((h_len + n) as u16);
                let dfbit = f.dont_frag();
                f.set_flags_frag(0);
                f.set_dont_frag(dfbit);
                f.set_more_frags(!last || orig_mf);
                f.set_frag_offset((base_off + pos / 8) as u16);
                f.fill_checksum();
            }
            q.set_network_offset(0);
            q.set_transport_offset(h_len as isize);
            self.fragments += 1;
            o0.add(q, cx);
            pos += n;
        }
    }
}

impl Element for IPFragmenter {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.mtu = args.read_mp("MTU")?;
        args.read_into("HONOR_DF", &mut self.honor_df)?;
        args.read_into("VERBOSE", &mut self.verbose)?;
        if self.mtu < 28 {
            args.error("MTU: must be at least 28");
            return Err(());
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        // Fast path: every packet is a valid IP packet that fits the MTU, so the batch
        // leaves as it came.
        let mtu = self.mtu;
        if batch.iter().all(|p| {
            let off = ip_offset(p);
            matches!(Ipv4Packet::new_checked(&p.data()[off..]), Ok(ip) if ip.total_len() as usize <= mtu)
        }) {
            cx.push(0, batch);
            return;
        }
        let mut o0 = OutBatch::new(0);
        let mut o1 = OutBatch::new(1);
        for p in batch {
            self.handle(p, &mut o0, &mut o1, cx);
        }
        o0.flush(cx);
        o1.flush(cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("fragments", |e| e.fragments)
            .read("fragmented", |e| e.fragmented)
            .read("drops", |e| e.df)
            .drops(|e| &e.drops)
            .read("mtu", |e| e.mtu)
            .write("mtu", |e, v, _| match usize::from_arg(v) {
                Ok(m) if m >= 28 => {
                    e.mtu = m;
                    Ok(())
                }
                _ => Err("MTU: must be an integer of at least 28".into()),
            })
            .setting()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPFragmenter",
    ports: "1/1-2",
    processing: "h/h",
    flow: "x/x",
    source: include_str!("ip_fragmenter.rs"),
    make: || Box::<IPFragmenter>::default(),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_fragments_keep_copied_options_only() {
        let mut h = vec![0u8; 20];
        // RR (not copied, 7 bytes), NOP, LSRR (copied, 7 bytes), EOL
        h.extend_from_slice(&[7, 7, 4, 0, 0, 0, 0, 1, 131, 7, 4, 1, 2, 3, 4, 0]);
        h[0] = 0x40 | (h.len() / 4) as u8;
        let mut out = [0u8; 60];
        let n = later_header(&h, &mut out);
        assert_eq!(n, 28);
        assert_eq!(&out[20..28], &[131, 7, 4, 1, 2, 3, 4, 0]);
    }
}
