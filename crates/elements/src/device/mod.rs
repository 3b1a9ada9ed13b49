//! Real interfaces: AF_PACKET (FromDevice, ToDevice), AF_XDP (FromXDPDevice, ToXDPDevice),
//! TUN/TAP (KernelTun, KernelTap).

use sluice_core::ElementClass;

mod from_device;
mod from_xdp_device;
mod kernel_tun;
pub mod sys;
mod to_device;
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
];
