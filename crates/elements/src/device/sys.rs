//! Linux system interface of the device elements: AF_PACKET sockets with a TPACKET_V3 receive
//! ring, batched transmission with `sendmmsg`, and TUN/TAP descriptors.
//!
//! Every `unsafe` block of the device family lives here. Ring frames are parsed by the safe,
//! bounds-checked [`parse_frame`], so a corrupt ring can never make an element read out of
//! bounds.

use std::net::Ipv4Addr;
use std::sync::atomic::{fence, Ordering};

/// Size of the receive ring's blocks.
pub const BLOCK_SIZE: usize = 1 << 17;
/// Frame size announced to the kernel (V3 packs frames, this only sizes the ring).
const FRAME_SIZE: usize = 2048;

const ETH_P_ALL: u16 = 0x0003;
const SOL_PACKET: i32 = 263;
const PACKET_ADD_MEMBERSHIP: i32 = 1;
const PACKET_RX_RING: i32 = 5;
const PACKET_STATISTICS: i32 = 6;
const PACKET_VERSION: i32 = 10;
const PACKET_FANOUT: i32 = 18;
const PACKET_QDISC_BYPASS: i32 = 20;
const PACKET_IGNORE_OUTGOING: i32 = 23;
const TPACKET_V3: i32 = 2;
const PACKET_MR_PROMISC: u16 = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
/// Frame status bit: the VLAN TCI field is valid.
pub const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
/// Frame status bit: the checksum is not computed yet (sender used offload).
pub const TP_STATUS_CSUMNOTREADY: u32 = 1 << 3;

// Offsets in `struct tpacket_block_desc` (version, offset_to_priv, then tpacket_hdr_v1).
const BD_STATUS: usize = 8;
const BD_NUM_PKTS: usize = 12;
const BD_FIRST: usize = 16;
// Offsets in `struct tpacket3_hdr`, and of the `sockaddr_ll` that follows it.
const H_NEXT: usize = 0;
const H_SEC: usize = 4;
const H_NSEC: usize = 8;
const H_SNAPLEN: usize = 12;
const H_LEN: usize = 16;
const H_STATUS: usize = 20;
const H_MAC: usize = 24;
const H_VLAN_TCI: usize = 32;
const H_SLL_PKTTYPE: usize = 48 + 10;
const H_MIN: usize = H_SLL_PKTTYPE + 1;

/// The last OS error number.
pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Text of OS error `e`.
pub fn strerror(e: i32) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}

/// An owned file descriptor, closed on drop.
#[derive(Debug)]
pub struct Fd(pub(crate) i32);

impl Fd {
    /// The raw descriptor.
    pub fn raw(&self) -> i32 {
        self.0
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the descriptor is owned by this value and closed exactly once.
        unsafe {
            libc::close(self.0);
        }
    }
}

fn check_ifname(name: &str) -> Result<std::ffi::CString, String> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(['/', ' ', '\0']) {
        return Err(format!("bad interface name '{}'", name));
    }
    std::ffi::CString::new(name).map_err(|_| format!("bad interface name '{}'", name))
}

/// Index of interface `name`.
pub fn if_index(name: &str) -> Result<i32, String> {
    let c = check_ifname(name)?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        return Err(format!("no such interface '{}'", name));
    }
    Ok(idx as i32)
}

/// `setsockopt(2)` with a value of type `T`; the error is the errno.
pub(crate) fn setsockopt<T>(fd: i32, level: i32, opt: i32, val: &T) -> Result<(), i32> {
    // SAFETY: `val` points to a live, initialised `T` of the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            val as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// `getsockopt(2)` into a value of type `T`; the error is the errno.
pub(crate) fn getsockopt<T>(fd: i32, level: i32, opt: i32, val: &mut T) -> Result<(), i32> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `val` is a writable `T` of `len` bytes.
    let r =
        unsafe { libc::getsockopt(fd, level, opt, val as *mut T as *mut libc::c_void, &mut len) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

fn set_nonblocking(fd: i32) -> Result<(), i32> {
    // SAFETY: fcntl on a descriptor we own, with integer arguments only.
    let r = unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK)
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

fn packet_socket() -> Result<Fd, String> {
    // SAFETY: plain socket(2) call; protocol 0 receives nothing until bound.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        let e = errno();
        return Err(if e == libc::EPERM || e == libc::EACCES {
            format!(
                "cannot open AF_PACKET socket: {} (needs root or CAP_NET_RAW)",
                strerror(e)
            )
        } else {
            format!("cannot open AF_PACKET socket: {}", strerror(e))
        });
    }
    Ok(Fd(fd))
}

fn bind_packet(fd: i32, ifindex: i32, protocol: u16) -> Result<(), i32> {
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex;
    // SAFETY: `sll` is a valid sockaddr_ll and its size is passed.
    let r = unsafe {
        libc::bind(
            fd,
            &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// Fanout modes (`PACKET_FANOUT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FanoutMode {
    /// By flow hash.
    Hash = 0,
    /// Round robin.
    Lb = 1,
    /// By receiving CPU.
    Cpu = 2,
    /// By recorded receive queue.
    Queue = 5,
}

impl FanoutMode {
    /// Parses `hash`, `lb`, `cpu`, `queue`.
    pub fn parse(s: &str) -> Option<FanoutMode> {
        Some(match s.to_ascii_lowercase().as_str() {
            "hash" => FanoutMode::Hash,
            "lb" | "roundrobin" => FanoutMode::Lb,
            "cpu" => FanoutMode::Cpu,
            "queue" | "qm" => FanoutMode::Queue,
            _ => return None,
        })
    }
}

/// Receive-socket options.
#[derive(Clone, Debug)]
pub struct RxOptions {
    /// Join the interface's promiscuous mode.
    pub promisc: bool,
    /// Fanout group and mode.
    pub fanout: Option<(u16, FanoutMode)>,
    /// Also receive packets this host sends.
    pub outbound: bool,
    /// Ring blocks.
    pub blocks: usize,
    /// Block retire timeout in milliseconds.
    pub block_timeout_ms: u32,
}

/// One received frame, as described by the ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameHdr {
    /// Offset of the next frame in the block (0 for the last).
    pub next: u32,
    /// Arrival time, seconds.
    pub sec: u32,
    /// Arrival time, nanoseconds.
    pub nsec: u32,
    /// Bytes captured.
    pub snaplen: u32,
    /// Bytes on the wire.
    pub len: u32,
    /// Frame status bits.
    pub status: u32,
    /// VLAN TCI, valid if `status & TP_STATUS_VLAN_VALID`.
    pub vlan_tci: u16,
    /// Link-layer packet type (`PACKET_HOST` …).
    pub pkttype: u8,
    /// Range of the captured bytes in the block.
    pub data: std::ops::Range<usize>,
}

fn rd32(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

fn rd16(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(off..off + 2)?.try_into().ok()?))
}

/// Parses the frame header at `off` of a TPACKET_V3 `block`; `None` if anything lies outside
/// the block.
pub fn parse_frame(block: &[u8], off: usize) -> Option<FrameHdr> {
    if off.checked_add(H_MIN)? > block.len() {
        return None;
    }
    let mac = rd16(block, off + H_MAC)? as usize;
    let snaplen = rd32(block, off + H_SNAPLEN)?;
    let start = off.checked_add(mac)?;
    let end = start.checked_add(snaplen as usize)?;
    if end > block.len() {
        return None;
    }
    Some(FrameHdr {
        next: rd32(block, off + H_NEXT)?,
        sec: rd32(block, off + H_SEC)?,
        nsec: rd32(block, off + H_NSEC)?,
        snaplen,
        len: rd32(block, off + H_LEN)?,
        status: rd32(block, off + H_STATUS)?,
        vlan_tci: rd32(block, off + H_VLAN_TCI)? as u16,
        pkttype: block[off + H_SLL_PKTTYPE],
        data: start..end,
    })
}

/// The number of packets and the offset of the first one, from a block descriptor.
pub fn parse_block(block: &[u8]) -> Option<(u32, usize)> {
    Some((rd32(block, BD_NUM_PKTS)?, rd32(block, BD_FIRST)? as usize))
}

/// An AF_PACKET socket bound to one interface with a TPACKET_V3 receive ring.
pub struct RxRing {
    fd: Fd,
    map: *mut u8,
    map_len: usize,
    nblocks: usize,
    cur: usize,
    /// Packets left in the current block, and the offset of the next one.
    left: u32,
    off: usize,
    open: bool,
}

// SAFETY: the mapping is owned exclusively by this value (no aliases escape), so moving it to
// another thread is sound.
unsafe impl Send for RxRing {}

impl RxRing {
    /// Opens a receive ring on `ifname`.
    pub fn open(ifname: &str, o: &RxOptions) -> Result<RxRing, String> {
        let ifindex = if_index(ifname)?;
        let fd = packet_socket()?;
        let f = fd.raw();
        setsockopt(f, SOL_PACKET, PACKET_VERSION, &TPACKET_V3)
            .map_err(|e| format!("PACKET_VERSION: {}", strerror(e)))?;
        let nblocks = o.blocks.max(2);
        let req: [u32; 7] = [
            BLOCK_SIZE as u32,
            nblocks as u32,
            FRAME_SIZE as u32,
            (BLOCK_SIZE / FRAME_SIZE * nblocks) as u32,
            o.block_timeout_ms.max(1),
            0,
            0,
        ];
        setsockopt(f, SOL_PACKET, PACKET_RX_RING, &req)
            .map_err(|e| format!("PACKET_RX_RING: {}", strerror(e)))?;
        let map_len = BLOCK_SIZE * nblocks;
        // SAFETY: maps the ring the kernel just allocated for this socket; checked below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED,
                f,
                0,
            )
        };
        let map = if map == libc::MAP_FAILED {
            // Locked memory may be limited: retry without MAP_LOCKED.
            // SAFETY: as above.
            let m = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    map_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    f,
                    0,
                )
            };
            if m == libc::MAP_FAILED {
                return Err(format!("mmap of receive ring: {}", strerror(errno())));
            }
            m
        } else {
            map
        };
        let ring = RxRing {
            fd,
            map: map as *mut u8,
            map_len,
            nblocks,
            cur: 0,
            left: 0,
            off: 0,
            open: false,
        };
        if !o.outbound {
            // Older kernels lack it; outgoing frames are then filtered by packet type.
            let _ = setsockopt(f, SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32);
        }
        bind_packet(f, ifindex, ETH_P_ALL)
            .map_err(|e| format!("bind to '{}': {}", ifname, strerror(e)))?;
        if o.promisc {
            let mreq = libc::packet_mreq {
                mr_ifindex: ifindex,
                mr_type: PACKET_MR_PROMISC,
                mr_alen: 0,
                mr_address: [0; 8],
            };
            setsockopt(f, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq)
                .map_err(|e| format!("promiscuous mode on '{}': {}", ifname, strerror(e)))?;
        }
        if let Some((group, mode)) = o.fanout {
            let v: i32 = group as i32 | ((mode as i32) << 16);
            setsockopt(f, SOL_PACKET, PACKET_FANOUT, &v)
                .map_err(|e| format!("PACKET_FANOUT group {}: {}", group, strerror(e)))?;
        }
        set_nonblocking(f).map_err(|e| format!("O_NONBLOCK: {}", strerror(e)))?;
        Ok(ring)
    }

    /// The socket descriptor (to watch for readability).
    pub fn fd(&self) -> i32 {
        self.fd.raw()
    }

    fn block_ptr(&self, i: usize) -> *mut u8 {
        // SAFETY: `i < nblocks`, so the offset stays inside the mapping.
        unsafe { self.map.add(i * BLOCK_SIZE) }
    }

    fn block_status(&self, i: usize) -> u32 {
        // SAFETY: the status word lies inside block `i` of the live mapping and is aligned to 4;
        // the kernel writes it concurrently, hence the volatile read.
        let s = unsafe { std::ptr::read_volatile(self.block_ptr(i).add(BD_STATUS) as *const u32) };
        fence(Ordering::Acquire);
        s
    }

    fn release_block(&mut self, i: usize) {
        fence(Ordering::Release);
        // SAFETY: as in `block_status`; writing TP_STATUS_KERNEL hands the block back.
        unsafe {
            std::ptr::write_volatile(
                self.block_ptr(i).add(BD_STATUS) as *mut u32,
                TP_STATUS_KERNEL,
            )
        };
    }

    /// True if a block is ready for user space.
    pub fn ready(&self) -> bool {
        self.open || self.block_status(self.cur) & TP_STATUS_USER != 0
    }

    /// Visits up to `max` received frames with `f(header, bytes)`; returns how many it visited.
    /// A frame whose header is corrupt ends its block (counted by the caller through the
    /// returned header list being short; it cannot happen with a sane kernel).
    pub fn recv(&mut self, max: usize, mut f: impl FnMut(&FrameHdr, &[u8])) -> usize {
        let mut n = 0;
        while n < max {
            if !self.open {
                if self.block_status(self.cur) & TP_STATUS_USER == 0 {
                    break;
                }
                let (num, first) = parse_block(self.block()).unwrap_or((0, 0));
                self.open = true;
                self.left = num;
                self.off = first;
            }
            if self.left == 0 {
                self.open = false;
                let c = self.cur;
                self.release_block(c);
                self.cur = (self.cur + 1) % self.nblocks;
                continue;
            }
            let block = self.block();
            match parse_frame(block, self.off) {
                Some(h) => {
                    f(&h, &block[h.data.clone()]);
                    n += 1;
                    self.left -= 1;
                    if h.next == 0 {
                        self.left = 0;
                    }
                    self.off += h.next as usize;
                }
                None => self.left = 0,
            }
        }
        n
    }

    fn block(&self) -> &[u8] {
        // SAFETY: block `cur` is owned by user space (TP_STATUS_USER seen with acquire ordering)
        // until `release_block`, so the kernel does not write it while this slice lives; the
        // slice stays inside the mapping.
        unsafe { std::slice::from_raw_parts(self.block_ptr(self.cur), BLOCK_SIZE) }
    }

    /// Kernel statistics since the last call: (packets, drops).
    pub fn stats(&self) -> (u64, u64) {
        let mut st = [0u32; 3];
        // struct tpacket_stats_v3: packets, drops, freeze count.
        if getsockopt(self.fd.raw(), SOL_PACKET, PACKET_STATISTICS, &mut st).is_err() {
            (0, 0)
        } else {
            (st[0] as u64, st[1] as u64)
        }
    }

    /// Takes the pending socket error (`SO_ERROR`), 0 if none.
    pub fn take_error(&self) -> i32 {
        take_error(self.fd.raw())
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `open`; no slice of it outlives `self`.
        unsafe {
            libc::munmap(self.map as *mut libc::c_void, self.map_len);
        }
    }
}

/// Takes the pending socket error (`SO_ERROR`) of `fd`, 0 if none.
pub(crate) fn take_error(fd: i32) -> i32 {
    let mut e: i32 = 0;
    match getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut e) {
        Ok(()) => e,
        Err(_) => 0,
    }
}

/// An AF_PACKET socket that transmits on one interface.
pub struct TxSocket {
    fd: Fd,
}

impl TxSocket {
    /// Opens a transmit socket on `ifname`, bypassing the qdisc if `bypass`.
    pub fn open(ifname: &str, bypass: bool) -> Result<TxSocket, String> {
        let ifindex = if_index(ifname)?;
        let fd = packet_socket()?;
        let f = fd.raw();
        // Bound with protocol 0: this socket never receives.
        bind_packet(f, ifindex, 0).map_err(|e| format!("bind to '{}': {}", ifname, strerror(e)))?;
        if bypass {
            let _ = setsockopt(f, SOL_PACKET, PACKET_QDISC_BYPASS, &1i32);
        }
        let _ = setsockopt(f, libc::SOL_SOCKET, libc::SO_SNDBUF, &(4i32 << 20));
        set_nonblocking(f).map_err(|e| format!("O_NONBLOCK: {}", strerror(e)))?;
        Ok(TxSocket { fd })
    }

    /// Sends `frames` with one `sendmmsg`: `Ok(n)` frames sent (a prefix), or the error of the
    /// first frame.
    pub fn send(&mut self, frames: &[&[u8]]) -> Result<usize, i32> {
        const N: usize = 64;
        let n = frames.len().min(N);
        if n == 0 {
            return Ok(0);
        }
        // SAFETY: iovec and mmsghdr are plain old data; all-zero is valid.
        let mut iov: [libc::iovec; N] = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut msgs: [libc::mmsghdr; N] = unsafe { std::mem::zeroed() };
        for i in 0..n {
            iov[i].iov_base = frames[i].as_ptr() as *mut libc::c_void;
            iov[i].iov_len = frames[i].len();
            msgs[i].msg_hdr.msg_iov = &mut iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        // SAFETY: `msgs[..n]` point to `iov[..n]`, which point to the frames; all outlive the
        // call and the kernel only reads the frame bytes.
        let r = unsafe {
            libc::sendmmsg(
                self.fd.raw(),
                msgs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_DONTWAIT,
            )
        };
        if r < 0 {
            Err(errno())
        } else {
            Ok(r as usize)
        }
    }

    /// Takes the pending socket error, 0 if none.
    pub fn take_error(&self) -> i32 {
        take_error(self.fd.raw())
    }
}

/// Opens a TUN (`tap == false`) or TAP device called `name` (a kernel-chosen name if empty,
/// e.g. `tun%d`), without packet information, non-blocking. Returns the descriptor and the
/// device's name.
pub fn open_tun(name: &str, tap: bool) -> Result<(Fd, String), String> {
    let pattern = if name.is_empty() {
        if tap {
            "tap%d"
        } else {
            "tun%d"
        }
    } else {
        name
    };
    check_ifname(pattern)?;
    let path = c"/dev/net/tun";
    // SAFETY: `path` is a valid NUL-terminated string.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!("cannot open /dev/net/tun: {}", strerror(errno())));
    }
    let fd = Fd(fd);
    // SAFETY: ifreq is plain old data; all-zero is valid.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(pattern.bytes()) {
        *d = s as libc::c_char;
    }
    ifr.ifr_ifru.ifru_flags =
        ((if tap { libc::IFF_TAP } else { libc::IFF_TUN }) | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF reads and writes the `ifreq` we pass, which lives across the call.
    let r = unsafe { libc::ioctl(fd.raw(), libc::TUNSETIFF as _, &mut ifr as *mut libc::ifreq) };
    if r < 0 {
        return Err(format!("TUNSETIFF '{}': {}", pattern, strerror(errno())));
    }
    let actual: Vec<u8> = ifr
        .ifr_name
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    set_nonblocking(fd.raw()).map_err(|e| format!("O_NONBLOCK: {}", strerror(e)))?;
    Ok((fd, String::from_utf8_lossy(&actual).into_owned()))
}

/// A second descriptor for the open file `raw` (owned by someone else).
pub fn dup_fd(raw: i32) -> Result<Fd, String> {
    // SAFETY: dup only reads the descriptor number; an invalid one makes it fail with EBADF.
    let fd = unsafe { libc::fcntl(raw, libc::F_DUPFD_CLOEXEC, 0) };
    if fd < 0 {
        Err(format!("dup: {}", strerror(errno())))
    } else {
        Ok(Fd(fd))
    }
}

/// Asks the kernel about interface `name` with ioctl `req` on an AF_INET socket (which sees
/// the calling thread's network namespace); the filled-in request.
fn ifreq(name: &str, req: libc::c_ulong) -> Result<libc::ifreq, String> {
    check_ifname(name)?;
    // SAFETY: socket takes no pointers; a failure returns -1.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(format!("socket: {}", strerror(errno())));
    }
    let fd = Fd(raw);
    // SAFETY: ifreq is plain old data, for which all zeroes is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    // check_ifname bounds the name below IFNAMSIZ, so the zeroed tail terminates it.
    for (d, b) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = b as libc::c_char;
    }
    // SAFETY: `ifr` is a valid, named ifreq that outlives the call; the kernel writes only
    // within it.
    if unsafe { libc::ioctl(fd.raw(), req, &mut ifr) } < 0 {
        return Err(format!("{name}: {}", strerror(errno())));
    }
    Ok(ifr)
}

/// The Ethernet address of interface `name`.
pub fn if_ether(name: &str) -> Result<[u8; 6], String> {
    let ifr = ifreq(name, libc::SIOCGIFHWADDR)?;
    // SAFETY: after SIOCGIFHWADDR the union holds the hardware address as a sockaddr.
    let sa = unsafe { ifr.ifr_ifru.ifru_hwaddr };
    let mut mac = [0u8; 6];
    for (m, b) in mac.iter_mut().zip(sa.sa_data.iter()) {
        *m = *b as u8;
    }
    Ok(mac)
}

/// The IPv4 address and prefix length of interface `name`.
pub fn if_ipv4(name: &str) -> Result<(Ipv4Addr, u8), String> {
    let get = |req: libc::c_ulong| -> Result<u32, String> {
        let ifr = ifreq(name, req)?;
        // SAFETY: after SIOCGIFADDR or SIOCGIFNETMASK on an AF_INET socket the union holds a
        // sockaddr_in, which fits in it (both are 16 bytes).
        let sin = unsafe {
            std::ptr::read_unaligned(
                &ifr.ifr_ifru.ifru_addr as *const libc::sockaddr as *const libc::sockaddr_in,
            )
        };
        Ok(u32::from_be(sin.sin_addr.s_addr))
    };
    let addr = get(libc::SIOCGIFADDR)?;
    let mask = get(libc::SIOCGIFNETMASK)?;
    Ok((Ipv4Addr::from(addr), mask.count_ones() as u8))
}

/// The default gateway through interface `name`, from the kernel's main routing table.
pub fn default_gateway(name: &str) -> Option<Ipv4Addr> {
    // The calling thread's network namespace (a thread may have left its process's).
    let table = std::fs::read_to_string("/proc/thread-self/net/route").ok()?;
    table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let hex = |i: usize| f.get(i).and_then(|v| u32::from_str_radix(v, 16).ok());
        // Destination 0 and mask 0: the default route. The kernel prints the addresses'
        // bytes as native integers.
        (f.first() == Some(&name) && hex(1) == Some(0) && hex(7) == Some(0))
            .then(|| hex(2))
            .flatten()
            .map(|g| Ipv4Addr::from(g.to_ne_bytes()))
    })
}

/// Reads one packet from `fd` into `buf`: `Ok(len)`, or the error (`EAGAIN` when empty).
pub fn read_fd(fd: &Fd, buf: &mut [u8]) -> Result<usize, i32> {
    // SAFETY: `buf` is a writable buffer of `buf.len()` bytes.
    let r = unsafe { libc::read(fd.raw(), buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as usize)
    }
}

/// Writes one packet to `fd`.
pub fn write_fd(fd: &Fd, buf: &[u8]) -> Result<usize, i32> {
    // SAFETY: `buf` is a readable buffer of `buf.len()` bytes.
    let r = unsafe { libc::write(fd.raw(), buf.as_ptr() as *const libc::c_void, buf.len()) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(block: &mut [u8], off: usize, next: u32, data: &[u8], pkttype: u8) {
        let mac = 64u16;
        block[off + H_NEXT..off + H_NEXT + 4].copy_from_slice(&next.to_ne_bytes());
        block[off + H_SEC..off + H_SEC + 4].copy_from_slice(&7u32.to_ne_bytes());
        block[off + H_NSEC..off + H_NSEC + 4].copy_from_slice(&9u32.to_ne_bytes());
        let l = (data.len() as u32).to_ne_bytes();
        block[off + H_SNAPLEN..off + H_SNAPLEN + 4].copy_from_slice(&l);
        block[off + H_LEN..off + H_LEN + 4].copy_from_slice(&l);
        block[off + H_MAC..off + H_MAC + 2].copy_from_slice(&mac.to_ne_bytes());
        block[off + H_SLL_PKTTYPE] = pkttype;
        let s = off + mac as usize;
        block[s..s + data.len()].copy_from_slice(data);
    }

    #[test]
    fn parses_frames_and_rejects_out_of_bounds() {
        let mut b = vec![0u8; 512];
        b[BD_NUM_PKTS..BD_NUM_PKTS + 4].copy_from_slice(&2u32.to_ne_bytes());
        b[BD_FIRST..BD_FIRST + 4].copy_from_slice(&48u32.to_ne_bytes());
        frame(&mut b, 48, 128, &[1, 2, 3], 0);
        frame(&mut b, 176, 0, &[4; 20], 3);
        assert_eq!(parse_block(&b), Some((2, 48)));
        let h = parse_frame(&b, 48).unwrap();
        assert_eq!(&b[h.data.clone()], &[1, 2, 3]);
        assert_eq!((h.sec, h.nsec, h.next, h.pkttype), (7, 9, 128, 0));
        let h = parse_frame(&b, 176).unwrap();
        assert_eq!(h.pkttype, 3);
        assert_eq!(h.data.len(), 20);
        // Past the end, or a capture length that overruns the block.
        assert!(parse_frame(&b, 500).is_none());
        assert!(parse_frame(&b, usize::MAX - 3).is_none());
        b[176 + H_SNAPLEN..176 + H_SNAPLEN + 4].copy_from_slice(&10_000u32.to_ne_bytes());
        assert!(parse_frame(&b, 176).is_none());
    }

    #[test]
    fn interface_names_are_checked() {
        assert!(if_index("").is_err());
        assert!(if_index("a-name-that-is-far-too-long").is_err());
        assert!(if_index("sluice-nonexistent0").is_err());
        assert!(if_index("lo").is_ok());
        assert_eq!(FanoutMode::parse("HASH"), Some(FanoutMode::Hash));
        assert_eq!(FanoutMode::parse("x"), None);
    }
}
