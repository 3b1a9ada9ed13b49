//! Tokenizer for the Click language. Configuration strings are lexed on demand by the parser.

use crate::Landmark;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    Var(String),
    Arrow,
    DArrow,
    Colon2,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Comma,
    Semi,
    Bar,
    DBar,
    Ellipsis,
    Eof,
    Other(char),
}

impl Tok {
    /// Text shown in "syntax error near '...'".
    pub(crate) fn text(&self) -> String {
        match self {
            Tok::Ident(s) => s.clone(),
            Tok::Var(s) => format!("${s}"),
            Tok::Arrow => "->".into(),
            Tok::DArrow => "=>".into(),
            Tok::Colon2 => "::".into(),
            Tok::LBrack => "[".into(),
            Tok::RBrack => "]".into(),
            Tok::LBrace => "{".into(),
            Tok::RBrace => "}".into(),
            Tok::LParen => "(".into(),
            Tok::RParen => ")".into(),
            Tok::Comma => ",".into(),
            Tok::Semi => ";".into(),
            Tok::Bar => "|".into(),
            Tok::DBar => "||".into(),
            Tok::Ellipsis => "...".into(),
            Tok::Eof => "end of file".into(),
            Tok::Other(c) => match crate::raw_byte(*c) {
                Some(b) => format!("\\x{b:02X}"),
                None => c.to_string(),
            },
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub lm: Landmark,
    /// Lexer position and line just after this token.
    pub end: usize,
    pub end_line: u32,
}

pub(crate) fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '@'
}

pub(crate) struct Lexer {
    s: Vec<char>,
    pub pos: usize,
    pub line: u32,
    pub file: Arc<str>,
}

impl Lexer {
    pub fn new(text: &str, file: &str) -> Lexer {
        Lexer {
            s: text.chars().collect(),
            pos: 0,
            line: 1,
            file: Arc::from(file),
        }
    }

    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    pub fn landmark(&self) -> Landmark {
        Landmark {
            file: self.file.clone(),
            line: self.line,
        }
    }

    /// Handles `# LINE "file"` directives; otherwise skips the line.
    fn line_directive(&mut self) {
        let start = self.pos + 1;
        let mut end = start;
        while end < self.s.len() && self.s[end] != '\n' {
            end += 1;
        }
        let text: String = self.s[start..end].iter().collect();
        let mut it = text.trim().splitn(2, char::is_whitespace);
        let num = it.next().and_then(|n| n.parse::<u32>().ok());
        self.pos = end;
        if let Some(n) = num {
            // The file name is quoted; cpp adds flags after it (`# 1 "B" 1`).
            if let Some(f) = it.next().and_then(|f| f.trim().strip_prefix('"')) {
                if let Some((name, _)) = f.split_once('"') {
                    self.file = Arc::from(name);
                }
            }
            // The newline ending the directive advances to line `n`.
            self.line = n.saturating_sub(1);
        }
    }

    fn skip_space(&mut self) {
        loop {
            match self.at(self.pos) {
                Some('\n') => {
                    self.line += 1;
                    self.pos += 1;
                }
                Some(c) if c.is_whitespace() => self.pos += 1,
                Some('/') if self.at(self.pos + 1) == Some('/') => {
                    while let Some(c) = self.at(self.pos) {
                        if c == '\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some('/') if self.at(self.pos + 1) == Some('*') => {
                    self.pos += 2;
                    loop {
                        match self.at(self.pos) {
                            None => break,
                            Some('*') if self.at(self.pos + 1) == Some('/') => {
                                self.pos += 2;
                                break;
                            }
                            Some('\n') => {
                                self.line += 1;
                                self.pos += 1;
                            }
                            _ => self.pos += 1,
                        }
                    }
                }
                Some('#') => self.line_directive(),
                _ => return,
            }
        }
    }

    pub fn next_token(&mut self) -> Token {
        self.skip_space();
        let lm = self.landmark();
        let c = self.at(self.pos);
        let n = self.at(self.pos + 1);
        let (tok, len) = match c {
            None => (Tok::Eof, 0),
            Some('-') if n == Some('>') => (Tok::Arrow, 2),
            Some('=') if n == Some('>') => (Tok::DArrow, 2),
            Some(':') if n == Some(':') => (Tok::Colon2, 2),
            Some('|') if n == Some('|') => (Tok::DBar, 2),
            Some('.') if n == Some('.') && self.at(self.pos + 2) == Some('.') => (Tok::Ellipsis, 3),
            Some('[') => (Tok::LBrack, 1),
            Some(']') => (Tok::RBrack, 1),
            Some('{') => (Tok::LBrace, 1),
            Some('}') => (Tok::RBrace, 1),
            Some('(') => (Tok::LParen, 1),
            Some(')') => (Tok::RParen, 1),
            Some(',') => (Tok::Comma, 1),
            Some(';') => (Tok::Semi, 1),
            Some('|') => (Tok::Bar, 1),
            Some('$') => {
                let mut e = self.pos + 1;
                while self
                    .at(e)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    e += 1;
                }
                if e == self.pos + 1 {
                    (Tok::Other('$'), 1)
                } else {
                    let name: String = self.s[self.pos + 1..e].iter().collect();
                    (Tok::Var(name), e - self.pos)
                }
            }
            Some(c) if is_ident_char(c) => {
                let mut e = self.pos;
                loop {
                    match self.at(e) {
                        Some(c) if is_ident_char(c) => e += 1,
                        Some('/')
                            if !matches!(self.at(e + 1), Some('/') | Some('*'))
                                && self.at(e + 1).is_some_and(is_ident_char) =>
                        {
                            e += 1
                        }
                        _ => break,
                    }
                }
                let s: String = self.s[self.pos..e].iter().collect();
                (Tok::Ident(s), e - self.pos)
            }
            Some(c) => (Tok::Other(c), 1),
        };
        self.pos += len;
        Token {
            tok,
            lm,
            end: self.pos,
            end_line: self.line,
        }
    }

    /// Lexes a configuration string starting just after `(`, up to the matching `)`.
    /// Comments are removed, quotes and nesting respected, the result trimmed.
    /// Returns `None` at end of input (unterminated).
    pub fn config(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut depth: Vec<char> = Vec::new();
        loop {
            let c = self.at(self.pos)?;
            let n = self.at(self.pos + 1);
            match c {
                '\n' => {
                    self.line += 1;
                    out.push(c);
                    self.pos += 1;
                }
                '/' if n == Some('/') => {
                    while self.at(self.pos).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                // A `# LINE "file"` directive at the start of a line, as Click's lexer
                // handles them inside configuration strings too.
                '#' if self.pos > 0 && self.at(self.pos - 1) == Some('\n') => self.line_directive(),
                '/' if n == Some('*') => {
                    self.pos += 2;
                    loop {
                        match self.at(self.pos) {
                            None => return None,
                            Some('*') if self.at(self.pos + 1) == Some('/') => {
                                self.pos += 2;
                                break;
                            }
                            Some('\n') => {
                                self.line += 1;
                                self.pos += 1;
                            }
                            _ => self.pos += 1,
                        }
                    }
                    if !out.ends_with(char::is_whitespace) {
                        out.push(' ');
                    }
                }
                '"' | '\'' => {
                    out.push(c);
                    self.pos += 1;
                    loop {
                        let d = self.at(self.pos)?;
                        out.push(d);
                        self.pos += 1;
                        if d == '\n' {
                            self.line += 1;
                        }
                        if d == '\\' && c == '"' {
                            let e = self.at(self.pos)?;
                            if e == '\n' {
                                self.line += 1;
                            }
                            out.push(e);
                            self.pos += 1;
                        } else if d == c {
                            break;
                        }
                    }
                }
                '(' | '[' | '{' => {
                    depth.push(match c {
                        '(' => ')',
                        '[' => ']',
                        _ => '}',
                    });
                    out.push(c);
                    self.pos += 1;
                }
                ')' | ']' | '}' => {
                    self.pos += 1;
                    if depth.is_empty() && c == ')' {
                        return Some(out.trim().to_string());
                    }
                    if depth.last() == Some(&c) {
                        depth.pop();
                    }
                    out.push(c);
                }
                _ => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// Restarts lexing at a given position and line.
    pub fn seek(&mut self, pos: usize, line: u32) {
        self.pos = pos;
        self.line = line;
    }
}
