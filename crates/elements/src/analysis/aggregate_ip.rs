//! AggregateIP — sets the aggregate annotation from a field of the packet
//!
//! Synopsis: `AggregateIP(FIELD [, keywords INCREMENTAL, UNSHIFT_IP_ADDR])`
//!
//! Ports: 1 input, 1 or 2 outputs; agnostic, output 1 push.
//!
//! Sets each packet's aggregate annotation to a field of its IP header, transport header or
//! payload, read in host byte order. Packets that lack the field — no network header, too
//! short, a later fragment or another protocol for a transport or payload field — leave on
//! output 1, or are dropped and counted if it is not connected.
//!
//! FIELD is a header field name or an offset-length specification, either optionally
//! narrowed by a mask:
//! - Names: `ip vers`, `ip hl`, `ip tos`, `ip dscp`, `ip ecn`, `ip len`, `ip id`, `ip off`,
//!   `ip rf`, `ip df`, `ip mf`, `ip fragoff`, `ip ttl`, `ip proto`, `ip sum`, `ip src`, `ip
//!   dst`; `udp sport`, `udp dport`, `udp len`, `udp sum`; `tcp sport`, `tcp dport`, `tcp
//!   seq`, `tcp ack`, `tcp hl`, `tcp flags`, `tcp fin`, `tcp syn`, `tcp rst`, `tcp psh`,
//!   `tcp ackf`, `tcp urg`, `tcp win`, `tcp sum`, `tcp urp`; `icmp type`, `icmp code`, `icmp
//!   sum`; `sport` and `dport` (TCP or UDP).
//! - Offsets: `ip`, `transp` (`tcp`, `udp`, `icmp`: the same, for that protocol only) or
//!   `data` (the payload after a TCP or UDP header), then `[OFFSET:LENGTH]`,
//!   `[OFFSET1-OFFSET2]` (inclusive) or `[OFFSET]` in bytes (`,` may replace `:`), or the same
//!   in braces in bits: `{OFFSET:LENGTH}`.
//! - Masks: `/N` keeps the field's top N bits; `& MASK` keeps the bits of MASK, which must be
//!   one run of 1 bits within the field.
//!
//! The field is at most 32 bits long. `AggregateIP(ip src/8)`, `AggregateIP(ip src &
//! 0xFF000000)`, `AggregateIP(ip[12])` and `AggregateIP(ip{96-103})` all take the top byte of
//! the source address.
//!
//! Arguments:
//! - `FIELD` (mandatory): as above.
//! - `INCREMENTAL` (boolean, default false): the annotation becomes `old · 2^N + value` for
//!   an N-bit field, so that several AggregateIPs build one annotation from several fields.
//! - `UNSHIFT_IP_ADDR` (boolean, default false): for a field inside the source or destination
//!   address, the annotation is the masked address bits in place (`ip src/8` of 1.0.0.0
//!   gives 16777216 instead of 1).
//!
//! Handlers: `header` (r: `ip`, `transp` or `payload`), `bit_offset`, `bit_length` (r: the
//! field's place in that header, in bits); `drops`, `drop_details` (r: packets without the
//! field dropped for want of output 1).
//!
//! Example: `CheckIPHeader -> AggregateIP(udp dport) -> DFQSched(FLOWS 65536)`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::{Args, FromArg};

use crate::standard::util::{pull_split, push_split};

/// Which header a field is measured from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Header {
    Ip,
    Transport,
    Payload,
}

/// The transport protocol a field needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proto {
    Any,
    Tcp,
    Udp,
    Icmp,
    TcpOrUdp,
}

impl Proto {
    fn admits(self, p: u8) -> bool {
        match self {
            Proto::Any => true,
            Proto::Tcp => p == TCP,
            Proto::Udp => p == UDP,
            Proto::Icmp => p == ICMP,
            Proto::TcpOrUdp => p == TCP || p == UDP,
        }
    }
}

const ICMP: u8 = 1;
const TCP: u8 = 6;
const UDP: u8 = 17;

/// A field: `len` bits from bit `off` of `header`, for protocol `proto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    header: Header,
    proto: Proto,
    off: u32,
    len: u32,
}

/// Named fields: (name, header, protocol, bit offset, bit length).
const NAMES: &[(&str, Header, Proto, u32, u32)] = &[
    ("ip vers", Header::Ip, Proto::Any, 0, 4),
    ("ip hl", Header::Ip, Proto::Any, 4, 4),
    ("ip tos", Header::Ip, Proto::Any, 8, 8),
    ("ip dscp", Header::Ip, Proto::Any, 8, 6),
    ("ip ecn", Header::Ip, Proto::Any, 14, 2),
    ("ip len", Header::Ip, Proto::Any, 16, 16),
    ("ip id", Header::Ip, Proto::Any, 32, 16),
    ("ip off", Header::Ip, Proto::Any, 48, 16),
    ("ip rf", Header::Ip, Proto::Any, 48, 1),
    ("ip df", Header::Ip, Proto::Any, 49, 1),
    ("ip mf", Header::Ip, Proto::Any, 50, 1),
    ("ip fragoff", Header::Ip, Proto::Any, 51, 13),
    ("ip ttl", Header::Ip, Proto::Any, 64, 8),
    ("ip proto", Header::Ip, Proto::Any, 72, 8),
    ("ip sum", Header::Ip, Proto::Any, 80, 16),
    ("ip src", Header::Ip, Proto::Any, 96, 32),
    ("ip dst", Header::Ip, Proto::Any, 128, 32),
    ("udp sport", Header::Transport, Proto::Udp, 0, 16),
    ("udp dport", Header::Transport, Proto::Udp, 16, 16),
    ("udp len", Header::Transport, Proto::Udp, 32, 16),
    ("udp sum", Header::Transport, Proto::Udp, 48, 16),
    ("tcp sport", Header::Transport, Proto::Tcp, 0, 16),
    ("tcp dport", Header::Transport, Proto::Tcp, 16, 16),
    ("tcp seq", Header::Transport, Proto::Tcp, 32, 32),
    ("tcp ack", Header::Transport, Proto::Tcp, 64, 32),
    ("tcp hl", Header::Transport, Proto::Tcp, 96, 4),
    ("tcp flags", Header::Transport, Proto::Tcp, 104, 8),
    ("tcp fin", Header::Transport, Proto::Tcp, 111, 1),
    ("tcp syn", Header::Transport, Proto::Tcp, 110, 1),
    ("tcp rst", Header::Transport, Proto::Tcp, 109, 1),
    ("tcp psh", Header::Transport, Proto::Tcp, 108, 1),
    ("tcp ackf", Header::Transport, Proto::Tcp, 107, 1),
    ("tcp urg", Header::Transport, Proto::Tcp, 106, 1),
    ("tcp win", Header::Transport, Proto::Tcp, 112, 16),
    ("tcp sum", Header::Transport, Proto::Tcp, 128, 16),
    ("tcp urp", Header::Transport, Proto::Tcp, 144, 16),
    ("icmp type", Header::Transport, Proto::Icmp, 0, 8),
    ("icmp code", Header::Transport, Proto::Icmp, 8, 8),
    ("icmp sum", Header::Transport, Proto::Icmp, 16, 16),
    ("sport", Header::Transport, Proto::TcpOrUdp, 0, 16),
    ("dport", Header::Transport, Proto::TcpOrUdp, 16, 16),
];

impl Field {
    /// Parses a FIELD argument.
    fn parse(spec: &str) -> Result<Field, String> {
        let (body, mask) = match spec.find(['/', '&']) {
            Some(i) => (spec[..i].trim(), Some(spec[i..].trim())),
            None => (spec.trim(), None),
        };
        let words = body.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut f = match NAMES.iter().find(|n| n.0 == words) {
            Some(&(_, header, proto, off, len)) => Field {
                header,
                proto,
                off,
                len,
            },
            None => Field::parse_offsets(body)?,
        };
        if let Some(m) = mask {
            f.narrow(m)?;
        }
        match f.len {
            0 => Err("empty field".into()),
            1..=32 => Ok(f),
            _ => Err(format!("field too long ({} bits, at most 32)", f.len)),
        }
    }

    /// `ip[8:2]`, `transp{0-15}`, `data[4]`...
    fn parse_offsets(body: &str) -> Result<Field, String> {
        let bad = || format!("unknown field `{body}`");
        let open = body.find(['[', '{']).ok_or_else(bad)?;
        let (header, proto) = match body[..open].trim() {
            "ip" => (Header::Ip, Proto::Any),
            "transp" => (Header::Transport, Proto::Any),
            "tcp" => (Header::Transport, Proto::Tcp),
            "udp" => (Header::Transport, Proto::Udp),
            "icmp" => (Header::Transport, Proto::Icmp),
            "data" | "payload" => (Header::Payload, Proto::TcpOrUdp),
            _ => return Err(bad()),
        };
        let bits = body.as_bytes()[open] == b'{';
        let close = if bits { '}' } else { ']' };
        let inner = body[open + 1..]
            .trim_end()
            .strip_suffix(close)
            .ok_or_else(bad)?;
        let num = |s: &str| u32::from_arg(s.trim()).map_err(|_| bad());
        let (off, len) = if let Some((a, b)) = inner.split_once([':', ',']) {
            (num(a)?, num(b)?)
        } else if let Some((a, b)) = inner.split_once('-') {
            let (a, b) = (num(a)?, num(b)?);
            if b < a {
                return Err(bad());
            }
            (a, b - a + 1)
        } else {
            (num(inner)?, 1)
        };
        let unit = if bits { 1 } else { 8 };
        Ok(Field {
            header,
            proto,
            off: off.checked_mul(unit).ok_or_else(bad)?,
            len: len.checked_mul(unit).ok_or_else(bad)?,
        })
    }

    /// Applies a `/N` or `& MASK` suffix.
    fn narrow(&mut self, m: &str) -> Result<(), String> {
        if let Some(n) = m.strip_prefix('/') {
            match u32::from_arg(n.trim()) {
                Ok(n) if n >= 1 && n <= self.len => self.len = n,
                _ => return Err(format!("bad mask `{m}`")),
            }
            return Ok(());
        }
        let text = m.trim_start_matches('&').trim();
        let mask = u64::from_arg(text).map_err(|_| format!("bad mask `{m}`"))?;
        let run = mask >> mask.trailing_zeros();
        if mask == 0 || run & (run + 1) != 0 || 64 - mask.leading_zeros() > self.len {
            return Err(format!(
                "mask `{text}` must be one run of 1 bits inside the field"
            ));
        }
        let low = mask.trailing_zeros();
        let high = 63 - mask.leading_zeros();
        self.off += self.len - 1 - high;
        self.len = high - low + 1;
        Ok(())
    }

    /// The field's value in `p`, or `None` if `p` lacks it.
    fn extract(&self, p: &Packet) -> Option<u32> {
        let net = p.network_header()?;
        let base = match self.header {
            Header::Ip => net,
            Header::Transport | Header::Payload => {
                let (&vh, proto) = (net.first()?, *net.get(9)?);
                let frag = u16::from_be_bytes([*net.get(6)?, *net.get(7)?]) & 0x1fff;
                if frag != 0 || !self.proto.admits(proto) {
                    return None;
                }
                let transp = net.get(usize::from(vh & 0xf) * 4..)?;
                match self.header {
                    Header::Payload if proto == TCP => {
                        transp.get(usize::from(*transp.get(12)? >> 4) * 4..)?
                    }
                    Header::Payload => transp.get(8..)?,
                    _ => transp,
                }
            }
        };
        let (first, end) = (self.off / 8, (self.off + self.len).div_ceil(8));
        let bytes = base.get(first as usize..end as usize)?;
        let word = bytes.iter().fold(0u64, |w, &b| (w << 8) | u64::from(b));
        let shift = end * 8 - (self.off + self.len);
        Some(((word >> shift) & ((1u64 << self.len) - 1)) as u32)
    }

    /// How far to shift the value left to put it back in place in an IPv4 address, if the
    /// field lies inside one.
    fn address_shift(&self) -> Option<u32> {
        let end = self.off + self.len;
        (self.header == Header::Ip)
            .then(|| {
                [128, 160]
                    .into_iter()
                    .find(|&a| self.off >= a - 32 && end <= a)
            })
            .flatten()
            .map(|a| a - end)
    }
}

/// The AggregateIP element.
pub struct AggregateIP {
    field: Field,
    incremental: bool,
    /// Left shift of the value (UNSHIFT_IP_ADDR on an address field).
    unshift: u32,
}

impl Default for AggregateIP {
    fn default() -> AggregateIP {
        AggregateIP {
            field: Field {
                header: Header::Ip,
                proto: Proto::Any,
                off: 0,
                len: 32,
            },
            incremental: false,
            unshift: 0,
        }
    }
}

impl AggregateIP {
    /// Sets `p`'s annotation; false if `p` lacks the field.
    fn mark(&self, p: &mut Packet) -> bool {
        let Some(v) = self.field.extract(p) else {
            return false;
        };
        let a = &mut p.anno_mut().aggregate;
        *a = if self.incremental {
            a.checked_shl(self.field.len).unwrap_or(0).wrapping_add(v)
        } else {
            v << self.unshift
        };
        true
    }
}

impl Element for AggregateIP {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let spec: String = args.read_mp("FIELD")?;
        self.field = match Field::parse(&spec) {
            Ok(f) => f,
            Err(e) => {
                args.error(format!("FIELD: {e}"));
                return Err(());
            }
        };
        args.read_into("INCREMENTAL", &mut self.incremental)?;
        let unshift: bool = args.read("UNSHIFT_IP_ADDR")?.unwrap_or(false);
        self.unshift = match self.field.address_shift() {
            Some(s) if unshift => s,
            _ => 0,
        };
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_split(batch, cx, |p, _| self.mark(p));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_split(max, cx, |p, _| self.mark(p))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("header", |e| match e.field.header {
                Header::Ip => "ip",
                Header::Transport => "transp",
                Header::Payload => "payload",
            })
            .read("bit_offset", |e| e.field.off)
            .read("bit_length", |e| e.field.len)
            .unconnected_drops()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "AggregateIP",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("aggregate_ip.rs"),
    make: || Box::new(AggregateIP::default()),
};

#[cfg(test)]
mod tests {
    use super::{Field, Header, Proto};

    fn f(spec: &str) -> (Header, u32, u32) {
        let f = Field::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        (f.header, f.off, f.len)
    }

    #[test]
    fn equivalent_spellings() {
        for spec in [
            "ip src/8",
            "ip src & 0xFF000000",
            "ip[12]",
            "ip[12, 1]",
            "ip[12:1]",
            "ip{96, 8}",
            "ip{96-103}",
            "ip [12-12]",
        ] {
            assert_eq!(f(spec), (Header::Ip, 96, 8), "{spec}");
        }
        assert_eq!(f("ip[8:2] & 0x3F0"), (Header::Ip, 70, 6));
        assert_eq!(f("dport"), (Header::Transport, 16, 16));
        assert_eq!(Field::parse("tcp syn").unwrap().proto, Proto::Tcp);
        assert_eq!(f("data[0:4]"), (Header::Payload, 0, 32));
    }

    #[test]
    fn bad_fields() {
        for spec in [
            "ip[0:5]",
            "ip foo",
            "ip src & 0xF0F0",
            "ip ttl/9",
            "ip src/0",
            "ether[0]",
            "ip[3-1]",
            "ip{0:0}",
        ] {
            assert!(Field::parse(spec).is_err(), "{spec}");
        }
    }
}
