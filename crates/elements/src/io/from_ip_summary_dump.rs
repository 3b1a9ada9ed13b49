//! FromIPSummaryDump — reads packets from an IP summary dump file
//!
//! Synopsis: `FromIPSummaryDump(FILENAME [, keywords STOP, ACTIVE, ZERO, CHECKSUM, PROTO,
//! MULTIPACKET, FIELDS, FLOWID, DATA])`
//!
//! Ports: no inputs, 1 output, agnostic. Push: a task emits one packet per run, as Click's
//! does (so packets leave a classifier downstream in trace order). Pull: each pull returns
//! the next packets.
//!
//! Reads Click's text trace format, one packet per line (as ToIPSummaryDump writes it), and
//! builds a packet for each: an IPv4 header (protocol TCP unless `!proto`, PROTO, FLOWID or
//! the line says otherwise; TTL 100), the TCP, UDP or ICMP header of a first fragment, and
//! the payload, filled from the line's fields (see ToIPSummaryDump for the field names and
//! notations, including IP and TCP options); everything else is zero. The IP length is the
//! `ip_len` field, else the headers plus `payload_len`, else the bytes built. The timestamp,
//! paint and aggregate annotations come from their fields, the destination IP annotation is
//! the destination address; the network header is at the start.
//!
//! Header lines: `!data FIELD...` (or `!contents`) names the fields of the following lines
//! (FIELDS gives them until then); `!proto P` sets the default protocol; `!flowid SRC SPORT
//! DST DPORT [PROTO]` the default addresses and ports. Other `!` lines and `#` comments are
//! skipped. A missing field, or `-`, leaves its part of the packet at the default; a line
//! none of whose fields parses is reported once on standard error and counted in `drops`.
//! Binary dumps (`!binary`) and compressed files are not read: `!binary` ends the file with
//! an error.
//!
//! Arguments:
//! - `FILENAME` (string): the file, or `-` for standard input; not needed with DATA.
//! - `DATA` (string): read the dump from this string instead of a file.
//! - `STOP` (bool, default false): stop the router at the end of the dump.
//! - `ACTIVE` (bool, default true): whether packets flow; see `active`.
//! - `ZERO` (bool, default true): accepted; unset packet bytes are always zero.
//! - `CHECKSUM` (bool, default false): make packets as long as their IP length and set the
//!   IP, TCP, UDP and ICMP checksums; otherwise the bytes beyond what the line gives are in
//!   the extra-length annotation and checksums are zero unless given.
//! - `PROTO` (protocol, default 6): the default IP protocol.
//! - `MULTIPACKET` (bool, default false): emit `count` packets for a line.
//! - `FIELDS` (space-separated field names): the fields until a `!data` line.
//! - `FLOWID` (`SRC SPORT DST DPORT [PROTO]`): default addresses and ports.
//!
//! Handlers: `count` (r), `drops` (r: unparsable lines), `active` (rw), `encap` (r, `IP`),
//! `filesize` (r), `filepos` (r), `stop` (w: deactivate and stop the router).
//!
//! Example: `FromIPSummaryDump(trace.txt, STOP true, CHECKSUM true) -> CheckIPHeader -> ...`

use sluice_core::sched::DEFAULT_TICKETS;
use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, InitCx, Packet};
use sluice_lang::args::{split_words, unquote, Args};

use super::ipsumdump::{field, parse_flowid, parse_proto, Field, FlowId, Record};
use super::parse_bool;

/// The FromIPSummaryDump element.
pub struct FromIPSummaryDump {
    filename: Option<String>,
    text: Vec<u8>,
    pos: usize,
    stop: bool,
    active: bool,
    checksum: bool,
    multipacket: bool,
    proto: u8,
    fields: Vec<Option<Field>>,
    flow: Option<FlowId>,
    /// Copies of the last line's packet still to emit (MULTIPACKET).
    repeat: Option<(Packet, u32)>,
    ended: bool,
    complained: bool,
    count: u64,
    drops: u64,
}

impl Default for FromIPSummaryDump {
    fn default() -> Self {
        FromIPSummaryDump {
            filename: None,
            text: Vec::new(),
            pos: 0,
            stop: false,
            active: true,
            checksum: false,
            multipacket: false,
            proto: 6,
            fields: Vec::new(),
            flow: None,
            repeat: None,
            ended: false,
            complained: false,
            count: 0,
            drops: 0,
        }
    }
}

fn parse_fields(s: &str) -> Vec<Option<Field>> {
    split_words(s).iter().map(|w| field(&unquote(w))).collect()
}

impl FromIPSummaryDump {
    fn next_line(&mut self) -> Option<String> {
        if self.pos >= self.text.len() {
            return None;
        }
        let rest = &self.text[self.pos..];
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let line = String::from_utf8_lossy(&rest[..end])
            .trim_end_matches('\r')
            .to_string();
        self.pos += (end + 1).min(rest.len());
        Some(line)
    }

    /// Splits a packet line into words, keeping quoted strings whole.
    fn words(line: &str) -> Vec<&str> {
        let b = line.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            let start = i;
            while i < b.len() && !b[i].is_ascii_whitespace() {
                if b[i] == b'"' {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                }
                i += 1;
            }
            if i > start {
                out.push(&line[start..i.min(b.len())]);
            }
        }
        out
    }

    fn read_packet(&mut self, name: &str) -> Option<Packet> {
        if let Some((mut p, n)) = self.repeat.take() {
            if n > 1 {
                self.repeat = Some((p.clone_packet(), n - 1));
            }
            return Some(p);
        }
        loop {
            let line = self.next_line()?;
            let t = line.trim_start();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if let Some(bang) = t.strip_prefix('!') {
                let w: Vec<&str> = bang.split_whitespace().collect();
                match w.first().copied() {
                    Some("data" | "contents") => self.fields = parse_fields(&w[1..].join(" ")),
                    Some("proto") => match w.get(1).and_then(|p| parse_proto(p)) {
                        Some(p) => self.proto = p,
                        None => eprintln!("{name}: bad !proto"),
                    },
                    Some("flowid") => match parse_flowid(&w[1..]) {
                        Some(f) => self.flow = Some(f),
                        None => eprintln!("{name}: bad !flowid"),
                    },
                    Some("binary") => {
                        eprintln!("{name}: binary IP summary dumps are not supported");
                        self.pos = self.text.len();
                        return None;
                    }
                    _ => {}
                }
                continue;
            }
            let mut rec = Record::default();
            let mut n = 0;
            for (f, v) in self.fields.iter().zip(Self::words(t)) {
                if let Some(f) = f {
                    if v != "-" && rec.set(*f, v) {
                        n += 1;
                    }
                }
            }
            if n == 0 {
                self.drops += 1;
                if !self.complained {
                    self.complained = true;
                    if self.fields.is_empty() {
                        eprintln!("{name}: no '!data' provided");
                    } else {
                        eprintln!("{name}: packet parse error");
                    }
                }
                continue;
            }
            let mut p = rec.build(self.proto, self.flow.as_ref(), self.checksum);
            let copies = if self.multipacket {
                rec.count.unwrap_or(1)
            } else {
                1
            };
            match copies {
                0 => continue,
                1 => return Some(p),
                c => {
                    self.repeat = Some((p.clone_packet(), c - 1));
                    return Some(p);
                }
            }
        }
    }

    fn fill(&mut self, max: usize, cx: &mut Cx) -> Batch {
        let mut b = Batch::new();
        while b.len() < max {
            match self.read_packet(cx.name()) {
                Some(p) => {
                    self.count += 1;
                    let _ = b.push(p);
                }
                None => {
                    self.finish(cx);
                    break;
                }
            }
        }
        b
    }

    fn finish(&mut self, cx: &mut Cx) {
        if !self.ended {
            self.ended = true;
            if self.stop {
                cx.request_driver_stop();
            }
        }
    }
}

impl Element for FromIPSummaryDump {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.filename = args.read_p("FILENAME")?;
        let data: Option<String> = args.read("DATA")?;
        self.stop = args.read("STOP")?.unwrap_or(false);
        self.active = args.read("ACTIVE")?.unwrap_or(true);
        let _: Option<bool> = args.read("ZERO")?;
        self.checksum = args.read("CHECKSUM")?.unwrap_or(false);
        self.multipacket = args.read("MULTIPACKET")?.unwrap_or(false);
        if let Some(p) = args.read::<String>("PROTO")? {
            match parse_proto(p.trim()) {
                Some(p) => self.proto = p,
                None => {
                    args.error("PROTO: expected IP protocol");
                    return Err(());
                }
            }
        }
        if let Some(f) = args.read::<String>("FIELDS")? {
            self.fields = parse_fields(&f);
        }
        if let Some(f) = args.read::<String>("FLOWID")? {
            match parse_flowid(&f.split_whitespace().collect::<Vec<_>>()) {
                Some(f) => self.flow = Some(f),
                None => {
                    args.error("FLOWID: expected 'SRC SPORT DST DPORT [PROTO]'");
                    return Err(());
                }
            }
        }
        match (data, &self.filename) {
            (Some(d), _) => self.text = d.into_bytes(),
            (None, Some(_)) => {}
            (None, None) => {
                args.error("missing mandatory FILENAME argument");
                return Err(());
            }
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if self.text.is_empty() {
            if let Some(f) = &self.filename {
                self.text = if f == "-" {
                    let mut v = Vec::new();
                    std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)
                        .map_err(|e| format!("-: {e}"))?;
                    v
                } else {
                    std::fs::read(f).map_err(|e| format!("{f}: {e}"))?
                };
            }
        }
        if cx.output_is_push(0) {
            cx.add_task(DEFAULT_TICKETS, self.active);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.active || self.ended {
            return false;
        }
        let b = self.fill(1, cx);
        let worked = !b.is_empty();
        if worked {
            cx.push(0, b);
        }
        if !self.ended {
            cx.reschedule();
        }
        worked
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        if !self.active || self.ended {
            return Batch::new();
        }
        self.fill(max, cx)
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("count"),
                Handler::r("drops"),
                Handler::rw("active"),
                Handler::r("encap"),
                Handler::r("filesize"),
                Handler::r("filepos"),
                Handler::w("stop"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "count" => self.count.to_string(),
            "drops" => self.drops.to_string(),
            "active" => self.active.to_string(),
            "encap" => "IP".into(),
            "filesize" => self.text.len().to_string(),
            "filepos" => self.pos.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &mut Cx) -> Result<(), String> {
        match name {
            "active" => {
                self.active = parse_bool(value)?;
                if self.active && !self.ended {
                    cx.reschedule();
                }
            }
            "stop" => {
                self.active = false;
                cx.request_driver_stop();
            }
            _ => return Err(format!("no handler {name}")),
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "FromIPSummaryDump",
    ports: "0/1",
    processing: "a/a",
    flow: "",
    source: include_str!("from_ip_summary_dump.rs"),
    make: || Box::<FromIPSummaryDump>::default(),
};
