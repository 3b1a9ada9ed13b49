#![no_main]
//! Fuzzes ControlSocket's command protocol over a real Unix socket (body in sluice-elements
//! script::fuzzing).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_elements::script::fuzzing::control_socket(data);
});
