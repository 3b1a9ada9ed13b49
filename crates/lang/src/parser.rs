//! Parser: builds scopes (declarations, connections, compound classes) from tokens.

use crate::args::{split_args, split_words};
use crate::diags::Diags;
use crate::lexer::{Lexer, Tok, Token};
use crate::Landmark;
use std::collections::{HashMap, HashSet, VecDeque};

pub(crate) type ClassId = usize;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ClassRef {
    Primitive(String),
    Compound(ClassId),
}

#[derive(Clone, Debug)]
pub(crate) enum DeclKind {
    Class(ClassRef),
    /// Pass-through pseudo node (compound `input`/`output`, group ends).
    Virtual,
    /// Referenced before declaration; an error if never declared.
    Forward,
}

#[derive(Clone, Debug)]
pub(crate) struct Decl {
    pub name: String,
    pub kind: DeclKind,
    pub config: String,
    pub lm: Landmark,
}

#[derive(Clone, Debug)]
pub(crate) struct Conn {
    pub from: usize,
    pub from_port: usize,
    pub to: usize,
    pub to_port: usize,
    pub lm: Landmark,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    pub decls: Vec<Decl>,
    pub names: HashMap<String, usize>,
    pub conns: Vec<Conn>,
    pub classes: HashMap<String, ClassRef>,
    pub defines: Vec<(String, String)>,
    /// Parameter names of this scope: a compound body's formals and every `define` (one
    /// namespace, as in Click).
    pub defined: HashSet<String>,
    /// Groups written directly in this scope.
    pub groups: usize,
    pub compound: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Formal {
    pub var: String,
    pub keyword: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct Body {
    pub formals: Vec<Formal>,
    pub scope: Scope,
    pub ninputs: usize,
    pub noutputs: usize,
    /// Lexical depth: 1 for a class defined at file level, one more per enclosing body.
    /// Parameters of the enclosing bodies are visible in this one (Click's lexical scoping).
    pub depth: usize,
}

#[derive(Clone, Debug)]
pub(crate) enum Alt {
    Body(Box<Body>),
    /// `...`: the definition this one extends (None if there was none).
    Prev(Option<ClassRef>),
}

#[derive(Clone, Debug)]
pub(crate) struct ClassDef {
    pub name: String,
    pub alts: Vec<Alt>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ctx {
    Top,
    /// Inside a body of this compound class.
    Compound(ClassId),
    /// Inside a group with these input and output nodes.
    Group(usize, usize),
}

pub(crate) struct Parser<'a> {
    lx: Lexer,
    /// True for the names of primitive element classes, when the caller knows them (else a
    /// name that starts with a capital letter is taken for a class).
    is_class: Option<&'a dyn Fn(&str) -> bool>,
    /// Tokens looked ahead at (a queue: long lookaheads cost linear time).
    buf: VecDeque<Token>,
    pub diags: Diags,
    pub classes: Vec<ClassDef>,
    pub scopes: Vec<Scope>,
    ctx: Vec<Ctx>,
    pub requirements: Vec<String>,
    anon_class: usize,
    group_count: usize,
    depth: usize,
    /// Library files already read (`require(library FILE)`), each read once.
    libraries: Vec<std::path::PathBuf>,
    /// Names used as classes that no library or configuration defines. As in Click, such a
    /// name is a class from then on, in every scope: declaring an element by it is an error.
    unknown_classes: HashSet<String>,
}

/// One element of a connection. Port lists as in Click: empty when none was written, a
/// trailing `EXPANDABLE` for `[]` or `[N,]` (consecutive ports from the one before).
struct Endpoint {
    in_idx: usize,
    out_idx: usize,
    in_ports: Vec<i64>,
    out_ports: Vec<i64>,
    /// Further elements of a declaration list `a, b :: Class` (no ports).
    more: Vec<usize>,
}

impl Endpoint {
    fn plain(idx: usize) -> Endpoint {
        Endpoint {
            in_idx: idx,
            out_idx: idx,
            in_ports: Vec::new(),
            out_ports: Vec::new(),
            more: Vec::new(),
        }
    }

    fn ports(&self, output: bool) -> &[i64] {
        if output {
            &self.out_ports
        } else {
            &self.in_ports
        }
    }
}

/// Largest library file read by `require(library FILE)`.
const MAX_LIBRARY: u64 = 16 << 20;
/// Marks an expandable port list.
const EXPANDABLE: i64 = -1;
/// Ports above this are refused.
const MAX_PORT: i64 = 1 << 20;
/// Syntactic nesting of compound bodies and groups (recursive descent; Click allows 50).
const MAX_DEPTH: usize = 200;

impl<'a> Parser<'a> {
    pub fn new(text: &str, file: &str, is_class: Option<&'a dyn Fn(&str) -> bool>) -> Parser<'a> {
        Parser {
            lx: Lexer::new(text, file),
            is_class,
            buf: VecDeque::new(),
            diags: Diags::default(),
            classes: Vec::new(),
            scopes: vec![Scope::default()],
            ctx: vec![Ctx::Top],
            requirements: Vec::new(),
            anon_class: 0,
            group_count: 0,
            depth: 0,
            libraries: Vec::new(),
            unknown_classes: HashSet::new(),
        }
    }

    fn peek_n(&mut self, n: usize) -> &Token {
        while self.buf.len() <= n {
            let t = self.lx.next_token();
            self.buf.push_back(t);
        }
        &self.buf[n]
    }

    fn peek(&mut self) -> &Tok {
        &self.peek_n(0).tok
    }

    fn next(&mut self) -> Token {
        self.peek_n(0);
        self.buf.pop_front().unwrap_or_else(|| self.lx.next_token())
    }

    fn lm(&mut self) -> Landmark {
        self.peek_n(0).lm.clone()
    }

    fn error(&mut self, lm: Landmark, msg: impl Into<String>) {
        self.diags.push(&lm, msg);
    }

    fn syntax_error(&mut self) {
        let t = self.peek_n(0).clone();
        let msg = match t.tok {
            Tok::Eof => "syntax error at end of file".to_string(),
            ref k => format!("syntax error near '{}'", k.text()),
        };
        self.error(t.lm, msg);
    }

    /// After `(` has been consumed (and is the last token handed out), lexes a config string.
    fn config_after(&mut self, open: &Token) -> String {
        self.buf.clear();
        self.lx.seek(open.end, open.end_line);
        let lm = open.lm.clone();
        match self.lx.config() {
            Some(s) => s,
            None => {
                self.error(lm, "unterminated configuration string");
                String::new()
            }
        }
    }

    /// Skips to a plausible statement start after an error on line `line`.
    fn recover(&mut self, line: u32) {
        let mut depth = 0usize;
        loop {
            let t = self.peek_n(0).clone();
            match t.tok {
                Tok::Eof => return,
                Tok::Semi if depth == 0 => {
                    self.next();
                    return;
                }
                Tok::LBrace => depth += 1,
                Tok::RBrace | Tok::RParen | Tok::DBar if depth == 0 => return,
                Tok::RBrace => depth -= 1,
                _ if depth == 0 && t.lm.line > line => return,
                _ => {}
            }
            if matches!(t.tok, Tok::LParen) {
                // Skip a whole configuration string.
                let open = self.next();
                let _ = self.config_after_quiet(&open);
                continue;
            }
            self.next();
        }
    }

    fn config_after_quiet(&mut self, open: &Token) -> Option<String> {
        self.buf.clear();
        self.lx.seek(open.end, open.end_line);
        self.lx.config()
    }

    fn scope(&mut self) -> &mut Scope {
        self.scopes.last_mut().unwrap()
    }

    /// The class `name` refers to: a compound in scope, else a primitive (remembered when
    /// unknown, see [`Parser::unknown_classes`]).
    fn class_ref(&mut self, name: String) -> ClassRef {
        if let Some(r) = self.lookup_class(&name) {
            return r;
        }
        if !self.is_class(&name) {
            self.unknown_classes.insert(name.clone());
        }
        ClassRef::Primitive(name)
    }

    /// True if `name` is a known primitive class.
    fn is_class(&self, name: &str) -> bool {
        self.is_class.is_some_and(|f| f(name))
    }

    fn lookup_class(&self, name: &str) -> Option<ClassRef> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.classes.get(name).cloned())
    }

    pub fn parse_top(&mut self) {
        self.statements();
        if !matches!(self.peek(), Tok::Eof) {
            self.syntax_error();
        }
        self.finish_scope();
    }

    /// Reports forward references that were never declared.
    fn finish_scope(&mut self) {
        let undeclared: Vec<(Landmark, String)> = self
            .scope()
            .decls
            .iter()
            .filter(|d| matches!(d.kind, DeclKind::Forward))
            .map(|d| (d.lm.clone(), d.name.clone()))
            .collect();
        for (lm, n) in undeclared {
            self.error(lm, format!("undeclared element '{n}'"));
        }
    }

    /// `require(library FILE)`: reads FILE's element classes (and whatever else it
    /// declares) into the current scope, once. FILE is found relative to the directory of
    /// the file requiring it, else to the current directory.
    fn library(&mut self, file: &str, lm: &Landmark) {
        let here = std::path::Path::new(&*lm.file)
            .parent()
            .map(|d| d.join(file))
            .filter(|p| p.is_file());
        let path = here.unwrap_or_else(|| std::path::PathBuf::from(file));
        // Only regular files of a sane size (never a device or a pipe).
        let text = match std::fs::metadata(&path).and_then(|m| {
            if m.is_file() && m.len() <= MAX_LIBRARY {
                std::fs::read_to_string(&path)
            } else {
                Err(std::io::Error::other(
                    "not a regular file of at most 16 MiB",
                ))
            }
        }) {
            Ok(t) => t,
            Err(e) => {
                return self.error(lm.clone(), format!("library '{file}': {e}"));
            }
        };
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if self.libraries.contains(&key) {
            return;
        }
        self.libraries.push(key);
        let name = path.to_string_lossy();
        let outer = std::mem::replace(&mut self.lx, Lexer::new(&text, &name));
        let buffered = std::mem::take(&mut self.buf);
        self.statements();
        if !matches!(self.peek(), Tok::Eof) {
            let at = self.lm();
            self.error(at, "syntax error");
        }
        self.lx = outer;
        self.buf = buffered;
    }

    /// Parses statements until `}`, `||`, `)` or end of file (not consumed).
    fn statements(&mut self) {
        loop {
            let t = self.peek_n(0).clone();
            match &t.tok {
                Tok::Eof | Tok::RBrace | Tok::DBar | Tok::RParen => return,
                Tok::Semi => {
                    self.next();
                }
                Tok::Ident(s) if s == "elementclass" => {
                    self.next();
                    if !self.elementclass() {
                        self.recover(t.lm.line);
                    }
                }
                Tok::Ident(s)
                    if (s == "require" || s == "define")
                        && matches!(self.peek_n(1).tok, Tok::LParen) =>
                {
                    let is_req = s == "require";
                    self.next();
                    let open = self.next();
                    let cfg = self.config_after(&open);
                    if is_req {
                        self.require(&cfg, &t.lm);
                    } else {
                        self.define(&cfg, &t.lm);
                    }
                }
                _ => {
                    let before = self.diags.count();
                    self.chain();
                    if self.diags.count() > before {
                        self.recover(t.lm.line);
                    } else if !matches!(
                        self.peek(),
                        Tok::Semi
                            | Tok::Eof
                            | Tok::RBrace
                            | Tok::DBar
                            | Tok::RParen
                            | Tok::Ident(_)
                            | Tok::LBrace
                            | Tok::LParen
                            | Tok::LBrack
                    ) {
                        let l = self.lm().line;
                        self.syntax_error();
                        self.recover(l);
                    }
                }
            }
        }
    }

    /// `require(...)`: each item is `compact_config`, `package NAME`, `library NAME` or a bare
    /// NAME (a package); anything else is Click's "syntax error at requirement".
    fn require(&mut self, cfg: &str, lm: &Landmark) {
        for item in split_args(cfg) {
            let words = split_words(&item);
            let ok = match words
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice()
            {
                [] => continue,
                ["compact_config"] => true,
                ["library", file] => {
                    self.library(&crate::args::unquote(file), lm);
                    true
                }
                ["package", _] => true,
                [w] => *w != "package" && *w != "library",
                _ => false,
            };
            if ok {
                self.requirements.push(item);
            } else {
                self.error(lm.clone(), "syntax error at requirement");
            }
        }
    }

    fn define(&mut self, cfg: &str, lm: &Landmark) {
        for a in split_args(cfg) {
            let a = a.trim();
            let (name, value) = match a.find(char::is_whitespace) {
                Some(i) => (&a[..i], a[i..].trim()),
                None => (a, ""),
            };
            match name.strip_prefix('$') {
                Some(n)
                    if !n.is_empty()
                        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    let sc = self.scope();
                    if sc.defined.insert(n.to_string()) {
                        sc.defines.push((n.to_string(), value.to_string()));
                    } else {
                        self.error(lm.clone(), format!("parameter '${n}' multiply defined"));
                    }
                }
                _ => self.error(lm.clone(), "bad 'define' declaration: not a variable"),
            }
        }
    }

    /// `elementclass NAME { ... }` or `elementclass NAME OTHER;`. Returns false on a syntax error.
    fn elementclass(&mut self) -> bool {
        let t = self.next();
        let name = match t.tok {
            Tok::Ident(n) => n,
            _ => {
                self.buf.push_front(t);
                self.syntax_error();
                return false;
            }
        };
        let prev = self.lookup_class(&name);
        match self.peek().clone() {
            Tok::Ident(other) => {
                self.next();
                let r = self.class_ref(other);
                self.scope().classes.insert(name, r);
                true
            }
            Tok::LBrace => {
                let open = self.next();
                self.compound_class(name, prev, open.lm).is_some()
            }
            _ => {
                self.syntax_error();
                false
            }
        }
    }

    /// Parses a compound class body after `{`. The name is registered in the current scope
    /// only after the whole definition, so inside it `name` means the previous definition
    /// (Click's overloading: `elementclass Discard { input -> Discard }`).
    fn compound_class(
        &mut self,
        name: String,
        prev: Option<ClassRef>,
        lm: Landmark,
    ) -> Option<ClassId> {
        if self.depth >= MAX_DEPTH {
            self.error(lm, "maximum compound element nesting depth exceeded");
            return None;
        }
        let id = self.classes.len();
        self.classes.push(ClassDef {
            name: name.clone(),
            alts: Vec::new(),
        });
        self.depth += 1;
        let mut ok = true;
        loop {
            if matches!(self.peek(), Tok::Ellipsis) {
                self.next();
                self.classes[id].alts.push(Alt::Prev(prev.clone()));
            } else {
                let body_lm = self.lm();
                let formals = self.formals();
                let mut scope = Scope {
                    compound: true,
                    defined: formals.iter().map(|f| f.var.clone()).collect(),
                    ..Scope::default()
                };
                for (i, n) in ["input", "output"].iter().enumerate() {
                    scope.decls.push(Decl {
                        name: n.to_string(),
                        kind: DeclKind::Virtual,
                        config: String::new(),
                        lm: lm.clone(),
                    });
                    scope.names.insert(n.to_string(), i);
                }
                let depth = self.scopes.len();
                self.scopes.push(scope);
                self.ctx.push(Ctx::Compound(id));
                self.statements();
                self.finish_scope();
                self.ctx.pop();
                let scope = self.scopes.pop().unwrap_or_default();
                let body = self.make_body(id, formals, scope, depth, body_lm);
                self.classes[id].alts.push(Alt::Body(Box::new(body)));
            }
            match self.peek() {
                Tok::DBar => {
                    self.next();
                }
                Tok::RBrace => {
                    self.next();
                    break;
                }
                _ => {
                    self.syntax_error();
                    ok = false;
                    // Skip to the closing brace.
                    let mut depth = 0usize;
                    loop {
                        match self.next().tok {
                            Tok::Eof => break,
                            Tok::LBrace => depth += 1,
                            Tok::RBrace if depth == 0 => break,
                            Tok::RBrace => depth -= 1,
                            _ => {}
                        }
                    }
                    break;
                }
            }
        }
        self.depth -= 1;
        self.scope().classes.insert(name, ClassRef::Compound(id));
        ok.then_some(id)
    }

    /// Builds a compound body, checking its pseudo-ports as Click does: every port below the
    /// highest one used must be used.
    fn make_body(
        &mut self,
        id: ClassId,
        formals: Vec<Formal>,
        scope: Scope,
        depth: usize,
        lm: Landmark,
    ) -> Body {
        let name = self.printable_class(id).to_string();
        let nin = self.check_pseudo_ports(&scope.conns, 0, true, &name, &lm);
        let nout = self.check_pseudo_ports(&scope.conns, 1, false, &name, &lm);
        Body {
            formals,
            scope,
            ninputs: nin,
            noutputs: nout,
            depth,
        }
    }

    /// Counts the ports of pseudo-element `node` (an `input` if `is_input`: its outputs are
    /// the ports) and reports gaps (`'NAME' input 0 missing`). Returns the port count.
    fn check_pseudo_ports(
        &mut self,
        conns: &[Conn],
        node: usize,
        is_input: bool,
        name: &str,
        lm: &Landmark,
    ) -> usize {
        let mut used: Vec<bool> = Vec::new();
        for c in conns {
            let p = if is_input && c.from == node {
                c.from_port
            } else if !is_input && c.to == node {
                c.to_port
            } else {
                continue;
            };
            if used.len() <= p {
                used.resize(p + 1, false);
            }
            used[p] = true;
        }
        let what = if is_input { "input" } else { "output" };
        for (p, _) in used.iter().enumerate().filter(|(_, u)| !**u) {
            if self.diags.is_full() {
                self.diags.skip(lm, 1);
            } else {
                self.error(lm.clone(), format!("'{name}' {what} {p} missing"));
            }
        }
        used.len()
    }

    /// Optional `$a, $b, KEYWORD $c |` formal parameter list.
    fn formals(&mut self) -> Vec<Formal> {
        let mut out: Vec<Formal> = Vec::new();
        let mut seen = HashSet::new();
        let starts = match self.peek_n(0).tok.clone() {
            Tok::Var(_) | Tok::Bar => true,
            Tok::Ident(_) => matches!(self.peek_n(1).tok, Tok::Var(_)),
            _ => false,
        };
        if !starts {
            return out;
        }
        loop {
            let t = self.peek_n(0).clone();
            match t.tok {
                Tok::Bar => {
                    self.next();
                    return out;
                }
                Tok::Var(v) => {
                    self.next();
                    self.add_formal(&mut out, &mut seen, v, None, &t.lm);
                }
                Tok::Ident(k) if matches!(self.peek_n(1).tok, Tok::Var(_)) => {
                    self.next();
                    if let Tok::Var(v) = self.next().tok {
                        self.add_formal(&mut out, &mut seen, v, Some(k), &t.lm);
                    }
                }
                _ => {
                    self.syntax_error();
                    return out;
                }
            }
            match self.peek() {
                Tok::Comma => {
                    self.next();
                }
                Tok::Bar => {}
                _ => {
                    self.syntax_error();
                    return out;
                }
            }
        }
    }

    fn add_formal(
        &mut self,
        out: &mut Vec<Formal>,
        seen: &mut HashSet<String>,
        var: String,
        kw: Option<String>,
        lm: &Landmark,
    ) {
        if !seen.insert(var.clone()) {
            self.error(lm.clone(), format!("parameter '${var}' multiply defined"));
        }
        if kw.is_none() && out.last().is_some_and(|f| f.keyword.is_some()) {
            self.error(
                lm.clone(),
                format!("positional parameter '${var}' after keyword parameters"),
            );
        }
        out.push(Formal { var, keyword: kw });
    }

    /// A port list after `[`: `[2]`, `[0, 1]`, `[0-2]`, `[]` or `[1,]` (expandable).
    fn port(&mut self) -> Option<Vec<i64>> {
        let open = self.next();
        debug_assert!(matches!(open.tok, Tok::LBrack));
        let mut ports = Vec::new();
        let mut dash = false;
        let mut last = -1i64;
        loop {
            let t = self.next();
            match &t.tok {
                Tok::Ident(w) => {
                    let n = match w.parse::<u64>() {
                        Ok(n) if n <= MAX_PORT as u64 => n as i64,
                        Ok(_) => {
                            self.error(t.lm, format!("port number {w} out of range"));
                            return None;
                        }
                        Err(_) if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) => {
                            self.error(t.lm, format!("port number {w} out of range"));
                            return None;
                        }
                        Err(_) => {
                            self.error(t.lm, "syntax error: port number should be integer");
                            return None;
                        }
                    };
                    if dash {
                        if n < last {
                            self.error(t.lm, format!("bad port range '{last}-{n}'"));
                            return None;
                        }
                        ports.extend(last + 1..=n);
                    } else {
                        ports.push(n);
                    }
                    last = n;
                }
                Tok::RBrack => {
                    if ports.is_empty() {
                        ports.push(0);
                    }
                    ports.push(EXPANDABLE);
                    return Some(ports);
                }
                _ => {
                    self.buf.push_front(t);
                    self.error(open.lm, "syntax error: expected port number");
                    return None;
                }
            }
            let t = self.next();
            match t.tok {
                Tok::RBrack => return Some(ports),
                Tok::Other('-') if !dash => dash = true,
                Tok::Comma => dash = false,
                _ => {
                    self.buf.push_front(t.clone());
                    self.error(t.lm, "syntax error: expected ','");
                    return None;
                }
            }
        }
    }

    fn connect(&mut self, from: usize, from_port: usize, to: usize, to_port: usize, lm: Landmark) {
        let (name, gin, gout) = match self.ctx() {
            Ctx::Group(gin, gout) => ("<anonymous group>".to_string(), gin, gout),
            Ctx::Compound(id) => (self.printable_class(id).to_string(), 0, 1),
            Ctx::Top => (String::new(), usize::MAX, usize::MAX),
        };
        for (bad, pseudo, good) in [
            (to == gin, "input", "output"),
            (from == gout, "output", "input"),
        ] {
            if bad {
                self.error(
                    lm,
                    format!("'{name}' pseudoelement '{pseudo}' may only be used as {good}"),
                );
                return;
            }
        }
        self.scope().conns.push(Conn {
            from,
            from_port,
            to,
            to_port,
            lm,
        });
    }

    /// A compound class's name for messages.
    fn printable_class(&self, id: ClassId) -> &str {
        let n = self.classes.get(id).map_or("", |c| c.name.as_str());
        if n.starts_with('@') {
            "<anonymous>"
        } else {
            n
        }
    }

    /// One position of a connection: endpoints separated by commas (`c[0], c[1]`), with
    /// declaration lists (`a, b :: Class`) expanded.
    fn endpoint_list(&mut self, first: bool) -> Option<Vec<Endpoint>> {
        let mut out = Vec::new();
        loop {
            let mut e = self.endpoint(first && out.is_empty())?;
            let more = std::mem::take(&mut e.more);
            out.push(e);
            out.extend(more.into_iter().map(Endpoint::plain));
            if !matches!(self.peek(), Tok::Comma) {
                return Some(out);
            }
            self.next();
        }
    }

    /// A connection chain; each arrow connects the endpoints on its two sides as Click does
    /// (`Lexer::yconnection_connect_all`).
    fn chain(&mut self) {
        let nested = self.ctx() != Ctx::Top;
        let mut prev = if nested && matches!(self.peek(), Tok::Arrow | Tok::DArrow) {
            // `-> x` in a compound or group starts at its input.
            vec![Endpoint::plain(self.pseudo(true))]
        } else {
            let Some(p) = self.endpoint_list(true) else {
                return;
            };
            p
        };
        if prev.iter().any(|e| !e.in_ports.is_empty()) {
            let lm = self.lm();
            self.error(lm, "input ports ignored at start of chain");
        }
        while matches!(self.peek(), Tok::Arrow | Tok::DArrow) {
            let arrow = self.next();
            let next = if nested && !Self::starts_element(self.peek()) {
                // `x ->` at the end of a chain in a compound or group ends at its output.
                vec![Endpoint::plain(self.pseudo(false))]
            } else {
                let Some(n) = self.endpoint_list(false) else {
                    return;
                };
                n
            };
            self.connect_all(&prev, &next, matches!(arrow.tok, Tok::DArrow), arrow.lm);
            prev = next;
        }
        if prev.iter().any(|e| !e.out_ports.is_empty()) {
            let lm = self.lm();
            self.error(lm, "output ports ignored at end of chain");
        }
    }

    /// The innermost context: the file, a compound body or a group.
    fn ctx(&self) -> Ctx {
        *self.ctx.last().unwrap_or(&Ctx::Top)
    }

    /// The `input` (or `output`) pseudo-element of the innermost compound or group.
    fn pseudo(&self, input: bool) -> usize {
        match self.ctx() {
            Ctx::Group(gin, gout) => {
                if input {
                    gin
                } else {
                    gout
                }
            }
            _ => usize::from(!input),
        }
    }

    /// Connects every output in `outs` to the inputs in `ins`: one-to-many, many-to-one, or
    /// (with `=>`) pairwise, port lists and expandable ports included.
    fn connect_all(&mut self, outs: &[Endpoint], ins: &[Endpoint], double: bool, lm: Landmark) {
        // Index 0: the inputs side, 1: the outputs side (as in Click).
        let sides: [&[Endpoint]; 2] = [ins, outs];
        let mut minp = [0usize; 2];
        let mut expandable = [0usize; 2];
        for k in 0..2 {
            for e in sides[k] {
                let ps = e.ports(k == 1);
                let n = ps.len();
                if n <= 1 {
                    minp[k] += 1;
                } else if ps[n - 1] == EXPANDABLE {
                    minp[k] += n - 1;
                    expandable[k] += 1;
                } else {
                    minp[k] += n;
                }
            }
        }
        if expandable[0] + expandable[1] > 1 {
            self.error(
                lm.clone(),
                "at most one expandable port allowed per connection",
            );
            expandable[usize::from(minp[0] < minp[1])] = 0;
        }
        if double {
            // `=>` reads a lone element without ports as consecutive ports.
            for k in 0..2 {
                if minp[k] == 1 && minp[1 - k] > 1 && sides[k][0].ports(k == 1).is_empty() {
                    expandable[k] = 1;
                }
            }
        }
        let mut step = [false; 2];
        let mut nexp = [0usize; 2];
        for k in 0..2 {
            step[k] = minp[k] > 1 || expandable[k] > 0;
            nexp[k] = if expandable[k] > 0 {
                minp[1 - k].saturating_sub(minp[k])
            } else {
                0
            };
        }
        if step[0] && step[1] {
            let (mi, mo) = (minp[0], minp[1]);
            if !double {
                self.error(
                    lm.clone(),
                    "syntax error: many-to-many connections require '=>'",
                );
            }
            if expandable[0] == 0 && expandable[1] == 0 && mi != mo {
                self.error(
                    lm.clone(),
                    format!("connection mismatch: {mo} outputs connected to {mi} inputs"),
                );
            } else if expandable[0] == 0 && mi < mo {
                self.error(
                    lm.clone(),
                    format!("connection mismatch: {mo} or more outputs connected to {mi} inputs"),
                );
            } else if expandable[1] == 0 && mo < mi {
                self.error(
                    lm.clone(),
                    format!("connection mismatch: {mo} outputs connected to {mi} or more inputs"),
                );
            }
        } else if !step[0] && !step[1] {
            step[0] = true;
        }
        let mut it = [0usize; 2];
        let mut ppos = [0usize; 2];
        let mut port = [-1i64; 2];
        while it[0] < ins.len() && it[1] < outs.len() {
            for k in 0..2 {
                if port[k] < 0 {
                    port[k] = sides[k][it[k]].ports(k == 1).first().copied().unwrap_or(0);
                }
            }
            let (a, b) = (&outs[it[1]], &ins[it[0]]);
            let (from, to) = (a.out_idx, b.in_idx);
            self.connect(from, port[1] as usize, to, port[0] as usize, lm.clone());
            for k in 0..2 {
                if !step[k] {
                    continue;
                }
                let pv = sides[k][it[k]].ports(k == 1);
                let np = pv.len();
                ppos[k] += 1;
                if ppos[k] < np && pv[ppos[k]] >= 0 {
                    port[k] = pv[ppos[k]];
                } else if np >= 2 && pv[np - 1] == EXPANDABLE && nexp[k] > 0 {
                    port[k] = pv[np - 2] + (ppos[k] - (np - 2)) as i64;
                    nexp[k] -= 1;
                } else if np == 0 && minp[k] == 1 && nexp[k] > 0 {
                    port[k] = ppos[k] as i64;
                    nexp[k] -= 1;
                } else {
                    port[k] = -1;
                    ppos[k] = 0;
                    it[k] += 1;
                }
            }
        }
    }

    fn starts_element(tok: &Tok) -> bool {
        matches!(tok, Tok::Ident(_) | Tok::LBrace | Tok::LParen | Tok::LBrack)
    }

    /// One element in a connection chain, with optional port lists.
    fn endpoint(&mut self, first: bool) -> Option<Endpoint> {
        let mut in_ports = Vec::new();
        if matches!(self.peek(), Tok::LBrack) {
            in_ports = self.port()?;
            if self.ctx() != Ctx::Top {
                // Bare ports refer to the enclosing compound or group: `[1] -> x` starts at
                // its input, `x -> [1]` ends at its output.
                if first && matches!(self.peek(), Tok::Arrow | Tok::DArrow) {
                    let mut e = Endpoint::plain(self.pseudo(true));
                    e.out_ports = in_ports;
                    return Some(e);
                }
                if !first && !Self::starts_element(self.peek()) {
                    let mut e = Endpoint::plain(self.pseudo(false));
                    e.in_ports = in_ports;
                    return Some(e);
                }
            }
        }
        let t = self.peek_n(0).clone();
        let (in_idx, out_idx, more, implied) = match t.tok {
            Tok::Ident(name) => {
                let (i, l) = self.element_ref(name, t.lm)?;
                (i, i, l, None)
            }
            Tok::LBrace => {
                self.next();
                self.anon_class_name();
                let cname = format!("@Class{}", self.anon_class);
                let id = self.compound_class(cname.clone(), None, t.lm.clone())?;
                let config = self.opt_config();
                let name = self.anon_name(&cname);
                let i = self.declare(name, DeclKind::Class(ClassRef::Compound(id)), config, t.lm);
                (i, i, Vec::new(), None)
            }
            Tok::LParen => {
                self.next();
                let (a, b, nin, nout) = self.group(t.lm)?;
                (a, b, Vec::new(), Some((nin, nout)))
            }
            _ => {
                self.syntax_error();
                return None;
            }
        };
        let mut out_ports = Vec::new();
        if matches!(self.peek(), Tok::LBrack) {
            out_ports = self.port()?;
        }
        // A group without written ports has all of its ports, in order, on each side.
        if let Some((nin, nout)) = implied {
            if in_ports.is_empty() {
                in_ports = (0..nin as i64).collect();
            }
            if out_ports.is_empty() {
                out_ports = (0..nout as i64).collect();
            }
        }
        Some(Endpoint {
            in_idx,
            out_idx,
            in_ports,
            out_ports,
            more,
        })
    }

    fn anon_class_name(&mut self) {
        self.anon_class += 1;
    }

    /// Click's name for an anonymous element: `Class@N`, N counting the elements declared
    /// so far in this scope (a group counts as three: itself, its input and its output; a
    /// compound's own `input` and `output` do not count).
    fn anon_name(&mut self, class: &str) -> String {
        let s = self.scope();
        let n = (s.decls.len() + s.groups + 1).saturating_sub(if s.compound { 2 } else { 0 });
        let base = class.rsplit('/').next().unwrap_or(class);
        let mut name = format!("{base}@{n}");
        let mut k = n;
        // Not an element's name, nor a name used as a class (which could not name an element
        // when the flattened configuration is read again).
        while self.scope().names.contains_key(&name) || self.unknown_classes.contains(&name) {
            k += 1;
            name = format!("{base}@{k}");
        }
        name
    }

    fn opt_config(&mut self) -> String {
        if matches!(self.peek(), Tok::LParen) {
            let open = self.next();
            self.config_after(&open)
        } else {
            String::new()
        }
    }

    fn declare(&mut self, name: String, kind: DeclKind, config: String, lm: Landmark) -> usize {
        if let Some(&i) = self.scope().names.get(&name) {
            let d = &mut self.scope().decls[i];
            if matches!(d.kind, DeclKind::Forward) {
                d.kind = kind;
                d.config = config;
                d.lm = lm;
            } else {
                let old = (!matches!(d.kind, DeclKind::Virtual)).then(|| d.lm.clone());
                self.error(lm, format!("redeclaration of element '{name}'"));
                if let Some(old) = old {
                    self.error(old, format!("element '{name}' previously declared here"));
                }
            }
            return i;
        }
        let s = self.scope();
        let i = s.decls.len();
        s.decls.push(Decl {
            name: name.clone(),
            kind,
            config,
            lm,
        });
        s.names.insert(name, i);
        i
    }

    fn class_spec(&mut self) -> Option<(DeclKind, String)> {
        let t = self.next();
        match t.tok {
            Tok::Ident(c) => {
                let r = self.class_ref(c);
                let config = self.opt_config();
                Some((DeclKind::Class(r), config))
            }
            Tok::LBrace => {
                self.anon_class_name();
                let cname = format!("@Class{}", self.anon_class);
                let id = self.compound_class(cname, None, t.lm)?;
                let config = self.opt_config();
                Some((DeclKind::Class(ClassRef::Compound(id)), config))
            }
            _ => {
                self.buf.push_front(t);
                self.syntax_error();
                None
            }
        }
    }

    /// An identifier in element position: declaration(s), reference, or anonymous element.
    /// True if the tokens ahead are `NAME (, NAME)* ::` (a declaration list).
    fn declaration_list_ahead(&mut self) -> bool {
        let mut k = 1;
        loop {
            let comma = matches!(self.peek_n(k).tok, Tok::Comma);
            let colons = matches!(self.peek_n(k).tok, Tok::Colon2);
            if comma && matches!(self.peek_n(k + 1).tok, Tok::Ident(_)) {
                k += 2;
            } else {
                return colons && k > 1;
            }
        }
    }

    fn element_ref(&mut self, name: String, lm: Landmark) -> Option<(usize, Vec<usize>)> {
        // Declaration list `a, b, c :: Class`.
        if self.declaration_list_ahead() {
            let mut names = vec![name];
            self.next();
            while matches!(self.peek(), Tok::Comma) {
                self.next();
                match self.next().tok {
                    Tok::Ident(n) => names.push(n),
                    _ => {
                        self.error(lm, "syntax error: expected element name");
                        return None;
                    }
                }
            }
            if !matches!(self.peek(), Tok::Colon2) {
                self.syntax_error();
                return None;
            }
            self.next();
            let (kind, config) = self.class_spec()?;
            let mut idx = Vec::new();
            for n in names {
                idx.push(self.check_name_and_declare(n, kind.clone(), config.clone(), lm.clone()));
            }
            let first = idx.remove(0);
            return Some((first, idx));
        }
        self.next();
        if matches!(self.peek(), Tok::Colon2) {
            self.next();
            let (kind, config) = self.class_spec()?;
            return Some((
                self.check_name_and_declare(name, kind, config, lm),
                Vec::new(),
            ));
        }
        let has_config = matches!(self.peek(), Tok::LParen);
        if let Ctx::Group(gin, gout) = self.ctx() {
            // In a group, `input` and `output` are the group's own ports.
            match name.as_str() {
                "input" => return Some((gin, Vec::new())),
                "output" => return Some((gout, Vec::new())),
                _ => {}
            }
        }
        if let Some(&i) = self.scope().names.get(&name) {
            if has_config {
                self.error(lm, format!("'{name}' is an element, not a class"));
                return None;
            }
            return Some((i, Vec::new()));
        }
        if let Some(r) = self.lookup_class(&name) {
            let config = self.opt_config();
            let n = self.anon_name(&name);
            return Some((self.declare(n, DeclKind::Class(r), config, lm), Vec::new()));
        }
        // As in Click, an unknown word at the top level names an element (undeclared unless
        // declared later); in a compound body a capitalised one names a class.
        let lowercase = name.starts_with(|c: char| c.is_ascii_lowercase());
        let maybe_element = match self.is_class {
            Some(f) => !f(&name) && (self.scopes.len() == 1 || lowercase),
            None => lowercase,
        };
        if !has_config && maybe_element {
            let s = self.scope();
            let i = s.decls.len();
            s.decls.push(Decl {
                name: name.clone(),
                kind: DeclKind::Forward,
                config: String::new(),
                lm,
            });
            s.names.insert(name, i);
            return Some((i, Vec::new()));
        }
        let config = self.opt_config();
        let n = self.anon_name(&name);
        let r = self.class_ref(name);
        Some((self.declare(n, DeclKind::Class(r), config, lm), Vec::new()))
    }

    fn check_name_and_declare(
        &mut self,
        name: String,
        kind: DeclKind,
        config: String,
        lm: Landmark,
    ) -> usize {
        if name
            .split('/')
            .any(|c| c.bytes().all(|b| b.is_ascii_digit()))
        {
            self.error(
                lm.clone(),
                format!("element name '{name}' has all-digit component"),
            );
        }
        if self.lookup_class(&name).is_some()
            || self.is_class(&name)
            || self.unknown_classes.contains(&name)
        {
            self.error(lm.clone(), format!("class '{name}' used as element name"));
        }
        self.declare(name, kind, config, lm)
    }

    /// Element group `( stmts )`, after `(`. Returns the group's input and output nodes and
    /// how many ports each side has.
    fn group(&mut self, lm: Landmark) -> Option<(usize, usize, usize, usize)> {
        if self.depth >= MAX_DEPTH {
            self.error(lm, "maximum element group nesting depth exceeded");
            return None;
        }
        self.group_count += 1;
        self.scope().groups += 1;
        let g = self.group_count;
        let gin = self.declare(
            format!("@group{g} in"),
            DeclKind::Virtual,
            String::new(),
            lm.clone(),
        );
        let gout = self.declare(
            format!("@group{g} out"),
            DeclKind::Virtual,
            String::new(),
            lm.clone(),
        );
        let first_conn = self.scope().conns.len();
        self.ctx.push(Ctx::Group(gin, gout));
        self.depth += 1;
        self.statements();
        self.depth -= 1;
        self.ctx.pop();
        if !matches!(self.peek(), Tok::RParen) {
            self.syntax_error();
            return None;
        }
        let close = self.next();
        let inner: Vec<Conn> = self.scope().conns[first_conn..].to_vec();
        let name = "<anonymous group>";
        let nin = self.check_pseudo_ports(&inner, gin, true, name, &close.lm);
        let nout = self.check_pseudo_ports(&inner, gout, false, name, &close.lm);
        Some((gin, gout, nin, nout))
    }
}
