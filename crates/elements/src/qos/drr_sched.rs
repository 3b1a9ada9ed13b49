//! DRRSched — pulls from its inputs by deficit round robin
//!
//! Synopsis: `DRRSched([*keywords* QUANTUM])`
//!
//! Ports: any number of pull inputs, 1 pull output. Deficit round robin (Shreedhar and
//! Varghese, "Efficient Fair Queuing using Deficit Round Robin", SIGCOMM 1995) shares the
//! output between the inputs by bytes rather than packets: each input has a deficit counter,
//! and every time the round moves on to an input, QUANTUM bytes are added to its counter. The
//! input's next packet leaves if its length fits in the counter, which then loses that many
//! bytes, and the round stays on the input; a packet that does not fit is held until a later
//! visit and the round moves on. An input found empty loses its deficit. Over time each busy
//! input sends the same number of bytes whatever its packet sizes. The round starts at input
//! 0 with an empty counter, so the very first packet leaves from input 1 (or from input 0 once
//! the round returns to it), as in Click.
//!
//! Inputs behind empty notifiers (Queues) are not pulled while those say empty. DRRSched has
//! no task and offers no notifier of its own: pullers downstream find the notifiers of the
//! queues behind every input through it (router context). A pull returns nothing only when no
//! packet is held, so a held packet never waits for a puller that sleeps. Nothing is dropped
//! while the router runs.
//!
//! Arguments:
//! - `QUANTUM` (integer > 0, default 500): bytes added to an input's deficit per round.
//!
//! Handlers: `drops`, `drop_details` (r): packets still held for a later round when the
//! router stopped (Click frees them without counting).
//!
//! Example: `af :: Queue -> [0]drr :: DRRSched(QUANTUM 1500); be :: Queue -> [1]drr;
//! drr -> Unqueue -> ToDevice(eth0)`

use sluice_core::{
    drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, InitCx, NotifierId,
    Packet, Table, BATCH_MAX,
};
use sluice_lang::args::Args;

drop_reasons! {
    /// Why DRRSched drops a packet.
    enum Reason {
        /// A packet held for a later round when the router stopped.
        HeldAtStop => "held at stop",
    }
}

/// Click's default quantum, in bytes.
const DEFAULT_QUANTUM: u32 = 500;

/// One input's state in the round.
#[derive(Default)]
struct Input {
    /// A packet pulled that did not fit in the deficit yet.
    head: Option<Packet>,
    /// Bytes this input may still send in the current round.
    deficit: u32,
    /// The empty notifiers upstream (`None`: none, always pulled).
    notes: Option<Vec<NotifierId>>,
}

/// The DRRSched element.
pub struct DRRSched {
    quantum: u32,
    inputs: Vec<Input>,
    /// The input the round is on.
    next: usize,
    drops: Drops<Reason>,
}

impl Default for DRRSched {
    fn default() -> DRRSched {
        DRRSched {
            quantum: DEFAULT_QUANTUM,
            inputs: Vec::new(),
            drops: Drops::default(),
            next: 0,
        }
    }
}

impl DRRSched {
    /// Click's pull: looks at each input once, starting with the one the round is on, and
    /// returns the first packet that fits in its input's deficit.
    fn pull_one(&mut self, cx: &mut Cx) -> Option<Packet> {
        let n = self.inputs.len();
        for _ in 0..n {
            let i = self.next;
            let input = &mut self.inputs[i];
            let p = match input.head.take() {
                Some(p) => Some(p),
                None if input.notes.as_ref().is_none_or(|ns| cx.any_active(ns)) => cx.pull_one(i),
                None => None,
            };
            let input = &mut self.inputs[i];
            match p {
                None => input.deficit = 0,
                Some(p) => {
                    let len = u32::try_from(p.len()).unwrap_or(u32::MAX);
                    if len <= input.deficit {
                        input.deficit -= len;
                        return Some(p);
                    }
                    input.head = Some(p);
                }
            }
            self.next = (i + 1) % n;
            let next = &mut self.inputs[self.next];
            next.deficit = next.deficit.saturating_add(self.quantum);
        }
        None
    }

    /// True while some input holds a packet that did not fit yet.
    fn holds_packets(&self) -> bool {
        self.inputs.iter().any(|i| i.head.is_some())
    }
}

impl Element for DRRSched {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(q) = args.read_p::<i32>("QUANTUM")? {
            match u32::try_from(q) {
                Ok(q) if q > 0 => self.quantum = q,
                _ => {
                    args.error("bad QUANTUM");
                    return Err(());
                }
            }
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.inputs = (0..cx.ninputs())
            .map(|i| Input {
                notes: cx.upstream_empty_notifiers(i),
                ..Input::default()
            })
            .collect();
        self.next = 0;
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut out = Batch::new();
        while out.len() < max.min(BATCH_MAX) {
            match self.pull_one(cx) {
                Some(p) => {
                    let _ = out.push(p);
                }
                None if self.holds_packets() => {}
                None => break,
            }
        }
        out
    }

    /// Packets still held for a later round are counted as dropped.
    fn cleanup(&mut self, _cx: &mut Cx) {
        for i in &mut self.inputs {
            if i.head.take().is_some() {
                self.drops.count(Reason::HeldAtStop);
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "DRRSched",
    ports: "-/1",
    processing: "l/l",
    flow: "",
    source: include_str!("drr_sched.rs"),
    make: || Box::new(DRRSched::default()),
};
