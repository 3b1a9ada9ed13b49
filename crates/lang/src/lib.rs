//! Sluice configuration language: a Click-compatible lexer, parser, compound-element
//! expander, flattener/unparser, Graphviz output, and Click-style argument parsing (`args`).

#![forbid(unsafe_code)]

pub mod args;
mod diags;
mod expand;
mod lexer;
pub mod names;
mod parser;

use std::fmt;
use std::sync::Arc;

/// A source position: file name and 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Landmark {
    /// File name as given to [`parse_config`] (or set by a `# LINE "file"` directive).
    pub file: Arc<str>,
    /// 1-based line number.
    pub line: u32,
}

impl fmt::Display for Landmark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// An error found in a configuration, with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// Where the problem is.
    pub landmark: Landmark,
    /// Click-style message, e.g. `redeclaration of element 'c'`.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.landmark, self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// One element of a flattened configuration. Equality ignores the landmark.
#[derive(Clone, Debug)]
pub struct FlatElement {
    /// Full name, compound components separated by `/`.
    pub name: String,
    /// Primitive class name (not checked here).
    pub class: String,
    /// Raw configuration string, comments removed, variables substituted, trimmed.
    pub config: String,
    /// Where the element was declared (or, for compound contents, the inner declaration).
    pub landmark: Landmark,
}

/// A connection between two flat elements (indices into `FlatConfig::elements`).
/// Equality ignores the landmark.
#[derive(Clone, Debug)]
pub struct FlatConnection {
    /// Source element index.
    pub from: usize,
    /// Source output port.
    pub from_port: usize,
    /// Destination element index.
    pub to: usize,
    /// Destination input port.
    pub to_port: usize,
    /// Where the (outermost) connection was written.
    pub landmark: Landmark,
}

impl PartialEq for FlatElement {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name && self.class == o.class && self.config == o.config
    }
}

impl PartialEq for FlatConnection {
    fn eq(&self, o: &Self) -> bool {
        (self.from, self.from_port, self.to, self.to_port) == (o.from, o.from_port, o.to, o.to_port)
    }
}

/// A fully expanded configuration: primitive elements, connections, requirements.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FlatConfig {
    /// Elements in declaration order (compound contents in place of the compound).
    pub elements: Vec<FlatElement>,
    /// Connections, compound pseudo-ports spliced away, duplicates removed.
    pub connections: Vec<FlatConnection>,
    /// `require(...)` arguments, one string per comma-separated item.
    pub requirements: Vec<String>,
}

impl FlatConfig {
    /// The requirements as Click records them: (`compact_config`, no value) or (`package`,
    /// NAME), a bare name meaning a package; `library` items, read by the parser, are left
    /// out.
    pub fn requirement_pairs(&self) -> Vec<(String, Option<String>)> {
        self.requirements
            .iter()
            .filter_map(|item| {
                let words = args::split_words(item);
                match words
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .as_slice()
                {
                    ["compact_config"] => Some(("compact_config".to_string(), None)),
                    ["library", _] => None,
                    [name] | ["package", name] => {
                        Some(("package".to_string(), Some(args::unquote(name))))
                    }
                    _ => Some((item.clone(), None)),
                }
            })
            .collect()
    }

    /// Index of the element with this name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.elements.iter().position(|e| e.name == name)
    }
}

/// First of the 256 private-use characters that stand for the bytes of a configuration that
/// are not UTF-8 (U+10FF00 + byte): configurations are bytes, as in Click.
const RAW_BYTE_BASE: u32 = 0x10_FF00;

/// Reads configuration bytes as text without loss: UTF-8 is kept, every other byte becomes
/// a private-use character that [`encode_config`] and the argument parsers turn back into
/// that byte (a byte inside a quoted string reaches the element unchanged).
pub fn decode_config(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for &b in chunk.invalid() {
            out.extend(char::from_u32(RAW_BYTE_BASE + u32::from(b)));
        }
    }
    out
}

/// The byte a character stands for, if it is one of [`decode_config`]'s raw bytes.
pub fn raw_byte(c: char) -> Option<u8> {
    (u32::from(c))
        .checked_sub(RAW_BYTE_BASE)
        .and_then(|b| u8::try_from(b).ok())
        .filter(|b| *b >= 0x80)
}

/// The bytes of configuration text, raw bytes restored (the inverse of [`decode_config`]).
pub fn encode_config(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match raw_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

/// Parses a whole configuration, expands compound elements, substitutes parameters, and
/// returns the flat graph. Every error found is returned, each with file:line.
pub fn parse_config(
    text: &str,
    filename: &str,
    defines: &[(String, String)],
) -> Result<FlatConfig, Vec<Diagnostic>> {
    parse(text, filename, defines, None)
}

/// Like [`parse_config`], knowing which names are primitive element classes (`is_class`):
/// such a name used as an element name is an error, as in Click (`Idle :: Idle`).
pub fn parse_config_with_classes(
    text: &str,
    filename: &str,
    defines: &[(String, String)],
    is_class: &dyn Fn(&str) -> bool,
) -> Result<FlatConfig, Vec<Diagnostic>> {
    parse(text, filename, defines, Some(is_class))
}

fn parse(
    text: &str,
    filename: &str,
    defines: &[(String, String)],
    is_class: Option<&dyn Fn(&str) -> bool>,
) -> Result<FlatConfig, Vec<Diagnostic>> {
    let mut p = parser::Parser::new(text, filename, is_class);
    p.parse_top();
    let top = p.scopes.pop().unwrap_or_default();
    let mut diags = std::mem::take(&mut p.diags);
    let requirements = std::mem::take(&mut p.requirements);
    let mut ex = expand::Expander::new(&p.classes);
    let env = ex.envs.child(None, 0);
    for (n, v) in &top.defines {
        let v = expand::substitute(v, &ex.envs, env);
        ex.envs.define(env, n, v);
    }
    for (n, v) in defines {
        let n = n.strip_prefix('$').unwrap_or(n);
        ex.envs.define(env, n, v.clone());
    }
    ex.expand(&top, env);
    let (cfg, d) = ex.finish(requirements);
    diags.extend(d);
    if diags.count() == 0 {
        Ok(cfg)
    } else {
        Err(diags.into_vec())
    }
}

/// Click's flat configuration text (`click -o`, the router's `flatconfig` handler):
/// `require(...);`, the element declarations, then the connections as chains, ordered as
/// Click orders them (by destination, then source). Re-parses to the same graph.
pub fn unparse(cfg: &FlatConfig) -> String {
    let mut s = String::new();
    let reqs: Vec<String> = cfg
        .requirement_pairs()
        .into_iter()
        .map(|(kind, value)| match value {
            Some(v) => format!("{} {}", kind, args::quote(&v)),
            None => kind,
        })
        .collect();
    if !reqs.is_empty() {
        s.push_str(&format!("require({});\n\n", reqs.join(", ")));
    }
    for e in &cfg.elements {
        s.push_str(&e.name);
        s.push_str(" :: ");
        s.push_str(&e.class);
        if !e.config.is_empty() {
            s.push('(');
            s.push_str(&e.config);
            s.push(')');
        }
        s.push_str(";\n");
    }
    if !cfg.elements.is_empty() {
        s.push('\n');
    }
    unparse_connections(cfg, &mut s);
    s
}

/// Click's connection chains: connections sorted by (destination, destination port, source,
/// source port); a connection that arrives on port 0 continues with a connection leaving
/// the same element from port 0 (preferring one that arrives on port 0 itself); each chain
/// starts where no other connection continues into it, and cycles are broken at their first
/// connection.
fn unparse_connections(cfg: &FlatConfig, s: &mut String) {
    let mut conns: Vec<&FlatConnection> = cfg
        .connections
        .iter()
        .filter(|c| c.from < cfg.elements.len() && c.to < cfg.elements.len())
        .collect();
    conns.sort_by_key(|c| (c.to, c.to_port, c.from, c.from_port));
    let n = conns.len();
    let mut next: Vec<Option<usize>> = vec![None; n];
    let mut start = vec![true; n];
    for ci in 0..n {
        if conns[ci].to_port != 0 {
            continue;
        }
        let mut found = None;
        for d in 0..n {
            if d != ci && conns[d].from == conns[ci].to && conns[d].from_port == 0 {
                found = Some(d);
                if conns[d].to_port == 0 {
                    break;
                }
            }
        }
        if let Some(d) = found {
            next[ci] = Some(d);
            start[d] = false;
        }
    }
    let name = |i: usize| cfg.elements[i].name.as_str();
    let mut used = vec![false; n];
    loop {
        for ci in 0..n {
            if used[ci] || !start[ci] {
                continue;
            }
            s.push_str(name(conns[ci].from));
            if conns[ci].from_port != 0 {
                s.push_str(&format!(" [{}]", conns[ci].from_port));
            }
            let mut d = Some(ci);
            while let Some(k) = d.filter(|&k| !used[k]) {
                s.push_str(if k == ci { " -> " } else { "\n    -> " });
                if conns[k].to_port != 0 {
                    s.push_str(&format!("[{}] ", conns[k].to_port));
                }
                s.push_str(name(conns[k].to));
                used[k] = true;
                d = next[k];
            }
            s.push_str(";\n");
        }
        match (0..n).find(|&ci| !used[ci]) {
            Some(ci) => start[ci] = true,
            None => break,
        }
    }
}

fn dot_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                o.push('\\');
                o.push(c);
            }
            '\n' => o.push_str("\\n"),
            _ => o.push(c),
        }
    }
    o
}

/// Graphviz dot text: one node per element labelled "name :: Class", edges labelled with ports.
pub fn to_dot(cfg: &FlatConfig) -> String {
    let mut s = String::from("digraph sluice {\n  node [shape=box];\n");
    for (i, e) in cfg.elements.iter().enumerate() {
        s.push_str(&format!(
            "  n{i} [label=\"{} :: {}\"];\n",
            dot_escape(&e.name),
            dot_escape(&e.class)
        ));
    }
    for c in &cfg.connections {
        s.push_str(&format!(
            "  n{} -> n{} [label=\"[{}] -> [{}]\"];\n",
            c.from, c.to, c.from_port, c.to_port
        ));
    }
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests;
