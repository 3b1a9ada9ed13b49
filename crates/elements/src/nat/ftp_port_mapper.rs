//! FTPPortMapper — maps the data connections FTP PORT commands announce through rewriters
//!
//! Synopsis: `FTPPortMapper(CONTROL_REWRITER, DATA_REWRITER, DATA_REWRITER_INPUT)`
//!
//! Ports: 1 input, 1 output; agnostic.
//!
//! With Click 2.1's semantics. Expects the packets of FTP control connections, on their way
//! to CONTROL_REWRITER (a TCPRewriter) downstream. A packet whose TCP payload starts with a
//! PORT command (`PORT` in any case, a space, optional spaces, six decimal numbers below 256
//! separated by commas, then a carriage return or line feed), and whose flow has a mapping
//! in CONTROL_REWRITER, announces a data connection from the address and port the numbers
//! give to the packet's destination at its destination port minus one. FTPPortMapper then:
//! - finds that data flow's mapping in DATA_REWRITER, or makes one as input
//!   DATA_REWRITER_INPUT's specification says (as if a data packet had arrived there); the
//!   mapping's REPLY_ANNO byte becomes the control mapping's;
//! - rewrites the command's numbers to the address and port the data flow is rewritten to,
//!   growing or shrinking the packet, and sets the IP length (the IP checksum updated
//!   incrementally) and a freshly computed TCP checksum;
//! - records the length change on the control mapping as a sequence-number delta from the
//!   sequence number after this payload on: CONTROL_REWRITER then moves later sequence
//!   numbers of this direction, and moves back acknowledgement numbers and SACK blocks of
//!   the other, updating the TCP checksum.
//!
//! The control packet's addresses and ports are left to CONTROL_REWRITER. Every packet
//! leaves by output 0: other packets (no PORT command, a malformed one, no control mapping,
//! no data mapping could be made, not TCP) leave unchanged; none is dropped. A PORT command
//! must be whole in one packet and first in its payload.
//!
//! Arguments:
//! - `CONTROL_REWRITER`: the TCPRewriter the control packets pass through downstream.
//! - `DATA_REWRITER`: the rewriter (IPRewriter, TCPRewriter, UDPRewriter, ...) the data
//!   connection passes through; may be CONTROL_REWRITER.
//! - `DATA_REWRITER_INPUT` (integer): an input of DATA_REWRITER whose specification makes
//!   the data mappings, usually a pattern.
//!
//! Handlers: `mapped` (r): PORT commands rewritten.
//!
//! Under `-j N` each thread that reaches it has its own copy (it keeps nothing but its
//! count; the rewriters' tables it changes are shared, under their locks); the counts are
//! summed.
//!
//! Example: `IPRewriterPatterns(pat 198.18.0.1 1024-65535# - -);
//! rw :: TCPRewriter(pattern pat 0 1, drop);
//! inside -> FTPPortMapper(rw, rw, 0) -> [0]rw;`

use std::io::Write;
use std::net::Ipv4Addr;

use sluice_core::Timestamp;
use sluice_core::{Concurrency, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx};
use sluice_core::{Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::checksum::{fold, pseudo_header_v4, sum16, update16};
use sluice_wire::Ipv4Packet;

use super::flow_table::FlowId;
use super::rewrite::{self, TCP};
use super::rewriter::{Rewriter, RewriterLink};

/// A rewriter named in the arguments.
struct Named {
    /// The argument.
    name: String,
    /// Its element index.
    index: usize,
    /// How it is reached, from initialisation.
    link: Option<RewriterLink>,
}

/// The FTPPortMapper element.
pub struct FTPPortMapper {
    control: Named,
    data: Named,
    input: usize,
    mapped: u64,
}

impl Default for FTPPortMapper {
    fn default() -> FTPPortMapper {
        let none = || Named {
            name: String::new(),
            index: 0,
            link: None,
        };
        FTPPortMapper {
            control: none(),
            data: none(),
            input: 0,
            mapped: 0,
        }
    }
}

/// A parsed PORT command: where its numbers start and end in the payload, and the address
/// and port they give.
struct PortCommand {
    start: usize,
    end: usize,
    addr: Ipv4Addr,
    port: u16,
}

/// Parses the PORT command at the start of `payload`, if it is one.
fn parse_port(payload: &[u8]) -> Option<PortCommand> {
    if payload.len() < 5 || !payload[..4].eq_ignore_ascii_case(b"PORT") || payload[4] != b' ' {
        return None;
    }
    let mut pos = 5;
    while payload.get(pos) == Some(&b' ') {
        pos += 1;
    }
    let start = pos;
    let mut nums = [0u32; 6];
    let mut which = 0;
    while pos < payload.len() && which < 6 {
        match payload[pos] {
            c @ b'0'..=b'9' => {
                nums[which] = nums[which]
                    .saturating_mul(10)
                    .saturating_add(u32::from(c - b'0'))
            }
            b',' => which += 1,
            _ => break,
        }
        pos += 1;
    }
    if which != 5 || !matches!(payload.get(pos), Some(b'\r' | b'\n')) {
        return None;
    }
    let mut b = [0u8; 6];
    for (byte, &n) in b.iter_mut().zip(&nums) {
        *byte = u8::try_from(n).ok()?;
    }
    Some(PortCommand {
        start,
        end: pos,
        addr: Ipv4Addr::new(b[0], b[1], b[2], b[3]),
        port: u16::from_be_bytes([b[4], b[5]]),
    })
}

impl FTPPortMapper {
    /// Rewrites the PORT command of packet `p`, if it has one and its mappings can be found
    /// or made; `None` leaves the packet unchanged.
    fn map_port(&mut self, p: &mut Packet, now: Timestamp) -> Option<()> {
        let (control, data) = (self.control.link.as_ref()?, self.data.link.as_ref()?);
        let h = rewrite::parse(p).filter(|h| h.proto == TCP && h.first_frag && h.tlen >= 20)?;
        let tcp = h.off + h.hl;
        let end = tcp + h.tlen;
        let d = p.data();
        let payload = tcp + usize::from(d[tcp + 12] >> 4) * 4;
        if payload < tcp + 20 || payload > end {
            return None;
        }
        let cmd = parse_port(&d[payload..end])?;
        let reply_anno = control.tcp_entry(&h.id)?;
        let announced = FlowId {
            saddr: cmd.addr,
            sport: cmd.port,
            daddr: h.id.daddr,
            dport: h.id.dport.wrapping_sub(1),
        };
        let to = data.tcp_mapping(&announced, self.input, reply_anno, now)?;
        let [a, b, c, e] = to.saddr.octets();
        let [ph, pl] = to.sport.to_be_bytes();
        let mut buf = [0u8; 24];
        let mut w = &mut buf[..];
        write!(w, "{a},{b},{c},{e},{ph},{pl}").ok()?;
        let text_len = 24 - w.len();
        let (old_len, new_len) = (cmd.end - cmd.start, text_len);
        let ip_total = Ipv4Packet::new_unchecked(&d[h.off..]).total_len();
        if usize::from(ip_total) != h.hl + h.tlen {
            // A truncated packet: its length fields cannot be rewritten consistently.
            return None;
        }
        let new_total = u16::try_from(usize::from(ip_total) + new_len - old_len).ok()?;
        let seq = u32::from_be_bytes([d[tcp + 4], d[tcp + 5], d[tcp + 6], d[tcp + 7]]);
        let trigger = seq.wrapping_add((end - payload) as u32);

        // Move the rest of the payload (and any trailer) and write the new numbers.
        let (from, to_at) = (payload + cmd.end, payload + cmd.start + new_len);
        let len = p.len();
        if new_len > old_len {
            p.put(new_len - old_len);
        }
        let d = p.data_mut();
        d.copy_within(from..len, to_at);
        d[payload + cmd.start..to_at].copy_from_slice(&buf[..new_len]);
        if new_len < old_len {
            p.take(old_len - new_len);
        }

        let d = p.data_mut();
        let mut ip = Ipv4Packet::new_unchecked(&mut d[h.off..]);
        let sum = update16(ip.checksum(), ip_total, new_total);
        ip.set_total_len(new_total);
        ip.set_checksum(sum);
        let (src, dst) = (ip.src(), ip.dst());
        let seg = &mut d[tcp..h.off + usize::from(new_total)];
        seg[16..18].fill(0);
        let sum =
            u64::from(pseudo_header_v4(src, dst, TCP, seg.len() as u16)) + u64::from(sum16(seg));
        seg[16..18].copy_from_slice(&(!fold(sum)).to_be_bytes());

        control.add_seq_delta(&h.id, trigger, new_len as i32 - old_len as i32);
        self.mapped += 1;
        Some(())
    }
}

/// Looks up a rewriter named in the arguments at initialisation.
fn link(n: &mut Named, what: &str, cx: &InitCx) -> Result<(), String> {
    let link = cx
        .element(n.index)
        .and_then(|e| e.as_any().downcast_ref::<Rewriter>())
        .map(Rewriter::link)
        .ok_or_else(|| format!("{what} '{}' is not a rewriter", n.name))?;
    n.link = Some(link);
    Ok(())
}

impl Element for FTPPortMapper {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.control.name = args.read_mp("CONTROL_REWRITER")?;
        self.data.name = args.read_mp("DATA_REWRITER")?;
        self.input = args.read_mp("DATA_REWRITER_INPUT")?;
        let mut ok = true;
        for (n, what) in [
            (&mut self.control, "CONTROL_REWRITER"),
            (&mut self.data, "DATA_REWRITER"),
        ] {
            match cx.element_index(&n.name) {
                Some(i) => n.index = i,
                None => {
                    args.error(format!("{what}: no element named '{}'", n.name));
                    ok = false;
                }
            }
        }
        ok.then_some(()).ok_or(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        link(&mut self.control, "CONTROL_REWRITER", cx)?;
        link(&mut self.data, "DATA_REWRITER", cx)?;
        if !self.control.link.as_ref().is_some_and(RewriterLink::is_tcp) {
            return Err(format!(
                "CONTROL_REWRITER '{}' is not a TCPRewriter",
                self.control.name
            ));
        }
        if self
            .data
            .link
            .as_ref()
            .is_some_and(|l| self.input >= l.ninputs())
        {
            return Err("DATA_REWRITER_INPUT out of range".into());
        }
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        self.map_port(&mut p, cx.now());
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().read("mapped", |e| e.mapped).into()
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Replicated
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "FTPPortMapper",
    ports: "1/1",
    processing: "a/a",
    flow: "",
    source: include_str!("ftp_port_mapper.rs"),
    make: || Box::<FTPPortMapper>::default(),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_commands_are_parsed_as_click_does() {
        let c = parse_port(b"port  198,18,0,1,4,1\r\n").unwrap();
        assert_eq!((c.start, c.end), (6, 20));
        assert_eq!((c.addr, c.port), (Ipv4Addr::new(198, 18, 0, 1), 1025));
        assert!(parse_port(b"PORT 198,18,0,1,4,1").is_none());
        assert!(parse_port(b"PORT 198,18,0,1,4,256\n").is_none());
        assert!(parse_port(b"PORT 198,18,0,1,4\n").is_none());
        assert!(parse_port(b"PORTS 1,2,3,4,5,6\n").is_none());
    }
}
