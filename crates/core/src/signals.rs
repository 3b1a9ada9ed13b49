//! SIGINT/SIGTERM: the first one asks the running router to stop cleanly (so output files are
//! flushed and `-h` handlers printed); a second one ends the process at once.

use std::sync::atomic::{AtomicU32, Ordering};

static SIGNALS: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(128 + sig) };
    }
}

/// Installs the handlers for SIGINT and SIGTERM.
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: installs an async-signal-safe handler (it only touches an atomic and calls
    // _exit) for two standard signals.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// True once a stop signal arrived.
#[inline]
pub fn stop_requested() -> bool {
    SIGNALS.load(Ordering::Relaxed) > 0
}
