//! The WasmElement ABI, version 1: where the host puts a call's packets in the module's
//! linear memory and where it reads the module's answers (described for users in
//! `sluice doc WasmElement` and `docs/wasm-extensions.md`).
//!
//! The packet area starts at the module's `sluice_io` address (0 by default) and holds a
//! header, [`BATCH_MAX`] packet descriptors and [`BATCH_MAX`] data slots; every field is
//! little-endian, as WebAssembly loads and stores are.

use std::net::Ipv4Addr;

use sluice_core::{Packet, BATCH_MAX};

/// The ABI version the host writes into the header.
pub(super) const VERSION: u32 = 1;
/// Offset of the descriptors in the area (the header comes first).
pub(super) const DESC_AT: usize = 32;
/// Bytes per descriptor.
pub(super) const DESC: usize = 48;
/// Offset of the first data slot in the area.
pub(super) const DATA_AT: usize = 2048;
/// Bytes per data slot: the most of a packet a module sees.
pub(super) const SLOT: usize = 2048;
/// Bytes of the whole area.
pub(super) const AREA: usize = DATA_AT + BATCH_MAX * SLOT;
/// The verdict that drops a packet.
pub(super) const DROP: i32 = -1;
/// Descriptor flag: the module changed the packet's bytes; the host copies them back.
pub(super) const FLAG_DATA: u32 = 1;
/// `net_off` of a packet without a network header annotation.
pub(super) const NO_NET: u16 = 0xFFFF;

/// What the header tells the module about a call.
pub(super) struct Header {
    /// Packets in the call.
    pub(super) count: u32,
    /// Outputs in use: valid ports are 0 to `noutputs - 1`.
    pub(super) noutputs: u32,
    /// The most bytes of a packet copied into its slot.
    pub(super) snaplen: u32,
    /// The element's PARAM argument.
    pub(super) param: u32,
    /// The router's clock, in nanoseconds since the epoch.
    pub(super) now: i64,
}

/// Writes the call header at the start of `area`.
pub(super) fn put_header(area: &mut [u8], h: &Header) {
    let mut b = [0u8; DESC_AT];
    b[0..4].copy_from_slice(&h.count.to_le_bytes());
    b[4..8].copy_from_slice(&VERSION.to_le_bytes());
    b[8..12].copy_from_slice(&h.noutputs.to_le_bytes());
    b[12..16].copy_from_slice(&h.snaplen.to_le_bytes());
    b[16..24].copy_from_slice(&h.now.to_le_bytes());
    b[24..28].copy_from_slice(&h.param.to_le_bytes());
    area[..DESC_AT].copy_from_slice(&b);
}

/// Writes packet `p` as the call's packet `i`: its descriptor (verdict port 0, no flags)
/// and its first `snaplen` bytes in slot `i`.
pub(super) fn put_packet(area: &mut [u8], i: usize, p: &Packet, snaplen: usize) {
    let data = p.data();
    let caplen = data.len().min(snaplen);
    let net = p
        .network_offset()
        .and_then(|o| u16::try_from(o).ok())
        .filter(|&o| o != NO_NET)
        .unwrap_or(NO_NET);
    let a = p.anno();
    let mut d = [0u8; DESC];
    d[0..4].copy_from_slice(&len32(data.len()).to_le_bytes());
    d[4..8].copy_from_slice(&len32(caplen).to_le_bytes());
    d[16..24].copy_from_slice(&a.timestamp.0.to_le_bytes());
    d[24..28].copy_from_slice(&a.aggregate.to_le_bytes());
    d[28..32].copy_from_slice(&a.dst_ip.octets());
    d[32] = a.paint;
    d[34..36].copy_from_slice(&net.to_le_bytes());
    area[DESC_AT + i * DESC..][..DESC].copy_from_slice(&d);
    area[DATA_AT + i * SLOT..][..caplen].copy_from_slice(&data[..caplen]);
}

/// A length as the descriptor holds it (packets are far shorter than 4 GiB).
fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// What the module answered for one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Reply {
    /// The packet's new length.
    pub(super) len: u32,
    /// The output port, or [`DROP`].
    pub(super) port: i32,
    /// [`FLAG_DATA`] and reserved bits.
    pub(super) flags: u32,
    /// The new aggregate annotation.
    pub(super) aggregate: u32,
    /// The new destination IP annotation.
    pub(super) dst_ip: [u8; 4],
    /// The new paint annotation.
    pub(super) paint: u8,
}

/// Reads the module's answer for the call's packet `i`.
pub(super) fn get_reply(area: &[u8], i: usize) -> Reply {
    let d = &area[DESC_AT + i * DESC..][..DESC];
    let u32_at = |o: usize| u32::from_le_bytes([d[o], d[o + 1], d[o + 2], d[o + 3]]);
    Reply {
        len: u32_at(0),
        port: u32_at(8) as i32,
        flags: u32_at(12),
        aggregate: u32_at(24),
        dst_ip: [d[28], d[29], d[30], d[31]],
        paint: d[32],
    }
}

/// Applies reply `r` for the call's packet `i` to `p`: the bytes of slot `i` when the module
/// flagged them changed (at most the bytes it was given, and not past the new length), the
/// new length (never more than the old: checked by the caller) and the annotations.
pub(super) fn apply(area: &[u8], i: usize, r: &Reply, p: &mut Packet, snaplen: usize) {
    let len = p.len();
    let new_len = (r.len as usize).min(len);
    if r.flags & FLAG_DATA != 0 {
        let n = len.min(snaplen).min(new_len);
        p.data_mut()[..n].copy_from_slice(&area[DATA_AT + i * SLOT..][..n]);
    }
    if new_len < len {
        p.take(len - new_len);
    }
    let a = p.anno_mut();
    a.aggregate = r.aggregate;
    a.paint = r.paint;
    a.dst_ip = Ipv4Addr::from(r.dst_ip);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_round_trips_through_the_area() {
        let mut area = vec![0xAAu8; AREA];
        let mut p = Packet::from_bytes(&[1, 2, 3, 4, 5, 6]);
        p.set_network_offset(2);
        p.anno_mut().paint = 7;
        p.anno_mut().aggregate = 0x0102_0304;
        p.set_dst_ip_anno(Ipv4Addr::new(198, 18, 0, 1));
        put_packet(&mut area, 3, &p, 4);
        let d = &area[DESC_AT + 3 * DESC..][..DESC];
        assert_eq!(&d[0..4], &6u32.to_le_bytes());
        assert_eq!(&d[4..8], &4u32.to_le_bytes());
        assert_eq!(&d[8..16], &[0; 8], "port 0, no flags");
        assert_eq!(&d[28..32], &[198, 18, 0, 1]);
        assert_eq!((d[32], &d[34..36]), (7, &2u16.to_le_bytes()[..]));
        assert_eq!(&area[DATA_AT + 3 * SLOT..][..5], &[1, 2, 3, 4, 0xAA]);

        let mut r = get_reply(&area, 3);
        assert_eq!(r.port, 0);
        assert_eq!(r.aggregate, 0x0102_0304);
        area[DATA_AT + 3 * SLOT] = 9;
        r.flags = FLAG_DATA;
        r.len = 5;
        r.paint = 1;
        apply(&area, 3, &r, &mut p, 4);
        assert_eq!(p.data(), &[9, 2, 3, 4, 5]);
        assert_eq!(p.anno().paint, 1);
    }

    #[test]
    fn unflagged_bytes_are_not_copied_back_and_a_missing_header_is_marked() {
        let mut area = vec![0u8; AREA];
        let p0 = Packet::from_bytes(&[1, 2, 3]);
        put_packet(&mut area, 0, &p0, SLOT);
        assert_eq!(&area[DESC_AT + 34..DESC_AT + 36], &NO_NET.to_le_bytes());
        area[DATA_AT] = 0xFF;
        let r = get_reply(&area, 0);
        let mut p = p0;
        apply(&area, 0, &r, &mut p, SLOT);
        assert_eq!(p.data(), &[1, 2, 3]);
    }

    #[test]
    fn the_header_holds_its_fields() {
        let mut area = vec![0u8; AREA];
        put_header(
            &mut area,
            &Header {
                count: 5,
                noutputs: 2,
                snaplen: 128,
                param: 46,
                now: -1,
            },
        );
        assert_eq!(
            &area[0..16],
            &[5, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 128, 0, 0, 0]
        );
        assert_eq!(&area[16..24], &[0xFF; 8]);
        assert_eq!(&area[24..28], &46u32.to_le_bytes());
    }
}
