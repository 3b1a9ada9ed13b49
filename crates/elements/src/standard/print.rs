//! Print — prints packet contents to standard error
//!
//! Synopsis: `Print([LABEL, MAXLENGTH, *keywords* CONTENTS, TIMESTAMP, PRINTANNO, HEADROOM,
//! CPU, ACTIVE])`
//!
//! Ports: 1 input, 1 output, agnostic. Prints one line per packet and passes the packet on
//! unchanged. The line is, in order: `LABEL` (when not empty), `(THREAD)` (when CPU is true:
//! the index of the thread running the element), `: TIMESTAMP` (when TIMESTAMP is true;
//! seconds.nanoseconds), `: ` and the packet length right-aligned in 4 columns (the `: `
//! separators appear only after something was printed before them), ` (hHEADROOM tTAILROOM)`
//! (when HEADROOM is true), ` | ` and the annotation area in hex (when PRINTANNO is true), and
//! ` | ` followed by up to MAXLENGTH bytes of data: in hex with a space after every 4 bytes
//! (`45000054 00004000 ...`), or as ASCII in groups of 8 characters, each group preceded by a
//! space, with bytes outside 32–126 shown as `.`.
//!
//! Example lines: `ok:   60 | 45000028 00004000 40060000 c612000a c612000b 04d20050`,
//! `  11 |  hello wo rld`.
//!
//! The annotation area printed by PRINTANNO is 48 bytes laid out as Click's: destination IP
//! address at 0 (the IPv6 destination fills 0–15 when no IPv4 one is set), paint at 16, ICMP
//! parameter-problem offset at 17, fix-IP-source flag at 19, aggregate (host order) at 20–23
//! (or the VLAN TCI at 20–21 when the aggregate is zero), and the 16 user bytes at 32–47.
//!
//! Arguments:
//! - `LABEL` (string, default empty).
//! - `MAXLENGTH` (integer, default 24): bytes of data printed; negative prints everything.
//!   `LENGTH` and `NBYTES` are Click's deprecated names for it.
//! - `CONTENTS` (`HEX`, `ASCII`, `NONE`, or a boolean: true means HEX, false NONE; default
//!   HEX).
//! - `TIMESTAMP`, `PRINTANNO`, `HEADROOM`, `CPU` (booleans, default false).
//! - `ACTIVE` (boolean, default true): print nothing while false.
//!
//! Handlers: `active` (rw), `count` (r, packets printed; a Sluice extension).
//!
//! Example: `FromDump(f.pcap) -> Print(in, 64) -> Discard`

use sluice_lang::args::FromArg;
use std::fmt::Write as _;
use std::io::Write as _;

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contents {
    Hex,
    Ascii,
    None,
}

/// The Print element.
pub struct Print {
    label: String,
    maxlen: i64,
    contents: Contents,
    timestamp: bool,
    headroom: bool,
    printanno: bool,
    cpu: bool,
    active: bool,
    count: u64,
    line: String,
}

impl Default for Print {
    fn default() -> Print {
        Print {
            label: String::new(),
            maxlen: 24,
            contents: Contents::Hex,
            timestamp: false,
            headroom: false,
            printanno: false,
            cpu: false,
            active: true,
            count: 0,
            line: String::new(),
        }
    }
}

/// The packet's annotations in Click's 48-byte layout (see the module documentation).
fn click_anno(p: &Packet) -> [u8; 48] {
    let a = p.anno();
    let mut img = [0u8; 48];
    if a.dst_ip.is_unspecified() {
        img[..16].copy_from_slice(&a.dst_ip6.octets());
    } else {
        img[..4].copy_from_slice(&a.dst_ip.octets());
    }
    img[16] = a.paint;
    img[17] = a.param_off.min(255) as u8;
    img[19] = a.fix_ip_src as u8;
    if a.aggregate != 0 {
        img[20..24].copy_from_slice(&a.aggregate.to_le_bytes());
    } else {
        img[20..22].copy_from_slice(&a.vlan_tci.to_be_bytes());
    }
    img[32..48].copy_from_slice(&a.user);
    img
}

impl Print {
    /// Formats the line for `p`, handled by thread `thread`, into `self.line` (without the
    /// newline).
    fn format(&mut self, p: &Packet, thread: usize) {
        let s = &mut self.line;
        s.clear();
        let mut sep = "";
        if !self.label.is_empty() {
            s.push_str(&self.label);
            sep = ": ";
        }
        if self.cpu {
            let _ = write!(s, "({})", thread);
            sep = ": ";
        }
        if self.timestamp {
            let _ = write!(s, "{}{}", sep, p.timestamp());
            sep = ": ";
        }
        let _ = write!(s, "{}{:4}", sep, p.len());
        if self.headroom {
            let _ = write!(s, " (h{} t{})", p.headroom(), p.tailroom());
        }
        if self.printanno {
            s.push_str(" | ");
            for b in click_anno(p) {
                let _ = write!(s, "{:02x}", b);
            }
        }
        let d = p.data();
        let n = match self.contents {
            Contents::None => 0,
            _ if self.maxlen < 0 => d.len(),
            _ => d.len().min(self.maxlen as usize),
        };
        if n == 0 {
            return;
        }
        s.push_str(" | ");
        for (i, &b) in d[..n].iter().enumerate() {
            if self.contents == Contents::Hex {
                if i > 0 && i % 4 == 0 {
                    s.push(' ');
                }
                let _ = write!(s, "{:02x}", b);
            } else {
                if i % 8 == 0 {
                    s.push(' ');
                }
                s.push(if (32..=126).contains(&b) {
                    b as char
                } else {
                    '.'
                });
            }
        }
    }
}

impl Element for Print {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.label = args.read_p("LABEL")?.unwrap_or_default();
        self.maxlen = args.read_p("MAXLENGTH")?.unwrap_or(self.maxlen);
        for old in ["LENGTH", "NBYTES"] {
            args.read_into(old, &mut self.maxlen)?;
        }
        if let Some(c) = args.read::<String>("CONTENTS")? {
            self.contents = match bool::from_arg(&c) {
                Ok(true) => Contents::Hex,
                Ok(false) => Contents::None,
                Err(_) => match c.to_ascii_uppercase().as_str() {
                    "HEX" => Contents::Hex,
                    "ASCII" => Contents::Ascii,
                    "NONE" => Contents::None,
                    _ => {
                        args.error(format!(
                            "bad contents value '{}'; should be 'NONE', 'HEX', or 'ASCII'",
                            c.to_ascii_uppercase()
                        ));
                        return Err(());
                    }
                },
            };
        }
        args.read_into("TIMESTAMP", &mut self.timestamp)?;
        args.read_into("PRINTANNO", &mut self.printanno)?;
        args.read_into("ACTIVE", &mut self.active)?;
        args.read_into("HEADROOM", &mut self.headroom)?;
        args.read_into("CPU", &mut self.cpu)
    }

    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        if self.active {
            self.format(&p, cx.thread());
            self.line.push('\n');
            self.count += 1;
            let _ = std::io::stderr().lock().write_all(self.line.as_bytes());
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("active", |e| &mut e.active)
            .read("count", |e| e.count)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Print",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("print.rs"),
    make: || Box::new(Print::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn line(p: &mut Print, data: &[u8]) -> String {
        p.format(&Packet::from_bytes(data), 0);
        p.line.clone()
    }

    #[test]
    fn hex_format_matches_click() {
        let mut p = Print {
            label: "ok".into(),
            ..Print::default()
        };
        let data: Vec<u8> = (0u8..30).collect();
        assert_eq!(
            line(&mut p, &data),
            "ok:   30 | 00010203 04050607 08090a0b 0c0d0e0f 10111213 14151617"
        );
        p.maxlen = 5;
        assert_eq!(line(&mut p, &data[..3]), "ok:    3 | 000102");
        p.contents = Contents::None;
        assert_eq!(line(&mut p, b"abc"), "ok:    3");
    }

    #[test]
    fn ascii_groups_of_eight_as_click() {
        let mut p = Print {
            contents: Contents::Ascii,
            maxlen: -1,
            ..Print::default()
        };
        assert_eq!(
            line(&mut p, b"hello world\x00\x7f~"),
            "  14 |  hello wo rld..~"
        );
        p.maxlen = 0;
        assert_eq!(line(&mut p, b"hello"), "   5");
    }

    #[test]
    fn separators_cpu_headroom_anno() {
        let mut p = Print {
            cpu: true,
            headroom: true,
            printanno: true,
            contents: Contents::None,
            ..Print::default()
        };
        let mut pk = Packet::from_bytes(b"abcd");
        pk.anno_mut().paint = 7;
        pk.anno_mut().dst_ip = std::net::Ipv4Addr::new(198, 18, 0, 1);
        p.format(&pk, 1);
        let anno = format!("c6120001{}07{}", "00".repeat(12), "00".repeat(31));
        let want = format!(
            "(1):    4 (h{} t{}) | {}",
            pk.headroom(),
            pk.tailroom(),
            anno
        );
        assert_eq!(p.line, want);
        p.cpu = false;
        p.headroom = false;
        p.printanno = false;
        p.timestamp = true;
        p.label = "x".into();
        pk.set_timestamp(sluice_core::Timestamp::from_parts(5, 1));
        p.format(&pk, 0);
        assert_eq!(p.line, "x: 5.000000001:    4");
    }
}
