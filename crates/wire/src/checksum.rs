//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).
//!
//! [`sum16`] returns a partial ones-complement sum that may be added to other partial sums
//! (such as [`pseudo_header_v4`]) before [`fold`]ing; [`checksum`] is the final inverted value
//! written into headers. A buffer that includes its own correct checksum sums to `0xFFFF`.

use std::net::{Ipv4Addr, Ipv6Addr};

/// Ones-complement partial sum of `data` taken as big-endian 16-bit words (an odd final byte
/// is padded with zero). The result is folded to at most `0xFFFF`, so up to 65536 partial sums
/// can be added in a `u32` without overflow.
pub fn sum16(data: &[u8]) -> u32 {
    // The ones-complement sum is byte-order independent (RFC 1071 §2(B)): sum native-order
    // words and swap the folded result once at the end.
    let mut acc: u64 = 0;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let lo = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
        let hi = u32::from_ne_bytes([c[4], c[5], c[6], c[7]]);
        acc += lo as u64 + hi as u64;
    }
    let rest = chunks.remainder();
    let mut pairs = rest.chunks_exact(2);
    for p in &mut pairs {
        acc += u16::from_ne_bytes([p[0], p[1]]) as u64;
    }
    if let [last] = pairs.remainder() {
        acc += u16::from_ne_bytes([*last, 0]) as u64;
    }
    u16::from_be(fold(acc)) as u32
}

/// Folds a ones-complement sum into 16 bits (end-around carry). Not inverted.
#[inline]
pub fn fold<S: Into<u64>>(sum: S) -> u16 {
    let mut s: u64 = sum.into();
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// The Internet checksum of `data`: the inverted folded ones-complement sum.
#[inline]
pub fn checksum(data: &[u8]) -> u16 {
    !fold(sum16(data))
}

/// Finishes a checksum from a partial sum (folds and inverts).
#[inline]
pub fn finish(sum: u32) -> u16 {
    !fold(sum)
}

/// Partial sum of the IPv4 pseudo-header (RFC 793/768): addresses, protocol, and the
/// transport length.
pub fn pseudo_header_v4(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, len: u16) -> u32 {
    let s = u32::from(src);
    let d = u32::from(dst);
    (s >> 16) + (s & 0xffff) + (d >> 16) + (d & 0xffff) + protocol as u32 + len as u32
}

/// Partial sum of the IPv6 pseudo-header (RFC 8200 §8.1): addresses, upper-layer length
/// and next header.
pub fn pseudo_header_v6(src: &Ipv6Addr, dst: &Ipv6Addr, next_header: u8, len: u32) -> u32 {
    let mut s = 0u32;
    for w in src.segments().iter().chain(dst.segments().iter()) {
        s += *w as u32;
    }
    s + (len >> 16) + (len & 0xffff) + next_header as u32
}

/// RFC 1624 incremental update (eqn. 3: `HC' = ~(~HC + ~m + m')`) of a header checksum
/// when one 16-bit word changes from `old_word` to `new_word`.
#[inline]
pub fn update16(old_checksum: u16, old_word: u16, new_word: u16) -> u16 {
    let s = (!old_checksum) as u32 + (!old_word) as u32 + new_word as u32;
    !fold(s)
}

/// RFC 1624 incremental update for a changed 32-bit field (e.g. an IPv4 address).
#[inline]
pub fn update32(old_checksum: u16, old_word: u32, new_word: u32) -> u16 {
    let s = (!old_checksum) as u32
        + (!(old_word >> 16) & 0xffff)
        + (!old_word & 0xffff)
        + (new_word >> 16)
        + (new_word & 0xffff);
    !fold(s)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Tiny xorshift64* PRNG for property tests.
    pub(crate) struct Rng(pub u64);
    impl Rng {
        pub(crate) fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Straightforward reference implementation of the ones-complement sum.
    fn slow_sum(data: &[u8]) -> u16 {
        let mut s: u32 = 0;
        for (i, b) in data.iter().enumerate() {
            s += if i % 2 == 0 {
                (*b as u32) << 8
            } else {
                *b as u32
            };
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2.
        let d = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(sum16(&d)), 0xddf2);
        assert_eq!(checksum(&d), !0xddf2);
    }

    #[test]
    fn known_ipv4_header() {
        // A classic header whose checksum is 0xb861.
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(checksum(&h), 0xb861);
        h[10] = 0xb8;
        h[11] = 0x61;
        assert_eq!(fold(sum16(&h)), 0xffff);
    }

    #[test]
    fn fast_sum_matches_reference() {
        let mut r = Rng(0x1234_5678_9abc_def1);
        for _ in 0..2000 {
            let n = r.below(200) as usize;
            let d: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
            assert_eq!(fold(sum16(&d)), slow_sum(&d), "len {n}");
            // Any split point at an even offset gives the same total.
            let cut = (r.below(n as u64 + 1) as usize) & !1;
            assert_eq!(fold(sum16(&d[..cut]) + sum16(&d[cut..])), slow_sum(&d));
        }
        let ones = vec![0xffu8; 1 << 16];
        assert_eq!(fold(sum16(&ones)), 0xffff);
        assert_eq!(fold(sum16(&[])), 0);
    }

    #[test]
    fn rfc1624_corner_case() {
        // RFC 1624 §4: other octets sum to 0xCD7A, m = 0x5555 -> m' = 0x3285.
        let hc = !fold(0xCD7Au32 + 0x5555);
        assert_eq!(hc, 0xDD2F);
        let full = !fold(0xCD7Au32 + 0x3285);
        assert_eq!(full, 0x0000);
        assert_eq!(update16(hc, 0x5555, 0x3285), full);
    }

    fn header_checksum(h: &[u8; 20]) -> u16 {
        let mut c = *h;
        c[10] = 0;
        c[11] = 0;
        checksum(&c)
    }

    #[test]
    fn incremental_equals_full_recomputation() {
        let mut r = Rng(0xdead_beef_cafe_f00d);
        for iter in 0..20_000 {
            let mut h = [0u8; 20];
            for b in h.iter_mut() {
                *b = r.next() as u8;
            }
            h[0] = 0x45; // a real header is never all zero
            let ck = header_checksum(&h);
            h[10..12].copy_from_slice(&ck.to_be_bytes());
            // Pick a 16-bit word other than the checksum and the version word.
            let w = 1 + r.below(9) as usize;
            let w = if w == 5 { 9 } else { w };
            let at = 2 * w;
            let old = u16::from_be_bytes([h[at], h[at + 1]]);
            let new = match iter % 5 {
                0 => 0x0000,
                1 => 0xffff,
                2 => {
                    // Make the new sum of the data exactly 0xFFFF (checksum 0x0000).
                    let mut c = h;
                    c[10] = 0;
                    c[11] = 0;
                    c[at] = 0;
                    c[at + 1] = 0;
                    !fold(sum16(&c))
                }
                _ => r.next() as u16,
            };
            h[at..at + 2].copy_from_slice(&new.to_be_bytes());
            let inc = update16(ck, old, new);
            assert_eq!(
                inc,
                header_checksum(&h),
                "iter {iter} word {w} {old:#x}->{new:#x}"
            );
            assert_eq!(
                fold(sum16(&{
                    let mut v = h;
                    v[10..12].copy_from_slice(&inc.to_be_bytes());
                    v
                })),
                0xffff
            );

            // 32-bit update of an address field.
            let h2_ck = inc;
            let mut h2 = h;
            h2[10..12].copy_from_slice(&h2_ck.to_be_bytes());
            let a = if r.next() & 1 == 0 { 12 } else { 16 };
            let old32 = u32::from_be_bytes([h2[a], h2[a + 1], h2[a + 2], h2[a + 3]]);
            let new32 = match iter % 4 {
                0 => 0,
                1 => 0xffff_ffff,
                _ => r.next() as u32,
            };
            h2[a..a + 4].copy_from_slice(&new32.to_be_bytes());
            assert_eq!(update32(h2_ck, old32, new32), header_checksum(&h2));
        }
    }

    #[test]
    fn pseudo_headers() {
        // UDP over IPv4 from a known capture: 10.0.0.1:1234 -> 10.0.0.2:5678, "hi".
        let src = Ipv4Addr::new(10, 0, 0, 1);
        let dst = Ipv4Addr::new(10, 0, 0, 2);
        let udp = [0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0a, 0x00, 0x00, b'h', b'i'];
        let s = pseudo_header_v4(src, dst, 17, 10) + sum16(&udp);
        let manual = slow_sum(&[
            10, 0, 0, 1, 10, 0, 0, 2, 0, 17, 0, 10, 0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0a, 0, 0, b'h',
            b'i',
        ]);
        assert_eq!(fold(s), manual);
        let a: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let b: Ipv6Addr = "2001:db8::2".parse().unwrap();
        let mut v = Vec::new();
        v.extend_from_slice(&a.octets());
        v.extend_from_slice(&b.octets());
        v.extend_from_slice(&70000u32.to_be_bytes());
        v.extend_from_slice(&[0, 0, 0, 58]);
        assert_eq!(fold(pseudo_header_v6(&a, &b, 58, 70000)), slow_sum(&v));
    }
}
