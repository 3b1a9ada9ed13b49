//! The Ethernet switch of Figure 16 of the Click paper: EtherSwitch, a learning bridge, and
//! EtherSpanTree, IEEE 802.1D spanning tree controlling it through Suppressor elements.

use sluice_core::ElementClass;

mod ether_span_tree;
mod ether_switch;
pub mod fuzzing;
pub mod stp;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[ether_span_tree::CLASS, ether_switch::CLASS];
