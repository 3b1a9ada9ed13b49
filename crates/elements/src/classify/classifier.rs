//! Classifier — classifies packets by contents at byte offsets
//!
//! Synopsis: `Classifier(PATTERN_1, ..., PATTERN_N)`
//!
//! Ports: 1 input, N outputs (one per pattern), push.
//!
//! A packet goes to the output of the first pattern it matches. All patterns are compiled at
//! configuration time into one decision DAG of 4-byte word tests (the `program` handler shows
//! it); a test that reads past the end of the packet fails. Packets matching no pattern are
//! dropped and counted in `drops`.
//!
//! Arguments:
//! - `PATTERN` (one per output, mandatory): clauses separated by spaces; the pattern matches
//!   when every clause does. A clause is `OFFSET/VALUE` or `OFFSET/VALUE%MASK`: OFFSET is a
//!   decimal byte offset from the start of the packet data, VALUE and MASK are hexadecimal
//!   with an even number of digits (MASK as long as VALUE); only the bits set in MASK are
//!   compared. `?` in VALUE is a wildcard nibble. A clause preceded by `!` must *not* match.
//!   The pattern `-` matches every packet.
//!
//! Handlers: `program` (r), `drops` (r, packets that matched no pattern), `drop_details` (r,
//! the same by reason), `reset_counts` (w).
//!
//! Example — ARP requests, ARP replies, IP, everything else:
//! ```text
//! Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -)
//! ```

use sluice_core::{ConfigCx, ElementClass};
use sluice_lang::args::{split_words, Args};

use super::element::{classify_element, compile_patterns, ClassifyElem, Start};
use super::program::{Base, Expr, Program, Test};

/// The Classifier element.
pub struct Classifier(ClassifyElem);

fn hexval(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Parses one `[!]OFFSET/VALUE[%MASK]` clause.
fn parse_clause(w: &str) -> Result<Expr, String> {
    let bad = |why: &str| format!("pattern clause '{}': {}", w, why);
    let (neg, body) = match w.strip_prefix('!') {
        Some(b) => (true, b),
        None => (false, w),
    };
    let (off, rest) = body
        .split_once('/')
        .ok_or_else(|| bad("expected OFFSET/VALUE"))?;
    let off: usize = off.parse().map_err(|_| bad("bad offset"))?;
    let (val, mask) = match rest.split_once('%') {
        Some((v, m)) => (v, Some(m)),
        None => (rest, None),
    };
    if val.is_empty() || val.len() % 2 != 0 {
        return Err(bad("value needs an even number of hex digits"));
    }
    if mask.is_some_and(|m| m.len() != val.len()) {
        return Err(bad("mask must have as many digits as the value"));
    }
    let n = val.len() / 2;
    if off.saturating_add(n) > u16::MAX as usize {
        return Err(bad("offset too large"));
    }
    let vb = val.as_bytes();
    let mut bytes = Vec::with_capacity(n);
    for i in 0..n {
        let mut v = 0u8;
        let mut m = 0u8;
        for k in 0..2 {
            let c = vb[2 * i + k];
            v <<= 4;
            m <<= 4;
            if c == b'?' {
                continue;
            }
            v |= hexval(c).ok_or_else(|| bad("bad hex digit in value"))?;
            m |= 0xf;
        }
        if let Some(mask) = mask {
            let mb = mask.as_bytes();
            let hi = hexval(mb[2 * i]).ok_or_else(|| bad("bad hex digit in mask"))?;
            let lo = hexval(mb[2 * i + 1]).ok_or_else(|| bad("bad hex digit in mask"))?;
            m &= hi << 4 | lo;
        }
        bytes.push((v & m, m));
    }
    let mut e = Expr::True;
    for (c, chunk) in bytes.chunks(4).enumerate() {
        let mut mask = 0u32;
        let mut value = 0u32;
        for (i, (v, m)) in chunk.iter().enumerate() {
            mask |= (*m as u32) << (24 - 8 * i);
            value |= (*v as u32) << (24 - 8 * i);
        }
        if mask != 0 {
            let t = Test::eq(Base::Net, (off + 4 * c) as u16, mask, value);
            e = Expr::and(e, Expr::Test(t));
        }
    }
    Ok(if neg { Expr::not(e) } else { e })
}

/// Parses one Classifier pattern into an expression.
pub fn parse_pattern(pat: &str) -> Result<Expr, String> {
    let words = split_words(pat);
    if words.is_empty() {
        return Err("empty pattern".into());
    }
    if words.len() == 1 && words[0] == "-" {
        return Ok(Expr::True);
    }
    let mut e = Expr::True;
    for w in &words {
        e = Expr::and(e, parse_clause(w)?);
    }
    Ok(e)
}

/// Compiles Classifier patterns (pattern i → output i).
pub fn compile(patterns: &[String]) -> Result<Program, String> {
    compile_patterns(patterns, parse_pattern, Start::Data)
}

classify_element!(
    Classifier,
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.0.configure_patterns(args, cx, parse_pattern)
    }
);

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Classifier",
    ports: "1/-",
    processing: "h/h",
    flow: "",
    source: include_str!("classifier.rs"),
    make: || Box::new(Classifier(ClassifyElem::new(Start::Data))),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn c(p: &[&str]) -> Program {
        compile(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn wildcards_masks_negation() {
        let p = c(&["0/1?34", "0/ff%0f !1/00", "-"]);
        assert_eq!(p.classify(&[0x1a, 0x34]), Some(0));
        assert_eq!(p.classify(&[0xff, 0x34]), Some(1));
        assert_eq!(p.classify(&[0x0f, 0x00]), Some(2));
        assert_eq!(p.classify(&[0x0f]), Some(1)); // !1/00 holds on a short packet
        let p = c(&["2/0102030405", "-"]);
        assert_eq!(p.classify(&[0, 0, 1, 2, 3, 4, 5]), Some(0));
        assert_eq!(p.classify(&[0, 0, 1, 2, 3, 4, 6]), Some(1));
        assert_eq!(p.classify(&[0, 0, 1, 2, 3, 4]), Some(1));
    }

    #[test]
    fn errors_name_the_clause() {
        let e = compile(&["12/080".into()]).unwrap_err();
        assert!(e.contains("'12/080'"), "{}", e);
        assert!(compile(&["x/08".into()]).unwrap_err().contains("offset"));
        assert!(compile(&["1/0g".into()]).is_err());
        assert!(compile(&["1/00%0".into()]).is_err());
        assert!(compile(&["99999/00".into()]).is_err());
    }
}
