//! Parser: builds scopes (declarations, connections, compound classes) from tokens.

use crate::args::split_args;
use crate::lexer::{Lexer, Tok, Token};
use crate::{Diagnostic, Landmark};
use std::collections::HashMap;

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
    Compound,
    Group(usize, usize),
}

pub(crate) struct Parser {
    lx: Lexer,
    buf: Vec<Token>,
    pub diags: Vec<Diagnostic>,
    pub classes: Vec<ClassDef>,
    pub scopes: Vec<Scope>,
    ctx: Vec<Ctx>,
    pub requirements: Vec<String>,
    anon_class: usize,
    group_count: usize,
    depth: usize,
}

struct Endpoint {
    in_idx: usize,
    out_idx: usize,
    in_port: usize,
    out_port: usize,
    /// Further elements of a declaration list `a, b :: Class` (each on port 0).
    more: Vec<usize>,
}

const MAX_DEPTH: usize = 200;

impl Parser {
    pub fn new(text: &str, file: &str) -> Parser {
        Parser {
            lx: Lexer::new(text, file),
            buf: Vec::new(),
            diags: Vec::new(),
            classes: Vec::new(),
            scopes: vec![Scope::default()],
            ctx: vec![Ctx::Top],
            requirements: Vec::new(),
            anon_class: 0,
            group_count: 0,
            depth: 0,
        }
    }

    fn peek_n(&mut self, n: usize) -> &Token {
        while self.buf.len() <= n {
            let t = self.lx.next_token();
            self.buf.push(t);
        }
        &self.buf[n]
    }

    fn peek(&mut self) -> &Tok {
        &self.peek_n(0).tok
    }

    fn next(&mut self) -> Token {
        self.peek_n(0);
        self.buf.remove(0)
    }

    fn lm(&mut self) -> Landmark {
        self.peek_n(0).lm.clone()
    }

    fn error(&mut self, lm: Landmark, msg: impl Into<String>) {
        self.diags.push(Diagnostic {
            landmark: lm,
            message: msg.into(),
        });
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
                        self.requirements.extend(split_args(&cfg));
                    } else {
                        self.define(&cfg, &t.lm);
                    }
                }
                _ => {
                    let before = self.diags.len();
                    self.chain();
                    if self.diags.len() > before {
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
                    let n = n.to_string();
                    let v = value.to_string();
                    self.scope().defines.push((n, v));
                }
                _ => self.error(
                    lm.clone(),
                    format!("bad define '{a}', expected '$NAME value'"),
                ),
            }
        }
    }

    /// `elementclass NAME { ... }` or `elementclass NAME OTHER;`. Returns false on a syntax error.
    fn elementclass(&mut self) -> bool {
        let t = self.next();
        let name = match t.tok {
            Tok::Ident(n) => n,
            _ => {
                self.buf.insert(0, t);
                self.syntax_error();
                return false;
            }
        };
        let prev = self.lookup_class(&name);
        match self.peek().clone() {
            Tok::Ident(other) => {
                self.next();
                let r = self
                    .lookup_class(&other)
                    .unwrap_or(ClassRef::Primitive(other.clone()));
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

    /// Parses a compound class body after `{`; registers `name` in the current scope first so
    /// self-references resolve (and are reported as recursion on expansion).
    fn compound_class(
        &mut self,
        name: String,
        prev: Option<ClassRef>,
        lm: Landmark,
    ) -> Option<ClassId> {
        let id = self.classes.len();
        self.classes.push(ClassDef {
            name: name.clone(),
            alts: Vec::new(),
        });
        self.scope().classes.insert(name, ClassRef::Compound(id));
        if self.depth > MAX_DEPTH {
            self.error(lm, "compound elements nested too deeply");
            return None;
        }
        self.depth += 1;
        let mut ok = true;
        loop {
            if matches!(self.peek(), Tok::Ellipsis) {
                self.next();
                self.classes[id].alts.push(Alt::Prev(prev.clone()));
            } else {
                let formals = self.formals();
                let mut scope = Scope {
                    compound: true,
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
                self.scopes.push(scope);
                self.ctx.push(Ctx::Compound);
                self.statements();
                self.finish_scope();
                self.ctx.pop();
                let scope = self.scopes.pop().unwrap();
                let body = self.make_body(formals, scope);
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
        ok.then_some(id)
    }

    /// Builds a compound body; unused pseudo-ports are allowed (Click only warns).
    fn make_body(&mut self, formals: Vec<Formal>, scope: Scope) -> Body {
        let mut nin = 0;
        let mut nout = 0;
        for c in &scope.conns {
            if c.from == 0 {
                nin = nin.max(c.from_port + 1);
            }
            if c.to == 1 {
                nout = nout.max(c.to_port + 1);
            }
        }
        Body {
            formals,
            scope,
            ninputs: nin,
            noutputs: nout,
        }
    }

    /// Optional `$a, $b, KEYWORD $c |` formal parameter list.
    fn formals(&mut self) -> Vec<Formal> {
        let mut out: Vec<Formal> = Vec::new();
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
                    self.add_formal(&mut out, v, None, &t.lm);
                }
                Tok::Ident(k) if matches!(self.peek_n(1).tok, Tok::Var(_)) => {
                    self.next();
                    if let Tok::Var(v) = self.next().tok {
                        self.add_formal(&mut out, v, Some(k), &t.lm);
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
        var: String,
        kw: Option<String>,
        lm: &Landmark,
    ) {
        if out.iter().any(|f| f.var == var) {
            self.error(lm.clone(), format!("repeated formal parameter '${var}'"));
        }
        if kw.is_none() && out.iter().any(|f| f.keyword.is_some()) {
            self.error(
                lm.clone(),
                format!("positional parameter '${var}' after keyword parameters"),
            );
        }
        out.push(Formal { var, keyword: kw });
    }

    fn port(&mut self) -> Option<usize> {
        let open = self.next();
        debug_assert!(matches!(open.tok, Tok::LBrack));
        let t = self.next();
        let n = match &t.tok {
            Tok::Ident(s) => s.parse::<usize>().ok().filter(|&n| n < 1 << 20),
            Tok::RBrack => {
                self.buf.insert(0, t.clone());
                Some(0)
            }
            _ => None,
        };
        let Some(n) = n else {
            self.buf.insert(0, t);
            self.error(open.lm, "syntax error: expected port number");
            return None;
        };
        if !matches!(self.peek(), Tok::RBrack) {
            let lm = self.lm();
            self.error(lm, "syntax error: expected ']'");
            return None;
        }
        self.next();
        Some(n)
    }

    fn connect(&mut self, from: usize, from_port: usize, to: usize, to_port: usize, lm: Landmark) {
        let scope = self.scopes.last().unwrap();
        if scope.compound {
            if to == 0 {
                self.error(lm.clone(), "'input' pseudoelement used as output");
                return;
            }
            if from == 1 {
                self.error(lm.clone(), "'output' pseudoelement used as input");
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

    /// One position of a connection: endpoints separated by commas (`c[0], c[1]`), with
    /// declaration lists (`a, b :: Class`) expanded.
    fn endpoint_list(&mut self, first: bool) -> Option<Vec<Endpoint>> {
        let mut out = Vec::new();
        loop {
            let mut e = self.endpoint(first)?;
            let more = std::mem::take(&mut e.more);
            out.push(e);
            for i in more {
                out.push(Endpoint {
                    in_idx: i,
                    out_idx: i,
                    in_port: 0,
                    out_port: 0,
                    more: Vec::new(),
                });
            }
            if !matches!(self.peek(), Tok::Comma) {
                return Some(out);
            }
            self.next();
        }
    }

    /// A connection chain. `->` joins one endpoint to many or many to one; `=>` matches
    /// endpoints pairwise, a lone element on one side standing for its consecutive ports.
    fn chain(&mut self) {
        let Some(mut prev) = self.endpoint_list(true) else {
            return;
        };
        let mut count = 1;
        while matches!(self.peek(), Tok::Arrow | Tok::DArrow) {
            let arrow = self.next();
            let Some(next) = self.endpoint_list(false) else {
                return;
            };
            count += 1;
            let (m, n) = (prev.len(), next.len());
            let mut pairs: Vec<(usize, usize, usize, usize)> = Vec::new();
            if matches!(arrow.tok, Tok::DArrow) && m != n && m != 1 && n != 1 {
                self.error(
                    arrow.lm.clone(),
                    format!(
                        "'=>' connects {} outputs to {} inputs; the counts must match",
                        m, n
                    ),
                );
                return;
            }
            if matches!(arrow.tok, Tok::DArrow) && m != n {
                if m == 1 {
                    let a = &prev[0];
                    for (k, b) in next.iter().enumerate() {
                        pairs.push((a.out_idx, a.out_port + k, b.in_idx, b.in_port));
                    }
                } else {
                    let b = &next[0];
                    for (k, a) in prev.iter().enumerate() {
                        pairs.push((a.out_idx, a.out_port, b.in_idx, b.in_port + k));
                    }
                }
            } else if matches!(arrow.tok, Tok::DArrow) {
                for (a, b) in prev.iter().zip(next.iter()) {
                    pairs.push((a.out_idx, a.out_port, b.in_idx, b.in_port));
                }
            } else if m == 1 || n == 1 {
                for a in &prev {
                    for b in &next {
                        pairs.push((a.out_idx, a.out_port, b.in_idx, b.in_port));
                    }
                }
            } else {
                self.error(
                    arrow.lm.clone(),
                    "many-to-many connection with '->'; use '=>'",
                );
                return;
            }
            for (f, fp, t, tp) in pairs {
                self.connect(f, fp, t, tp, arrow.lm.clone());
            }
            prev = next;
        }
        if count == 1 && prev.len() == 1 && (prev[0].in_port != 0 || prev[0].out_port != 0) {
            let lm = self.lm();
            self.error(lm, "syntax error: port without connection");
        }
    }

    fn starts_element(tok: &Tok) -> bool {
        matches!(tok, Tok::Ident(_) | Tok::LBrace | Tok::LParen)
    }

    /// One element in a connection chain, with optional ports.
    fn endpoint(&mut self, first: bool) -> Option<Endpoint> {
        let mut in_port = 0;
        if matches!(self.peek(), Tok::LBrack) {
            in_port = self.port()?;
            let ctx = *self.ctx.last().unwrap();
            // Bare ports refer to the enclosing compound or group.
            if ctx != Ctx::Top {
                let (gin, gout) = match ctx {
                    Ctx::Group(a, b) => (a, b),
                    _ => (0, 1),
                };
                if first && matches!(self.peek(), Tok::Arrow | Tok::DArrow) {
                    return Some(Endpoint {
                        in_idx: gin,
                        out_idx: gin,
                        in_port: 0,
                        out_port: in_port,
                        more: Vec::new(),
                    });
                }
                if !first && !Self::starts_element(self.peek()) {
                    return Some(Endpoint {
                        in_idx: gout,
                        out_idx: gout,
                        in_port,
                        out_port: 0,
                        more: Vec::new(),
                    });
                }
            }
        }
        let t = self.peek_n(0).clone();
        let (in_idx, out_idx, more) = match t.tok {
            Tok::Ident(name) => {
                let (i, l) = self.element_ref(name, t.lm)?;
                (i, i, l)
            }
            Tok::LBrace => {
                self.next();
                self.anon_class_name();
                let cname = format!("@Class{}", self.anon_class);
                let id = self.compound_class(cname.clone(), None, t.lm.clone())?;
                let config = self.opt_config();
                let name = self.anon_name(&cname);
                let i = self.declare(name, DeclKind::Class(ClassRef::Compound(id)), config, t.lm);
                (i, i, Vec::new())
            }
            Tok::LParen => {
                self.next();
                let (a, b) = self.group(t.lm)?;
                (a, b, Vec::new())
            }
            _ => {
                self.syntax_error();
                return None;
            }
        };
        let mut out_port = 0;
        if matches!(self.peek(), Tok::LBrack) {
            out_port = self.port()?;
        }
        Some(Endpoint {
            in_idx,
            out_idx,
            in_port,
            out_port,
            more,
        })
    }

    fn anon_class_name(&mut self) {
        self.anon_class += 1;
    }

    fn anon_name(&mut self, class: &str) -> String {
        let n = self.scope().decls.len() + 1;
        let base = class.rsplit('/').next().unwrap_or(class);
        let mut name = format!("{base}@{n}");
        let mut k = n;
        while self.scope().names.contains_key(&name) {
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
                self.error(lm, format!("redeclaration of element '{name}'"));
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
                let r = self.lookup_class(&c).unwrap_or(ClassRef::Primitive(c));
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
                self.buf.insert(0, t);
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
        if !has_config && name.starts_with(|c: char| c.is_ascii_lowercase()) {
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
        Some((
            self.declare(n, DeclKind::Class(ClassRef::Primitive(name)), config, lm),
            Vec::new(),
        ))
    }

    fn check_name_and_declare(
        &mut self,
        name: String,
        kind: DeclKind,
        config: String,
        lm: Landmark,
    ) -> usize {
        if name.chars().all(|c| c.is_ascii_digit()) {
            self.error(lm.clone(), format!("bad element name '{name}'"));
        }
        if self.lookup_class(&name).is_some() {
            // Click allows it but the name then shadows nothing useful; accept.
        }
        self.declare(name, kind, config, lm)
    }

    /// Element group `( stmts )`, after `(`. Returns the group's input and output nodes.
    fn group(&mut self, lm: Landmark) -> Option<(usize, usize)> {
        if self.depth > MAX_DEPTH {
            self.error(lm, "groups nested too deeply");
            return None;
        }
        self.group_count += 1;
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
        self.ctx.push(Ctx::Group(gin, gout));
        self.depth += 1;
        self.statements();
        self.depth -= 1;
        self.ctx.pop();
        if !matches!(self.peek(), Tok::RParen) {
            self.syntax_error();
            return None;
        }
        self.next();
        Some((gin, gout))
    }
}
