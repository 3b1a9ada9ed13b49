//! Real interfaces: AF_PACKET (FromDevice, ToDevice), AF_XDP (FromXDPDevice, ToXDPDevice),
//! TUN/TAP (KernelTun, KernelTap), and Click's kernel-module device elements at user level
//! (PollDevice, FromHost, ToHost, ToHostSniffers).

use sluice_core::ElementClass;

mod from_device;
mod from_xdp_device;
pub(crate) mod host_names;
mod kernel_tun;
mod poll_device;
pub mod sys;
mod to_device;
mod to_host;
mod to_xdp_device;
mod tx;
pub mod xsk;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    from_device::CLASS,
    to_device::CLASS,
    from_xdp_device::CLASS,
    to_xdp_device::CLASS,
    kernel_tun::TUN_CLASS,
    kernel_tun::TAP_CLASS,
    kernel_tun::FROM_HOST_CLASS,
    poll_device::CLASS,
    to_host::CLASS,
    to_host::SNIFFERS_CLASS,
];
