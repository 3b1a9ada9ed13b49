#![no_main]
//! Fuzzes the configuration parser: parse, then unparse and re-parse what was accepted.
//!
//! Inputs holding a number of five or more significant digits are skipped: a port number
//! that large makes the parser report every missing port below it (as Click does), which
//! costs seconds per input and says nothing new; `tests/hostile` covers huge port numbers.

use libfuzzer_sys::fuzz_target;

/// True if `text` holds a run of digits worth 10,000 or more.
fn has_large_number(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_digit())
        .any(|run| run.trim_start_matches('0').len() >= 5)
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if has_large_number(text) {
            return;
        }
        if let Ok(cfg) = sluice_lang::parse_config(text, "fuzz", &[]) {
            let flat = sluice_lang::unparse(&cfg);
            let again = sluice_lang::parse_config(&flat, "flat", &[]);
            assert!(again.is_ok(), "unparse output must re-parse");
            let _ = sluice_lang::to_dot(&cfg);
        }
    }
});
