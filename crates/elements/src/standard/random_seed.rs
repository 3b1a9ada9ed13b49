//! RandomSeed — sets the seed of the elements' random numbers
//!
//! Synopsis: `RandomSeed([SEED])`
//!
//! Ports: none. At configuration, seeds the random numbers that elements such as RandomSwitch
//! draw, so a run's random choices repeat with the same SEED. Without SEED, the seed comes
//! from the clock.
//!
//! Arguments:
//! - `SEED` (unsigned 32-bit integer).
//!
//! Handlers: `seed` (rw; writing reseeds, an empty value from the clock; reads the last seed
//! given, empty if none).
//!
//! Example: `RandomSeed(1); src -> RandomSwitch -> ...`

use sluice_core::{ConfigCx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::{Args, FromArg};

use super::util::random_seed;

/// The RandomSeed element.
#[derive(Default)]
pub struct RandomSeed {
    seed: Option<u32>,
}

impl Element for RandomSeed {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.seed = args.read_p("SEED")?;
        random_seed(self.seed);
        Ok(())
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("seed", |e| e.seed.map_or(String::new(), |s| s.to_string()))
            .write("seed", |e, v, _| {
                let v = v.trim();
                e.seed = if v.is_empty() {
                    None
                } else {
                    Some(u32::from_arg(v).map_err(|e| format!("SEED: {}", e))?)
                };
                random_seed(e.seed);
                Ok(())
            })
            .setting()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RandomSeed",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("random_seed.rs"),
    make: || Box::new(RandomSeed::default()),
};
