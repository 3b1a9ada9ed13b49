//! StaticThreadSched — places tasks on threads
//!
//! Synopsis: `StaticThreadSched(ELEMENT THREAD, ...)`
//!
//! Ports: none.
//!
//! Places each named element's task on a thread. The elements that only that task reaches
//! run on the same thread. Tasks not named are spread over the threads by the router, keeping
//! tasks that share a non-shareable element on one thread. With several StaticThreadScheds,
//! the one configured last wins for an element both name.
//!
//! Arguments:
//! - `ELEMENT THREAD` (any number of arguments): an element with a task (a source, Unqueue,
//!   ToDevice, …) and the thread (0 to `-j` − 1) that runs it; a thread number beyond the last
//!   thread wraps around. ELEMENT is looked up from this element's compound outwards; a name
//!   that is no element but a compound places every element inside it.
//!
//! Handlers: none besides the router's.
//!
//! Example: `StaticThreadSched(src0 0, src1 1)`

use sluice_core::{ConfigCx, Element, ElementClass};
use sluice_lang::args::{split_words, Args};

/// The StaticThreadSched element.
#[derive(Default)]
pub struct StaticThreadSched;

impl Element for StaticThreadSched {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let n = cx.nthreads();
        for a in args.rest() {
            let w = split_words(&a);
            let (Some(name), Some(th), 2) = (w.first(), w.get(1), w.len()) else {
                args.error(format!("expected 'ELEMENT THREAD', got '{}'", a));
                continue;
            };
            let Ok(th) = th.parse::<usize>() else {
                args.error(format!("{}: THREAD: expected unsigned integer", name));
                continue;
            };
            // An element seen from this one's compound, else every element of the compound
            // of that name.
            let targets = cx.elements_named(name);
            if targets.is_empty() {
                args.error(format!("'{}' does not name an element", name));
            }
            for e in targets {
                cx.set_home_thread(e, th % n);
            }
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "StaticThreadSched",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("static_thread_sched.rs"),
    make: || Box::new(StaticThreadSched),
};
