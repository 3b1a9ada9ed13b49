//! SetIPDSCP — sets the IP DSCP field
//!
//! Synopsis: `SetIPDSCP(DSCP)`
//!
//! Ports: 1 input, 1 output, agnostic. Expects IP packets with the network header annotation
//! (or starting with their IP header). Sets the six-bit Differentiated Services Code Point
//! (the upper bits of the TOS byte, ECN bits kept) to DSCP and updates the header checksum
//! incrementally. Packets too short to hold an IP header are dropped and counted.
//!
//! Arguments: `DSCP` (0–63).
//!
//! Handlers: `dscp` (rw), `drops` (r).
//!
//! Example: `IPClassifier(udp port 5060, -) => SetIPDSCP(46), SetIPDSCP(0)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;

/// The SetIPDSCP element.
#[derive(Default)]
pub struct SetIPDSCP {
    dscp: u8,
    drops: u64,
}

impl Element for SetIPDSCP {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let d: u8 = args.read_mp("DSCP")?;
        if d > 63 {
            args.error("DSCP: must be between 0 and 63");
            return Err(());
        }
        self.dscp = d;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let off = ip_offset(&p);
        if p.len() < off + 20 {
            self.drops += 1;
            return None;
        }
        let mut ip = Ipv4Packet::new_unchecked(&mut p.data_mut()[off..]);
        let tos = (self.dscp << 2) | ip.ecn();
        ip.set_tos_update_checksum(tos);
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::rw("dscp"), Handler::r("drops")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "dscp" => Some(self.dscp.to_string()),
            "drops" => Some(self.drops.to_string()),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, v: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "dscp" => match u8::from_arg(v) {
                Ok(d) if d <= 63 => {
                    self.dscp = d;
                    Ok(())
                }
                _ => Err("DSCP: must be between 0 and 63".into()),
            },
            _ => Err(format!("no handler {}", name)),
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SetIPDSCP",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("set_ip_dscp.rs"),
    make: || Box::new(SetIPDSCP::default()),
};
