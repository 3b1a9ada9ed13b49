//! Transmission batches of Discretized Fair Queuing (DFQ) between two Sluice routers.
//!
//! DFQ (the Panama router's link scheduler) serves every eligible flow one quantum of bytes
//! per scheduling cycle, regardless of packet boundaries, and sends the quanta of one cycle
//! together as a batch. A batch tells the downstream router which flows contributed a quantum
//! by a fixed-size bitmap relative to the first contributing flow id. One batch packet covers
//! a window of [`WINDOW`] flow ids:
//!
//! ```text
//!  0      1       2          4           8           12                    20
//! +------+-------+----------+-----------+-----------+---------------------+--------------
//! | 0xDF | ver 1 | length   | cycle     | first id  | bitmap (64 bits)    | quanta ...
//! +------+-------+----------+-----------+-----------+---------------------+--------------
//! ```
//!
//! All integers are big-endian. `length` counts the whole batch (header and quanta); bytes
//! after it (link padding) are not part of the batch. Bit `i` of the bitmap (bit 0 the least
//! significant) says that flow `first + i` has a quantum; bit 0 is always set. The quanta
//! follow in flow-id order, each as a 16-bit length (at least 1) and that many bytes of the
//! flow's byte stream. A flow's byte stream is its packets, each preceded by its length as a
//! 16-bit integer, so that the receiver can cut the packets out again.
//!
//! [`DfqBatch`] is a zero-copy view whose [`DfqBatch::new_checked`] validates every length
//! and the bitmap once; [`DfqBatch::quanta`] then walks the quanta without any possible
//! panic. [`DfqBatchBuilder`] writes a batch into a buffer quantum by quantum.

use crate::error::{be16, be32, put16, put32, Result, WireError};

/// First byte of every batch.
pub const MAGIC: u8 = 0xDF;
/// Version of the batch format described here.
pub const VERSION: u8 = 1;
/// Length of the batch header.
pub const HEADER_LEN: usize = 20;
/// Flow ids covered by one batch's bitmap.
pub const WINDOW: u32 = 64;
/// Bytes before each quantum: its length.
pub const QUANTUM_HEADER_LEN: usize = 2;
/// Bytes before each packet in a flow's byte stream: its length.
pub const PACKET_PREFIX_LEN: usize = 2;
/// Largest batch (the length field's limit).
pub const MAX_BATCH_LEN: usize = u16::MAX as usize;

mod field {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 1;
    pub const LENGTH: usize = 2;
    pub const CYCLE: usize = 4;
    pub const FIRST: usize = 8;
    pub const BITMAP: std::ops::Range<usize> = 12..20;
}

/// A zero-copy view of a DFQ transmission batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DfqBatch<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> DfqBatch<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        DfqBatch { buffer }
    }

    /// Wraps a buffer, checking it as [`DfqBatch::check`] does.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let b = Self::new_unchecked(buffer);
        b.check()?;
        Ok(b)
    }

    /// Checks the whole batch: the header is there ([`WireError::Truncated`]), magic and
    /// version ([`WireError::BadVersion`]), `length` at least the header and within the
    /// buffer ([`WireError::BadTotalLength`]), bit 0 of the bitmap set and every flow id of the
    /// bitmap representable ([`WireError::Unsupported`]), one quantum of at least one byte per
    /// bit, all within `length`, and nothing left after them ([`WireError::BadOption`]).
    pub fn check(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if b[field::MAGIC] != MAGIC || b[field::VERSION] != VERSION {
            return Err(WireError::BadVersion);
        }
        let len = usize::from(be16(b, field::LENGTH));
        if len < HEADER_LEN || len > b.len() {
            return Err(WireError::BadTotalLength);
        }
        let bitmap = self.bitmap();
        if bitmap & 1 == 0 {
            return Err(WireError::Unsupported);
        }
        let last = 63 - bitmap.leading_zeros();
        if self.first().checked_add(last).is_none() {
            return Err(WireError::Unsupported);
        }
        let mut at = HEADER_LEN;
        for _ in 0..bitmap.count_ones() {
            if at + QUANTUM_HEADER_LEN > len {
                return Err(WireError::BadOption);
            }
            let q = usize::from(be16(b, at));
            at += QUANTUM_HEADER_LEN;
            if q == 0 || at + q > len {
                return Err(WireError::BadOption);
            }
            at += q;
        }
        if at != len {
            return Err(WireError::BadOption);
        }
        Ok(())
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Length of the batch, from its header.
    pub fn length(&self) -> usize {
        usize::from(be16(self.buffer.as_ref(), field::LENGTH))
    }

    /// The scheduling cycle that formed the batch.
    pub fn cycle(&self) -> u32 {
        be32(self.buffer.as_ref(), field::CYCLE)
    }

    /// The first flow id with a quantum (bit 0 of the bitmap).
    pub fn first(&self) -> u32 {
        be32(self.buffer.as_ref(), field::FIRST)
    }

    /// The bitmap of flows with a quantum, relative to [`DfqBatch::first`].
    pub fn bitmap(&self) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&self.buffer.as_ref()[field::BITMAP]);
        u64::from_be_bytes(a)
    }

    /// The quanta in flow-id order: each flow id and its bytes.
    pub fn quanta(&self) -> Quanta<'_> {
        let b = self.buffer.as_ref();
        Quanta {
            data: &b[HEADER_LEN.min(b.len())..self.length().min(b.len())],
            first: self.first(),
            bitmap: self.bitmap(),
        }
    }
}

/// Iterator over the quanta of a checked [`DfqBatch`].
pub struct Quanta<'a> {
    data: &'a [u8],
    first: u32,
    bitmap: u64,
}

impl<'a> Iterator for Quanta<'a> {
    type Item = (u32, &'a [u8]);

    fn next(&mut self) -> Option<(u32, &'a [u8])> {
        if self.bitmap == 0 || self.data.len() < QUANTUM_HEADER_LEN {
            return None;
        }
        let bit = self.bitmap.trailing_zeros();
        self.bitmap &= self.bitmap - 1;
        let q = usize::from(be16(self.data, 0));
        let end = (QUANTUM_HEADER_LEN + q).min(self.data.len());
        let bytes = &self.data[QUANTUM_HEADER_LEN..end];
        self.data = &self.data[end..];
        Some((self.first.wrapping_add(bit), bytes))
    }
}

/// Writes one batch: [`DfqBatchBuilder::start`] reserves the header, each
/// [`DfqBatchBuilder::quantum`] appends one flow's quantum, [`DfqBatchBuilder::finish`]
/// fills in the header.
#[derive(Clone, Copy, Debug, Default)]
pub struct DfqBatchBuilder {
    first: u32,
    bitmap: u64,
    len: usize,
}

impl DfqBatchBuilder {
    /// Starts a batch whose first quantum is flow `first`'s; its first [`HEADER_LEN`] bytes
    /// are left for the header.
    pub fn start(first: u32) -> DfqBatchBuilder {
        DfqBatchBuilder {
            first,
            bitmap: 0,
            len: HEADER_LEN,
        }
    }

    /// Bytes written so far, header included.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before any quantum was added.
    pub fn is_empty(&self) -> bool {
        self.bitmap == 0
    }

    /// True if flow `flow` falls in this batch's window after the flows already in it.
    pub fn covers(&self, flow: u32) -> bool {
        flow >= self.first
            && flow - self.first < WINDOW
            && (self.bitmap == 0 || flow - self.first > 63 - self.bitmap.leading_zeros())
    }

    /// Records a quantum of `len` bytes (1 to 65535) of flow `flow` (which
    /// [`DfqBatchBuilder::covers`]) and returns the offset in the batch where its
    /// [`QUANTUM_HEADER_LEN`] + `len` bytes go; writes its length field into `buf` (the
    /// batch, at least that long).
    pub fn quantum(&mut self, buf: &mut [u8], flow: u32, len: u16) -> usize {
        let at = self.len;
        put16(buf, at, len);
        self.bitmap |= 1 << (flow - self.first);
        self.len += QUANTUM_HEADER_LEN + usize::from(len);
        at + QUANTUM_HEADER_LEN
    }

    /// Writes the header of the batch of cycle `cycle` into `buf[..HEADER_LEN]`; returns the
    /// batch length.
    pub fn finish(&self, buf: &mut [u8], cycle: u32) -> usize {
        buf[field::MAGIC] = MAGIC;
        buf[field::VERSION] = VERSION;
        put16(buf, field::LENGTH, self.len as u16);
        put32(buf, field::CYCLE, cycle);
        put32(buf, field::FIRST, self.first);
        buf[field::BITMAP].copy_from_slice(&self.bitmap.to_be_bytes());
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cycle 7, flows 10 (quantum "abc") and 13 (quantum "de").
    const BATCH: [u8; 29] = [
        0xDF, 1, 0, 29, 0, 0, 0, 7, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0b1001, 0, 3, b'a', b'b',
        b'c', 0, 2, b'd', b'e',
    ];

    #[test]
    fn parses_a_fixture() {
        let b = DfqBatch::new_checked(&BATCH[..]).unwrap();
        assert_eq!(
            (b.cycle(), b.first(), b.bitmap(), b.length()),
            (7, 10, 9, 29)
        );
        let q: Vec<_> = b.quanta().collect();
        assert_eq!(q, vec![(10, &b"abc"[..]), (13, &b"de"[..])]);
    }

    #[test]
    fn builds_the_fixture() {
        let mut buf = [0u8; 29];
        let mut w = DfqBatchBuilder::start(10);
        assert!(w.covers(10) && w.covers(73) && !w.covers(74) && !w.covers(9));
        let at = w.quantum(&mut buf, 10, 3);
        buf[at..at + 3].copy_from_slice(b"abc");
        assert!(!w.covers(10) && w.covers(13));
        let at = w.quantum(&mut buf, 13, 2);
        buf[at..at + 2].copy_from_slice(b"de");
        assert_eq!(w.finish(&mut buf, 7), 29);
        assert_eq!(buf, BATCH);
    }

    #[test]
    fn refuses_malformed_batches() {
        let check = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = BATCH.to_vec();
            f(&mut b);
            DfqBatch::new_checked(&b[..]).err()
        };
        assert_eq!(check(&|b| b.truncate(19)), Some(WireError::Truncated));
        assert_eq!(check(&|b| b[0] = 0xDE), Some(WireError::BadVersion));
        assert_eq!(check(&|b| b[1] = 2), Some(WireError::BadVersion));
        assert_eq!(check(&|b| b[3] = 30), Some(WireError::BadTotalLength));
        assert_eq!(check(&|b| b[3] = 19), Some(WireError::BadTotalLength));
        assert_eq!(check(&|b| b[19] = 0b1000), Some(WireError::Unsupported));
        assert_eq!(check(&|b| b[19] = 0), Some(WireError::Unsupported));
        assert_eq!(
            check(&|b| b[8..12].fill(0xFF)),
            Some(WireError::Unsupported)
        );
        assert_eq!(check(&|b| b[19] = 0b1011), Some(WireError::BadOption));
        assert_eq!(check(&|b| b[21] = 0), Some(WireError::BadOption));
        assert_eq!(check(&|b| b[21] = 9), Some(WireError::BadOption));
        assert_eq!(check(&|b| b[3] = 28), Some(WireError::BadOption));
        // Padding after the batch is not part of it.
        assert_eq!(check(&|b| b.extend_from_slice(&[0; 20])), None);
    }
}
