//! SetIP6DSCP — sets the IPv6 DSCP field
//!
//! Synopsis: `SetIP6DSCP(DSCP)`
//!
//! Ports: 1 input, 1 output, agnostic. Expects IPv6 packets with the network header
//! annotation (or starting with their IPv6 header). Sets the Differentiated Services Code
//! Point, the upper six bits of the traffic class, to DSCP; the ECN bits and the flow label
//! are kept. Packets too short to hold an IPv6 header are dropped and counted.
//!
//! Arguments: `DSCP` (0–63, mandatory).
//!
//! Handlers: `dscp` (rw). `drops` (r): packets too short, dropped. `drop_details` (r): the
//! same, by reason.
//!
//! Example: `IP6Classifier(...) => SetIP6DSCP(46), SetIP6DSCP(0)`

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::ipv6::HEADER_LEN;
use sluice_wire::Ipv6Packet;

use crate::ip::common::ip_offset;

drop_reasons! {
    /// Why SetIP6DSCP drops a packet.
    enum Reason { TooShort => "too short for an IPv6 header" }
}

/// The message for a DSCP out of range.
const RANGE: &str = "diffserv code point out of range";

/// The SetIP6DSCP element.
#[derive(Default)]
pub struct SetIP6DSCP {
    dscp: u8,
    drops: Drops<Reason>,
}

impl Element for SetIP6DSCP {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let d: u32 = args.read_mp("DSCP")?;
        if d > 63 {
            args.error(RANGE);
            return Err(());
        }
        self.dscp = d as u8;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let off = ip_offset(&p);
        if p.len() < off + HEADER_LEN {
            self.drops.count(Reason::TooShort);
            return None;
        }
        let mut ip = Ipv6Packet::new_unchecked(&mut p.data_mut()[off..]);
        let tc = (self.dscp << 2) | (ip.traffic_class() & 3);
        ip.set_traffic_class(tc);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("dscp", |e| e.dscp)
            .write("dscp", |e, v, _| match u32::from_arg(v.trim()) {
                Ok(d) if d <= 63 => {
                    e.dscp = d as u8;
                    Ok(())
                }
                Ok(_) => Err(RANGE.into()),
                Err(m) => Err(format!("DSCP: {m}")),
            })
            .setting()
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SetIP6DSCP",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("set_ip6_dscp.rs"),
    make: || Box::<SetIP6DSCP>::default(),
};
