//! ToHost — hands packets to the host's network stack (Click's kernel element, through TAP)
//!
//! Synopsis: `ToHost([DEVNAME, *keywords* TYPE, SNIFFERS, QUIET, ALLOW_NONEXISTENT])`,
//! `ToHostSniffers([DEVNAME, *keywords* TYPE, ...])`
//!
//! Ports: 1 push input, no outputs. Click's kernel ToHost gives packets to Linux as if they
//! had arrived on a device; a user-level router reaches the host stack through a TUN/TAP
//! device instead:
//! - If the configuration has a FromHost (or KernelTap/KernelTun) whose DEVNAME equals this
//!   DEVNAME, packets are written into that device unchanged (Click's user-level ToHost).
//! - Otherwise ToHost opens a device of its own, up and without addresses: a TAP
//!   (`tohost%d`) for TYPE ETHER, a TUN (`tohost%d`) for TYPE IP. Unicast Ethernet frames get
//!   the TAP's own address as destination, so the host stack takes them as addressed to it
//!   (the kernel element sets the packet type to "host" the same way); IP packets are for any
//!   of the host's addresses.
//! - ToHostSniffers (or SNIFFERS true) writes frames unchanged into its own TAP (`sniff%d`),
//!   so packet sniffers (tcpdump on that device) see them but the host stack, which has no
//!   address there and sees frames not addressed to it, does not take them. With TYPE IP the
//!   device is a TUN, whose packets the host stack may take as well.
//!
//! Packets that cannot be written (device gone or not open yet, queue full, TYPE ETHER
//! frames shorter than 14 bytes) are dropped and counted.
//!
//! Arguments:
//! - `DEVNAME` (string): the FromHost device to write into; without a matching FromHost it
//!   only names the element's purpose.
//! - `TYPE` (`ETHER`, default, or `IP`): what the packets start with.
//! - `SNIFFERS` (boolean, default false; true for ToHostSniffers).
//! - `QUIET`, `ALLOW_NONEXISTENT` (booleans): accepted and ignored.
//!
//! Handlers: `count` (r, packets written), `drops` (r), `drop_details` (r, drops by reason),
//! `dev_name` (r, the device written).
//!
//! Example: `c :: Classifier(12/0806, -); ... c[0] -> t :: Tee -> ToHost; t[1] -> ...`

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Table, Timestamp};
use sluice_lang::args::{Args, Word};

use super::kernel_tun::KernelTun;
use super::sys::{self, Fd};

drop_reasons! {
    /// Why ToHost drops a packet.
    enum Reason {
        /// The device is gone or not open yet.
        NotOpen => "device not open",
        /// A TYPE ETHER frame shorter than an Ethernet header.
        Runt => "shorter than an Ethernet header",
        /// Writing to the device failed (queue full, device gone).
        WriteFailed => "write failed",
    }
}

/// The ToHost element (also ToHostSniffers).
#[derive(Default)]
pub struct ToHost {
    devname: String,
    ip: bool,
    sniffers: bool,
    /// The FromHost (or KernelTap/KernelTun) element whose device this writes into.
    peer: Option<usize>,
    fd: Option<Fd>,
    /// Destination written into unicast frames (own TAP of a non-sniffer ToHost).
    host_mac: Option<[u8; 6]>,
    name: String,
    count: u64,
    drops: Drops<Reason>,
}

impl ToHost {
    fn sniffers() -> ToHost {
        ToHost {
            sniffers: true,
            ..ToHost::default()
        }
    }

    /// Takes a descriptor of the peer's device once the peer has opened it (asked while the
    /// peer is not running: at initialisation, else from a timer).
    fn attach(&mut self, cx: &Cx) {
        let Some(peer) = self.peer else { return };
        let Some(k) = cx
            .element(peer)
            .and_then(|e| e.as_any().downcast_ref::<KernelTun>())
        else {
            return;
        };
        if let Some(raw) = k.device_fd() {
            self.fd = sys::dup_fd(raw).ok();
        }
    }
}

impl Element for ToHost {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.devname = args
            .read_p::<Word>("DEVNAME")?
            .map(|w| w.0)
            .unwrap_or_default();
        if let Some(t) = args.read::<Word>("TYPE")? {
            match t.0.as_str() {
                "ETHER" => self.ip = false,
                "IP" => self.ip = true,
                _ => {
                    args.error("TYPE: expected ETHER or IP");
                    return Err(());
                }
            }
        }
        if let Some(s) = args.read("SNIFFERS")? {
            self.sniffers = s;
        }
        let _quiet: Option<bool> = args.read("QUIET")?;
        let _nonexistent: Option<bool> = args.read("ALLOW_NONEXISTENT")?;
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if !self.devname.is_empty() && !self.sniffers {
            self.peer = (0..cx.nelements()).find(|&e| {
                cx.element(e)
                    .and_then(|x| x.as_any().downcast_ref::<KernelTun>())
                    .is_some_and(|k| k.devname() == self.devname)
            });
        }
        if self.peer.is_some() {
            self.name = self.devname.clone();
            self.attach(cx);
            if self.fd.is_none() {
                cx.schedule_after(0, Timestamp(0));
            }
            return Ok(());
        }
        let class = if self.sniffers {
            "ToHostSniffers"
        } else {
            "ToHost"
        };
        let pattern = if self.sniffers { "sniff%d" } else { "tohost%d" };
        let (fd, name) =
            sys::open_tun(pattern, !self.ip).map_err(|e| format!("{}: {}", class, e))?;
        let up = std::process::Command::new("ip")
            .args(["link", "set", "dev", &name, "up"])
            .output()
            .map_err(|e| format!("{}: cannot run 'ip': {}", class, e))?;
        if !up.status.success() {
            return Err(format!(
                "{}: 'ip link set dev {} up' failed: {}",
                class,
                name,
                String::from_utf8_lossy(&up.stderr).trim()
            ));
        }
        if !self.ip && !self.sniffers {
            self.host_mac = Some(sys::if_ether(&name).map_err(|e| format!("{}: {}", class, e))?);
        }
        self.fd = Some(fd);
        self.name = name;
        Ok(())
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.attach(cx);
        if self.fd.is_none() {
            cx.schedule_after(0, Timestamp(1_000_000));
        }
    }

    fn push(&mut self, _port: usize, batch: Batch, _cx: &mut Cx) {
        let Some(fd) = &self.fd else {
            self.drops.add(Reason::NotOpen, batch.len() as u64);
            return;
        };
        for mut p in batch {
            if !self.ip && p.len() < 14 {
                self.drops.count(Reason::Runt);
                continue;
            }
            if let Some(mac) = self.host_mac {
                if p.data()[0] & 1 == 0 {
                    p.data_mut()[..6].copy_from_slice(&mac);
                }
            }
            match sys::write_fd(fd, p.data()) {
                Ok(_) => self.count += 1,
                Err(_) => self.drops.count(Reason::WriteFailed),
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .drops(|e| &e.drops)
            .read("dev_name", |e| e.name.clone())
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ToHost",
    ports: "1/0",
    processing: "h/h",
    flow: "",
    source: include_str!("to_host.rs"),
    make: || Box::new(ToHost::default()),
};

/// `ToHostSniffers`: ToHost for packet sniffers only.
pub const SNIFFERS_CLASS: ElementClass = ElementClass {
    name: "ToHostSniffers",
    make: || Box::new(ToHost::sniffers()),
    ..CLASS
};
