//! Scripting and control: Script, DriverManager, ControlSocket.

use sluice_core::ElementClass;

pub mod control_socket;
pub mod driver_manager;
pub mod functions;
pub mod fuzzing;
#[allow(clippy::module_inception)]
pub mod script;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[script::CLASS, driver_manager::CLASS, control_socket::CLASS];
