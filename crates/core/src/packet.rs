//! Packets: one contiguous buffer with headroom and tailroom, header offsets and annotations.
//!
//! A [`Packet`] owns a small pooled descriptor that points at a data buffer. Fresh packets come
//! from a per-thread pool, so the hot path allocates nothing; threads that free more than
//! they allocate pass whole chunks of descriptors to those that allocate more (one lock per
//! chunk). [`Packet::clone_packet`] shares the
//! buffer copy-on-write: the first write through a shared packet copies its data.

use std::cell::RefCell;
use std::mem::ManuallyDrop;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Mutex};

use crate::buffers::Bytes;
use crate::time::Timestamp;

/// Size of a pooled packet buffer.
pub const BUFFER_SIZE: usize = 2048;
/// Headroom left in front of fresh packets, for encapsulation without copying.
pub const DEFAULT_HEADROOM: usize = 128;
/// Descriptors kept in each thread's pool.
const POOL_CAPACITY: usize = 4096;
const NO_HEADER: u32 = u32::MAX;

/// How a packet was addressed at the link layer (Click's packet type annotation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PacketType {
    /// Addressed to this host.
    #[default]
    Host,
    /// Link-layer broadcast.
    Broadcast,
    /// Link-layer multicast.
    Multicast,
    /// Addressed to another host (seen in promiscuous mode).
    OtherHost,
    /// Sent by this host.
    Outgoing,
    /// Looped back.
    Loopback,
}

/// The fixed annotation area carried with every packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anno {
    /// Destination IPv4 address annotation (next hop after route lookup).
    pub dst_ip: Ipv4Addr,
    /// Destination IPv6 address annotation.
    pub dst_ip6: Ipv6Addr,
    /// Timestamp annotation (arrival time for captured packets).
    pub timestamp: Timestamp,
    /// Paint annotation (Paint, CheckPaint, PaintTee).
    pub paint: u8,
    /// Link-layer packet type.
    pub packet_type: PacketType,
    /// Index of the device the packet arrived on, or 0.
    pub device: u16,
    /// Set when the IP source address must be fixed by FixIPSrc.
    pub fix_ip_src: bool,
    /// Offset of the offending byte for ICMP Parameter Problem.
    pub param_off: u16,
    /// Aggregate or flow identifier.
    pub aggregate: u32,
    /// VLAN TCI annotation.
    pub vlan_tci: u16,
    /// Free user annotation bytes.
    pub user: [u8; 16],
}

impl Default for Anno {
    fn default() -> Anno {
        Anno {
            dst_ip: Ipv4Addr::UNSPECIFIED,
            dst_ip6: Ipv6Addr::UNSPECIFIED,
            timestamp: Timestamp::ZERO,
            paint: 0,
            packet_type: PacketType::Host,
            device: 0,
            fix_ip_src: false,
            param_off: 0,
            aggregate: 0,
            vlan_tci: 0,
            user: [0; 16],
        }
    }
}

enum Buf {
    Owned(Bytes),
    Shared(Arc<Bytes>),
}

impl Buf {
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Buf::Owned(b) => b,
            Buf::Shared(b) => b,
        }
    }
}

/// A packet descriptor. The buffer reference has a cache line of its own: a thread that
/// frees a packet reads only that line, while the thread that reuses the descriptor writes the
/// others, so handing descriptors between threads does not bounce a line both touch.
#[repr(C, align(64))]
struct Inner {
    buf: Buf,
    _line: [u8; 64 - std::mem::size_of::<Buf>()],
    head: u32,
    tail: u32,
    mac: u32,
    net: u32,
    trans: u32,
    anno: Anno,
}

// Descriptors stay boxed in the pools: a Packet is a pointer to its descriptor, so recycling
// moves pointers, never descriptors.
#[allow(clippy::vec_box)]
mod pool_types {
    pub(super) type Pool = Vec<Box<super::Inner>>;
}
use pool_types::Pool;

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Vec::new()) };
}

/// Packets move in chunks of this many descriptors between a thread's pool and the exchange.
const CHUNK: usize = 256;
/// Chunks the exchange keeps at most; beyond, descriptors are freed.
const EXCHANGE_CHUNKS: usize = 512;

/// Where threads that free more packets than they allocate (the consumer side of a pipeline)
/// leave whole chunks of descriptors for threads that allocate more than they free. One lock
/// per chunk, never per packet.
static EXCHANGE: Mutex<Vec<Pool>> = Mutex::new(Vec::new());

fn refill(pool: &mut Pool) {
    let chunk = EXCHANGE.lock().unwrap_or_else(|e| e.into_inner()).pop();
    if let Some(chunk) = chunk {
        pool.extend(chunk);
    }
}

fn spill(pool: &mut Pool) {
    let chunk: Pool = pool.drain(pool.len() - CHUNK..).collect();
    let mut ex = EXCHANGE.lock().unwrap_or_else(|e| e.into_inner());
    if ex.len() < EXCHANGE_CHUNKS {
        ex.push(chunk);
    }
}

fn fresh_inner() -> Box<Inner> {
    let recycled = POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.is_empty() {
            refill(&mut p);
        }
        p.pop()
    });
    recycled.unwrap_or_else(|| {
        Box::new(Inner {
            buf: Buf::Owned(Bytes::pooled()),
            _line: [0; 64 - std::mem::size_of::<Buf>()],
            head: 0,
            tail: 0,
            mac: NO_HEADER,
            net: NO_HEADER,
            trans: NO_HEADER,
            anno: Anno::default(),
        })
    })
}

/// A network packet.
pub struct Packet(ManuallyDrop<Box<Inner>>);

impl Packet {
    /// Asks the processor to fetch the descriptor line that freeing this packet reads, for a
    /// caller that will free it soon and has other work to overlap with the fetch.
    #[inline(always)]
    pub fn prefetch_for_free(&self) {
        crate::cpu::prefetch(&**self.0 as *const Inner);
    }

    /// A packet of `len` zero bytes with the default headroom.
    pub fn new(len: usize) -> Packet {
        Packet::with_room(DEFAULT_HEADROOM, len, 0)
    }

    /// A packet holding a copy of `data`, with the default headroom.
    pub fn from_bytes(data: &[u8]) -> Packet {
        let mut p = Packet::alloc(DEFAULT_HEADROOM, data.len(), 0);
        copy_bytes(p.data_mut(), data);
        p
    }

    /// A packet of `len` zero bytes with at least `headroom` and `tailroom` spare bytes.
    pub fn with_room(headroom: usize, len: usize, tailroom: usize) -> Packet {
        let mut p = Packet::alloc(headroom, len, tailroom);
        p.data_mut().fill(0);
        p
    }

    /// A packet whose data bytes are unspecified (recycled); the caller overwrites them.
    fn alloc(headroom: usize, len: usize, tailroom: usize) -> Packet {
        Packet::init(fresh_inner(), headroom, len, tailroom)
    }

    /// Makes a recycled descriptor a packet of `len` unspecified bytes with at least
    /// `headroom` and `tailroom` spare bytes.
    #[inline(always)]
    fn init(mut inner: Box<Inner>, headroom: usize, len: usize, tailroom: usize) -> Packet {
        let need = headroom + len + tailroom;
        let fits = matches!(&inner.buf, Buf::Owned(b) if b.len() >= need);
        if !fits {
            inner.buf = Buf::Owned(if need <= BUFFER_SIZE {
                Bytes::pooled()
            } else {
                Bytes::zeroed(need)
            });
        }
        inner.head = headroom as u32;
        inner.tail = (headroom + len) as u32;
        inner.mac = NO_HEADER;
        inner.net = NO_HEADER;
        inner.trans = NO_HEADER;
        inner.anno = Anno::default();
        Packet(ManuallyDrop::new(inner))
    }

    /// The descriptor, ready for the pool.
    #[inline]
    fn into_recyclable(self) -> Box<Inner> {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so the box is taken exactly once, here.
        recyclable(unsafe { ManuallyDrop::take(&mut this.0) })
    }

    /// Packet data from the current head to the tail.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.0.buf.bytes()[self.0.head as usize..self.0.tail as usize]
    }

    /// Writable packet data; copies the buffer first if it is shared with a clone.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let (h, t) = (self.0.head as usize, self.0.tail as usize);
        &mut self.buffer_mut()[h..t]
    }

    /// Length of the packet data.
    #[inline]
    pub fn len(&self) -> usize {
        (self.0.tail - self.0.head) as usize
    }

    /// True for a zero-length packet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Spare bytes in front of the data.
    #[inline]
    pub fn headroom(&self) -> usize {
        self.0.head as usize
    }

    /// Spare bytes after the data.
    #[inline]
    pub fn tailroom(&self) -> usize {
        self.0.buf.bytes().len() - self.0.tail as usize
    }

    /// True if the buffer is shared with a clone (a write will copy it).
    #[inline]
    pub fn is_shared(&self) -> bool {
        matches!(&self.0.buf, Buf::Shared(a) if Arc::strong_count(a) > 1)
    }

    #[inline]
    fn buffer_mut(&mut self) -> &mut [u8] {
        if matches!(self.0.buf, Buf::Shared(_)) {
            self.unshare();
        }
        match &mut self.0.buf {
            Buf::Owned(b) => b,
            Buf::Shared(_) => unreachable!("buffer made unique above"),
        }
    }

    /// Gives this packet its own copy of a buffer it shares with clones (copy-on-write).
    #[cold]
    fn unshare(&mut self) {
        let inner = &mut **self.0;
        if let Buf::Shared(arc) = &mut inner.buf {
            let owned = match Arc::get_mut(arc) {
                Some(b) => std::mem::take(b),
                None => Bytes::copy_of(arc),
            };
            inner.buf = Buf::Owned(owned);
        }
    }

    /// A clone sharing this packet's data copy-on-write, with copied annotations and offsets.
    #[inline]
    pub fn clone_packet(&mut self) -> Packet {
        let inner = &mut **self.0;
        if let Buf::Owned(b) = &mut inner.buf {
            inner.buf = Buf::Shared(Arc::new(std::mem::take(b)));
        }
        let Buf::Shared(arc) = &inner.buf else {
            unreachable!("buffer made shared above")
        };
        let mut c = fresh_inner();
        c.buf = Buf::Shared(arc.clone());
        c.head = inner.head;
        c.tail = inner.tail;
        c.mac = inner.mac;
        c.net = inner.net;
        c.trans = inner.trans;
        c.anno = inner.anno;
        Packet(ManuallyDrop::new(c))
    }

    /// An independent copy of this packet (data, offsets and annotations).
    pub fn deep_copy(&self) -> Packet {
        let mut p = Packet::alloc(self.headroom(), self.len(), self.tailroom());
        p.data_mut().copy_from_slice(self.data());
        p.0.mac = self.0.mac;
        p.0.net = self.0.net;
        p.0.trans = self.0.trans;
        p.0.anno = self.0.anno;
        p
    }

    /// Prepends `n` bytes (from headroom, or by moving to a larger buffer) and returns them.
    #[inline]
    pub fn push_front(&mut self, n: usize) -> &mut [u8] {
        if self.headroom() < n {
            self.regrow(n + DEFAULT_HEADROOM, 0);
        }
        self.0.head -= n as u32;
        let h = self.0.head as usize;
        &mut self.buffer_mut()[h..h + n]
    }

    /// Removes `n` bytes from the front (at most the whole packet).
    #[inline]
    pub fn pull_front(&mut self, n: usize) {
        let n = n.min(self.len()) as u32;
        self.0.head += n;
    }

    /// Appends `n` zero bytes at the tail and returns them.
    #[inline]
    pub fn put(&mut self, n: usize) -> &mut [u8] {
        if self.tailroom() < n {
            self.regrow(0, n);
        }
        let t = self.0.tail as usize;
        self.0.tail += n as u32;
        let s = &mut self.buffer_mut()[t..t + n];
        s.fill(0);
        s
    }

    /// Removes `n` bytes from the tail (at most the whole packet).
    #[inline]
    pub fn take(&mut self, n: usize) {
        let n = n.min(self.len()) as u32;
        self.0.tail -= n;
    }

    /// Sets the length to `len`, trimming or zero-extending at the tail.
    pub fn resize(&mut self, len: usize) {
        if len <= self.len() {
            self.take(self.len() - len);
        } else {
            self.put(len - self.len());
        }
    }

    fn regrow(&mut self, extra_head: usize, extra_tail: usize) {
        let old = self.0.buf.bytes();
        let mut nb = Bytes::zeroed(old.len() + extra_head + extra_tail);
        nb[extra_head..extra_head + old.len()].copy_from_slice(old);
        let shift = extra_head as u32;
        let inner = &mut **self.0;
        inner.buf = Buf::Owned(nb);
        inner.head += shift;
        inner.tail += shift;
        for off in [&mut inner.mac, &mut inner.net, &mut inner.trans] {
            if *off != NO_HEADER {
                *off += shift;
            }
        }
    }

    #[inline]
    fn offset_rel(&self, abs: u32) -> Option<isize> {
        (abs != NO_HEADER).then(|| abs as isize - self.0.head as isize)
    }

    #[inline]
    fn abs_of(&self, rel: isize) -> u32 {
        (self.0.head as isize + rel).clamp(0, self.0.buf.bytes().len() as isize) as u32
    }

    /// Offset of the MAC header relative to the data start (may be negative after a strip).
    #[inline]
    pub fn mac_offset(&self) -> Option<isize> {
        self.offset_rel(self.0.mac)
    }

    /// Offset of the network header relative to the data start.
    #[inline]
    pub fn network_offset(&self) -> Option<isize> {
        self.offset_rel(self.0.net)
    }

    /// Offset of the transport header relative to the data start.
    #[inline]
    pub fn transport_offset(&self) -> Option<isize> {
        self.offset_rel(self.0.trans)
    }

    /// Marks the MAC header at `off` bytes from the data start.
    #[inline]
    pub fn set_mac_offset(&mut self, off: isize) {
        self.0.mac = self.abs_of(off);
    }

    /// Marks the network header at `off` bytes from the data start.
    #[inline]
    pub fn set_network_offset(&mut self, off: isize) {
        self.0.net = self.abs_of(off);
    }

    /// Marks the transport header at `off` bytes from the data start.
    #[inline]
    pub fn set_transport_offset(&mut self, off: isize) {
        self.0.trans = self.abs_of(off);
    }

    /// Clears the header offsets.
    pub fn clear_offsets(&mut self) {
        self.0.mac = NO_HEADER;
        self.0.net = NO_HEADER;
        self.0.trans = NO_HEADER;
    }

    /// Bytes from the network header to the tail, if a network header is set and lies in the buffer.
    #[inline]
    pub fn network_header(&self) -> Option<&[u8]> {
        let n = self.0.net;
        (n != NO_HEADER && n <= self.0.tail)
            .then(|| &self.0.buf.bytes()[n as usize..self.0.tail as usize])
    }

    /// Writable bytes from the network header to the tail.
    #[inline]
    pub fn network_header_mut(&mut self) -> Option<&mut [u8]> {
        let (n, t) = (self.0.net, self.0.tail);
        if n == NO_HEADER || n > t {
            return None;
        }
        Some(&mut self.buffer_mut()[n as usize..t as usize])
    }

    /// Bytes from the transport header to the tail.
    #[inline]
    pub fn transport_header(&self) -> Option<&[u8]> {
        let n = self.0.trans;
        (n != NO_HEADER && n <= self.0.tail)
            .then(|| &self.0.buf.bytes()[n as usize..self.0.tail as usize])
    }

    /// Bytes from the MAC header to the tail.
    #[inline]
    pub fn mac_header(&self) -> Option<&[u8]> {
        let n = self.0.mac;
        (n != NO_HEADER && n <= self.0.tail)
            .then(|| &self.0.buf.bytes()[n as usize..self.0.tail as usize])
    }

    /// Moves the data start to the network header (StripToNetworkHeader); false if none is set.
    #[inline]
    pub fn strip_to_network_header(&mut self) -> bool {
        let n = self.0.net;
        if n == NO_HEADER || n > self.0.tail {
            return false;
        }
        self.0.head = n;
        true
    }

    /// Moves the data start back to the MAC header (Unstrip after a strip); false if none is set.
    pub fn unstrip_to_mac_header(&mut self) -> bool {
        let n = self.0.mac;
        if n == NO_HEADER || n > self.0.tail {
            return false;
        }
        self.0.head = n;
        true
    }

    /// Moves the data start back by `n` bytes into the headroom (Click's Unstrip).
    #[inline]
    pub fn unstrip(&mut self, n: usize) {
        let n = n.min(self.headroom()) as u32;
        self.0.head -= n;
    }

    /// The annotations.
    #[inline]
    pub fn anno(&self) -> &Anno {
        &self.0.anno
    }

    /// Writable annotations.
    #[inline]
    pub fn anno_mut(&mut self) -> &mut Anno {
        &mut self.0.anno
    }

    /// Destination IPv4 annotation.
    #[inline]
    pub fn dst_ip_anno(&self) -> Ipv4Addr {
        self.0.anno.dst_ip
    }

    /// Sets the destination IPv4 annotation.
    #[inline]
    pub fn set_dst_ip_anno(&mut self, a: Ipv4Addr) {
        self.0.anno.dst_ip = a;
    }

    /// Destination IPv6 annotation.
    #[inline]
    pub fn dst_ip6_anno(&self) -> Ipv6Addr {
        self.0.anno.dst_ip6
    }

    /// Sets the destination IPv6 annotation.
    #[inline]
    pub fn set_dst_ip6_anno(&mut self, a: Ipv6Addr) {
        self.0.anno.dst_ip6 = a;
    }

    /// Timestamp annotation.
    #[inline]
    pub fn timestamp(&self) -> Timestamp {
        self.0.anno.timestamp
    }

    /// Sets the timestamp annotation.
    #[inline]
    pub fn set_timestamp(&mut self, t: Timestamp) {
        self.0.anno.timestamp = t;
    }
}

impl Drop for Packet {
    fn drop(&mut self) {
        // SAFETY: the box is taken exactly once, here, and `self` is never used again.
        let inner = recyclable(unsafe { ManuallyDrop::take(&mut self.0) });
        let _ = POOL.try_with(|p| recycle(&mut p.borrow_mut(), inner));
    }
}

/// `inner` ready for the pool: its buffer is a fresh pool-sized one unless it already owns one.
#[inline]
fn recyclable(mut inner: Box<Inner>) -> Box<Inner> {
    let reusable = match &inner.buf {
        Buf::Owned(b) => b.len() == BUFFER_SIZE,
        Buf::Shared(_) => false,
    };
    if !reusable {
        inner.buf = Buf::Owned(Bytes::pooled());
    }
    inner
}

/// Returns a descriptor to `pool`, passing a chunk on to the exchange when the pool is full.
#[inline]
fn recycle(pool: &mut Pool, inner: Box<Inner>) {
    pool.push(inner);
    if pool.len() >= POOL_CAPACITY {
        spill(pool);
    }
}

/// Copies `src` into `dst` (of the same length). Frames up to 128 bytes, the common small
/// packet, are copied as two overlapping fixed-size blocks, which the compiler turns into a
/// few vector moves instead of a call to `memcpy`.
#[inline(always)]
fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if (32..=64).contains(&n) {
        dst[..32].copy_from_slice(&src[..32]);
        dst[n - 32..].copy_from_slice(&src[n - 32..]);
    } else if (64..=128).contains(&n) {
        dst[..64].copy_from_slice(&src[..64]);
        dst[n - 64..].copy_from_slice(&src[n - 64..]);
    } else {
        dst.copy_from_slice(src);
    }
}

/// Fills every slot with a fresh packet holding a copy of `data` (default headroom), taking
/// the descriptors from this thread's pool in one access.
pub(crate) fn fill_copies(slots: &mut [Option<Packet>], data: &[u8]) {
    let _ = POOL.try_with(|p| {
        let mut pool = p.borrow_mut();
        for s in slots.iter_mut() {
            if pool.is_empty() {
                refill(&mut pool);
            }
            let Some(inner) = pool.pop() else { break };
            let mut q = Packet::init(inner, DEFAULT_HEADROOM, data.len(), 0);
            copy_bytes(q.data_mut(), data);
            *s = Some(q);
        }
    });
    for s in slots.iter_mut().filter(|s| s.is_none()) {
        *s = Some(Packet::from_bytes(data));
    }
}

/// Frees the packets in `slots` into this thread's pool in one access, leaving the slots
/// empty.
pub(crate) fn free_all(slots: &mut [Option<Packet>]) {
    let pooled = POOL.try_with(|p| {
        let mut pool = p.borrow_mut();
        for s in slots.iter_mut() {
            if let Some(q) = s.take() {
                recycle(&mut pool, q.into_recyclable());
            }
        }
    });
    if pooled.is_err() {
        // The thread is exiting and its pool is gone: the packets are freed as they are.
        slots.fill_with(|| None);
    }
}

impl std::fmt::Debug for Packet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packet")
            .field("len", &self.len())
            .field("anno", self.anno())
            .finish()
    }
}

/// Descriptors currently cached in this thread's pool.
pub fn pool_size() -> usize {
    POOL.with(|p| p.borrow().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_of_every_small_length_are_exact() {
        let src: Vec<u8> = (0..200u8).collect();
        for n in 0..200 {
            let p = Packet::from_bytes(&src[..n]);
            assert_eq!(p.data(), &src[..n], "length {n}");
            let mut slots: [Option<Packet>; 3] = Default::default();
            fill_copies(&mut slots, &src[..n]);
            assert!(slots
                .iter()
                .all(|q| q.as_ref().unwrap().data() == &src[..n]));
        }
    }

    #[test]
    fn headroom_push_pull() {
        let mut p = Packet::from_bytes(&[1, 2, 3, 4]);
        assert_eq!(p.headroom(), DEFAULT_HEADROOM);
        p.push_front(2).copy_from_slice(&[9, 8]);
        assert_eq!(p.data(), &[9, 8, 1, 2, 3, 4]);
        p.pull_front(3);
        assert_eq!(p.data(), &[2, 3, 4]);
        p.put(2);
        assert_eq!(p.data(), &[2, 3, 4, 0, 0]);
        p.take(4);
        assert_eq!(p.data(), &[2]);
        p.pull_front(10);
        assert!(p.is_empty());
    }

    #[test]
    fn push_beyond_headroom_regrows() {
        let mut p = Packet::from_bytes(&[7; 10]);
        p.set_network_offset(0);
        p.push_front(DEFAULT_HEADROOM + 50).fill(1);
        assert_eq!(p.len(), 10 + DEFAULT_HEADROOM + 50);
        assert_eq!(p.network_offset(), Some((DEFAULT_HEADROOM + 50) as isize));
        assert_eq!(&p.data()[DEFAULT_HEADROOM + 50..], &[7; 10]);
    }

    #[test]
    fn clone_is_copy_on_write() {
        let mut a = Packet::from_bytes(&[1, 2, 3]);
        a.anno_mut().paint = 5;
        let mut b = a.clone_packet();
        assert!(a.is_shared() && b.is_shared());
        b.data_mut()[0] = 42;
        assert_eq!(a.data(), &[1, 2, 3]);
        assert_eq!(b.data(), &[42, 2, 3]);
        assert_eq!(b.anno().paint, 5);
        drop(b);
        a.data_mut()[1] = 7;
        assert_eq!(a.data(), &[1, 7, 3]);
    }

    #[test]
    fn offsets_survive_strip() {
        let mut p = Packet::from_bytes(&[0; 34]);
        p.set_mac_offset(0);
        p.set_network_offset(14);
        assert!(p.strip_to_network_header());
        assert_eq!(p.len(), 20);
        assert_eq!(p.mac_offset(), Some(-14));
        assert!(p.unstrip_to_mac_header());
        assert_eq!(p.len(), 34);
    }

    #[test]
    fn pool_recycles() {
        let p = Packet::new(64);
        drop(p);
        let before = pool_size();
        let q = Packet::new(64);
        assert_eq!(pool_size(), before - 1);
        assert!(q.data().iter().all(|&b| b == 0));
        drop(q);
        assert_eq!(pool_size(), before);
    }

    #[test]
    fn a_thread_that_only_frees_spills_to_the_exchange() {
        let made: Vec<Packet> = (0..POOL_CAPACITY + 2 * CHUNK)
            .map(|_| Packet::new(64))
            .collect();
        let left = std::thread::spawn(move || {
            drop(made);
            pool_size()
        })
        .join()
        .unwrap();
        assert!(
            left < POOL_CAPACITY,
            "pool of a freeing thread stays bounded: {}",
            left
        );
        let other = std::thread::spawn(|| {
            let p = Packet::new(64);
            drop(p);
            pool_size()
        })
        .join()
        .unwrap();
        assert!(other >= 1);
    }

    #[test]
    fn jumbo_packets_get_a_large_buffer() {
        let p = Packet::new(9000);
        assert_eq!(p.len(), 9000);
        drop(p);
        let q = Packet::new(10);
        assert!(q.tailroom() + q.len() + q.headroom() == BUFFER_SIZE);
    }
}
