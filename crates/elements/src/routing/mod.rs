//! Routes from the host's routing: KernelRoutes keeps Sluice's route tables in step with a
//! Linux kernel routing table, where a routing daemon (BIRD, FRR) puts its routes. `netlink`
//! speaks rtnetlink; `fib` holds the kernel's routes and what the tables hold.

use sluice_core::ElementClass;

pub mod fib;
mod kernel_routes;
pub mod netlink;

pub use kernel_routes::parse_ktable;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[kernel_routes::CLASS];
