//! Scripting and control: Script, DriverManager, ControlSocket.

use sluice_core::ElementClass;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[];
