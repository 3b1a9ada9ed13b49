//! InputSwitch — accepts packets from one input, chosen by a handler
//!
//! Synopsis: `InputSwitch([INPUT])`
//!
//! Ports: any number of push inputs, 1 push output. Packets arriving on input INPUT leave on
//! output 0; packets arriving on any other input are dropped and counted. A negative INPUT
//! drops everything.
//!
//! Arguments:
//! - `INPUT` (integer, default 0; Click also names it `OUTPUT`): less than the number of
//!   inputs.
//!
//! Handlers: `switch` (rw: the input; a number past the last input means -1), `config` (r),
//! `drops`, `drop_details` (r).
//!
//! Example: `a -> [0]sw :: InputSwitch(0) -> Queue; b -> [1]sw;`, then write `sw.switch 1`.

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass};
use sluice_core::{Handlers, Table};
use sluice_lang::args::Args;

drop_reasons! {
    /// Why InputSwitch drops a packet.
    enum Reason { OtherInput => "arrived on an unselected input" }
}

/// The InputSwitch element.
#[derive(Default)]
pub struct InputSwitch {
    input: i32,
    drops: Drops<Reason>,
}

impl Element for InputSwitch {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let input: Option<i32> = args.read_p("INPUT")?;
        let output: Option<i32> = args.read("OUTPUT")?;
        self.input = input.or(output).unwrap_or(self.input);
        if self.input >= cx.ninputs() as i32 {
            args.error(format!("input must be < {}", cx.ninputs()));
            return Err(());
        }
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        if port as i32 == self.input {
            cx.push(0, batch);
        } else {
            self.drops.add(Reason::OtherInput, batch.len() as u64);
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("switch", |e| e.input)
            .write("switch", |e, v, cx| {
                let k: i32 = v
                    .trim()
                    .parse()
                    .map_err(|_| "InputSwitch input must be integer".to_string())?;
                e.input = if k >= cx.ninputs() as i32 { -1 } else { k };
                Ok(())
            })
            .setting()
            .read("config", |e| e.input)
            .setting()
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "InputSwitch",
    ports: "-/1",
    processing: "h/h",
    flow: "",
    source: include_str!("input_switch.rs"),
    make: || Box::new(InputSwitch::default()),
};
