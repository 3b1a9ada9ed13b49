//! The element interface: what every packet-processing element implements.

use std::any::Any;
use std::sync::Arc;

use sluice_lang::args::Args;

use crate::batch::Batch;
use crate::context::{ConfigCx, Cx, InitCx};
use crate::handlers::Handlers;
use crate::packet::Packet;
use crate::threads::Concurrency;
use crate::toolkit::{pull_sorted, push_sorted, Verdict};

/// Configure phase of elements that define information others use (AddressInfo).
pub const CONFIGURE_PHASE_INFO: i32 = -100;
/// Configure phase of ordinary elements.
pub const CONFIGURE_PHASE_DEFAULT: i32 = 0;

/// Static description of an element class: name, ports, processing, documentation, constructor.
#[derive(Clone, Copy)]
pub struct ElementClass {
    /// Class name as written in configurations (`Counter`).
    pub name: &'static str,
    /// Port-count spec (`1/1`, `1/-`, `-/=`); see [`crate::ports::PortCount`].
    pub ports: &'static str,
    /// Processing spec (`a/a`, `h/l`, `l/h`); see [`crate::ports::ProcessingSpec`].
    pub processing: &'static str,
    /// Flow code (`x/x`, `#/#`); empty means every input reaches every output.
    pub flow: &'static str,
    /// Source text of the element's file; its leading `//!` lines are the documentation.
    pub source: &'static str,
    /// Creates an unconfigured instance.
    pub make: fn() -> Box<dyn Element>,
}

impl ElementClass {
    /// The documentation page: the leading `//!` comment block of the element's source file,
    /// then the handler table an unconfigured element declares, with the value of each setting
    /// (its default).
    pub fn doc(&self) -> String {
        let mut out = String::new();
        for line in self.source.lines() {
            let t = line.trim_start();
            if let Some(rest) = t.strip_prefix("//!") {
                out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
                out.push('\n');
            } else if !t.is_empty() {
                break;
            }
        }
        let mut el = (self.make)();
        let table = el.handler_table();
        let specs: Vec<Handler> = table.specs().copied().collect();
        if !specs.is_empty() {
            out.push_str("\nHandler table (of an unconfigured element):\n");
        }
        for h in specs {
            let mode = match (h.read, h.write) {
                (true, true) => "rw",
                (true, false) => "r",
                _ => "w",
            };
            out.push_str(&format!("  {:<20} {mode}", h.name));
            if h.param {
                out.push_str(", takes a parameter");
            }
            if h.setting && h.read && !h.param {
                let v = table.read((*el).as_any_mut(), h.name, "");
                if let Some(Ok(v)) = v {
                    out.push_str(&format!(", setting, default {:?}", v.trim_end()));
                }
            }
            out.push('\n');
        }
        out
    }
}

impl std::fmt::Debug for ElementClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ElementClass({})", self.name)
    }
}

/// Declares one handler of an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handler {
    /// Handler name (`count`).
    pub name: &'static str,
    /// Readable.
    pub read: bool,
    /// Writable.
    pub write: bool,
    /// A setting rather than a count: every per-thread replica holds the same value, so
    /// merging replicas takes one value instead of summing.
    pub setting: bool,
    /// A read handler that takes a parameter (Click's read-with-parameter handlers, such as a
    /// route table's `lookup ADDR`), answered by [`Element::read_handler_param`].
    pub param: bool,
}

impl Handler {
    /// A read-only handler.
    pub const fn r(name: &'static str) -> Handler {
        Handler {
            name,
            read: true,
            write: false,
            setting: false,
            param: false,
        }
    }

    /// A write-only handler.
    pub const fn w(name: &'static str) -> Handler {
        Handler {
            name,
            read: false,
            write: true,
            setting: false,
            param: false,
        }
    }

    /// Marks the handler as a setting (equal in every per-thread replica).
    pub const fn setting(mut self) -> Handler {
        self.setting = true;
        self
    }

    /// Marks a read handler as taking a parameter.
    pub const fn param(mut self) -> Handler {
        self.param = true;
        self
    }

    /// A read/write handler.
    pub const fn rw(name: &'static str) -> Handler {
        Handler {
            name,
            read: true,
            write: true,
            setting: false,
            param: false,
        }
    }
}

/// Gives `&dyn Any` access to elements, so router-context lookups can downcast.
pub trait AsAny: Any {
    /// As `&dyn Any`.
    fn as_any(&self) -> &dyn Any;
    /// As `&mut dyn Any`.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A packet-processing element.
///
/// Every method has a default, so a simple 1-input/1-output agnostic element only overrides
/// [`Element::simple_action`], and one that also sends packets to other outputs
/// [`Element::action`]. Push elements override [`Element::push`]; pull elements
/// [`Element::pull`]; sources and pollers [`Element::run_task`]. Emitting packets goes through
/// the context (`cx.push(port, batch)`), which calls the downstream element directly.
pub trait Element: AsAny + Send {
    /// Parses the configuration arguments. `args.complete()` is called by the router afterwards.
    /// Errors are recorded in `args` (hence the unit error type).
    #[allow(clippy::result_unit_err)]
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let _ = (args, cx);
        Ok(())
    }

    /// Configuration order: elements with a smaller phase are configured first (AddressInfo
    /// uses [`CONFIGURE_PHASE_INFO`] so its names are defined before anyone reads them).
    fn configure_phase(&self) -> i32 {
        CONFIGURE_PHASE_DEFAULT
    }

    /// Second initialisation stage, after every element is configured.
    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let _ = cx;
        Ok(())
    }

    /// Processes one packet for a 1-in/1-out element; `None` means the element consumed it.
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        let _ = cx;
        Some(p)
    }

    /// Decides where one packet goes, for an element that sorts packets between its outputs
    /// (an error output beside output 0). Default: [`Element::simple_action`], to output 0.
    fn action(&mut self, p: Packet, cx: &mut Cx) -> Verdict {
        match self.simple_action(p, cx) {
            Some(p) => Verdict::Out(0, p),
            None => Verdict::Gone,
        }
    }

    /// Receives a batch pushed into input `port`. Default: [`Element::action`] on each packet,
    /// the packets for each output pushed together ([`push_sorted`]).
    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let _ = port;
        push_sorted(batch, cx, |p, cx| self.action(p, cx));
    }

    /// Answers a pull of up to `max` packets on output `port`. Default: pull from input 0 and
    /// apply [`Element::action`], returning the packets for output 0 and pushing the others
    /// ([`pull_sorted`]).
    fn pull(&mut self, port: usize, max: usize, cx: &mut Cx) -> Batch {
        let _ = port;
        pull_sorted(max, cx, |p, cx| self.action(p, cx))
    }

    /// Runs the element's task; returns true if it did useful work. Call `cx.reschedule()` to
    /// run again.
    fn run_task(&mut self, cx: &mut Cx) -> bool {
        let _ = cx;
        false
    }

    /// Runs when the element's timer `id` fires.
    fn run_timer(&mut self, id: usize, cx: &mut Cx) {
        let _ = (id, cx);
    }

    /// Called when a file descriptor registered with `add_select` is readable.
    fn selected(&mut self, fd: i32, cx: &mut Cx) {
        let _ = (fd, cx);
    }

    /// Called on a driver stop event when this element manages driver stops (DriverManager).
    fn driver_stop_event(&mut self, cx: &mut Cx) {
        cx.stop_router();
    }

    /// The Storage interface (queues): current length and capacity, found by router context.
    fn storage(&self) -> Option<(usize, usize)> {
        None
    }

    /// The element's own handlers, as a table built with [`crate::Table`] (the router adds
    /// `name`, `class`, `config`, `ports`, `handlers`). Called once the element is configured.
    fn handler_table(&self) -> Handlers {
        Handlers::default()
    }

    /// Hot swap (Click's `take_state`): takes what this element keeps from `old`, the element
    /// of the same name and class in the configuration being replaced — queued packets,
    /// tables, counters, open sockets. Called after both are initialised and before this
    /// one runs; `old` is cleaned up afterwards. A replicated element ([`crate::Concurrency::Replicated`])
    /// is called once per old copy, so its counts must add up. By default nothing is taken.
    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        let _ = (old, cx);
    }

    /// Hot swap from an element that several threads shared: as [`Element::take_state`], from
    /// `old`, the thread-safe form ([`Element::into_shared`]) of the element of the same name
    /// and class being replaced, whose threads have stopped. By default nothing is taken.
    fn take_shared_state(&mut self, old: &dyn SharedElement, cx: &mut Cx) {
        let _ = (old, cx);
    }

    /// Called when the router stops, before it is dropped (flush files, emit last packets).
    fn cleanup(&mut self, cx: &mut Cx) {
        let _ = cx;
    }

    /// How the element may be used when several threads reach it. The default, exclusive,
    /// makes such a configuration an error naming the element and the threads.
    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    /// For [`Concurrency::Shared`] elements: the thread-safe form of this configured and
    /// initialised element, given how many threads push into it and pull from it.
    fn into_shared(self: Box<Self>, sharing: Sharing) -> Option<Arc<dyn SharedElement>> {
        let _ = sharing;
        None
    }
}

/// How many threads use a shared element from each side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sharing {
    /// Threads that push packets into it.
    pub producers: usize,
    /// Threads that pull packets from it.
    pub consumers: usize,
}

/// The thread-safe form of an element that several threads use at once (a queue between
/// threads). Methods take `&self`; the element synchronises its own state.
pub trait SharedElement: Send + Sync {
    /// Receives a batch pushed into input `port`.
    fn push(&self, port: usize, batch: Batch, cx: &mut Cx);

    /// Answers a pull of up to `max` packets on output `port`.
    fn pull(&self, port: usize, max: usize, cx: &mut Cx) -> Batch;

    /// The Storage interface: current length and capacity.
    fn storage(&self) -> Option<(usize, usize)> {
        None
    }

    /// The element's handlers, declared as for [`Element::handler_table`] but reading and
    /// writing through shared references ([`crate::Table::read`],
    /// [`crate::Table::action_ref`], [`crate::Table::nest_ref`]); the same names as the
    /// element it came from.
    fn handler_table(&self) -> Handlers;

    /// The element as `Any`, for its handler table.
    fn as_any(&self) -> &dyn Any;
}
