//! Real interfaces: AF_PACKET (FromDevice, ToDevice), TUN/TAP (KernelTun, KernelTap).

use sluice_core::ElementClass;

mod from_device;
mod kernel_tun;
pub mod sys;
mod to_device;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    from_device::CLASS,
    to_device::CLASS,
    kernel_tun::TUN_CLASS,
    kernel_tun::TAP_CLASS,
];
