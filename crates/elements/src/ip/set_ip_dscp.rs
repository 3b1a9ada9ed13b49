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
//! Handlers: `dscp` (rw), `drops` (r): packets too short, dropped. `drop_details` (r): the
//! same, by reason.
//!
//! Example: `IPClassifier(udp port 5060, -) => SetIPDSCP(46), SetIPDSCP(0)`

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;

drop_reasons! {
    /// Why SetIPDSCP drops a packet.
    enum Reason { TooShort => "too short for an IP header" }
}

/// The SetIPDSCP element.
#[derive(Default)]
pub struct SetIPDSCP {
    dscp: u8,
    drops: Drops<Reason>,
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
            self.drops.count(Reason::TooShort);
            return None;
        }
        let mut ip = Ipv4Packet::new_unchecked(&mut p.data_mut()[off..]);
        let tos = (self.dscp << 2) | ip.ecn();
        ip.set_tos_update_checksum(tos);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("dscp", |e| e.dscp)
            .write("dscp", |e, v, _| match u8::from_arg(v) {
                Ok(d) if d <= 63 => {
                    e.dscp = d;
                    Ok(())
                }
                _ => Err("DSCP: must be between 0 and 63".into()),
            })
            .setting()
            .drops(|e| &e.drops)
            .into()
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
