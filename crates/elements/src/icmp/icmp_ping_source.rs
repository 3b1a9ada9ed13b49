//! ICMPPingSource — periodically sends ICMP echo requests, and reports the replies
//!
//! Synopsis: `ICMPPingSource(SRC, DST [, *keywords* INTERVAL, IDENTIFIER, LIMIT, DATA, ACTIVE,
//! VERBOSE, STOP, MIRROR])`
//!
//! Ports: 0 or 1 inputs (push), 1 output (push or pull). Also called `ICMPSendPings`.
//!
//! Emits IPv4 ICMP echo requests from SRC to DST: a 20-byte IP header (TTL 200, IP ID *n*),
//! an 8-byte echo header (identifier IDENTIFIER, sequence number *n*) and DATA, with both
//! checksums, the network and transport header annotations, the destination IP annotation
//! (DST) and the timestamp annotation (now) set; *n* counts 1, 2, … (`count % 65535 + 1`).
//! As in Click on Linux, the identifier is stored in host (little-endian) byte order and the
//! sequence number in network order. Push: one request every INTERVAL, the first INTERVAL
//! after start; once LIMIT requests are sent the next tick raises a driver stop if STOP is
//! set. Pull: every pull returns a new request while LIMIT allows (INTERVAL is ignored).
//!
//! The optional input takes the replies (IP packets with the network header annotation): an
//! echo reply with this element's identifier is matched to its request by sequence number and
//! counted; with VERBOSE each prints `NAME: N bytes from ADDR: icmp_seq=S ttl=T time=M.UUU
//! ms` (the time from the request's timestamp annotation to the reply's). With MIRROR (push
//! output only) a reply is turned into the next request at once, keeping its data, whatever
//! LIMIT says. Replies are consumed; other packets arriving on the input are dropped and
//! counted in `drops` and, by reason, `drop_details`. When the router stops, an element with
//! an input and VERBOSE prints its `summary`, each line prefixed with
//! `NAME :: ICMPPingSource: `.
//!
//! Arguments:
//! - `SRC`, `DST`: source and destination addresses (or AddressInfo names).
//! - `INTERVAL` (seconds, millisecond precision, default 1): time between requests.
//! - `IDENTIFIER` (0–65535, default 0): the echo identifier.
//! - `LIMIT` (integer, default -1): requests to send; negative means no limit.
//! - `DATA` (string, default empty): bytes after the echo header.
//! - `ACTIVE` (bool, default true): whether requests are sent.
//! - `VERBOSE` (bool, default true): print replies and the final summary.
//! - `STOP` (bool, default false): stop the router when LIMIT is reached.
//! - `MIRROR` (bool, default false): answer each reply with the next request.
//!
//! Handlers: `active` (rw), `src` (rw), `dst` (rw), `count` (r): requests sent, `limit` (w),
//! `interval` (w), `reset_counts` (w), `drops` (r): input packets that were not replies to
//! this element, `drop_details` (r): the same, by reason. With an input also `summary` (r;
//! ping(1)'s summary: requests sent, replies received, duplicates, loss, RTT
//! min/avg/max/mdev), `rtt_min`, `rtt_avg`, `rtt_max` (r).
//!
//! Example: `ICMPPingSource(198.18.0.1, 198.18.1.2, LIMIT 3, STOP true) -> EtherEncap(0x0800,
//! 02:00:00:00:00:01, 02:00:00:00:00:02) -> ToDump(pings.pcap)`

use std::net::Ipv4Addr;

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Packet, Table, Timestamp};
use sluice_lang::args::{Args, Data, FromArg, Seconds};
use sluice_wire::checksum::checksum;
use sluice_wire::ipv4::{HEADER_LEN, PROTO_ICMP};
use sluice_wire::Ipv4Packet;

use crate::ip::common::{ipv4_header, push_ipv4_header};

/// Length of the ICMP echo header.
const ECHO_LEN: usize = 8;
/// TTL of the requests.
const TTL: u8 = 200;
/// ICMP types.
const ECHO_REPLY: u8 = 0;
const ECHO: u8 = 8;

drop_reasons! {
    /// Why ICMPPingSource drops a packet from its input.
    enum Reason {
        NotIp => "not an IP packet",
        NotReply => "not an echo reply to this element",
    }
}

/// What the element keeps about replies, when it has an input.
struct Receiver {
    /// Send time of each sequence number; `None` before it is sent.
    sent: Vec<Option<Timestamp>>,
    /// Whether a reply for the sequence number has arrived (a later one is a duplicate).
    answered: Vec<bool>,
    /// Replies, duplicates included (as Click counts them).
    received: u64,
    duplicates: u64,
    /// RTT statistics in microseconds over the replies that carried a timestamp.
    min: u32,
    max: u32,
    sum: u64,
    sum_sq: u64,
}

impl Receiver {
    fn new() -> Receiver {
        Receiver {
            sent: vec![None; 1 << 16],
            answered: vec![false; 1 << 16],
            received: 0,
            duplicates: 0,
            min: 0,
            max: 0,
            sum: 0,
            sum_sq: 0,
        }
    }

    /// Records that the request with sequence number `seq` left at `at`.
    fn sent(&mut self, seq: u16, at: Timestamp) {
        self.sent[seq as usize] = Some(at);
        self.answered[seq as usize] = false;
    }

    /// Records a reply for sequence number `seq` arriving with timestamp `at` (zero: none);
    /// returns the RTT in microseconds (0 without a timestamp), or `None` if no request with
    /// that sequence number was sent.
    fn reply(&mut self, seq: u16, at: Timestamp) -> Option<u32> {
        let sent = self.sent[seq as usize]?;
        if std::mem::replace(&mut self.answered[seq as usize], true) {
            self.duplicates += 1;
        }
        let mut rtt = 0;
        if at != Timestamp::ZERO {
            rtt = ((at - sent).0 / 1000).clamp(0, u32::MAX as i64) as u32;
            if self.received == 0 || rtt < self.min {
                self.min = rtt;
            }
            if self.received == 0 || rtt > self.max {
                self.max = rtt;
            }
            self.sum += rtt as u64;
            self.sum_sq += rtt as u64 * rtt as u64;
        }
        self.received += 1;
        Some(rtt)
    }

    /// ping(1)'s summary after `sent` requests.
    fn summary(&self, sent: u64) -> String {
        let mut s = format!(
            "{} packets transmitted, {} received",
            sent,
            self.received.saturating_sub(self.duplicates)
        );
        if self.duplicates > 0 {
            s += &format!(", +{} duplicates", self.duplicates);
        }
        if sent > 0 {
            let lost = sent as i64 - self.received as i64 - self.duplicates as i64;
            s += &format!(", {}% packet loss\n", lost * 100 / sent as i64);
        }
        let n = self.received;
        if let (Some(avg), Some(avg_sq)) = (self.sum.checked_div(n), self.sum_sq.checked_div(n)) {
            let var = avg_sq.saturating_sub(avg * avg);
            let mdev = (var as f64).sqrt() as u64;
            let ms = |us: u64| format!("{}.{:03}", us / 1000, us % 1000);
            s += &format!(
                "rtt min/avg/max/mdev = {}/{}/{}/{}\n",
                ms(self.min as u64),
                ms(avg),
                ms(self.max as u64),
                ms(mdev)
            );
        }
        s
    }
}

/// Formats microseconds as Click's `cp_unparse_microseconds` (`250us`, `0.0015s`, `0s`).
fn unparse_microseconds(us: u64) -> String {
    if us > 0 && us < 1000 {
        return format!("{us}us");
    }
    let frac = format!("{:06}", us % 1_000_000);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{}s", us / 1_000_000)
    } else {
        format!("{}.{}s", us / 1_000_000, frac)
    }
}

/// The ICMPPingSource element.
pub struct ICMPPingSource {
    src: Ipv4Addr,
    dst: Ipv4Addr,
    interval: Timestamp,
    identifier: u16,
    limit: i64,
    data: Vec<u8>,
    active: bool,
    verbose: bool,
    stop: bool,
    mirror: bool,
    push_out: bool,
    count: u64,
    drops: Drops<Reason>,
    receiver: Option<Box<Receiver>>,
}

impl Default for ICMPPingSource {
    fn default() -> Self {
        ICMPPingSource {
            src: Ipv4Addr::UNSPECIFIED,
            dst: Ipv4Addr::UNSPECIFIED,
            interval: Timestamp::from_parts(1, 0),
            identifier: 0,
            limit: -1,
            data: Vec::new(),
            active: true,
            verbose: true,
            stop: false,
            mirror: false,
            push_out: true,
            count: 0,
            drops: Drops::default(),
            receiver: None,
        }
    }
}

impl ICMPPingSource {
    /// The reply statistics (handlers that read them exist only with an input).
    fn rx(&self) -> &Receiver {
        self.receiver
            .as_deref()
            .expect("handler declared with an input")
    }

    /// Sets the interval from seconds, to the millisecond.
    fn set_interval(&mut self, s: f64) {
        self.interval = Timestamp::from_parts(0, ((s * 1e3).round() as i64) * 1_000_000);
    }

    /// Restarts the timer after a change of limit or counts, if requests are due.
    fn rearm(&self, cx: &mut Cx) {
        if !self.limit_reached() && self.active && self.push_out && !cx.timer_scheduled(0) {
            cx.schedule_after(0, self.interval);
        }
    }

    fn limit_reached(&self) -> bool {
        self.limit >= 0 && self.count >= self.limit as u64
    }

    /// Turns `p` (reused from a reply, or `None` for a fresh packet with DATA) into the next
    /// request.
    fn make_request(&mut self, reuse: Option<Packet>, now: Timestamp) -> Packet {
        let ip_id = (self.count % 0xFFFF) as u16 + 1;
        let ip = ipv4_header(PROTO_ICMP, self.src, self.dst, TTL, ip_id);
        let mut p = match reuse {
            Some(mut q) => {
                q.take(q.len().min(HEADER_LEN + ECHO_LEN));
                q
            }
            None => Packet::from_bytes(&self.data),
        };
        push_ipv4_header(&mut p, ip, ECHO_LEN);
        let icmp = &mut p.data_mut()[HEADER_LEN..];
        icmp[0] = ECHO;
        icmp[4..6].copy_from_slice(&self.identifier.to_le_bytes());
        icmp[6..8].copy_from_slice(&ip_id.to_be_bytes());
        let sum = checksum(icmp);
        icmp[2..4].copy_from_slice(&sum.to_be_bytes());
        p.set_timestamp(now);
        if let Some(r) = &mut self.receiver {
            r.sent(ip_id, now);
        }
        self.count += 1;
        p
    }

    /// Handles a packet on the input: a reply is recorded (and mirrored); anything else is
    /// dropped.
    fn receive(&mut self, p: Packet, cx: &mut Cx) {
        let Some(off) = p.network_offset().map(|o| o.max(0) as usize) else {
            self.drops.count(Reason::NotIp);
            return;
        };
        let data = &p.data()[off.min(p.len())..];
        let Ok(ip) = Ipv4Packet::new_checked(data) else {
            self.drops.count(Reason::NotIp);
            return;
        };
        let hl = ip.header_len();
        let icmp = &data[hl.min(data.len())..];
        if ip.protocol() != PROTO_ICMP
            || icmp.len() < ECHO_LEN
            || icmp[0] != ECHO_REPLY
            || icmp[4..6] != self.identifier.to_le_bytes()
        {
            self.drops.count(Reason::NotReply);
            return;
        }
        let seq = u16::from_be_bytes([icmp[6], icmp[7]]);
        let (src, ttl) = (ip.src(), ip.ttl());
        let bytes = (ip.total_len() as usize).saturating_sub(hl + ECHO_LEN);
        let at = p.timestamp();
        let rtt = self.receiver.as_mut().and_then(|r| r.reply(seq, at));
        if let (Some(us), true) = (rtt, self.verbose) {
            eprintln!(
                "{}: {} bytes from {}: icmp_seq={} ttl={} time={}.{:03} ms",
                cx.name(),
                bytes,
                src,
                seq,
                ttl,
                us / 1000,
                us % 1000
            );
        }
        if self.mirror {
            let mut q = p;
            q.pull_front(off.min(q.len()));
            let req = self.make_request(Some(q), cx.now());
            cx.push_one(0, req);
        }
    }
}

impl Element for ICMPPingSource {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.src = args.read_mp::<Ipv4Addr>("SRC")?;
        self.dst = args.read_mp::<Ipv4Addr>("DST")?;
        let interval = args.read::<Seconds>("INTERVAL")?;
        args.read_into("IDENTIFIER", &mut self.identifier)?;
        self.data = args.read::<Data>("DATA")?.map_or_else(Vec::new, |d| d.0);
        args.read_into("LIMIT", &mut self.limit)?;
        args.read_into("ACTIVE", &mut self.active)?;
        args.read_into("VERBOSE", &mut self.verbose)?;
        args.read_into("STOP", &mut self.stop)?;
        args.read_into("MIRROR", &mut self.mirror)?;
        self.push_out = cx.output_is_push(0);
        if cx.ninputs() == 1 {
            self.receiver = Some(Box::new(Receiver::new()));
        }
        if let Some(Seconds(s)) = interval {
            self.set_interval(s);
            if self.interval == Timestamp::ZERO {
                cx.warning("INTERVAL so small that it is zero");
            }
            if !self.push_out {
                cx.warning("element is pull, INTERVAL parameter will be ignored");
            }
        }
        if self.mirror && !self.push_out {
            args.error("MIRROR invalid on pull element");
            return Err(());
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if self.limit != 0 && self.active && self.push_out {
            cx.schedule_after(0, self.interval);
        }
        Ok(())
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        if self.limit_reached() {
            if self.stop {
                cx.request_driver_stop();
            }
        } else {
            let p = self.make_request(None, cx.now());
            cx.push_one(0, p);
            cx.schedule_after(0, self.interval);
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut b = Batch::new();
        if max > 0 && !self.limit_reached() {
            let _ = b.push(self.make_request(None, cx.now()));
        } else if self.limit_reached() && self.stop {
            cx.request_driver_stop();
            self.stop = false;
        }
        b
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        for p in batch {
            self.receive(p, cx);
        }
    }

    fn cleanup(&mut self, cx: &mut Cx) {
        if let (Some(r), true) = (&self.receiver, self.verbose) {
            for line in r.summary(self.count).lines() {
                eprintln!("{} :: ICMPPingSource: {}", cx.name(), line);
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        let t = Table::<Self>::new()
            .read("active", |e| e.active)
            .write("active", |e, v, cx| {
                e.active = bool::from_arg(v.trim()).map_err(|_| "type mismatch")?;
                if !e.active {
                    cx.cancel_timer(0);
                } else if e.push_out && !cx.timer_scheduled(0) {
                    cx.schedule_after(0, Timestamp::ZERO);
                }
                Ok(())
            })
            .read("src", |e| e.src)
            .write("src", |e, v, _| {
                e.src = Ipv4Addr::from_arg(v.trim()).map_err(|_| "syntax error")?;
                Ok(())
            })
            .setting()
            .read("dst", |e| e.dst)
            .write("dst", |e, v, _| {
                e.dst = Ipv4Addr::from_arg(v.trim()).map_err(|_| "syntax error")?;
                Ok(())
            })
            .setting()
            .read("count", |e| e.count)
            .write("limit", |e, v, cx| {
                e.limit = i64::from_arg(v.trim()).map_err(|_| "'limit' should be integer")?;
                e.rearm(cx);
                Ok(())
            })
            .write("interval", |e, v, _| {
                let Seconds(s) =
                    Seconds::from_arg(v.trim()).map_err(|_| "'interval' should be an interval")?;
                e.set_interval(s);
                Ok(())
            })
            .write("reset_counts", |e, _, cx| {
                e.count = 0;
                e.drops.reset();
                if e.receiver.is_some() {
                    e.receiver = Some(Box::new(Receiver::new()));
                }
                e.rearm(cx);
                Ok(())
            })
            .drops(|e| &e.drops);
        if self.receiver.is_none() {
            return t.into();
        }
        t.read("summary", |e| e.rx().summary(e.count))
            .read("rtt_min", |e| unparse_microseconds(e.rx().min as u64))
            .read("rtt_avg", |e| {
                unparse_microseconds(e.rx().sum / e.rx().received.max(1))
            })
            .read("rtt_max", |e| unparse_microseconds(e.rx().max as u64))
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ICMPPingSource",
    ports: "0-1/1",
    processing: "h/a",
    flow: "x/x",
    source: include_str!("icmp_ping_source.rs"),
    make: || Box::<ICMPPingSource>::default(),
};

/// Click's other name for the class.
pub const ALIAS: ElementClass = ElementClass {
    name: "ICMPSendPings",
    ..CLASS
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_as_click_prints_them() {
        assert_eq!(unparse_microseconds(0), "0s");
        assert_eq!(unparse_microseconds(250), "250us");
        assert_eq!(unparse_microseconds(1500), "0.0015s");
        assert_eq!(unparse_microseconds(2_000_000), "2s");
    }

    #[test]
    fn summary_counts_loss_and_duplicates() {
        let mut r = Receiver::new();
        let t0 = Timestamp::SIM_START;
        r.sent(1, t0);
        r.sent(2, t0);
        assert_eq!(r.reply(1, t0 + Timestamp(1_500_000)), Some(1500));
        assert_eq!(r.reply(1, t0 + Timestamp(2_000_000)), Some(2000));
        assert_eq!(r.reply(7, t0), None);
        assert_eq!(
            r.summary(4),
            "4 packets transmitted, 1 received, +1 duplicates, 25% packet loss\n\
             rtt min/avg/max/mdev = 1.500/1.750/2.000/0.250\n"
        );
    }
}
