//! Body of the `script` fuzz target, also run over its seed corpus by `tests/script.rs`. It
//! may not panic, loop without end or grow without bound.

use sluice_core::{Router, RouterOptions};

/// Script: the input's first line is the instruction list of a PASSIVE script, its second
/// line the arguments of a `run`. The router is built on simulated time beside a Counter,
/// the script run through its `run` handler and its handlers read and written. Instructions
/// that reach outside the process (`>FILE`, `cat`, `kill`) are defused, and inputs that
/// would declare other elements are skipped.
pub fn script(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (insns, args) = text.split_once('\n').unwrap_or((text, ""));
    let insns = insns
        .replace('>', " ")
        .replace("cat", "ca")
        .replace("kill", "ki");
    let conf = format!("s :: Script(TYPE PASSIVE, {insns}); Idle -> c :: Counter -> Discard;");
    let Ok(flat) = sluice_lang::parse_config(&conf, "fuzz", &[]) else {
        return;
    };
    let classes: Vec<&str> = flat.elements.iter().map(|e| e.class.as_str()).collect();
    if classes != ["Script", "Idle", "Counter", "Discard"] {
        return;
    }
    let opts = RouterOptions {
        simtime: true,
        ..Default::default()
    };
    let Ok(mut r) = Router::new(flat, &crate::library(), opts) else {
        return;
    };
    r.run();
    let _ = r.write_path("s.run", args);
    let _ = r.write_path("s.step", "");
    for h in ["s.run", "s.position", "s.done"] {
        let _ = r.read_path(h);
    }
    let _ = r.read_path_param("s.sprintf", Some(args));
    let _ = r.read_path_param("s.add", Some(args));
    let _ = r.write_path("s.set", args);
}
