//! FromIPSummaryDump — reads packets from an IP summary dump file
//!
//! Synopsis: `FromIPSummaryDump(FILENAME [, keywords STOP, ACTIVE, TIMING, ZERO, CHECKSUM,
//! PROTO, MULTIPACKET, FIELDS, FLOWID, DATA])`
//!
//! Ports: no inputs, 1 output, agnostic. Push: a task emits one packet each time it runs, as
//! Click's does (so each packet goes through the configuration before the next is read).
//! Pull: each pull returns the next packets.
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
//! - `TIMING` (bool, default false): keep the dump's pacing: the first packet leaves at once,
//!   each later one when as much time has passed since as between their timestamps.
//! - `ZERO` (bool, default true): accepted; unset packet bytes are always zero.
//! - `CHECKSUM` (bool, default false): make packets as long as their IP length and set the
//!   IP, TCP, UDP and ICMP checksums; otherwise the bytes beyond what the line gives are in
//!   the extra-length annotation and checksums are zero unless given.
//! - `PROTO` (protocol, default 6): the default IP protocol.
//! - `MULTIPACKET` (bool, default false): emit `count` packets for a line.
//! - `FIELDS` (space-separated field names): the fields until a `!data` line.
//! - `FLOWID` (`SRC SPORT DST DPORT [PROTO]`): default addresses and ports.
//!
//! Handlers: `count` (r), `drops`, `drop_details` (r: unparsable lines), `active` (rw), `encap`
//! (r, `IP`), `filesize` (r), `filepos` (r), `stop` (w: deactivate and stop the router).
//!
//! Example: `FromIPSummaryDump(trace.txt, STOP true, CHECKSUM true) -> CheckIPHeader -> ...`

use sluice_core::sched::DEFAULT_TICKETS;
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Packet, Table, Timestamp};
use sluice_lang::args::FromArg;
use sluice_lang::args::{split_words, unquote, Args};

use super::ipsumdump::{field, parse_flowid, parse_proto, Field, FlowId, Record};

drop_reasons! {
    /// Why FromIPSummaryDump drops a line.
    enum Reason { Unparsable => "unparsable line" }
}

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
    timing: bool,
    /// (dump time, router time) of the first packet, for TIMING.
    timing_base: Option<(Timestamp, Timestamp)>,
    /// A packet read but not yet due (TIMING).
    waiting: Option<Packet>,
    ended: bool,
    complained: bool,
    count: u64,
    drops: Drops<Reason>,
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
            timing: false,
            timing_base: None,
            waiting: None,
            ended: false,
            complained: false,
            count: 0,
            drops: Drops::default(),
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
                self.drops.count(Reason::Unparsable);
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
            let copies = if self.multipacket {
                rec.count.unwrap_or(1)
            } else {
                1
            };
            if copies == 0 {
                continue;
            }
            let mut p = rec.build(self.proto, self.flow.as_ref(), self.checksum);
            if copies > 1 {
                self.repeat = Some((p.clone_packet(), copies - 1));
            }
            return Some(p);
        }
    }

    /// The next packet that is due: `Err(true)` at the end of the dump, `Err(false)` when
    /// the next packet waits for its time (a timer is set).
    fn next_due(&mut self, cx: &mut Cx) -> Result<Packet, bool> {
        let p = match self.waiting.take() {
            Some(p) => p,
            None => self.read_packet(cx.name()).ok_or(true)?,
        };
        if self.timing {
            let now = cx.now();
            let ts = p.timestamp();
            let (dbase, rbase) = *self.timing_base.get_or_insert((ts, now));
            let due = rbase + (ts - dbase);
            if due > now {
                self.waiting = Some(p);
                cx.schedule_timer(0, due);
                return Err(false);
            }
        }
        self.count += 1;
        Ok(p)
    }

    fn fill(&mut self, max: usize, cx: &mut Cx) -> Batch {
        let mut b = Batch::new();
        while b.len() < max {
            match self.next_due(cx) {
                Ok(p) => {
                    let _ = b.push(p);
                }
                Err(end) => {
                    if end {
                        self.finish(cx);
                    }
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
        args.read_into("STOP", &mut self.stop)?;
        args.read_into("ACTIVE", &mut self.active)?;
        args.read_into("TIMING", &mut self.timing)?;
        let _: Option<bool> = args.read("ZERO")?;
        args.read_into("CHECKSUM", &mut self.checksum)?;
        args.read_into("MULTIPACKET", &mut self.multipacket)?;
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
        match self.next_due(cx) {
            Ok(p) => {
                cx.push_one(0, p);
                cx.reschedule();
                true
            }
            Err(end) => {
                if end {
                    self.finish(cx);
                }
                false
            }
        }
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        if self.active && cx.output_is_push(0) {
            cx.reschedule();
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        if !self.active || self.ended {
            return Batch::new();
        }
        self.fill(max, cx)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .drops(|e| &e.drops)
            .read("active", |e| e.active)
            .write("active", |e, v, cx| {
                e.active = bool::from_arg(v)?;
                if e.active && !e.ended {
                    cx.reschedule();
                }
                Ok(())
            })
            .read("encap", |_| "IP")
            .read("filesize", |e| e.text.len())
            .read("filepos", |e| e.pos)
            .write("stop", |e, _, cx| {
                e.active = false;
                cx.request_driver_stop();
                Ok(())
            })
            .into()
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
