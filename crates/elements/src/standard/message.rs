//! Message — prints a message, warning or error when the configuration is read
//!
//! Synopsis: `Message(MESSAGE [, TYPE])`
//!
//! Ports: none.
//!
//! Documents a configuration from inside it: when the element is configured, MESSAGE (a
//! string) is printed on standard error in the context of the element, as Click prints
//! configuration messages (`FILE:LINE: While configuring 'NAME :: Message':` and the message,
//! indented). With TYPE `ERROR` the message is an error and the router does not start.
//!
//! Arguments:
//! - `MESSAGE` (string, mandatory): the text.
//! - `TYPE` (keyword, default `MESSAGE`): `MESSAGE`, `WARNING` (printed as `warning: TEXT`) or
//!   `ERROR`. Any other type is a configuration error.
//!
//! Handlers: none besides the router's.
//!
//! Example: `Message("This configuration is deprecated; use router2.click.", WARNING)`

use sluice_core::{ConfigCx, Element, ElementClass};
use sluice_lang::args::{Args, Word};

/// The Message element.
#[derive(Default)]
pub struct Message;

impl Element for Message {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let message: String = args.read_mp("MESSAGE")?;
        let kind = args
            .read_p::<Word>("TYPE")?
            .map_or_else(|| "MESSAGE".to_string(), |w| w.0);
        let text = match kind.as_str() {
            "MESSAGE" => message,
            "WARNING" => format!("warning: {message}"),
            "ERROR" => {
                args.error(message);
                return Err(());
            }
            _ => {
                args.error("unrecognized message type");
                return Err(());
            }
        };
        cx.message(&text);
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Message",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("message.rs"),
    make: || Box::new(Message),
};
