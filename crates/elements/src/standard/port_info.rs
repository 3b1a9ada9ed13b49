//! PortInfo — names TCP and UDP ports
//!
//! Synopsis: `PortInfo(NAME PORT[/PROTOCOL] [NAME...], ...)`
//!
//! Ports: none. The names PortInfo defines are usable wherever a port argument or an
//! IPClassifier/IPFilter port is expected (`dst port NAME`), in the compound that holds the
//! PortInfo and the compounds inside it (PortInfo is configured before the other elements; a
//! name defined in a compound hides an outer one).
//!
//! Arguments:
//! - `NAME PORT[/PROTOCOL] [NAME...]` (any number of arguments): makes each NAME stand for
//!   port number PORT. PROTOCOL is `tcp`, `udp` or an IP protocol number; without it the
//!   names hold for TCP and UDP alike. Empty arguments and words from a `#` on are ignored.
//!
//! Handlers: `table` (r, one line per definition: `NAME PORT[/PROTOCOL]`).
//!
//! Example: `PortInfo(sluice-ctl 7777/tcp, alt-http 8080); ... IPClassifier(dst port alt-http)`

use sluice_core::element::CONFIGURE_PHASE_INFO;
use sluice_core::{ConfigCx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::{split_words, Args, FromArg};
use sluice_lang::names::define_port;

/// The PortInfo element.
#[derive(Default)]
pub struct PortInfo {
    names: Vec<(String, u16, Option<u8>)>,
}

/// Parses `PORT[/PROTOCOL]`.
fn parse_port(s: &str) -> Result<(u16, Option<u8>), String> {
    let (port, proto) = match s.split_once('/') {
        Some((p, pr)) => (p, Some(pr)),
        None => (s, None),
    };
    let port = u16::from_arg(port).map_err(|_| "expected 'NAME PORT/PROTO'".to_string())?;
    let proto = match proto {
        None => None,
        Some("tcp") => Some(6),
        Some("udp") => Some(17),
        Some(n) => Some(u8::from_arg(n).map_err(|_| format!("unknown protocol '{}'", n))?),
    };
    Ok((port, proto))
}

impl Element for PortInfo {
    fn configure_phase(&self) -> i32 {
        CONFIGURE_PHASE_INFO
    }

    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let mut ok = true;
        for a in args.take_raw() {
            let w: Vec<String> = split_words(&a)
                .into_iter()
                .take_while(|w| !w.starts_with('#'))
                .collect();
            if w.is_empty() {
                continue;
            }
            let parsed = w
                .get(1)
                .ok_or_else(|| "expected 'NAME PORT/PROTO'".to_string())
                .and_then(|p| parse_port(p));
            match parsed {
                Ok((port, proto)) => {
                    for name in w.iter().take(1).chain(w.iter().skip(2)) {
                        define_port(name, port, proto);
                        self.names.push((name.clone(), port, proto));
                    }
                }
                Err(e) => {
                    args.error(e);
                    ok = false;
                }
            }
        }
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("table", |e| {
                let line = |(name, port, proto): &(String, u16, Option<u8>)| match proto {
                    Some(6) => format!("{name} {port}/tcp\n"),
                    Some(17) => format!("{name} {port}/udp\n"),
                    Some(p) => format!("{name} {port}/{p}\n"),
                    None => format!("{name} {port}\n"),
                };
                e.names.iter().map(line).collect::<String>()
            })
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "PortInfo",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("port_info.rs"),
    make: || Box::new(PortInfo::default()),
};
