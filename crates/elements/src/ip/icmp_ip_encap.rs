//! ICMPIPEncap — encapsulates packets in ICMP/IP headers
//!
//! Synopsis: `ICMPIPEncap(SRC, DST, TYPE [, CODE, IDENTIFIER, SEQUENCE_NUMBER])`
//!
//! Ports: 1 input, 1 output, agnostic. Makes each packet the data of an ICMP message of TYPE
//! and CODE: prepends the ICMP header (8 bytes; 20 for timestamp and timestamp reply, whose
//! three timestamps are left 0) and, in front of it, a 20-byte IPv4 header from SRC to DST
//! with protocol ICMP, TOS 0, TTL 255 and no flags. Both checksums are filled in (the ICMP one
//! over the header and the whole original packet). The IPv4 identification counts up by one
//! per packet from SEQUENCE_NUMBER, skipping 0 when it wraps; the types that carry an
//! identifier and a sequence number (echo, echo reply, timestamp, timestamp reply,
//! information request and reply) get IDENTIFIER and that same count. Sets the network header
//! annotation, the transport header annotation (the ICMP header) and the destination IP
//! annotation (to the destination used). Nothing is dropped.
//!
//! Arguments:
//! - `SRC`, `DST`: addresses (or AddressInfo names); DST may also be `DST_ANNO` to use each
//!   packet's destination IP annotation, as in IPEncap.
//! - `TYPE`: number or name (`echo`, `echo-reply`, `unreachable`, `timeexceeded`, …).
//! - `CODE`: number or name for TYPE (default 0), as in ICMPError.
//! - `IDENTIFIER` (0–65535, default 0).
//! - `SEQUENCE_NUMBER` (0–65535, default 1): the first sequence number.
//!
//! Handlers: `src` (rw), `dst` (rw, an address or `DST_ANNO`).
//!
//! Example: `ICMPIPEncap(198.18.0.1, 198.19.0.2, echo, IDENTIFIER 7)` turns payloads into
//! pings.

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::icmp::{
    HEADER_LEN as ICMP_HEADER_LEN, TYPE_ECHO, TYPE_ECHO_REPLY, TYPE_INFO_REPLY, TYPE_INFO_REQUEST,
    TYPE_TIMESTAMP, TYPE_TIMESTAMP_REPLY,
};
use sluice_wire::ipv4::{HEADER_LEN, PROTO_ICMP};
use sluice_wire::IcmpPacket;
use std::net::Ipv4Addr;

use super::common::{ipv4_header, push_ipv4_header, Endpoints};
use crate::icmp::read_type_code;

/// TTL of the IPv4 header.
const TTL: u8 = 255;

/// Length of a timestamp or timestamp reply header (three 32-bit timestamps follow).
const TIMESTAMP_HEADER_LEN: usize = ICMP_HEADER_LEN + 12;

/// The ICMPIPEncap element.
pub struct ICMPIPEncap {
    ends: Endpoints,
    ty: u8,
    code: u8,
    ident: u16,
    seq: u16,
}

impl Default for ICMPIPEncap {
    fn default() -> Self {
        ICMPIPEncap {
            ends: Endpoints::UNSPECIFIED,
            ty: 0,
            code: 0,
            ident: 0,
            seq: 1,
        }
    }
}

impl ICMPIPEncap {
    /// Length of the ICMP header of this element's type.
    fn header_len(&self) -> usize {
        match self.ty {
            TYPE_TIMESTAMP | TYPE_TIMESTAMP_REPLY => TIMESTAMP_HEADER_LEN,
            _ => ICMP_HEADER_LEN,
        }
    }

    /// True if this element's type carries an identifier and a sequence number.
    fn sequenced(&self) -> bool {
        matches!(
            self.ty,
            TYPE_ECHO
                | TYPE_ECHO_REPLY
                | TYPE_TIMESTAMP
                | TYPE_TIMESTAMP_REPLY
                | TYPE_INFO_REQUEST
                | TYPE_INFO_REPLY
        )
    }
}

impl Element for ICMPIPEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.ends.src = args.read_mp::<Ipv4Addr>("SRC")?;
        self.ends.dst = args.read_mp("DST")?;
        (self.ty, self.code) = read_type_code(args)?;
        self.ident = args.read_p("IDENTIFIER")?.unwrap_or(self.ident);
        self.seq = args.read_p("SEQUENCE_NUMBER")?.unwrap_or(self.seq);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let dst = self.ends.dst_of(&p);
        let ip = ipv4_header(PROTO_ICMP, self.ends.src, dst, TTL, self.seq);
        push_ipv4_header(&mut p, ip, self.header_len());
        let mut icmp = IcmpPacket::new_unchecked(&mut p.data_mut()[HEADER_LEN..]);
        icmp.set_msg_type(self.ty);
        icmp.set_code(self.code);
        if self.sequenced() {
            icmp.set_ident(self.ident);
            icmp.set_seq(self.seq);
        }
        icmp.fill_checksum();
        self.seq = self.seq.checked_add(1).unwrap_or(1);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .nest(|e| &mut e.ends, Endpoints::table())
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ICMPIPEncap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("icmp_ip_encap.rs"),
    make: || Box::<ICMPIPEncap>::default(),
};
