//! The error type shared by every header view.

use std::fmt;

/// Why a buffer is not a valid header of the expected kind.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum WireError {
    /// The buffer is shorter than the header (or than a length field says it should be).
    Truncated,
    /// The version field has the wrong value.
    BadVersion,
    /// A header-length field (IPv4 IHL, TCP data offset) is too small or runs past the buffer.
    BadHeaderLength,
    /// A total-length field (IPv4 total length, UDP length, IPv6 payload length) is inconsistent.
    BadTotalLength,
    /// A checksum does not verify.
    BadChecksum,
    /// An option is malformed (zero or too-short length, or it overruns the header).
    BadOption,
    /// A field has a value this view does not support (e.g. ARP hardware type).
    Unsupported,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WireError::Truncated => "truncated header",
            WireError::BadVersion => "bad version",
            WireError::BadHeaderLength => "bad header length",
            WireError::BadTotalLength => "bad total length",
            WireError::BadChecksum => "bad checksum",
            WireError::BadOption => "malformed option",
            WireError::Unsupported => "unsupported field value",
        })
    }
}

impl std::error::Error for WireError {}

/// Shorthand for results of header parsing.
pub type Result<T> = std::result::Result<T, WireError>;

/// Reads a big-endian `u16` at `at`.
#[inline]
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Reads a big-endian `u32` at `at`.
#[inline]
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Writes a big-endian `u16` at `at`.
#[inline]
pub(crate) fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Writes a big-endian `u32` at `at`.
#[inline]
pub(crate) fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}
