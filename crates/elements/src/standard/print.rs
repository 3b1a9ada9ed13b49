//! Print — prints packet contents to standard error
//!
//! Synopsis: `Print([LABEL, MAXLENGTH, *keywords* CONTENTS, TIMESTAMP, LENGTH, HEADROOM,
//! PRINTANNO, ACTIVE])`
//!
//! Ports: 1 input, 1 output, agnostic. Prints one line per packet and passes the packet on
//! unchanged. The line is, in order: `LABEL: ` (when LABEL is not empty), `TIMESTAMP: ` (when
//! TIMESTAMP is true; seconds.nanoseconds), the length right-aligned in 4 columns,
//! ` (h HEADROOM t TAILROOM)` (when HEADROOM is true), then ` | ` and up to MAXLENGTH bytes of
//! data: in hex, with a space after every 4 bytes (`45000054 00004000 ...`), or as ASCII
//! (printable characters as they are, others as `.`). With PRINTANNO the 16 user annotation
//! bytes follow in hex after ` anno `.
//!
//! Example line: `ok:   60 | 45000028 00004000 40060000 c612000a c612000b 04d20050`
//!
//! Arguments:
//! - `LABEL` (string, default empty).
//! - `MAXLENGTH` (integer, default 24): bytes of data printed; negative prints everything.
//! - `CONTENTS` (`HEX`, `ASCII` or `NONE`, default HEX).
//! - `TIMESTAMP` (boolean, default false).
//! - `LENGTH` (boolean, default true; a Sluice extension): print the length.
//! - `HEADROOM` (boolean, default false), `PRINTANNO` (boolean, default false).
//! - `ACTIVE` (boolean, default true): print nothing while false.
//!
//! Handlers: `active` (rw), `count` (r, packets printed).
//!
//! Example: `FromDump(f.pcap) -> Print(in, 64) -> Discard`

use std::fmt::Write as _;
use std::io::Write as _;

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::Args;

use super::discard::parse_bool;

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
    length: bool,
    headroom: bool,
    printanno: bool,
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
            length: true,
            headroom: false,
            printanno: false,
            active: true,
            count: 0,
            line: String::new(),
        }
    }
}

impl Print {
    /// Formats the line for `p` into `self.line` (without the newline).
    fn format(&mut self, p: &Packet) {
        let s = &mut self.line;
        s.clear();
        if !self.label.is_empty() {
            s.push_str(&self.label);
            s.push_str(": ");
        }
        if self.timestamp {
            let _ = write!(s, "{}: ", p.timestamp());
        }
        if self.length {
            let _ = write!(s, "{:4}", p.len());
        }
        if self.headroom {
            let _ = write!(s, " (h{} t{})", p.headroom(), p.tailroom());
        }
        if self.printanno {
            s.push_str(" anno ");
            for b in p.anno().user {
                let _ = write!(s, "{:02x}", b);
            }
        }
        let d = p.data();
        let n = if self.maxlen < 0 {
            d.len()
        } else {
            d.len().min(self.maxlen as usize)
        };
        match self.contents {
            Contents::None => {}
            Contents::Hex => {
                if self.length || !s.is_empty() {
                    s.push_str(" | ");
                }
                for (i, b) in d[..n].iter().enumerate() {
                    if i > 0 && i % 4 == 0 {
                        s.push(' ');
                    }
                    let _ = write!(s, "{:02x}", b);
                }
            }
            Contents::Ascii => {
                if self.length || !s.is_empty() {
                    s.push_str(" | ");
                }
                for &b in &d[..n] {
                    s.push(if (0x20..0x7f).contains(&b) {
                        b as char
                    } else {
                        '.'
                    });
                }
            }
        }
    }
}

impl Element for Print {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.label = args.read_p("LABEL")?.unwrap_or_default();
        self.maxlen = args.read_p("MAXLENGTH")?.unwrap_or(24);
        if let Some(c) = args.read::<String>("CONTENTS")? {
            self.contents = match c.to_ascii_uppercase().as_str() {
                "HEX" | "TRUE" => Contents::Hex,
                "ASCII" => Contents::Ascii,
                "NONE" | "FALSE" => Contents::None,
                _ => {
                    args.error("CONTENTS: expected HEX, ASCII or NONE");
                    return Err(());
                }
            };
        }
        self.timestamp = args.read("TIMESTAMP")?.unwrap_or(false);
        self.length = args.read("LENGTH")?.unwrap_or(true);
        self.headroom = args.read("HEADROOM")?.unwrap_or(false);
        self.printanno = args.read("PRINTANNO")?.unwrap_or(false);
        self.active = args.read("ACTIVE")?.unwrap_or(true);
        Ok(())
    }

    fn simple_action(&mut self, p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if self.active {
            self.format(&p);
            self.line.push('\n');
            self.count += 1;
            let _ = std::io::stderr().lock().write_all(self.line.as_bytes());
        }
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::rw("active"), Handler::r("count")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "active" => self.active.to_string(),
            "count" => self.count.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "active" => self.active = parse_bool(value)?,
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
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
        p.format(&Packet::from_bytes(data));
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
        p.label.clear();
        p.contents = Contents::Ascii;
        assert_eq!(line(&mut p, b"hi\x00there"), "   8 | hi.th");
        p.contents = Contents::None;
        assert_eq!(line(&mut p, b"abc"), "   3");
    }
}
