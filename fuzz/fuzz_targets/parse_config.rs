#![no_main]
//! Fuzzes the configuration parser: parse, then unparse and re-parse what was accepted.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(cfg) = sluice_lang::parse_config(text, "fuzz", &[]) {
            let flat = sluice_lang::unparse(&cfg);
            let again = sluice_lang::parse_config(&flat, "flat", &[]);
            assert!(again.is_ok(), "unparse output must re-parse");
            let _ = sluice_lang::to_dot(&cfg);
        }
    }
});
