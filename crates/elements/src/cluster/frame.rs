//! How cluster nodes address each other on internal links.
//!
//! A packet crossing the cluster carries the input node's route lookup in its Ethernet
//! header, so that intermediate and output nodes never read its IP header:
//!
//! - destination `02:5b:00:00:NODE:PORT`: the output node and its external port;
//! - source `02:FROM:A:B:C:D`: the input node and the next hop `A.B.C.D` on the output port
//!   (for the output node's ARP), with type 0x0800.
//!
//! Liveness hellos are `02:5b:00:00:PEER:ff` ← `02:FROM:00:00:00:00`, type 0x88b5 (IEEE local
//! experimental), payload `SLVB`, version 1, the sender's index and the mask of nodes it
//! reaches over live links (64 bits, big-endian), padded to 60 bytes.

use std::net::Ipv4Addr;

/// Ethernet type of liveness hellos.
pub const HELLO_TYPE: u16 = 0x88b5;
/// Length of a hello frame (the Ethernet minimum without FCS).
pub const HELLO_LEN: usize = 60;
const TAG: [u8; 2] = [0x02, 0x5b];
const MAGIC: &[u8; 4] = b"SLVB";
const HELLO_PORT: u8 = 0xff;

/// The destination address naming external port `port` of output node `node`.
pub fn dst_addr(node: u8, port: u8) -> [u8; 6] {
    [TAG[0], TAG[1], 0, 0, node, port]
}

/// The output node and port named by a destination address, if it is a cluster address
/// (hellos excluded).
pub fn parse_dst(mac: &[u8]) -> Option<(u8, u8)> {
    (mac.len() >= 6 && mac[..4] == [TAG[0], TAG[1], 0, 0] && mac[5] != HELLO_PORT)
        .then(|| (mac[4], mac[5]))
}

/// The source address naming input node `from` and next hop `next_hop`.
pub fn src_addr(from: u8, next_hop: Ipv4Addr) -> [u8; 6] {
    let o = next_hop.octets();
    [0x02, from, o[0], o[1], o[2], o[3]]
}

/// The next hop carried by a source address.
pub fn next_hop(src: &[u8]) -> Ipv4Addr {
    Ipv4Addr::new(src[2], src[3], src[4], src[5])
}

/// A hello from node `from` to node `peer`, announcing the nodes `from` reaches.
pub fn hello(from: u8, peer: u8, reach: u64) -> [u8; HELLO_LEN] {
    let mut f = [0u8; HELLO_LEN];
    f[0..6].copy_from_slice(&[TAG[0], TAG[1], 0, 0, peer, HELLO_PORT]);
    f[6..12].copy_from_slice(&[0x02, from, 0, 0, 0, 0]);
    f[12..14].copy_from_slice(&HELLO_TYPE.to_be_bytes());
    f[14..18].copy_from_slice(MAGIC);
    f[18] = 1;
    f[19] = from;
    f[20..28].copy_from_slice(&reach.to_be_bytes());
    f
}

/// Whether a frame is a hello (by its Ethernet type).
pub fn is_hello(frame: &[u8]) -> bool {
    frame.len() >= 14 && frame[12..14] == HELLO_TYPE.to_be_bytes()
}

/// The sender and reach mask of a well-formed hello.
pub fn parse_hello(frame: &[u8]) -> Option<(u8, u64)> {
    if frame.len() < 28 || !is_hello(frame) || &frame[14..18] != MAGIC || frame[18] != 1 {
        return None;
    }
    let mut m = [0u8; 8];
    m.copy_from_slice(&frame[20..28]);
    Some((frame[19], u64::from_be_bytes(m)))
}

/// A hash of an IPv4 packet's flow (addresses, protocol, and TCP/UDP ports of unfragmented
/// packets), for keeping a flow's packets on one path.
pub fn flow_hash(ip: &[u8]) -> u64 {
    if ip.len() < 20 {
        return 0;
    }
    let proto = ip[9];
    let mut h = u32::from_be_bytes([ip[12], ip[13], ip[14], ip[15]]) as u64;
    h = h << 32 | u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]) as u64;
    let mut k = proto as u64;
    let hl = ((ip[0] & 0xf) as usize) * 4;
    let frag = u16::from_be_bytes([ip[6], ip[7]]) & 0x3fff != 0;
    if (proto == 6 || proto == 17) && !frag && ip.len() >= hl + 4 {
        k |= (u32::from_be_bytes([ip[hl], ip[hl + 1], ip[hl + 2], ip[hl + 3]]) as u64) << 8;
    }
    mix(h ^ mix(k))
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        assert_eq!(parse_dst(&dst_addr(3, 1)), Some((3, 1)));
        assert_eq!(parse_dst(&[0x02, 0x5b, 0, 0, 3, 0xff]), None);
        assert_eq!(parse_dst(&[0x00, 0x5b, 0, 0, 3, 0]), None);
        let nh = Ipv4Addr::new(198, 18, 2, 2);
        assert_eq!(next_hop(&src_addr(1, nh)), nh);
    }

    #[test]
    fn hello_round_trip() {
        let f = hello(2, 0, 0b1011);
        assert!(is_hello(&f));
        assert_eq!(parse_hello(&f), Some((2, 0b1011)));
        let mut bad = f;
        bad[14] = b'X';
        assert_eq!(parse_hello(&bad), None);
    }

    #[test]
    fn flow_hash_uses_ports() {
        let mut a = [0u8; 28];
        a[0] = 0x45;
        a[9] = 17;
        a[12..16].copy_from_slice(&[198, 18, 1, 2]);
        a[16..20].copy_from_slice(&[198, 18, 2, 2]);
        a[20..24].copy_from_slice(&[0x30, 0x39, 0, 53]);
        let mut b = a;
        b[21] = 0x3a;
        assert_ne!(flow_hash(&a), flow_hash(&b));
        let mut c = a;
        c[6] = 0x20; // more fragments: ports ignored
        let mut d = b;
        d[6] = 0x20;
        assert_eq!(flow_hash(&c), flow_hash(&d));
    }
}
