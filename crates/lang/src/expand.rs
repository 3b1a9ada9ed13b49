//! Compound-element expansion, parameter substitution and pseudo-port splicing.

use crate::args::{keyword_split, split_args, split_words};
use crate::diags::{Diags, MAX_DIAGNOSTICS};
use crate::parser::{Alt, ClassDef, ClassRef, DeclKind, Formal, Scope};
use crate::{FlatConfig, FlatConnection, FlatElement, Landmark};
use std::collections::{HashMap, HashSet};

/// Elements a configuration may expand to.
const MAX_ELEMENTS: usize = 200_000;
/// Nodes, compound and group pseudo-ports included, it may expand to.
const MAX_NODES: usize = 10 * MAX_ELEMENTS;

/// Variable environments of compound instances, each with a parent: Click's lexical scoping
/// (a body sees its own parameters and those of the bodies it is written in).
#[derive(Default)]
pub(crate) struct Envs {
    frames: Vec<EnvFrame>,
}

struct EnvFrame {
    vars: HashMap<String, String>,
    parent: Option<usize>,
    depth: usize,
}

impl Envs {
    /// A new environment at lexical `depth`, its parent the innermost ancestor of `from`
    /// (inclusive) that is shallower.
    pub fn child(&mut self, from: Option<usize>, depth: usize) -> usize {
        let mut p = from;
        while let Some(i) = p {
            if self.frames[i].depth < depth {
                break;
            }
            p = self.frames[i].parent;
        }
        self.frames.push(EnvFrame {
            vars: HashMap::new(),
            parent: p,
            depth,
        });
        self.frames.len() - 1
    }

    /// Defines (or, if already defined here, replaces) a variable of environment `env`.
    pub fn define(&mut self, env: usize, name: &str, value: String) {
        self.frames[env].vars.insert(name.to_string(), value);
    }

    fn get(&self, env: usize, name: &str) -> Option<&str> {
        let mut e = Some(env);
        while let Some(i) = e {
            let f = &self.frames[i];
            if let Some(v) = f.vars.get(name) {
                return Some(v);
            }
            e = f.parent;
        }
        None
    }
}

/// Replaces `$name` and `${name}` with their values (not inside single quotes). Unknown
/// variables are left as written.
pub(crate) fn substitute(s: &str, envs: &Envs, env: usize) -> String {
    if !s.contains('$') {
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
                    let raw: String = c[i + 2..i + 2 + close].iter().collect();
                    let inner = if raw.contains('$') {
                        substitute(&raw, envs, env)
                    } else {
                        raw.clone()
                    };
                    match braced(&inner, envs, env) {
                        Some(v) => out.push_str(&v),
                        None if inner != raw => out.push_str(&format!("${{{inner}}}")),
                        None => {
                            out.push(ch);
                            i += 1;
                            continue;
                        }
                    }
                    i += close + 3;
                    continue;
                }
            } else {
                let mut e = i + 1;
                while e < c.len() && is_name(c[e]) {
                    e += 1;
                }
                if e > i + 1 {
                    let name: String = c[i + 1..e].iter().collect();
                    if let Some(v) = envs.get(env, &name) {
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

/// The value of a braced reference as Click reads it: `NAME`, `NAME[INDEX]` (the INDEX-th
/// space-separated word of the value, from 0; empty past the last), and `NAME-DEFAULT` or
/// `NAME[INDEX]-DEFAULT` (DEFAULT, substituted, when NAME is not defined). `None` when NAME is
/// not defined and there is no default.
fn braced(spec: &str, envs: &Envs, env: usize) -> Option<String> {
    let spec = spec.trim_start();
    let name_end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(spec.len());
    let name = &spec[..name_end];
    let mut rest = spec[name_end..].trim_start();
    let mut index = None;
    if let Some(r) = rest.strip_prefix('[') {
        if let Some((n, after)) = r.split_once(']') {
            if let Ok(n) = n.trim().parse::<usize>() {
                index = Some(n);
                rest = after.trim_start();
            }
        }
    }
    match envs.get(env, name) {
        Some(v) => Some(match index {
            Some(n) => split_words(v).into_iter().nth(n).unwrap_or_default(),
            None => v.to_string(),
        }),
        None => rest
            .strip_prefix('-')
            .map(|default| substitute(default, envs, env)),
    }
}

/// Binds actual arguments to formals; `None` if the argument count does not fit.
fn bind(formals: &[Formal], args: &[String]) -> Option<Vec<(String, String)>> {
    let kws: HashMap<&str, &Formal> = formals
        .iter()
        .filter_map(|f| Some((f.keyword.as_deref()?, f)))
        .filter(|(k, _)| *k != "__REST__")
        .collect();
    let positional: Vec<&Formal> = formals.iter().filter(|f| f.keyword.is_none()).collect();
    let rest = formals
        .iter()
        .find(|f| f.keyword.as_deref() == Some("__REST__"));
    let mut env = Vec::new();
    for f in formals.iter().filter(|f| f.keyword.is_some()) {
        env.push((f.var.clone(), String::new()));
    }
    let mut pos = Vec::new();
    for a in args {
        match keyword_split(a) {
            Some((k, v)) if kws.contains_key(k) => {
                env.push((kws[k].var.clone(), v.to_string()));
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

/// A pass-through node whose unmatched ports Click reports: a compound instance's `input`
/// or `output`, or an end of a group.
struct Tunnel {
    /// The compound instance (a path, see [`Expander::path_name`]), or `None` for a group.
    inst: Option<usize>,
    lm: Landmark,
    /// The input side: outer connections arrive, inner ones leave.
    input: bool,
}

enum Node {
    /// An element and its position in Click's order.
    Real(FlatElement, usize),
    /// Spliced away; no tunnel for undeclared names and failed expansions.
    Virtual(Option<Tunnel>),
}

enum Resolved<'a> {
    Primitive(String),
    Body(&'a crate::parser::Body, Vec<(String, String)>),
}

/// A scope being expanded: the file, or the body of one compound instance.
struct Frame<'a> {
    scope: &'a Scope,
    env: usize,
    /// The instance's path and landmark (`None` for the file).
    inst: Option<(usize, Landmark)>,
    /// Next declaration to expand.
    next: usize,
    /// Click's position of declaration 0 in the flat element list (see [`Expander::slots`]).
    base: usize,
    /// Each expanded declaration's (input node, output node).
    ends: Vec<(usize, usize)>,
    nin: Vec<usize>,
    nout: Vec<usize>,
}

impl<'a> Frame<'a> {
    fn new(scope: &'a Scope, env: usize, inst: Option<(usize, Landmark)>, base: usize) -> Self {
        let mut nin = vec![0usize; scope.decls.len()];
        let mut nout = vec![0usize; scope.decls.len()];
        for c in &scope.conns {
            nout[c.from] = nout[c.from].max(c.from_port + 1);
            nin[c.to] = nin[c.to].max(c.to_port + 1);
        }
        Frame {
            scope,
            env,
            inst,
            next: 0,
            base,
            ends: Vec::with_capacity(scope.decls.len()),
            nin,
            nout,
        }
    }
}

pub(crate) struct Expander<'a> {
    classes: &'a [ClassDef],
    /// Variable environments of the file and of every compound instance.
    pub envs: Envs,
    pub diags: Diags,
    nodes: Vec<Node>,
    edges: Vec<(usize, usize, usize, usize, Landmark)>,
    /// Compound instance names as a tree (parent, last component): a full name costs memory
    /// only when an element needs it, however deep the nesting.
    paths: Vec<(Option<usize>, String)>,
    /// Real elements so far.
    elements: usize,
    /// Positions handed out so far. Click lists a scope's declarations together when it
    /// expands the scope, and expands the compounds among them afterwards, in order: a
    /// frame takes one position per declaration when it starts, and the flat elements are
    /// ordered by position.
    slots: usize,
    too_large: bool,
}

impl<'a> Expander<'a> {
    pub fn new(classes: &'a [ClassDef]) -> Self {
        Expander {
            classes,
            envs: Envs::default(),
            diags: Diags::default(),
            nodes: Vec::new(),
            edges: Vec::new(),
            paths: Vec::new(),
            elements: 0,
            slots: 0,
            too_large: false,
        }
    }

    fn error(&mut self, lm: &Landmark, msg: String) {
        self.diags.push(lm, msg);
    }

    /// The definition of class `r` that fits these arguments and port counts, following
    /// overloads and `...` extensions.
    fn resolve(
        &self,
        r: &ClassRef,
        args: &[String],
        nin: usize,
        nout: usize,
    ) -> Result<Resolved<'a>, String> {
        let classes: &'a [ClassDef] = self.classes;
        let mut id = match r {
            ClassRef::Primitive(c) => return Ok(Resolved::Primitive(c.clone())),
            ClassRef::Compound(id) => *id,
        };
        loop {
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
                return Ok(Resolved::Body(b, env));
            }
            match prev {
                Some(Some(ClassRef::Compound(p))) => {
                    id = p;
                    continue;
                }
                Some(Some(ClassRef::Primitive(c))) => return Ok(Resolved::Primitive(c)),
                Some(None) => return Ok(Resolved::Primitive(def.name.clone())),
                None => {}
            }
            if let Some((b, env)) = matching.into_iter().next() {
                return Ok(Resolved::Body(b, env));
            }
            return Err(format!(
                "wrong number of arguments to element class '{}' (got {})",
                def.name,
                args.len()
            ));
        }
    }

    /// The full name of `last` inside instance path `path` (`None`: the file).
    fn path_name(&self, path: Option<usize>, last: &str) -> String {
        let mut parts = vec![last];
        let mut p = path;
        while let Some(i) = p {
            parts.push(&self.paths[i].1);
            p = self.paths[i].0;
        }
        parts.reverse();
        parts.join("/")
    }

    fn push_node(&mut self, n: Node) -> usize {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    /// Expands the file scope `top` in environment `env`. Iterative: compound instances
    /// nested to any depth cost heap, not stack.
    pub fn expand(&mut self, top: &'a Scope, env: usize) {
        self.slots = top.decls.len();
        let mut stack = vec![Frame::new(top, env, None, 0)];
        while let Some(f) = stack.last_mut() {
            let i = f.next;
            if i == f.scope.decls.len() {
                let Some(f) = stack.pop() else { break };
                for c in &f.scope.conns {
                    let (from, to) = (f.ends[c.from].1, f.ends[c.to].0);
                    if from != usize::MAX && to != usize::MAX {
                        self.edges
                            .push((from, c.from_port, to, c.to_port, c.lm.clone()));
                    }
                }
                if let Some(parent) = stack.last_mut() {
                    // Decls 0 and 1 of a body are its input and output.
                    parent.ends.push((f.ends[0].0, f.ends[1].1));
                }
                continue;
            }
            f.next += 1;
            let scope: &'a Scope = f.scope;
            let d = &scope.decls[i];
            let (env, nin, nout, slot) = (f.env, f.nin[i], f.nout[i], f.base + i);
            if self.elements > MAX_ELEMENTS || self.nodes.len() > MAX_NODES {
                f.ends.push((usize::MAX, usize::MAX));
                if !self.too_large {
                    self.too_large = true;
                    self.error(&d.lm, "configuration too large".into());
                }
                continue;
            }
            let path = f.inst.as_ref().map(|(p, _)| *p);
            let r = match &d.kind {
                DeclKind::Virtual | DeclKind::Forward => {
                    let tunnel = match &f.inst {
                        Some((inst, lm)) if scope.compound && i < 2 => Some(Tunnel {
                            inst: Some(*inst),
                            lm: lm.clone(),
                            input: i == 0,
                        }),
                        _ if d.name.starts_with("@group") => Some(Tunnel {
                            inst: None,
                            lm: d.lm.clone(),
                            input: d.name.ends_with(" in"),
                        }),
                        _ => None,
                    };
                    let n = self.nodes.len();
                    f.ends.push((n, n));
                    self.push_node(Node::Virtual(tunnel));
                    continue;
                }
                DeclKind::Class(r) => r,
            };
            let config = substitute(&d.config, &self.envs, env);
            let args = match r {
                ClassRef::Compound(_) => split_args(&config),
                ClassRef::Primitive(_) => Vec::new(),
            };
            match self.resolve(r, &args, nin, nout) {
                Ok(Resolved::Primitive(class)) => {
                    let n = self.nodes.len();
                    f.ends.push((n, n));
                    let name = self.path_name(path, &d.name);
                    self.elements += 1;
                    self.push_node(Node::Real(
                        FlatElement {
                            name,
                            class,
                            config,
                            landmark: d.lm.clone(),
                        },
                        slot,
                    ));
                }
                Ok(Resolved::Body(body, bound)) => {
                    let inner = self.envs.child(Some(env), body.depth);
                    for (n, v) in bound {
                        self.envs.define(inner, &n, v);
                    }
                    for (n, v) in &body.scope.defines {
                        let v = substitute(v, &self.envs, inner);
                        self.envs.define(inner, n, v);
                    }
                    self.paths.push((path, d.name.clone()));
                    let inst = self.paths.len() - 1;
                    let base = self.slots;
                    self.slots += body.scope.decls.len();
                    stack.push(Frame::new(
                        &body.scope,
                        inner,
                        Some((inst, d.lm.clone())),
                        base,
                    ));
                }
                Err(msg) => {
                    let n = self.nodes.len();
                    f.ends.push((n, n));
                    self.push_node(Node::Virtual(None));
                    self.error(&d.lm, msg);
                }
            }
        }
    }

    /// Splices away virtual nodes and produces the flat configuration. A compound or group
    /// port that leads nowhere is an error, worded as Click words it.
    pub fn finish(mut self, requirements: Vec<String>) -> (FlatConfig, Diags) {
        let mut adj: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
        let mut fed: HashSet<(usize, usize)> = HashSet::new();
        for (k, e) in self.edges.iter().enumerate() {
            adj.entry((e.0, e.1)).or_default().push(k);
            fed.insert((e.2, e.3));
        }
        let mut reported: HashSet<(usize, usize)> = HashSet::new();
        let mut msgs = Vec::new();
        let mut unshown: Option<(Landmark, usize)> = None;
        // A configuration cut short has ports left dangling by the cut: say nothing of them.
        let edges = if self.too_large {
            &[][..]
        } else {
            &self.edges[..]
        };
        for e in edges {
            // The arriving end of an edge with nothing after it; the leaving end of an edge
            // with nothing before it.
            let ends = [
                (e.2, e.3, true, !adj.contains_key(&(e.2, e.3))),
                (e.0, e.1, false, !fed.contains(&(e.0, e.1))),
            ];
            for (n, p, arriving, dead) in ends {
                let Node::Virtual(Some(t)) = &self.nodes[n] else {
                    continue;
                };
                if !dead || !reported.insert((n, p)) {
                    continue;
                }
                if self.diags.count() + msgs.len() >= MAX_DIAGNOSTICS {
                    unshown.get_or_insert_with(|| (t.lm.clone(), 0)).1 += 1;
                    continue;
                }
                let name = match t.inst {
                    Some(i) => self.path_name(self.paths[i].0, &self.paths[i].1),
                    None => "<anonymous group>".into(),
                };
                let m = match (t.input, arriving) {
                    (true, true) => format!("'{name}' has no input {p}"),
                    (true, false) => format!("'{name}' input {p} unused"),
                    (false, true) => format!("'{name}' output {p} unused"),
                    (false, false) => format!("'{name}' has no output {p}"),
                };
                msgs.push((t.lm.clone(), m));
            }
        }
        for (lm, m) in msgs {
            self.error(&lm, m);
        }
        if let Some((lm, n)) = unshown {
            self.diags.skip(&lm, n);
        }
        let nnodes = self.nodes.len();
        let mut real: Vec<(usize, usize, FlatElement)> = Vec::new();
        for (i, n) in self.nodes.into_iter().enumerate() {
            if let Node::Real(e, slot) = n {
                real.push((slot, i, e));
            }
        }
        real.sort_unstable_by_key(|r| r.0);
        let mut index = vec![usize::MAX; nnodes];
        let mut elements = Vec::with_capacity(real.len());
        for (_, i, e) in real {
            index[i] = elements.len();
            elements.push(e);
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
