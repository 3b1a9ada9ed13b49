//! Script — scripts a router configuration: waits, handler calls, variables, jumps
//!
//! Synopsis: `Script([TYPE type,] INSTRUCTIONS...)`
//!
//! Ports: none. Each positional argument is one instruction; the script runs them in order.
//! Text arguments are subject to substitution first: `$VAR` and `${VAR}` become the value
//! of script variable VAR (`$0`..`$9` and `$args` are the arguments of a `run`),
//! `$(HANDLER [ARGS])` the result of a read handler (`elem.handler`, or a router handler) with
//! its trailing newline removed, or of a built-in function (below). The `q` forms of
//! instructions (`setq`, `printq`, `readq`, `writeq`) also remove one layer of quotes.
//!
//! Instructions:
//! - `set VAR TEXT`, `setq VAR TEXT`: set variable VAR. `init VAR TEXT` / `export VAR TEXT`:
//!   set it once, at initialisation.
//! - `print [>FILE | >>FILE] TEXT`, `printq`, `printn` (no newline): print to standard
//!   output (or to FILE).
//! - `read HANDLER [ARGS]`, `readq`: print `HANDLER:` and the handler's value on standard
//!   error, like Click.
//! - `write HANDLER [VALUE]`, `writeq`: call a write handler (errors go to standard error).
//! - `wait TIME`: pause for TIME (a timer on the router clock; instant under `--simtime`).
//! - `pause`: wait until the `step` handler is written (in DRIVER scripts: until a driver stop
//!   event). `wait_stop [N]` / `wait_step [N]`: wait for N of those.
//! - `label NAME`; `goto LABEL [CONDITION]`: jump when CONDITION (after substitution) is true
//!   or absent. Special labels: `begin`, `end`, `exit`.
//! - `loop`: start over. `end`, `exit`: end the script. `return [VALUE]`: end, with a value
//!   (read by the `run` handler of a PASSIVE script).
//! - `stop`: raise a driver stop event and end the script (a DRIVER script stops the router).
//! - `error [MESSAGE]`: print MESSAGE on standard error and end the script.
//!
//! Functions, for `$(...)`: `add`, `sub`, `mul`, `div`, `idiv`, `mod`, `neg`, `abs`, `eq`,
//! `ne`, `lt`, `gt`, `le`, `ge` (numeric when both sides are numbers, else text), `not`,
//! `and`, `or`, `if COND A B`, `cat`, `length`, `now`, `in X A B...`.
//!
//! Keyword: `TYPE` — `ACTIVE` (default: runs from initialisation), `PASSIVE` (runs only when
//! its `step`, `goto` or `run` handler is written), `DRIVER` (manages driver stop events like
//! DriverManager: each event releases a `pause`/`wait_stop`; the router stops when the script
//! ends).
//!
//! Handlers: `step` (w, `[N]`: release N pauses or waits), `goto` (w, `LABEL`: jump there and
//! run), `run` (rw: write `[ARGS]` to run the script from the start with `$1`... set; read the
//! last `return` value), `position` (r, current instruction index), `done` (r).
//!
//! Example: `Script(wait 1s, read c.count, write c.reset, loop)`

use std::collections::HashMap;
use std::io::Write;

use sluice_core::Timestamp;
use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, InitCx};
use sluice_lang::args::{split_words, unquote, Args, FromArg, Seconds};

/// How a script runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptType {
    /// Starts at initialisation.
    Active,
    /// Runs only when prodded through handlers.
    Passive,
    /// Receives driver stop events; the router stops when it ends.
    Driver,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ready,
    /// Waiting on timer 0.
    Waiting,
    /// Waiting for N steps (handler writes or driver stop events).
    Paused(u32),
    Done,
}

const KEYWORDS: &[&str] = &[
    "set",
    "setq",
    "init",
    "initq",
    "export",
    "exportq",
    "print",
    "printq",
    "printn",
    "printnq",
    "read",
    "readq",
    "write",
    "writeq",
    "wait",
    "wait_time",
    "wait_for",
    "pause",
    "wait_stop",
    "wait_step",
    "wait_pause",
    "label",
    "goto",
    "loop",
    "end",
    "exit",
    "stop",
    "return",
    "returnq",
    "error",
    "errorq",
];

/// Most instructions one run may execute without waiting (catches `label a, goto a`).
const MAX_STEPS: u32 = 1_000_000;

/// The script interpreter shared by Script and DriverManager.
pub struct Script {
    pub(crate) kind: ScriptType,
    insns: Vec<(String, String)>,
    labels: HashMap<String, usize>,
    vars: HashMap<String, String>,
    args: Vec<String>,
    pc: usize,
    state: State,
    ret: String,
    class: &'static str,
}

impl Script {
    /// A script of the given type; `class` names it in messages.
    pub fn new(kind: ScriptType, class: &'static str) -> Script {
        Script {
            kind,
            insns: Vec::new(),
            labels: HashMap::new(),
            vars: HashMap::new(),
            args: Vec::new(),
            pc: 0,
            state: State::Ready,
            ret: String::new(),
            class,
        }
    }

    /// Parses the instruction list (and `TYPE` unless `fixed_type`).
    pub(crate) fn configure_insns(
        &mut self,
        args: &mut Args,
        fixed_type: bool,
        default: &[&str],
    ) -> Result<(), ()> {
        if !fixed_type {
            if let Some(t) = args.read::<String>("TYPE")? {
                self.kind = match t.to_ascii_uppercase().as_str() {
                    "ACTIVE" => ScriptType::Active,
                    "PASSIVE" => ScriptType::Passive,
                    "DRIVER" => ScriptType::Driver,
                    _ => {
                        args.error(format!("TYPE: unknown script type '{t}'"));
                        return Err(());
                    }
                };
            }
        }
        let mut raw = args.rest();
        if raw.is_empty() {
            raw = default.iter().map(|s| s.to_string()).collect();
        }
        let mut ok = true;
        for r in raw {
            let r = r.trim();
            let (kw, rest) = r.split_once(char::is_whitespace).unwrap_or((r, ""));
            let kw = kw.to_ascii_lowercase();
            if !KEYWORDS.contains(&kw.as_str()) {
                args.error(format!("unknown instruction '{kw}'"));
                ok = false;
                continue;
            }
            if kw == "label" {
                let l = rest.trim();
                if l.is_empty() {
                    args.error("label: missing label name");
                    ok = false;
                }
                self.labels.insert(l.to_string(), self.insns.len());
            }
            if kw == "wait" || kw == "wait_time" || kw == "wait_for" {
                let t = rest.trim();
                if !t.contains('$') && Seconds::from_arg(t).is_err() {
                    args.error(format!("{kw}: expected time in seconds, got '{t}'"));
                    ok = false;
                }
            }
            self.insns.push((kw, rest.trim().to_string()));
        }
        for (kw, rest) in &self.insns {
            if kw == "goto" {
                let l = split_words(rest).into_iter().next().unwrap_or_default();
                let special = ["begin", "end", "exit"].contains(&l.as_str());
                if !special && !l.contains('$') && !self.labels.contains_key(&l) {
                    args.error(format!("goto: no such label '{l}'"));
                    ok = false;
                }
            }
        }
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }

    /// Runs `init`/`export` once, registers DRIVER scripts, starts ACTIVE and DRIVER ones.
    pub(crate) fn initialize_script(&mut self, cx: &mut Cx) {
        for i in 0..self.insns.len() {
            let (kw, rest) = self.insns[i].clone();
            if matches!(kw.as_str(), "init" | "initq" | "export" | "exportq") {
                let (var, text) = rest.split_once(char::is_whitespace).unwrap_or((&rest, ""));
                let mut v = self.subst(text.trim(), cx);
                if kw.ends_with('q') {
                    v = unquote(&v);
                }
                self.vars.insert(var.to_string(), v);
            }
        }
        if self.kind == ScriptType::Driver {
            cx.manage_driver_stops();
        }
        if self.kind != ScriptType::Passive {
            // Run after every element is initialised.
            let now = cx.now();
            cx.schedule_timer(0, now);
            self.state = State::Waiting;
        } else {
            // A PASSIVE script waits for its first `step` (or `goto`/`run`).
            self.state = State::Paused(1);
        }
    }

    /// Ends the script; a DRIVER script stops the router.
    fn finish(&mut self, cx: &mut Cx) {
        self.state = State::Done;
        if self.kind == ScriptType::Driver {
            cx.stop_router();
        }
    }

    /// Runs from the current instruction until the script waits or ends.
    pub(crate) fn run(&mut self, cx: &mut Cx) {
        self.state = State::Ready;
        let mut steps = 0u32;
        while self.state == State::Ready {
            steps += 1;
            if steps > MAX_STEPS {
                eprintln!(
                    "{}: {}: too many instructions without a wait; script ended",
                    cx.name(),
                    self.class
                );
                self.finish(cx);
                return;
            }
            let Some((kw, rest)) = self.insns.get(self.pc).cloned() else {
                self.finish(cx);
                return;
            };
            self.pc += 1;
            self.exec(&kw, &rest, cx);
        }
    }

    fn exec(&mut self, kw: &str, rest: &str, cx: &mut Cx) {
        let q = kw.ends_with('q');
        match kw {
            "set" | "setq" => {
                let (var, text) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let mut v = self.subst(text.trim(), cx);
                if q {
                    v = unquote(&v);
                }
                self.vars.insert(var.to_string(), v);
            }
            "init" | "initq" | "export" | "exportq" | "label" => {}
            "print" | "printq" | "printn" | "printnq" => {
                let newline = !kw.starts_with("printn");
                let (target, text) = match rest.strip_prefix('>') {
                    Some(r) => {
                        let (append, r) = match r.strip_prefix('>') {
                            Some(r) => (true, r),
                            None => (false, r),
                        };
                        let (f, t) = r.trim().split_once(char::is_whitespace).unwrap_or((r, ""));
                        (Some((f.to_string(), append)), t.trim().to_string())
                    }
                    None => (None, rest.to_string()),
                };
                let mut v = self.subst(&text, cx);
                if kw.ends_with('q') {
                    v = unquote(&v);
                }
                if newline {
                    v.push('\n');
                }
                match target {
                    None => {
                        let mut o = std::io::stdout().lock();
                        let _ = o.write_all(v.as_bytes());
                        let _ = o.flush();
                    }
                    Some((f, append)) => {
                        let r = std::fs::OpenOptions::new()
                            .create(true)
                            .write(true)
                            .append(append)
                            .truncate(!append)
                            .open(&f)
                            .and_then(|mut fh| fh.write_all(v.as_bytes()));
                        if let Err(e) = r {
                            eprintln!("{}: print: {}: {}", cx.name(), f, e);
                        }
                    }
                }
            }
            "read" | "readq" => {
                let text = self.subst(rest, cx);
                let text = if q { unquote(&text) } else { text };
                let mut words = text.split_whitespace();
                let h = words.next().unwrap_or("").to_string();
                let param = words.collect::<Vec<_>>().join(" ");
                let r = if param.is_empty() {
                    cx.read_handler(&h)
                } else {
                    cx.read_handler_param(&h, &param)
                };
                match r {
                    Ok(mut v) => {
                        if !v.ends_with('\n') {
                            v.push('\n');
                        }
                        eprint!("{h}:\n{v}");
                    }
                    Err(e) => eprintln!("{}: read {}: {}", cx.name(), h, e),
                }
            }
            "write" | "writeq" => {
                let text = self.subst(rest, cx);
                let (h, v) = text
                    .trim()
                    .split_once(char::is_whitespace)
                    .unwrap_or((text.trim(), ""));
                let v = if q {
                    unquote(v.trim())
                } else {
                    v.trim().to_string()
                };
                if let Err(e) = cx.write_handler(h, &v) {
                    eprintln!("{}: write {}: {}", cx.name(), h, e);
                }
            }
            "wait" | "wait_time" | "wait_for" => {
                let t = self.subst(rest, cx);
                match Seconds::from_arg(t.trim()) {
                    Ok(s) => {
                        cx.schedule_after(0, Timestamp::from_secs_f64(s.0));
                        self.state = State::Waiting;
                    }
                    Err(e) => {
                        eprintln!("{}: wait: {}", cx.name(), e);
                        self.finish(cx);
                    }
                }
            }
            "pause" | "wait_stop" | "wait_step" | "wait_pause" => {
                let t = self.subst(rest, cx);
                let n = t.trim().parse::<u32>().unwrap_or(1);
                if n > 0 {
                    self.state = State::Paused(n);
                }
            }
            "goto" => {
                let words = split_words(rest);
                let label = self.subst(words.first().map(String::as_str).unwrap_or(""), cx);
                let cond = if words.len() > 1 {
                    let c = self.subst(&words[1..].join(" "), cx);
                    truthy(&unquote(c.trim()))
                } else {
                    true
                };
                if cond {
                    match label.as_str() {
                        "begin" => self.pc = 0,
                        "end" | "exit" => self.finish(cx),
                        l => match self.labels.get(l) {
                            Some(&i) => self.pc = i,
                            None => {
                                eprintln!("{}: goto: no such label '{}'", cx.name(), l);
                                self.finish(cx);
                            }
                        },
                    }
                }
            }
            "loop" => self.pc = 0,
            "end" | "exit" => self.finish(cx),
            "return" | "returnq" => {
                let v = self.subst(rest, cx);
                self.ret = if q { unquote(&v) } else { v };
                self.finish(cx);
            }
            "stop" => {
                if self.kind == ScriptType::Driver {
                    cx.stop_router();
                    self.state = State::Done;
                } else {
                    cx.request_driver_stop();
                    self.state = State::Done;
                }
            }
            "error" | "errorq" => {
                let v = self.subst(rest, cx);
                let v = if q { unquote(&v) } else { v };
                eprintln!("{}: {}", cx.name(), v);
                self.finish(cx);
            }
            _ => {}
        }
    }

    /// Releases `n` pauses or cuts the current wait; runs on.
    pub(crate) fn step(&mut self, n: u32, cx: &mut Cx) {
        for _ in 0..n {
            match self.state {
                State::Paused(k) if k > 1 => self.state = State::Paused(k - 1),
                State::Paused(_) => self.run(cx),
                State::Waiting => {
                    cx.cancel_timer(0);
                    self.run(cx);
                }
                State::Ready => self.run(cx),
                State::Done => return,
            }
        }
    }

    /// A driver stop event: releases a pause of a DRIVER script; ignored at other times.
    pub(crate) fn stop_event(&mut self, cx: &mut Cx) {
        if let State::Paused(k) = self.state {
            if k > 1 {
                self.state = State::Paused(k - 1);
            } else {
                self.run(cx);
            }
        }
    }

    /// Timer 0: a `wait` ended (or the initial start).
    pub(crate) fn timer(&mut self, cx: &mut Cx) {
        if self.state == State::Waiting {
            self.run(cx);
        }
    }

    fn var(&self, name: &str) -> String {
        if let Ok(i) = name.parse::<usize>() {
            return self.args.get(i).cloned().unwrap_or_default();
        }
        if name == "args" {
            return self.args.get(1..).map(|a| a.join(" ")).unwrap_or_default();
        }
        self.vars.get(name).cloned().unwrap_or_default()
    }

    /// Substitutes `$VAR`, `${VAR}` and `$(EXPR)`.
    pub(crate) fn subst(&mut self, s: &str, cx: &mut Cx) -> String {
        let c: Vec<char> = s.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        let mut quote: Option<char> = None;
        while i < c.len() {
            let ch = c[i];
            if quote == Some('\'') {
                if ch == '\'' {
                    quote = None;
                }
                out.push(ch);
                i += 1;
                continue;
            }
            if ch == '\'' && quote.is_none() {
                quote = Some('\'');
            } else if ch == '"' {
                quote = if quote == Some('"') { None } else { Some('"') };
            }
            if ch != '$' || i + 1 >= c.len() {
                out.push(ch);
                i += 1;
                continue;
            }
            match c[i + 1] {
                '(' => {
                    let mut depth = 0;
                    let mut j = i + 1;
                    while j < c.len() {
                        if c[j] == '(' {
                            depth += 1;
                        } else if c[j] == ')' {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        j += 1;
                    }
                    let inner: String = c[i + 2..j.min(c.len())].iter().collect();
                    let inner = self.subst(&inner, cx);
                    out.push_str(&self.eval(&inner, cx));
                    i = j + 1;
                }
                '{' => {
                    let j = (i + 2..c.len()).find(|&j| c[j] == '}').unwrap_or(c.len());
                    let name: String = c[i + 2..j].iter().collect();
                    out.push_str(&self.var(&name));
                    i = j + 1;
                }
                x if x.is_alphanumeric() || x == '_' => {
                    let mut j = i + 1;
                    while j < c.len() && (c[j].is_alphanumeric() || c[j] == '_') {
                        j += 1;
                    }
                    let name: String = c[i + 1..j].iter().collect();
                    out.push_str(&self.var(&name));
                    i = j;
                }
                _ => {
                    out.push(ch);
                    i += 1;
                }
            }
        }
        out
    }

    /// Evaluates `FUNCTION ARGS` or `HANDLER`.
    fn eval(&mut self, expr: &str, cx: &mut Cx) -> String {
        let words: Vec<String> = split_words(expr).iter().map(|w| unquote(w)).collect();
        let Some(f) = words.first() else {
            return String::new();
        };
        if let Some(v) = builtin(f, &words[1..], cx) {
            return v;
        }
        let r = if words.len() > 1 {
            cx.read_handler_param(f, &words[1..].join(" "))
        } else {
            cx.read_handler(f)
        };
        match r {
            Ok(v) => v.strip_suffix('\n').unwrap_or(&v).to_string(),
            Err(e) => {
                eprintln!("{}: $({}): {}", cx.name(), expr.trim(), e);
                String::new()
            }
        }
    }
}

/// A Click boolean, or a non-zero number.
fn truthy(s: &str) -> bool {
    match bool::from_arg(s) {
        Ok(b) => b,
        Err(_) => s.parse::<f64>().map(|v| v != 0.0).unwrap_or(!s.is_empty()),
    }
}

enum Num {
    I(i64),
    F(f64),
}

fn num(s: &str) -> Option<Num> {
    s.parse::<i64>()
        .map(Num::I)
        .ok()
        .or_else(|| s.parse::<f64>().ok().map(Num::F))
}

fn as_f(n: &Num) -> f64 {
    match n {
        Num::I(i) => *i as f64,
        Num::F(f) => *f,
    }
}

/// Built-in functions; `None` if `f` is not one.
fn builtin(f: &str, a: &[String], cx: &Cx) -> Option<String> {
    let nums = || a.iter().map(|x| num(x)).collect::<Option<Vec<Num>>>();
    let arith = |op: fn(i64, i64) -> Option<i64>, fop: fn(f64, f64) -> f64| -> String {
        let Some(ns) = nums() else {
            return String::new();
        };
        let mut it = ns.into_iter();
        let Some(first) = it.next() else {
            return "0".into();
        };
        let mut acc = first;
        for n in it {
            acc = match (acc, n) {
                (Num::I(x), Num::I(y)) => match op(x, y) {
                    Some(v) => Num::I(v),
                    None => Num::F(fop(x as f64, y as f64)),
                },
                (x, y) => Num::F(fop(as_f(&x), as_f(&y))),
            };
        }
        match acc {
            Num::I(i) => i.to_string(),
            Num::F(f) => f.to_string(),
        }
    };
    let cmp = |pred: fn(std::cmp::Ordering) -> bool| -> String {
        let (x, y) = (a.first().map_or("", |s| s), a.get(1).map_or("", |s| s));
        let o = match (num(x), num(y)) {
            (Some(p), Some(q)) => as_f(&p).partial_cmp(&as_f(&q)),
            _ => Some(x.cmp(y)),
        };
        o.is_some_and(pred).to_string()
    };
    Some(match f {
        "add" => arith(i64::checked_add, |x, y| x + y),
        "sub" => arith(i64::checked_sub, |x, y| x - y),
        "mul" => arith(i64::checked_mul, |x, y| x * y),
        "div" => {
            let ns = nums()?;
            if ns.len() != 2 || as_f(&ns[1]) == 0.0 {
                return Some(String::new());
            }
            let v = as_f(&ns[0]) / as_f(&ns[1]);
            if v.fract() == 0.0 && v.abs() < 9e15 {
                (v as i64).to_string()
            } else {
                v.to_string()
            }
        }
        "idiv" => arith(i64::checked_div, |x, y| (x / y).trunc()),
        "mod" => arith(i64::checked_rem, |x, y| x % y),
        "neg" => match a.first().and_then(|x| num(x)) {
            Some(Num::I(i)) => i.checked_neg().map(|v| v.to_string()).unwrap_or_default(),
            Some(Num::F(f)) => (-f).to_string(),
            None => String::new(),
        },
        "abs" => match a.first().and_then(|x| num(x)) {
            Some(Num::I(i)) => i.checked_abs().map(|v| v.to_string()).unwrap_or_default(),
            Some(Num::F(f)) => f.abs().to_string(),
            None => String::new(),
        },
        "eq" => cmp(|o| o.is_eq()),
        "ne" => cmp(|o| o.is_ne()),
        "lt" => cmp(|o| o.is_lt()),
        "gt" => cmp(|o| o.is_gt()),
        "le" => cmp(|o| o.is_le()),
        "ge" => cmp(|o| o.is_ge()),
        "not" => (!a.first().is_some_and(|x| truthy(x))).to_string(),
        "and" => a.iter().all(|x| truthy(x)).to_string(),
        "or" => a.iter().any(|x| truthy(x)).to_string(),
        "if" => {
            let c = a.first().is_some_and(|x| truthy(x));
            a.get(if c { 1 } else { 2 }).cloned().unwrap_or_default()
        }
        "cat" => a.concat(),
        "length" => a.join(" ").chars().count().to_string(),
        "in" => a.get(1..).unwrap_or(&[]).contains(a.first()?).to_string(),
        "now" => cx.now().to_string(),
        _ => return None,
    })
}

impl Element for Script {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.configure_insns(args, false, &[])
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.initialize_script(cx);
        Ok(())
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.timer(cx);
    }

    fn driver_stop_event(&mut self, cx: &mut Cx) {
        self.stop_event(cx);
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::w("step"),
                Handler::w("goto"),
                Handler::rw("run"),
                Handler::r("position"),
                Handler::r("done"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "run" => self.ret.clone(),
            "position" => self.pc.to_string(),
            "done" => (self.state == State::Done).to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &mut Cx) -> Result<(), String> {
        match name {
            "step" => {
                let v = value.trim();
                let n = if v.is_empty() {
                    1
                } else {
                    v.parse::<u32>()
                        .map_err(|_| "step: expected unsigned integer".to_string())?
                };
                self.step(n, cx);
            }
            "goto" => {
                let l = value.trim();
                let pc = match l {
                    "begin" => 0,
                    "end" | "exit" => self.insns.len(),
                    _ => *self
                        .labels
                        .get(l)
                        .ok_or_else(|| format!("goto: no such label '{l}'"))?,
                };
                cx.cancel_timer(0);
                self.pc = pc;
                self.run(cx);
            }
            "run" => {
                cx.cancel_timer(0);
                self.args = std::iter::once(cx.name().to_string())
                    .chain(split_words(value).iter().map(|w| unquote(w)))
                    .collect();
                self.ret.clear();
                self.pc = 0;
                self.run(cx);
            }
            _ => return Err(format!("no handler {name}")),
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Script",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("script.rs"),
    make: || Box::new(Script::new(ScriptType::Active, "Script")),
};

#[cfg(test)]
mod tests {
    use super::truthy;

    #[test]
    fn truth() {
        assert!(truthy("true"));
        assert!(truthy("1"));
        assert!(truthy("2.5"));
        assert!(!truthy("0"));
        assert!(!truthy("false"));
        assert!(!truthy(""));
    }
}
