//! PollDevice — reads packets from a network interface by polling (Click's kernel element)
//!
//! Synopsis: `PollDevice(DEVNAME [, BURST, *keywords* PROMISC, TIMESTAMP, QUIET, HEADROOM,
//! LENGTH, ALLOW_NONEXISTENT, UP_CALL, DOWN_CALL])`
//!
//! Ports: no inputs, 1 output (push). Click's Linux-kernel PollDevice polls a device driver
//! instead of taking interrupts; at user level Sluice runs it as FromDevice (see `sluice doc
//! FromDevice` for the packets emitted, drops and handlers) with busy polling: the element's
//! task stays scheduled and drains the receive ring whenever it runs, so latency is lowest
//! and one core is kept busy. `POLL adaptive` makes it sleep on the socket while idle, like
//! FromDevice. QUIET, HEADROOM, LENGTH, ALLOW_NONEXISTENT, UP_CALL and DOWN_CALL are accepted
//! and ignored (UP_CALL and DOWN_CALL are checked at initialisation, as in Click, but never
//! called).
//!
//! Arguments: as FromDevice, with BURST also the second positional argument; `POLL`
//! defaults to `busy`.
//!
//! Handlers: as FromDevice: `count`, `drops`, `drop_details`, `kernel_drops`,
//! `kernel_packets`, `runts`, `too_long`, `errors` (r), `reset_counts` (w).
//!
//! Example: `PollDevice(eth0) -> Queue -> ToDevice(eth1)`

use sluice_core::ElementClass;

use super::from_device::FromDevice;

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "PollDevice",
    source: include_str!("poll_device.rs"),
    make: || Box::new(FromDevice::polling()),
    ..super::from_device::CLASS
};
