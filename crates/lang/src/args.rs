//! Click-style configuration argument parsing: splitting, unquoting, typed values and the
//! `Args` reader used by every element's configure step.

use sluice_wire::{EtherAddr, Ipv4Prefix, Ipv6Prefix};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Splits `s` at top-level occurrences of `sep` (quotes, (), [], {} respected, comments
/// removed). Pieces are untrimmed.
fn split_top(s: &str, is_sep: impl Fn(char) -> bool) -> Vec<String> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        match ch {
            '"' | '\'' => {
                cur.push(ch);
                i += 1;
                while i < c.len() {
                    cur.push(c[i]);
                    if c[i] == '\\' && ch == '"' && i + 1 < c.len() {
                        cur.push(c[i + 1]);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    if c[i - 1] == ch {
                        break;
                    }
                }
                continue;
            }
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                i += 2;
                while i < c.len() && !(c[i] == '*' && c.get(i + 1) == Some(&'/')) {
                    i += 1;
                }
                i += 2;
                cur.push(' ');
                continue;
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ if depth == 0 && is_sep(ch) => {
                out.push(std::mem::take(&mut cur));
                i += 1;
                continue;
            }
            _ => {}
        }
        cur.push(ch);
        i += 1;
    }
    out.push(cur);
    out
}

/// Click `cp_argvec`: splits a configuration string at top-level commas; arguments are
/// trimmed, comments dropped; an empty string (or a trailing empty argument) yields nothing.
pub fn split_args(config: &str) -> Vec<String> {
    let mut v: Vec<String> = split_top(config, |c| c == ',')
        .into_iter()
        .map(|a| a.trim().to_string())
        .collect();
    if v.last().is_some_and(|a| a.is_empty()) {
        v.pop();
    }
    v
}

/// Click `cp_spacevec`: splits at top-level whitespace, keeping quoted strings together.
pub fn split_words(s: &str) -> Vec<String> {
    split_top(s, char::is_whitespace)
        .into_iter()
        .filter(|w| !w.is_empty())
        .collect()
}

/// Click `cp_unquote`: removes `"..."` and `'...'` quoting, processing backslash escapes
/// inside double quotes (including `\<hex>` data). Invalid UTF-8 is replaced.
pub fn unquote(s: &str) -> String {
    let b = unquote_bytes(s);
    match String::from_utf8(b) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Appends `c` as UTF-8, or as the raw byte it stands for ([`crate::decode_config`]).
fn push_char(out: &mut Vec<u8>, c: char) {
    match crate::raw_byte(c) {
        Some(b) => out.push(b),
        None => out.extend_from_slice(c.encode_utf8(&mut [0u8; 4]).as_bytes()),
    }
}

/// Like [`unquote`] but returns raw bytes (for `\<00 11 ff>` and `\xHH` binary data).
pub fn unquote_bytes(s: &str) -> Vec<u8> {
    let c: Vec<char> = s.trim().chars().collect();
    let mut out = Vec::with_capacity(c.len());
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '\'' => {
                i += 1;
                while i < c.len() && c[i] != '\'' {
                    push_char(&mut out, c[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' && i + 1 < c.len() {
                        i = escape(&c, i + 1, &mut out);
                    } else {
                        push_char(&mut out, c[i]);
                        i += 1;
                    }
                }
                i += 1;
            }
            // Click also reads `\<hex>` data outside quotes (`InfiniteSource(\<0800>)`).
            '\\' if c.get(i + 1) == Some(&'<') => i = escape(&c, i + 1, &mut out),
            ch => {
                push_char(&mut out, ch);
                i += 1;
            }
        }
    }
    out
}

/// Click `cp_quote`: a double-quoted string that [`unquote`] turns back into `s`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '\\' | '"' | '$' => {
                out.push('\\');
                out.push(ch);
            }
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 32 || c as u32 == 127 => {
                out.push_str(&format!("\\{:03o}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Processes the escape whose first character is `c[i]`; returns the next index.
fn escape(c: &[char], mut i: usize, out: &mut Vec<u8>) -> usize {
    let ch = c[i];
    i += 1;
    match ch {
        'n' => out.push(b'\n'),
        't' => out.push(b'\t'),
        'r' => out.push(b'\r'),
        'a' => out.push(7),
        'b' => out.push(8),
        'f' => out.push(12),
        'v' => out.push(11),
        '\n' => {}
        'x' => {
            let mut v = 0u32;
            let mut n = 0;
            while n < 2 && i < c.len() && c[i].is_ascii_hexdigit() {
                v = v * 16 + c[i].to_digit(16).unwrap();
                i += 1;
                n += 1;
            }
            if n == 0 {
                out.push(b'x');
            } else {
                out.push(v as u8);
            }
        }
        '0'..='7' => {
            let mut v = ch.to_digit(8).unwrap();
            let mut n = 1;
            while n < 3 && i < c.len() && ('0'..='7').contains(&c[i]) {
                v = v * 8 + c[i].to_digit(8).unwrap();
                i += 1;
                n += 1;
            }
            out.push(v as u8);
        }
        '<' => {
            // Hex data up to '>', whitespace ignored.
            let mut half: Option<u32> = None;
            while i < c.len() && c[i] != '>' {
                if let Some(d) = c[i].to_digit(16) {
                    match half.take() {
                        Some(h) => out.push((h * 16 + d) as u8),
                        None => half = Some(d),
                    }
                }
                i += 1;
            }
            if let Some(h) = half {
                out.push(h as u8);
            }
            i += 1;
        }
        other => push_char(out, other),
    }
    i
}

/// Splits a Click keyword argument `KEYWORD value` (keyword `[A-Z][A-Z0-9_]*`, followed by
/// whitespace and a non-empty value). Returns (keyword, value).
pub fn keyword_split(arg: &str) -> Option<(&str, &str)> {
    let a = arg.trim();
    let end = a
        .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(a.len());
    if end == 0 || !a.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let rest = &a[end..];
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let v = rest.trim();
    (!v.is_empty()).then_some((&a[..end], v))
}

/// A type readable from one configuration argument. `Err` holds the "expected ..." text.
pub trait FromArg: Sized {
    /// Parses the (trimmed) argument text.
    fn from_arg(s: &str) -> Result<Self, String>;
}

impl FromArg for bool {
    fn from_arg(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "t" | "y" | "on" => Ok(true),
            "false" | "no" | "0" | "f" | "n" | "off" => Ok(false),
            _ => Err("expected boolean".into()),
        }
    }
}

/// Parses Click integers: decimal, `0x` hex, leading-`0` octal, optional sign.
fn parse_int(s: &str) -> Option<i128> {
    let s = s.trim();
    let (neg, d) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if d.is_empty() || d.len() > 40 {
        return None;
    }
    let v = if let Some(h) = d.strip_prefix("0x").or_else(|| d.strip_prefix("0X")) {
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        i128::from_str_radix(h, 16).ok()?
    } else if d.len() > 1 && d.starts_with('0') {
        if !d.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
            return None;
        }
        i128::from_str_radix(d, 8).ok()?
    } else {
        if !d.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        d.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

macro_rules! uint_arg {
    ($($t:ty),*) => {$(
        impl FromArg for $t {
            fn from_arg(s: &str) -> Result<Self, String> {
                match parse_int(s) {
                    Some(v) if s.trim().starts_with('-') && v != 0 => Err("expected unsigned integer".into()),
                    Some(v) => <$t>::try_from(v).map_err(|_| format!("out of range, bound {}", <$t>::MAX)),
                    None => Err("expected unsigned integer".into()),
                }
            }
        }
    )*};
}
uint_arg!(u8, u16, u32, u64, usize);

macro_rules! int_arg {
    ($($t:ty),*) => {$(
        impl FromArg for $t {
            fn from_arg(s: &str) -> Result<Self, String> {
                match parse_int(s) {
                    Some(v) => <$t>::try_from(v).map_err(|_| {
                        format!("out of range, bound {}", if v < 0 { <$t>::MIN } else { <$t>::MAX })
                    }),
                    None => Err("expected integer".into()),
                }
            }
        }
    )*};
}
int_arg!(i32, i64);

/// An unsigned integer of at most `MAX` (Click's `out of range, bound MAX` beyond it), for
/// arguments that size memory: packet lengths ([`PacketLen`]), ring capacities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtMost<const MAX: usize>(pub usize);

impl<const MAX: usize> FromArg for AtMost<MAX> {
    fn from_arg(s: &str) -> Result<Self, String> {
        match parse_int(s) {
            Some(v) if s.trim().starts_with('-') && v != 0 => {
                Err("expected unsigned integer".into())
            }
            Some(v) if v <= MAX as i128 => Ok(AtMost(v as usize)),
            None => Err("expected unsigned integer".into()),
            _ => Err(format!("out of range, bound {MAX}")),
        }
    }
}

pub use sluice_wire::MAX_PACKET_LEN;

/// A packet length in bytes, at most [`MAX_PACKET_LEN`]: what every argument that sizes
/// packets reads (`LENGTH`, Strip's and Unstrip's byte counts, …).
pub type PacketLen = AtMost<MAX_PACKET_LEN>;

/// A signed change of a packet's length (Resize's `HEAD` and `TAIL`), at most
/// [`MAX_PACKET_LEN`] either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketLenDelta(pub isize);

impl FromArg for PacketLenDelta {
    fn from_arg(s: &str) -> Result<Self, String> {
        let max = MAX_PACKET_LEN as i128;
        match parse_int(s) {
            Some(v) if (-max..=max).contains(&v) => Ok(PacketLenDelta(v as isize)),
            Some(v) => Err(format!(
                "out of range, bound {}",
                if v < 0 { -max } else { max }
            )),
            None => Err("expected integer".into()),
        }
    }
}

fn parse_real(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.is_empty()
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
    {
        return None;
    }
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

impl FromArg for f64 {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_real(s).ok_or_else(|| "expected real number".into())
    }
}

impl FromArg for String {
    fn from_arg(s: &str) -> Result<Self, String> {
        Ok(unquote(s))
    }
}

/// Binary data: the unquoted bytes of the argument (`"\<00 11 ff>"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Data(pub Vec<u8>);

impl FromArg for Data {
    fn from_arg(s: &str) -> Result<Self, String> {
        Ok(Data(unquote_bytes(s)))
    }
}

/// A single word (quotes removed; no whitespace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word(pub String);

impl FromArg for Word {
    fn from_arg(s: &str) -> Result<Self, String> {
        let w = split_words(s);
        if w.len() != 1 {
            return Err("expected word".into());
        }
        let u = unquote(&w[0]);
        if u.is_empty() || u.contains(char::is_whitespace) {
            return Err("expected word".into());
        }
        Ok(Word(u))
    }
}

impl FromArg for Ipv4Addr {
    fn from_arg(s: &str) -> Result<Self, String> {
        let s = s.trim();
        s.parse()
            .ok()
            .or_else(|| crate::names::lookup_ip(s))
            .ok_or_else(|| "expected IP address".into())
    }
}

impl FromArg for Ipv6Addr {
    fn from_arg(s: &str) -> Result<Self, String> {
        let s = s.trim();
        s.parse()
            .ok()
            .or_else(|| crate::names::lookup_ip6(s))
            .ok_or_else(|| "expected IPv6 address".into())
    }
}

impl FromArg for EtherAddr {
    fn from_arg(s: &str) -> Result<Self, String> {
        let s = s.trim();
        s.parse()
            .ok()
            .or_else(|| crate::names::lookup_eth(s))
            .ok_or_else(|| "expected Ethernet address".into())
    }
}

/// Accepts `ADDR/LEN`, `ADDR/MASK`, Click's `ADDR MASK`, a bare address (a /32) and
/// AddressInfo names as Click's `IPPrefixArg(true)` does: a name's address (as a /32) before
/// its prefix, `NAME:ipnet` for the prefix, `NAME/LEN` for the name's address with a length.
impl FromArg for Ipv4Prefix {
    fn from_arg(s: &str) -> Result<Self, String> {
        let w = split_words(s);
        let t = match w.len() {
            1 => w[0].clone(),
            2 => format!("{}/{}", w[0], w[1]),
            _ => String::new(),
        };
        t.parse()
            .ok()
            .or_else(|| {
                let (a, l) = t.split_once('/')?;
                let a = crate::names::lookup_ip(a)?;
                format!("{a}/{l}").parse().ok()
            })
            .or_else(|| crate::names::lookup_ip(&t).map(|a| Ipv4Prefix::new(a, 32)))
            .or_else(|| crate::names::lookup_prefix(&t))
            .ok_or_else(|| "expected IP prefix".into())
    }
}

/// Accepts `ADDR/LEN`, a bare address (a /128) and AddressInfo names (`NAME:ip6net`).
impl FromArg for Ipv6Prefix {
    fn from_arg(s: &str) -> Result<Self, String> {
        let s = s.trim();
        s.parse()
            .ok()
            .or_else(|| crate::names::lookup_ip6(s).map(|a| Ipv6Prefix::new(a, 128)))
            .or_else(|| crate::names::lookup_ip6_prefix(s))
            .ok_or_else(|| "expected IPv6 prefix".into())
    }
}

/// Splits a number from its unit suffix.
fn number_unit(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    // Allow exponents like 1e3 when followed by digits.
    let (mut n, mut u) = (&s[..end], &s[end..]);
    if (u.starts_with('e') || u.starts_with('E'))
        && u[1..].starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+')
    {
        let e2 = u[1..]
            .find(|c: char| !(c.is_ascii_digit() || c == '+' || c == '-'))
            .map_or(u.len(), |i| i + 1);
        n = &s[..end + e2];
        u = &s[end + e2..];
    }
    let v = parse_real(n)?;
    Some((v, u.trim()))
}

/// A time interval in seconds (Click `SecondsArg`: `1`, `1.5s`, `10ms`, `20us`, `5ns`,
/// `2min`, `1h`, `1d`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seconds(pub f64);

impl FromArg for Seconds {
    fn from_arg(s: &str) -> Result<Self, String> {
        let err = || "expected time in seconds".to_string();
        let (v, u) = number_unit(s).ok_or_else(err)?;
        let m = match u {
            "" | "s" | "sec" | "secs" => 1.0,
            "ms" | "msec" | "msecs" => 1e-3,
            "us" | "usec" | "usecs" => 1e-6,
            "ns" | "nsec" | "nsecs" => 1e-9,
            "m" | "min" | "mins" => 60.0,
            "h" | "hr" | "hrs" => 3600.0,
            "d" | "day" | "days" => 86400.0,
            _ => return Err(err()),
        };
        if v < 0.0 {
            return Err(err());
        }
        Ok(Seconds(v * m))
    }
}

impl FromArg for std::time::Duration {
    fn from_arg(s: &str) -> Result<Self, String> {
        let Seconds(v) = Seconds::from_arg(s)?;
        std::time::Duration::try_from_secs_f64(v).map_err(|_| "out of range".to_string())
    }
}

/// A bandwidth in bytes per second (Click `BandwidthArg`: `10Mbps`, `10Mb/s` or `10Mbaud`
/// bits, `1MBps` or `1MB/s` bytes, prefixes k/K, M, G; a plain number is bytes/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bandwidth(pub f64);

impl FromArg for Bandwidth {
    fn from_arg(s: &str) -> Result<Self, String> {
        let err = || "expected bandwidth".to_string();
        let (v, u) = number_unit(s).ok_or_else(err)?;
        if v < 0.0 {
            return Err(err());
        }
        if u.is_empty() {
            return Ok(Bandwidth(v));
        }
        let (mult, rest) = match u.as_bytes()[0] {
            b'k' | b'K' => (1e3, &u[1..]),
            b'M' => (1e6, &u[1..]),
            b'G' => (1e9, &u[1..]),
            _ => (1.0, u),
        };
        let per = match rest {
            "bps" | "b/s" | "baud" => 1.0 / 8.0,
            "Bps" | "B/s" => 1.0,
            "" if mult != 1.0 => 1.0,
            _ => return Err(err()),
        };
        Ok(Bandwidth(v * mult * per))
    }
}

/// An event rate per second (`1000`, `10kpps`, `1Mpps`, `50Hz`, `2kHz`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate(pub f64);

impl FromArg for Rate {
    fn from_arg(s: &str) -> Result<Self, String> {
        let err = || "expected rate".to_string();
        let (v, u) = number_unit(s).ok_or_else(err)?;
        if v < 0.0 {
            return Err(err());
        }
        let (mult, rest) = match u.as_bytes().first() {
            Some(b'k' | b'K') => (1e3, &u[1..]),
            Some(b'M') => (1e6, &u[1..]),
            Some(b'G') => (1e9, &u[1..]),
            _ => (1.0, u),
        };
        match rest {
            "" | "pps" | "Hz" | "/s" => Ok(Rate(v * mult)),
            _ => Err(err()),
        }
    }
}

#[derive(Clone, Debug)]
struct Slot {
    raw: String,
    kw: Option<(String, String)>,
    used: bool,
}

/// Click-style argument reader. Reads return `Err(())` after recording a message; call
/// [`Args::complete`] to get every message.
#[derive(Clone, Debug)]
pub struct Args {
    slots: Vec<Slot>,
    next_pos: usize,
    errors: Vec<String>,
}

// The unit error is deliberate: messages are kept in `Args` and returned by `complete`.
#[allow(clippy::result_unit_err)]
impl Args {
    /// Splits `config` into arguments ([`split_args`]).
    pub fn new(config: &str) -> Args {
        let slots = split_args(config)
            .into_iter()
            .map(|raw| {
                let kw = keyword_split(&raw).map(|(k, v)| (k.to_string(), v.to_string()));
                Slot {
                    raw,
                    kw,
                    used: false,
                }
            })
            .collect();
        Args {
            slots,
            next_pos: 0,
            errors: Vec::new(),
        }
    }

    fn find_keyword(&mut self, key: &str) -> Option<String> {
        let mut found = None;
        for s in self.slots.iter_mut() {
            if !s.used && s.kw.as_ref().is_some_and(|(k, _)| k == key) {
                s.used = true;
                found = s.kw.as_ref().map(|(_, v)| v.clone());
            }
        }
        found
    }

    fn find_positional(&mut self, mandatory: bool) -> Option<String> {
        while self.next_pos < self.slots.len() && self.slots[self.next_pos].used {
            self.next_pos += 1;
        }
        let s = self.slots.get_mut(self.next_pos)?;
        if s.kw.is_some() && !mandatory {
            return None;
        }
        s.used = true;
        self.next_pos += 1;
        Some(s.raw.clone())
    }

    fn parse<T: FromArg>(&mut self, key: &str, v: &str) -> Result<T, ()> {
        T::from_arg(v).map_err(|e| self.errors.push(format!("{key}: {e}")))
    }

    fn read_any<T: FromArg>(
        &mut self,
        key: &str,
        mandatory: bool,
        positional: bool,
    ) -> Result<Option<T>, ()> {
        let v = match self.find_keyword(key) {
            Some(v) => Some(v),
            None if positional => self.find_positional(mandatory),
            None => None,
        };
        match v {
            Some(v) => self.parse(key, &v).map(Some),
            None if mandatory => {
                self.errors
                    .push(format!("missing mandatory {key} argument"));
                Err(())
            }
            None => Ok(None),
        }
    }

    /// Mandatory argument, positional (next unread) or given as `KEY value`.
    pub fn read_mp<T: FromArg>(&mut self, key: &str) -> Result<T, ()> {
        self.read_any(key, true, true).map(|v| v.unwrap())
    }

    /// Optional argument, positional or keyword.
    pub fn read_p<T: FromArg>(&mut self, key: &str) -> Result<Option<T>, ()> {
        self.read_any(key, false, true)
    }

    /// Mandatory keyword argument.
    pub fn read_m<T: FromArg>(&mut self, key: &str) -> Result<T, ()> {
        self.read_any(key, true, false).map(|v| v.unwrap())
    }

    /// Optional keyword argument (the last occurrence wins).
    pub fn read<T: FromArg>(&mut self, key: &str) -> Result<Option<T>, ()> {
        self.read_any(key, false, false)
    }

    /// Optional keyword argument read into `slot`, which keeps its value (the element's
    /// default) when the argument is absent.
    pub fn read_into<T: FromArg>(&mut self, key: &str, slot: &mut T) -> Result<(), ()> {
        if let Some(v) = self.read(key)? {
            *slot = v;
        }
        Ok(())
    }

    /// Every occurrence of a repeatable keyword argument, in order.
    pub fn read_all<T: FromArg>(&mut self, key: &str) -> Result<Vec<T>, ()> {
        let mut out = Vec::new();
        let mut ok = true;
        for i in 0..self.slots.len() {
            let s = &mut self.slots[i];
            if s.used || s.kw.as_ref().is_none_or(|(k, _)| k != key) {
                continue;
            }
            s.used = true;
            let v = s.kw.as_ref().unwrap().1.clone();
            match self.parse(key, &v) {
                Ok(x) => out.push(x),
                Err(()) => ok = false,
            }
        }
        if ok {
            Ok(out)
        } else {
            Err(())
        }
    }

    /// All remaining unread positional arguments (raw), for variadic elements.
    pub fn rest(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for s in self.slots.iter_mut().skip(self.next_pos) {
            if !s.used && s.kw.is_none() {
                s.used = true;
                out.push(s.raw.clone());
            }
        }
        self.next_pos = self.slots.len();
        out
    }

    /// Every unread argument as written, keyword-like or not, for elements whose arguments
    /// are free-form lines (`NAME VALUE...`); marks them read.
    pub fn take_raw(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for s in self.slots.iter_mut().filter(|s| !s.used) {
            s.used = true;
            out.push(s.raw.clone());
        }
        self.next_pos = self.slots.len();
        out
    }

    /// Records an element-level error.
    pub fn error(&mut self, msg: impl Into<String>) {
        self.errors.push(msg.into());
    }

    /// Messages recorded so far.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Finishes parsing: fails with every recorded message, plus "too many arguments" for
    /// unread positional arguments and "unknown keyword 'K'" for unread keyword arguments.
    /// After a recorded error the element stopped reading early, so its unread arguments are
    /// not reported (they were never looked at, not unknown).
    pub fn complete(self) -> Result<(), Vec<String>> {
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        let mut errors = self.errors;
        let mut too_many = false;
        for s in &self.slots {
            if s.used {
                continue;
            }
            match &s.kw {
                Some((k, _)) => errors.push(format!("unknown keyword '{k}'")),
                None => too_many = true,
            }
        }
        if too_many {
            errors.push("too many arguments".into());
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod unquoted_data_tests {
    use super::unquote_bytes;

    #[test]
    fn hex_data_outside_quotes() {
        assert_eq!(unquote_bytes(r"\<08 00 ff>"), vec![8, 0, 0xff]);
        assert_eq!(unquote_bytes(r"ab\<41>c"), b"abAc".to_vec());
        assert_eq!(unquote_bytes(r"a\b"), br"a\b".to_vec());
    }
}
