//! ESPEncap — encrypts IP packets into an ESP tunnel
//!
//! Synopsis: `ESPEncap(SPI, SRC, DST, ALG ALG, KEYFILE FILE, [keywords TTL, DF])`
//!
//! Ports: 1 input, 1 output, agnostic. Each input packet is an IPv4 or IPv6 packet starting
//! at the data (as after Strip(14)). It leaves as an ESP packet in tunnel mode (RFC 4303):
//! a new IPv4 header from SRC to DST with protocol 50, the SPI, the next sequence number,
//! the IV, the encrypted inner packet with its padding, pad length and next header (4 for
//! IPv4, 41 for IPv6), and the ICV. The outer header copies the inner TOS byte (DSCP and
//! ECN, RFC 6040's normal mode) and gets a fresh identification per packet; the network
//! header annotation is set, and the destination IP annotation is set to DST.
//!
//! Dropped and counted in `drops`/`drop_details`: packets that are not IPv4 or IPv6 ("not an
//! IP packet"), and every packet once the 32-bit sequence number space is used up ("sequence
//! numbers exhausted": the SA must be replaced, RFC 4303 §3.3.3).
//!
//! Arguments:
//! - `SPI`: the Security Parameters Index, 256 or above (`0x100` or `256`).
//! - `SRC`, `DST`: the tunnel's outer addresses (AddressInfo names allowed); DST may be
//!   `DST_ANNO`.
//! - `ALG`: `aes-gcm-128` (RFC 4106: 16-byte ICV, 8-byte IV) or `aes-cbc-128-hmac-sha1`
//!   (RFC 3602 with RFC 2404's HMAC-SHA1-96: 12-byte ICV, 16-byte IV).
//! - `KEYFILE`: a file of `NAME HEX` lines with the SA's keys, named as `ip xfrm state`
//!   names them: `aead` (20 bytes: key then salt) for aes-gcm-128, `enc` (16 bytes) and
//!   `auth` (20 bytes) for aes-cbc-128-hmac-sha1. Keys are read once and never printed.
//! - `TTL`: outer TTL (default 64); `DF`: set the outer don't-fragment bit (default false).
//!
//! Handlers: `spi` (r), `alg` (r), `seq` (r, the last sequence number sent), `count` (r,
//! packets encapsulated), `src` and `dst` (rw), `drops`, `drop_details` (r).
//!
//! Unlike Click's IPsec package (IPsecESPEncap, IPsecAES, IPsecAuthHMACSHA1 chained and fed
//! SAs by IPsecRouteTable), one element does the whole outbound transform of one SA.
//!
//! Example: `ESPEncap(0x1001, 198.18.0.1, 198.19.0.1, ALG aes-gcm-128, KEYFILE sa.keys)`

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::Args;
use sluice_wire::Ipv4Repr;

use super::sa::{Alg, Spi, Transform, ESP_HEADER_LEN};
use crate::ip::common::{ipv4_header, push_ipv4_header, Endpoints};

drop_reasons! {
    /// Why a packet was not encapsulated.
    pub enum Reason {
        /// Neither an IPv4 nor an IPv6 packet.
        NotIp => "not an IP packet",
        /// Every 32-bit sequence number was used.
        Exhausted => "sequence numbers exhausted",
    }
}

/// The ESPEncap element.
pub struct ESPEncap {
    spi: Spi,
    ends: Endpoints,
    xform: Option<Transform>,
    ttl: u8,
    df: bool,
    id: u16,
    seq: u32,
    count: u64,
    drops: Drops<Reason>,
}

impl Default for ESPEncap {
    fn default() -> Self {
        ESPEncap {
            spi: Spi(0),
            ends: Endpoints::UNSPECIFIED,
            xform: None,
            ttl: 64,
            df: false,
            id: 0,
            seq: 0,
            count: 0,
            drops: Drops::default(),
        }
    }
}

/// The ESP next-header value and the TOS (IPv6 traffic class) of an inner packet.
fn inner_kind(d: &[u8]) -> Option<(u8, u8)> {
    match d.first().map(|b| b >> 4) {
        Some(4) if d.len() >= 20 => Some((4, d[1])),
        Some(6) if d.len() >= 40 => Some((41, (d[0] << 4) | (d[1] >> 4))),
        _ => None,
    }
}

impl ESPEncap {
    fn alg(&self) -> Alg {
        self.xform.as_ref().map_or(Alg::AesGcm128, |t| t.alg())
    }
}

impl Element for ESPEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.spi = args.read_mp("SPI")?;
        self.ends.src = args.read_mp("SRC")?;
        self.ends.dst = args.read_mp("DST")?;
        let alg: Alg = args.read_m("ALG")?;
        let file: String = args.read_m("KEYFILE")?;
        match Transform::from_key_file(alg, &file) {
            Ok(t) => self.xform = Some(t),
            Err(e) => {
                args.error(format!("KEYFILE: {e}"));
                return Err(());
            }
        }
        args.read_into("TTL", &mut self.ttl)?;
        args.read_into("DF", &mut self.df)
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let Some((next, tos)) = inner_kind(p.data()) else {
            self.drops.count(Reason::NotIp);
            return None;
        };
        let Some(seq) = self.seq.checked_add(1) else {
            self.drops.count(Reason::Exhausted);
            return None;
        };
        self.seq = seq;
        let xform = self.xform.as_ref().expect("configured");
        let alg = xform.alg();
        let text = (p.len() + 2).next_multiple_of(alg.block());
        let pad = text - p.len() - 2;
        let tail = p.put(pad + 2 + alg.icv_len());
        for (i, b) in tail[..pad].iter_mut().enumerate() {
            *b = i as u8 + 1;
        }
        tail[pad] = pad as u8;
        tail[pad + 1] = next;
        self.id = self.id.wrapping_add(1);
        let dst = self.ends.dst_of(&p);
        let ip = Ipv4Repr {
            tos,
            dont_frag: self.df,
            ..ipv4_header(50, self.ends.src, dst, self.ttl, self.id)
        };
        push_ipv4_header(&mut p, ip, alg.head_len());
        let esp = &mut p.data_mut()[20..];
        esp[..4].copy_from_slice(&self.spi.0.to_be_bytes());
        esp[4..ESP_HEADER_LEN].copy_from_slice(&seq.to_be_bytes());
        xform.seal(esp, seq as u64);
        self.count += 1;
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("spi", |e| e.spi)
            .read("alg", |e| e.alg())
            .read("seq", |e| e.seq)
            .read("count", |e| e.count)
            .nest(|e| &mut e.ends, Endpoints::table())
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ESPEncap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("esp_encap.rs"),
    make: || Box::<ESPEncap>::default(),
};
