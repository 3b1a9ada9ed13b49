//! KernelTun — the host's network stack through a TUN or TAP device (also KernelTap, FromHost)
//!
//! Synopsis: `KernelTun(ADDR/MASK [, GATEWAY, DEVNAME, MTU, BURST, HEADROOM])`,
//! `KernelTap(ADDR/MASK [, GATEWAY, DEVNAME, ETHER, MTU, BURST, HEADROOM])`,
//! `FromHost(DEVNAME [, DST, *keywords* GATEWAY, ETHER, MTU, TYPE, BURST, HEADROOM])`
//!
//! Ports: at most 1 input (agnostic), 1 or 2 outputs (push). The element creates a TUN
//! (KernelTun, IP packets) or TAP (KernelTap, Ethernet frames) device through `/dev/net/tun`,
//! gives the host side the address ADDR with netmask MASK (so the kernel routes that subnet to
//! the device), brings it up, and, if GATEWAY is given, installs a default route through it.
//! The device disappears when the router stops.
//!
//! Packets arriving on the input are written to the device, so the host stack receives them
//! (e.g. packets addressed to the router itself). A push input writes at once; a pull input
//! has a task that pulls whenever an upstream queue has packets. Packets the host sends into
//! the device are pushed out of output 0: for KernelTun, IPv4 packets with the network header
//! at offset 0; for KernelTap, Ethernet frames with the MAC header at 0 and the network header
//! at 14 for IP. KernelTun sends anything that is not a plausible IPv4 packet (IPv6, too
//! short) to output 1, or drops and counts it if there is no output 1. KernelTap does the
//! same with frames shorter than an Ethernet header. The device descriptor is watched for
//! readability: an idle element uses no CPU.
//!
//! FromHost is Click's name for the same device, configured Click's way: DEVNAME is the
//! device's name (mandatory), DST (or PREFIX) the optional ADDR/MASK or AddressInfo name,
//! TYPE `ETHER` (default, TAP) or `IP` (TUN); it has no input (ToHost with the same DEVNAME writes into its device)
//! and accepts Click's CAPACITY, CLEAR_ANNO, QUIET and ALLOW_NONEXISTENT, which change nothing.
//!
//! On Linux a TAP device only accepts frames addressed to its own Ethernet address: give it
//! one with ETHER and use that address as the destination of frames sent to it. The host also
//! answers ARP for ADDR on every other interface, including those Sluice reads with
//! FromDevice, racing the answer that comes through the router: set
//! `net.ipv4.conf.all.arp_ignore=1` so that it answers only on the device.
//!
//! Arguments:
//! - `ADDR/MASK` (IP prefix, mandatory): the host side's address and netmask.
//! - `GATEWAY` (IP address): install a default route through this next hop.
//! - `DEVNAME` (string, default `tun%d` / `tap%d`): device name.
//! - `ETHER` (Ethernet address, KernelTap): the device's Ethernet address.
//! - `MTU` (integer): the device's MTU.
//! - `BURST` (integer, default 32): packets read or pulled per run.
//! - `HEADROOM` (integer): accepted for Click compatibility (packets always have headroom).
//!
//! Handlers: `count` (r, packets from the host), `write_count` (r, packets to the host),
//! `drops` (r), `drop_details` (r: packets written while the device is not open, failed
//! writes, bad packets without output 1), `write_errors` (r), `bad` (r, packets sent to
//! output 1 or dropped as bad), `dev_name` (r), `reset_counts` (w).
//!
//! Example (host stack reaches the router's interfaces through a tap):
//! ```text
//! tap :: KernelTap(198.18.0.1/24, ETHER 02:00:00:00:00:01);
//! FromDevice(veth0) -> Queue -> tap -> Queue -> ToDevice(veth0);
//! ```

use std::process::Command;

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Packet, PullNotes, Table, BATCH_MAX};
use sluice_lang::args::{Args, Word};
use std::net::Ipv4Addr;

use sluice_wire::EtherAddr;

use super::from_device::set_offsets;
use super::sys::{self, Fd};

/// Largest packet read from the device.
const READ_MAX: usize = 65536;

drop_reasons! {
    /// Why KernelTun drops a packet.
    enum Reason {
        /// Written before the device was open.
        NotOpen => "device not open",
        /// Writing to the device failed.
        WriteFailed => "write failed",
        /// Unfit for output 0, and there is no output 1.
        Bad => "bad packet from the host",
    }
}

/// The KernelTun and KernelTap elements (also FromHost).
pub struct KernelTun {
    tap: bool,
    /// Configured with FromHost's arguments.
    host: bool,
    prefix: Option<(Ipv4Addr, u8)>,
    gateway: Option<std::net::Ipv4Addr>,
    devname: String,
    ether: Option<EtherAddr>,
    mtu: Option<u32>,
    burst: usize,
    fd: Option<Fd>,
    name: String,
    buf: Vec<u8>,
    notifiers: PullNotes,
    pull_input: bool,
    count: u64,
    write_count: u64,
    drops: Drops<Reason>,
    write_errors: u64,
    bad: u64,
}

impl KernelTun {
    fn new(tap: bool) -> KernelTun {
        KernelTun {
            tap,
            host: false,
            prefix: None,
            gateway: None,
            devname: String::new(),
            ether: None,
            mtu: None,
            burst: BATCH_MAX,
            fd: None,
            name: String::new(),
            buf: Vec::new(),
            notifiers: PullNotes::default(),
            pull_input: false,
            count: 0,
            write_count: 0,
            drops: Drops::default(),
            write_errors: 0,
            bad: 0,
        }
    }

    /// The device name asked for in the configuration (may be a pattern such as `tap%d`).
    pub(super) fn devname(&self) -> &str {
        &self.devname
    }

    /// The open device's descriptor, once initialised.
    pub(super) fn device_fd(&self) -> Option<i32> {
        self.fd.as_ref().map(Fd::raw)
    }

    /// Reads FromHost's arguments: `DEVNAME [, DST]` and its keywords.
    fn configure_from_host(&mut self, args: &mut Args) -> Result<(), ()> {
        self.devname = args.read_mp::<Word>("DEVNAME")?.0;
        let dst = match args.read_p::<String>("DST")? {
            Some(d) => Some(d),
            None => args.read::<String>("PREFIX")?,
        };
        if let Some(d) = dst {
            self.prefix = Some(parse_addr_mask(&d).map_err(|e| args.error(format!("DST: {}", e)))?);
        }
        self.gateway = args.read("GATEWAY")?;
        self.ether = args.read("ETHER")?;
        self.mtu = args.read("MTU")?;
        if let Some(t) = args.read::<Word>("TYPE")? {
            match t.0.as_str() {
                "ETHER" => self.tap = true,
                "IP" => self.tap = false,
                _ => {
                    args.error("TYPE: expected ETHER or IP");
                    return Err(());
                }
            }
        }
        if let Some(b) = args.read::<usize>("BURST")? {
            self.burst = b.clamp(1, BATCH_MAX);
        }
        let _headroom: Option<usize> = args.read("HEADROOM")?;
        let _capacity: Option<usize> = args.read("CAPACITY")?;
        let _clear: Option<bool> = args.read("CLEAR_ANNO")?;
        let _quiet: Option<bool> = args.read("QUIET")?;
        let _nonexistent: Option<bool> = args.read("ALLOW_NONEXISTENT")?;
        if self.ether.is_some() && !self.tap {
            args.error("ETHER: only TYPE ETHER has an Ethernet address");
            return Err(());
        }
        Ok(())
    }

    fn class(&self) -> &'static str {
        if self.host {
            "FromHost"
        } else if self.tap {
            "KernelTap"
        } else {
            "KernelTun"
        }
    }

    fn write_batch(&mut self, batch: Batch) {
        let Some(fd) = &self.fd else {
            self.drops.add(Reason::NotOpen, batch.len() as u64);
            return;
        };
        for p in batch {
            match sys::write_fd(fd, p.data()) {
                Ok(_) => self.write_count += 1,
                Err(_) => {
                    self.write_errors += 1;
                    self.drops.count(Reason::WriteFailed);
                }
            }
        }
    }

    /// True if the packet read from the device is fit for output 0.
    fn good(&self, data: &[u8]) -> bool {
        if self.tap {
            data.len() >= 14
        } else {
            data.len() >= 20 && data[0] >> 4 == 4
        }
    }
}

/// Parses `ADDR/LEN`, `ADDR/MASK`, `ADDR MASK` or an AddressInfo name, keeping the host bits
/// of ADDR.
fn parse_addr_mask(s: &str) -> Result<(Ipv4Addr, u8), String> {
    let s = s.trim();
    if let Some(net) = sluice_lang::names::lookup_net(s) {
        return Ok(net);
    }
    let (a, m) = match s.split_once('/') {
        Some(x) => x,
        None => s
            .split_once(char::is_whitespace)
            .ok_or_else(|| "expected ADDR/MASK".to_string())?,
    };
    let addr: Ipv4Addr = a.trim().parse().map_err(|_| "expected IP address/mask")?;
    let m = m.trim();
    let len = if let Ok(l) = m.parse::<u8>() {
        l
    } else {
        let mask: Ipv4Addr = m.parse().map_err(|_| "expected prefix length or netmask")?;
        let v = u32::from(mask);
        if v.leading_ones() + v.trailing_zeros() != 32 {
            return Err("netmask is not contiguous".into());
        }
        v.leading_ones() as u8
    };
    if len > 32 {
        return Err("prefix length above 32".into());
    }
    Ok((addr, len))
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run 'ip': {}", e))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "'ip {}' failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Element for KernelTun {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if self.host {
            return self.configure_from_host(args);
        }
        let a: String = args.read_mp("ADDR")?;
        match parse_addr_mask(&a) {
            Ok(p) => self.prefix = Some(p),
            Err(e) => {
                args.error(format!("ADDR: {}", e));
                return Err(());
            }
        }
        self.gateway = args.read_p("GATEWAY")?;
        self.devname = args
            .read::<Word>("DEVNAME")?
            .map(|w| w.0)
            .unwrap_or_default();
        self.ether = args.read("ETHER")?;
        self.mtu = args.read("MTU")?;
        self.burst = args
            .read::<usize>("BURST")?
            .unwrap_or(BATCH_MAX)
            .clamp(1, BATCH_MAX);
        let _headroom: Option<usize> = args.read("HEADROOM")?;
        let _ignore: Option<bool> = args.read("IGNORE_QUEUE_OVERFLOWS")?;
        if self.ether.is_some() && !self.tap {
            args.error("ETHER: only KernelTap has an Ethernet address");
            return Err(());
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let class = self.class();
        let what = |e: String| {
            let d = if self.devname.is_empty() {
                String::new()
            } else {
                self.devname.clone()
            };
            format!("{}({}): {}", class, d, e)
        };
        let (fd, name) = sys::open_tun(&self.devname, self.tap).map_err(what)?;
        let setup = || -> Result<(), String> {
            if let Some(e) = self.ether {
                let mac: Vec<String> = e.0.iter().map(|b| format!("{:02x}", b)).collect();
                ip(&["link", "set", "dev", &name, "address", &mac.join(":")])?;
            }
            if let Some(m) = self.mtu {
                ip(&["link", "set", "dev", &name, "mtu", &m.to_string()])?;
            }
            if let Some(p) = &self.prefix {
                let a = format!("{}/{}", p.0, p.1);
                ip(&["addr", "add", &a, "dev", &name])?;
            }
            ip(&["link", "set", "dev", &name, "up"])?;
            if let Some(g) = self.gateway {
                ip(&[
                    "route",
                    "replace",
                    "default",
                    "via",
                    &g.to_string(),
                    "dev",
                    &name,
                ])?;
            }
            Ok(())
        };
        setup().map_err(|e| format!("{}({}): {}", class, name, e))?;
        cx.add_select(fd.raw());
        self.fd = Some(fd);
        self.name = name;
        self.buf = vec![0u8; READ_MAX];
        if cx.ninputs() > 0 && !cx.input_is_push(0) {
            self.pull_input = true;
            self.notifiers = cx.add_pull_task(0, true);
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, _cx: &mut Cx) {
        self.write_batch(batch);
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.pull_input {
            return false;
        }
        let b = cx.pull(0, self.burst);
        let got = !b.is_empty();
        self.write_batch(b);
        cx.reschedule_pull(&self.notifiers, got);
        got
    }

    fn selected(&mut self, _fd: i32, cx: &mut Cx) {
        let Some(fd) = &self.fd else { return };
        let mut good = Batch::new();
        let mut bad = Batch::new();
        let has_bad_port = cx.noutputs() > 1;
        for _ in 0..self.burst {
            let n = match sys::read_fd(fd, &mut self.buf) {
                Ok(n) => n,
                Err(_) => break,
            };
            let data = &self.buf[..n];
            let ok = self.good(data);
            let mut p = Packet::from_bytes(data);
            if self.tap {
                set_offsets(&mut p);
            } else if ok {
                p.set_network_offset(0);
            }
            p.anno_mut().timestamp = cx.now();
            if ok {
                self.count += 1;
                let _ = good.push(p);
            } else {
                self.bad += 1;
                if has_bad_port {
                    let _ = bad.push(p);
                } else {
                    self.drops.count(Reason::Bad);
                }
            }
        }
        if !good.is_empty() {
            cx.push(0, good);
        }
        if !bad.is_empty() {
            cx.push(1, bad);
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .read("write_count", |e| e.write_count)
            .drops(|e| &e.drops)
            .read("write_errors", |e| e.write_errors)
            .read("bad", |e| e.bad)
            .read("dev_name", |e| e.name.clone())
            .action("reset_counts", |e| {
                e.count = 0;
                e.write_count = 0;
                e.drops.reset();
                e.write_errors = 0;
                e.bad = 0;
            })
            .into()
    }
}

/// KernelTun class description.
pub const TUN_CLASS: ElementClass = ElementClass {
    name: "KernelTun",
    ports: "0-1/1-2",
    processing: "a/h",
    flow: "x/y",
    source: include_str!("kernel_tun.rs"),
    make: || Box::new(KernelTun::new(false)),
};

/// KernelTap class description.
pub const TAP_CLASS: ElementClass = ElementClass {
    name: "KernelTap",
    ports: "0-1/1-2",
    processing: "a/h",
    flow: "x/y",
    source: include_str!("kernel_tun.rs"),
    make: || Box::new(KernelTun::new(true)),
};

/// FromHost class description: Click's host-interface element, a TAP (TYPE ETHER) or TUN
/// (TYPE IP) device named DEVNAME whose frames from the host leave on output 0; ToHost with
/// the same DEVNAME writes into it.
pub const FROM_HOST_CLASS: ElementClass = ElementClass {
    name: "FromHost",
    ports: "0/1-2",
    processing: "h/h",
    flow: "x/y",
    source: include_str!("kernel_tun.rs"),
    make: || {
        let mut k = KernelTun::new(true);
        k.host = true;
        Box::new(k)
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_keep_host_bits() {
        let a = |s: &str| parse_addr_mask(s);
        assert_eq!(a("198.18.0.1/24"), Ok((Ipv4Addr::new(198, 18, 0, 1), 24)));
        assert_eq!(
            a("198.18.0.1/255.255.0.0"),
            Ok((Ipv4Addr::new(198, 18, 0, 1), 16))
        );
        assert_eq!(a("198.18.0.1 255.255.255.252").unwrap().1, 30);
        assert!(a("198.18.0.1").is_err());
        assert!(a("198.18.0.1/33").is_err());
        assert!(a("198.18.0.1/255.0.255.0").is_err());
        let mut e = sluice_lang::names::AddressEntry::default();
        assert!(e.add_word("198.18.0.1/15"));
        sluice_lang::names::define("TEST_NETWORK", e);
        assert_eq!(a("TEST_NETWORK"), Ok((Ipv4Addr::new(198, 18, 0, 1), 15)));
    }
}
