//! Script — scripts a router configuration: waits, handler calls, variables, jumps
//!
//! Synopsis: `Script([TYPE type,] INSTRUCTIONS...)`
//!
//! Ports: none, except for PACKET scripts: any number of inputs (at least one) and outputs;
//! input and output 0 agnostic, the others push. Each positional argument is one
//! instruction; the script runs them in order.
//!
//! Substitutions: instruction text is substituted first. `$VAR` and `${VAR}` become the value
//! of script variable VAR; `$(HANDLER [ARGS])` the value of a read handler (with its trailing
//! newline removed) — `elem.handler`, a router handler, or one of the script's own handlers,
//! which include the functions below, so `$(add $x 1)` works. `$?` is the status of the last
//! `write` (0, or -22 on error), `$args` the arguments of a `run`, `$1`... its words, `$#`
//! their number, `$0` the handler that ran the script, `$$` the process id. A reference to an
//! unknown variable or handler stays as text. Nothing is substituted inside single quotes;
//! inside double quotes substituted text is quoted. Substitutions nest at most 10 deep
//! (deeper ones stay as text, with an error message), and no value may exceed 16 MiB (the
//! instruction fails with an error and the script ends). The `q` forms of instructions
//! (`setq`, `printq`, `readq`, `writeq`, ...) also remove one layer of quotes.
//!
//! Instructions:
//! - `set VAR TEXT`, `setq VAR TEXT`: set variable VAR. `init VAR TEXT` / `export VAR TEXT`:
//!   set it once, at initialisation; `export` also makes it a read handler named VAR.
//! - `print [>FILE | >>FILE] [TEXT | HANDLER]`, `printq`, `printn`, `printnq`: if the argument
//!   starts with a letter, `@` or `_` it is a read handler (with arguments), called and its
//!   value printed (`print c.count` prints the count); otherwise it is text, unquoted once
//!   (`print "c.count"` prints `c.count`). A newline is added unless the value ends with one;
//!   `printn` adds none. Output goes to standard output, or to FILE (`>>`: appended).
//!   `save TEXT [FILE]` and `append TEXT [FILE]` are `print >FILE TEXT` and `print >>FILE TEXT`.
//! - `read HANDLER [ARGS]`, `readq`: print `HANDLER:` and the handler's value on standard
//!   error, like Click.
//! - `write HANDLER [VALUE]`, `writeq`: call a write handler (errors go to standard error;
//!   the status is `$?`).
//! - `wait TIME`, `wait_time`, `wait_for`: pause for TIME (a timer on the router clock;
//!   instant under `--simtime`), or until a step. `wait` with no time is `pause`.
//! - `pause [N]`, `wait_step [N]`, `wait_stop [N]`: wait until the `step` handler is written N
//!   times (in DRIVER scripts: for N driver stop events).
//! - `label NAME`; `goto LABEL [CONDITION]`: jump when CONDITION (a Boolean after
//!   substitution) is true or absent. `begin` and `loop` name the first instruction; `end`,
//!   `exit`, `stop` and `error` end the script as those instructions do.
//! - `loop`: start over. `end`, `exit`: end the script. `return [VALUE]`, `returnq`: end, with
//!   a value (read by the `run` handler).
//! - `stop`: end the script and raise a driver stop event (a DRIVER script stops the router).
//! - `error [MESSAGE]`, `errorq`: print MESSAGE on standard error and end the script.
//!
//! A run that takes 1000 jumps without blocking is given up with `NAME :: Script: too many
//! jumps, giving up`, as in Click. A stop signal (SIGINT, SIGTERM) ends a running script
//! between instructions.
//!
//! Functions (read handlers with parameters of every Script, so also `READ s.add 1 2` through
//! ControlSocket): `add`, `sub`, `min`, `max`, `mul`, `div`, `idiv` (lists of numbers;
//! integers while they stay integers, `div` in floating point, `idiv` truncated), `mod`,
//! `rem`, `neg`, `abs`, `eq`, `ne`, `lt`, `gt`, `le`, `ge` (numeric when both sides are
//! numbers, else text), `not`, `and`, `or`, `nand`, `nor`, `if COND A B`, `in X A B...`,
//! `first`, `sprintf FORMAT ARGS...` (`%d %i %u %o %x %X %s %%` with flags, width and
//! precision), `random [N1 [N2]]`, `length`, `unquote`, `htons`, `htonl`, `ntohs`, `ntohl`,
//! `get VAR`, `readable`/`writable HANDLERS...`; inside the script only: `now`, `shift
//! [VAR]`, `cat FILE`, `catq FILE` (quoted), `kill SIGNAL PID...`.
//!
//! Arguments:
//! - `INSTRUCTIONS` (any number of positional arguments): one instruction each, as above.
//! - `TYPE` (keyword, default `ACTIVE`, or `PACKET` for a Script with ports; Click's `PROXY`
//!   is not supported):
//!   - `ACTIVE`: runs from initialisation.
//!   - `PASSIVE`: runs only when its `step`, `goto` or `run` handler is written.
//!   - `DRIVER`: manages driver stop events like DriverManager: each event releases a
//!     `pause`/`wait_stop`; the router stops when the script ends.
//!   - `PACKET` (also `PUSH`): runs from the start for each packet that arrives, with `$input`
//!     set to its input port; `return N` sends the packet to output N, `end` to output 0; a
//!     packet whose script exits, fails, waits or names no push output is dropped and counted
//!     in `drops`. Under `-j`, a PACKET script that packets reach from several threads runs as
//!     one copy per thread (variables are per copy; numeric handler values add up over the
//!     copies).
//!   - `SIGNAL SIGNO...`: runs from the start soon after one of the signals arrives, named as
//!     for `kill` or by number. The signal's default action is replaced while the script waits
//!     for it: a script that ends with `end` waits for the next one; one that exits, fails or
//!     blocks does not, so that signal's default action applies again, as in Click.
//!
//! Handlers: `step` (w, `[N]`: release N pauses or waits), `goto` (w, `LABEL`: jump there and
//! run), `run` (rw: write `[ARGS]` to run the script from the start with `$args` set; read the
//! last `return` value — a script reading another script's `run` runs it, as in Click),
//! `set` (w, `VAR VALUE`), `get` (r, `VAR`), `position` (r, current instruction index),
//! `done` (r), the functions above, for PACKET scripts `drops` (r, packets dropped) and
//! `drop_details` (r, the same by reason), and the `export`ed variables.
//!
//! Example: `Script(wait 1s, read c.count, write c.reset, loop)`

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::sync::{Arc, Mutex};

use sluice_core::signals::stop_requested;
use sluice_core::{drop_reasons, Batch, Concurrency, ConfigCx, Cx, Drops, Element, ElementClass};
use sluice_core::{HandlerError, Handlers, InitCx, Packet, Table, Timestamp};
use sluice_lang::args::{unquote, Args, FromArg, Seconds};

use super::functions::{self, quote, shift_word, MAX_VALUE};

/// How a script runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptType {
    /// Starts at initialisation.
    Active,
    /// Runs only when prodded through handlers.
    Passive,
    /// Receives driver stop events; the router stops when it ends.
    Driver,
    /// Runs once for each packet that arrives; its return value picks the output.
    Packet,
    /// Runs when one of its signals arrives.
    Signal,
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

/// An instruction, after configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Set,
    Init,
    Export,
    Print,
    PrintN,
    Read,
    Write,
    WaitTime,
    WaitStep,
    Label,
    Goto,
    Return,
    End,
    Exit,
    Stop,
    Error,
}

/// Where a `goto` goes: an instruction, or one of the ending instructions used as a label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Pos(usize),
    Finish(Op),
}

#[derive(Clone, Debug)]
struct Insn {
    op: Op,
    /// The `q` form: remove a layer of quotes.
    q: bool,
    /// Variable name (set, init, export; `_` for return).
    var: String,
    /// Argument text, substituted when run (the condition of a `goto`).
    text: String,
    /// Step count of a `pause`.
    n: u32,
    target: Target,
}

/// Click's instruction names.
fn op_of(name: &str) -> Option<(Op, bool)> {
    Some(match name {
        "set" => (Op::Set, false),
        "setq" => (Op::Set, true),
        "init" => (Op::Init, false),
        "initq" => (Op::Init, true),
        "export" => (Op::Export, false),
        "exportq" => (Op::Export, true),
        "print" => (Op::Print, false),
        "printq" => (Op::Print, true),
        "printn" => (Op::PrintN, false),
        "printnq" => (Op::PrintN, true),
        "save" | "append" => (Op::Print, false),
        "read" => (Op::Read, false),
        "readq" => (Op::Read, true),
        "write" => (Op::Write, false),
        "writeq" => (Op::Write, true),
        "wait" => (Op::WaitTime, false),
        "wait_time" | "wait_for" => (Op::WaitTime, false),
        "pause" | "wait_step" | "wait_stop" => (Op::WaitStep, false),
        "label" => (Op::Label, false),
        "goto" | "loop" => (Op::Goto, false),
        "return" => (Op::Return, false),
        "returnq" => (Op::Return, true),
        "end" => (Op::End, false),
        "exit" => (Op::Exit, false),
        "stop" => (Op::Stop, false),
        "error" => (Op::Error, false),
        "errorq" => (Op::Error, true),
        _ => return None,
    })
}

/// Most jumps one run may take without blocking (Click's limit).
const MAX_JUMPS: u32 = 1000;
/// Deepest nesting of substitutions that is expanded (Click's limit); deeper `$` stay as text.
const MAX_DEPTH: u32 = 10;
/// `$?` after a failed write (Click's handlers answer -EINVAL).
const WRITE_FAILED: i32 = -22;

/// The one static copy of a handler name chosen by a configuration (`export`): each distinct
/// name is allocated once per process, however many routers name it.
fn intern(name: String) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.get(name.as_str()) {
        return n;
    }
    let n: &'static str = Box::leak(name.into_boxed_str());
    names.insert(n);
    n
}

/// Declares, on a `Table<Script>`, Click's functions that are public handlers (reachable
/// through ControlSocket and other elements) as read handlers with parameters; `cat`, `catq`
/// and `kill` are private to the script, as in Click.
macro_rules! public_functions {
    ($t:expr; $($name:literal)*) => {
        $t$(.read_param($name, |s, p| s.function($name, p)))*
    };
}

drop_reasons! {
    /// Why a PACKET script drops a packet.
    enum Reason {
        /// The script exited, failed or waited, or returned no output number.
        NoOutput => "no output chosen",
        /// The script chose an output that is not a push output.
        BadOutput => "not a push output",
    }
}

/// A handler a script calls: one of its own, or one the router answers.
enum Callee {
    Own(String),
    Router(String),
}

/// The script interpreter shared by Script and DriverManager.
pub struct Script {
    pub(crate) kind: ScriptType,
    insns: Vec<Insn>,
    vars: HashMap<String, String>,
    run_args: String,
    run_name: String,
    run_write: bool,
    write_status: i32,
    pc: usize,
    state: State,
    ret: String,
    failed: bool,
    class: &'static str,
    /// The variables exported as handlers, in order.
    exports: Vec<&'static str>,
    /// The script's own handlers, as the script itself reads them.
    own: Arc<Handlers>,
    rng: Cell<u64>,
    /// Set when a substitution was nested too deep during the current instruction.
    too_deep: bool,
    /// Packets a PACKET script dropped, by reason.
    drops: Drops<Reason>,
    /// The signals a SIGNAL script runs on.
    signals: Vec<i32>,
}

impl Script {
    /// A script of the given type; `class` names it in messages.
    pub fn new(kind: ScriptType, class: &'static str) -> Script {
        Script {
            kind,
            insns: Vec::new(),
            vars: HashMap::new(),
            run_args: String::new(),
            run_name: String::new(),
            run_write: false,
            write_status: 0,
            pc: 0,
            state: State::Ready,
            ret: String::new(),
            failed: false,
            class,
            exports: Vec::new(),
            own: Arc::default(),
            rng: Cell::new(0x2545_f491_4f6c_dd1d ^ std::process::id() as u64),
            too_deep: false,
            drops: Drops::default(),
            signals: Vec::new(),
        }
    }

    /// Parses `TYPE` and the instruction list (Click's syntax and messages). `ports` says
    /// whether the element has inputs or outputs: such a script is a PACKET script by
    /// default, and only PACKET scripts may have ports.
    pub(crate) fn configure_insns(
        &mut self,
        args: &mut Args,
        ports: (usize, usize),
    ) -> Result<(), ()> {
        if let Some(t) = args.read::<String>("TYPE")? {
            let word = t.split_whitespace().next().unwrap_or("");
            self.kind = match t.as_str() {
                "ACTIVE" => ScriptType::Active,
                "PASSIVE" => ScriptType::Passive,
                "DRIVER" => ScriptType::Driver,
                "PACKET" | "PUSH" => ScriptType::Packet,
                _ if word == "SIGNAL" => {
                    let signos: Option<Vec<i32>> = t
                        .split_whitespace()
                        .skip(1)
                        .map(functions::signal)
                        .collect();
                    match signos {
                        Some(v) if !v.is_empty() && v.iter().all(|&n| n > 0 && n < 32) => {
                            self.signals = v
                        }
                        _ => {
                            args.error("bad signal number");
                            return Err(());
                        }
                    }
                    ScriptType::Signal
                }
                _ if word == "PROXY" => {
                    args.error(format!("TYPE {word} is not supported"));
                    return Err(());
                }
                _ => {
                    args.error("bad TYPE");
                    return Err(());
                }
            };
        } else if ports != (0, 0) {
            self.kind = ScriptType::Packet;
        }
        if self.kind == ScriptType::Packet && ports.0 == 0 {
            args.error("PACKET script must have inputs");
            return Err(());
        } else if self.kind != ScriptType::Packet && ports != (0, 0) {
            args.error("ports allowed only on PACKET scripts");
            return Err(());
        }
        let mut ok = true;
        let mut labels: Vec<(String, usize)> = Vec::new();
        let mut exports = Vec::new();
        for raw in args.rest() {
            let mut rest = raw.as_str();
            let name = shift_word(&mut rest);
            if name.is_empty() {
                continue;
            }
            let Some((op, q)) = op_of(name) else {
                args.error(format!("syntax error at '{name}'"));
                ok = false;
                continue;
            };
            let mut insn = Insn {
                op,
                q,
                var: String::new(),
                text: rest.to_string(),
                n: 1,
                target: Target::Pos(0),
            };
            let mut bad = false;
            match (name, op) {
                ("save" | "append", _) => {
                    let mut r = rest;
                    let word = shift_word(&mut r);
                    let file = if r.is_empty() { "-" } else { r };
                    let redirect = if name == "save" { ">" } else { ">>" };
                    insn.text = format!("{redirect}{file} {word}");
                }
                (_, Op::WaitTime) if rest.is_empty() => insn.op = Op::WaitStep,
                (_, Op::WaitTime) => bad = !rest.contains('$') && Seconds::from_arg(rest).is_err(),
                (_, Op::WaitStep) => match u32::from_arg(rest) {
                    _ if rest.is_empty() => {}
                    Ok(n) => insn.n = n,
                    Err(_) => bad = true,
                },
                (_, Op::Set | Op::Init | Op::Export | Op::Return) => {
                    let mut r = rest;
                    if op == Op::Return {
                        insn.var = "_".into();
                    } else {
                        insn.var = shift_word(&mut r).to_string();
                        bad = insn.var.is_empty() || (op == Op::Set && r.is_empty());
                    }
                    insn.text = r.to_string();
                    self.vars.entry(insn.var.clone()).or_default();
                    if op == Op::Export && !bad {
                        exports.push(insn.var.clone());
                    }
                }
                (_, Op::Label) => {
                    let mut r = rest;
                    insn.text = shift_word(&mut r).to_string();
                    bad = insn.text.is_empty() || !r.is_empty();
                    if !bad && !labels.iter().any(|(l, _)| *l == insn.text) {
                        labels.push((insn.text.clone(), self.insns.len()));
                    }
                }
                ("loop", _) => bad = !rest.is_empty(),
                (_, Op::End | Op::Exit | Op::Stop) => bad = !rest.is_empty(),
                _ => {}
            }
            if bad {
                args.error(format!("syntax error at '{name}'"));
                ok = false;
                continue;
            }
            self.insns.push(insn);
        }
        // Resolve the gotos; their text keeps only the condition.
        for insn in self.insns.iter_mut().filter(|i| i.op == Op::Goto) {
            let mut r = insn.text.as_str();
            let label = shift_word(&mut r).to_string();
            let cond = r.to_string();
            insn.target = match label.as_str() {
                "" | "begin" | "loop" => Target::Pos(0),
                "end" => Target::Finish(Op::End),
                "exit" => Target::Finish(Op::Exit),
                "stop" => Target::Finish(Op::Stop),
                "error" => Target::Finish(Op::Error),
                l => match labels.iter().find(|(n, _)| n == l) {
                    Some(&(_, i)) => Target::Pos(i),
                    None => {
                        args.error(format!("no such label '{l}'"));
                        ok = false;
                        Target::Pos(0)
                    }
                },
            };
            insn.text = cond;
        }
        if self.insns.is_empty() && self.kind == ScriptType::Driver {
            self.insns.push(Insn {
                op: Op::WaitStep,
                q: false,
                var: String::new(),
                text: String::new(),
                n: 1,
                target: Target::Pos(0),
            });
        }
        // Export handlers are named by the configuration.
        let fixed = self.table();
        for name in exports {
            if fixed.spec(&name).is_none() && !self.exports.contains(&name.as_str()) {
                self.exports.push(intern(name));
            }
        }
        self.own = Arc::new(self.table());
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }

    /// `NAME :: CLASS`, as Click names an element in messages.
    fn decl(&self, cx: &Cx) -> String {
        format!("{} :: {}", cx.name(), self.class)
    }

    fn report(&self, cx: &Cx, msg: impl std::fmt::Display) {
        eprintln!("{}: {}", self.decl(cx), msg);
    }

    /// Runs `init`/`export` once, registers DRIVER scripts, starts ACTIVE and DRIVER ones.
    pub(crate) fn initialize_script(&mut self, cx: &mut Cx) {
        for i in 0..self.insns.len() {
            if matches!(self.insns[i].op, Op::Init | Op::Export) {
                let insn = self.insns[i].clone();
                if let Some(mut v) = self.expand_insn(&insn.text, false, cx) {
                    if insn.q {
                        v = unquote(&v);
                    }
                    self.vars.insert(insn.var, v);
                }
            }
        }
        if self.kind == ScriptType::Driver {
            cx.manage_driver_stops();
        }
        if matches!(self.kind, ScriptType::Packet | ScriptType::Signal) {
            // A PACKET script runs for each packet, a SIGNAL script when a signal arrives
            // (and both when prodded, like a PASSIVE one).
            self.state = State::Paused(1);
            self.catch_signals(cx);
        } else if self.kind != ScriptType::Passive {
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
        cx.cancel_timer(0);
        if self.kind == ScriptType::Driver {
            cx.stop_router();
        }
    }

    /// Runs from the current instruction until the script blocks or ends. A run that takes
    /// more than [`MAX_JUMPS`] jumps without blocking is given up, as in Click; a stop signal
    /// (SIGINT, SIGTERM) ends it between instructions so the router can stop.
    pub(crate) fn run(&mut self, cx: &mut Cx) {
        self.state = State::Ready;
        let mut jumps = 0u32;
        while self.state == State::Ready {
            if stop_requested() {
                self.state = State::Done;
                return;
            }
            let ipos = self.pc;
            if ipos >= self.insns.len() {
                // Falling off the end: `end`, or `stop` for a driver script.
                let op = if self.kind == ScriptType::Driver {
                    Op::Stop
                } else {
                    Op::End
                };
                self.end_with(op, cx);
                return;
            }
            self.pc += 1;
            self.too_deep = false;
            self.exec(ipos, cx);
            if self.too_deep {
                self.report(
                    cx,
                    format!("substitutions nested more than {MAX_DEPTH} deep were not expanded"),
                );
            }
            if self.state == State::Ready && self.pc != ipos + 1 {
                jumps += 1;
                if jumps >= MAX_JUMPS {
                    self.report(cx, "too many jumps, giving up");
                    self.pc = self.insns.len();
                    self.finish(cx);
                }
            }
        }
    }

    /// Asks for the `run` handler to be called on this SIGNAL script's signals (again: a
    /// signal script that ends with `end` handles the next one too).
    fn catch_signals(&self, cx: &mut Cx) {
        for &signo in &self.signals {
            cx.catch_signal(signo);
        }
    }

    /// Runs a PACKET script from the start for a packet that arrived on input `port`
    /// (`$input`); returns the output its `return` value (or `end`: 0) names, if any.
    fn run_packet(&mut self, port: usize, cx: &mut Cx) -> Option<usize> {
        self.vars.insert("input".into(), port.to_string());
        self.ret.clear();
        self.pc = 0;
        self.run(cx);
        usize::from_arg(self.ret.trim()).ok()
    }

    /// Sends `p` to output `out` if that is a push output; else drops and counts it.
    fn emit(&mut self, out: Option<usize>, p: Packet, cx: &mut Cx) {
        match out {
            Some(o) if o < cx.noutputs() && cx.output_is_push(o) => cx.push_one(o, p),
            Some(_) => self.drops.count(Reason::BadOutput),
            None => self.drops.count(Reason::NoOutput),
        }
    }

    /// Ends the script as instruction `op` (end, exit, stop, error) does. In a PACKET
    /// script, `end` sends the packet to output 0.
    fn end_with(&mut self, op: Op, cx: &mut Cx) {
        self.failed = op == Op::Error;
        if op == Op::End && self.kind == ScriptType::Packet {
            self.ret = "0".into();
        }
        if op == Op::End {
            self.catch_signals(cx);
        }
        if op == Op::Stop && self.kind != ScriptType::Driver {
            cx.request_driver_stop();
            self.state = State::Done;
            cx.cancel_timer(0);
        } else {
            self.finish(cx);
        }
    }

    /// Substitutes `text` for instruction use; on failure reports it, ends the script and
    /// returns `None`.
    fn expand_insn(&mut self, text: &str, quote_all: bool, cx: &mut Cx) -> Option<String> {
        match self.expand(text, quote_all, 0, cx) {
            Ok(v) => Some(v),
            Err(e) => {
                self.report(cx, format!("{e}; script ended"));
                self.finish(cx);
                None
            }
        }
    }

    fn exec(&mut self, ipos: usize, cx: &mut Cx) {
        let insn = self.insns[ipos].clone();
        let q = insn.q;
        match insn.op {
            Op::Set | Op::Return => {
                let Some(mut v) = self.expand_insn(&insn.text, false, cx) else {
                    return;
                };
                if q {
                    v = unquote(&v);
                }
                if insn.op == Op::Return {
                    self.ret = v.clone();
                }
                self.vars.insert(insn.var, v);
                if insn.op == Op::Return {
                    self.finish(cx);
                }
            }
            Op::Init | Op::Export | Op::Label => {}
            Op::Print | Op::PrintN => self.print(&insn, cx),
            Op::Read => {
                let Some(text) = self.expand_insn(&insn.text, false, cx) else {
                    return;
                };
                let (name, param) = split_call(&text, q);
                match self.call_read(name, param.as_deref(), cx) {
                    Ok((shown, v)) => {
                        let v = v.strip_suffix('\n').unwrap_or(&v);
                        eprint!("{shown}:\n{v}\n");
                    }
                    Err(e) => self.report(cx, e),
                }
            }
            Op::Write => {
                let Some(text) = self.expand_insn(&insn.text, false, cx) else {
                    return;
                };
                let (name, value) = split_call(&text, q);
                self.write_status = match self.call_write(name, value.as_deref().unwrap_or(""), cx)
                {
                    Ok(()) => 0,
                    Err(WriteError::Call(e)) => {
                        self.report(cx, e);
                        WRITE_FAILED
                    }
                    Err(WriteError::Handler(m)) => {
                        // Click's context for an error reported by the handler itself.
                        eprintln!("While calling '{}':", text.trim());
                        for line in m.trim_end().lines() {
                            eprintln!("  {line}");
                        }
                        WRITE_FAILED
                    }
                };
            }
            Op::WaitTime => {
                let Some(t) = self.expand_insn(&insn.text, false, cx) else {
                    return;
                };
                match Seconds::from_arg(t.trim()) {
                    Ok(s) => {
                        cx.schedule_after(0, Timestamp::from_secs_f64(s.0));
                        self.state = State::Waiting;
                    }
                    Err(_) => {
                        self.report(cx, "syntax error at 'wait'");
                        self.finish(cx);
                    }
                }
            }
            Op::WaitStep => {
                if insn.n > 0 {
                    self.state = State::Paused(insn.n);
                }
            }
            Op::Goto => {
                let Some(cond) = self.expand_insn(&insn.text, false, cx) else {
                    return;
                };
                let go = if cond.is_empty() {
                    true
                } else {
                    match bool::from_arg(&cond) {
                        Ok(b) => b,
                        Err(_) => {
                            self.report(cx, format!("bad condition '{cond}'"));
                            false
                        }
                    }
                };
                if go {
                    match insn.target {
                        Target::Pos(i) => self.pc = i,
                        Target::Finish(op) => self.end_with(op, cx),
                    }
                }
            }
            Op::End | Op::Exit | Op::Stop => self.end_with(insn.op, cx),
            Op::Error => {
                let Some(mut msg) = self.expand_insn(&insn.text, false, cx) else {
                    return;
                };
                if q {
                    msg = unquote(&msg);
                }
                if !msg.is_empty() {
                    self.report(cx, msg);
                }
                self.end_with(Op::Error, cx);
            }
        }
    }

    /// `print [>FILE | >>FILE] [TEXT | HANDLER]`: an argument starting with a letter, `@` or
    /// `_` names a read handler, which is called; anything else is text, unquoted once.
    fn print(&mut self, insn: &Insn, cx: &mut Cx) {
        let mut text = insn.text.as_str();
        let mut file = None;
        if let Some(r) = text.strip_prefix('>') {
            let (append, r) = match r.strip_prefix('>') {
                Some(r) => (true, r),
                None => (false, r),
            };
            let mut r = r;
            let name = unquote(shift_word(&mut r));
            text = r;
            if !name.is_empty() && name != "-" {
                if let Err(e) = functions::check_outside(&name) {
                    return self.report(cx, e);
                }
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .append(append)
                    .truncate(!append)
                    .open(&name);
                match f {
                    Ok(f) => file = Some(f),
                    Err(e) => return self.report(cx, format!("{name}: {e}")),
                }
            }
        }
        let mut ok = true;
        let mut result = if text
            .starts_with(|c: char| c.is_ascii_alphabetic() || c == '@' || c == '_')
        {
            let Some(call) = self.expand_insn(text, false, cx) else {
                return;
            };
            let (name, param) = split_call(&call, insn.q);
            match self.call_read(name, param.as_deref(), cx) {
                // Handler values carry a trailing newline here; Click's mostly do not, so
                // `printn` leaves it out.
                Ok((_, v)) if insn.op == Op::PrintN => v.strip_suffix('\n').unwrap_or(&v).into(),
                Ok((_, v)) => v,
                Err(e) => {
                    self.report(cx, e);
                    ok = false;
                    String::new()
                }
            }
        } else {
            let Some(v) = self.expand_insn(text, true, cx) else {
                return;
            };
            unquote(&v)
        };
        if ok && insn.op == Op::Print && !result.ends_with('\n') {
            result.push('\n');
        }
        let r = match file {
            Some(mut f) => f.write_all(result.as_bytes()),
            None => {
                let mut o = std::io::stdout().lock();
                o.write_all(result.as_bytes()).and_then(|_| o.flush())
            }
        };
        if let Err(e) = r {
            self.report(cx, format!("print: {e}"));
        }
    }

    /// Which handler `name` means: the script's own handlers (and Click's functions) by
    /// bare name or by `SELF.name`, else the router's.
    fn callee(&self, name: &str, cx: &Cx) -> Callee {
        match name.rsplit_once('.') {
            Some((e, h)) if e == cx.name() => Callee::Own(h.to_string()),
            Some(_) => Callee::Router(name.to_string()),
            None if self.is_own(name) => Callee::Own(name.to_string()),
            None => Callee::Router(name.to_string()),
        }
    }

    fn is_own(&self, h: &str) -> bool {
        self.own.spec(h).is_some()
            || matches!(
                h,
                "shift" | "readable" | "writable" | "now" | "cat" | "catq" | "kill"
            )
            || ["name", "class", "config", "ports", "handlers"].contains(&h)
    }

    /// Calls a read handler for the script: returns the name to show and the value.
    fn call_read(
        &mut self,
        name: &str,
        param: Option<&str>,
        cx: &mut Cx,
    ) -> Result<(String, String), String> {
        if name.is_empty() {
            return Err("missing handler name".into());
        }
        match self.callee(name, cx) {
            Callee::Own(h) => {
                let shown = format!("{}.{}", cx.name(), h);
                let v = self.own_read(&h, param.unwrap_or(""), cx)?;
                Ok((shown, v))
            }
            Callee::Router(path) => {
                let v = match path.rsplit_once('.') {
                    // Reading another script's `run` runs it, as in Click.
                    Some((e, "run")) if is_script(cx, e) => cx
                        .write_handler(&path, param.unwrap_or(""))
                        .and_then(|_| cx.read_handler(&path)),
                    _ => match param {
                        Some(p) => cx.read_handler_param(&path, p),
                        None => cx.read_handler(&path),
                    },
                };
                v.map(|v| (path.clone(), v)).map_err(|e| describe(&path, e))
            }
        }
    }

    fn call_write(&mut self, name: &str, value: &str, cx: &mut Cx) -> Result<(), WriteError> {
        if name.is_empty() {
            return Err(WriteError::Call("missing handler name".into()));
        }
        match self.callee(name, cx) {
            Callee::Own(h) if h == "set" => self.set_var(value).map_err(WriteError::Call),
            Callee::Own(h) => Err(WriteError::Call(format!(
                "'{}.{h}' cannot be written from inside the script",
                cx.name()
            ))),
            Callee::Router(path) => cx.write_handler(&path, value).map_err(|e| match e {
                HandlerError::Failed(m) => WriteError::Handler(m),
                e => WriteError::Call(e.to_string()),
            }),
        }
    }

    /// The `set` handler: `VAR VALUE`.
    fn set_var(&mut self, value: &str) -> Result<(), String> {
        let mut r = value;
        let var = shift_word(&mut r);
        if var.is_empty() {
            return Err("no variable".into());
        }
        if r.len() > MAX_VALUE {
            return Err(too_large(var));
        }
        if var == "args" {
            self.run_args = r.to_string();
        } else {
            self.vars.insert(var.to_string(), r.to_string());
        }
        Ok(())
    }

    /// Reads one of the script's own handlers with full access to the script.
    fn own_read(&mut self, h: &str, param: &str, cx: &mut Cx) -> Result<String, String> {
        match h {
            "shift" => {
                let mut r = param;
                let var = match shift_word(&mut r) {
                    "" => "args",
                    v => v,
                };
                if !r.is_empty() {
                    return Err("too many arguments".into());
                }
                let slot = if var == "args" {
                    &mut self.run_args
                } else {
                    self.vars
                        .get_mut(var)
                        .ok_or_else(|| format!("undefined variable '{var}'"))?
                };
                let mut rest = slot.as_str();
                let w = shift_word(&mut rest).to_string();
                *slot = rest.to_string();
                Ok(w)
            }
            "readable" | "writable" => {
                let write = h == "writable";
                let mut r = param;
                loop {
                    let name = shift_word(&mut r);
                    if name.is_empty() {
                        return Ok("true".into());
                    }
                    let found = match self.callee(name, cx) {
                        Callee::Own(o) => {
                            let x = self.own.spec(&o);
                            x.is_some_and(|x| if write { x.write } else { x.read })
                        }
                        Callee::Router(p) => cx.check_handler(&p, write).is_ok(),
                    };
                    if !found {
                        return Ok("false".into());
                    }
                }
            }
            "now" => Ok(cx.now().to_string()),
            "name" | "class" | "config" | "ports" | "handlers" => cx
                .read_handler(&format!("{}.{h}", cx.name()))
                .map_err(|e| e.to_string()),
            _ => match functions::call(h, param, true, &self.rng) {
                Some(r) => r,
                None => {
                    let own = self.own.clone();
                    own.read(self, h, param)
                        .unwrap_or_else(|| Err(format!("no handler '{h}'")))
                }
            },
        }
    }

    /// The `get` handler: `VAR`.
    fn get(&self, param: &str) -> Result<String, String> {
        let mut r = param;
        let var = shift_word(&mut r);
        if var.is_empty() {
            return Err("no variable".into());
        }
        if !r.is_empty() {
            return Err("too many arguments".into());
        }
        if var == "args" {
            return Ok(self.run_args.clone());
        }
        self.vars
            .get(var)
            .cloned()
            .ok_or_else(|| format!("undefined variable '{var}'"))
    }

    /// Public function `name` of `param`.
    fn function(&self, name: &str, param: &str) -> Result<String, String> {
        functions::call(name, param, false, &self.rng)
            .unwrap_or_else(|| Err(format!("no handler '{name}'")))
    }

    /// The `step` handler: `[N]`.
    fn write_step(&mut self, value: &str, cx: &mut Cx) -> Result<(), String> {
        let n = match value.trim() {
            "" | "router" => 1,
            v => u32::from_arg(v).map_err(|_| "syntax error".to_string())?,
        };
        self.step(n, cx);
        Ok(())
    }

    /// The `goto` handler: `LABEL`.
    fn write_goto(&mut self, value: &str, cx: &mut Cx) -> Result<(), String> {
        let l = value.trim();
        let pc = match l {
            "begin" | "loop" => 0,
            _ => self
                .insns
                .iter()
                .position(|i| i.op == Op::Label && i.text == l)
                .ok_or("jump to nonexistent label")?,
        };
        cx.cancel_timer(0);
        self.pc = pc;
        self.run_name = "goto".into();
        self.run(cx);
        Ok(())
    }

    /// The `run` handler: `[ARGS]`.
    fn write_run(&mut self, value: &str, cx: &mut Cx) -> Result<(), String> {
        cx.cancel_timer(0);
        if value.len() > MAX_VALUE {
            return Err(too_large("args"));
        }
        self.run_args = value.to_string();
        self.run_name = "run".into();
        self.run_write = true;
        self.ret.clear();
        self.failed = false;
        self.pc = 0;
        self.run(cx);
        self.run_write = false;
        if self.failed {
            return Err("script error".into());
        }
        Ok(())
    }

    /// The script's handler table: `step`, `goto`, `run`, `position`, `done`, `get`, `set`,
    /// the public functions, `drops` and `drop_details` for PACKET scripts, then the exported
    /// variables.
    pub(crate) fn table(&self) -> Handlers {
        let t = Table::<Script>::new()
            .write("step", Script::write_step)
            .write("goto", Script::write_goto)
            .read_param("run", |s, _| Ok(s.ret.clone()))
            .write("run", Script::write_run)
            .read("position", |s| s.pc)
            .read("done", |s| s.state == State::Done)
            .read_param("get", |s, p| s.get(p))
            .write("set", |s, v, _| s.set_var(v));
        let mut t = public_functions!(t;
            "add" "sub" "min" "max" "mul" "div" "idiv" "mod" "rem" "neg" "abs" "eq" "ne" "gt"
            "ge" "lt" "le" "not" "sprintf" "first" "random" "and" "or" "nand" "nor" "if" "in"
            "length" "unquote" "htons" "htonl" "ntohs" "ntohl"
        );
        if self.kind == ScriptType::Packet {
            t = t.drops(|s| &s.drops);
        }
        for &name in &self.exports {
            t = t.read_with(name, move |s| s.vars.get(name).cloned().unwrap_or_default());
        }
        t.into()
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

    /// A variable reference: `$NAME`, `${NAME}`, `$?`, `$#`, `$$`, `$0`..., `$args`,
    /// `$write`. `None` leaves the reference as text, as Click does for unknown names.
    fn variable(&self, name: &str) -> Option<String> {
        if let Some(v) = self.vars.get(name) {
            return Some(v.clone());
        }
        Some(match name {
            "?" => self.write_status.to_string(),
            "args" => self.run_args.clone(),
            "$" => std::process::id().to_string(),
            "0" => self.run_name.clone(),
            "#" => {
                let mut r = self.run_args.as_str();
                let mut n = 0;
                while !shift_word(&mut r).is_empty() {
                    n += 1;
                }
                n.to_string()
            }
            "write" => self.run_write.to_string(),
            _ if name.starts_with(|c: char| ('1'..='9').contains(&c)) => {
                let n = usize::from_arg(name).ok()?;
                let mut r = self.run_args.as_str();
                let mut w = "";
                for _ in 0..n {
                    w = shift_word(&mut r);
                    if w.is_empty() {
                        break;
                    }
                }
                w.to_string()
            }
            _ => return None,
        })
    }

    /// `$(HANDLER [ARGS])`: the handler's value without its trailing newline; `None` (the
    /// reference stays as text) if there is no such handler.
    fn expand_call(&mut self, call: &str, cx: &mut Cx) -> Option<String> {
        let (name, param) = split_call(call, false);
        match self.call_read(name, param.as_deref(), cx) {
            Ok((_, v)) => Some(v.strip_suffix('\n').map(str::to_string).unwrap_or(v)),
            Err(e) => {
                self.report(cx, format!("$({}): {e}", abbreviate(call.trim())));
                let missing = e.starts_with("no ");
                (!missing).then(String::new)
            }
        }
    }

    /// Click's `cp_expand`: substitutes `$VAR`, `${VAR}` and `$(...)` in `s`, outside single
    /// quotes; inside double quotes (or everywhere with `quote_all`) substituted text is
    /// quoted so that one later unquote restores it. Work is linear in the text for each of
    /// at most [`MAX_DEPTH`] nesting levels; results are bounded by [`MAX_VALUE`].
    pub(crate) fn expand(
        &mut self,
        s: &str,
        quote_all: bool,
        depth: u32,
        cx: &mut Cx,
    ) -> Result<String, String> {
        if !s.contains('$') {
            return Ok(s.to_string());
        }
        let b = s.as_bytes();
        let mut out = String::new();
        let mut plain = 0; // start of text not yet copied
        let mut inq = 0u8;
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\\' if inq == b'"' => i += 1,
                c @ (b'\'' | b'"') => {
                    if inq == 0 {
                        inq = c;
                    } else if inq == c {
                        inq = 0;
                    }
                }
                b'/' if inq == 0 && matches!(b.get(i + 1), Some(b'/' | b'*')) => {
                    i = skip_comment(b, i) - 1;
                }
                b'$' if i + 1 < b.len() && inq != b'\'' => {
                    if depth > MAX_DEPTH {
                        self.too_deep = true;
                        i += 1;
                        continue;
                    }
                    let before = i;
                    let (kind, name_range, next, nested) = match b[i + 1] {
                        b'{' => {
                            let start = i + 2;
                            let Some(off) = b[start..].iter().position(|&c| c == b'}') else {
                                break;
                            };
                            let nested = b[start..start + off].contains(&b'$');
                            (b'{', start..start + off, start + off + 1, nested)
                        }
                        b'(' => {
                            let start = i + 2;
                            let (end, nested) = match_paren(b, start);
                            if end == start || b[end - 1] != b')' {
                                break;
                            }
                            (b'(', start..end - 1, end, nested)
                        }
                        c if c.is_ascii_alphanumeric() || c == b'_' => {
                            let start = i + 1;
                            let len = b[start..]
                                .iter()
                                .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
                                .unwrap_or(b.len() - start);
                            (b'a', start..start + len, start + len, false)
                        }
                        b'?' | b'#' | b'$' => (b'a', i + 1..i + 2, i + 2, false),
                        _ => {
                            i += 1;
                            continue;
                        }
                    };
                    out.push_str(&s[plain..before]);
                    let mut name = s[name_range].to_string();
                    if nested {
                        name = self.expand(&name, false, depth + 1, cx)?;
                    }
                    let value = if kind == b'(' {
                        self.expand_call(&name, cx)
                    } else {
                        self.variable(&name)
                    };
                    plain = next;
                    match value {
                        None if nested => {
                            out.push_str(&s[before..before + 2]);
                            out.push_str(&name);
                            out.push(b[next - 1] as char);
                        }
                        None => plain = before,
                        Some(v) if inq == b'"' || (quote_all && inq == 0) => {
                            let q = quote(&v);
                            let inner = &q[1..q.len() - 1];
                            if inq == b'"' {
                                out.push_str(inner);
                            } else {
                                out.push('"');
                                out.push_str(inner);
                                out.push('"');
                            }
                        }
                        Some(v) => out.push_str(&v),
                    }
                    if out.len() > MAX_VALUE {
                        return Err(format!("substitution result larger than {MAX_VALUE} bytes"));
                    }
                    i = next;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        out.push_str(&s[plain.min(s.len())..]);
        if out.len() > MAX_VALUE {
            return Err(format!("substitution result larger than {MAX_VALUE} bytes"));
        }
        Ok(out)
    }
}

/// Finds the end of a `$(...)` whose text starts at `start`: the index just past the closing
/// parenthesis (or the end of `b`), and whether a `$` occurs inside outside single quotes.
fn match_paren(b: &[u8], start: usize) -> (usize, bool) {
    let (mut level, mut nquote, mut nested) = (1, 0u8, false);
    let mut j = start;
    while j < b.len() && level > 0 {
        match b[j] {
            b'(' if nquote == 0 => level += 1,
            b')' if nquote == 0 => level -= 1,
            c @ (b'"' | b'\'') => {
                if nquote == 0 {
                    nquote = c;
                } else if nquote == c {
                    nquote = 0;
                }
            }
            b'\\' if j + 1 < b.len() && nquote != b'\'' => j += 1,
            b'$' if nquote != b'\'' => nested = true,
            _ => {}
        }
        j += 1;
    }
    (j.min(b.len()), nested)
}

/// Skips a `//` or `/*` comment starting at `i` and the space after it; returns the index of
/// the next character.
fn skip_comment(b: &[u8], mut i: usize) -> usize {
    while i + 1 < b.len() && b[i] == b'/' && matches!(b[i + 1], b'/' | b'*') {
        if b[i + 1] == b'/' {
            i = b[i..]
                .iter()
                .position(|&c| c == b'\n' || c == b'\r')
                .map_or(b.len(), |p| i + p + 1);
        } else {
            i = b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len(), |p| i + 2 + p + 2);
        }
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
    }
    i.max(1)
}

/// Splits `HANDLER [PARAMS]`; the `q` forms unquote the parameters. No parameter text gives
/// `None` (a plain read).
fn split_call(text: &str, q: bool) -> (&str, Option<String>) {
    let mut r = text;
    let name = shift_word(&mut r);
    let param = (!r.is_empty()).then(|| if q { unquote(r) } else { r.to_string() });
    (name, param)
}

/// At most the first 60 characters of `s`, for messages.
fn abbreviate(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn too_large(var: &str) -> String {
    format!("value of '{var}' larger than {MAX_VALUE} bytes")
}

/// Why a `write` failed.
enum WriteError {
    /// The handler could not be called (no such handler, not writable, bad name).
    Call(String),
    /// The handler ran and reported this error.
    Handler(String),
}

fn describe(path: &str, e: HandlerError) -> String {
    match e {
        HandlerError::Failed(m) => format!("{path}: {}", m.trim_end()),
        e => e.to_string(),
    }
}

/// True if element `e` is a Script (or DriverManager), whose `run` runs when read.
fn is_script(cx: &mut Cx, e: &str) -> bool {
    cx.read_handler(&format!("{e}.class"))
        .is_ok_and(|c| matches!(c.trim(), "Script" | "DriverManager"))
}

impl Element for Script {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.configure_insns(args, (cx.ninputs(), cx.noutputs()))
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        for p in batch {
            let out = self.run_packet(port, cx);
            self.emit(out, p, cx);
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut keep = cx.pull(0, max);
        keep.filter_map(|p| match self.run_packet(0, cx) {
            Some(0) => Some(p),
            out => {
                self.emit(out, p, cx);
                None
            }
        });
        keep
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.initialize_script(cx);
        Ok(())
    }

    /// A PACKET script reached from several threads runs as one copy per thread, each for
    /// the packets of its thread (Click runs its one script from every thread).
    fn concurrency(&self) -> Concurrency {
        if self.kind == ScriptType::Packet {
            Concurrency::Replicated
        } else {
            Concurrency::Exclusive
        }
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.timer(cx);
    }

    fn driver_stop_event(&mut self, cx: &mut Cx) {
        self.stop_event(cx);
    }

    fn handler_table(&self) -> Handlers {
        self.table()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Script",
    ports: "-/-",
    processing: "ah/ah",
    flow: "",
    source: include_str!("script.rs"),
    make: || Box::new(Script::new(ScriptType::Active, "Script")),
};
