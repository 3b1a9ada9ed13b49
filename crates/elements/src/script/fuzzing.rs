//! Bodies of the `script` and `control_socket` fuzz targets, also run over their seed corpora
//! by `tests/script.rs`. They may not panic, loop without end or grow without bound.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use sluice_core::{Library, Router, RouterOptions};

use super::control_socket::ControlSocket;

/// The element library, built once per process.
fn library() -> &'static Library {
    static LIB: OnceLock<Library> = OnceLock::new();
    LIB.get_or_init(crate::library)
}

/// Script: the input's first line is the instruction list of a PASSIVE script, its second
/// line the arguments of a `run`. The router is built on simulated time beside a Counter,
/// the script run through its `run` handler and its handlers read and written. The thread is
/// [`confine`](super::functions::confine)d, so instructions that would reach outside the
/// process (`>FILE`, `save`, `append`, `cat`, `kill`) fail, and inputs that would declare
/// other elements are skipped.
pub fn script(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (insns, args) = text.split_once('\n').unwrap_or((text, ""));
    super::functions::confine();
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
    let Ok(mut r) = Router::new(flat, library(), opts) else {
        return;
    };
    r.run_until_idle();
    let _ = r.write_path("s.run", args);
    let _ = r.write_path("s.step", "");
    for h in ["s.run", "s.position", "s.done"] {
        let _ = r.read_path(h);
    }
    let _ = r.read_path_param("s.sprintf", Some(args));
    let _ = r.read_path_param("s.add", Some(args));
    let _ = r.write_path("s.set", args);
}

/// ControlSocket: the input is one client's whole session with a ControlSocket
/// ([`ControlSocket::session`], served from memory) in a router, built once per thread, that
/// also holds a Counter and a PASSIVE Script. Every reply must be well-formed: code lines
/// (`NNN text` or `NNN-text`) and `DATA N` followed by N bytes.
pub fn control_socket(data: &[u8]) {
    thread_local! {
        static ROUTER: RefCell<Option<(Router, usize)>> = const { RefCell::new(None) };
    }
    super::functions::confine();
    ROUTER.with(|r| {
        let mut r = r.borrow_mut();
        let (router, cs) = r.get_or_insert_with(|| {
            static ROUTERS: AtomicU64 = AtomicU64::new(0);
            let path = std::env::temp_dir().join(format!(
                "sluice-fuzz-cs-{}-{}.sock",
                std::process::id(),
                ROUTERS.fetch_add(1, Ordering::Relaxed)
            ));
            let conf = format!(
                "cs :: ControlSocket(unix, \"{}\"); s :: Script(TYPE PASSIVE, return $(add $1 1)); \
                 Idle -> c :: Counter -> Discard;",
                path.display()
            );
            let flat =
                sluice_lang::parse_config(&conf, "fuzz", &[]).expect("fuzz configuration parses");
            let router = Router::new(flat, library(), RouterOptions::default())
                .expect("fuzz configuration initializes");
            // The session never goes through the socket: its name can go at once.
            let _ = std::fs::remove_file(&path);
            let cs = router.element_index("cs").expect("cs exists");
            (router, cs)
        });
        let out = router
            .with_element(*cs, |el, cx| {
                el.as_any_mut()
                    .downcast_mut::<ControlSocket>()
                    .map(|c| c.session(data, cx))
            })
            .flatten()
            .expect("cs is a ControlSocket");
        check_replies(&out);
    });
}

/// Asserts that `out` is a well-formed ControlSocket reply stream.
fn check_replies(out: &[u8]) {
    let greeting = b"Click::ControlSocket/1.3\r\n";
    assert!(
        out.starts_with(greeting),
        "{:?}",
        String::from_utf8_lossy(out)
    );
    let mut rest = &out[greeting.len()..];
    while !rest.is_empty() {
        let end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .unwrap_or_else(|| panic!("unterminated reply {:?}", String::from_utf8_lossy(rest)));
        let line = std::str::from_utf8(&rest[..end]).expect("reply lines are text");
        rest = &rest[end + 2..];
        if let Some(n) = line.strip_prefix("DATA ") {
            let n: usize = n.parse().expect("DATA length");
            assert!(rest.len() >= n, "DATA {n} with {} bytes", rest.len());
            rest = &rest[n..];
        } else {
            let b = line.as_bytes();
            assert!(
                b.len() >= 4
                    && b[..3].iter().all(u8::is_ascii_digit)
                    && matches!(b[3], b' ' | b'-'),
                "bad reply line {line:?}"
            );
        }
    }
}
