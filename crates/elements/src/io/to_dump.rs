//! ToDump — writes packets to a pcap (tcpdump) file
//!
//! Synopsis: `ToDump(FILENAME [, SNAPLEN, ENCAP, USE_ENCAP_FROM, EXTRA_LENGTH, NANO,
//! UNBUFFERED])`
//!
//! Ports: 1 input, 0 or 1 output, agnostic. Every packet that arrives is written to FILENAME
//! in libpcap format (readable by `tcpdump -r`, Wireshark, scapy, FromDump). With an output,
//! packets then leave on it unchanged; with a pull input and no output, ToDump pulls with its
//! own task, sleeping while the upstream queue is empty. `FILENAME` `-` writes to standard
//! output.
//!
//! Each record carries the packet's timestamp annotation (the current time if it is zero),
//! at most SNAPLEN bytes of the packet (from its network header for `ENCAP IP` when one is
//! set, else from its first byte) and, as original length, the packet length plus its
//! extra-length annotation when EXTRA_LENGTH is true. The file is flushed at router cleanup.
//! A write error (at a packet or at the final flush) is reported once on standard error and
//! fails the run (`sluice` exits with status 1); the packets not written are dropped and
//! counted in `drops` unless ToDump has an output, by which they still leave.
//!
//! Arguments:
//! - `FILENAME` (string, mandatory): output file, or `-` for standard output.
//! - `SNAPLEN` (integer, default 2000): bytes written per packet; 0 means the whole packet.
//!   Stored in the file header.
//! - `ENCAP` (word, default `ETHER`): link type stored in the header: `ETHER`, `IP`, `IP4`,
//!   `IP6`, `SLL`, `NULL`, `PPP`, `PPP_HDLC`, `HDLC`, `FDDI`, `802_11`, `PRISM`,
//!   `AIRONET`, `SUNATM`, or `LINKTYPE n` / a number.
//! - `USE_ENCAP_FROM` (space-separated element names): at initialisation, take the
//!   encapsulation from those elements' `encap` handlers (a FromDump's); they must agree.
//! - `EXTRA_LENGTH` (boolean, default true): add the extra-length annotation to the original
//!   length.
//! - `NANO` (boolean, default false): write a nanosecond-resolution file.
//! - `UNBUFFERED` (boolean, default false): flush after every packet.
//!
//! Handlers: `count` (r, packets written), `filename` (r), `encap` (r), `drops`, `drop_details`
//! (r, packets dropped unwritten because of a write error), `errors` (r), `flush` (w).
//!
//! Example: `FromDump(in.pcap, STOP true) -> ToDump(out.pcap, SNAPLEN 65535,
//! USE_ENCAP_FROM FromDump@1)`

use std::io::Write;

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Packet, Table, Timestamp};
use sluice_lang::args::Args;
use sluice_wire::pcap::PcapWriter;

use super::{create_output, extra_length, Drain, TraceWriter};

drop_reasons! {
    /// Why ToDump drops a packet.
    enum Reason { WriteError => "not written (write error)" }
}

const ENCAPS: &[(&str, u32)] = &[
    ("ETHER", 1),
    ("IP", 101),
    ("IP4", 228),
    ("IP6", 229),
    ("SLL", 113),
    ("NULL", 0),
    ("PPP", 9),
    ("PPP_HDLC", 50),
    ("HDLC", 104),
    ("FDDI", 10),
    ("802_11", 105),
    ("PRISM", 119),
    ("AIRONET", 120),
    ("SUNATM", 123),
];

/// Parses an encapsulation name into a pcap link type.
fn parse_encap(s: &str) -> Option<u32> {
    let s = s.trim();
    let up = s.to_ascii_uppercase();
    if let Some((_, lt)) = ENCAPS.iter().find(|(n, _)| *n == up) {
        return Some(*lt);
    }
    up.strip_prefix("LINKTYPE")
        .unwrap_or(&up)
        .trim()
        .parse()
        .ok()
}

fn encap_name(lt: u32) -> String {
    match ENCAPS.iter().find(|(_, l)| *l == lt) {
        Some((n, _)) => n.to_string(),
        None => format!("LINKTYPE {lt}"),
    }
}

/// The ToDump element.
pub struct ToDump {
    filename: String,
    snaplen: u32,
    link_type: u32,
    use_encap_from: Vec<String>,
    extra_length: bool,
    nano: bool,
    unbuffered: bool,
    writer: Option<PcapWriter<Box<dyn Write + Send>>>,
    count: u64,
    drops: Drops<Reason>,
    errors: u64,
    drain: Drain,
}

impl Default for ToDump {
    fn default() -> ToDump {
        ToDump {
            filename: String::new(),
            snaplen: 2000,
            link_type: 1,
            use_encap_from: Vec::new(),
            extra_length: true,
            nano: false,
            unbuffered: false,
            writer: None,
            count: 0,
            drops: Drops::default(),
            errors: 0,
            drain: Drain::default(),
        }
    }
}

impl ToDump {
    /// Counts a packet not written as dropped, unless it leaves by the output.
    fn lost(&mut self, cx: &Cx) {
        if cx.noutputs() == 0 {
            self.drops.count(Reason::WriteError);
        }
    }

    fn write_packet(&mut self, p: &Packet, cx: &mut Cx) {
        let Some(w) = self.writer.as_mut() else {
            self.lost(cx);
            return;
        };
        let data = if self.link_type != 1 {
            p.network_header().unwrap_or(p.data())
        } else {
            p.data()
        };
        let mut ts = p.timestamp();
        if ts == Timestamp::ZERO {
            ts = cx.now();
        }
        let mut orig = data.len() as u32;
        if self.extra_length {
            orig = orig.saturating_add(extra_length(p));
        }
        let r = w
            .write_record(ts.sec() as u32, ts.subsec_nanos() as u32, orig, data)
            .and_then(|_| if self.unbuffered { w.flush() } else { Ok(()) });
        match r {
            Ok(()) => self.count += 1,
            Err(e) => {
                self.errors += 1;
                self.lost(cx);
                eprintln!("{}: {}: {}", cx.name(), self.filename, e);
                cx.fail_run();
                self.writer = None;
            }
        }
    }
}

impl TraceWriter for ToDump {
    fn write_batch(&mut self, b: &Batch, cx: &mut Cx) {
        for p in b.iter() {
            self.write_packet(p, cx);
        }
    }

    fn drain(&self) -> &Drain {
        &self.drain
    }
}

impl Element for ToDump {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.filename = args.read_mp("FILENAME")?;
        if let Some(n) = args.read_p("SNAPLEN")? {
            self.snaplen = n;
        }
        if let Some(e) = args.read_p::<String>("ENCAP")? {
            match parse_encap(&e) {
                Some(lt) => self.link_type = lt,
                None => {
                    args.error(format!("ENCAP: bad encapsulation type '{e}'"));
                    return Err(());
                }
            }
        }
        if let Some(u) = args.read::<String>("USE_ENCAP_FROM")? {
            self.use_encap_from = u.split_whitespace().map(String::from).collect();
        }
        args.read_into("EXTRA_LENGTH", &mut self.extra_length)?;
        args.read_into("NANO", &mut self.nano)?;
        args.read_into("UNBUFFERED", &mut self.unbuffered)
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let mut from: Option<u32> = None;
        for e in self.use_encap_from.clone() {
            let v = cx
                .read_handler(&format!("{e}.encap"))
                .map_err(|err| format!("USE_ENCAP_FROM: {err}"))?;
            let lt = parse_encap(&v).ok_or_else(|| {
                format!("USE_ENCAP_FROM: '{e}' has bad encapsulation '{}'", v.trim())
            })?;
            if from.is_some_and(|f| f != lt) {
                return Err("USE_ENCAP_FROM: elements disagree on encapsulation".into());
            }
            from = Some(lt);
        }
        if let Some(lt) = from {
            self.link_type = lt;
        }
        let out = create_output(&self.filename, 64 * 1024)?;
        let w = PcapWriter::new(out, self.link_type, self.snaplen, self.nano)
            .map_err(|e| format!("{}: {}", self.filename, e))?;
        self.writer = Some(w);
        self.drain.initialize(cx);
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        self.write_push(batch, cx);
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        self.write_pull(max, cx)
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        self.write_task(cx)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .read("filename", |e| e.filename.clone())
            .read("encap", |e| encap_name(e.link_type))
            .drops(|e| &e.drops)
            .read("errors", |e| e.errors)
            .write("flush", |e, _, _| match e.writer.as_mut() {
                Some(w) => w.flush().map_err(|e| e.to_string()),
                None => Ok(()),
            })
            .into()
    }

    fn cleanup(&mut self, cx: &mut Cx) {
        if let Some(w) = self.writer.as_mut() {
            if let Err(e) = w.flush() {
                self.errors += 1;
                eprintln!("{}: {}: {}", cx.name(), self.filename, e);
                cx.fail_run();
            }
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ToDump",
    ports: "1/0-1",
    processing: "a/a",
    flow: "",
    source: include_str!("to_dump.rs"),
    make: || Box::new(ToDump::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encap_names() {
        assert_eq!(parse_encap("ETHER"), Some(1));
        assert_eq!(parse_encap("ip"), Some(101));
        assert_eq!(parse_encap("LINKTYPE 228"), Some(228));
        assert_eq!(parse_encap("147"), Some(147));
        assert_eq!(parse_encap("bogus"), None);
        assert_eq!(encap_name(101), "IP");
        assert_eq!(encap_name(147), "LINKTYPE 147");
    }
}
