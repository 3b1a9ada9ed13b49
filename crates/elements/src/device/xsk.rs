//! Linux AF_XDP system interface of FromXDPDevice and ToXDPDevice: the XDP redirect program
//! (hand-assembled, loaded with `bpf(2)`, no compiler or libbpf needed), the XSKMAP, the
//! UMEM and the four rings (fill, completion, rx, tx), all with raw `libc` calls.
//!
//! One [`XskSocket`] exists per (interface, queue) in the process; FromXDPDevice takes its
//! receive half ([`XskRx`]: rx and fill rings, the first half of the UMEM frames) and
//! ToXDPDevice its transmit half ([`XskTx`]: tx and completion rings, the second half). The
//! halves share nothing but the descriptor and the read-only UMEM mapping address, so each
//! can live in its own thread without a lock. The XDP program is attached (through a BPF
//! link, so it goes away with the process even after a crash) only when a receive half is
//! taken, and detached when the last receive half on the interface is dropped. Every
//! resource is owned by a value whose `Drop` frees it, so error paths free everything too.
//!
//! All `unsafe` code of the AF_XDP path lives in this file, each block with its `SAFETY`
//! argument. Ring indices read from shared memory are never trusted for memory access:
//! descriptor addresses are bounds-checked against the UMEM before a slice is made.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::sys::{errno, getsockopt, if_index, setsockopt, strerror, take_error, Fd};

const AF_XDP: i32 = 44;
const SOL_XDP: i32 = 283;
const XDP_MMAP_OFFSETS: i32 = 1;
const XDP_RX_RING: i32 = 2;
const XDP_TX_RING: i32 = 3;
const XDP_UMEM_REG: i32 = 4;
const XDP_UMEM_FILL_RING: i32 = 5;
const XDP_UMEM_COMPLETION_RING: i32 = 6;
const XDP_STATISTICS: i32 = 7;
const XDP_COPY: u16 = 1 << 1;
const XDP_ZEROCOPY: u16 = 1 << 2;
const XDP_PGOFF_RX_RING: i64 = 0;
const XDP_PGOFF_TX_RING: i64 = 0x8000_0000;
const XDP_UMEM_PGOFF_FILL_RING: i64 = 0x1_0000_0000;
const XDP_UMEM_PGOFF_COMPLETION_RING: i64 = 0x1_8000_0000;

const BPF_MAP_CREATE: i64 = 0;
const BPF_MAP_UPDATE_ELEM: i64 = 2;
const BPF_PROG_LOAD: i64 = 5;
const BPF_LINK_CREATE: i64 = 28;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const XDP_PASS: i32 = 2;

/// UMEM chunk (frame) size: a power of two, so a frame's base is `addr & !(FRAME_SIZE - 1)`.
pub const FRAME_SIZE: usize = 2048;
/// Longest frame the transmit half accepts (the whole chunk).
pub const MAX_FRAME: usize = FRAME_SIZE;

/// How the XDP program is attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XdpMode {
    /// Native (driver) mode, else generic.
    Auto,
    /// Native (driver) mode only.
    Native,
    /// Generic (skb) mode.
    Skb,
}

impl XdpMode {
    /// Parses `auto`, `native` (`drv`), `skb` (`generic`).
    pub fn parse(s: &str) -> Option<XdpMode> {
        Some(match s.to_ascii_lowercase().as_str() {
            "auto" => XdpMode::Auto,
            "native" | "drv" | "driver" => XdpMode::Native,
            "skb" | "generic" => XdpMode::Skb,
            _ => return None,
        })
    }
}

/// Socket options fixed by the first element that opens an (interface, queue).
#[derive(Clone, Debug)]
pub struct XskOptions {
    /// UMEM frames in all (half for receiving, half for transmitting).
    pub frames: usize,
    /// Try zero-copy first (falls back to copy mode where unsupported, e.g. veth).
    pub zerocopy: bool,
}

// ---------------------------------------------------------------------------------------
// bpf(2)

/// A `union bpf_attr` large enough for the commands used here, zero-initialised.
#[repr(C, align(8))]
struct BpfAttr([u8; 128]);

impl BpfAttr {
    fn new() -> BpfAttr {
        BpfAttr([0; 128])
    }
    fn u32(&mut self, off: usize, v: u32) -> &mut Self {
        self.0[off..off + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64(&mut self, off: usize, v: u64) -> &mut Self {
        self.0[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
}

fn bpf(cmd: i64, attr: &mut BpfAttr) -> Result<i32, i32> {
    // SAFETY: `attr` is a live, writable 128-byte buffer laid out as the kernel's
    // `union bpf_attr` for `cmd`; any pointers stored in it point to buffers that outlive the
    // call (the callers keep them on their stack).
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.0.as_mut_ptr(),
            std::mem::size_of::<BpfAttr>() as u32,
        )
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as i32)
    }
}

fn perm_hint(e: i32) -> &'static str {
    if e == libc::EPERM || e == libc::EACCES {
        " (needs root, or CAP_BPF and CAP_NET_ADMIN)"
    } else {
        ""
    }
}

/// One BPF instruction, encoded as the kernel's `struct bpf_insn`.
const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    let o = off.to_le_bytes();
    let i = imm.to_le_bytes();
    u64::from_le_bytes([code, dst | (src << 4), o[0], o[1], i[0], i[1], i[2], i[3]])
}

/// The redirect program: `return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);`
/// Frames of queues without a socket in the map go to the kernel stack as usual.
pub fn redirect_program(map_fd: i32) -> [u64; 6] {
    [
        // r2 = *(u32 *)(r1 + offsetof(struct xdp_md, rx_queue_index))
        insn(0x61, 2, 1, 16, 0),
        // r1 = map (ld_imm64, BPF_PSEUDO_MAP_FD), two slots
        insn(0x18, 1, 1, 0, map_fd),
        insn(0, 0, 0, 0, 0),
        // r3 = XDP_PASS (the action if the map has no entry)
        insn(0xb7, 3, 0, 0, XDP_PASS),
        // call bpf_redirect_map
        insn(0x85, 0, 0, 0, BPF_FUNC_REDIRECT_MAP),
        // exit (r0 = the helper's verdict)
        insn(0x95, 0, 0, 0, 0),
    ]
}

/// The loaded program, its XSKMAP and its attachment to one interface (a BPF link: closing
/// it detaches the program).
pub struct XdpProgram {
    map: Fd,
    _prog: Fd,
    _link: Fd,
    ifindex: i32,
    mode: &'static str,
}

impl XdpProgram {
    fn load_and_attach(ifname: &str, ifindex: i32, mode: XdpMode) -> Result<XdpProgram, String> {
        let mut a = BpfAttr::new();
        a.u32(0, BPF_MAP_TYPE_XSKMAP)
            .u32(4, 4)
            .u32(8, 4)
            .u32(12, 64);
        // map_name (offset 28 of the BPF_MAP_CREATE attributes)
        a.0[28..34].copy_from_slice(b"sluice");
        let map = bpf(BPF_MAP_CREATE, &mut a)
            .map(Fd)
            .map_err(|e| format!("cannot create XSKMAP: {}{}", strerror(e), perm_hint(e)))?;
        let insns = redirect_program(map.raw());
        let license = c"GPL";
        let mut log = vec![0u8; 8192];
        let load = |level: u32, log: &mut [u8]| {
            let mut a = BpfAttr::new();
            a.u32(0, BPF_PROG_TYPE_XDP)
                .u32(4, insns.len() as u32)
                .u64(8, insns.as_ptr() as u64)
                .u64(16, license.as_ptr() as u64)
                .u32(68, BPF_XDP);
            if level > 0 {
                a.u32(24, level)
                    .u32(28, log.len() as u32)
                    .u64(32, log.as_mut_ptr() as u64);
            }
            a.0[48..58].copy_from_slice(b"sluice_xsk");
            bpf(BPF_PROG_LOAD, &mut a)
        };
        let prog = match load(0, &mut log) {
            Ok(fd) => Fd(fd),
            Err(e) => {
                let _ = load(1, &mut log);
                let text: String = String::from_utf8_lossy(&log)
                    .trim_end_matches('\0')
                    .lines()
                    .last()
                    .unwrap_or("")
                    .to_string();
                return Err(format!(
                    "cannot load the XDP program: {}{}{}",
                    strerror(e),
                    perm_hint(e),
                    if text.is_empty() {
                        String::new()
                    } else {
                        format!(" (verifier: {})", text)
                    }
                ));
            }
        };
        let attach = |flags: u32| {
            let mut a = BpfAttr::new();
            a.u32(0, prog.raw() as u32)
                .u32(4, ifindex as u32)
                .u32(8, BPF_XDP)
                .u32(12, flags);
            bpf(BPF_LINK_CREATE, &mut a).map(Fd)
        };
        let (link, mode) = match mode {
            XdpMode::Skb => (attach(XDP_FLAGS_SKB_MODE), "skb"),
            XdpMode::Native => (attach(XDP_FLAGS_DRV_MODE), "native"),
            XdpMode::Auto => match attach(XDP_FLAGS_DRV_MODE) {
                Ok(l) => (Ok(l), "native"),
                Err(_) => (attach(XDP_FLAGS_SKB_MODE), "skb"),
            },
        };
        let link = link.map_err(|e| {
            let why = if e == libc::EBUSY || e == libc::EEXIST {
                " (another XDP program is attached to it)".to_string()
            } else {
                perm_hint(e).to_string()
            };
            format!(
                "cannot attach the XDP program to '{}' in {} mode: {}{}",
                ifname,
                mode,
                strerror(e),
                why
            )
        })?;
        Ok(XdpProgram {
            map,
            _prog: prog,
            _link: link,
            ifindex,
            mode,
        })
    }

    /// `skb` or `native`.
    pub fn mode(&self) -> &'static str {
        self.mode
    }

    fn insert(&self, queue: u32, xsk_fd: i32) -> Result<(), String> {
        let key = queue;
        let val = xsk_fd as u32;
        let mut a = BpfAttr::new();
        a.u32(0, self.map.raw() as u32)
            .u64(8, &key as *const u32 as u64)
            .u64(16, &val as *const u32 as u64);
        bpf(BPF_MAP_UPDATE_ELEM, &mut a)
            .map(|_| ())
            .map_err(|e| format!("XSKMAP entry for queue {}: {}", queue, strerror(e)))
    }
}

// ---------------------------------------------------------------------------------------
// Memory

/// An `mmap`ed region, unmapped on drop.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Mapping {
    fn anonymous(len: usize) -> Result<Mapping, String> {
        // SAFETY: a fresh private anonymous mapping; checked for failure below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!("UMEM of {} bytes: {}", len, strerror(errno())));
        }
        Ok(Mapping {
            ptr: p as *mut u8,
            len,
        })
    }

    fn ring(fd: i32, len: usize, pgoff: i64, what: &str) -> Result<Mapping, String> {
        // SAFETY: maps the ring the kernel allocated for socket `fd` at `pgoff`; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                pgoff,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!("mmap of the {} ring: {}", what, strerror(errno())));
        }
        Ok(Mapping {
            ptr: p as *mut u8,
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the region mapped at creation; no reference into it outlives
        // the owner (rings and slices borrow from the values that own the mapping).
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

/// Producer and consumer offsets of one ring (`struct xdp_ring_offset`).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
struct RingOffset {
    producer: u64,
    consumer: u64,
    desc: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
struct MmapOffsets {
    rx: RingOffset,
    tx: RingOffset,
    fr: RingOffset,
    cr: RingOffset,
}

/// One single-producer single-consumer ring shared with the kernel.
struct Ring {
    map: Mapping,
    prod: usize,
    cons: usize,
    desc: usize,
    mask: u32,
    size: u32,
    /// Our copy of the index we own (producer for fill/tx, consumer for rx/completion).
    local: u32,
}

// SAFETY: a ring is used by one thread at a time (it is owned by one half); the mapping is
// shared memory with the kernel only.
unsafe impl Send for Ring {}

impl Ring {
    fn open(
        fd: i32,
        off: &RingOffset,
        size: u32,
        entry: usize,
        pgoff: i64,
        what: &str,
    ) -> Result<Ring, String> {
        let len = off.desc as usize + size as usize * entry;
        let map = Mapping::ring(fd, len, pgoff, what)?;
        for o in [off.producer, off.consumer] {
            if o as usize + 4 > len || !(o as usize).is_multiple_of(4) {
                return Err(format!("{} ring: bad offsets from the kernel", what));
            }
        }
        let mut r = Ring {
            map,
            prod: off.producer as usize,
            cons: off.consumer as usize,
            desc: off.desc as usize,
            mask: size - 1,
            size,
            local: 0,
        };
        r.local = if pgoff == XDP_PGOFF_RX_RING || pgoff == XDP_UMEM_PGOFF_COMPLETION_RING {
            r.consumer().load(Ordering::Relaxed)
        } else {
            r.producer().load(Ordering::Relaxed)
        };
        Ok(r)
    }

    fn producer(&self) -> &AtomicU32 {
        // SAFETY: the offset was checked to lie inside the mapping and to be 4-aligned (the
        // mapping is page-aligned); the kernel accesses the word atomically too.
        unsafe { &*(self.map.ptr.add(self.prod) as *const AtomicU32) }
    }

    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as in `producer`.
        unsafe { &*(self.map.ptr.add(self.cons) as *const AtomicU32) }
    }

    /// Entry `i` (modulo the ring size) as a pointer to `T`.
    fn entry<T>(&self, i: u32) -> *mut T {
        let idx = (i & self.mask) as usize;
        // SAFETY: `idx < size` and the mapping holds `size` entries of `T` after `desc`.
        unsafe { (self.map.ptr.add(self.desc) as *mut T).add(idx) }
    }

    /// Consumer side: entries available to read.
    fn available(&self) -> u32 {
        self.producer()
            .load(Ordering::Acquire)
            .wrapping_sub(self.local)
    }

    /// Producer side: free slots.
    fn free(&self) -> u32 {
        self.size
            - self
                .local
                .wrapping_sub(self.consumer().load(Ordering::Acquire))
    }
}

/// `struct xdp_desc`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct XdpDesc {
    addr: u64,
    len: u32,
    options: u32,
}

/// Socket statistics (`struct xdp_statistics`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XskStats {
    /// Dropped for other reasons (no fill buffer, frame too large).
    pub rx_dropped: u64,
    /// Invalid fill descriptors.
    pub rx_invalid_descs: u64,
    /// Invalid transmit descriptors.
    pub tx_invalid_descs: u64,
    /// Dropped because the rx ring was full.
    pub rx_ring_full: u64,
    /// Times the fill ring was found empty.
    pub rx_fill_ring_empty_descs: u64,
    /// Times the tx ring was found empty.
    pub tx_ring_empty_descs: u64,
}

// ---------------------------------------------------------------------------------------
// The socket

type RxParts = (Ring, Ring);
type TxParts = (Ring, Ring);

/// An AF_XDP socket bound to (interface, queue) with its UMEM and rings.
pub struct XskSocket {
    // Field order is drop order: rings (in the halves), then the UMEM, then the socket.
    rx_parts: Mutex<Option<RxParts>>,
    tx_parts: Mutex<Option<TxParts>>,
    umem: Mapping,
    fd: Fd,
    ifname: String,
    key: IfKey,
    queue: u32,
    rx_frames: usize,
    tx_frames: usize,
    zerocopy: bool,
    mac: [u8; 6],
}

// SAFETY: the UMEM pointer is only dereferenced by the halves, which own disjoint frame
// ranges (receive frames `[0, rx_frames)`, transmit frames after them); the other fields are
// plain values or guarded by mutexes.
unsafe impl Send for XskSocket {}
// SAFETY: as above: shared access touches no frame memory.
unsafe impl Sync for XskSocket {}

/// An interface of one network namespace: (namespace inode, interface index). Threads of one
/// process may live in different namespaces, where the same index names other interfaces.
type IfKey = (u64, i32);

static SOCKETS: Mutex<Vec<(IfKey, u32, Weak<XskSocket>)>> = Mutex::new(Vec::new());
static PROGRAMS: Mutex<Vec<(IfKey, Weak<XdpProgram>)>> = Mutex::new(Vec::new());

/// The calling thread's network namespace (inode of its `ns/net`), 0 if unknown.
fn netns_id() -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/thread-self/ns/net")
        .map(|m| m.ino())
        .unwrap_or(0)
}

/// The interface's MAC address (zero if it has none).
fn if_mac(fd: i32, ifname: &str) -> [u8; 6] {
    // SAFETY: ifreq is plain old data; all-zero is valid.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(ifname.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: SIOCGIFHWADDR fills the `ifreq` we pass, which lives across the call.
    let r = unsafe { libc::ioctl(fd, libc::SIOCGIFHWADDR as _, &mut ifr as *mut libc::ifreq) };
    let mut mac = [0u8; 6];
    if r == 0 {
        // SAFETY: after SIOCGIFHWADDR the union holds `ifru_hwaddr`.
        let sa = unsafe { ifr.ifr_ifru.ifru_hwaddr };
        for (m, b) in mac.iter_mut().zip(sa.sa_data.iter()) {
            *m = *b as u8;
        }
    }
    mac
}

impl XskSocket {
    /// The socket on (`ifname`, `queue`): the existing one of this process, or a new one.
    pub fn get(ifname: &str, queue: u32, o: &XskOptions) -> Result<Arc<XskSocket>, String> {
        let ifindex = if_index(ifname)?;
        let key = (netns_id(), ifindex);
        let mut reg = SOCKETS.lock().unwrap_or_else(|e| e.into_inner());
        reg.retain(|(_, _, w)| w.strong_count() > 0);
        if let Some(s) = reg
            .iter()
            .find(|(k, q, _)| *k == key && *q == queue)
            .and_then(|(_, _, w)| w.upgrade())
        {
            return Ok(s);
        }
        let s = Arc::new(XskSocket::open(ifname, key, queue, o)?);
        reg.push((key, queue, Arc::downgrade(&s)));
        Ok(s)
    }

    fn open(ifname: &str, key: IfKey, queue: u32, o: &XskOptions) -> Result<XskSocket, String> {
        let ifindex = key.1;
        // SAFETY: plain socket(2) call.
        let fd = unsafe { libc::socket(AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            let e = errno();
            return Err(format!(
                "cannot open AF_XDP socket: {}{}",
                strerror(e),
                perm_hint(e)
            ));
        }
        let fd = Fd(fd);
        let f = fd.raw();
        let frames = o.frames.clamp(64, 1 << 16).next_power_of_two();
        let rx_frames = frames / 2;
        let tx_frames = frames - rx_frames;
        let umem = Mapping::anonymous(frames * FRAME_SIZE)?;
        // struct xdp_umem_reg {addr, len, chunk_size, headroom, flags, (tx_metadata_len)}.
        let reg: [u64; 4] = [
            umem.ptr as u64,
            umem.len as u64,
            FRAME_SIZE as u64, // chunk_size = FRAME_SIZE, headroom = 0
            0,                 // flags = 0, tx_metadata_len = 0
        ];
        setsockopt(f, SOL_XDP, XDP_UMEM_REG, &reg).map_err(|e| {
            format!(
                "UMEM registration ({} KiB): {}{}",
                umem.len / 1024,
                strerror(e),
                if e == libc::ENOMEM || e == libc::EPERM {
                    " (locked-memory limit: lower FRAMES)"
                } else {
                    ""
                }
            )
        })?;
        let rx_size = rx_frames as u32;
        let tx_size = tx_frames as u32;
        // The kernel publishes its consumer index of the fill and tx rings lazily (once per
        // cached batch), so those rings get twice as many slots as frames: a producer that
        // trusts the published index always finds room for every frame it owns.
        let fill_size = 2 * rx_size;
        let txr_size = 2 * tx_size;
        for (opt, size, what) in [
            (XDP_UMEM_FILL_RING, fill_size, "fill"),
            (XDP_UMEM_COMPLETION_RING, tx_size, "completion"),
            (XDP_RX_RING, rx_size, "rx"),
            (XDP_TX_RING, txr_size, "tx"),
        ] {
            setsockopt(f, SOL_XDP, opt, &size)
                .map_err(|e| format!("{} ring of {}: {}", what, size, strerror(e)))?;
        }
        let mut off = MmapOffsets::default();
        getsockopt(f, SOL_XDP, XDP_MMAP_OFFSETS, &mut off)
            .map_err(|e| format!("XDP_MMAP_OFFSETS: {}", strerror(e)))?;
        let d = std::mem::size_of::<XdpDesc>();
        let mut fill = Ring::open(f, &off.fr, fill_size, 8, XDP_UMEM_PGOFF_FILL_RING, "fill")?;
        let comp = Ring::open(
            f,
            &off.cr,
            tx_size,
            8,
            XDP_UMEM_PGOFF_COMPLETION_RING,
            "completion",
        )?;
        let rx = Ring::open(f, &off.rx, rx_size, d, XDP_PGOFF_RX_RING, "rx")?;
        let tx = Ring::open(f, &off.tx, txr_size, d, XDP_PGOFF_TX_RING, "tx")?;
        // Every receive frame goes to the fill ring before the socket is bound.
        for i in 0..rx_frames as u32 {
            let slot = fill.entry::<u64>(fill.local.wrapping_add(i));
            // SAFETY: `slot` is an entry of the fill ring, owned by us (producer side) until
            // the producer index below publishes it.
            unsafe { slot.write_volatile(i as u64 * FRAME_SIZE as u64) };
        }
        fill.local = fill.local.wrapping_add(rx_frames as u32);
        fill.producer().store(fill.local, Ordering::Release);
        let bind = |flags: u16| {
            let sa: [u32; 4] = [
                AF_XDP as u32 | ((flags as u32) << 16),
                ifindex as u32,
                queue,
                0,
            ];
            // SAFETY: `sa` has the layout of `struct sockaddr_xdp` (u16 family, u16 flags,
            // u32 ifindex, u32 queue id, u32 shared umem fd) on a little-endian machine and
            // lives across the call.
            let r = unsafe {
                libc::bind(
                    f,
                    sa.as_ptr() as *const libc::sockaddr,
                    std::mem::size_of_val(&sa) as libc::socklen_t,
                )
            };
            if r < 0 {
                Err(errno())
            } else {
                Ok(())
            }
        };
        // A socket closed just before (by this process or another) releases its queue in a
        // kernel work item: retry a busy queue for a short while.
        let bind = |flags: u16| {
            let mut r = bind(flags);
            for _ in 0..50 {
                if r != Err(libc::EBUSY) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
                r = bind(flags);
            }
            r
        };
        let zerocopy = if o.zerocopy {
            match bind(XDP_ZEROCOPY) {
                Ok(()) => true,
                Err(_) => {
                    bind(XDP_COPY).map_err(|e| bind_error(ifname, queue, e))?;
                    false
                }
            }
        } else {
            bind(XDP_COPY).map_err(|e| bind_error(ifname, queue, e))?;
            false
        };
        let mac = if_mac(f, ifname);
        Ok(XskSocket {
            rx_parts: Mutex::new(Some((rx, fill))),
            tx_parts: Mutex::new(Some((tx, comp))),
            umem,
            fd,
            ifname: ifname.to_string(),
            key,
            queue,
            rx_frames,
            tx_frames,
            zerocopy,
            mac,
        })
    }

    /// The socket descriptor (readable when the rx ring has frames).
    pub fn fd(&self) -> i32 {
        self.fd.raw()
    }

    /// `copy` or `zerocopy`.
    pub fn copy_mode(&self) -> &'static str {
        if self.zerocopy {
            "zerocopy"
        } else {
            "copy"
        }
    }

    /// The interface's MAC address.
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// Kernel statistics of the socket (cumulative).
    pub fn stats(&self) -> XskStats {
        let mut s = XskStats::default();
        let _ = getsockopt(self.fd.raw(), SOL_XDP, XDP_STATISTICS, &mut s);
        s
    }

    /// Takes the pending socket error (`SO_ERROR`), 0 if none.
    pub fn take_error(&self) -> i32 {
        take_error(self.fd.raw())
    }

    /// The receive half; attaches the XDP program (in `mode`) to the interface if this process
    /// has not yet, and enters this socket in its XSKMAP.
    pub fn take_rx(self: &Arc<XskSocket>, mode: XdpMode) -> Result<XskRx, String> {
        let (rx, fill) = self
            .rx_parts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| {
                format!(
                    "'{}' queue {} is already read by another element",
                    self.ifname, self.queue
                )
            })?;
        let prog = {
            let mut reg = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
            reg.retain(|(_, w)| w.strong_count() > 0);
            match reg
                .iter()
                .find(|(k, _)| *k == self.key)
                .and_then(|(_, w)| w.upgrade())
            {
                Some(p) => p,
                None => {
                    let p = Arc::new(XdpProgram::load_and_attach(&self.ifname, self.key.1, mode)?);
                    reg.push((self.key, Arc::downgrade(&p)));
                    p
                }
            }
        };
        debug_assert_eq!(prog.ifindex, self.key.1);
        prog.insert(self.queue, self.fd.raw())?;
        Ok(XskRx {
            rx,
            fill,
            prog,
            sock: self.clone(),
        })
    }

    /// The transmit half.
    pub fn take_tx(self: &Arc<XskSocket>) -> Result<XskTx, String> {
        let (tx, comp) = self
            .tx_parts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| {
                format!(
                    "'{}' queue {} is already written by another element",
                    self.ifname, self.queue
                )
            })?;
        let first = self.rx_frames as u64;
        let free = (0..self.tx_frames as u64)
            .map(|i| (first + i) * FRAME_SIZE as u64)
            .collect();
        Ok(XskTx {
            tx,
            comp,
            free,
            sock: self.clone(),
        })
    }
}

fn bind_error(ifname: &str, queue: u32, e: i32) -> String {
    let hint = if e == libc::EINVAL {
        " (no such queue?)"
    } else if e == libc::EBUSY {
        " (queue already used by another AF_XDP socket)"
    } else {
        ""
    };
    format!(
        "cannot bind AF_XDP socket to '{}' queue {}: {}{}",
        ifname,
        queue,
        strerror(e),
        hint
    )
}

/// The receive half of a socket: rx and fill rings, frames `[0, rx_frames)`.
pub struct XskRx {
    rx: Ring,
    fill: Ring,
    prog: Arc<XdpProgram>,
    sock: Arc<XskSocket>,
}

impl XskRx {
    /// The socket.
    pub fn socket(&self) -> &Arc<XskSocket> {
        &self.sock
    }

    /// `native` or `skb`.
    pub fn mode(&self) -> &'static str {
        self.prog.mode()
    }

    /// True if frames are waiting.
    pub fn ready(&self) -> bool {
        self.rx.available() > 0
    }

    /// Visits up to `max` received frames with `f(bytes)` and returns their frames to the fill
    /// ring in one batch. Returns (frames visited, invalid descriptors skipped).
    pub fn recv(&mut self, max: usize, mut f: impl FnMut(&[u8])) -> (usize, usize) {
        let n = self.rx.available().min(self.fill.free()).min(max as u32);
        if n == 0 {
            return (0, 0);
        }
        let umem_len = self.sock.umem.len as u64;
        let rx_limit = (self.sock.rx_frames * FRAME_SIZE) as u64;
        let mut invalid = 0;
        let mut filled = 0u32;
        for i in 0..n {
            // SAFETY: entry `local + i` is published by the kernel (i < available, read with
            // acquire ordering) and not yet released back.
            let d: XdpDesc = unsafe {
                self.rx
                    .entry::<XdpDesc>(self.rx.local.wrapping_add(i))
                    .read_volatile()
            };
            let end = d.addr.checked_add(d.len as u64);
            let ok = d.addr < rx_limit
                && matches!(end, Some(e) if e <= umem_len && e <= (d.addr | (FRAME_SIZE as u64 - 1)) + 1);
            if ok {
                // SAFETY: the range lies inside the UMEM and inside one receive frame, which
                // user space owns from its rx descriptor until it is put on the fill ring
                // below (after `f` returns).
                let data = unsafe {
                    std::slice::from_raw_parts(
                        self.sock.umem.ptr.add(d.addr as usize),
                        d.len as usize,
                    )
                };
                f(data);
            } else {
                invalid += 1;
            }
            if d.addr < rx_limit {
                let slot = self.fill.entry::<u64>(self.fill.local.wrapping_add(filled));
                // SAFETY: a free fill-ring slot (n <= free), owned by us until published.
                unsafe { slot.write_volatile(d.addr & !(FRAME_SIZE as u64 - 1)) };
                filled += 1;
            }
        }
        self.rx.local = self.rx.local.wrapping_add(n);
        self.rx.consumer().store(self.rx.local, Ordering::Release);
        self.fill.local = self.fill.local.wrapping_add(filled);
        self.fill
            .producer()
            .store(self.fill.local, Ordering::Release);
        (n as usize, invalid)
    }
}

/// The transmit half of a socket: tx and completion rings, the frames after the receive ones.
pub struct XskTx {
    tx: Ring,
    comp: Ring,
    free: Vec<u64>,
    sock: Arc<XskSocket>,
}

impl XskTx {
    /// The socket.
    pub fn socket(&self) -> &Arc<XskSocket> {
        &self.sock
    }

    /// Takes completed frames back.
    fn reclaim(&mut self) {
        let n = self.comp.available();
        let lo = (self.sock.rx_frames * FRAME_SIZE) as u64;
        let hi = self.sock.umem.len as u64;
        for i in 0..n {
            // SAFETY: entry published by the kernel (i < available) and not yet released.
            let a: u64 = unsafe {
                self.comp
                    .entry::<u64>(self.comp.local.wrapping_add(i))
                    .read_volatile()
            };
            let a = a & !(FRAME_SIZE as u64 - 1);
            if a >= lo && a < hi && self.free.len() < self.sock.tx_frames {
                self.free.push(a);
            }
        }
        self.comp.local = self.comp.local.wrapping_add(n);
        self.comp
            .consumer()
            .store(self.comp.local, Ordering::Release);
    }

    /// Frames the kernel has not taken from the tx ring yet.
    pub fn queued(&self) -> u32 {
        self.tx
            .local
            .wrapping_sub(self.tx.consumer().load(Ordering::Acquire))
    }

    /// Copies the frames into UMEM and onto the tx ring, as many as fit (each at most
    /// [`MAX_FRAME`] bytes: the caller checks). Returns how many were queued (a prefix).
    pub fn enqueue<'a>(&mut self, frames: impl Iterator<Item = &'a [u8]>) -> usize {
        self.reclaim();
        let room = (self.tx.free() as usize).min(self.free.len());
        let mut n = 0u32;
        for f in frames.take(room) {
            let len = f.len().min(MAX_FRAME);
            let addr = self.free.pop().unwrap_or(0);
            // SAFETY: `addr` is a transmit frame from the free list: inside the UMEM, in the
            // transmit range, not on any ring, so owned by us; `len <= FRAME_SIZE`.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    f.as_ptr(),
                    self.sock.umem.ptr.add(addr as usize),
                    len,
                );
            }
            let d = XdpDesc {
                addr,
                len: len as u32,
                options: 0,
            };
            // SAFETY: a free tx-ring slot (n < room <= free), owned by us until published.
            unsafe {
                self.tx
                    .entry::<XdpDesc>(self.tx.local.wrapping_add(n))
                    .write_volatile(d)
            };
            n += 1;
        }
        if n > 0 {
            self.tx.local = self.tx.local.wrapping_add(n);
            self.tx.producer().store(self.tx.local, Ordering::Release);
        }
        n as usize
    }

    /// Asks the kernel to transmit what is on the tx ring (copy mode transmits in this call).
    pub fn kick(&self) -> Result<(), i32> {
        // SAFETY: sendto with no buffer, on our socket: only a wake-up.
        let r = unsafe {
            libc::sendto(
                self.sock.fd.raw(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
        if r < 0 {
            Err(errno())
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_encoding() {
        let p = redirect_program(7);
        // ldxw r2, [r1+16]
        assert_eq!(p[0].to_le_bytes(), [0x61, 0x12, 16, 0, 0, 0, 0, 0]);
        // lddw r1, map fd 7 (src = BPF_PSEUDO_MAP_FD)
        assert_eq!(p[1].to_le_bytes(), [0x18, 0x11, 0, 0, 7, 0, 0, 0]);
        assert_eq!(p[2], 0);
        assert_eq!(p[3].to_le_bytes(), [0xb7, 0x03, 0, 0, 2, 0, 0, 0]);
        assert_eq!(p[4].to_le_bytes(), [0x85, 0, 0, 0, 51, 0, 0, 0]);
        assert_eq!(p[5].to_le_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn modes_parse() {
        assert_eq!(XdpMode::parse("SKB"), Some(XdpMode::Skb));
        assert_eq!(XdpMode::parse("native"), Some(XdpMode::Native));
        assert_eq!(XdpMode::parse("auto"), Some(XdpMode::Auto));
        assert_eq!(XdpMode::parse("x"), None);
    }

    #[test]
    fn missing_interface() {
        let e = XskSocket::get(
            "sluice-nonexist",
            0,
            &XskOptions {
                frames: 64,
                zerocopy: false,
            },
        )
        .err()
        .unwrap();
        assert!(e.contains("no such interface"), "{}", e);
    }
}
