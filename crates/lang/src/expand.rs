//! Compound-element expansion, parameter substitution and pseudo-port splicing.

use crate::args::{keyword_split, split_args};
use crate::parser::{Alt, ClassDef, ClassId, ClassRef, DeclKind, Formal, Scope};
use crate::{Diagnostic, FlatConfig, FlatConnection, FlatElement, Landmark};
use std::collections::{HashMap, HashSet};

const MAX_ELEMENTS: usize = 200_000;
const MAX_NESTING: usize = 100;

pub(crate) type Env = Vec<(String, String)>;

fn env_get<'a>(env: &'a Env, name: &str) -> Option<&'a str> {
    env.iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Replaces `$name` and `${name}` with their values (not inside single quotes). Unknown
/// variables are left as written.
pub(crate) fn substitute(s: &str, env: &Env) -> String {
    if !s.contains('$') || env.is_empty() {
        return s.to_string();
    }
    let c: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut quote: Option<char> = None;
    while i < c.len() {
        let ch = c[i];
        match quote {
            Some('\'') => {
                out.push(ch);
                if ch == '\'' {
                    quote = None;
                }
                i += 1;
                continue;
            }
            Some(_) if ch == '\\' => {
                out.push(ch);
                if let Some(&n) = c.get(i + 1) {
                    out.push(n);
                }
                i += 2;
                continue;
            }
            Some(_) if ch == '"' => {
                quote = None;
                out.push(ch);
                i += 1;
                continue;
            }
            None if ch == '"' || ch == '\'' => {
                quote = Some(ch);
                out.push(ch);
                i += 1;
                continue;
            }
            _ => {}
        }
        if ch == '$' {
            let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
            if c.get(i + 1) == Some(&'{') {
                if let Some(close) = c[i + 2..].iter().position(|&x| x == '}') {
                    let name: String = c[i + 2..i + 2 + close].iter().collect();
                    if let Some(v) = env_get(env, &name) {
                        out.push_str(v);
                        i += close + 3;
                        continue;
                    }
                }
            } else {
                let mut e = i + 1;
                while e < c.len() && is_name(c[e]) {
                    e += 1;
                }
                if e > i + 1 {
                    let name: String = c[i + 1..e].iter().collect();
                    if let Some(v) = env_get(env, &name) {
                        out.push_str(v);
                        i = e;
                        continue;
                    }
                }
            }
        }
        out.push(ch);
        i += 1;
    }
    out
}

/// Binds actual arguments to formals; `None` if the argument count does not fit.
fn bind(formals: &[Formal], args: &[String]) -> Option<Env> {
    let kws: Vec<&str> = formals
        .iter()
        .filter_map(|f| f.keyword.as_deref())
        .filter(|k| *k != "__REST__")
        .collect();
    let positional: Vec<&Formal> = formals.iter().filter(|f| f.keyword.is_none()).collect();
    let rest = formals
        .iter()
        .find(|f| f.keyword.as_deref() == Some("__REST__"));
    let mut env = Env::new();
    for f in formals.iter().filter(|f| f.keyword.is_some()) {
        env.push((f.var.clone(), String::new()));
    }
    let mut pos = Vec::new();
    for a in args {
        match keyword_split(a) {
            Some((k, v)) if kws.contains(&k) => {
                let f = formals
                    .iter()
                    .find(|f| f.keyword.as_deref() == Some(k))
                    .unwrap();
                env.push((f.var.clone(), v.to_string()));
            }
            _ => pos.push(a.clone()),
        }
    }
    if pos.len() == positional.len() || (rest.is_some() && pos.len() >= positional.len()) {
        for (f, a) in positional.iter().zip(pos.iter()) {
            env.push((f.var.clone(), a.clone()));
        }
        if let Some(r) = rest {
            env.push((r.var.clone(), pos[positional.len()..].join(", ")));
        }
        Some(env)
    } else {
        None
    }
}

enum Node {
    Real(FlatElement),
    Virtual,
}

enum Resolved<'a> {
    Primitive(String),
    Body(&'a crate::parser::Body, ClassId, Env),
}

pub(crate) struct Expander<'a> {
    classes: &'a [ClassDef],
    pub diags: Vec<Diagnostic>,
    nodes: Vec<Node>,
    edges: Vec<(usize, usize, usize, usize, Landmark)>,
    /// Bodies being expanded (by address), for recursion detection.
    stack: Vec<*const crate::parser::Body>,
    too_large: bool,
}

impl<'a> Expander<'a> {
    pub fn new(classes: &'a [ClassDef]) -> Self {
        Expander {
            classes,
            diags: Vec::new(),
            nodes: Vec::new(),
            edges: Vec::new(),
            stack: Vec::new(),
            too_large: false,
        }
    }

    fn error(&mut self, lm: &Landmark, msg: String) {
        self.diags.push(Diagnostic {
            landmark: lm.clone(),
            message: msg,
        });
    }

    fn resolve(
        &self,
        r: &ClassRef,
        args: &[String],
        nin: usize,
        nout: usize,
    ) -> Result<Resolved<'a>, String> {
        let id = match r {
            ClassRef::Primitive(c) => return Ok(Resolved::Primitive(c.clone())),
            ClassRef::Compound(id) => *id,
        };
        let classes: &'a [ClassDef] = self.classes;
        let def = &classes[id];
        let mut matching = Vec::new();
        let mut prev = None;
        for alt in &def.alts {
            match alt {
                Alt::Body(b) => {
                    if let Some(env) = bind(&b.formals, args) {
                        matching.push((&**b, env));
                    }
                }
                Alt::Prev(p) => prev = Some(p.clone()),
            }
        }
        let exact = matching
            .iter()
            .position(|(b, _)| b.ninputs == nin && b.noutputs == nout);
        let fits = matching
            .iter()
            .position(|(b, _)| b.ninputs >= nin && b.noutputs >= nout);
        if let Some(i) = exact.or(fits) {
            let (b, env) = matching.swap_remove(i);
            return Ok(Resolved::Body(b, id, env));
        }
        if let Some(p) = prev {
            return match p {
                Some(p) => self.resolve(&p, args, nin, nout),
                None => Ok(Resolved::Primitive(def.name.clone())),
            };
        }
        if let Some((b, env)) = matching.into_iter().next() {
            return Ok(Resolved::Body(b, id, env));
        }
        Err(format!(
            "wrong number of arguments to element class '{}' (got {})",
            def.name,
            args.len()
        ))
    }

    /// Expands one scope; returns each declaration's (input node, output node).
    pub fn expand_scope(
        &mut self,
        scope: &'a Scope,
        prefix: &str,
        env: &Env,
    ) -> Vec<(usize, usize)> {
        let mut ends = Vec::with_capacity(scope.decls.len());
        let mut nin = vec![0usize; scope.decls.len()];
        let mut nout = vec![0usize; scope.decls.len()];
        for c in &scope.conns {
            nout[c.from] = nout[c.from].max(c.from_port + 1);
            nin[c.to] = nin[c.to].max(c.to_port + 1);
        }
        for (i, d) in scope.decls.iter().enumerate() {
            if self.nodes.len() > MAX_ELEMENTS {
                if !self.too_large {
                    self.too_large = true;
                    self.error(&d.lm, "configuration too large".into());
                }
                ends.push((usize::MAX, usize::MAX));
                continue;
            }
            let name = format!("{prefix}{}", d.name);
            match &d.kind {
                DeclKind::Virtual | DeclKind::Forward => {
                    self.nodes.push(Node::Virtual);
                    let n = self.nodes.len() - 1;
                    ends.push((n, n));
                }
                DeclKind::Class(r) => {
                    let config = substitute(&d.config, env);
                    let args = match r {
                        ClassRef::Compound(_) => split_args(&config),
                        ClassRef::Primitive(_) => Vec::new(),
                    };
                    match self.resolve(r, &args, nin[i], nout[i]) {
                        Ok(Resolved::Primitive(class)) => {
                            self.nodes.push(Node::Real(FlatElement {
                                name,
                                class,
                                config,
                                landmark: d.lm.clone(),
                            }));
                            let n = self.nodes.len() - 1;
                            ends.push((n, n));
                        }
                        Ok(Resolved::Body(body, id, bound)) => {
                            let key = body as *const crate::parser::Body;
                            if self.stack.contains(&key) || self.stack.len() > MAX_NESTING {
                                let cname = self.classes[id].name.clone();
                                self.error(&d.lm, format!("recursive element class '{cname}'"));
                                self.nodes.push(Node::Virtual);
                                let n = self.nodes.len() - 1;
                                ends.push((n, n));
                                continue;
                            }
                            if nin[i] > body.ninputs || nout[i] > body.noutputs {
                                if nin[i] > body.ninputs {
                                    self.error(
                                        &d.lm,
                                        format!("'{name}' input {} out of range", nin[i] - 1),
                                    );
                                }
                                if nout[i] > body.noutputs {
                                    self.error(
                                        &d.lm,
                                        format!("'{name}' output {} out of range", nout[i] - 1),
                                    );
                                }
                            }
                            let mut inner = env.clone();
                            inner.extend(bound);
                            for (n, v) in &body.scope.defines {
                                let v = substitute(v, &inner);
                                inner.push((n.clone(), v));
                            }
                            self.stack.push(key);
                            let sub = self.expand_scope(&body.scope, &format!("{name}/"), &inner);
                            self.stack.pop();
                            // decls 0 and 1 are input and output.
                            ends.push((sub[0].0, sub[1].1));
                        }
                        Err(msg) => {
                            self.error(&d.lm, msg);
                            self.nodes.push(Node::Virtual);
                            let n = self.nodes.len() - 1;
                            ends.push((n, n));
                        }
                    }
                }
            }
        }
        for c in &scope.conns {
            let (f, t) = (ends[c.from].1, ends[c.to].0);
            if f == usize::MAX || t == usize::MAX {
                continue;
            }
            self.edges
                .push((f, c.from_port, t, c.to_port, c.lm.clone()));
        }
        ends
    }

    /// Splices away virtual nodes and produces the flat configuration.
    pub fn finish(self, requirements: Vec<String>) -> (FlatConfig, Vec<Diagnostic>) {
        let mut index = vec![usize::MAX; self.nodes.len()];
        let mut elements = Vec::new();
        for (i, n) in self.nodes.into_iter().enumerate() {
            if let Node::Real(e) = n {
                index[i] = elements.len();
                elements.push(e);
            }
        }
        let mut adj: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
        for (k, e) in self.edges.iter().enumerate() {
            adj.entry((e.0, e.1)).or_default().push(k);
        }
        let mut connections = Vec::new();
        let mut seen: HashSet<(usize, usize, usize, usize)> = HashSet::new();
        for e in &self.edges {
            if index[e.0] == usize::MAX {
                continue;
            }
            let mut stack = vec![(e.2, e.3)];
            let mut visited = HashSet::new();
            while let Some((n, p)) = stack.pop() {
                if index[n] != usize::MAX {
                    let key = (index[e.0], e.1, index[n], p);
                    if seen.insert(key) {
                        connections.push(FlatConnection {
                            from: key.0,
                            from_port: key.1,
                            to: key.2,
                            to_port: key.3,
                            landmark: e.4.clone(),
                        });
                    }
                } else if visited.insert((n, p)) {
                    if let Some(next) = adj.get(&(n, p)) {
                        for &k in next.iter().rev() {
                            let x = &self.edges[k];
                            stack.push((x.2, x.3));
                        }
                    }
                }
            }
        }
        (
            FlatConfig {
                elements,
                connections,
                requirements,
            },
            self.diags,
        )
    }
}
