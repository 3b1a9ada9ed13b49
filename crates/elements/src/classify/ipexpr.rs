//! The tcpdump-like expression language of IPClassifier and IPFilter, parsed into
//! [`Expr`]essions over word tests on the IP header (and the transport header after it).
//!
//! Grammar: `expr := or ['?' expr ':' expr]`, `or := and (('or'|'||') and)*`,
//! `and := factor (['and'|'&&'] factor)*` (adjacent factors are ANDed), `factor := ('not'|'!')
//! factor | '(' expr ')' | primitive`. A bare value after a primitive repeats its qualifiers:
//! `src port 80 or 81` is `src port 80 or src port 81`.

use sluice_lang::args::FromArg;
use sluice_wire::EtherAddr;

use super::program::{Base, Expr, Op, Test};
use crate::ip::common::service_port;
use crate::lookup::table::parse_prefix;

const IP_PROTOS: &[(&str, u32)] = &[
    ("icmp", 1),
    ("igmp", 2),
    ("ipip", 4),
    ("tcp", 6),
    ("udp", 17),
];

/// The `tcpudp` qualifier: TCP or UDP (Click's port primitives take either).
const TCPUDP: u32 = 0x100;

const TCP_OPTS: &[(&str, u32)] = &[
    ("fin", 0x01),
    ("syn", 0x02),
    ("rst", 0x04),
    ("psh", 0x08),
    ("ack", 0x10),
    ("urg", 0x20),
];

const ICMP_TYPES: &[(&str, u32)] = &[
    ("echo-reply", 0),
    ("unreachable", 3),
    ("sourcequench", 4),
    ("redirect", 5),
    ("echo", 8),
    ("routeradvert", 9),
    ("routersolicit", 10),
    ("timeexceeded", 11),
    ("parameterproblem", 12),
    ("timestamp", 13),
    ("timestamp-reply", 14),
    ("inforeq", 15),
    ("inforeq-reply", 16),
    ("maskreq", 17),
    ("maskreq-reply", 18),
];

fn name_of(table: &[(&str, u32)], w: &str) -> Option<u32> {
    table.iter().find(|(n, _)| *n == w).map(|(_, v)| *v)
}

fn parse_int(w: &str) -> Option<u32> {
    if let Some(h) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        u32::from_str_radix(h, 16).ok()
    } else {
        w.parse().ok()
    }
}

/// Splits an expression into tokens: words, parentheses, `!`, `&&`, `||`, comparison operators.
/// A word of hex digits may go on over colons (an Ethernet address); the `?:` operator's colon
/// stands apart from such a word.
fn tokenize(s: &str) -> Vec<String> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
            continue;
        }
        let two: String = c[i..(i + 2).min(c.len())].iter().collect();
        if ["&&", "||", "==", "!=", "<=", ">="].contains(&two.as_str()) {
            out.push(two);
            i += 2;
            continue;
        }
        if "()!<>&?:".contains(ch) {
            out.push(ch.to_string());
            i += 1;
            continue;
        }
        // A data field `ip[POS:LEN]` / `transp[POS:LEN]` is one token despite its ':'.
        let rest: String = c[i..(i + 7).min(c.len())].iter().collect();
        if rest.starts_with("ip[") || rest.starts_with("transp[") {
            if let Some(j) = c[i..].iter().position(|&x| x == ']') {
                out.push(c[i..=i + j].iter().collect());
                i += j + 1;
                continue;
            }
        }
        let st = i;
        // An Ethernet address (`0:1:2:3:4:5`) is one word despite its colons.
        let ether_colon = |i: usize| {
            c[i] == ':'
                && c.get(i + 1).is_some_and(|x| x.is_ascii_hexdigit())
                && c[st..i].iter().all(|x| x.is_ascii_hexdigit() || *x == ':')
        };
        while i < c.len()
            && !c[i].is_whitespace()
            && (!"()!<>&?:=|".contains(c[i]) || (i > st && ether_colon(i)))
        {
            i += 1;
        }
        if i == st {
            out.push(ch.to_string());
            i += 1;
        } else {
            out.push(c[st..i].iter().collect());
        }
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SrcDst {
    Src,
    Dst,
    Or,
    And,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Host,
    Net,
    Port,
    Proto,
    Vers,
    Hl,
    Id,
    Tos,
    Dscp,
    Ttl,
    Frag,
    Unfrag,
    Ect,
    Ce,
    Opt,
    Win,
    IcmpType,
    /// An Ethernet address in the MAC header (`ether host ETH`, or a bare Ethernet address).
    Ether,
}

/// The qualifiers of a primitive, kept to interpret a following bare value.
#[derive(Clone, Copy, Debug)]
struct Quals {
    sd: Option<SrcDst>,
    proto: Option<u32>,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rel {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

struct Parser {
    toks: Vec<String>,
    pos: usize,
    last: Option<Quals>,
}

fn ip_field(off: u16, width: u8, fmask: u32, op: Op, v: u32) -> Expr {
    Expr::Test(Test::field(Base::Net, off, width, fmask, op, v))
}

fn proto_is(p: u32) -> Expr {
    ip_field(9, 1, 0xff, Op::Eq, p)
}

fn first_frag() -> Expr {
    ip_field(6, 2, 0x1fff, Op::Eq, 0)
}

/// Applies a relation to a field test. Every relation is false on a packet too short to hold
/// the field, as in Click (`transp[1] != 0` does not match a packet without that byte, while
/// `!(transp[1] == 0)` does), so `!=`, `<=` and `>=` are unions of the strict tests rather
/// than negations.
fn relate(rel: Rel, mk: &dyn Fn(Op, u32) -> Expr, v: u32) -> Expr {
    match rel {
        Rel::Eq => mk(Op::Eq, v),
        Rel::Ne => Expr::or(mk(Op::Gt, v), mk(Op::Lt, v)),
        Rel::Lt => mk(Op::Lt, v),
        Rel::Gt => mk(Op::Gt, v),
        Rel::Le => Expr::or(mk(Op::Lt, v), mk(Op::Eq, v)),
        Rel::Ge => Expr::or(mk(Op::Gt, v), mk(Op::Eq, v)),
    }
}

fn is_kind_word(w: &str) -> Option<Kind> {
    Some(match w {
        "host" => Kind::Host,
        "net" => Kind::Net,
        "port" => Kind::Port,
        "proto" => Kind::Proto,
        "vers" => Kind::Vers,
        "hl" => Kind::Hl,
        "id" => Kind::Id,
        "tos" => Kind::Tos,
        "dscp" => Kind::Dscp,
        "ttl" => Kind::Ttl,
        "frag" => Kind::Frag,
        "unfrag" => Kind::Unfrag,
        "ect" => Kind::Ect,
        "ce" => Kind::Ce,
        "opt" => Kind::Opt,
        "win" => Kind::Win,
        "type" => Kind::IcmpType,
        _ => return None,
    })
}

/// Operators on the parser's stack, loosest binding first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Oper {
    Paren,
    /// `c ?` waiting for its `:`.
    Then,
    /// `c ? a :` waiting for its last operand.
    Else,
    Or,
    And,
    Not,
}

/// Applies one operator to the operands on top of `vals`.
fn reduce(op: Oper, vals: &mut Vec<Expr>) -> Result<(), String> {
    let mut pop = || {
        vals.pop()
            .ok_or_else(|| "expression ends too early".to_string())
    };
    let e = match op {
        Oper::Not => Expr::not(pop()?),
        Oper::And => {
            let b = pop()?;
            Expr::and(pop()?, b)
        }
        Oper::Or => {
            let b = pop()?;
            Expr::or(pop()?, b)
        }
        Oper::Else => {
            let b = pop()?;
            let a = pop()?;
            Expr::cond(pop()?, a, b)
        }
        Oper::Then => return Err("expected ':' in '?:' expression".into()),
        Oper::Paren => return Err("missing ')'".into()),
    };
    vals.push(e);
    Ok(())
}

/// Applies the operators on top of the stack that bind at least as tightly as `op`.
fn reduce_above(ops: &mut Vec<Oper>, vals: &mut Vec<Expr>, op: Oper) -> Result<(), String> {
    while let Some(&top) = ops.last() {
        if top < op {
            break;
        }
        ops.pop();
        reduce(top, vals)?;
    }
    Ok(())
}

impl Parser {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(|s| s.as_str())
    }

    fn peek_at(&self, k: usize) -> Option<&str> {
        self.toks.get(self.pos + k).map(|s| s.as_str())
    }

    fn next(&mut self) -> Option<String> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    /// The whole expression, by operator precedence with explicit stacks: nesting depth
    /// (parentheses, `not`, `?:`) costs heap, never stack.
    fn expr(&mut self) -> Result<Expr, String> {
        let mut ops: Vec<Oper> = Vec::new();
        let mut vals: Vec<Expr> = Vec::new();
        loop {
            // An operand is expected.
            match self.peek() {
                None => return Err("expression ends too early".into()),
                Some("not") | Some("!") => {
                    self.pos += 1;
                    ops.push(Oper::Not);
                    continue;
                }
                Some("(") => {
                    self.pos += 1;
                    ops.push(Oper::Paren);
                    continue;
                }
                Some(")") => return Err("unexpected ')'".into()),
                Some(_) => {
                    let e = self.primitive()?;
                    vals.push(e);
                }
            }
            // An operator, a ')' or the end is expected.
            loop {
                match self.peek() {
                    None => {
                        while let Some(op) = ops.pop() {
                            if op == Oper::Paren {
                                return Err("missing ')'".into());
                            }
                            reduce(op, &mut vals)?;
                        }
                        return vals.pop().ok_or_else(|| "empty pattern".into());
                    }
                    Some(")") => {
                        loop {
                            match ops.pop() {
                                Some(Oper::Paren) => break,
                                Some(op) => reduce(op, &mut vals)?,
                                None => return Err("unexpected ')'".into()),
                            }
                        }
                        self.pos += 1;
                        continue;
                    }
                    Some("?") => {
                        self.pos += 1;
                        reduce_above(&mut ops, &mut vals, Oper::Or)?;
                        ops.push(Oper::Then);
                    }
                    Some(":") => {
                        self.pos += 1;
                        loop {
                            match ops.pop() {
                                Some(Oper::Then) => break,
                                Some(Oper::Paren) | None => {
                                    return Err("':' without '?'".into());
                                }
                                Some(op) => reduce(op, &mut vals)?,
                            }
                        }
                        ops.push(Oper::Else);
                    }
                    Some("or") | Some("||") => {
                        self.pos += 1;
                        reduce_above(&mut ops, &mut vals, Oper::Or)?;
                        ops.push(Oper::Or);
                    }
                    Some(w) => {
                        // `and`, `&&`, or adjacent factors (an implicit `and`).
                        if w == "and" || w == "&&" {
                            self.pos += 1;
                        }
                        reduce_above(&mut ops, &mut vals, Oper::And)?;
                        ops.push(Oper::And);
                    }
                }
                break;
            }
        }
    }

    fn relation(&mut self) -> Rel {
        let r = match self.peek() {
            Some("==") | Some("=") => Rel::Eq,
            Some("!=") => Rel::Ne,
            Some("<") => Rel::Lt,
            Some(">") => Rel::Gt,
            Some("<=") => Rel::Le,
            Some(">=") => Rel::Ge,
            _ => return Rel::Eq,
        };
        self.pos += 1;
        r
    }

    /// `ip[POS]`, `ip[POS:LEN]`, `transp[POS:LEN]`: the base, byte offset and width (1–4).
    fn data_field(w: &str) -> Option<Result<(Base, u16, u8), String>> {
        let (base, inner) = if let Some(r) = w.strip_prefix("ip[") {
            (Base::Net, r)
        } else {
            (Base::Transp, w.strip_prefix("transp[")?)
        };
        let inner = inner.strip_suffix(']')?;
        let (pos, len) = inner.split_once(':').unwrap_or((inner, "1"));
        let pos = parse_int(pos.trim()).filter(|p| *p <= 0xfff0);
        let len = parse_int(len.trim()).filter(|l| (1..=4).contains(l));
        Some(match (pos, len) {
            (Some(p), Some(l)) => Ok((base, p as u16, l as u8)),
            _ => Err(format!(
                "'{}': expected [POS] or [POS:LEN] with LEN 1 to 4",
                w
            )),
        })
    }

    /// The rest of a data-field primitive: `[REL] [& MASK [REL]] VALUE`.
    fn data_test(&mut self, base: Base, pos: u16, len: u8) -> Result<Expr, String> {
        let full = if len == 4 {
            u32::MAX
        } else {
            (1u32 << (8 * len as u32)) - 1
        };
        let rel = self.relation();
        let mut fmask = full;
        let rel = if self.peek() == Some("&") {
            self.pos += 1;
            let m = self.next().unwrap_or_default();
            fmask &= parse_int(&m).ok_or_else(|| format!("bad mask '{}'", m))?;
            self.relation_or(rel)
        } else {
            rel
        };
        let word = self.next().ok_or("missing value")?;
        let v = parse_int(&word)
            .filter(|v| *v <= full)
            .ok_or_else(|| format!("bad value '{}'", word))?;
        let t = relate(
            rel,
            &|op, v| Expr::Test(Test::field(base, pos, len, fmask, op, v)),
            v,
        );
        self.last = None;
        Ok(match base {
            Base::Transp => Expr::and(first_frag(), t),
            Base::Net | Base::Mac => t,
        })
    }

    fn primitive(&mut self) -> Result<Expr, String> {
        let first = self.peek().unwrap_or("").to_string();
        if let Some(f) = Self::data_field(&first) {
            let (base, pos, len) = f?;
            self.pos += 1;
            return self.data_test(base, pos, len);
        }
        match first.as_str() {
            "true" | "any" | "all" | "-" => {
                self.pos += 1;
                return Ok(Expr::True);
            }
            "false" => {
                self.pos += 1;
                return Ok(Expr::False);
            }
            _ => {}
        }
        let mut sd = None;
        let mut proto: Option<u32> = None;
        let mut ip_qual = false;
        let mut ether = false;
        let mut kind = None;
        while let Some(w) = self.peek().map(|s| s.to_string()) {
            match w.as_str() {
                "src" | "dst" if sd.is_none() && kind.is_none() => {
                    self.pos += 1;
                    let base = if w == "src" { SrcDst::Src } else { SrcDst::Dst };
                    let other = if w == "src" { "dst" } else { "src" };
                    sd = Some(base);
                    if matches!(self.peek(), Some("or") | Some("and"))
                        && self.peek_at(1) == Some(other)
                    {
                        sd = Some(if self.peek() == Some("or") {
                            SrcDst::Or
                        } else {
                            SrcDst::And
                        });
                        self.pos += 2;
                    }
                }
                "ip" if !ip_qual && proto.is_none() && kind.is_none() => {
                    ip_qual = true;
                    self.pos += 1;
                }
                "ether" if !ether && proto.is_none() && kind.is_none() => {
                    ether = true;
                    self.pos += 1;
                }
                "tcp" | "udp" | "icmp"
                    if proto.is_none()
                        && kind.is_none()
                        && self.peek_at(1).is_some_and(|n| {
                            is_kind_word(n).is_some()
                                || (w == "icmp" && name_of(ICMP_TYPES, n).is_some())
                                || (w != "icmp" && service_port(n).is_some())
                        }) =>
                {
                    proto = name_of(IP_PROTOS, &w);
                    self.pos += 1;
                }
                "tcpudp"
                    if proto.is_none()
                        && kind.is_none()
                        && self
                            .peek_at(1)
                            .is_some_and(|n| is_kind_word(n) == Some(Kind::Port)) =>
                {
                    proto = Some(TCPUDP);
                    self.pos += 1;
                }
                _ => {
                    if kind.is_none() {
                        if let Some(k) = is_kind_word(&w) {
                            kind = Some(k);
                            self.pos += 1;
                        }
                    }
                    break;
                }
            }
        }
        if ether {
            if !matches!(kind, None | Some(Kind::Host)) {
                return Err("'ether' needs 'host'".to_string());
            }
            kind = Some(Kind::Ether);
        }
        let quals_given = sd.is_some() || proto.is_some() || ip_qual || ether || kind.is_some();
        // Valueless kinds.
        match kind {
            Some(Kind::Frag) => return Ok(self.done(frag(true), sd, proto, Kind::Frag)),
            Some(Kind::Unfrag) => return Ok(self.done(frag(false), sd, proto, Kind::Unfrag)),
            Some(Kind::Ect) => {
                return Ok(self.done(
                    Expr::not(ip_field(1, 1, 3, Op::Eq, 0)),
                    sd,
                    proto,
                    Kind::Ect,
                ))
            }
            Some(Kind::Ce) => {
                return Ok(self.done(ip_field(1, 1, 3, Op::Eq, 3), sd, proto, Kind::Ce))
            }
            _ => {}
        }
        let rel = self.relation();
        let mut fmask: Option<u32> = None;
        if self.peek() == Some("&") {
            self.pos += 1;
            let m = self.next().unwrap_or_default();
            // An address mask for address primitives: `src & 255.0.0.0 = 10.0.0.0`.
            let addr = m.parse::<std::net::Ipv4Addr>().ok().map(u32::from);
            fmask = Some(
                parse_int(&m)
                    .or(addr)
                    .ok_or_else(|| format!("bad mask '{}'", m))?,
            );
        }
        let rel = if fmask.is_some() {
            self.relation_or(rel)
        } else {
            rel
        };
        let Some(word) = self.next() else {
            return Err(match kind {
                Some(_) => "missing value".to_string(),
                None if quals_given => "missing value".to_string(),
                None => "expression ends too early".to_string(),
            });
        };
        // Infer the kind of a bare value.
        let is_ether = |w: &str| w.contains([':', '-']) && EtherAddr::from_arg(w).is_ok();
        let kind = match kind {
            Some(Kind::Host) if !ip_qual && is_ether(&word) => Kind::Ether,
            Some(k) => k,
            None if !ip_qual && is_ether(&word) => Kind::Ether,
            None => {
                if ip_qual && proto.is_none() && name_of(IP_PROTOS, &word).is_some() {
                    Kind::Proto
                } else if word.contains('.') || word.contains('/') {
                    // A bare address after an address primitive repeats its `src`/`dst`
                    // (`src host 10.0.0.1 or 10.0.0.2`, `src 10.0.0.0 & 8.0.0.0 = 8.0.0.0`).
                    if let (Some(q), false) = (&self.last, quals_given) {
                        if matches!(q.kind, Kind::Host | Kind::Net) {
                            sd = q.sd;
                        }
                    }
                    if word.contains('/') || self.peek() == Some("mask") {
                        Kind::Net
                    } else {
                        Kind::Host
                    }
                } else if sd.is_none() && proto.is_none() && name_of(IP_PROTOS, &word).is_some() {
                    Kind::Proto
                } else if proto == Some(1) && name_of(ICMP_TYPES, &word).is_some() {
                    // `icmp echo-reply`: a type name after `icmp` (Click's ICMP type names).
                    Kind::IcmpType
                } else if name_of(TCP_OPTS, &word).is_some() && sd.is_none() {
                    proto = Some(6);
                    Kind::Opt
                } else if service_port(&word).is_some() {
                    // A bare service name after a port primitive repeats its `src`/`dst` and
                    // protocol (`dst tcp www or https`), as Click's data-only primitives do.
                    if let (Some(q), false) = (&self.last, quals_given) {
                        if matches!(q.kind, Kind::Port) {
                            sd = q.sd;
                            proto = q.proto;
                        }
                    }
                    Kind::Port
                } else if sd.is_none() && proto.is_none() && name_of(ICMP_TYPES, &word).is_some() {
                    proto = Some(1);
                    Kind::IcmpType
                } else if parse_int(&word).is_some() {
                    match (&self.last, quals_given) {
                        (Some(q), false) => {
                            sd = q.sd;
                            proto = q.proto;
                            q.kind
                        }
                        _ => return Err(format!("'{}': value without a type", word)),
                    }
                } else {
                    return Err(format!("unknown word '{}'", word));
                }
            }
        };
        let e = self.build(kind, sd, proto, rel, fmask, &word)?;
        Ok(self.done(e, sd, proto, kind))
    }

    fn relation_or(&mut self, dflt: Rel) -> Rel {
        let r = self.relation();
        if r == Rel::Eq && dflt != Rel::Eq {
            dflt
        } else {
            r
        }
    }

    /// Ends a primitive, remembering its qualifiers for a following bare value (`port 80 or
    /// 443`); a valueless primitive (`frag`, `ce`...) leaves nothing for a value to inherit.
    fn done(&mut self, e: Expr, sd: Option<SrcDst>, proto: Option<u32>, kind: Kind) -> Expr {
        let valueless = matches!(kind, Kind::Frag | Kind::Unfrag | Kind::Ect | Kind::Ce);
        self.last = (!valueless).then_some(Quals { sd, proto, kind });
        e
    }

    fn build(
        &mut self,
        kind: Kind,
        sd: Option<SrcDst>,
        proto: Option<u32>,
        rel: Rel,
        fmask: Option<u32>,
        word: &str,
    ) -> Result<Expr, String> {
        let bad = || format!("bad value '{}'", word);
        let int = |max: u32| -> Result<u32, String> {
            parse_int(word).filter(|v| *v <= max).ok_or_else(bad)
        };
        let simple = |off: u16, width: u8, full: u32, v: u32| {
            let m = fmask.unwrap_or(full) & full;
            relate(rel, &|op, v| ip_field(off, width, m, op, v), v)
        };
        let sd_combine = |f: &dyn Fn(u16) -> Expr| match sd.unwrap_or(SrcDst::Or) {
            SrcDst::Src => f(0),
            SrcDst::Dst => f(1),
            SrcDst::Or => Expr::or(f(0), f(1)),
            SrcDst::And => Expr::and(f(0), f(1)),
        };
        if sd.is_some() && !matches!(kind, Kind::Host | Kind::Net | Kind::Port | Kind::Ether) {
            return Err(format!("'src'/'dst' make no sense before '{}'", word));
        }
        if proto.is_some() && !matches!(kind, Kind::Port | Kind::Opt | Kind::Win | Kind::IcmpType) {
            return Err(format!(
                "protocol qualifier makes no sense before '{}'",
                word
            ));
        }
        Ok(match kind {
            Kind::Host | Kind::Net => {
                let (addr, len) = if kind == Kind::Net && self.peek() == Some("mask") {
                    self.pos += 1;
                    let m = self.next().unwrap_or_default();
                    let (a, _) = parse_prefix(&format!("{}/{}", word, m))
                        .map_err(|_| format!("bad network '{} mask {}'", word, m))?;
                    let (_, l) = parse_prefix(&format!("0/{}", m))
                        .map_err(|_| format!("bad mask '{}'", m))?;
                    (a, l)
                } else {
                    let (a, l) = parse_prefix(word).map_err(|_| bad())?;
                    if kind == Kind::Host && word.contains('/') {
                        return Err(format!("'{}': host address expected", word));
                    }
                    (a, l)
                };
                let mask = if len == 0 {
                    0
                } else {
                    u32::MAX << (32 - len as u32)
                };
                let mask = fmask.map_or(mask, |m| m & mask);
                sd_combine(&|which| {
                    relate(rel, &|op, v| ip_field(12 + 4 * which, 4, mask, op, v), addr)
                })
            }
            Kind::Port => {
                let v = service_port(word)
                    .map(u32::from)
                    .or_else(|| parse_int(word).filter(|v| *v <= 0xffff))
                    .ok_or_else(bad)?;
                let m = fmask.unwrap_or(0xffff) & 0xffff;
                let guard = match proto {
                    Some(p) if p == 6 || p == 17 => proto_is(p),
                    Some(TCPUDP) | None => Expr::or(proto_is(6), proto_is(17)),
                    Some(_) => return Err(format!("'port' needs tcp or udp, at '{}'", word)),
                };
                let t = sd_combine(&|which| {
                    relate(
                        rel,
                        &|op, v| Expr::Test(Test::field(Base::Transp, 2 * which, 2, m, op, v)),
                        v,
                    )
                });
                Expr::and(Expr::and(guard, first_frag()), t)
            }
            Kind::Proto => {
                let v = name_of(IP_PROTOS, word)
                    .map(Ok)
                    .unwrap_or_else(|| int(255))?;
                simple(9, 1, 0xff, v)
            }
            Kind::Vers => simple(0, 1, 0xf0, int(15)? << 4),
            Kind::Hl => simple(0, 1, 0x0f, int(15)?),
            Kind::Id => simple(4, 2, 0xffff, int(0xffff)?),
            Kind::Tos => simple(1, 1, 0xff, int(255)?),
            Kind::Dscp => simple(1, 1, 0xfc, int(63)? << 2),
            Kind::Ttl => simple(8, 1, 0xff, int(255)?),
            Kind::Opt => {
                if proto.is_some_and(|p| p != 6) {
                    return Err(format!("'opt' needs tcp, at '{}'", word));
                }
                let mut flags = name_of(TCP_OPTS, word)
                    .map(Ok)
                    .unwrap_or_else(|| int(255))?;
                // `tcp opt fin ack`: further flag names add to the set.
                while let Some(f) = self.peek().and_then(|w| name_of(TCP_OPTS, w)) {
                    flags |= f;
                    self.pos += 1;
                }
                let t = Expr::Test(Test::field(Base::Transp, 13, 1, flags, Op::Eq, flags));
                let t = if rel == Rel::Ne { Expr::not(t) } else { t };
                Expr::and(Expr::and(proto_is(6), first_frag()), t)
            }
            Kind::Win => {
                let v = int(0xffff)?;
                let m = fmask.unwrap_or(0xffff) & 0xffff;
                let t = relate(
                    rel,
                    &|op, v| Expr::Test(Test::field(Base::Transp, 14, 2, m, op, v)),
                    v,
                );
                Expr::and(Expr::and(proto_is(6), first_frag()), t)
            }
            Kind::IcmpType => {
                if proto.is_some_and(|p| p != 1) {
                    return Err(format!("'type' needs icmp, at '{}'", word));
                }
                let v = name_of(ICMP_TYPES, word)
                    .map(Ok)
                    .unwrap_or_else(|| int(255))?;
                let m = fmask.unwrap_or(0xff) & 0xff;
                let t = relate(
                    rel,
                    &|op, v| Expr::Test(Test::field(Base::Transp, 0, 1, m, op, v)),
                    v,
                );
                Expr::and(Expr::and(proto_is(1), first_frag()), t)
            }
            Kind::Ether => {
                if rel != Rel::Eq || fmask.is_some() {
                    return Err(format!(
                        "'{}': an Ethernet address is only compared whole",
                        word
                    ));
                }
                let b = EtherAddr::from_arg(word).map_err(|_| bad())?.0;
                // MAC offsets count from two bytes before the header (Click's layout): the
                // destination address is at 2..8, the source at 8..14, in aligned words.
                let mac = |off: u16, mask: u32, v: [u8; 4]| {
                    Expr::Test(Test::eq(Base::Mac, off, mask, u32::from_be_bytes(v)))
                };
                sd_combine(&|which| {
                    if which == 0 {
                        Expr::and(
                            mac(8, u32::MAX, [b[0], b[1], b[2], b[3]]),
                            mac(12, 0xffff_0000, [b[4], b[5], 0, 0]),
                        )
                    } else {
                        Expr::and(
                            mac(0, 0x0000_ffff, [0, 0, b[0], b[1]]),
                            mac(4, u32::MAX, [b[2], b[3], b[4], b[5]]),
                        )
                    }
                })
            }
            Kind::Frag | Kind::Unfrag | Kind::Ect | Kind::Ce => unreachable!("valueless"),
        })
    }
}

fn frag(yes: bool) -> Expr {
    let unfrag = ip_field(6, 2, 0x3fff, Op::Eq, 0);
    if yes {
        Expr::not(unfrag)
    } else {
        unfrag
    }
}

/// Parses one IPClassifier pattern.
pub fn parse(s: &str) -> Result<Expr, String> {
    let toks = tokenize(s);
    if toks.is_empty() {
        return Err("empty pattern".into());
    }
    let mut p = Parser {
        toks,
        pos: 0,
        last: None,
    };
    let e = p
        .expr()
        .map_err(|e| format!("pattern '{}': {}", s.trim(), e))?;
    if let Some(t) = p.peek() {
        return Err(format!("pattern '{}': unexpected '{}'", s.trim(), t));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::program::Program;

    #[test]
    fn bare_values_do_not_follow_valueless_primitives() {
        for e in ["ce 3", "ce or 3", "frag and 3", "ect || (3)"] {
            let err = parse(e).unwrap_err();
            assert!(err.ends_with("'3': value without a type"), "{e}: {err}");
        }
    }

    #[test]
    fn service_names_after_a_protocol_are_ports() {
        // Click's conf/mazu-nat.click: `dst tcp ssh`, `dst tcp www or https`.
        assert_eq!(
            parse("dst tcp ssh").unwrap(),
            parse("dst tcp port ssh").unwrap()
        );
        assert_eq!(
            parse("dst tcp www or https").unwrap(),
            parse("dst tcp port www or dst tcp port https").unwrap()
        );
        assert_eq!(
            parse("udp domain").unwrap(),
            parse("udp port domain").unwrap()
        );
    }

    #[test]
    fn tokens() {
        assert_eq!(
            tokenize("!(src host 1.2.3.4)&&port!=80||x"),
            vec!["!", "(", "src", "host", "1.2.3.4", ")", "&&", "port", "!=", "80", "||", "x"]
        );
    }

    #[test]
    fn data_fields() {
        assert_eq!(
            tokenize("ip[9:1] == 17 && transp[2:2]>1023"),
            vec!["ip[9:1]", "==", "17", "&&", "transp[2:2]", ">", "1023"]
        );
        assert_eq!(
            parse("ip[9] 17").unwrap(),
            Expr::Test(Test::field(Base::Net, 9, 1, 0xff, Op::Eq, 17))
        );
        assert_eq!(
            parse("ip[12:4] & 0xffffff00 == 0xc6120100").unwrap(),
            Expr::Test(Test::field(
                Base::Net,
                12,
                4,
                0xffffff00,
                Op::Eq,
                0xc6120100
            ))
        );
        assert_eq!(
            parse("transp[0:2] > 1023").unwrap(),
            Expr::and(
                first_frag(),
                Expr::Test(Test::field(Base::Transp, 0, 2, 0xffff, Op::Gt, 1023))
            )
        );
        for (s, w) in [
            ("ip[9:5] 1", "LEN 1 to 4"),
            ("ip[x] 1", "ip[x]"),
            ("ip[0:1] 256", "256"),
            ("ip[9]", "missing value"),
        ] {
            let e = parse(s).unwrap_err();
            assert!(e.contains(w), "{}: {}", s, e);
        }
    }

    #[test]
    fn deep_nesting_and_long_chains() {
        let n = 100_000;
        let deep = format!("{}tcp{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(parse(&deep).unwrap(), parse("tcp").unwrap());
        let nots = format!("{}tcp", "not ".repeat(n + 1));
        assert_eq!(parse(&nots).unwrap(), parse("not tcp").unwrap());
        let e = parse(&format!("{}tcp", "! (".repeat(n))).unwrap_err();
        assert!(e.contains("missing ')'"), "{e}");
        let chain: Vec<String> = (0..n).map(|i| format!("src port {}", i % 65536)).collect();
        let e = parse(&chain.join(" or ")).unwrap();
        let p = Program::compile(&[(e, Some(0))]);
        assert!(p.len() >= 65536, "{}", p.len());
        let alt = format!(
            "{}udp{}",
            "tcp and (icmp or (".repeat(n / 2),
            "))".repeat(n / 2)
        );
        assert!(parse(&alt).is_ok());
    }

    #[test]
    fn conditions_are_tested_once() {
        assert_eq!(
            parse("tcp ? udp : icmp").unwrap(),
            Expr::cond(proto_is(6), proto_is(17), proto_is(1))
        );
        assert_eq!(
            parse("tcp ? udp : icmp ? igmp : ipip").unwrap(),
            Expr::cond(
                proto_is(6),
                proto_is(17),
                Expr::cond(proto_is(1), proto_is(2), proto_is(4))
            )
        );
        // A condition nested in conditions 40 deep stays linear in size.
        let mut s = String::from("tcp");
        for i in 0..40 {
            s = format!("({}) ? ip ttl {} : ip ttl {}", s, i, i + 100);
        }
        let p = Program::compile(&[(parse(&s).unwrap(), Some(0))]);
        assert!(p.len() < 200, "{}", p.len());
        for (bad, why) in [
            ("tcp ? udp", "expected ':'"),
            ("tcp : udp", "':' without '?'"),
            ("(tcp ? udp) : icmp", "expected ':'"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn errors_name_the_word() {
        for (s, w) in [
            ("src foo 1", "foo"),
            ("ip proto 300", "300"),
            ("(tcp", ")"),
            ("tcp port", "missing value"),
            ("80", "80"),
            ("tcp ) udp", ")"),
            ("ip vers 16", "16"),
        ] {
            let e = parse(s).unwrap_err();
            assert!(e.contains(w), "{}: {}", s, e);
        }
    }
}
