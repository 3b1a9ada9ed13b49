//! IPRewriterPatterns — names rewriting patterns for the rewriters' input specifications
//!
//! Synopsis: `IPRewriterPatterns(NAME SADDR SPORT DADDR DPORT, ...)`
//!
//! Ports: none.
//!
//! Each argument defines pattern NAME, written as in an IPRewriter `pattern` input
//! specification (`sluice doc IPRewriter`): `SADDR SPORT DADDR DPORT` (or `SADDR DADDR` for
//! the address-only rewriters), `-` for a field left unchanged, a source port range `L-H`
//! (`#`: allocated in order; `?`: at random, not preferring the packet's own port) or a
//! source address range `A-B` or `ADDR/LEN`. A rewriter's input specification `pattern NAME
//! FOUTPUT ROUTPUT` uses it; names are looked up when the rewriter initialises. Each input
//! that names a pattern keeps its own allocation position (Click shares one between them).
//! Defining a name twice in one element is an error; empty arguments are ignored.
//!
//! Arguments: one `NAME PATTERN` per argument.
//!
//! Handlers: none of its own.
//!
//! Example: `IPRewriterPatterns(nat 198.18.0.1 1024-65535# - -);
//! rw :: IPRewriter(pattern nat 0 1, drop);`

use sluice_core::{ConfigCx, Element, ElementClass};
use sluice_lang::args::{split_words, Args};

use super::spec::Pattern;

/// The IPRewriterPatterns element.
#[derive(Default)]
pub struct IPRewriterPatterns {
    patterns: Vec<(String, Pattern)>,
}

impl IPRewriterPatterns {
    /// The pattern called `name`.
    pub fn find(&self, name: &str) -> Option<&Pattern> {
        self.patterns
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p)
    }
}

impl Element for IPRewriterPatterns {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let mut ok = true;
        for arg in args.take_raw() {
            let words = split_words(&arg);
            let Some((name, pat)) = words.split_first() else {
                continue;
            };
            if self.find(name).is_some() {
                args.error(format!("pattern '{name}' already defined"));
                ok = false;
                continue;
            }
            match Pattern::parse(pat) {
                Ok(p) => self.patterns.push((name.clone(), p)),
                Err(e) => {
                    args.error(e);
                    ok = false;
                }
            }
        }
        ok.then_some(()).ok_or(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPRewriterPatterns",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("ip_rewriter_patterns.rs"),
    make: || Box::<IPRewriterPatterns>::default(),
};
