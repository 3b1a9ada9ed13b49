//! The cluster router family (RouteBricks): Direct VLB between the nodes of a mesh, with the
//! output node carried in the Ethernet header so that only the input node reads IP headers.

use sluice_core::ElementClass;

mod cluster_decap;
mod cluster_encap;
mod direct_vlb;
pub mod frame;
pub mod vlb;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    cluster_decap::CLASS,
    cluster_encap::CLASS,
    direct_vlb::CLASS,
];
