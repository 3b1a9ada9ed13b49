//! ARPPrint — pretty-prints ARP packets as tcpdump does
//!
//! Synopsis: `ARPPrint([LABEL, keywords TIMESTAMP, ETHER, ACTIVE, OUTFILE])`
//!
//! Ports: 1 input, 1 output, agnostic.
//!
//! Expects ARP packets, the ARP header at the network header annotation (or at the start of
//! the packet). For each packet prints one line to standard error (or OUTFILE) and passes the
//! packet on unchanged: `LABEL: ` when LABEL is set, `SEC.USEC: ` with TIMESTAMP, `SRC >
//! DST: ` (Ethernet addresses, when the Ethernet header lies before the ARP header) with
//! ETHER, then `arp who-has TPA [(THA)] tell SPA`, `arp reply SPA is-at SHA`, `rarp who-is
//! THA tell SHA`, `rarp reply THA at TPA`, `invarp who-is THA tell SHA`, `invarp reply THA
//! at TPA` or `arp-#OP`, followed by `hardware #N` (unspaced, as Click prints it) when the
//! hardware type is not Ethernet. A packet too short for Ethernet/IPv4 ARP prints
//! `truncated-arp (LEN)`; other protocol or address sizes print `arp-#OP for proto #P (PLN)
//! hardware #H (HLN)`.
//!
//! Arguments: `LABEL` (string). `TIMESTAMP` (bool, default true). `ETHER` (bool, default
//! false). `ACTIVE` (bool, default true). `OUTFILE` (file name).
//!
//! Handlers: `active` (rw).
//!
//! Example: `c[1] -> ARPPrint(in) -> [1]arpq;`

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write;
use std::net::Ipv4Addr;

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::EtherAddr;

use crate::ip::common::ip_offset;

/// The ARPPrint element.
pub struct ARPPrint {
    label: String,
    timestamp: bool,
    ether: bool,
    active: bool,
    outfile: Option<String>,
    out: Option<File>,
}

impl Default for ARPPrint {
    fn default() -> Self {
        ARPPrint {
            label: String::new(),
            timestamp: true,
            ether: false,
            active: true,
            outfile: None,
            out: None,
        }
    }
}

fn eth(b: &[u8]) -> EtherAddr {
    EtherAddr([b[0], b[1], b[2], b[3], b[4], b[5]])
}

fn ip(b: &[u8]) -> Ipv4Addr {
    Ipv4Addr::new(b[0], b[1], b[2], b[3])
}

impl ARPPrint {
    /// The line for `p`.
    pub fn format(&self, p: &Packet) -> String {
        let mut s = String::new();
        if !self.label.is_empty() {
            let _ = write!(s, "{}: ", self.label);
        }
        if self.timestamp {
            let t = p.timestamp();
            let _ = write!(s, "{}.{:06}: ", t.sec(), t.subsec_nanos() / 1000);
        }
        let off = ip_offset(p);
        if self.ether {
            let m = p.mac_offset().filter(|m| *m >= 0).unwrap_or(0) as usize;
            if m + 14 <= off && m + 14 <= p.len() {
                let e = &p.data()[m..m + 14];
                let _ = write!(s, "{} > {}: ", eth(&e[6..12]), eth(&e[0..6]));
            }
        }
        let a = &p.data()[off..];
        if a.len() < 28 {
            let _ = write!(s, "truncated-arp ({})", a.len());
            return s;
        }
        let hrd = u16::from_be_bytes([a[0], a[1]]);
        let pro = u16::from_be_bytes([a[2], a[3]]);
        let (hln, pln) = (a[4], a[5]);
        let op = u16::from_be_bytes([a[6], a[7]]);
        if (pro != 0x0800 && pro != 0x1000) || pln != 4 || hln == 0 {
            let _ = write!(
                s,
                "arp-#{op} for proto #{pro} ({pln}) hardware #{hrd} ({hln})"
            );
            return s;
        }
        let (sha, spa, tha, tpa) = (
            eth(&a[8..14]),
            ip(&a[14..18]),
            eth(&a[18..24]),
            ip(&a[24..28]),
        );
        if pro == 0x1000 {
            s.push_str("trailer-");
        }
        let _ = match op {
            1 => {
                let _ = write!(s, "arp who-has {tpa}");
                if tha.0 != [0; 6] {
                    let _ = write!(s, " ({tha})");
                }
                write!(s, " tell {spa}")
            }
            2 => write!(s, "arp reply {spa} is-at {sha}"),
            3 => write!(s, "rarp who-is {tha} tell {sha}"),
            4 => write!(s, "rarp reply {tha} at {tpa}"),
            8 => write!(s, "invarp who-is {tha} tell {sha}"),
            9 => write!(s, "invarp reply {tha} at {tpa}"),
            _ => write!(s, "arp-#{op}"),
        };
        if hrd != 1 {
            let _ = write!(s, "hardware #{hrd}");
        }
        s
    }
}

impl Element for ARPPrint {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.label = args.read_p("LABEL")?.unwrap_or_default();
        args.read_into("TIMESTAMP", &mut self.timestamp)?;
        args.read_into("ETHER", &mut self.ether)?;
        args.read_into("ACTIVE", &mut self.active)?;
        self.outfile = args.read("OUTFILE")?;
        Ok(())
    }

    fn initialize(&mut self, _cx: &mut InitCx) -> Result<(), String> {
        if let Some(f) = &self.outfile {
            self.out = Some(File::create(f).map_err(|e| format!("{f}: {e}"))?);
        }
        Ok(())
    }

    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        if self.active {
            let line = self.format(&p);
            match self.out.as_mut() {
                Some(f) => {
                    if let Err(e) = writeln!(f, "{line}") {
                        eprintln!("{}: {e}", cx.name());
                        self.out = None;
                    }
                }
                None => eprintln!("{line}"),
            }
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("active", |e| &mut e.active)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ARPPrint",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("arp_print.rs"),
    make: || Box::<ARPPrint>::default(),
};
