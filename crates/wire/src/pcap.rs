//! The libpcap capture file format (version 2.4), microsecond and nanosecond variants.
//!
//! [`PcapReader`] accepts either byte order and either magic and never allocates more than
//! [`MAX_CAPLEN`] bytes per record whatever the headers say. [`PcapWriter`] writes what
//! libpcap writes on a little-endian host.

use std::fmt;
use std::io::{self, Read, Write};

/// Magic number of microsecond-resolution files.
pub const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
/// Magic number of nanosecond-resolution files.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Link type: Ethernet.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Link type: raw IP (IPv4 or IPv6, by version nibble).
pub const LINKTYPE_RAW: u32 = 101;
/// Link type: raw IPv4.
pub const LINKTYPE_IPV4: u32 = 228;
/// Link type: raw IPv6.
pub const LINKTYPE_IPV6: u32 = 229;
/// The historic DLT_RAW values some systems write (12 and 14), also raw IP.
pub const DLT_RAW_ALT: [u32; 2] = [12, 14];
/// Largest record this reader accepts ([`crate::MAX_PACKET_LEN`], libpcap's own limit).
pub const MAX_CAPLEN: u32 = crate::MAX_PACKET_LEN as u32;
/// First four bytes of a pcapng file (its Section Header Block type), in either byte order.
pub const PCAPNG_MAGIC: u32 = 0x0a0d_0d0a;
/// Length of the file header.
pub const FILE_HEADER_LEN: usize = 24;
/// Length of a record header.
pub const RECORD_HEADER_LEN: usize = 16;

/// What a link type carries, as far as Sluice cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkKind {
    /// Ethernet II frames.
    Ethernet,
    /// Raw IP packets, IPv4 or IPv6 (by version nibble).
    RawIp,
    /// Raw IPv4 packets only.
    RawIpv4,
    /// Raw IPv6 packets only.
    RawIpv6,
    /// Any other link type.
    Other(u32),
}

impl LinkKind {
    /// Classifies a link-type number.
    pub fn from_link_type(lt: u32) -> LinkKind {
        match lt {
            LINKTYPE_ETHERNET => LinkKind::Ethernet,
            LINKTYPE_RAW | 12 | 14 => LinkKind::RawIp,
            LINKTYPE_IPV4 => LinkKind::RawIpv4,
            LINKTYPE_IPV6 => LinkKind::RawIpv6,
            other => LinkKind::Other(other),
        }
    }
}

/// Errors reading or writing pcap files.
#[derive(Debug)]
pub enum PcapError {
    /// An I/O error from the underlying reader or writer.
    Io(io::Error),
    /// The file ends in the middle of a header or record.
    Truncated,
    /// The file is not a pcap file or a header field is impossible.
    Corrupt(String),
}

impl fmt::Display for PcapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PcapError::Io(e) => write!(f, "pcap I/O error: {e}"),
            PcapError::Truncated => f.write_str("pcap file truncated"),
            PcapError::Corrupt(m) => write!(f, "corrupt pcap file: {m}"),
        }
    }
}

impl std::error::Error for PcapError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PcapError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for PcapError {
    fn from(e: io::Error) -> Self {
        PcapError::Io(e)
    }
}

/// A record's header, timestamps normalised to nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapRecordHeader {
    /// Seconds since the epoch.
    pub ts_sec: u32,
    /// Nanoseconds within the second (microsecond files are scaled).
    pub ts_nsec: u32,
    /// Captured length (bytes present in the file).
    pub caplen: u32,
    /// Original length on the wire.
    pub orig_len: u32,
}

/// A record with its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapRecord {
    /// Seconds since the epoch.
    pub ts_sec: u32,
    /// Nanoseconds within the second (always nanoseconds, whatever the file's resolution).
    pub ts_nsec: u32,
    /// Original length on the wire.
    pub orig_len: u32,
    /// The captured bytes.
    pub data: Vec<u8>,
}

/// Reads as much of `buf` as the reader holds; returns the byte count (short only at EOF).
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A streaming pcap reader. Wrap files in a `BufReader`: records are read with small reads.
#[derive(Debug)]
pub struct PcapReader<R: Read> {
    inner: R,
    big_endian: bool,
    nanos: bool,
    version: (u16, u16),
    snaplen: u32,
    link_type: u32,
    failed: bool,
}

impl<R: Read> PcapReader<R> {
    /// Reads and validates the file header.
    pub fn new(mut inner: R) -> Result<Self, PcapError> {
        let mut h = [0u8; FILE_HEADER_LEN];
        let n = read_full(&mut inner, &mut h)?;
        if n < 4 {
            return Err(PcapError::Truncated);
        }
        let le = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let be = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
        let (big_endian, nanos) = match (le, be) {
            (MAGIC_MICROS, _) => (false, false),
            (MAGIC_NANOS, _) => (false, true),
            (_, MAGIC_MICROS) => (true, false),
            (_, MAGIC_NANOS) => (true, true),
            (PCAPNG_MAGIC, _) => {
                return Err(PcapError::Corrupt(
                    "this is a pcapng file; only libpcap (pcap) files are read \
                     (convert it with `editcap -F pcap IN OUT` or `tshark -F pcap`)"
                        .into(),
                ))
            }
            _ => return Err(PcapError::Corrupt(format!("bad magic {le:#010x}"))),
        };
        if n < FILE_HEADER_LEN {
            return Err(PcapError::Truncated);
        }
        let u16_at = |i: usize| {
            let b = [h[i], h[i + 1]];
            if big_endian {
                u16::from_be_bytes(b)
            } else {
                u16::from_le_bytes(b)
            }
        };
        let u32_at = |i: usize| {
            let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        let version = (u16_at(4), u16_at(6));
        if version.0 != 2 {
            return Err(PcapError::Corrupt(format!(
                "unsupported version {}.{}",
                version.0, version.1
            )));
        }
        Ok(PcapReader {
            inner,
            big_endian,
            nanos,
            version,
            snaplen: u32_at(16),
            link_type: u32_at(20) & 0x0fff_ffff, // upper bits: FCS length flags
            failed: false,
        })
    }

    /// The link type (`LINKTYPE_*`).
    pub fn link_type(&self) -> u32 {
        self.link_type
    }

    /// The link type classified.
    pub fn link_kind(&self) -> LinkKind {
        LinkKind::from_link_type(self.link_type)
    }

    /// The snapshot length from the file header.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// True for nanosecond-resolution files.
    pub fn is_nanosecond(&self) -> bool {
        self.nanos
    }

    /// True if the file was written big-endian.
    pub fn is_big_endian(&self) -> bool {
        self.big_endian
    }

    /// The file format version `(major, minor)`.
    pub fn version(&self) -> (u16, u16) {
        self.version
    }

    /// Returns the underlying reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    fn read_header(&mut self) -> Result<Option<PcapRecordHeader>, PcapError> {
        if self.failed {
            return Ok(None);
        }
        let mut h = [0u8; RECORD_HEADER_LEN];
        let n = read_full(&mut self.inner, &mut h)?;
        if n == 0 {
            return Ok(None);
        }
        if n < RECORD_HEADER_LEN {
            self.failed = true;
            return Err(PcapError::Truncated);
        }
        let f = |i: usize| {
            let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if self.big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        let (ts_sec, frac, caplen, orig_len) = (f(0), f(4), f(8), f(12));
        // A record longer than the file's snapshot length is read whole, as tcpdump and Click
        // do; only the absolute limit guards the allocation.
        if caplen > MAX_CAPLEN {
            self.failed = true;
            return Err(PcapError::Corrupt(format!(
                "record length {caplen} exceeds the {} KiB limit",
                MAX_CAPLEN / 1024
            )));
        }
        let ts_nsec = if self.nanos {
            frac
        } else {
            frac.saturating_mul(1000)
        };
        Ok(Some(PcapRecordHeader {
            ts_sec,
            ts_nsec,
            caplen,
            orig_len,
        }))
    }

    /// Reads the next record into `buf` (resized to the captured length), reusing its
    /// allocation. `Ok(None)` at a clean end of file. After an error, later calls return
    /// `Ok(None)`.
    pub fn next_into(&mut self, buf: &mut Vec<u8>) -> Result<Option<PcapRecordHeader>, PcapError> {
        let Some(h) = self.read_header()? else {
            return Ok(None);
        };
        buf.clear();
        buf.resize(h.caplen as usize, 0);
        let n = read_full(&mut self.inner, buf)?;
        if n < buf.len() {
            self.failed = true;
            buf.truncate(n);
            return Err(PcapError::Truncated);
        }
        Ok(Some(h))
    }

    /// Reads the next record. `Ok(None)` at a clean end of file; a record cut short by the
    /// end of the file is `Err(PcapError::Truncated)`.
    pub fn next_record(&mut self) -> Result<Option<PcapRecord>, PcapError> {
        let mut data = Vec::new();
        Ok(self.next_into(&mut data)?.map(|h| PcapRecord {
            ts_sec: h.ts_sec,
            ts_nsec: h.ts_nsec,
            orig_len: h.orig_len,
            data,
        }))
    }
}

impl<R: Read> Iterator for PcapReader<R> {
    type Item = Result<PcapRecord, PcapError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// A pcap writer producing the same bytes as libpcap on a little-endian host (version 2.4,
/// thiszone 0, sigfigs 0). Wrap files in a `BufWriter`.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    inner: W,
    snaplen: u32,
    nanos: bool,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header.
    pub fn new(mut inner: W, link_type: u32, snaplen: u32, nanosecond: bool) -> io::Result<Self> {
        let mut h = [0u8; FILE_HEADER_LEN];
        let magic = if nanosecond {
            MAGIC_NANOS
        } else {
            MAGIC_MICROS
        };
        h[0..4].copy_from_slice(&magic.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs stay zero.
        h[16..20].copy_from_slice(&snaplen.to_le_bytes());
        h[20..24].copy_from_slice(&link_type.to_le_bytes());
        inner.write_all(&h)?;
        Ok(PcapWriter {
            inner,
            snaplen,
            nanos: nanosecond,
        })
    }

    /// Writes one record. `ts_nsec` is in nanoseconds (divided by 1000 for microsecond
    /// files); data beyond the snapshot length is cut off; the original length is raised
    /// to the captured length if smaller.
    pub fn write_record(
        &mut self,
        ts_sec: u32,
        ts_nsec: u32,
        orig_len: u32,
        data: &[u8],
    ) -> io::Result<()> {
        let limit = if self.snaplen == 0 {
            MAX_CAPLEN
        } else {
            self.snaplen
        } as usize;
        let data = &data[..data.len().min(limit)];
        let caplen = data.len() as u32;
        let frac = if self.nanos { ts_nsec } else { ts_nsec / 1000 };
        let mut h = [0u8; RECORD_HEADER_LEN];
        h[0..4].copy_from_slice(&ts_sec.to_le_bytes());
        h[4..8].copy_from_slice(&frac.to_le_bytes());
        h[8..12].copy_from_slice(&caplen.to_le_bytes());
        h[12..16].copy_from_slice(&orig_len.max(caplen).to_le_bytes());
        self.inner.write_all(&h)?;
        self.inner.write_all(data)
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    /// Returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// A reference to the underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn sample(nanos: bool) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET, 65535, nanos).unwrap();
        w.write_record(1_700_000_000, 123_456_000, 60, &[0xaa; 60])
            .unwrap();
        w.write_record(1_700_000_001, 999_999_000, 1514, &[1, 2, 3])
            .unwrap();
        w.write_record(1_700_000_002, 0, 0, &[]).unwrap();
        w.into_inner()
    }

    #[test]
    fn header_bytes_match_libpcap() {
        let f = sample(false);
        assert_eq!(
            &f[..24],
            &[
                0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0,
                0, 0
            ]
        );
        // First record: ts 1700000000 = 0x6553f100, usec 123456 = 0x1e240.
        assert_eq!(
            &f[24..40],
            &[0x00, 0xf1, 0x53, 0x65, 0x40, 0xe2, 0x01, 0, 60, 0, 0, 0, 60, 0, 0, 0]
        );
        assert_eq!(&sample(true)[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
    }

    #[test]
    fn round_trip_both_magics() {
        for nanos in [false, true] {
            let f = sample(nanos);
            let mut r = PcapReader::new(Cursor::new(&f)).unwrap();
            assert_eq!(r.is_nanosecond(), nanos);
            assert!(!r.is_big_endian());
            assert_eq!(r.link_type(), LINKTYPE_ETHERNET);
            assert_eq!(r.link_kind(), LinkKind::Ethernet);
            assert_eq!(r.snaplen(), 65535);
            assert_eq!(r.version(), (2, 4));
            let mut w = PcapWriter::new(Vec::new(), r.link_type(), r.snaplen(), nanos).unwrap();
            let mut recs = Vec::new();
            while let Some(rec) = r.next_record().unwrap() {
                w.write_record(rec.ts_sec, rec.ts_nsec, rec.orig_len, &rec.data)
                    .unwrap();
                recs.push(rec);
            }
            assert_eq!(w.into_inner(), f);
            assert_eq!(recs.len(), 3);
            assert_eq!(recs[0].ts_nsec, 123_456_000);
            assert_eq!(recs[1].orig_len, 1514);
            assert_eq!(recs[1].data, [1, 2, 3]);
            assert!(recs[2].data.is_empty());
        }
    }

    #[test]
    fn big_endian_by_hand() {
        for (magic, nanos) in [(MAGIC_MICROS, false), (MAGIC_NANOS, true)] {
            let mut f = Vec::new();
            f.extend_from_slice(&magic.to_be_bytes());
            f.extend_from_slice(&[0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x05, 0xdc]);
            f.extend_from_slice(&101u32.to_be_bytes());
            f.extend_from_slice(&[
                0x12, 0x34, 0x56, 0x78, 0, 0, 0x01, 0xf4, 0, 0, 0, 4, 0, 0, 0, 40,
            ]);
            f.extend_from_slice(&[0x45, 0, 0, 40]);
            let mut r = PcapReader::new(&f[..]).unwrap();
            assert!(r.is_big_endian());
            assert_eq!(r.is_nanosecond(), nanos);
            assert_eq!(r.snaplen(), 1500);
            assert_eq!(r.link_kind(), LinkKind::RawIp);
            let mut buf = Vec::with_capacity(64);
            let h = r.next_into(&mut buf).unwrap().unwrap();
            assert_eq!(h.ts_sec, 0x1234_5678);
            assert_eq!(h.ts_nsec, if nanos { 500 } else { 500_000 });
            assert_eq!((h.caplen, h.orig_len), (4, 40));
            assert_eq!(buf, [0x45, 0, 0, 40]);
            assert!(r.next_into(&mut buf).unwrap().is_none());
            // Re-writing gives the little-endian equivalent, which reads back the same.
            let mut w = PcapWriter::new(Vec::new(), 101, 1500, nanos).unwrap();
            w.write_record(h.ts_sec, h.ts_nsec, h.orig_len, &buf)
                .unwrap();
            let le = w.into_inner();
            let mut r2 = PcapReader::new(&le[..]).unwrap();
            let rec = r2.next_record().unwrap().unwrap();
            assert_eq!(
                (rec.ts_sec, rec.ts_nsec, rec.orig_len),
                (h.ts_sec, h.ts_nsec, 40)
            );
            assert_eq!(rec.data, buf);
        }
    }

    #[test]
    fn corrupt_and_truncated() {
        let f = sample(false);
        // Truncated in the file header, record header and record data.
        assert!(matches!(
            PcapReader::new(&f[..10]),
            Err(PcapError::Truncated)
        ));
        assert!(matches!(
            PcapReader::new(&f[..0]),
            Err(PcapError::Truncated)
        ));
        let mut r = PcapReader::new(&f[..30]).unwrap();
        assert!(matches!(r.next_record(), Err(PcapError::Truncated)));
        assert!(r.next_record().unwrap().is_none());
        let mut r = PcapReader::new(&f[..24 + 16 + 59]).unwrap();
        assert!(matches!(r.next_record(), Err(PcapError::Truncated)));
        // Bad magic.
        let mut bad = f.clone();
        bad[0] = 0;
        assert!(matches!(
            PcapReader::new(&bad[..]),
            Err(PcapError::Corrupt(_))
        ));
        // A pcapng file is named as such.
        let mut ng = f.clone();
        ng[..4].copy_from_slice(&PCAPNG_MAGIC.to_le_bytes());
        let e = PcapReader::new(&ng[..]).unwrap_err();
        assert!(e.to_string().contains("pcapng"), "{e}");
        // A huge caplen: no allocation, an error.
        let mut bad = f.clone();
        bad[32..36].copy_from_slice(&0u32.to_le_bytes());
        bad[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut r = PcapReader::new(&bad[..]).unwrap();
        let e = r.next_record().unwrap_err();
        assert!(e.to_string().contains("256 KiB"), "{e}");
        assert_eq!(r.count(), 0);
    }

    #[test]
    fn records_longer_than_snaplen_are_read() {
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_RAW, 0, false).unwrap();
        for i in 0..3u8 {
            w.write_record(0, 0, 100, &[i; 100]).unwrap();
        }
        let mut f = w.into_inner();
        f[16..20].copy_from_slice(&64u32.to_le_bytes());
        let recs: Vec<_> = PcapReader::new(&f[..]).unwrap().collect();
        assert_eq!(recs.len(), 3);
        for (i, r) in recs.iter().enumerate() {
            assert_eq!(r.as_ref().unwrap().data, [i as u8; 100]);
        }
    }

    #[test]
    fn writer_truncates_to_snaplen() {
        let mut w = PcapWriter::new(Vec::new(), LINKTYPE_RAW, 4, false).unwrap();
        w.write_record(0, 1999, 2, &[1, 2, 3, 4, 5, 6]).unwrap();
        let f = w.into_inner();
        let rec = PcapReader::new(&f[..]).unwrap().next().unwrap().unwrap();
        assert_eq!(rec.data, [1, 2, 3, 4]);
        assert_eq!(rec.orig_len, 4);
        assert_eq!(rec.ts_nsec, 1000);
    }
}
