//! Script's built-in functions, which Click defines as read handlers with parameters of every
//! Script element (`$(add 1 2)`, `READ s.add 1 2`): arithmetic, comparisons, Booleans,
//! `sprintf`, `random`, text helpers, byte order, and the private `cat`, `catq` and `kill`.

use std::cell::Cell;

pub use sluice_lang::args::quote;
use sluice_lang::args::{split_words, unquote, FromArg};

/// Largest text a script variable, expansion or handler result may hold.
#[cfg(not(fuzzing))]
pub const MAX_VALUE: usize = 16 << 20;
/// Largest text a script variable, expansion or handler result may hold: in fuzzing builds
/// 4 KiB, so that inputs that grow values up to the bound (1000 jumps quoting a full value
/// each) stay fast under coverage instrumentation while the bound's code paths are reached.
#[cfg(fuzzing)]
pub const MAX_VALUE: usize = 4 << 10;

thread_local! {
    /// False once [`confine`] was called on this thread.
    static OUTSIDE: Cell<bool> = const { Cell::new(true) };
}

/// Confines the Scripts that run on this thread to the process: opening files
/// (`print >FILE`, `save`, `append`, `cat`, `catq`) and sending signals (`kill`) fail with an
/// error instead. The fuzzing bodies call it, so that no fuzzed input reaches outside however it
/// spells its instructions.
pub fn confine() {
    OUTSIDE.set(false);
}

/// Fails with "WHAT: not allowed here" on a thread confined by [`confine`].
pub(crate) fn check_outside(what: &str) -> Result<(), String> {
    if OUTSIDE.get() {
        Ok(())
    } else {
        Err(format!("{what}: not allowed here"))
    }
}

/// Click's `cp_shift_spacevec`: removes and returns the first word of `s` (quotes kept).
pub fn shift_word<'a>(s: &mut &'a str) -> &'a str {
    let (word, rest) = split_words_prefix(s.trim_start());
    *s = rest.trim_start();
    word
}

/// Splits `t` (no leading space) into its first word and the rest.
fn split_words_prefix(t: &str) -> (&str, &str) {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'\'' => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            }
            c if c.is_ascii_whitespace() => break,
            _ => i += 1,
        }
    }
    let i = i.min(b.len());
    // Quotes are ASCII, so `i` is on a character boundary.
    (&t[..i], &t[i..])
}

/// Click's `%.12g` rendering of a double (`String(double)`).
pub fn fmt_double(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{:.11e}", x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..12).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", strip(mant), sign, exp.abs())
    } else {
        strip(&format!("{:.*}", (11 - exp) as usize, x))
    }
}

fn int(s: &str) -> Option<i64> {
    i64::from_arg(s).ok()
}

fn double(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty()
        || t.chars()
            .any(|c| c.is_ascii_alphabetic() && !"eE".contains(c))
    {
        return None;
    }
    t.parse::<f64>().ok()
}

fn boolean(s: &str) -> Result<bool, String> {
    bool::from_arg(s).map_err(|_| "syntax error".to_string())
}

fn unparse_bool(b: bool) -> String {
    b.to_string()
}

/// add, sub, min, max, mul, div, idiv: integers while they stay integers, else doubles.
fn arithmetic(what: &str, param: &str) -> Result<String, String> {
    let mut rest = param;
    let unit = matches!(what, "add" | "sub");
    let mut accum: i64 = if unit { 0 } else { 1 };
    let mut daccum: f64 = accum as f64;
    let mut use_d = matches!(what, "div" | "idiv");
    let mut first = true;
    loop {
        let word = shift_word(&mut rest);
        if word.is_empty() {
            break;
        }
        let iv = if use_d { None } else { int(word) };
        if !use_d && iv.is_none() {
            use_d = true;
            daccum = accum as f64;
        }
        if use_d {
            let d = double(word).ok_or("expected list of numbers")?;
            daccum = if first {
                d
            } else {
                match what {
                    "add" => daccum + d,
                    "sub" => daccum - d,
                    "min" => daccum.min(d),
                    "max" => daccum.max(d),
                    "mul" => daccum * d,
                    _ => daccum / d,
                }
            };
        } else if let Some(v) = iv {
            accum = if first {
                v
            } else {
                match what {
                    "add" => accum.wrapping_add(v),
                    "sub" => accum.wrapping_sub(v),
                    "min" => accum.min(v),
                    "max" => accum.max(v),
                    _ => accum.wrapping_mul(v),
                }
            };
        }
        first = false;
    }
    Ok(if what == "idiv" {
        (daccum as i64).to_string()
    } else if use_d {
        fmt_double(daccum)
    } else {
        accum.to_string()
    })
}

fn two_words(param: &str) -> Result<(String, String), String> {
    let mut rest = param;
    let a = shift_word(&mut rest);
    let b = shift_word(&mut rest);
    if !rest.is_empty() || a.is_empty() || b.is_empty() {
        return Err("expected two numbers".into());
    }
    Ok((a.to_string(), b.to_string()))
}

fn compare(what: &str, param: &str) -> Result<String, String> {
    let (a, b) = two_words(param)?;
    let ord = match (int(&a), int(&b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => match (double(&a), double(&b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => Some(unquote(&a).as_bytes().cmp(unquote(&b).as_bytes())),
        },
    };
    let Some(o) = ord else {
        // NaN: only "ne" holds.
        return Ok(unparse_bool(what == "ne"));
    };
    Ok(unparse_bool(match what {
        "eq" => o.is_eq(),
        "ne" => o.is_ne(),
        "lt" => o.is_lt(),
        "gt" => o.is_gt(),
        "le" => o.is_le(),
        _ => o.is_ge(),
    }))
}

/// Formats integers and strings like C's printf for one conversion.
struct Spec {
    left: bool,
    zero: bool,
    alt: bool,
    plus: bool,
    space: bool,
    width: usize,
    precision: Option<usize>,
}

impl Spec {
    fn pad(&self, prefix: &str, body: &str, numeric: bool) -> String {
        let len = prefix.len() + body.len();
        if len >= self.width {
            return format!("{prefix}{body}");
        }
        let fill = self.width - len;
        if self.left {
            format!("{prefix}{body}{}", " ".repeat(fill))
        } else if self.zero && numeric && self.precision.is_none() {
            format!("{prefix}{}{body}", "0".repeat(fill))
        } else {
            format!("{}{prefix}{body}", " ".repeat(fill))
        }
    }

    fn digits(&self, d: String) -> String {
        match self.precision {
            Some(0) if d == "0" => String::new(),
            Some(p) if d.len() < p => format!("{}{d}", "0".repeat(p - d.len())),
            _ => d,
        }
    }
}

fn sprintf(param: &str) -> Result<String, String> {
    let mut args = param;
    let format = unquote(shift_word(&mut args));
    let f = format.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let syntax = || "syntax error".to_string();
    while i < f.len() {
        let Some(off) = format[i..].find('%') else {
            out.push_str(&format[i..]);
            break;
        };
        out.push_str(&format[i..i + off]);
        i += off + 1;
        let mut spec = Spec {
            left: false,
            zero: false,
            alt: false,
            plus: false,
            space: false,
            width: 0,
            precision: None,
        };
        while i < f.len() && b"0#- +".contains(&f[i]) {
            match f[i] {
                b'0' => spec.zero = true,
                b'#' => spec.alt = true,
                b'-' => spec.left = true,
                b' ' => spec.space = true,
                _ => spec.plus = true,
            }
            i += 1;
        }
        let star =
            |args: &mut &str| -> Result<i64, String> { int(shift_word(args)).ok_or_else(syntax) };
        if i < f.len() && f[i] == b'*' {
            let w = star(&mut args)?;
            spec.left |= w < 0;
            spec.width = w.unsigned_abs().min(4096) as usize;
            i += 1;
        } else {
            while i < f.len() && f[i].is_ascii_digit() {
                spec.width = (spec.width * 10 + (f[i] - b'0') as usize).min(4096);
                i += 1;
            }
        }
        if i < f.len() && f[i] == b'.' {
            i += 1;
            if i < f.len() && f[i] == b'*' {
                let p = star(&mut args)?;
                if p < 0 {
                    return Err(syntax());
                }
                spec.precision = Some(p.min(4096) as usize);
                i += 1;
            } else {
                let mut p = 0usize;
                while i < f.len() && f[i].is_ascii_digit() {
                    p = (p * 10 + (f[i] - b'0') as usize).min(4096);
                    i += 1;
                }
                spec.precision = Some(p);
            }
        }
        let mut short = false;
        while i < f.len() && b"hlLq".contains(&f[i]) {
            short = f[i] == b'h';
            i += 1;
        }
        let Some(&conv) = f.get(i) else {
            return Err(syntax());
        };
        i += 1;
        match conv {
            b'o' | b'x' | b'X' | b'u' => {
                let v = int(shift_word(&mut args)).ok_or_else(syntax)? as u64;
                let v = if short { v as u16 as u64 } else { v };
                let d = match conv {
                    b'o' => format!("{v:o}"),
                    b'x' => format!("{v:x}"),
                    b'X' => format!("{v:X}"),
                    _ => v.to_string(),
                };
                let mut d = spec.digits(d);
                let prefix = match conv {
                    b'o' if spec.alt && !d.starts_with('0') => {
                        d.insert(0, '0');
                        ""
                    }
                    b'x' if spec.alt && v != 0 => "0x",
                    b'X' if spec.alt && v != 0 => "0X",
                    _ => "",
                };
                out.push_str(&spec.pad(prefix, &d, true));
            }
            b'd' | b'i' => {
                let v = int(shift_word(&mut args)).ok_or_else(syntax)?;
                let v = if short { v as i16 as i64 } else { v };
                let sign = if v < 0 {
                    "-"
                } else if spec.plus {
                    "+"
                } else if spec.space {
                    " "
                } else {
                    ""
                };
                let d = spec.digits(v.unsigned_abs().to_string());
                out.push_str(&spec.pad(sign, &d, true));
            }
            b'%' => out.push('%'),
            b's' => {
                let w = shift_word(&mut args);
                let mut s = unquote(w);
                if let Some(p) = spec.precision {
                    let mut cut = p.min(s.len());
                    while !s.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    s.truncate(cut);
                }
                out.push_str(&spec.pad("", &s, false));
            }
            _ => return Err(syntax()),
        }
        if out.len() > MAX_VALUE {
            return Err("result too large".into());
        }
    }
    if !args.is_empty() {
        return Err(syntax());
    }
    Ok(out)
}

fn xorshift(rng: &Cell<u64>) -> u64 {
    let mut x = rng.get();
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rng.set(x);
    x
}

fn random(param: &str, rng: &Cell<u64>) -> Result<String, String> {
    let words = split_words(param);
    let n = |s: &String| u32::from_arg(s).map_err(|e| format!("N: {e}"));
    let v = match words.len() {
        0 => xorshift(rng) & 0x7fff_ffff,
        1 => {
            let n1 = n(&words[0])?;
            if n1 == 0 {
                return Err("bad N".into());
            }
            xorshift(rng) % n1 as u64
        }
        2 => {
            let (n1, n2) = (n(&words[0])?, n(&words[1])?);
            if n2 < n1 {
                return Err("bad N".into());
            }
            n1 as u64 + xorshift(rng) % (n2 as u64 - n1 as u64 + 1)
        }
        _ => return Err("too many arguments".into()),
    };
    Ok(v.to_string())
}

/// Signal names Script accepts (Click's list), or a number.
pub(crate) fn signal(s: &str) -> Option<i32> {
    Some(match s {
        "ABRT" => libc::SIGABRT,
        "ALRM" => libc::SIGALRM,
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "IO" => libc::SIGIO,
        "PIPE" => libc::SIGPIPE,
        "QUIT" => libc::SIGQUIT,
        "TERM" => libc::SIGTERM,
        "TSTP" => libc::SIGTSTP,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        _ => i32::from_arg(s).ok().filter(|n| (0..=32).contains(n))?,
    })
}

fn kill(param: &str) -> Result<String, String> {
    check_outside("kill")?;
    let mut rest = param;
    let signo = signal(shift_word(&mut rest)).ok_or("bad SIGNO")?;
    while !rest.is_empty() {
        let pid = i32::from_arg(shift_word(&mut rest)).map_err(|_| "bad PID")?;
        // SAFETY: kill(2) takes two integers and touches no memory of this process.
        if unsafe { libc::kill(pid, signo) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(format!("kill({pid}, {signo}): {e}"));
        }
    }
    Ok(String::new())
}

fn cat(param: &str, quote_it: bool) -> Result<String, String> {
    let name = unquote(param.trim());
    if name.is_empty() {
        return Err("bad FILE".into());
    }
    check_outside(&name)?;
    let f = std::fs::File::open(&name).map_err(|e| format!("{name}: {e}"))?;
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_VALUE as u64 + 1), &mut buf)
        .map_err(|e| format!("{name}: {e}"))?;
    if buf.len() > MAX_VALUE {
        return Err(format!("{name}: file larger than {} bytes", MAX_VALUE));
    }
    let s = String::from_utf8_lossy(&buf).into_owned();
    Ok(if quote_it { quote(&s) } else { s })
}

fn byte_order(what: &str, param: &str) -> Result<String, String> {
    let x = i32::from_arg(param).map_err(|_| "syntax error")?;
    Ok(match what {
        "htons" | "ntohs" => (x as u16).swap_bytes().to_string(),
        _ => (x as u32).swap_bytes().to_string(),
    })
}

fn number_one(what: &str, param: &str) -> Result<String, String> {
    if let Some(x) = int(param) {
        let v = if what == "neg" || x < 0 {
            x.wrapping_neg()
        } else {
            x
        };
        return Ok(v.to_string());
    }
    let d = double(param).ok_or("expected one number")?;
    Ok(fmt_double(if what == "neg" { -d } else { d.abs() }))
}

fn modrem(what: &str, param: &str) -> Result<String, String> {
    let (a, b) = two_words(param)?;
    match (int(&a), int(&b)) {
        (Some(_), Some(0)) => Err("division by zero".into()),
        (Some(x), Some(y)) => Ok(x.wrapping_rem(y).to_string()),
        _ if what == "mod" => Err("expected two numbers".into()),
        _ => match (double(&a), double(&b)) {
            (Some(x), Some(y)) => Ok(fmt_double(x % y)),
            _ => Err("expected two numbers".into()),
        },
    }
}

fn logic(what: &str, param: &str) -> Result<String, String> {
    let zero = matches!(what, "and" | "nand");
    let mut v = zero;
    let mut rest = param;
    while v == zero && !rest.is_empty() {
        let x = boolean(shift_word(&mut rest))?;
        v = if zero { v && x } else { v || x };
    }
    Ok(unparse_bool(if what.starts_with('n') { !v } else { v }))
}

/// Calls built-in function `name` with `param`; `None` if there is no such function.
/// `private` also allows `cat`, `catq` and `kill`.
pub fn call(
    name: &str,
    param: &str,
    private: bool,
    rng: &Cell<u64>,
) -> Option<Result<String, String>> {
    Some(match name {
        "add" | "sub" | "min" | "max" | "mul" | "div" | "idiv" => arithmetic(name, param),
        "mod" | "rem" => modrem(name, param),
        "neg" | "abs" => number_one(name, param),
        "eq" | "ne" | "gt" | "ge" | "lt" | "le" => compare(name, param),
        "not" => boolean(param).map(|b| unparse_bool(!b)),
        "and" | "or" | "nand" | "nor" => logic(name, param),
        "first" => Ok(shift_word(&mut { param }).to_string()),
        "if" => {
            let mut rest = param;
            boolean(shift_word(&mut rest)).map(|c| {
                if !c {
                    shift_word(&mut rest);
                }
                shift_word(&mut rest).to_string()
            })
        }
        "in" => {
            let mut rest = param;
            let w = unquote(shift_word(&mut rest));
            let mut found = false;
            while !w.is_empty() && !rest.is_empty() && !found {
                found = w == unquote(shift_word(&mut rest));
            }
            Ok(unparse_bool(found))
        }
        "sprintf" => sprintf(param),
        "random" => random(param, rng),
        "length" => Ok(param.len().to_string()),
        "unquote" => Ok(unquote(param)),
        "htons" | "htonl" | "ntohs" | "ntohl" => byte_order(name, param),
        "cat" | "catq" if private => cat(param, name == "catq"),
        "kill" if private => kill(param),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, p: &str) -> Result<String, String> {
        call(name, p, true, &Cell::new(88172645463325252)).unwrap()
    }

    #[test]
    fn click_script_04() {
        assert_eq!(f("add", "1 2 3").unwrap(), "6");
        assert_eq!(f("sub", "10 2 2").unwrap(), "6");
        assert_eq!(f("min", "10 6 20").unwrap(), "6");
        assert_eq!(f("max", "-1 6 3").unwrap(), "6");
        assert_eq!(f("mul", "1 2 3").unwrap(), "6");
        assert_eq!(f("div", "75 2.5 5").unwrap(), "6");
        assert_eq!(f("idiv", "60 2 5").unwrap(), "6");
        assert_eq!(f("htonl", &f("ntohl", "6").unwrap()).unwrap(), "6");
        assert_eq!(f("htons", &f("ntohs", "6").unwrap()).unwrap(), "6");
    }

    #[test]
    fn arithmetic_edges() {
        assert_eq!(f("add", "").unwrap(), "0");
        assert_eq!(f("mul", "").unwrap(), "1");
        assert_eq!(f("add", "1 0.5").unwrap(), "1.5");
        assert_eq!(f("div", "1 3").unwrap(), "0.333333333333");
        assert_eq!(f("div", "1 0").unwrap(), "inf");
        assert_eq!(f("mul", "1e20 1").unwrap(), "1e+20");
        assert!(f("add", "1 x").is_err());
        assert_eq!(f("mod", "7 3").unwrap(), "1");
        assert!(f("mod", "7 0").is_err());
        assert!(f("mod", "7.5 2").is_err());
        assert_eq!(f("rem", "7.5 2").unwrap(), "1.5");
        assert_eq!(f("neg", "5").unwrap(), "-5");
        assert_eq!(f("abs", "-2.5").unwrap(), "2.5");
        assert_eq!(
            f("add", "9223372036854775807 1").unwrap(),
            "-9223372036854775808"
        );
    }

    #[test]
    fn comparisons_and_logic() {
        assert_eq!(f("eq", "10 0xA").unwrap(), "true");
        assert_eq!(f("le", "9 8").unwrap(), "false");
        assert_eq!(f("eq", "10x 10x").unwrap(), "true");
        assert_eq!(f("lt", "abc abd").unwrap(), "true");
        assert!(f("eq", "1").is_err());
        assert_eq!(f("not", "true").unwrap(), "false");
        assert!(f("not", "maybe").is_err());
        assert_eq!(f("and", "true false").unwrap(), "false");
        assert_eq!(f("nor", "false false").unwrap(), "true");
        assert_eq!(f("if", "true a b").unwrap(), "a");
        assert_eq!(f("if", "false a b").unwrap(), "b");
        assert_eq!(f("in", "foo bar foo").unwrap(), "true");
        assert_eq!(f("first", "x y").unwrap(), "x");
        assert_eq!(f("length", "abcde").unwrap(), "5");
        assert_eq!(f("unquote", "\"a b\"").unwrap(), "a b");
    }

    #[test]
    fn printf() {
        assert_eq!(f("sprintf", "\"%05x\" 127").unwrap(), "0007f");
        assert_eq!(
            f("sprintf", "\"%-4d|%+d|% d\" 7 3 4").unwrap(),
            "7   |+3| 4"
        );
        assert_eq!(
            f("sprintf", "\"%.3s %s%%\" abcdef \"x y\"").unwrap(),
            "abc x y%"
        );
        assert_eq!(
            f("sprintf", "\"%*d %#o %#X\" 4 5 8 255").unwrap(),
            "   5 010 0XFF"
        );
        assert!(f("sprintf", "\"%d\" x").is_err());
        assert!(f("sprintf", "\"%d\" 1 2").is_err());
        assert!(f("sprintf", "\"%q\"").is_err());
    }

    #[test]
    fn random_and_private() {
        for _ in 0..100 {
            let v: u32 = f("random", "3 5").unwrap().parse().unwrap();
            assert!((3..=5).contains(&v));
        }
        assert!(f("random", "0").is_err());
        assert!(call("cat", "x", false, &Cell::new(1)).is_none());
        assert!(f("kill", "BOGUS 1").is_err());
        assert!(f("cat", "/nonexistent/file").is_err());
        assert_eq!(quote("a\"$\n"), "\"a\\\"\\$\\n\"");
        assert_eq!(unquote(&quote("x\ty\\z")), "x\ty\\z");
    }

    #[test]
    fn confined_threads_reach_no_file_or_process() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
        assert!(cat(file, false).is_ok());
        std::thread::spawn(move || {
            confine();
            assert_eq!(
                cat(file, false).unwrap_err(),
                format!("{file}: not allowed here")
            );
            assert_eq!(kill("0 1").unwrap_err(), "kill: not allowed here");
        })
        .join()
        .unwrap();
        assert!(cat(file, false).is_ok(), "other threads are not confined");
    }

    #[test]
    fn words() {
        let mut s = "  \"a b\" c  d ";
        assert_eq!(shift_word(&mut s), "\"a b\"");
        assert_eq!(s, "c  d ");
        assert_eq!(fmt_double(0.0001), "0.0001");
        assert_eq!(fmt_double(0.00001), "1e-05");
        assert_eq!(fmt_double(123456789012.0), "123456789012");
        assert_eq!(fmt_double(1234567890123.0), "1.23456789012e+12");
    }
}
