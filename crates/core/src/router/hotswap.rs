//! Hot swap (Click's `-R` and its `hotconfig` write handler): a new configuration is built and
//! initialised while the old one runs, then replaces it between two element calls. Elements of
//! the new configuration take the state of the old elements of the same name and class
//! ([`crate::Element::take_state`]): queued packets, tables, counters, open sockets.

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use sluice_lang::FlatConfig;

use super::{HandlerError, Router, RouterOptions};
use crate::library::Library;

/// Parses a new configuration's text into a flat graph, adding what the command line adds
/// (its ControlSockets); errors each start with file:line.
pub type ParseConfig = dyn Fn(&str) -> Result<FlatConfig, Vec<String>> + Send + Sync;

/// What a `hotconfig` write needs to build a configuration.
#[derive(Clone)]
pub struct Reconfigure {
    /// The element classes configurations may use.
    pub library: Library,
    /// How the text written to `hotconfig` becomes a flat graph.
    pub parse: Arc<ParseConfig>,
}

impl fmt::Debug for Reconfigure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Reconfigure")
    }
}

/// `m`'s value, also after a thread panicked holding it.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Router {
    /// True if this router has the `hotconfig` handler.
    pub(crate) fn reconfigurable(&self) -> bool {
        self.runtime.reconfigure.is_some()
    }

    /// True if this router replaces a running one that has an element of `e`'s name and class.
    pub(crate) fn has_predecessor(&self, e: usize) -> bool {
        let inf = &self.graph.info[e];
        self.runtime.predecessors.get(&inf.name) == Some(&inf.class.name)
    }

    /// True once a `hotconfig` write has built the configuration that replaces this one:
    /// elements then leave unfinished work (a ControlSocket's next commands) to their
    /// successors.
    pub(crate) fn swap_pending(&self) -> bool {
        self.runtime.hotswap.lock().is_ok_and(|s| s.is_some())
    }

    /// `write hotconfig TEXT`: builds and initialises TEXT's router on this router's clock.
    /// On success the run stops at once, installs it ([`Router::install_hotswap`]) and goes on
    /// with it; on failure this router runs on and the errors are returned.
    pub(crate) fn hotconfig(&mut self, text: &str) -> Result<(), HandlerError> {
        let Some(rc) = self.runtime.reconfigure.clone() else {
            return Err(HandlerError::NoHandler("hotconfig".into()));
        };
        let began = std::time::Instant::now();
        let flat = (rc.parse)(text).map_err(|e| {
            tracing::warn!(
                errors = e.len(),
                "hot swap refused: the configuration does not parse"
            );
            HandlerError::Failed(e.join("\n"))
        })?;
        let opts = RouterOptions {
            simtime: self.clock.is_simulated(),
            source: text.to_string(),
            check_only: false,
            threads: self.runtime.nthreads(),
            reconfigure: Some(rc.clone()),
            element_stats: self.counting,
            // A plan's policy was made for the old configuration: the new one balances greedily.
            replan: None,
        };
        let predecessors = (0..self.graph.info.len())
            .map(|e| {
                (
                    self.graph.info[e].name.clone(),
                    self.graph.info[e].class.name,
                )
            })
            .collect();
        let new = Router::build(flat, &rc.library, opts, self.clock.clone(), predecessors);
        let new = new.map_err(|mut e| {
            tracing::warn!(
                errors = e.len(),
                "hot swap refused: the configuration does not initialise"
            );
            e.push("Router could not be initialized!".into());
            HandlerError::Failed(e.join("\n"))
        })?;
        tracing::info!(
            elements = new.graph.info.len(),
            build_ms = began.elapsed().as_secs_f64() * 1e3,
            "hot swap: new configuration built"
        );
        if let Ok(mut slot) = self.runtime.hotswap.lock() {
            *slot = Some(Box::new(new));
        }
        self.stop();
        Ok(())
    }

    /// Replaces this router by the one a `hotconfig` write built, if any: each new element
    /// takes the state of the old element of the same name and class (in configuration
    /// order), the old elements clean up, and the new router takes this one's place. Returns
    /// true if it did.
    pub(crate) fn install_hotswap(&mut self) -> bool {
        let Some(mut new) = self.runtime.hotswap.lock().ok().and_then(|mut s| s.take()) else {
            return false;
        };
        let mut taken = 0;
        for e in 0..new.slots.len() {
            let Some(&o) = self.graph.names.get(&new.graph.info[e].name) else {
                continue;
            };
            if self.graph.info[o].class.name != new.graph.info[e].class.name {
                continue;
            }
            if let Some(sh) = self.slots[o].shared.clone() {
                new.with_element(e, |el, cx| el.take_shared_state(&*sh, cx));
                taken += 1;
                continue;
            }
            let Some(mut old) = self.slots[o].elem.take() else {
                continue;
            };
            new.with_element(e, |el, cx| el.take_state(&mut *old, cx));
            self.slots[o].elem = Some(old);
            // Per-thread copies of a replicated element (counters) hand over their share too.
            for r in &mut self.replicas[o] {
                new.with_element(e, |el, cx| el.take_state(&mut **r, cx));
            }
            taken += 1;
        }
        // Packets no successor took (a queue removed, or replaced by another class) are
        // freed with their element and counted, with those of earlier swaps.
        let mut retired = std::mem::take(&mut *lock(&self.runtime.retired));
        let mut freed = 0;
        for o in 0..self.slots.len() {
            if let Some((held, _)) = self.storage_of(o).filter(|s| s.0 > 0) {
                retired.push((self.graph.info[o].name.clone(), held as u64));
                freed += held;
            }
        }
        tracing::info!(
            elements = new.slots.len(),
            took_state = taken,
            freed_packets = freed,
            "hot swap: new configuration installed"
        );
        *lock(&new.runtime.retired) = retired;
        if self.run_failed() {
            new.runtime.failed.store(true, Ordering::Relaxed);
        }
        let until_idle = self.runtime.until_idle.load(Ordering::Relaxed);
        new.runtime.until_idle.store(until_idle, Ordering::Relaxed);
        self.cleanup();
        *self = *new;
        true
    }
}
