//! IP6Print — pretty-prints IPv6 packets
//!
//! Synopsis: `IP6Print([LABEL, keywords NBYTES, CONTENTS])`
//!
//! Ports: 1 input, 1 output, agnostic. Packets pass unchanged. Expects IPv6 packets (network
//! header annotation set, or the IPv6 header at the start). For each packet prints to
//! standard error, in Click's format,
//!
//! `LABEL: SRC -> DST plen PAYLOADLEN, next NEXTHEADER, hlim HOPLIMIT`
//!
//! with the addresses as Click writes them (`2001:db8::1`, `::0.0.0.1` for `::1`), the
//! payload length, next header and hop limit fields in decimal, and `LABEL: ` left out when
//! LABEL is empty. A packet too short for an IPv6 header prints `truncated-ip6` instead. With
//! CONTENTS, the packet's first NBYTES bytes from its start follow in hexadecimal, each line
//! indented by two spaces, 24 bytes to a line in groups of four, as Click lays them out (a
//! space follows every fourth byte except at the end of a line, and a full last line is
//! followed by an indented empty one).
//!
//! Arguments:
//! - `LABEL` (string, default empty).
//! - `CONTENTS` (bool, default false): also print the bytes.
//! - `NBYTES` (unsigned, default 1500): how many bytes CONTENTS prints at most.
//!
//! Handlers: none besides the router's.
//!
//! Example: `CheckIP6Header -> IP6Print(in) -> ...` prints
//! `in: 2001:db8::1 -> 2001:db8::2 plen 16, next 17, hlim 64`.

use std::fmt::Write;

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Packet};
use sluice_lang::args::Args;
use sluice_wire::ipv6::HEADER_LEN;
use sluice_wire::Ipv6Packet;

use super::common::Ip6;
use crate::ip::common::ip_offset;

/// The IP6Print element.
pub struct IP6Print {
    label: String,
    contents: bool,
    nbytes: usize,
}

impl Default for IP6Print {
    fn default() -> Self {
        IP6Print {
            label: String::new(),
            contents: false,
            nbytes: 1500,
        }
    }
}

impl IP6Print {
    /// The text printed for `p` (lines separated by newlines, no trailing newline).
    fn format(&self, p: &Packet) -> String {
        let mut s = String::new();
        if !self.label.is_empty() {
            let _ = write!(s, "{}: ", self.label);
        }
        let d = p.data();
        match d.get(ip_offset(p)..).filter(|b| b.len() >= HEADER_LEN) {
            Some(b) => {
                let ip = Ipv6Packet::new_unchecked(b);
                let _ = write!(
                    s,
                    "{} -> {} plen {}, next {}, hlim {}",
                    Ip6(ip.src()),
                    Ip6(ip.dst()),
                    ip.payload_len(),
                    ip.next_header(),
                    ip.hop_limit()
                );
            }
            None => s.push_str("truncated-ip6"),
        }
        if self.contents {
            s.push_str("\n  ");
            for (i, b) in d.iter().take(self.nbytes).enumerate() {
                let _ = write!(s, "{b:02x}");
                if i % 24 == 23 {
                    s.push_str("\n  ");
                } else if i % 4 == 3 {
                    s.push(' ');
                }
            }
        }
        s
    }
}

impl Element for IP6Print {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.label = args.read_p("LABEL")?.unwrap_or_default();
        args.read_into("CONTENTS", &mut self.contents)?;
        args.read_into("NBYTES", &mut self.nbytes)
    }

    fn simple_action(&mut self, p: Packet, _cx: &mut Cx) -> Option<Packet> {
        eprintln!("{}", self.format(&p));
        Some(p)
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IP6Print",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("ip6_print.rs"),
    make: || Box::<IP6Print>::default(),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(n: usize) -> Packet {
        let mut b = vec![0x60, 0, 0, 0, 0, 0, 17, 64];
        b[4..6].copy_from_slice(&(n as u16).to_be_bytes());
        b.extend_from_slice(
            &"2001:db8::1"
                .parse::<std::net::Ipv6Addr>()
                .unwrap()
                .octets(),
        );
        b.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
        b.extend((0..n).map(|i| i as u8));
        Packet::from_bytes(&b)
    }

    #[test]
    fn header_line() {
        let pr = IP6Print {
            label: "in".into(),
            ..Default::default()
        };
        assert_eq!(
            pr.format(&packet(8)),
            "in: 2001:db8::1 -> ::0.0.0.1 plen 8, next 17, hlim 64"
        );
        let pr = IP6Print::default();
        assert_eq!(pr.format(&Packet::from_bytes(&[0x60; 39])), "truncated-ip6");
    }

    #[test]
    fn contents_laid_out_as_click_does() {
        let pr = IP6Print {
            contents: true,
            nbytes: 10,
            ..Default::default()
        };
        assert_eq!(
            pr.format(&packet(8)),
            "2001:db8::1 -> ::0.0.0.1 plen 8, next 17, hlim 64\n  60000000 00081140 2001"
        );
        let pr = IP6Print {
            contents: true,
            nbytes: 8,
            ..pr
        };
        assert!(pr.format(&packet(8)).ends_with("\n  60000000 00081140 "));
        let pr = IP6Print {
            contents: true,
            nbytes: 24,
            ..pr
        };
        assert!(pr
            .format(&packet(8))
            .ends_with("\n  60000000 00081140 20010db8 00000000 00000000 00000001\n  "));
    }
}
