//! Packet data buffers.
//!
//! Pool-sized buffers ([`BUFFER_SIZE`] bytes, the ones packets recycle) are cut from 2 MiB
//! chunks that the kernel is asked to back with transparent huge pages (`madvise`): a router
//! holding hundreds of thousands of packets then reaches their data through a few TLB
//! entries instead of one per 4 KiB page, which is what a scheduler that visits every queue
//! in turn (DFQSched) pays for on every visit. Freed blocks wait in a per-thread cache, then
//! in a shared free list, and are reused; chunks are never unmapped. Buffers of other sizes,
//! and pool-sized ones when no chunk can be mapped, come from the heap.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::Mutex;

use crate::packet::BUFFER_SIZE;

/// Bytes mapped at a time: one huge page on x86-64 and aarch64 with 4 KiB base pages.
const CHUNK_BYTES: usize = 2 << 20;
/// Distance between blocks in a chunk: one cache line more than a block, so that the same
/// offset in consecutive blocks (the packet headers, at the headroom) falls in different
/// cache sets; with blocks a power of two apart, all headers would compete for a few sets.
const BLOCK_STRIDE: usize = BUFFER_SIZE + 64;
/// Free blocks a thread keeps before handing half of them to the shared list.
const CACHE_BLOCKS: usize = 512;

/// An owned, exclusively held byte buffer, like `Box<[u8]>`.
pub(crate) struct Bytes {
    ptr: NonNull<u8>,
    len: usize,
    /// A block of a chunk (else a heap allocation of `len` bytes).
    block: bool,
}

// SAFETY: `Bytes` owns its memory exclusively, as a `Box<[u8]>` does.
unsafe impl Send for Bytes {}
// SAFETY: shared references only read the bytes.
unsafe impl Sync for Bytes {}

impl Bytes {
    /// A pool-sized buffer whose bytes are unspecified (a reused block keeps old data).
    pub(crate) fn pooled() -> Bytes {
        match take_block() {
            Some(ptr) => Bytes {
                ptr,
                len: BUFFER_SIZE,
                block: true,
            },
            None => Bytes::zeroed(BUFFER_SIZE),
        }
    }

    /// A heap buffer of `len` zero bytes.
    pub(crate) fn zeroed(len: usize) -> Bytes {
        Bytes::from_box(vec![0u8; len].into_boxed_slice())
    }

    /// A buffer holding a copy of `data`: a block when it is pool-sized.
    pub(crate) fn copy_of(data: &[u8]) -> Bytes {
        if data.len() != BUFFER_SIZE {
            return Bytes::from_box(data.into());
        }
        let mut b = Bytes::pooled();
        b.copy_from_slice(data);
        b
    }

    fn from_box(b: Box<[u8]>) -> Bytes {
        let len = b.len();
        let raw = Box::into_raw(b).cast::<u8>();
        Bytes {
            // SAFETY: a box's pointer is never null (dangling but aligned when empty).
            ptr: unsafe { NonNull::new_unchecked(raw) },
            len,
            block: false,
        }
    }
}

impl Default for Bytes {
    /// An empty buffer.
    fn default() -> Bytes {
        Bytes::from_box(Box::default())
    }
}

impl Deref for Bytes {
    type Target = [u8];

    #[inline(always)]
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialised bytes owned by `self` (a mapped chunk is
        // zero-filled by the kernel, and blocks are only ever written through `&mut`).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for Bytes {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Bytes {
    fn drop(&mut self) {
        if self.block {
            give_block(self.ptr);
        } else {
            let raw = std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
            // SAFETY: `ptr` and `len` came from `Box::into_raw` of a `Box<[u8]>` of `len`
            // bytes, which is given back exactly once, here.
            drop(unsafe { Box::from_raw(raw) });
        }
    }
}

/// Free blocks shared by all threads, and the chunk being cut (addresses, `next..end`).
struct Shared {
    free: Vec<usize>,
    next: usize,
    end: usize,
}

static SHARED: Mutex<Shared> = Mutex::new(Shared {
    free: Vec::new(),
    next: 0,
    end: 0,
});

/// A thread's free blocks; what is left when the thread ends goes to the shared list.
struct Cache(Vec<usize>);

impl Drop for Cache {
    fn drop(&mut self) {
        lock().free.append(&mut self.0);
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = const { RefCell::new(Cache(Vec::new())) };
}

fn lock() -> std::sync::MutexGuard<'static, Shared> {
    SHARED.lock().unwrap_or_else(|e| e.into_inner())
}

/// A free block, or `None` when no chunk can be mapped.
fn take_block() -> Option<NonNull<u8>> {
    let cached = CACHE
        .try_with(|c| {
            let mut c = c.borrow_mut();
            if c.0.is_empty() {
                refill(&mut c.0);
            }
            c.0.pop()
        })
        .ok()
        .flatten();
    let addr = match cached {
        Some(a) => a,
        None => {
            let mut s = lock();
            match s.free.pop() {
                Some(a) => a,
                None => cut(&mut s)?,
            }
        }
    };
    NonNull::new(addr as *mut u8)
}

/// Moves up to half a cache of blocks from the shared list into `cache`, cutting new ones if
/// the list is empty.
fn refill(cache: &mut Vec<usize>) {
    let mut s = lock();
    let n = s.free.len().min(CACHE_BLOCKS / 2);
    let at = s.free.len() - n;
    cache.extend(s.free.drain(at..));
    while cache.len() < CACHE_BLOCKS / 2 {
        match cut(&mut s) {
            Some(a) => cache.push(a),
            None => break,
        }
    }
}

/// The next block of the current chunk, mapping a chunk when it is used up.
fn cut(s: &mut Shared) -> Option<usize> {
    if s.next + BUFFER_SIZE > s.end {
        let base = map_chunk()?;
        (s.next, s.end) = (base, base + CHUNK_BYTES);
    }
    let a = s.next;
    s.next += BLOCK_STRIDE;
    Some(a)
}

/// Returns a block to this thread's cache, or to the shared list.
fn give_block(ptr: NonNull<u8>) {
    let addr = ptr.as_ptr() as usize;
    let cached = CACHE.try_with(|c| {
        let mut c = c.borrow_mut();
        c.0.push(addr);
        if c.0.len() >= CACHE_BLOCKS {
            let half = c.0.len() - CACHE_BLOCKS / 2;
            lock().free.extend(c.0.drain(half..));
        }
    });
    if cached.is_err() {
        lock().free.push(addr);
    }
}

/// Maps a chunk of CHUNK_BYTES aligned on CHUNK_BYTES and asks for huge pages; its address.
fn map_chunk() -> Option<usize> {
    let span = 2 * CHUNK_BYTES;
    // SAFETY: an anonymous private mapping at an address the kernel picks; no existing
    // memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let start = p as usize;
    let base = start.next_multiple_of(CHUNK_BYTES);
    let (head, tail) = (base - start, start + span - (base + CHUNK_BYTES));
    // SAFETY: the ranges unmapped and advised lie within the mapping just made, which
    // nothing else refers to yet.
    unsafe {
        if head > 0 {
            libc::munmap(p, head);
        }
        if tail > 0 {
            libc::munmap((base + CHUNK_BYTES) as *mut libc::c_void, tail);
        }
        libc::madvise(base as *mut libc::c_void, CHUNK_BYTES, libc::MADV_HUGEPAGE);
    }
    Some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_blocks_are_reused_and_distinct() {
        let a = Bytes::pooled();
        let b = Bytes::pooled();
        assert_eq!((a.len(), b.len()), (BUFFER_SIZE, BUFFER_SIZE));
        assert_ne!(a.as_ptr(), b.as_ptr());
        let at = a.as_ptr();
        drop(a);
        let c = Bytes::pooled();
        assert_eq!(c.as_ptr(), at, "the block just freed is the next one taken");
    }

    #[test]
    fn blocks_lie_in_chunks_on_distinct_cache_sets() {
        let held: Vec<Bytes> = (0..2 * CHUNK_BYTES / BUFFER_SIZE)
            .map(|_| Bytes::pooled())
            .collect();
        assert!(held.iter().all(|b| b.block));
        let mut sets = std::collections::BTreeSet::new();
        for b in &held {
            let addr = b.as_ptr() as usize;
            assert_eq!(addr % 64, 0);
            let chunk = addr - addr % CHUNK_BYTES;
            assert!(
                addr + BUFFER_SIZE <= chunk + CHUNK_BYTES,
                "a block within its chunk"
            );
            sets.insert((addr + 128) / 64 % 64);
        }
        assert_eq!(
            sets.len(),
            64,
            "headers spread over every set of a 4 KiB way"
        );
    }

    #[test]
    fn copies_and_heap_buffers_keep_their_bytes() {
        let data: Vec<u8> = (0..BUFFER_SIZE).map(|i| i as u8).collect();
        let mut b = Bytes::copy_of(&data);
        assert!(b.block);
        assert_eq!(&b[..], &data[..]);
        b[0] = 7;
        assert_eq!(b[0], 7);
        let h = Bytes::copy_of(&data[..100]);
        assert!(!h.block);
        assert_eq!(&h[..], &data[..100]);
        assert!(Bytes::zeroed(5000).iter().all(|&x| x == 0));
        assert!(Bytes::default().is_empty());
    }
}
