//! FromDump — reads packets from a pcap (tcpdump) file
//!
//! Synopsis: `FromDump(FILENAME [, STOP, TIMING, ACTIVE, SAMPLE, FORCE_IP, START, START_AFTER,
//! END, END_AFTER, INTERVAL, END_CALL])`
//!
//! Ports: no inputs, 1 output, agnostic. Push: a task emits BURST packets of the file per
//! run, never more than the queues downstream have room for (their full notifiers), and
//! sleeps while they are all full. Pull: each pull returns the next packets of the file.
//!
//! Reads the libpcap files written by `tcpdump -w`, by ToDump or by scapy: microsecond and
//! nanosecond resolution, either byte order. `FILENAME` `-` reads the standard input. Each
//! packet's timestamp annotation is the record's timestamp (nanosecond precision). Link
//! types: Ethernet (MAC header at 0; network header at 14, or 18 behind one VLAN tag, when
//! the frame carries IPv4 or IPv6) and raw IP (network header at 0). The record's original
//! length minus its captured length becomes the extra-length annotation that ToDump's
//! `EXTRA_LENGTH` writes back (see `io::extra_length`).
//!
//! A record longer than the file's snapshot length is read whole (as tcpdump and Click do).
//! A truncated or corrupt record (one longer than 256 KiB, `MAX_PACKET_LEN`) ends the file:
//! FromDump reports it once on standard error with its name, counts it in `errors` (and the
//! cut-off record in `drops`), stops reading and, with STOP, raises the stop event. Opening a
//! missing or non-pcap file is an initialisation error naming the file (a pcapng file is named
//! as one: convert it with `editcap -F pcap`).
//!
//! Arguments:
//! - `FILENAME` (string, mandatory): the file, or `-` for standard input.
//! - `BURST` (integer 1–32, default 1, as Click): packets per task run, pushed as one batch.
//! - `STOP` (boolean, default false): raise a driver stop event at the end of the file (or at
//!   the END time).
//! - `TIMING` (boolean, default false): keep the capture's pacing: the first packet leaves at
//!   once, later ones at their original offsets from it (timers on the router clock; under
//!   `--simtime` this is instant and deterministic).
//! - `ACTIVE` (boolean, default true): whether packets flow; see the `active` handler.
//! - `SAMPLE` (real between 0 and 1, default 1): emit each packet with this probability
//!   (deterministic pseudo-random sequence); the others are counted in `sampled_out`.
//! - `FORCE_IP` (boolean, default false): emit only IP packets; the others are dropped and
//!   counted in `drops`.
//! - `START` / `END` (absolute timestamps `SEC.FRAC`): skip packets before START; finish at
//!   the first packet at or after END. Without START or START_AFTER no packet is skipped,
//!   even one older than the first.
//! - `START_AFTER` / `END_AFTER` (times): the same, relative to the file's first packet.
//! - `INTERVAL` (time): finish INTERVAL after the start.
//! - `END_CALL` (`ELEMENT.HANDLER [VALUE]`): write handler called at the end of the file. As
//!   in Click, one whose handler does not exist or is not writable is an initialisation error
//!   (`END_CALL: HANDLER: error`).
//!
//! Handlers: `count` (r, packets emitted), `reset` (w, zero the counters), `filename` (r),
//! `active` (rw), `encap` (r: `ETHER`, `IP`, `IP4`, `IP6` or `LINKTYPE n`), `snaplen` (r),
//! `nano` (r, true for a nanosecond file), `filesize` (r), `filepos` (r, bytes consumed),
//! `packet_filepos` (r, file offset of the last emitted packet's record), `sampling_prob` (r),
//! `drops` (r, dropped records: FORCE_IP non-IP and truncated), `drop_details` (r, the same
//! by reason), `errors` (r, read errors), `sampled_out` (r), `skipped` (r, before START).
//!
//! Example: `FromDump(in.pcap, STOP true) -> Counter -> ToDump(out.pcap)`

use std::fs::File;
use std::io::{BufReader, Read};

use sluice_core::toolkit::HandlerCall;
use sluice_core::Timestamp;
use sluice_core::{drop_reasons, sched::DEFAULT_TICKETS, Drops, Handlers, Table, BATCH_MAX};
use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, InitCx, NotifierId, Packet};
use sluice_lang::args::{Args, FromArg, Seconds};
use sluice_wire::ethernet::{EthernetFrame, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use sluice_wire::pcap::RECORD_HEADER_LEN;
use sluice_wire::pcap::{LinkKind, PcapError, PcapReader, PcapRecordHeader, FILE_HEADER_LEN};

use super::set_extra_length;

type Reader = PcapReader<Box<dyn Read + Send>>;

drop_reasons! {
    /// Why FromDump drops a record.
    pub enum Reason {
        /// Not an IP packet, with FORCE_IP.
        NotIp => "not IP",
        /// Cut off by the end of the file.
        Truncated => "truncated record",
    }
}

/// Builds the packet for one record: data, timestamp, extra length and header offsets.
/// Returns `None` when `force_ip` is set and the record is not an IP packet.
pub fn record_to_packet(
    link: LinkKind,
    force_ip: bool,
    h: &PcapRecordHeader,
    data: &[u8],
) -> Option<Packet> {
    let net = network_offset(link, data);
    if force_ip && net.is_none() {
        return None;
    }
    let mut p = Packet::from_bytes(data);
    p.set_timestamp(Timestamp::from_parts(h.ts_sec as i64, h.ts_nsec as i64));
    set_extra_length(&mut p, h.orig_len.saturating_sub(h.caplen));
    if link == LinkKind::Ethernet {
        p.set_mac_offset(0);
    }
    if let Some(off) = net {
        p.set_network_offset(off as isize);
    }
    Some(p)
}

/// Where the IP header starts in a record of link type `link`, if it holds IPv4 or IPv6.
fn network_offset(link: LinkKind, data: &[u8]) -> Option<usize> {
    let version = |off: usize| data.get(off).map(|b| b >> 4);
    match link {
        LinkKind::Ethernet => {
            let eth = EthernetFrame::new_checked(data).ok()?;
            let (t, off) = match eth.vlan() {
                Some((_, inner)) => (inner, 18),
                None => (eth.ethertype(), 14),
            };
            match t {
                ETHERTYPE_IPV4 if version(off) == Some(4) => Some(off),
                ETHERTYPE_IPV6 if version(off) == Some(6) => Some(off),
                _ => None,
            }
        }
        LinkKind::RawIp => matches!(version(0), Some(4) | Some(6)).then_some(0),
        LinkKind::RawIpv4 => (version(0) == Some(4)).then_some(0),
        LinkKind::RawIpv6 => (version(0) == Some(6)).then_some(0),
        LinkKind::Other(_) => None,
    }
}

/// What [`parse_pcap`] found in a byte slice.
#[derive(Default)]
pub struct ParsedPcap {
    /// The packets FromDump would emit.
    pub packets: Vec<Packet>,
    /// Records dropped (FORCE_IP non-IP, a truncated last record).
    pub drops: Drops<Reason>,
    /// The error that ended reading, if any.
    pub error: Option<String>,
}

/// Runs FromDump's record handling over an in-memory pcap file (for fuzzing and tests).
pub fn parse_pcap(bytes: &[u8], force_ip: bool) -> ParsedPcap {
    let mut out = ParsedPcap::default();
    let mut r = match PcapReader::new(bytes) {
        Ok(r) => r,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let link = r.link_kind();
    let mut buf = Vec::new();
    loop {
        match r.next_into(&mut buf) {
            Ok(Some(h)) => match record_to_packet(link, force_ip, &h, &buf) {
                Some(p) => out.packets.push(p),
                None => out.drops.count(Reason::NotIp),
            },
            Ok(None) => break,
            Err(e) => {
                if matches!(e, PcapError::Truncated) {
                    out.drops.count(Reason::Truncated);
                }
                out.error = Some(e.to_string());
                break;
            }
        }
    }
    out
}

/// Parses an absolute timestamp `SEC[.FRAC]` with nanosecond precision.
fn parse_timestamp(s: &str) -> Result<Timestamp, String> {
    let err = || "expected timestamp SEC.FRAC".to_string();
    let (sec, frac) = s.trim().split_once('.').unwrap_or((s.trim(), ""));
    let sec: i64 = sec.parse().map_err(|_| err())?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err());
    }
    let mut ns = 0i64;
    for i in 0..9 {
        ns = ns * 10 + frac.as_bytes().get(i).map_or(0, |b| (b - b'0') as i64);
    }
    Ok(Timestamp::from_parts(sec, ns))
}

fn secs(s: Seconds) -> Timestamp {
    Timestamp::from_secs_f64(s.0)
}

/// The FromDump element.
pub struct FromDump {
    filename: String,
    stop: bool,
    timing: bool,
    active: bool,
    sample: f64,
    force_ip: bool,
    start: Option<Timestamp>,
    start_after: Option<Timestamp>,
    end: Option<Timestamp>,
    end_after: Option<Timestamp>,
    interval: Option<Timestamp>,
    end_call: Option<HandlerCall>,
    reader: Option<Reader>,
    link: LinkKind,
    link_type: u32,
    snaplen: u32,
    nano: bool,
    filesize: Option<u64>,
    buf: Vec<u8>,
    /// A packet read but not yet due (TIMING).
    pending: Option<(Packet, u64)>,
    /// First packet's timestamp in the file.
    first_ts: Option<Timestamp>,
    /// (file time, router time) of the first emitted packet, for TIMING.
    timing_base: Option<(Timestamp, Timestamp)>,
    filepos: u64,
    packet_filepos: u64,
    count: u64,
    drops: Drops<Reason>,
    errors: u64,
    sampled_out: u64,
    skipped: u64,
    rng: u64,
    ended: bool,
    push: bool,
    burst: usize,
    full: Option<Vec<NotifierId>>,
}

impl Default for FromDump {
    fn default() -> FromDump {
        FromDump {
            filename: String::new(),
            stop: false,
            timing: false,
            active: true,
            sample: 1.0,
            force_ip: false,
            start: None,
            start_after: None,
            end: None,
            end_after: None,
            interval: None,
            end_call: None,
            reader: None,
            link: LinkKind::Ethernet,
            link_type: 1,
            snaplen: 0,
            nano: false,
            filesize: None,
            buf: Vec::new(),
            pending: None,
            first_ts: None,
            timing_base: None,
            filepos: 0,
            packet_filepos: 0,
            count: 0,
            drops: Drops::default(),
            errors: 0,
            sampled_out: 0,
            skipped: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
            ended: false,
            push: true,
            burst: 1,
            full: None,
        }
    }
}

enum Next {
    Packet(Packet, u64),
    NotYet,
    End,
}

impl FromDump {
    fn open(&mut self) -> Result<(), String> {
        let (input, size): (Box<dyn Read + Send>, Option<u64>) = if self.filename == "-" {
            (Box::new(BufReader::new(std::io::stdin())), None)
        } else {
            let f = File::open(&self.filename).map_err(|e| format!("{}: {}", self.filename, e))?;
            let size = f.metadata().ok().map(|m| m.len());
            (Box::new(BufReader::with_capacity(64 * 1024, f)), size)
        };
        let r = PcapReader::new(input).map_err(|e| match e {
            PcapError::Truncated => {
                format!("{}: not a pcap file (truncated header)", self.filename)
            }
            e => format!("{}: {}", self.filename, e),
        })?;
        self.link = r.link_kind();
        self.link_type = r.link_type();
        self.snaplen = r.snaplen();
        self.nano = r.is_nanosecond();
        self.filesize = size;
        self.filepos = FILE_HEADER_LEN as u64;
        self.reader = Some(r);
        Ok(())
    }

    fn next_random(&mut self) -> f64 {
        // xorshift64*: deterministic sampling.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Reads the next record that passes the filters, as a packet and its file offset.
    fn read_one(&mut self, cx: &mut Cx) -> Option<(Packet, u64)> {
        loop {
            let r = self.reader.as_mut()?;
            let pos = self.filepos;
            match r.next_into(&mut self.buf) {
                Ok(Some(h)) => {
                    self.filepos += (RECORD_HEADER_LEN as u64) + h.caplen as u64;
                    let ts = Timestamp::from_parts(h.ts_sec as i64, h.ts_nsec as i64);
                    let first = *self.first_ts.get_or_insert(ts);
                    // Without START or START_AFTER nothing is skipped, not even packets
                    // older than the first (as in Click); INTERVAL then counts from the first.
                    let start = self.start.or(self.start_after.map(|a| first + a));
                    let end = self
                        .end
                        .or(self.end_after.map(|a| first + a))
                        .or(self.interval.map(|i| start.unwrap_or(first) + i));
                    if end.is_some_and(|e| ts >= e) {
                        self.reader = None;
                        return None;
                    }
                    if start.is_some_and(|s| ts < s) {
                        self.skipped += 1;
                        continue;
                    }
                    if self.sample < 1.0 && self.next_random() >= self.sample {
                        self.sampled_out += 1;
                        continue;
                    }
                    match record_to_packet(self.link, self.force_ip, &h, &self.buf) {
                        Some(p) => return Some((p, pos)),
                        None => self.drops.count(Reason::NotIp),
                    }
                }
                Ok(None) => {
                    self.reader = None;
                    return None;
                }
                Err(e) => {
                    if matches!(e, PcapError::Truncated) {
                        self.drops.count(Reason::Truncated);
                    }
                    self.errors += 1;
                    eprintln!("{}: {}: {}", cx.name(), self.filename, e);
                    self.reader = None;
                    return None;
                }
            }
        }
    }

    fn next_packet(&mut self, cx: &mut Cx) -> Next {
        let (p, pos) = match self.pending.take() {
            Some(x) => x,
            None => match self.read_one(cx) {
                Some(x) => x,
                None => return Next::End,
            },
        };
        if self.timing {
            let now = cx.now();
            let ts = p.timestamp();
            let (fbase, rbase) = *self.timing_base.get_or_insert((ts, now));
            let due = rbase + (ts - fbase);
            if due > now {
                self.pending = Some((p, pos));
                cx.schedule_timer(0, due);
                return Next::NotYet;
            }
        }
        Next::Packet(p, pos)
    }

    /// Collects up to `max` due packets; returns them, whether more are ready now, and whether
    /// the file ended (the caller calls `finish` after handing the packets on).
    fn fill(&mut self, max: usize, cx: &mut Cx) -> (Batch, bool, bool) {
        let mut b = Batch::new();
        let mut more = true;
        let mut end = false;
        while b.len() < max {
            match self.next_packet(cx) {
                Next::Packet(p, pos) => {
                    self.count += 1;
                    self.packet_filepos = pos;
                    let _ = b.push(p);
                }
                Next::NotYet => {
                    more = false;
                    break;
                }
                Next::End => {
                    more = false;
                    end = true;
                    break;
                }
            }
        }
        (b, more, end)
    }

    fn finish(&mut self, cx: &mut Cx) {
        if self.ended {
            return;
        }
        self.ended = true;
        if let Some(call) = &self.end_call {
            call.call("END_CALL", cx);
        }
        if self.stop {
            cx.request_driver_stop();
        }
    }
}

impl Element for FromDump {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.filename = args.read_mp("FILENAME")?;
        args.read_into("STOP", &mut self.stop)?;
        args.read_into("BURST", &mut self.burst)?;
        self.burst = self.burst.clamp(1, BATCH_MAX);
        args.read_into("TIMING", &mut self.timing)?;
        args.read_into("ACTIVE", &mut self.active)?;
        args.read_into("SAMPLE", &mut self.sample)?;
        if !(0.0..=1.0).contains(&self.sample) {
            args.error("SAMPLE: expected real number between 0 and 1");
            return Err(());
        }
        args.read_into("FORCE_IP", &mut self.force_ip)?;
        for (key, slot) in [("START", &mut self.start), ("END", &mut self.end)] {
            if let Some(s) = args.read::<String>(key)? {
                match parse_timestamp(&s) {
                    Ok(t) => *slot = Some(t),
                    Err(e) => {
                        args.error(format!("{key}: {e}"));
                        return Err(());
                    }
                }
            }
        }
        self.start_after = args.read::<Seconds>("START_AFTER")?.map(secs);
        self.end_after = args.read::<Seconds>("END_AFTER")?.map(secs);
        self.interval = args.read::<Seconds>("INTERVAL")?.map(secs);
        self.end_call = args.read("END_CALL")?;
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if let Some(call) = &self.end_call {
            call.check_as("END_CALL", cx)?;
        }
        self.open()?;
        self.push = cx.output_is_push(0);
        if self.push {
            cx.add_task(DEFAULT_TICKETS, self.active);
            self.full = cx.listen_downstream_full(0);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.active || self.ended {
            return false;
        }
        let room = self.full.as_deref().map_or(usize::MAX, |f| cx.push_room(f));
        if room == 0 {
            return false;
        }
        let (b, more, end) = self.fill(self.burst.min(room), cx);
        let worked = !b.is_empty();
        if worked {
            cx.push(0, b);
        }
        if end {
            self.finish(cx);
        }
        if more {
            cx.reschedule();
        }
        worked
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        if !self.active || self.ended {
            return Batch::new();
        }
        let (b, _, end) = self.fill(max, cx);
        if end && b.is_empty() {
            self.finish(cx);
        }
        b
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        if self.push && self.active {
            cx.reschedule();
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .action("reset", |e| {
                e.count = 0;
                e.drops.reset();
                e.errors = 0;
                e.sampled_out = 0;
                e.skipped = 0;
            })
            .read("filename", |e| e.filename.clone())
            .read("active", |e| e.active)
            .write("active", |e, v, cx| {
                e.active = bool::from_arg(v)?;
                if e.active && e.push {
                    cx.reschedule();
                }
                Ok(())
            })
            .read("encap", |e| match e.link {
                LinkKind::Ethernet => "ETHER".into(),
                LinkKind::RawIp => "IP".into(),
                LinkKind::RawIpv4 => "IP4".into(),
                LinkKind::RawIpv6 => "IP6".into(),
                LinkKind::Other(n) => format!("LINKTYPE {n}"),
            })
            .read("snaplen", |e| e.snaplen)
            .read("nano", |e| e.nano)
            .read("filesize", |e| {
                e.filesize.map_or_else(|| "-".into(), |s| s.to_string())
            })
            .read("filepos", |e| e.filepos)
            .read("packet_filepos", |e| e.packet_filepos)
            .read("sampling_prob", |e| e.sample)
            .drops(|e| &e.drops)
            .read("errors", |e| e.errors)
            .read("sampled_out", |e| e.sampled_out)
            .read("skipped", |e| e.skipped)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "FromDump",
    ports: "0/1",
    processing: "a/a",
    flow: "",
    source: include_str!("from_dump.rs"),
    make: || Box::new(FromDump::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_with_nanoseconds() {
        assert_eq!(
            parse_timestamp("1700000000.000000001").unwrap(),
            Timestamp(1_700_000_000_000_000_001)
        );
        assert_eq!(parse_timestamp("5.5").unwrap(), Timestamp(5_500_000_000));
        assert_eq!(parse_timestamp("7").unwrap(), Timestamp(7_000_000_000));
        assert!(parse_timestamp("x.1").is_err());
        assert!(parse_timestamp("1.1234567890").is_err());
    }

    #[test]
    fn network_offsets() {
        let mut eth = vec![0u8; 34];
        eth[12] = 0x08;
        eth[14] = 0x45;
        assert_eq!(network_offset(LinkKind::Ethernet, &eth), Some(14));
        eth[12] = 0x86;
        eth[13] = 0xdd;
        assert_eq!(network_offset(LinkKind::Ethernet, &eth), None); // version nibble 4
        eth[14] = 0x60;
        assert_eq!(network_offset(LinkKind::Ethernet, &eth), Some(14));
        assert_eq!(network_offset(LinkKind::Ethernet, &eth[..10]), None);
        assert_eq!(network_offset(LinkKind::RawIp, &[0x45]), Some(0));
        assert_eq!(network_offset(LinkKind::RawIp, &[]), None);
        assert_eq!(network_offset(LinkKind::RawIpv6, &[0x45]), None);
    }
}
