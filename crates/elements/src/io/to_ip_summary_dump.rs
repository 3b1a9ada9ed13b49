//! ToIPSummaryDump — writes packet summaries to a text file
//!
//! Synopsis: `ToIPSummaryDump(FILENAME [, keywords FIELDS, HEADER, BANNER, MULTIPACKET,
//! BAD_PACKETS, CAREFUL_TRUNC, EXTRA_LENGTH, VERBOSE])`
//!
//! Ports: 1 input, 0 or 1 output, agnostic. With an output, packets pass through unchanged
//! after being written; without, a pull input is drained by a task.
//!
//! Writes one line per packet to FILENAME (`-` is standard output) in Click's IP summary
//! dump format: the FIELDS' values separated by spaces, `-` for a field that does not apply
//! to the packet or lies beyond its captured bytes. The file starts with `!IPSummaryDump
//! 1.3`, `!creator "BANNER"` when BANNER is given, and `!data FIELDS` (unless HEADER is
//! false). The packet's IP header is at its network header annotation (or its start).
//!
//! Fields (as in Click): `timestamp` (`SEC.USEC`), `ts_sec`, `ts_usec`, `ts_usec1`, `ip_src`
//! (`src`), `ip_dst` (`dst`), `ip_tos`, `ip_dscp`, `ip_ecn` (`no`, `ect1`, `ect2`, `ce`),
//! `ip_ttl`, `ip_frag` (`F` first fragment, `f` later fragment, `!` DF, `.`), `ip_fragoff`
//! (bytes, `+` MF, `!` DF), `ip_id`, `ip_sum`, `ip_proto` (`proto`: `T`, `U`, `I` or a
//! number), `ip_hl`, `ip_len`, `ip_capture_len`, `ip_opt`
//! (`rr{A,B}+N`, `ssrr{A^B}`, `lsrr{…}`, `ts{…}`, `ts.ip{A=T,…}`, `N=B:B`; `.` for none, `?`
//! if malformed), `sport`, `dport`, `tcp_seq`, `tcp_ack`, `tcp_off`, `tcp_flags` (letters of
//! `FSRPAUECN`, `.` for none), `tcp_window`, `tcp_urp`, `tcp_opt` (`mss1460`, `wscale7`,
//! `sackok`, `sackL-R`, `tsV:E`, `N=B:B`; `.` for none), `udp_len`, `icmp_type`,
//! `icmp_code`, `icmp_type_name`, `icmp_code_name`, `icmp_flowid`, `icmp_seq`,
//! `icmp_nextmtu`, `payload` (a quoted string with C escapes), `payload_len`, `payload_md5`
//! (the payload's MD5 digest in 22 characters of `[a-zA-Z0-9_@]`), `payload_md5_hex`, `count`,
//! `paint` (`link`, `direction`), `aggregate`, `wire_len`. Names may use spaces for
//! underscores. Not written: `first_timestamp`, Ethernet fields, the binary
//! format (BINARY true is refused).
//!
//! Arguments: `FILENAME` (string, mandatory). `FIELDS` (names, default `ip_src ip_dst`; an
//! unknown name is an error). `HEADER` (bool, default true). `BANNER` (string). `VERBOSE`,
//! `BAD_PACKETS`, `CAREFUL_TRUNC`, `EXTRA_LENGTH`, `MULTIPACKET` (bool): accepted.
//!
//! Handlers: `count` (r): lines written. `filename` (r). `flush` (w).
//!
//! Example: `FromDump(in.pcap, FORCE_IP true, STOP true) -> ToIPSummaryDump(-, FIELDS
//! timestamp src sport dst dport proto)`

use std::io::Write;

use sluice_core::Table;
use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx};
use sluice_lang::args::{split_words, unquote, Args};

use super::ipsumdump::{field, name, unparse, Field};
use super::{create_output, Drain, TraceWriter};

/// The ToIPSummaryDump element.
pub struct ToIPSummaryDump {
    filename: String,
    fields: Vec<Field>,
    header: bool,
    banner: Option<String>,
    out: Option<Box<dyn Write + Send>>,
    line: String,
    count: u64,
    drain: Drain,
}

impl Default for ToIPSummaryDump {
    fn default() -> Self {
        ToIPSummaryDump {
            filename: String::new(),
            fields: vec![Field::Src, Field::Dst],
            header: true,
            banner: None,
            out: None,
            line: String::new(),
            count: 0,
            drain: Drain::default(),
        }
    }
}

impl TraceWriter for ToIPSummaryDump {
    fn write_batch(&mut self, b: &Batch, cx: &mut Cx) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        for p in b.iter() {
            self.line.clear();
            for (i, f) in self.fields.iter().enumerate() {
                if i > 0 {
                    self.line.push(' ');
                }
                unparse(&mut self.line, *f, p);
            }
            self.line.push('\n');
            if let Err(e) = out.write_all(self.line.as_bytes()) {
                eprintln!("{}: {}: {}", cx.name(), self.filename, e);
                self.out = None;
                return;
            }
            self.count += 1;
        }
    }

    fn drain(&self) -> &Drain {
        &self.drain
    }
}

impl Element for ToIPSummaryDump {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.filename = args.read_mp("FILENAME")?;
        let mut names = args.read_all::<String>("FIELDS")?;
        names.extend(args.read_all::<String>("CONTENTS")?);
        if !names.is_empty() {
            self.fields.clear();
            for w in names.iter().flat_map(|n| split_words(n)) {
                match field(&unquote(&w)) {
                    Some(f) => self.fields.push(f),
                    None => {
                        args.error(format!("unknown field '{}'", unquote(&w)));
                        return Err(());
                    }
                }
            }
        }
        args.read_into("HEADER", &mut self.header)?;
        self.banner = args.read("BANNER")?;
        if args.read("BINARY")?.unwrap_or(false) {
            args.error("BINARY: binary dumps are not supported");
            return Err(());
        }
        for k in [
            "VERBOSE",
            "BAD_PACKETS",
            "CAREFUL_TRUNC",
            "EXTRA_LENGTH",
            "MULTIPACKET",
        ] {
            let _: Option<bool> = args.read(k)?;
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        // 8 KiB: the buffer of `BufWriter::new`.
        let mut out = create_output(&self.filename, 8 * 1024)?;
        if self.header {
            let mut h = String::from("!IPSummaryDump 1.3\n");
            if let Some(b) = &self.banner {
                h.push_str(&format!("!creator {:?}\n", b));
            }
            let names: Vec<&str> = self.fields.iter().map(|f| name(*f)).collect();
            h.push_str(&format!("!data {}\n", names.join(" ")));
            out.write_all(h.as_bytes())
                .map_err(|e| format!("{}: {}", self.filename, e))?;
        }
        self.out = Some(out);
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
            .write("flush", |e, _, _| match e.out.as_mut() {
                Some(w) => w.flush().map_err(|e| e.to_string()),
                None => Ok(()),
            })
            .into()
    }

    fn cleanup(&mut self, cx: &mut Cx) {
        if let Some(w) = self.out.as_mut() {
            if let Err(e) = w.flush() {
                eprintln!("{}: {}: {}", cx.name(), self.filename, e);
            }
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ToIPSummaryDump",
    ports: "1/0-1",
    processing: "a/a",
    flow: "",
    source: include_str!("to_ip_summary_dump.rs"),
    make: || Box::<ToIPSummaryDump>::default(),
};
