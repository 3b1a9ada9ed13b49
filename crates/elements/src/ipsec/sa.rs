//! Security associations: the transform (algorithm and keys) of one SA, its key file, and the
//! ESP packet layout the transform seals and opens.
//!
//! ESP (RFC 4303) as sealed here: `SPI (4) | sequence number (4) | IV | ciphertext | ICV`,
//! where the plaintext is the inner packet, padding `1, 2, 3, …`, the pad length and the next
//! header. With AES-GCM-128 (RFC 4106) the IV is 8 bytes (the 64-bit packet counter), the
//! nonce is the key's 4-byte salt followed by it, the additional data is SPI and sequence
//! number, and the ICV is the 16-byte tag. With AES-128-CBC and HMAC-SHA1-96 (RFC 3602,
//! RFC 2404) the IV is 16 bytes, the cipher applied to the packet counter (unpredictable
//! without the key, as NIST SP 800-38A Appendix C recommends), and the ICV is the first 12
//! bytes of HMAC-SHA1 over everything from the SPI to the end of the ciphertext.
//!
//! Key files hold one key per line, `NAME HEX` (`0x` optional; `#` starts a comment), named
//! as Linux's `ip xfrm state` names them: `aead` (20 bytes: AES key, then salt) for
//! AES-GCM-128; `enc` (16 bytes) and `auth` (20 bytes) for AES-128-CBC with HMAC-SHA1-96.
//! Keys are never printed.

use std::fmt;

use aes::cipher::block_padding::NoPadding;
use aes::cipher::{BlockDecryptMut, BlockEncrypt, BlockEncryptMut, InnerIvInit, KeyInit};
use aes::Aes128;
use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, Nonce, Tag};
use hmac::{Hmac, Mac};
use sha1::Sha1;
use sluice_lang::args::FromArg;

/// Length of the SPI and sequence number fields.
pub const ESP_HEADER_LEN: usize = 8;

/// An ESP algorithm suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alg {
    /// AES-GCM with a 128-bit key and 16-byte ICV (RFC 4106).
    AesGcm128,
    /// AES-128-CBC encryption with HMAC-SHA1-96 authentication (RFC 3602, RFC 2404).
    AesCbc128HmacSha1,
}

impl Alg {
    /// The name used in configurations and handlers.
    pub fn name(self) -> &'static str {
        match self {
            Alg::AesGcm128 => "aes-gcm-128",
            Alg::AesCbc128HmacSha1 => "aes-cbc-128-hmac-sha1",
        }
    }

    /// Bytes of IV after the ESP header.
    pub fn iv_len(self) -> usize {
        match self {
            Alg::AesGcm128 => 8,
            Alg::AesCbc128HmacSha1 => 16,
        }
    }

    /// Bytes of ICV at the end of the packet.
    pub fn icv_len(self) -> usize {
        match self {
            Alg::AesGcm128 => 16,
            Alg::AesCbc128HmacSha1 => 12,
        }
    }

    /// The ciphertext is a multiple of this many bytes.
    pub fn block(self) -> usize {
        match self {
            Alg::AesGcm128 => 4,
            Alg::AesCbc128HmacSha1 => 16,
        }
    }

    /// Bytes from the SPI to the start of the ciphertext.
    pub fn head_len(self) -> usize {
        ESP_HEADER_LEN + self.iv_len()
    }
}

impl FromArg for Alg {
    fn from_arg(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "aes-gcm-128" | "rfc4106(gcm(aes))" => Ok(Alg::AesGcm128),
            "aes-cbc-128-hmac-sha1" => Ok(Alg::AesCbc128HmacSha1),
            other => Err(format!(
                "unknown algorithm '{other}' (aes-gcm-128 or aes-cbc-128-hmac-sha1)"
            )),
        }
    }
}

impl fmt::Display for Alg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Security Parameters Index: 256 and above (0 to 255 are reserved, RFC 4303 §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Spi(pub u32);

impl FromArg for Spi {
    fn from_arg(s: &str) -> Result<Self, String> {
        let v = u32::from_arg(s)?;
        if v < 256 {
            return Err(format!("{v} is reserved (SPIs start at 256)"));
        }
        Ok(Spi(v))
    }
}

impl fmt::Display for Spi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08x}", self.0)
    }
}

/// Why an ESP packet failed to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadIcv;

/// The algorithm and keys of one security association, ready to seal or open packets.
pub struct Transform {
    alg: Alg,
    keys: Keys,
}

enum Keys {
    Gcm {
        aead: Box<Aes128Gcm>,
        salt: [u8; 4],
    },
    Cbc {
        aes: Box<Aes128>,
        mac: Box<Hmac<Sha1>>,
    },
}

impl fmt::Debug for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Transform({})", self.alg)
    }
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    let s = s.strip_prefix("0x").unwrap_or(s);
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The named keys of a key file's text.
fn parse_keys(text: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut keys = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(name), Some(hex), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!("line {}: expected NAME HEX", n + 1));
        };
        let bytes = parse_hex(hex).ok_or_else(|| format!("line {}: bad hex key", n + 1))?;
        keys.push((name.to_ascii_lowercase(), bytes));
    }
    Ok(keys)
}

fn key<'a>(keys: &'a [(String, Vec<u8>)], name: &str, len: usize) -> Result<&'a [u8], String> {
    let k = keys
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, k)| k.as_slice())
        .ok_or_else(|| format!("no '{name}' key"))?;
    if k.len() != len {
        return Err(format!("'{name}' key has {} bytes, not {len}", k.len()));
    }
    Ok(k)
}

impl Transform {
    /// The transform for `alg` with the keys in key-file text `text`.
    pub fn from_key_text(alg: Alg, text: &str) -> Result<Transform, String> {
        let keys = parse_keys(text)?;
        let keys = match alg {
            Alg::AesGcm128 => {
                let k = key(&keys, "aead", 20)?;
                Keys::Gcm {
                    aead: Box::new(Aes128Gcm::new_from_slice(&k[..16]).expect("16 bytes")),
                    salt: k[16..].try_into().expect("4 bytes"),
                }
            }
            Alg::AesCbc128HmacSha1 => Keys::Cbc {
                aes: Box::new(Aes128::new_from_slice(key(&keys, "enc", 16)?).expect("16 bytes")),
                mac: Box::new(
                    <Hmac<Sha1> as KeyInit>::new_from_slice(key(&keys, "auth", 20)?)
                        .expect("any length"),
                ),
            },
        };
        Ok(Transform { alg, keys })
    }

    /// The transform for `alg` with the keys in the file `path`.
    pub fn from_key_file(alg: Alg, path: &str) -> Result<Transform, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        Transform::from_key_text(alg, &text).map_err(|e| format!("{path}: {e}"))
    }

    /// The algorithm.
    pub fn alg(&self) -> Alg {
        self.alg
    }

    /// Seals `esp`: SPI and sequence number written, then room for the IV, the padded
    /// plaintext (a multiple of [`Alg::block`] bytes) and room for the ICV. Writes the IV from
    /// the packet counter `counter` (unique for the SA), encrypts in place and writes the ICV.
    pub fn seal(&self, esp: &mut [u8], counter: u64) {
        let (head, rest) = esp.split_at_mut(self.alg.head_len());
        let (text, icv) = rest.split_at_mut(rest.len() - self.alg.icv_len());
        let (hdr, iv) = head.split_at_mut(ESP_HEADER_LEN);
        match &self.keys {
            Keys::Gcm { aead, salt } => {
                iv.copy_from_slice(&counter.to_be_bytes());
                let tag = aead
                    .encrypt_in_place_detached(&gcm_nonce(salt, iv), hdr, text)
                    .expect("ESP payloads are far below GCM's limit");
                icv.copy_from_slice(&tag);
            }
            Keys::Cbc { aes, mac } => {
                let mut block = [0u8; 16];
                block[8..].copy_from_slice(&counter.to_be_bytes());
                let mut block = block.into();
                aes.encrypt_block(&mut block);
                iv.copy_from_slice(&block);
                let len = text.len();
                cbc::Encryptor::<Aes128>::inner_iv_init((**aes).clone(), &block)
                    .encrypt_padded_mut::<NoPadding>(text, len)
                    .expect("the caller pads to whole blocks");
                let mut m = (**mac).clone();
                m.update(hdr);
                m.update(iv);
                m.update(text);
                icv.copy_from_slice(&m.finalize().into_bytes()[..12]);
            }
        }
    }

    /// Opens `esp` (SPI to ICV, with whole blocks of ciphertext): checks the ICV and decrypts
    /// the ciphertext in place. On a bad ICV the packet is left as it was.
    pub fn open(&self, esp: &mut [u8]) -> Result<(), BadIcv> {
        let (head, rest) = esp.split_at_mut(self.alg.head_len());
        let (text, icv) = rest.split_at_mut(rest.len() - self.alg.icv_len());
        let (hdr, iv) = head.split_at_mut(ESP_HEADER_LEN);
        match &self.keys {
            Keys::Gcm { aead, salt } => aead
                .decrypt_in_place_detached(&gcm_nonce(salt, iv), hdr, text, Tag::from_slice(icv))
                .map_err(|_| BadIcv),
            Keys::Cbc { aes, mac } => {
                let mut m = (**mac).clone();
                m.update(hdr);
                m.update(iv);
                m.update(text);
                m.verify_truncated_left(icv).map_err(|_| BadIcv)?;
                let iv: &[u8; 16] = (&*iv).try_into().expect("16 bytes");
                cbc::Decryptor::<Aes128>::inner_iv_init((**aes).clone(), iv.into())
                    .decrypt_padded_mut::<NoPadding>(text)
                    .expect("the caller checks for whole blocks");
                Ok(())
            }
        }
    }
}

fn gcm_nonce(salt: &[u8; 4], iv: &[u8]) -> Nonce<aes_gcm::aead::consts::U12> {
    let mut n = [0u8; 12];
    n[..4].copy_from_slice(salt);
    n[4..].copy_from_slice(iv);
    n.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GCM_KEYS: &str = "# test SA\naead 0x000102030405060708090a0b0c0d0e0f10111213\n";
    const CBC_KEYS: &str = "enc 000102030405060708090a0b0c0d0e0f\n\
                            auth 0x101112131415161718191a1b1c1d1e1f20212223 # comment\n";

    fn esp(alg: Alg, text: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; alg.head_len()];
        v[..8].copy_from_slice(&[0, 0, 1, 0, 0, 0, 0, 7]);
        v.extend_from_slice(text);
        v.extend(std::iter::repeat_n(0, alg.icv_len()));
        v
    }

    #[test]
    fn sealed_packets_open_and_tampering_is_caught() {
        for (alg, keys) in [
            (Alg::AesGcm128, GCM_KEYS),
            (Alg::AesCbc128HmacSha1, CBC_KEYS),
        ] {
            let t = Transform::from_key_text(alg, keys).unwrap();
            let plain: Vec<u8> = (0..64u8).collect();
            let mut p = esp(alg, &plain);
            t.seal(&mut p, 7);
            let h = alg.head_len();
            assert_ne!(&p[h..h + 64], &plain[..], "{alg}: encrypted");
            let mut q = p.clone();
            t.open(&mut q).unwrap();
            assert_eq!(&q[h..h + 64], &plain[..], "{alg}: decrypted");
            for i in [0, 5, h - 1, h + 10, p.len() - 1] {
                let mut bad = p.clone();
                bad[i] ^= 1;
                assert_eq!(t.open(&mut bad), Err(BadIcv), "{alg}: byte {i} changed");
            }
        }
    }

    #[test]
    fn ivs_differ_between_packets() {
        let t = Transform::from_key_text(Alg::AesCbc128HmacSha1, CBC_KEYS).unwrap();
        let (mut a, mut b) = (esp(t.alg(), &[0; 16]), esp(t.alg(), &[0; 16]));
        t.seal(&mut a, 1);
        t.seal(&mut b, 2);
        assert_ne!(a[8..24], b[8..24]);
        assert_ne!(a[24..40], b[24..40]);
    }

    #[test]
    fn key_files_are_checked_and_never_shown() {
        let e = Transform::from_key_text(Alg::AesGcm128, "enc 00").unwrap_err();
        assert_eq!(e, "no 'aead' key");
        let e = Transform::from_key_text(Alg::AesCbc128HmacSha1, "enc 0011\nauth 00").unwrap_err();
        assert_eq!(e, "'enc' key has 2 bytes, not 16");
        assert!(Transform::from_key_text(Alg::AesGcm128, "aead 0xzz").is_err());
        let t = Transform::from_key_text(Alg::AesGcm128, GCM_KEYS).unwrap();
        assert_eq!(format!("{t:?}"), "Transform(aes-gcm-128)");
    }

    /// RFC 4106 has no test vectors of its own; this is test case 3 of the GCM specification
    /// (McGrew and Viega), which RFC 4106's construction reduces to with salt = the first 4
    /// nonce bytes, IV = the last 8 and no additional data beyond SPI and sequence number.
    #[test]
    fn gcm_matches_a_known_answer() {
        let keys = "aead feffe9928665731c6d6a8f9467308308cafebabe";
        let t = Transform::from_key_text(Alg::AesGcm128, keys).unwrap();
        let Keys::Gcm { aead, salt } = &t.keys else {
            unreachable!()
        };
        let iv = 0xfacedbaddecaf888u64.to_be_bytes();
        let mut text = parse_hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c9595680953\
             2fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
        )
        .unwrap();
        let tag = aead
            .encrypt_in_place_detached(&gcm_nonce(salt, &iv), &[], &mut text)
            .unwrap();
        assert_eq!(
            text,
            parse_hex(
                "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b2546\
                 6931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985"
            )
            .unwrap()
        );
        assert_eq!(
            tag.to_vec(),
            parse_hex("4d5c2af327cd64a62cf35abd2ba6fab4").unwrap()
        );
    }
}
