//! The rewriters' input specifications and patterns (Click's `IPRewriterInput` and
//! `IPRewriterPattern`): parsing, unparsing for the `patterns` handler, and choosing the
//! rewritten flow of a new mapping.

use std::fmt;
use std::net::Ipv4Addr;

use sluice_lang::args::{split_words, FromArg};

use super::flow_table::FlowId;
use super::mapper::SharedMapper;

/// A rewriting pattern, `SADDR SPORT DADDR DPORT`, `SADDR DADDR SPORT` (three words, as in
/// Click: ICMPPingRewriter's `SADDR DADDR IDENT`) or `SADDR DADDR` (the address-only
/// rewriters): each field is a value or unchanged (`-`, kept as 0). One source field, the
/// address or the port, may be a range from which a free value is chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    saddr: u32,
    sport: u16,
    daddr: u32,
    dport: u16,
    /// Size of the range minus one (0: no range); the range starts at `sport` (with ports) or
    /// at `saddr` (address-only).
    variation: u32,
    /// True when the pattern has ports (three or four words).
    napt: bool,
    /// `#`: values are tried in order, after the last one chosen.
    sequential: bool,
    /// Neither `#` nor `?`: the packet's own source value is preferred when it is in range.
    same_first: bool,
    /// Where a sequential search starts next.
    next: u32,
}

/// A parse error of a pattern, with Click's message.
pub type PatternError = &'static str;

/// `A-B` or `ADDR/LEN` with an optional `#` or `?` suffix: the first address and the size of
/// the range minus one (a prefix leaves out its network and broadcast addresses).
fn address_range(word: &str) -> Option<(u32, u32, Option<char>)> {
    let (body, flag) = split_flag(word);
    if let Some((a, b)) = body.split_once('-') {
        let (a, b) = (Ipv4Addr::from_arg(a).ok()?, Ipv4Addr::from_arg(b).ok()?);
        let (a, b) = (u32::from(a), u32::from(b));
        return (b >= a).then_some((a, b - a, flag));
    }
    let (addr, len) = body.split_once('/')?;
    let addr = u32::from(Ipv4Addr::from_arg(addr).ok()?);
    let len: u32 = len.parse().ok().filter(|l| (1..=32).contains(l))?;
    let mask = u32::MAX << (32 - len);
    if addr == 0 {
        return None;
    }
    Some(match len {
        32 => (addr, 0, flag),
        31 => (addr & mask, 1, flag),
        _ => ((addr & mask) | 1, !mask - 2, flag),
    })
}

/// `L-H` with an optional `#` or `?` suffix.
fn port_range(word: &str) -> Option<(u16, u32, Option<char>)> {
    let (body, flag) = split_flag(word);
    let (a, b) = body.split_once('-')?;
    let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
    (b >= a && b < 65536).then_some((a as u16, b - a, flag))
}

/// Splits a trailing `#` or `?` off a word.
fn split_flag(word: &str) -> (&str, Option<char>) {
    match word.chars().last() {
        Some(c @ ('#' | '?')) => (&word[..word.len() - 1], Some(c)),
        _ => (word, None),
    }
}

/// A single port, 1–65535.
fn port(word: &str) -> Option<u16> {
    word.parse::<u16>().ok().filter(|&p| p > 0)
}

impl Pattern {
    /// Parses the 2 to 4 words of a pattern (`SADDR DADDR`, `SADDR DADDR SPORT`, `SADDR SPORT
    /// DADDR DPORT`).
    pub fn parse(words: &[String]) -> Result<Pattern, PatternError> {
        if !(2..=4).contains(&words.len()) {
            return Err("syntax error");
        }
        let mut pat = Pattern {
            saddr: 0,
            sport: 0,
            daddr: 0,
            dport: 0,
            variation: 0,
            napt: words.len() >= 3,
            sequential: false,
            same_first: true,
            next: 0,
        };
        let mut flag = None;
        let w = &words[0];
        if w != "-" {
            if let Ok(a) = Ipv4Addr::from_arg(w) {
                pat.saddr = u32::from(a);
            } else if let Some((a, v, f)) = address_range(w) {
                (pat.saddr, pat.variation, flag) = (a, v, f);
            } else {
                return Err("bad source address");
            }
        }
        // Three words put the source port last, as Click does.
        let (sport_at, daddr_at) = if words.len() == 3 { (2, 1) } else { (1, 2) };
        if pat.napt {
            let w = &words[sport_at];
            if w != "-" {
                if let Some(p) = port(w) {
                    pat.sport = p;
                } else if let Some((p, v, f)) = port_range(w) {
                    (pat.sport, pat.variation, flag) = (p, v, f);
                } else {
                    return Err("bad source port");
                }
            }
        }
        let w = &words[if pat.napt { daddr_at } else { 1 }];
        if w != "-" {
            pat.daddr = u32::from(Ipv4Addr::from_arg(w).map_err(|_| "bad destination address")?);
        }
        if words.len() == 4 && words[3] != "-" {
            pat.dport = port(&words[3]).ok_or("bad destination port")?;
        }
        match flag {
            Some('#') => (pat.sequential, pat.same_first) = (true, false),
            Some(_) => pat.same_first = false,
            None => {}
        }
        Ok(pat)
    }

    /// The flow a new mapping for `flow` rewrites it to, or `None` when every value of the
    /// range is taken. `taken(reply)` says whether a mapping for reply flow `reply` exists.
    pub fn rewrite(&mut self, flow: &FlowId, taken: impl Fn(&FlowId) -> bool) -> Option<FlowId> {
        let mut out = *flow;
        if self.saddr != 0 {
            out.saddr = Ipv4Addr::from(self.saddr);
        }
        if self.sport != 0 {
            out.sport = self.sport;
        }
        if self.daddr != 0 {
            out.daddr = Ipv4Addr::from(self.daddr);
        }
        if self.dport != 0 {
            out.dport = self.dport;
        }
        if self.variation == 0 {
            return Some(out);
        }
        let base = if self.napt {
            u32::from(self.sport)
        } else {
            self.saddr
        };
        let top = self.variation;
        let with = |v: u32| {
            let mut f = out;
            if self.napt {
                f.sport = (base + v) as u16;
            } else {
                f.saddr = Ipv4Addr::from(base.wrapping_add(v));
            }
            f
        };
        if self.same_first {
            let own = u32::from(flow.sport).wrapping_sub(base);
            if own <= top && !taken(&with(own).reverse()) {
                self.next = own.wrapping_add(1);
                return Some(with(own));
            }
        }
        let mut v = if self.sequential {
            if self.next > top {
                0
            } else {
                self.next
            }
        } else {
            crate::standard::util::random_u32() % top.saturating_add(1).max(1)
        };
        for _ in 0..=top {
            let cand = with(v);
            if !taken(&cand.reverse()) {
                self.next = v.wrapping_add(1);
                return Some(cand);
            }
            v = if v == top { 0 } else { v + 1 };
        }
        None
    }
}

impl fmt::Display for Pattern {
    /// Click's unparsed form, as the `patterns` handler shows it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let addr = |a: u32| Ipv4Addr::from(a).to_string();
        let opt = |a: u32| if a == 0 { "-".to_string() } else { addr(a) };
        if !self.napt && self.variation != 0 {
            write!(
                f,
                "{}-{}",
                addr(self.saddr),
                addr(self.saddr.wrapping_add(self.variation))
            )?;
        } else {
            write!(f, "{}", opt(self.saddr))?;
        }
        if self.napt {
            match (self.sport, self.variation) {
                (0, _) => write!(f, " -")?,
                (p, 0) => write!(f, " {p}")?,
                (p, v) => write!(f, " {}-{}", p, u32::from(p) + v)?,
            }
        }
        write!(f, " {}", opt(self.daddr))?;
        if self.napt {
            match self.dport {
                0 => write!(f, " -")?,
                p => write!(f, " {p}")?,
            }
        }
        Ok(())
    }
}

/// A pattern as an input specification names it.
#[derive(Clone, Debug)]
pub enum PatternRef {
    /// Written in the specification.
    Own(Pattern),
    /// The name of a pattern an IPRewriterPatterns element defines, looked up at
    /// initialisation.
    Named(String),
}

/// A mapper element as an input specification names it.
#[derive(Clone, Debug)]
pub enum MapperRef {
    /// The element's name, looked up at initialisation.
    Named(String),
    /// The mapper's state, shared with the element and the other rewriters using it.
    Found(SharedMapper),
}

/// What an input does with a packet no mapping matches.
#[derive(Clone, Debug)]
pub enum InputSpec {
    /// `drop` or `discard`.
    Drop,
    /// `pass OUTPUT` (also `passthrough`, `nochange`): sent on unchanged, no mapping.
    Pass(usize),
    /// `keep FOUTPUT ROUTPUT`: a mapping that changes nothing.
    Keep(usize, usize),
    /// `pattern ... FOUTPUT ROUTPUT`: a mapping rewritten by the pattern.
    Pattern(PatternRef, usize, usize),
    /// `MAPPER`: the name of a RoundRobinIPMapper or SourceIPHashMapper element, which
    /// chooses a pattern and the outputs of each new mapping.
    Mapper(MapperRef),
}

/// Parses an output number.
fn output(word: &str, what: &'static str) -> Result<usize, String> {
    word.parse().map_err(|_| what.to_string())
}

impl InputSpec {
    /// Parses one input specification; outputs must be below `noutputs`; `is_element` says
    /// whether a word names an element (a mapper). Errors carry Click's messages without the
    /// `input spec N: ` prefix.
    pub fn parse(
        text: &str,
        noutputs: usize,
        is_element: impl Fn(&str) -> bool,
    ) -> Result<InputSpec, String> {
        let words = split_words(text);
        let Some((word, rest)) = words.split_first() else {
            return Err("empty argument".into());
        };
        let in_range = |o: usize| {
            if o < noutputs {
                Ok(o)
            } else {
                Err("output port out of range".to_string())
            }
        };
        let ports = |rest: &[String]| -> Result<(usize, usize), String> {
            let [f, r] = rest else {
                return Err("bad forward port".into());
            };
            let f = output(f, "bad forward port")?;
            let r = output(r, "bad reply port")?;
            Ok((in_range(f)?, in_range(r)?))
        };
        match word.as_str() {
            "pass" | "passthrough" | "nochange" => match rest {
                [] => Ok(InputSpec::Pass(in_range(0)?)),
                [o] => Ok(InputSpec::Pass(in_range(output(
                    o,
                    "syntax error, expected 'nochange [OUTPUT]'",
                )?)?)),
                _ => Err("syntax error, expected 'nochange [OUTPUT]'".into()),
            },
            "keep" => {
                let (f, r) = ports(rest)?;
                Ok(InputSpec::Keep(f, r))
            }
            "drop" | "discard" if rest.is_empty() => Ok(InputSpec::Drop),
            "drop" | "discard" => Err(format!("syntax error, expected '{word}'")),
            "pattern" | "xpattern" => {
                if rest.len() <= 2 {
                    return Err("syntax error".into());
                }
                let (pat, outs) = rest.split_at(rest.len() - 2);
                let pat = match pat {
                    [name] => PatternRef::Named(name.clone()),
                    _ => PatternRef::Own(Pattern::parse(pat)?),
                };
                let (f, r) = ports(outs)?;
                Ok(InputSpec::Pattern(pat, f, r))
            }
            name if is_element(name) => match rest {
                [] => Ok(InputSpec::Mapper(MapperRef::Named(name.to_string()))),
                _ => Err("syntax error, expected element name".into()),
            },
            _ => Err("unknown specification".into()),
        }
    }

    /// The `patterns` handler's form of this specification.
    pub fn unparse(&self) -> String {
        match self {
            InputSpec::Drop => "<drop>".into(),
            InputSpec::Pass(_) => "<nochange>".into(),
            InputSpec::Keep(..) => "<keep>".into(),
            InputSpec::Pattern(PatternRef::Own(p), ..) => p.to_string(),
            InputSpec::Pattern(PatternRef::Named(n), ..) => n.clone(),
            InputSpec::Mapper(_) => "<mapper>".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn flow(sa: [u8; 4], sp: u16, da: [u8; 4], dp: u16) -> FlowId {
        FlowId {
            saddr: sa.into(),
            sport: sp,
            daddr: da.into(),
            dport: dp,
        }
    }

    #[test]
    fn patterns_parse_and_unparse_as_click() {
        for text in [
            "198.18.0.1 1 - -",
            "198.18.0.1 1-65535 - -",
            "198.18.0.1 - - -",
            "- - 198.19.0.1 80",
            "198.18.0.1-198.18.0.9 -",
        ] {
            assert_eq!(Pattern::parse(&words(text)).unwrap().to_string(), text);
        }
        assert_eq!(
            Pattern::parse(&words("198.18.0.0/24 -"))
                .unwrap()
                .to_string(),
            "198.18.0.1-198.18.0.254 -"
        );
        for (text, err) in [
            ("198.18.0.1 1x - -", "bad source port"),
            ("198.18.0.1 0-255 - -", ""),
            ("198.18.0.1 456-19 - -", "bad source port"),
            ("198.18.0.1 456-65536 - -", "bad source port"),
            ("x 1 - -", "bad source address"),
            ("- 1 y -", "bad destination address"),
            ("- 1 - 0", "bad destination port"),
            ("-", "syntax error"),
        ] {
            assert_eq!(
                Pattern::parse(&words(text)).err().unwrap_or(""),
                err,
                "{text}"
            );
        }
    }

    #[test]
    fn sequential_ranges_skip_taken_ports_and_wrap() {
        let mut p = Pattern::parse(&words("198.18.0.1 1024-1026# - -")).unwrap();
        let f = flow([198, 19, 0, 1], 7, [198, 19, 0, 2], 80);
        let taken = |r: &FlowId| r.dport == 1025;
        assert_eq!(p.rewrite(&f, taken).unwrap().sport, 1024);
        assert_eq!(p.rewrite(&f, taken).unwrap().sport, 1026);
        assert_eq!(p.rewrite(&f, taken).unwrap().sport, 1024);
        assert!(p.rewrite(&f, |_| true).is_none());
        // Without '#', the packet's own port is preferred when free.
        let mut p = Pattern::parse(&words("198.18.0.1 1000-2000 - -")).unwrap();
        let f = flow([198, 19, 0, 1], 1500, [198, 19, 0, 2], 80);
        assert_eq!(p.rewrite(&f, |_| false).unwrap().sport, 1500);
    }

    #[test]
    fn input_specs_parse() {
        let parse = |s: &str, n: usize| InputSpec::parse(s, n, |w| w == "rr");
        assert!(matches!(parse("drop", 1), Ok(InputSpec::Drop)));
        assert!(matches!(parse("pass 1", 2), Ok(InputSpec::Pass(1))));
        assert!(matches!(parse("keep 0 1", 2), Ok(InputSpec::Keep(0, 1))));
        assert!(matches!(
            parse("pattern pat 0 1", 2),
            Ok(InputSpec::Pattern(PatternRef::Named(_), 0, 1))
        ));
        assert!(matches!(
            parse("rr", 2),
            Ok(InputSpec::Mapper(MapperRef::Named(n))) if n == "rr"
        ));
        assert_eq!(
            parse("keep 0 2", 2).unwrap_err(),
            "output port out of range"
        );
        assert_eq!(parse("bogus", 2).unwrap_err(), "unknown specification");
        assert_eq!(
            parse("rr 1", 2).unwrap_err(),
            "syntax error, expected element name"
        );
    }

    #[test]
    fn three_word_patterns_put_the_source_port_last() {
        let p = Pattern::parse(&words("198.18.0.2 198.19.0.1 1000-1009#")).unwrap();
        assert_eq!(p.to_string(), "198.18.0.2 1000-1009 198.19.0.1 -");
        assert!(p.sequential);
    }
}
