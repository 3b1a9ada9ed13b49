//! IEEE 802.1D spanning-tree bridge protocol data units (BPDUs), 802.1D-1998 format.
//!
//! A BPDU travels in an IEEE 802.3 frame: the Ethernet header's type field is a length (at
//! most 1500), then an 802.2 LLC header (DSAP 0x42, SSAP 0x42, control 0x03, "unnumbered
//! information"), then the BPDU: protocol identifier 0, version 0, type, and for a
//! configuration BPDU the flags, root and bridge identifiers, root path cost, port
//! identifier and the four times, in units of 1/256 second. Frames go to the bridge group
//! address 01:80:c2:00:00:00.
//!
//! [`BpduPacket`] is a zero-copy view starting at the LLC header (the Ethernet payload);
//! [`BpduRepr`] is a validated configuration or topology change notification BPDU that can
//! be parsed from and emitted into such a view, or into a whole frame ([`BpduRepr::frame`]).

use std::fmt;

use crate::addr::EtherAddr;
use crate::error::{be16, be32, put16, put32, Result, WireError};
use crate::ethernet::{self, EthernetFrame};

/// The bridge group address, destination of every BPDU.
pub const BRIDGE_GROUP_ADDR: EtherAddr = EtherAddr([0x01, 0x80, 0xc2, 0x00, 0x00, 0x00]);
/// LLC service access point of the spanning tree protocol (both DSAP and SSAP).
pub const LLC_SAP_STP: u8 = 0x42;
/// LLC control field of unnumbered information frames.
pub const LLC_CONTROL_UI: u8 = 0x03;
/// Length of the LLC header.
pub const LLC_LEN: usize = 3;
/// BPDU type of a configuration BPDU.
pub const TYPE_CONFIG: u8 = 0x00;
/// BPDU type of a topology change notification BPDU.
pub const TYPE_TCN: u8 = 0x80;
/// BPDU type of a rapid spanning tree BPDU (802.1w), which this module does not parse.
pub const TYPE_RST: u8 = 0x02;
/// Length of a configuration BPDU (without the LLC header).
pub const CONFIG_LEN: usize = 35;
/// Length of a topology change notification BPDU (without the LLC header).
pub const TCN_LEN: usize = 4;
/// Flag bit: topology change.
pub const FLAG_TC: u8 = 0x01;
/// Flag bit: topology change acknowledgment.
pub const FLAG_TCA: u8 = 0x80;
/// Length of the frames [`BpduRepr::frame`] builds: the Ethernet minimum, without the FCS.
pub const FRAME_LEN: usize = 60;
/// Largest value of an 802.3 length field; larger values are EtherTypes.
pub const MAX_8023_LEN: u16 = 1500;

mod field {
    use std::ops::Range;
    pub const DSAP: usize = 0;
    pub const SSAP: usize = 1;
    pub const CONTROL: usize = 2;
    pub const PROTOCOL: usize = 3;
    pub const VERSION: usize = 5;
    pub const TYPE: usize = 6;
    pub const FLAGS: usize = 7;
    pub const ROOT: Range<usize> = 8..16;
    pub const COST: usize = 16;
    pub const BRIDGE: Range<usize> = 20..28;
    pub const PORT: usize = 28;
    pub const MESSAGE_AGE: usize = 30;
    pub const MAX_AGE: usize = 32;
    pub const HELLO_TIME: usize = 34;
    pub const FORWARD_DELAY: usize = 36;
}

/// A bridge identifier: a 16-bit priority and a 48-bit address, compared as one 64-bit
/// number (lower is better), as 802.1D orders them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BridgeId(pub u64);

impl BridgeId {
    /// The identifier of priority `priority` and address `addr`.
    pub fn new(priority: u16, addr: EtherAddr) -> BridgeId {
        let mut b = [0u8; 8];
        b[..2].copy_from_slice(&priority.to_be_bytes());
        b[2..].copy_from_slice(&addr.0);
        BridgeId(u64::from_be_bytes(b))
    }

    /// The priority part.
    pub fn priority(self) -> u16 {
        (self.0 >> 48) as u16
    }

    /// The address part.
    pub fn addr(self) -> EtherAddr {
        let b = self.0.to_be_bytes();
        EtherAddr([b[2], b[3], b[4], b[5], b[6], b[7]])
    }
}

impl fmt::Display for BridgeId {
    /// Linux's format: the priority and the address in hexadecimal, `8000.0200c0a80001`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.addr().0;
        write!(
            f,
            "{:04x}.{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
            self.priority(),
            a[0],
            a[1],
            a[2],
            a[3],
            a[4],
            a[5]
        )
    }
}

impl fmt::Debug for BridgeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A zero-copy view of a BPDU with its LLC header (an 802.3 frame's payload). The
/// configuration fields (flags to forward delay) are there only when
/// [`BpduPacket::bpdu_type`] is [`TYPE_CONFIG`]; [`BpduPacket::new_checked`] then checks
/// their length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BpduPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> BpduPacket<T> {
    /// Wraps a buffer without checking its length.
    pub const fn new_unchecked(buffer: T) -> Self {
        BpduPacket { buffer }
    }

    /// Wraps a buffer, checking that it holds the LLC header and the BPDU its type field
    /// announces (4 bytes, or 35 for a configuration BPDU).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks the length as [`BpduPacket::new_checked`] does.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < LLC_LEN + TCN_LEN
            || (self.bpdu_type() == TYPE_CONFIG && len < LLC_LEN + CONFIG_LEN)
        {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    fn be64(&self, r: std::ops::Range<usize>) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&self.b()[r]);
        u64::from_be_bytes(a)
    }

    /// LLC destination service access point.
    pub fn dsap(&self) -> u8 {
        self.b()[field::DSAP]
    }

    /// LLC source service access point.
    pub fn ssap(&self) -> u8 {
        self.b()[field::SSAP]
    }

    /// LLC control field.
    pub fn control(&self) -> u8 {
        self.b()[field::CONTROL]
    }

    /// True if the LLC header is the spanning tree protocol's (42 42 03).
    pub fn is_stp_llc(&self) -> bool {
        self.dsap() == LLC_SAP_STP && self.ssap() == LLC_SAP_STP && self.control() == LLC_CONTROL_UI
    }

    /// Protocol identifier (0 for the spanning tree protocol).
    pub fn protocol_id(&self) -> u16 {
        be16(self.b(), field::PROTOCOL)
    }

    /// Protocol version (0 for 802.1D-1998's STP, 2 for RSTP).
    pub fn version(&self) -> u8 {
        self.b()[field::VERSION]
    }

    /// BPDU type ([`TYPE_CONFIG`], [`TYPE_TCN`], ...).
    pub fn bpdu_type(&self) -> u8 {
        self.b()[field::TYPE]
    }

    /// Flags (configuration BPDU).
    pub fn flags(&self) -> u8 {
        self.b()[field::FLAGS]
    }

    /// Root identifier (configuration BPDU).
    pub fn root_id(&self) -> BridgeId {
        BridgeId(self.be64(field::ROOT))
    }

    /// Root path cost (configuration BPDU).
    pub fn root_path_cost(&self) -> u32 {
        be32(self.b(), field::COST)
    }

    /// Identifier of the transmitting bridge (configuration BPDU).
    pub fn bridge_id(&self) -> BridgeId {
        BridgeId(self.be64(field::BRIDGE))
    }

    /// Identifier of the transmitting port (configuration BPDU).
    pub fn port_id(&self) -> u16 {
        be16(self.b(), field::PORT)
    }

    /// Message age, in 1/256 s (configuration BPDU).
    pub fn message_age(&self) -> u16 {
        be16(self.b(), field::MESSAGE_AGE)
    }

    /// Max age, in 1/256 s (configuration BPDU).
    pub fn max_age(&self) -> u16 {
        be16(self.b(), field::MAX_AGE)
    }

    /// Hello time, in 1/256 s (configuration BPDU).
    pub fn hello_time(&self) -> u16 {
        be16(self.b(), field::HELLO_TIME)
    }

    /// Forward delay, in 1/256 s (configuration BPDU).
    pub fn forward_delay(&self) -> u16 {
        be16(self.b(), field::FORWARD_DELAY)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> BpduPacket<T> {
    fn m(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    /// Writes the spanning tree protocol's LLC header (42 42 03).
    pub fn set_stp_llc(&mut self) {
        let b = self.m();
        b[field::DSAP] = LLC_SAP_STP;
        b[field::SSAP] = LLC_SAP_STP;
        b[field::CONTROL] = LLC_CONTROL_UI;
    }

    /// Sets the protocol identifier.
    pub fn set_protocol_id(&mut self, v: u16) {
        put16(self.m(), field::PROTOCOL, v);
    }

    /// Sets the protocol version.
    pub fn set_version(&mut self, v: u8) {
        self.m()[field::VERSION] = v;
    }

    /// Sets the BPDU type.
    pub fn set_bpdu_type(&mut self, v: u8) {
        self.m()[field::TYPE] = v;
    }

    /// Sets the flags.
    pub fn set_flags(&mut self, v: u8) {
        self.m()[field::FLAGS] = v;
    }

    /// Sets the root identifier.
    pub fn set_root_id(&mut self, v: BridgeId) {
        self.m()[field::ROOT].copy_from_slice(&v.0.to_be_bytes());
    }

    /// Sets the root path cost.
    pub fn set_root_path_cost(&mut self, v: u32) {
        put32(self.m(), field::COST, v);
    }

    /// Sets the transmitting bridge's identifier.
    pub fn set_bridge_id(&mut self, v: BridgeId) {
        self.m()[field::BRIDGE].copy_from_slice(&v.0.to_be_bytes());
    }

    /// Sets the transmitting port's identifier.
    pub fn set_port_id(&mut self, v: u16) {
        put16(self.m(), field::PORT, v);
    }

    /// Sets the message age (1/256 s).
    pub fn set_message_age(&mut self, v: u16) {
        put16(self.m(), field::MESSAGE_AGE, v);
    }

    /// Sets the max age (1/256 s).
    pub fn set_max_age(&mut self, v: u16) {
        put16(self.m(), field::MAX_AGE, v);
    }

    /// Sets the hello time (1/256 s).
    pub fn set_hello_time(&mut self, v: u16) {
        put16(self.m(), field::HELLO_TIME, v);
    }

    /// Sets the forward delay (1/256 s).
    pub fn set_forward_delay(&mut self, v: u16) {
        put16(self.m(), field::FORWARD_DELAY, v);
    }
}

/// The contents of a configuration BPDU. Times are in units of 1/256 second, as on the
/// wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigBpdu {
    /// Topology change flag.
    pub tc: bool,
    /// Topology change acknowledgment flag.
    pub tca: bool,
    /// The root bridge as the transmitter believes it to be.
    pub root: BridgeId,
    /// The transmitter's cost to the root.
    pub root_path_cost: u32,
    /// The transmitting bridge.
    pub bridge: BridgeId,
    /// The transmitting port (priority in the high byte, number in the low byte).
    pub port_id: u16,
    /// Age of the root's information.
    pub message_age: u16,
    /// Age at which the information is discarded.
    pub max_age: u16,
    /// Interval between the root's configuration BPDUs.
    pub hello_time: u16,
    /// Time spent in each of the listening and learning states.
    pub forward_delay: u16,
}

/// A validated BPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BpduRepr {
    /// A configuration BPDU.
    Config(ConfigBpdu),
    /// A topology change notification BPDU.
    Tcn,
}

impl BpduRepr {
    /// Parses a BPDU view: the LLC header must be the spanning tree protocol's and the
    /// protocol identifier 0 ([`WireError::Unsupported`] otherwise); any version is accepted
    /// (802.1D-2004's rule for forward compatibility), but only the configuration and
    /// topology change notification types ([`WireError::Unsupported`] for RSTP's and
    /// others).
    pub fn parse<T: AsRef<[u8]>>(p: &BpduPacket<T>) -> Result<BpduRepr> {
        p.check_len()?;
        if !p.is_stp_llc() || p.protocol_id() != 0 {
            return Err(WireError::Unsupported);
        }
        match p.bpdu_type() {
            TYPE_TCN => Ok(BpduRepr::Tcn),
            TYPE_CONFIG => Ok(BpduRepr::Config(ConfigBpdu {
                tc: p.flags() & FLAG_TC != 0,
                tca: p.flags() & FLAG_TCA != 0,
                root: p.root_id(),
                root_path_cost: p.root_path_cost(),
                bridge: p.bridge_id(),
                port_id: p.port_id(),
                message_age: p.message_age(),
                max_age: p.max_age(),
                hello_time: p.hello_time(),
                forward_delay: p.forward_delay(),
            })),
            _ => Err(WireError::Unsupported),
        }
    }

    /// Parses a whole frame: an Ethernet header whose type field is an 802.3 length
    /// ([`WireError::Unsupported`] for an EtherType), then the BPDU, read no further than
    /// that length (padding after it is ignored). Returns the frame's source address too.
    pub fn parse_frame(frame: &[u8]) -> Result<(EtherAddr, BpduRepr)> {
        let eth = EthernetFrame::new_checked(frame)?;
        let len = eth.ethertype();
        if len > MAX_8023_LEN {
            return Err(WireError::Unsupported);
        }
        let payload = eth.payload();
        let payload = &payload[..payload.len().min(len as usize)];
        let repr = BpduRepr::parse(&BpduPacket::new_checked(payload)?)?;
        Ok((eth.src(), repr))
    }

    /// Length of the BPDU with its LLC header.
    pub fn buffer_len(&self) -> usize {
        LLC_LEN
            + match self {
                BpduRepr::Config(_) => CONFIG_LEN,
                BpduRepr::Tcn => TCN_LEN,
            }
    }

    /// Writes the LLC header and the BPDU (version 0) into `p`, which must hold
    /// [`BpduRepr::buffer_len`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut BpduPacket<T>) {
        p.set_stp_llc();
        p.set_protocol_id(0);
        p.set_version(0);
        match self {
            BpduRepr::Tcn => p.set_bpdu_type(TYPE_TCN),
            BpduRepr::Config(c) => {
                p.set_bpdu_type(TYPE_CONFIG);
                p.set_flags(if c.tc { FLAG_TC } else { 0 } | if c.tca { FLAG_TCA } else { 0 });
                p.set_root_id(c.root);
                p.set_root_path_cost(c.root_path_cost);
                p.set_bridge_id(c.bridge);
                p.set_port_id(c.port_id);
                p.set_message_age(c.message_age);
                p.set_max_age(c.max_age);
                p.set_hello_time(c.hello_time);
                p.set_forward_delay(c.forward_delay);
            }
        }
    }

    /// The whole frame from `src` to the bridge group address: Ethernet header with the
    /// 802.3 length, LLC header, BPDU, zero padding up to [`FRAME_LEN`].
    pub fn frame(&self, src: EtherAddr) -> [u8; FRAME_LEN] {
        let mut b = [0u8; FRAME_LEN];
        let mut eth = EthernetFrame::new_unchecked(&mut b[..]);
        eth.set_dst(BRIDGE_GROUP_ADDR);
        eth.set_src(src);
        eth.set_ethertype(self.buffer_len() as u16);
        let end = ethernet::HEADER_LEN + self.buffer_len();
        self.emit(&mut BpduPacket::new_unchecked(
            &mut b[ethernet::HEADER_LEN..end],
        ));
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A configuration BPDU as Linux's bridge sends it: root 8000.02:00:00:00:00:01, cost 4,
    // bridge 8000.02:00:00:00:00:02, port 0x8001, age 1 s, max age 20 s, hello 2 s,
    // forward delay 15 s, TC set.
    const CONFIG: [u8; 52] = [
        0x01, 0x80, 0xc2, 0x00, 0x00, 0x00, // dst
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, // src
        0x00, 0x26, // 802.3 length 38
        0x42, 0x42, 0x03, // LLC
        0x00, 0x00, 0x00, 0x00, // protocol, version, type
        0x01, // flags: TC
        0x80, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // root
        0x00, 0x00, 0x00, 0x04, // cost
        0x80, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, // bridge
        0x80, 0x01, // port
        0x01, 0x00, 0x14, 0x00, 0x02, 0x00, 0x0f, 0x00, // times
    ];

    const TCN: [u8; 21] = [
        0x01, 0x80, 0xc2, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x07, 0x42,
        0x42, 0x03, 0x00, 0x00, 0x00, 0x80,
    ];

    fn config() -> ConfigBpdu {
        ConfigBpdu {
            tc: true,
            tca: false,
            root: BridgeId::new(0x8000, EtherAddr([2, 0, 0, 0, 0, 1])),
            root_path_cost: 4,
            bridge: BridgeId::new(0x8000, EtherAddr([2, 0, 0, 0, 0, 2])),
            port_id: 0x8001,
            message_age: 256,
            max_age: 20 * 256,
            hello_time: 2 * 256,
            forward_delay: 15 * 256,
        }
    }

    #[test]
    fn parse_and_build_config() {
        let (src, repr) = BpduRepr::parse_frame(&CONFIG).unwrap();
        assert_eq!(src, EtherAddr([2, 0, 0, 0, 0, 2]));
        assert_eq!(repr, BpduRepr::Config(config()));
        let f = repr.frame(src);
        assert_eq!(&f[..52], &CONFIG[..]);
        assert!(f[52..].iter().all(|&b| b == 0));
        assert_eq!(BpduRepr::parse_frame(&f).unwrap(), (src, repr));
        let v = BpduPacket::new_checked(&CONFIG[14..]).unwrap();
        assert!(v.is_stp_llc());
        assert_eq!(
            (v.version(), v.bpdu_type(), v.flags()),
            (0, TYPE_CONFIG, FLAG_TC)
        );
        assert_eq!(v.root_id().to_string(), "8000.020000000001");
        assert_eq!(v.root_id().priority(), 0x8000);
    }

    #[test]
    fn parse_and_build_tcn() {
        let (src, repr) = BpduRepr::parse_frame(&TCN).unwrap();
        assert_eq!((src, repr), (EtherAddr([2, 0, 0, 0, 0, 3]), BpduRepr::Tcn));
        assert_eq!(&repr.frame(src)[..21], &TCN[..]);
    }

    #[test]
    fn bridge_ids_order_by_priority_then_address() {
        let a = BridgeId::new(0x8000, EtherAddr([0, 0, 0, 0, 0, 9]));
        let b = BridgeId::new(0x8000, EtherAddr([1, 0, 0, 0, 0, 0]));
        let c = BridgeId::new(0x1000, EtherAddr([0xff; 6]));
        assert!(c < a && a < b);
        assert_eq!(b.addr(), EtherAddr([1, 0, 0, 0, 0, 0]));
    }

    #[test]
    fn bad_frames_are_errors() {
        // Every truncation of a valid BPDU is an error, never a panic.
        for n in 0..CONFIG.len() {
            assert!(BpduRepr::parse_frame(&CONFIG[..n]).is_err(), "{n}");
        }
        for n in 0..TCN.len() {
            assert!(BpduRepr::parse_frame(&TCN[..n]).is_err(), "{n}");
        }
        // A length field shorter than the BPDU it announces.
        let mut short = CONFIG;
        short[13] = 30;
        assert_eq!(BpduRepr::parse_frame(&short), Err(WireError::Truncated));
        // An EtherType instead of a length, another LLC SAP, a nonzero protocol, RSTP.
        let mut v = CONFIG;
        v[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        assert_eq!(BpduRepr::parse_frame(&v), Err(WireError::Unsupported));
        let mut v = CONFIG;
        v[14] = 0xaa;
        assert_eq!(BpduRepr::parse_frame(&v), Err(WireError::Unsupported));
        let mut v = CONFIG;
        v[18] = 1;
        assert_eq!(BpduRepr::parse_frame(&v), Err(WireError::Unsupported));
        let mut v = CONFIG;
        v[19] = 2;
        v[20] = TYPE_RST;
        assert_eq!(BpduRepr::parse_frame(&v), Err(WireError::Unsupported));
        // A later version of a configuration BPDU is read as one.
        let mut v = CONFIG;
        v[19] = 3;
        assert!(matches!(
            BpduRepr::parse_frame(&v),
            Ok((_, BpduRepr::Config(_)))
        ));
    }
}
