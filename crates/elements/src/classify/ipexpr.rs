//! The tcpdump-like expression language of IPClassifier and IPFilter, parsed into
//! [`Expr`]essions over word tests on the IP header (and the transport header after it).
//! A primitive that belongs to one IP version tests the version nibble too ([`IS_IPV6`]):
//! IPv4 primitives hold on packets whose version is not 6 (every other packet reads as IPv4,
//! as in Click), IPv6 ones on packets whose version is 6; `tcp`, `udp`, ports and TCP fields
//! hold on both. [`Program::compile_ip`](super::program::Program::compile_ip) folds those
//! version tests away.
//!
//! Grammar: `expr := or ['?' expr ':' expr]`, `or := and (('or'|'||') and)*`,
//! `and := factor (['and'|'&&'] factor)*` (adjacent factors are ANDed), `factor := ('not'|'!')
//! factor | '(' expr ')' | primitive`. A bare value after a primitive repeats its qualifiers:
//! `src port 80 or 81` is `src port 80 or src port 81`.

use std::net::{Ipv4Addr, Ipv6Addr};

use sluice_lang::args::FromArg;
use sluice_wire::{EtherAddr, Ipv6Prefix};

use super::program::{Base, Expr, Op, Test, IS_IPV6};
use crate::ip::common::service_port;
use crate::lookup::table::parse_prefix;

const IP_PROTOS: &[(&str, u32)] = &[
    ("icmp", 1),
    ("igmp", 2),
    ("ipip", 4),
    ("tcp", 6),
    ("udp", 17),
    ("icmp6", 58),
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

/// ICMPv6 type names: Click's ICMP names where the type has one, and the RFC 4443/4861 names.
const ICMP6_TYPES: &[(&str, u32)] = &[
    ("unreachable", 1),
    ("packettoobig", 2),
    ("packet-too-big", 2),
    ("timeexceeded", 3),
    ("parameterproblem", 4),
    ("echo", 128),
    ("echo-request", 128),
    ("echo-reply", 129),
    ("mld-query", 130),
    ("mld-report", 131),
    ("mld-done", 132),
    ("routersolicit", 133),
    ("router-solicitation", 133),
    ("routeradvert", 134),
    ("router-advertisement", 134),
    ("neighborsolicit", 135),
    ("neighbor-solicitation", 135),
    ("neighboradvert", 136),
    ("neighbor-advertisement", 136),
    ("redirect", 137),
    ("mld2-report", 143),
];

/// IPv6's Fragment extension header (`ip6 frag`).
const IP6_FRAGMENT: u32 = 44;

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
        // An IPv6 address or prefix (`2001:db8::1`, `::1`, `2001:db8::/32`) is one word.
        if let Some(n) = ip6_word(&c[i..]) {
            out.push(c[i..i + n].iter().collect());
            i += n;
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

/// The length of the IPv6 address or prefix that starts `c`, if one does and ends its word.
fn ip6_word(c: &[char]) -> Option<usize> {
    let mut n = c
        .iter()
        .position(|x| !(x.is_ascii_hexdigit() || *x == ':' || *x == '.'))
        .unwrap_or(c.len());
    let addr: String = c[..n].iter().collect();
    if !addr.contains(':') || addr.parse::<Ipv6Addr>().is_err() {
        return None;
    }
    if c.get(n) == Some(&'/') {
        let digits = c[n + 1..].iter().take_while(|x| x.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        n += 1 + digits;
    }
    match c.get(n) {
        Some(x) if !x.is_whitespace() && !"()!<>&?=|".contains(*x) => None,
        _ => Some(n),
    }
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
    /// IPv6 next header (`ip6 nxt`, the same as `ip6 proto`).
    Nxt,
    /// IPv6 hop limit.
    Hlim,
    /// IPv6 flow label.
    Flow,
    /// IPv6 traffic class.
    Tc,
    /// IPv6 payload length.
    Plen,
}

/// The IP version a primitive was qualified with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fam {
    /// No qualifier: the version follows from the value, or either matches.
    Any,
    /// `ip`: IPv4 (any packet whose version is not 6).
    Ip,
    /// `ip6`: IPv6.
    Ip6,
}

/// The qualifiers of a primitive, kept to interpret a following bare value.
#[derive(Clone, Copy, Debug)]
struct Quals {
    sd: Option<SrcDst>,
    proto: Option<u32>,
    fam: Fam,
    kind: Kind,
}

/// A primitive as read up to its value.
#[derive(Clone, Copy, Debug)]
struct Prim {
    kind: Kind,
    sd: Option<SrcDst>,
    proto: Option<u32>,
    fam: Fam,
    rel: Rel,
    /// `& MASK` with a number or an IPv4 address.
    fmask: Option<u32>,
    /// `& MASK` with an IPv6 address.
    mask6: Option<u128>,
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

fn nxt_is(p: u32) -> Expr {
    ip_field(6, 1, 0xff, Op::Eq, p)
}

fn first_frag() -> Expr {
    ip_field(6, 2, 0x1fff, Op::Eq, 0)
}

/// The packet is IPv6.
fn is6() -> Expr {
    Expr::Test(IS_IPV6)
}

/// `e` on IPv4 packets (any whose version is not 6).
fn v4(e: Expr) -> Expr {
    Expr::and(Expr::not(is6()), e)
}

/// `e` on IPv6 packets.
fn v6(e: Expr) -> Expr {
    Expr::and(is6(), e)
}

/// `four` on IPv4 packets, `six` on IPv6 packets, as `fam` allows.
fn by_family(fam: Fam, four: impl FnOnce() -> Expr, six: impl FnOnce() -> Expr) -> Expr {
    match fam {
        Fam::Ip => v4(four()),
        Fam::Ip6 => v6(six()),
        Fam::Any => Expr::or(v4(four()), v6(six())),
    }
}

/// Packets of family `fam` whose transport header of protocol `p` (or TCP or UDP for
/// [`TCPUDP`]) transport tests read: IPv4 first fragments of that protocol, IPv6 packets
/// whose (first) next header is that protocol.
fn transport(p: u32, fam: Fam) -> Expr {
    let is = |f: fn(u32) -> Expr| {
        if p == TCPUDP {
            Expr::or(f(6), f(17))
        } else {
            f(p)
        }
    };
    by_family(fam, || Expr::and(is(proto_is), first_frag()), || is(nxt_is))
}

/// `src` (`which` 0) or `dst` (1) tests, combined as `sd` says.
fn sd_combine(sd: Option<SrcDst>, f: &dyn Fn(u16) -> Expr) -> Expr {
    match sd.unwrap_or(SrcDst::Or) {
        SrcDst::Src => f(0),
        SrcDst::Dst => f(1),
        SrcDst::Or => Expr::or(f(0), f(1)),
        SrcDst::And => Expr::and(f(0), f(1)),
    }
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

/// A relation between a field of several 4-byte words (`(offset, mask, value)`, most
/// significant first; words without mask bits are left out) and a value, word by word: `<`
/// holds if a word is less, all the words before it being equal. As with [`relate`], every
/// relation is false on a packet too short for the words it reads.
fn relate_words(rel: Rel, words: &[(u16, u32, u32)]) -> Expr {
    let words: Vec<_> = words.iter().filter(|w| w.1 != 0).collect();
    let t = |op, &&(off, m, v): &&(u16, u32, u32)| ip_field(off, 4, m, op, v);
    let eq = || {
        words
            .iter()
            .fold(Expr::True, |e, w| Expr::and(e, t(Op::Eq, w)))
    };
    let order = |op| {
        words.iter().rev().fold(Expr::False, |rest, w| {
            Expr::or(t(op, w), Expr::and(t(Op::Eq, w), rest))
        })
    };
    match rel {
        Rel::Eq => eq(),
        Rel::Ne => Expr::or(order(Op::Gt), order(Op::Lt)),
        Rel::Lt => order(Op::Lt),
        Rel::Gt => order(Op::Gt),
        Rel::Le => Expr::or(order(Op::Lt), eq()),
        Rel::Ge => Expr::or(order(Op::Gt), eq()),
    }
}

/// True if `t` ends a primitive (so that `ip` or `ip6` before it stands alone).
fn ends_primitive(t: &str) -> bool {
    matches!(
        t,
        "and" | "or" | "&&" | "||" | ")" | "?" | ":" | "not" | "!" | "("
    )
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
        "nxt" => Kind::Nxt,
        "hlim" => Kind::Hlim,
        "flow" => Kind::Flow,
        "tc" => Kind::Tc,
        "plen" => Kind::Plen,
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
            Base::Transp => Expr::and(Expr::or(v4(first_frag()), is6()), t),
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
        let mut fam = Fam::Any;
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
                "ip" | "ip6" if fam == Fam::Any && proto.is_none() && kind.is_none() => {
                    self.pos += 1;
                    // `ip` or `ip6` alone: the packet's IP version.
                    if sd.is_none() && self.peek().is_none_or(ends_primitive) {
                        self.last = None;
                        return Ok(if w == "ip" {
                            ip_field(0, 1, 0xf0, Op::Eq, 0x40)
                        } else {
                            is6()
                        });
                    }
                    fam = if w == "ip" { Fam::Ip } else { Fam::Ip6 };
                }
                "ether" if !ether && fam == Fam::Any && proto.is_none() && kind.is_none() => {
                    ether = true;
                    self.pos += 1;
                }
                "tcp" | "udp" | "icmp" | "icmp6"
                    if proto.is_none()
                        && kind.is_none()
                        && self.peek_at(1).is_some_and(|n| {
                            is_kind_word(n).is_some()
                                || (w == "icmp" && name_of(ICMP_TYPES, n).is_some())
                                || (w == "icmp6" && name_of(ICMP6_TYPES, n).is_some())
                                || (!w.starts_with("icmp") && service_port(n).is_some())
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
        let quals_given =
            sd.is_some() || proto.is_some() || fam != Fam::Any || ether || kind.is_some();
        // Valueless kinds.
        if let Some(k @ (Kind::Frag | Kind::Unfrag | Kind::Ect | Kind::Ce)) = kind {
            let e = if fam == Fam::Ip6 {
                let ecn = |op, v| ip_field(0, 4, 0x0030_0000, op, v);
                v6(match k {
                    Kind::Frag => nxt_is(IP6_FRAGMENT),
                    Kind::Unfrag => {
                        relate(Rel::Ne, &|op, v| ip_field(6, 1, 0xff, op, v), IP6_FRAGMENT)
                    }
                    Kind::Ect => Expr::not(ecn(Op::Eq, 0)),
                    _ => ecn(Op::Eq, 0x0030_0000),
                })
            } else {
                v4(match k {
                    Kind::Frag => frag(true),
                    Kind::Unfrag => frag(false),
                    Kind::Ect => Expr::not(ip_field(1, 1, 3, Op::Eq, 0)),
                    _ => ip_field(1, 1, 3, Op::Eq, 3),
                })
            };
            return Ok(self.done(
                e,
                Quals {
                    sd,
                    proto,
                    fam,
                    kind: k,
                },
            ));
        }
        let rel = self.relation();
        let mut fmask: Option<u32> = None;
        let mut mask6: Option<u128> = None;
        if self.peek() == Some("&") {
            self.pos += 1;
            let m = self.next().unwrap_or_default();
            // An address mask for address primitives: `src & 255.0.0.0 = 10.0.0.0`.
            if let Ok(a) = m.parse::<Ipv6Addr>() {
                mask6 = Some(u128::from(a));
            } else {
                let addr = m.parse::<Ipv4Addr>().ok().map(u32::from);
                fmask = Some(
                    parse_int(&m)
                        .or(addr)
                        .ok_or_else(|| format!("bad mask '{}'", m))?,
                );
            }
        }
        let rel = if fmask.is_some() || mask6.is_some() {
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
            Some(Kind::Host) if fam == Fam::Any && is_ether(&word) => Kind::Ether,
            Some(k) => k,
            None if fam == Fam::Any && is_ether(&word) => Kind::Ether,
            None => {
                if fam != Fam::Any && proto.is_none() && name_of(IP_PROTOS, &word).is_some() {
                    Kind::Proto
                } else if word.contains('.')
                    || word.contains('/')
                    || word.parse::<Ipv6Prefix>().is_ok()
                {
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
                } else if proto == Some(58) && name_of(ICMP6_TYPES, &word).is_some() {
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
                            fam = q.fam;
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
                            fam = q.fam;
                            q.kind
                        }
                        _ => return Err(format!("'{}': value without a type", word)),
                    }
                } else {
                    return Err(format!("unknown word '{}'", word));
                }
            }
        };
        let p = Prim {
            kind,
            sd,
            proto,
            fam,
            rel,
            fmask,
            mask6,
        };
        let e = self.build(&p, &word)?;
        Ok(self.done(
            e,
            Quals {
                sd,
                proto,
                fam,
                kind,
            },
        ))
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
    fn done(&mut self, e: Expr, q: Quals) -> Expr {
        let valueless = matches!(q.kind, Kind::Frag | Kind::Unfrag | Kind::Ect | Kind::Ce);
        self.last = (!valueless).then_some(q);
        e
    }

    fn build(&mut self, p: &Prim, word: &str) -> Result<Expr, String> {
        let Prim {
            kind,
            sd,
            proto,
            fam,
            rel,
            fmask,
            mask6,
        } = *p;
        let bad = || format!("bad value '{}'", word);
        let int = |max: u32| -> Result<u32, String> {
            parse_int(word).filter(|v| *v <= max).ok_or_else(bad)
        };
        let simple = |off: u16, width: u8, full: u32, v: u32| {
            let m = fmask.unwrap_or(full) & full;
            relate(rel, &|op, v| ip_field(off, width, m, op, v), v)
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
        if mask6.is_some() && !matches!(kind, Kind::Host | Kind::Net) {
            return Err(format!("an IPv6 mask makes no sense before '{}'", word));
        }
        let ip6_field = matches!(
            kind,
            Kind::Nxt | Kind::Hlim | Kind::Flow | Kind::Tc | Kind::Plen
        );
        let ip4_field = matches!(
            kind,
            Kind::Vers | Kind::Hl | Kind::Id | Kind::Tos | Kind::Ttl | Kind::Ether
        );
        if (fam == Fam::Ip && ip6_field) || (fam == Fam::Ip6 && ip4_field) {
            let q = if fam == Fam::Ip { "ip" } else { "ip6" };
            return Err(format!("'{}' makes no sense before '{}'", q, word));
        }
        Ok(match kind {
            Kind::Host | Kind::Net => {
                let six = fam == Fam::Ip6
                    || word.parse::<Ipv6Prefix>().is_ok()
                    || (fam == Fam::Any
                        && parse_prefix(word).is_err()
                        && Ipv6Prefix::from_arg(word).is_ok());
                if six {
                    if fam == Fam::Ip {
                        return Err(format!("'{}': IPv4 address expected", word));
                    }
                    self.addr6(p, word)?
                } else {
                    v4(self.addr4(p, word)?)
                }
            }
            Kind::Port => {
                let v = service_port(word)
                    .map(u32::from)
                    .or_else(|| parse_int(word).filter(|v| *v <= 0xffff))
                    .ok_or_else(bad)?;
                let m = fmask.unwrap_or(0xffff) & 0xffff;
                let p = match proto {
                    Some(p) if p == 6 || p == 17 => p,
                    Some(TCPUDP) | None => TCPUDP,
                    Some(_) => return Err(format!("'port' needs tcp or udp, at '{}'", word)),
                };
                let t = sd_combine(sd, &|which| {
                    relate(
                        rel,
                        &|op, v| Expr::Test(Test::field(Base::Transp, 2 * which, 2, m, op, v)),
                        v,
                    )
                });
                Expr::and(transport(p, fam), t)
            }
            Kind::Proto | Kind::Nxt => {
                let v = name_of(IP_PROTOS, word)
                    .map(Ok)
                    .unwrap_or_else(|| int(255))?;
                let fam = match (kind, fam, word) {
                    (Kind::Nxt, _, _) => Fam::Ip6,
                    (_, Fam::Any, "icmp" | "igmp" | "ipip") => Fam::Ip,
                    (_, Fam::Any, "icmp6") => Fam::Ip6,
                    (_, f, _) => f,
                };
                by_family(fam, || simple(9, 1, 0xff, v), || simple(6, 1, 0xff, v))
            }
            Kind::Vers => simple(0, 1, 0xf0, int(15)? << 4),
            Kind::Hl => v4(simple(0, 1, 0x0f, int(15)?)),
            Kind::Id => v4(simple(4, 2, 0xffff, int(0xffff)?)),
            Kind::Tos => v4(simple(1, 1, 0xff, int(255)?)),
            Kind::Dscp if fam == Fam::Ip6 => v6(simple(0, 4, 0x0fc0_0000, int(63)? << 22)),
            Kind::Dscp => v4(simple(1, 1, 0xfc, int(63)? << 2)),
            Kind::Ttl => v4(simple(8, 1, 0xff, int(255)?)),
            Kind::Hlim => v6(simple(7, 1, 0xff, int(255)?)),
            Kind::Flow => v6(simple(0, 4, 0x000f_ffff, int(0xf_ffff)?)),
            Kind::Tc => v6(simple(0, 4, 0x0ff0_0000, int(255)? << 20)),
            Kind::Plen => v6(simple(4, 2, 0xffff, int(0xffff)?)),
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
                Expr::and(transport(6, fam), t)
            }
            Kind::Win => {
                let v = int(0xffff)?;
                let m = fmask.unwrap_or(0xffff) & 0xffff;
                let t = relate(
                    rel,
                    &|op, v| Expr::Test(Test::field(Base::Transp, 14, 2, m, op, v)),
                    v,
                );
                Expr::and(transport(6, fam), t)
            }
            Kind::IcmpType => {
                let (p, table) = match (proto, fam) {
                    (Some(1), Fam::Any | Fam::Ip) | (None, Fam::Any | Fam::Ip) => (1, ICMP_TYPES),
                    (Some(58), Fam::Any | Fam::Ip6) | (None, Fam::Ip6) => (58, ICMP6_TYPES),
                    _ => return Err(format!("'type' needs icmp or icmp6, at '{}'", word)),
                };
                let v = name_of(table, word).map(Ok).unwrap_or_else(|| int(255))?;
                let m = fmask.unwrap_or(0xff) & 0xff;
                let t = relate(
                    rel,
                    &|op, v| Expr::Test(Test::field(Base::Transp, 0, 1, m, op, v)),
                    v,
                );
                let fam = if p == 1 { Fam::Ip } else { Fam::Ip6 };
                Expr::and(transport(p, fam), t)
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
                sd_combine(sd, &|which| {
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

    /// An IPv4 `host` or `net` test on `word` (without the version test).
    fn addr4(&mut self, p: &Prim, word: &str) -> Result<Expr, String> {
        if p.mask6.is_some() {
            return Err(format!("'{}': an IPv4 address takes an IPv4 mask", word));
        }
        let (addr, len) = if p.kind == Kind::Net && self.peek() == Some("mask") {
            self.pos += 1;
            let m = self.next().unwrap_or_default();
            let (a, _) = parse_prefix(&format!("{}/{}", word, m))
                .map_err(|_| format!("bad network '{} mask {}'", word, m))?;
            let (_, l) =
                parse_prefix(&format!("0/{}", m)).map_err(|_| format!("bad mask '{}'", m))?;
            (a, l)
        } else {
            let (a, l) = parse_prefix(word).map_err(|_| format!("bad value '{}'", word))?;
            if p.kind == Kind::Host && word.contains('/') {
                return Err(format!("'{}': host address expected", word));
            }
            (a, l)
        };
        let mask = if len == 0 {
            0
        } else {
            u32::MAX << (32 - len as u32)
        };
        let mask = p.fmask.map_or(mask, |m| m & mask);
        Ok(sd_combine(p.sd, &|which| {
            relate(
                p.rel,
                &|op, v| ip_field(12 + 4 * which, 4, mask, op, v),
                addr,
            )
        }))
    }

    /// An IPv6 `host` or `net` test on `word` (with the version test): the 16 address bytes
    /// at 8 (source) or 24 (destination), compared word by word.
    fn addr6(&mut self, p: &Prim, word: &str) -> Result<Expr, String> {
        if p.fmask.is_some() {
            return Err(format!("'{}': an IPv6 address takes an IPv6 mask", word));
        }
        let pre =
            Ipv6Prefix::from_arg(word).map_err(|_| format!("'{}': IPv6 address expected", word))?;
        let addr = u128::from(pre.addr);
        let mask = if p.kind == Kind::Net && self.peek() == Some("mask") {
            self.pos += 1;
            let m = self.next().unwrap_or_default();
            let mask = m
                .parse::<Ipv6Addr>()
                .map(u128::from)
                .ok()
                .filter(|m| m.leading_ones() + m.trailing_zeros() == 128)
                .ok_or_else(|| format!("bad mask '{}'", m))?;
            if word.contains('/') {
                return Err(format!("bad network '{} mask {}'", word, m));
            }
            mask
        } else {
            if p.kind == Kind::Host && word.contains('/') {
                return Err(format!("'{}': host address expected", word));
            }
            Ipv6Prefix::mask_of(pre.len)
        };
        let mask = p.mask6.map_or(mask, |m| m & mask);
        let word_at = |x: u128, i: u16| (x >> (96 - 32 * i)) as u32;
        Ok(v6(sd_combine(p.sd, &|which| {
            let base = 8 + 16 * which;
            let words: Vec<_> = (0..4)
                .map(|i| (base + 4 * i, word_at(mask, i), word_at(addr & mask, i)))
                .collect();
            relate_words(p.rel, &words)
        })))
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
                Expr::or(v4(first_frag()), is6()),
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

    /// `tcp`, `udp`: either IP version.
    fn proto_any(p: u32) -> Expr {
        Expr::or(v4(proto_is(p)), v6(nxt_is(p)))
    }

    #[test]
    fn conditions_are_tested_once() {
        assert_eq!(
            parse("tcp ? udp : icmp").unwrap(),
            Expr::cond(proto_any(6), proto_any(17), v4(proto_is(1)))
        );
        assert_eq!(
            parse("tcp ? udp : icmp ? igmp : ipip").unwrap(),
            Expr::cond(
                proto_any(6),
                proto_any(17),
                Expr::cond(v4(proto_is(1)), v4(proto_is(2)), v4(proto_is(4)))
            )
        );
        // A condition nested in conditions 40 deep stays linear in size.
        let mut s = String::from("tcp");
        for i in 0..40 {
            s = format!("({}) ? ip ttl {} : ip ttl {}", s, i, i + 100);
        }
        let p = Program::compile_ip(&[(parse(&s).unwrap(), Some(0))]);
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
    fn ipv6_words() {
        assert_eq!(
            tokenize("src host 2001:db8::1||dst net ::/0 and ::ffff:198.18.0.1"),
            vec![
                "src",
                "host",
                "2001:db8::1",
                "||",
                "dst",
                "net",
                "::/0",
                "and",
                "::ffff:198.18.0.1"
            ]
        );
        assert_eq!(
            tokenize("tcp ? 2001:db8::1 : ::1"),
            vec!["tcp", "?", "2001:db8::1", ":", "::1"]
        );
        // Not IPv6: an Ethernet address, a `?:` without spaces.
        assert_eq!(tokenize("0:1:2:3:4:5"), vec!["0:1:2:3:4:5"]);
        assert_eq!(
            tokenize("tcp?udp:icmp"),
            vec!["tcp", "?", "udp", ":", "icmp"]
        );
    }

    #[test]
    fn ipv6_shorthands() {
        for (a, b) in [
            ("ip6 proto tcp", "ip6 nxt 6"),
            ("ip6 tcp", "ip6 proto 6"),
            ("nxt 17", "ip6 nxt udp"),
            ("icmp6", "ip6 proto 58"),
            ("icmp6 type echo-request", "icmp6 type 128"),
            ("icmp6 neighbor-solicitation", "icmp6 type 135"),
            ("icmp6 type neighborsolicit", "icmp6 type 135"),
            ("ip6 src host 2001:db8::1", "src host 2001:db8::1"),
            ("2001:db8::1", "host 2001:db8::1"),
            ("2001:db8::/32", "net 2001:db8::/32"),
            (
                "dst net 2001:db8:: mask ffff:ffff::",
                "dst net 2001:db8::/32",
            ),
            (
                "src 2001:db8::1 or ::2",
                "src host 2001:db8::1 or src host ::2",
            ),
            ("ip6 hlim 5 or 6", "ip6 hlim 5 or ip6 hlim 6"),
            ("hlim > 5", "ip6 hlim > 5"),
            ("ip6 and tcp", "ip6 && (tcp)"),
            (
                "ip6 dst tcp port 80 or 443",
                "ip6 dst tcp port 80 or ip6 dst tcp port 443",
            ),
            ("src & ffff:ffff:: == 2001:db8::", "src net 2001:db8::/32"),
        ] {
            assert_eq!(parse(a).unwrap(), parse(b).unwrap(), "{a} / {b}");
        }
        // `ip6` alone is the version test; `ip` alone is version 4.
        assert_eq!(parse("ip6").unwrap(), is6());
        assert_eq!(parse("(ip)").unwrap(), parse("ip vers 4").unwrap());
        // Transport primitives read either version; IPv4 fields only IPv4 packets.
        assert_eq!(
            parse("tcp").unwrap(),
            Expr::or(v4(proto_is(6)), v6(nxt_is(6)))
        );
        assert_eq!(parse("ip ttl 3").unwrap(), parse("ttl 3").unwrap());
        assert_eq!(parse("ttl 3").unwrap(), v4(ip_field(8, 1, 0xff, Op::Eq, 3)));
        assert_eq!(
            parse("ip6 flow 0x12345").unwrap(),
            v6(ip_field(0, 4, 0xfffff, Op::Eq, 0x12345))
        );
        assert_eq!(
            parse("ip6 dscp 46").unwrap(),
            v6(ip_field(0, 4, 0x0fc0_0000, Op::Eq, 46 << 22))
        );
    }

    #[test]
    fn ipv6_errors() {
        for (s, w) in [
            ("ip src host 2001:db8::1", "IPv4 address expected"),
            ("ip6 src host 198.18.0.1", "IPv6 address expected"),
            ("ip6 ttl 5", "'ip6' makes no sense before '5'"),
            ("ip6 vers 6", "'ip6' makes no sense"),
            ("ip hlim 5", "'ip' makes no sense before '5'"),
            ("ip nxt 6", "'ip' makes no sense"),
            ("host 2001:db8::/32", "host address expected"),
            ("net 2001:db8:: mask ff00::ff", "bad mask"),
            (
                "src & 255.0.0.0 == 2001:db8::",
                "IPv6 address takes an IPv6 mask",
            ),
            (
                "src & ffff:: == 10.0.0.0",
                "IPv4 address takes an IPv4 mask",
            ),
            ("ip6 icmp type 8", "'type' needs icmp or icmp6"),
            ("ip icmp6 type 128", "'type' needs icmp or icmp6"),
            ("icmp6 type 256", "256"),
            ("ip6 hlim & ffff:: 5", "IPv6 mask makes no sense"),
        ] {
            let e = parse(s).unwrap_err();
            assert!(e.contains(w), "{}: {}", s, e);
        }
    }

    /// The meaning of an expression, evaluated directly: transport headers at IHL × 4, or at
    /// 40 for IPv6 (version 6); a test whose bytes are missing fails.
    fn eval(e: &Expr, net: &[u8]) -> bool {
        match e {
            Expr::True => true,
            Expr::False => false,
            Expr::Test(t) => {
                let base = match (t.base, net.first()) {
                    (Base::Net, _) => 0,
                    (Base::Transp, Some(b)) if b >> 4 == 6 => 40,
                    (Base::Transp, Some(b)) => (*b as usize & 15) * 4,
                    _ => return false,
                };
                let off = base + t.off as usize;
                let used = (0..4).rev().find(|i| t.mask >> (24 - 8 * i) & 0xff != 0);
                if off + used.map_or(0, |u| u + 1) > net.len() {
                    return false;
                }
                let mut w = [0u8; 4];
                for (i, b) in w.iter_mut().enumerate() {
                    *b = net.get(off + i).copied().unwrap_or(0);
                }
                t.holds(u32::from_be_bytes(w))
            }
            Expr::And(a, b) => eval(a, net) && eval(b, net),
            Expr::Or(a, b) => eval(a, net) || eval(b, net),
            Expr::Not(a) => !eval(a, net),
            Expr::Cond(c, a, b) => {
                if eval(c, net) {
                    eval(a, net)
                } else {
                    eval(b, net)
                }
            }
        }
    }

    fn packet6(nxt: u8, l4: &[u8]) -> Vec<u8> {
        let mut p = vec![0x6b, 0x81, 0x23, 0x45];
        p.extend_from_slice(&(l4.len() as u16).to_be_bytes());
        p.extend_from_slice(&[nxt, 64]);
        p.extend_from_slice(&"2001:db8::1".parse::<Ipv6Addr>().unwrap().octets());
        p.extend_from_slice(&"2001:db8:0:1::2".parse::<Ipv6Addr>().unwrap().octets());
        p.extend_from_slice(l4);
        p
    }

    fn packet4(proto: u8, l4: &[u8]) -> Vec<u8> {
        let mut p = vec![
            0x45,
            0xb8,
            0,
            (20 + l4.len()) as u8,
            0,
            1,
            0,
            0,
            64,
            proto,
            0,
            0,
        ];
        p.extend_from_slice(&[198, 18, 0, 1, 198, 19, 0, 2]);
        p.extend_from_slice(l4);
        p
    }

    /// IP programs (one half per version) decide as the expressions say, on IPv4 and IPv6
    /// packets, truncated and with scrambled bytes.
    #[test]
    fn ip_programs_agree_with_expressions() {
        let pats = [
            "src host 2001:db8::1",
            "dst net 2001:db8::/48 and tcp",
            "src host 198.18.0.1 and udp",
            "ip6 and dst port 53",
            "tcp opt syn",
            "icmp6 type echo-request or icmp6 type neighbor-solicitation",
            "icmp type echo",
            "ip6 hlim < 10 or ip ttl < 10",
            "ip6 flow 0x12345 and ip6 tc 0xb8",
            "ip6 dscp 46 || ip dscp 46",
            "src net != 2001:db8::/32",
            "dst host >= 2001:db8:0:1::",
            "transp[0:2] == 1234",
            "ip6 frag or frag",
            "ip6 ce or ip ce",
            "ip vers 6 and not ip6",
            "ip[0] & 0x40 != 0 and src port 1234",
            "ip6 plen > 8 and udp",
            "ip",
            "-",
        ];
        let exprs: Vec<Expr> = pats.iter().map(|p| parse(p).unwrap()).collect();
        let mut seeds = vec![
            packet6(
                6,
                &[
                    0x04, 0xd2, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0, 0, 0, 0, 0,
                ],
            ),
            packet6(17, &[0x04, 0xd2, 0, 53, 0, 12, 0, 0, 1, 2, 3, 4]),
            packet6(58, &[128, 0, 0, 0, 0, 1, 0, 1]),
            packet6(58, &[135, 0, 0, 0, 0, 0, 0, 0]),
            packet6(44, &[17, 0, 0, 1, 0, 0, 0, 7]),
            packet4(
                6,
                &[
                    0x04, 0xd2, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0, 0, 0, 0, 0,
                ],
            ),
            packet4(17, &[0x04, 0xd2, 0, 53, 0, 12, 0, 0, 1, 2, 3, 4]),
            packet4(1, &[8, 0, 0, 0, 0, 1, 0, 1]),
        ];
        // An IPv4 packet whose source address bytes hold an IPv6 packet's at its offsets.
        let mut v4like = packet6(17, &[0x04, 0xd2, 0, 53, 0, 12, 0, 0]);
        v4like[0] = 0x45;
        seeds.push(v4like);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (i, e) in exprs.iter().enumerate() {
            let alone = Program::compile_ip(&[(e.clone(), Some(0))]);
            let all: Vec<_> = exprs
                .iter()
                .enumerate()
                .map(|(k, e)| (e.clone(), Some(k as u32)))
                .collect();
            let all = Program::compile_ip(&all);
            for seed in &seeds {
                for round in 0..60 {
                    let mut p = seed.clone();
                    if round > 0 {
                        for _ in 0..rnd() % 3 {
                            let k = (rnd() % p.len() as u64) as usize;
                            p[k] = rnd() as u8;
                        }
                        p.truncate((rnd() % (p.len() as u64 + 1)) as usize);
                    }
                    let want = eval(e, &p).then_some(0);
                    assert_eq!(alone.classify(&p), want, "{} on {:02x?}", pats[i], p);
                    assert_eq!(alone.classify_with_mac(&p, &[]), want, "{}", pats[i]);
                    let first = exprs.iter().position(|e| eval(e, &p)).map(|k| k as u32);
                    assert_eq!(all.classify(&p), first, "{:02x?}", p);
                }
            }
        }
    }

    /// IPv4-only patterns compile to the same IPv4 program as without IPv6 support: the
    /// version tests are folded away.
    #[test]
    fn ipv4_programs_carry_no_version_tests() {
        let p = Program::compile_ip(&[
            (
                parse("src host 10.0.0.1 and tcp dst port 80").unwrap(),
                Some(0),
            ),
            (parse("icmp type echo").unwrap(), Some(1)),
        ]);
        assert!(
            p.insns().iter().all(|i| i.test != IS_IPV6),
            "{}",
            p.unparse(256)
        );
        assert_eq!(p.len(), 7, "{}", p.unparse(256));
        // Their IPv6 half drops everything, and is not shown.
        assert!(!p.unparse(256).contains("ipv6"));
        let p = Program::compile_ip(&[(parse("ip6 or src host 10.0.0.1").unwrap(), Some(0))]);
        assert_eq!(
            p.unparse(256),
            " 0 268/0a000001%ffffffff  yes->[0]  no->[X]\nsafe length 272\nalignment offset 0\n\
             ipv6 (version 6) packets:\nall->[0]\nsafe length 0\nalignment offset 0\n"
        );
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
