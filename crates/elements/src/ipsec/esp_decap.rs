//! ESPDecap — authenticates, decrypts and decapsulates ESP tunnel packets
//!
//! Synopsis: `ESPDecap(SPI, ALG ALG, KEYFILE FILE, [keywords REPLAY_WINDOW, SA])`
//!
//! Ports: 1 input, 1 output, agnostic. Each input packet is an IPv4 packet carrying ESP
//! (protocol 50) starting at the data (as after Strip(14) and CheckIPHeader). The SA is
//! found by SPI; the sequence number is checked against the SA's anti-replay window (RFC 4303
//! §3.4.3) before and recorded after the ICV is verified; the ciphertext is decrypted in
//! place and the padding checked. The inner packet (IPv4 or IPv6) leaves with the outer
//! header, ESP header, IV, padding and ICV removed, the network header annotation set and,
//! for IPv4, the destination IP annotation set to the inner destination. Congestion
//! experienced on the outer header is copied to an ECN-capable inner IPv4 header (RFC 6040).
//!
//! Dropped and counted in `drops`/`drop_details`, by reason: "malformed ESP" (not ESP, or too
//! short, or a ciphertext that is not whole blocks), "unknown SPI", "replayed" (a sequence
//! number already received or below the window), "bad ICV", "bad padding", "dummy packet"
//! (next header 59, RFC 4303 §2.6), "bad inner packet" (next header neither 4 nor 41, or an
//! inner header that does not fit).
//!
//! Arguments:
//! - `SPI`, `ALG`, `KEYFILE`: the inbound SA, as for ESPEncap (same key file format).
//! - `REPLAY_WINDOW`: anti-replay window in packets, 0 (off) to 4096 (default 64).
//! - `SA`: another inbound SA, `SPI ALG KEYFILE`; may be repeated. Every SA has its own
//!   window of REPLAY_WINDOW packets. SAs are found by SPI alone (the tunnel's addresses are
//!   not checked).
//!
//! Handlers: `count` (r, packets decapsulated), `table` (r, one line per SA: SPI, algorithm,
//! the highest sequence number received, the window and packets accepted), `drops`,
//! `drop_details` (r).
//!
//! Example: `ESPDecap(0x1001, ALG aes-gcm-128, KEYFILE sa.keys, REPLAY_WINDOW 128)`

use std::fmt::Write;

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::{split_words, Args, FromArg};
use sluice_wire::Ipv4Packet;
use std::net::Ipv4Addr;

use super::replay::{ReplayWindow, MAX_WINDOW};
use super::sa::{Alg, BadIcv, Spi, Transform};

drop_reasons! {
    /// Why an ESP packet was dropped.
    pub enum Reason {
        /// Not ESP, too short, or a ciphertext of partial blocks.
        Malformed => "malformed ESP",
        /// No SA has this SPI.
        UnknownSpi => "unknown SPI",
        /// Already received, or older than the window.
        Replayed => "replayed",
        /// The ICV does not match.
        BadIcv => "bad ICV",
        /// Pad length beyond the payload, or padding bytes other than 1, 2, 3, ….
        BadPadding => "bad padding",
        /// Next header 59: traffic-flow-confidentiality padding.
        Dummy => "dummy packet",
        /// Next header neither IPv4 nor IPv6, or an inner header that does not fit.
        BadInner => "bad inner packet",
    }
}

/// One inbound security association.
struct InboundSa {
    spi: Spi,
    xform: Transform,
    window: ReplayWindow,
    packets: u64,
}

/// An `SA` argument: `SPI ALG KEYFILE`.
struct SaArg(Spi, Alg, String);

impl FromArg for SaArg {
    fn from_arg(s: &str) -> Result<Self, String> {
        let w = split_words(s);
        let [spi, alg, file] = w.as_slice() else {
            return Err("expected SPI ALG KEYFILE".into());
        };
        Ok(SaArg(
            Spi::from_arg(spi)?,
            Alg::from_arg(alg)?,
            file.clone(),
        ))
    }
}

/// The ESPDecap element.
#[derive(Default)]
pub struct ESPDecap {
    /// Sorted by SPI.
    sas: Vec<InboundSa>,
    count: u64,
    drops: Drops<Reason>,
}

impl ESPDecap {
    /// Opens the ESP packet `p`, leaving the inner packet; the reason if it is dropped.
    fn open(&mut self, p: &mut Packet) -> Result<(), Reason> {
        let d = p.data();
        if d.len() < 20 || d[0] >> 4 != 4 || d[9] != 50 {
            return Err(Reason::Malformed);
        }
        let hl = (d[0] & 15) as usize * 4;
        let total = (u16::from_be_bytes([d[2], d[3]]) as usize).min(d.len());
        let outer_ecn = d[1] & 3;
        let esp_len = total
            .checked_sub(hl)
            .filter(|_| hl >= 20)
            .ok_or(Reason::Malformed)?;
        if esp_len < 8 {
            return Err(Reason::Malformed);
        }
        let spi = Spi(u32::from_be_bytes(
            d[hl..hl + 4].try_into().expect("4 bytes"),
        ));
        let seq = u32::from_be_bytes(d[hl + 4..hl + 8].try_into().expect("4 bytes"));
        let i = self
            .sas
            .binary_search_by_key(&spi, |s| s.spi)
            .map_err(|_| Reason::UnknownSpi)?;
        let sa = &mut self.sas[i];
        let alg = sa.xform.alg();
        let text = esp_len
            .checked_sub(alg.head_len() + alg.icv_len())
            .filter(|&t| t >= alg.block().max(4) && t.is_multiple_of(alg.block()))
            .ok_or(Reason::Malformed)?;
        if !sa.window.check(seq) {
            return Err(Reason::Replayed);
        }
        p.take(p.len() - total);
        let esp = &mut p.data_mut()[hl..];
        sa.xform.open(esp).map_err(|BadIcv| Reason::BadIcv)?;
        sa.window.accept(seq);
        sa.packets += 1;
        let plain = &esp[alg.head_len()..alg.head_len() + text];
        let (pad, next) = (plain[text - 2] as usize, plain[text - 1]);
        if pad + 2 > text
            || plain[text - 2 - pad..text - 2]
                .iter()
                .zip(1..)
                .any(|(&b, i)| b != i)
        {
            return Err(Reason::BadPadding);
        }
        let inner = text - 2 - pad;
        let version = match next {
            59 => return Err(Reason::Dummy),
            4 => 4,
            41 => 6,
            _ => return Err(Reason::BadInner),
        };
        let min = if version == 4 { 20 } else { 40 };
        if inner < min || plain[0] >> 4 != version {
            return Err(Reason::BadInner);
        }
        p.pull_front(hl + alg.head_len());
        p.take(p.len() - inner);
        p.set_network_offset(0);
        if version == 4 {
            let mut ip = Ipv4Packet::new_unchecked(p.data_mut());
            if outer_ecn == 3 && matches!(ip.ecn(), 1 | 2) {
                let tos = ip.tos() | 3;
                ip.set_tos_update_checksum(tos);
            }
            let dst = Ipv4Addr::from(<[u8; 4]>::try_from(&p.data()[16..20]).expect("4 bytes"));
            p.set_dst_ip_anno(dst);
        }
        Ok(())
    }

    fn table(&self) -> String {
        let mut s = String::new();
        for sa in &self.sas {
            let _ = writeln!(
                s,
                "{} {} seq {} window {} packets {}",
                sa.spi,
                sa.xform.alg(),
                sa.window.top(),
                sa.window.size(),
                sa.packets
            );
        }
        s
    }
}

impl Element for ESPDecap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let mut sas = Vec::new();
        if let Some(spi) = args.read_p::<Spi>("SPI")? {
            sas.push(SaArg(spi, args.read_m("ALG")?, args.read_m("KEYFILE")?));
        }
        sas.extend(args.read_all::<SaArg>("SA")?);
        let window: u32 = args.read("REPLAY_WINDOW")?.unwrap_or(64);
        if window > MAX_WINDOW {
            args.error(format!("REPLAY_WINDOW: at most {MAX_WINDOW}"));
            return Err(());
        }
        if sas.is_empty() {
            args.error("no SA: give SPI, ALG and KEYFILE, or SA");
            return Err(());
        }
        for SaArg(spi, alg, file) in sas {
            let xform = Transform::from_key_file(alg, &file).map_err(|e| {
                args.error(format!("KEYFILE: {e}"));
            })?;
            self.sas.push(InboundSa {
                spi,
                xform,
                window: ReplayWindow::new(window),
                packets: 0,
            });
        }
        self.sas.sort_by_key(|s| s.spi);
        if let Some(w) = self.sas.windows(2).find(|w| w[0].spi == w[1].spi) {
            args.error(format!("SPI {} given twice", w[0].spi));
            return Err(());
        }
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        match self.open(&mut p) {
            Ok(()) => {
                self.count += 1;
                Some(p)
            }
            Err(r) => {
                self.drops.count(r);
                None
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .read("table", |e| e.table())
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ESPDecap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("esp_decap.rs"),
    make: || Box::<ESPDecap>::default(),
};
