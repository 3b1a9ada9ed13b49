//! ControlSocket — lets other programs call handlers over a TCP or Unix socket
//!
//! Synopsis: `ControlSocket("TCP", PORTNUMBER [, keywords READONLY, PROXY, VERBOSE, LOCALHOST,
//! RETRIES, RETRY_WARNINGS])` or `ControlSocket("UNIX", FILENAME [, keywords])`
//!
//! Ports: none. Listens on TCP port PORTNUMBER (a number or a service name; `41930+` means
//! the first free port from 41930 on, trying up to 10 more; 0 picks any free port — see the
//! `port` handler) or on the Unix-domain socket FILENAME. The socket type is case-insensitive
//! (`ControlSocket(tcp, 41930)`, `ControlSocket(unix, /tmp/click.sock)`). A leftover Unix
//! socket at FILENAME that nobody listens on is replaced; any other file there, or a socket
//! in use, makes the bind fail with "Address already in use", as in Click. The socket file is
//! removed at cleanup. Connections are served from the router's event loop, between tasks.
//!
//! Protocol (Click's ControlSocket 1.3): on connection the server sends
//! `Click::ControlSocket/1.3`. Commands are lines (ended by CR, LF or CRLF) of words; every
//! reply line ends with CRLF and starts with a three-digit code (a hyphen after the code marks
//! a continued message):
//! - `READ HANDLER [PARAMS]` (or `GET`) → `200 Read handler 'HANDLER' OK`, then `DATA N` and
//!   N bytes of value, as the handler wrote it (no newline is added: a count of 2 is `DATA 1`). `READDATA HANDLER N` passes the N bytes after the line as parameters;
//!   `READUNTIL HANDLER [TERMINATOR]` the lines up to one equal to TERMINATOR (default: an
//!   empty line).
//! - `WRITE HANDLER [VALUE...]` (or `SET`), `WRITEDATA HANDLER N` (or `SETDATA`),
//!   `WRITEUNTIL HANDLER [TERMINATOR]` → `200 Write handler 'HANDLER' OK`.
//! - `CHECKREAD HANDLER`, `CHECKWRITE HANDLER` → 200 if the handler exists and allows it.
//! - `LLRPC ELEMENT#NUMBER [N]` → 501 (no LLRPC can be called remotely); `HELP`; `QUIT` or
//!   `CLOSE` → `200 Goodbye!` and the connection closes.
//!
//! HANDLER is `ELEMENT.NAME` (ELEMENT may also be an element's 1-based index), or a router
//! handler (`list`, `config`, `version`, `stop`, ...; `.NAME` also names one). Error codes:
//! 500 syntax error, 501 unimplemented command, 510 no such element, 511 no such handler,
//! 520 write handler error, 521 data too large, 530 permission denied (the wrong direction,
//! or a write on a READONLY socket), 590 read handler error. A command line longer than
//! 65536 bytes gets `500 Line too long` and the connection is closed; data of a `*DATA` or
//! `*UNTIL` command may be up to 16 MiB (larger: 521). Input is buffered only up to these
//! bounds, and a connection's buffers are released when it closes.
//!
//! Arguments:
//! - TYPE (`TCP` or `UNIX`, mandatory), then PORTNUMBER or FILENAME (mandatory).
//! - READONLY (boolean, default false): refuse writes.
//! - PROXY (element name): handler `E.H` is answered by the proxy element's handler named
//!   `E.H` (Click's KernelHandlerProxy scheme).
//! - VERBOSE (boolean, default false): report opened and closed connections on standard error.
//! - LOCALHOST (boolean, default false): TCP listens on 127.0.0.1 only; otherwise on every
//!   address, as in Click. Anyone who can reach the port can read and write every handler:
//!   give `LOCALHOST true` (or `READONLY true`) unless the network is trusted.
//! - RETRIES (integer, default 0): if the socket cannot be opened, try again once a second
//!   this many times before stopping the router.
//! - RETRY_WARNINGS (boolean, default true): warn at every failed try, not just the last.
//!
//! The command-line options `-p PORT` and `-u FILENAME` add ControlSockets.
//!
//! Handlers: `port` (r, the bound TCP port), `filename` (r, the Unix socket's name),
//! `connections` (r, open connections), `count` (r, commands served).
//!
//! Example: `ControlSocket(tcp, 7777)` then `printf 'READ c.count\nQUIT\n' | nc 127.0.0.1 7777`

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::{Duration, Instant};

use sluice_core::signals::stop_requested;
use sluice_core::Timestamp;
use sluice_core::{ConfigCx, Cx, Element, ElementClass, HandlerError, Handlers, InitCx, Table};
use sluice_lang::args::{Args, FromArg, Word};

use crate::ip::common::PortArg;

const GREETING: &str = "Click::ControlSocket/1.3";
/// Longest command line accepted.
pub const MAX_LINE: usize = 64 * 1024;
/// Largest data of a `READDATA`, `WRITEDATA`, `READUNTIL` or `WRITEUNTIL` command.
pub const MAX_DATA: usize = 16 * 1024 * 1024;
/// Most bytes read from one connection per wake-up (others get their turn).
const READ_BUDGET: usize = 256 * 1024;
/// Longest Unix socket name (`sun_path` holds 108 bytes with the NUL).
const MAX_PATH: usize = 107;

/// A PORTNUMBER argument: a port or service name, or `N+` (N or the next free one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpPort {
    /// The port (the first one tried with `+`).
    pub port: u16,
    /// `N+`: try later ports when N is in use.
    pub or_above: bool,
}

impl FromArg for TcpPort {
    fn from_arg(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if let Ok(PortArg(port)) = PortArg::from_arg(t) {
            return Ok(TcpPort {
                port,
                or_above: false,
            });
        }
        match t.strip_suffix('+').map(u16::from_arg) {
            Some(Ok(port)) if port > 0 => Ok(TcpPort {
                port,
                or_above: true,
            }),
            _ => Err("expected TCP port".into()),
        }
    }
}

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// A session held in memory ([`ControlSocket::session`]): what is left of its input, and
    /// the replies so far.
    Memory {
        input: Vec<u8>,
        output: Vec<u8>,
    },
}

impl Stream {
    fn fd(&self) -> i32 {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Memory { .. } => -1,
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Memory { input, .. } => {
                let n = buf.len().min(input.len());
                buf[..n].copy_from_slice(&input[..n]);
                input.drain(..n);
                Ok(n)
            }
        }
    }

    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Memory { output, .. } => {
                output.extend_from_slice(buf);
                Ok(buf.len())
            }
        }
    }
}

/// What a connection's next input is for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expect {
    /// A command line.
    Line,
    /// N bytes of data for a read (`write` false) or write handler.
    Data {
        write: bool,
        handler: String,
        n: usize,
    },
    /// Lines up to TERMINATOR; `scanned` bytes are known to hold no terminator line.
    Until {
        write: bool,
        handler: String,
        term: String,
        scanned: usize,
    },
    /// N bytes to throw away (the data of a refused command).
    Skip(usize),
}

struct Conn {
    stream: Stream,
    inbuf: Vec<u8>,
    /// Bytes at the front of `inbuf` known to hold no line end.
    scanned: usize,
    expect: Expect,
    /// The client closed its side (or QUIT): no more commands.
    in_closed: bool,
    closed: bool,
}

impl Conn {
    /// A new connection, greeted.
    fn open(stream: Stream) -> Conn {
        let mut c = Conn {
            stream,
            inbuf: Vec::new(),
            scanned: 0,
            expect: Expect::Line,
            in_closed: false,
            closed: false,
        };
        c.send(format!("{GREETING}\r\n").as_bytes());
        c
    }

    /// Sends everything, waiting briefly when the peer's buffer is full; a peer that does not
    /// read for 5 seconds is dropped, and so is every peer once a stop signal arrives.
    fn send(&mut self, bytes: &[u8]) {
        let mut off = 0;
        let deadline = Instant::now() + Duration::from_secs(5);
        while off < bytes.len() && !self.closed && !stop_requested() {
            match self.stream.write(&bytes[off..]) {
                Ok(0) => self.closed = true,
                Ok(n) => off += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => self.closed = true,
            }
        }
    }

    /// One message line; `more` marks it continued (`200-...`).
    fn message(&mut self, code: u16, msg: &str, more: bool) {
        let sep = if more { '-' } else { ' ' };
        self.send(format!("{code}{sep}{}\r\n", printable(msg)).as_bytes());
    }

    fn line(&mut self, code: u16, msg: &str) {
        self.message(code, msg, false);
    }

    /// A failure with a headline and the handler's message, as Click's error transfer does.
    fn failure(&mut self, code: u16, headline: &str, detail: &str) {
        let lines: Vec<&str> = detail.lines().filter(|l| !l.is_empty()).collect();
        if lines.is_empty() {
            return self.line(code, headline);
        }
        self.message(code, &format!("{headline}:"), true);
        for (i, l) in lines.iter().enumerate() {
            self.message(code, l, i + 1 < lines.len());
        }
    }

    /// The input ended before the data of a command: Click's reply; the rest is dropped.
    fn not_enough_data(&mut self) {
        self.line(500, "Not enough data");
        self.take(self.inbuf.len());
        self.expect = Expect::Line;
    }

    /// Throws away the next `n` bytes of input, buffered or still to come.
    fn skip(&mut self, n: usize) {
        let d = n.min(self.inbuf.len());
        self.take(d);
        self.expect = if n > d {
            Expect::Skip(n - d)
        } else {
            Expect::Line
        };
    }

    /// Takes the first `n` buffered bytes.
    fn take(&mut self, n: usize) -> Vec<u8> {
        let rest = self.inbuf.split_off(n);
        self.scanned = 0;
        std::mem::replace(&mut self.inbuf, rest)
    }
}

/// Click's `String::printable`: control characters as `^X`, high bytes as `M-x`.
fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c as u32 {
            0..=31 => {
                out.push('^');
                out.push((c as u8 + 64) as char);
            }
            127 => out.push_str("^?"),
            _ => out.push(c),
        }
    }
    out
}

/// The message of an OS error, without Rust's "(os error N)".
fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The ControlSocket element.
pub struct ControlSocket {
    unix: bool,
    port: TcpPort,
    path: String,
    readonly: bool,
    verbose: bool,
    localhost: bool,
    /// Tries left after the next (Click counts down to -1).
    retries: i32,
    retry_warnings: bool,
    proxy: Option<String>,
    listener: Option<Listener>,
    listen_fd: i32,
    conns: Vec<Conn>,
    count: u64,
    /// This ControlSocket replaces one of a running configuration (hot swap): it takes that
    /// one's socket rather than looking for another free port.
    successor: bool,
}

/// Timer: try to open the socket again.
const RETRY_TIMER: usize = 0;
/// Timer: answer the commands a hot-swapped predecessor left unanswered.
const RESUME_TIMER: usize = 1;

impl Default for ControlSocket {
    fn default() -> ControlSocket {
        ControlSocket {
            unix: false,
            port: TcpPort {
                port: 0,
                or_above: false,
            },
            path: String::new(),
            readonly: false,
            verbose: false,
            localhost: false,
            retries: 0,
            retry_warnings: true,
            proxy: None,
            listener: None,
            listen_fd: -1,
            conns: Vec::new(),
            count: 0,
            successor: false,
        }
    }
}

impl ControlSocket {
    /// Opens the listening socket; `Err` is `SYSCALL: message`.
    fn open(&mut self) -> Result<Listener, String> {
        if self.unix {
            self.remove_stale_socket();
            return UnixListener::bind(&self.path)
                .map(Listener::Unix)
                .map_err(|e| format!("bind: {}", strerror(&e)));
        }
        let host = if self.localhost {
            "127.0.0.1"
        } else {
            "0.0.0.0"
        };
        let mut port = self.port.port;
        let mut tries = 0;
        loop {
            match TcpListener::bind((host, port)) {
                Ok(l) => return Ok(Listener::Tcp(l)),
                Err(e) if !self.port.or_above || self.successor || tries >= 10 || port >= 65534 => {
                    return Err(format!("bind: {}", strerror(&e)))
                }
                Err(_) => {
                    port += 1;
                    tries += 1;
                }
            }
        }
    }

    /// Removes FILENAME if it is a Unix socket nobody listens on (left by a process that
    /// died); any other file stays, and the bind then fails.
    fn remove_stale_socket(&self) {
        let is_socket = std::fs::symlink_metadata(&self.path)
            .map(|m| m.file_type().is_socket())
            .unwrap_or(false);
        if is_socket
            && UnixStream::connect(&self.path)
                .is_err_and(|e| e.kind() == ErrorKind::ConnectionRefused)
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }

    /// One try to open the socket, as Click's `initialize_socket`: `Ok(true)` when open,
    /// `Ok(false)` after a failure with tries left (warned about), `Err` on the last failure.
    fn try_open(&mut self, cx: &mut Cx) -> Result<bool, String> {
        self.retries -= 1;
        match self.open() {
            Ok(l) => {
                let (nb, fd) = match &l {
                    Listener::Tcp(t) => {
                        if let Ok(a) = t.local_addr() {
                            self.port.port = a.port();
                            self.port.or_above = false;
                        }
                        (t.set_nonblocking(true), t.as_raw_fd())
                    }
                    Listener::Unix(u) => (u.set_nonblocking(true), u.as_raw_fd()),
                };
                nb.map_err(|e| format!("fcntl: {}", strerror(&e)))?;
                self.listen_fd = fd;
                self.listener = Some(l);
                cx.add_select(fd);
                Ok(true)
            }
            Err(e) if self.retries >= 0 => {
                if self.retry_warnings {
                    let n = self.retries + 1;
                    let tries = if n == 1 { "try" } else { "tries" };
                    eprintln!("{}: warning: {e} ({n} {tries} left)", cx.name());
                }
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Serves one whole client session held in memory: `input` is everything the client
    /// sends before closing its side; returns everything the element answers, greeting
    /// included, exactly as a socket client would receive it. For tests and fuzzing of the
    /// protocol without sockets.
    pub fn session(&mut self, input: &[u8], cx: &mut Cx) -> Vec<u8> {
        self.conns.push(Conn::open(Stream::Memory {
            input: input.to_vec(),
            output: Vec::new(),
        }));
        let i = self.conns.len() - 1;
        while !self.conns[i].closed {
            self.serve(i, cx);
        }
        match self.conns.remove(i).stream {
            Stream::Memory { output, .. } => output,
            Stream::Tcp(_) | Stream::Unix(_) => Vec::new(),
        }
    }

    fn accept(&mut self, cx: &mut Cx) {
        loop {
            let s = match self.listener.as_ref() {
                Some(Listener::Tcp(t)) => t.accept().map(|(s, a)| {
                    let _ = s.set_nodelay(true);
                    (
                        s.set_nonblocking(true),
                        Stream::Tcp(s),
                        format!(" from {a}"),
                    )
                }),
                Some(Listener::Unix(u)) => u
                    .accept()
                    .map(|(s, _)| (s.set_nonblocking(true), Stream::Unix(s), String::new())),
                None => return,
            };
            match s {
                Ok((Ok(()), stream, from)) => {
                    let fd = stream.fd();
                    if self.verbose {
                        eprintln!("{}: opened connection {fd}{from}", cx.name());
                    }
                    let c = Conn::open(stream);
                    if !c.closed {
                        cx.add_select(fd);
                        self.conns.push(c);
                    }
                }
                Ok((Err(_), _, _)) => continue,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
    }

    /// Reads what connection `i` sent, a chunk at a time, executing each complete command
    /// before reading on, so input is buffered only up to the line and data bounds.
    fn serve(&mut self, i: usize, cx: &mut Cx) {
        let mut buf = [0u8; 4096];
        let mut budget = READ_BUDGET;
        while budget > 0 && !self.conns[i].in_closed && !self.conns[i].closed && !cx.swap_pending()
        {
            let c = &mut self.conns[i];
            match c.stream.read(&mut buf) {
                Ok(0) => c.in_closed = true,
                Ok(n) => {
                    budget = budget.saturating_sub(n);
                    let mut bytes = &buf[..n];
                    if let Expect::Skip(k) = &mut c.expect {
                        let d = (*k).min(bytes.len());
                        *k -= d;
                        bytes = &bytes[d..];
                        if *k == 0 {
                            c.expect = Expect::Line;
                        }
                    }
                    c.inbuf.extend_from_slice(bytes);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => c.closed = true,
            }
            self.process(i, cx);
        }
        if cx.swap_pending() {
            // The rest is for the ControlSocket of the configuration being installed.
            return;
        }
        if self.conns[i].in_closed {
            self.process(i, cx);
            self.conns[i].closed = true;
        }
        let c = &mut self.conns[i];
        if c.inbuf.capacity() > 2 * MAX_LINE && c.inbuf.len() < MAX_LINE {
            c.inbuf.shrink_to(MAX_LINE);
        }
    }

    /// Executes every complete command in connection `i`'s input; enforces the bounds on
    /// what may wait in the buffer.
    fn process(&mut self, i: usize, cx: &mut Cx) {
        loop {
            let c = &mut self.conns[i];
            if c.closed || cx.swap_pending() {
                return;
            }
            match c.expect.clone() {
                Expect::Skip(_) => return,
                Expect::Data { write, handler, n } => {
                    if c.inbuf.len() < n {
                        if c.in_closed {
                            c.not_enough_data();
                        }
                        return;
                    }
                    let data = c.take(n);
                    c.expect = Expect::Line;
                    let data = String::from_utf8_lossy(&data).into_owned();
                    self.call(i, write, &handler, &data, cx);
                }
                Expect::Until {
                    write,
                    handler,
                    term,
                    scanned,
                } => match find_terminator(&c.inbuf, scanned, &term) {
                    Ok((data_end, next)) => {
                        let mut data = c.take(next);
                        data.truncate(data_end);
                        c.expect = Expect::Line;
                        let data = String::from_utf8_lossy(&data).into_owned();
                        self.call(i, write, &handler, &data, cx);
                    }
                    Err(scanned) => {
                        if c.inbuf.len() > MAX_DATA {
                            c.line(521, "Data too large");
                            c.closed = true;
                        } else if c.in_closed {
                            c.not_enough_data();
                        } else if let Expect::Until { scanned: s, .. } = &mut c.expect {
                            *s = scanned;
                        }
                        return;
                    }
                },
                Expect::Line => {
                    let from = c.scanned;
                    let Some(off) = c.inbuf[from..]
                        .iter()
                        .position(|&b| b == b'\n' || b == b'\r')
                    else {
                        c.scanned = c.inbuf.len();
                        if c.inbuf.len() > MAX_LINE {
                            c.line(500, "Line too long");
                            c.closed = true;
                            return;
                        }
                        if !c.in_closed || c.inbuf.is_empty() {
                            return;
                        }
                        // The last line of a closed input needs no line end.
                        let line = c.take(c.inbuf.len());
                        self.command(i, &String::from_utf8_lossy(&line), cx);
                        continue;
                    };
                    let end = from + off;
                    if end > MAX_LINE {
                        c.line(500, "Line too long");
                        c.closed = true;
                        return;
                    }
                    let crlf = c.inbuf[end] == b'\r' && c.inbuf.get(end + 1) == Some(&b'\n');
                    let mut line = c.take(end + 1 + crlf as usize);
                    line.truncate(end);
                    self.command(i, &String::from_utf8_lossy(&line), cx);
                }
            }
        }
    }

    fn command(&mut self, i: usize, line: &str, cx: &mut Cx) {
        let words: Vec<&str> = line.split_ascii_whitespace().collect();
        let Some(first) = words.first() else {
            return;
        };
        self.count += 1;
        let cmd = first.to_ascii_uppercase();
        // The parameters: the text from the third word to the end of the last one.
        let rest = |from: usize| -> String {
            match words.get(from) {
                Some(w) => {
                    let start = w.as_ptr() as usize - line.as_ptr() as usize;
                    line[start..].trim_end().to_string()
                }
                None => String::new(),
            }
        };
        let c = &mut self.conns[i];
        match cmd.as_str() {
            "READ" | "GET" | "WRITE" | "SET" => {
                if words.len() < 2 {
                    return c.line(500, "Wrong number of arguments");
                }
                let write = cmd.starts_with('W') || cmd == "SET";
                let param = rest(2);
                self.call(i, write, words[1], &param, cx);
            }
            "READDATA" | "WRITEDATA" | "SETDATA" => {
                if words.len() != 3 {
                    return c.line(500, "Wrong number of arguments");
                }
                let write = !cmd.starts_with('R');
                match usize::from_arg(words[2]) {
                    Ok(n) if n > MAX_DATA => {
                        c.line(521, &format!("Data too large for handler '{}'", words[1]));
                        c.skip(n);
                    }
                    Ok(n) => {
                        c.expect = Expect::Data {
                            write,
                            handler: words[1].to_string(),
                            n,
                        }
                    }
                    Err(_) => c.line(500, &format!("Syntax error in '{cmd}'")),
                }
            }
            "READUNTIL" | "WRITEUNTIL" => {
                if words.len() < 2 {
                    return c.line(500, "Wrong number of arguments");
                }
                c.expect = Expect::Until {
                    write: cmd.starts_with('W'),
                    handler: words[1].to_string(),
                    term: rest(2),
                    scanned: 0,
                };
            }
            "CHECKREAD" | "CHECKWRITE" => {
                if words.len() != 2 {
                    return c.line(500, "Wrong number of arguments");
                }
                self.check(i, words[1], cmd == "CHECKWRITE", cx);
            }
            "LLRPC" => {
                if words.len() != 2 && words.len() != 3 {
                    return c.line(500, "Wrong number of arguments");
                }
                let n = match words.get(2).map(|w| usize::from_arg(w)) {
                    None => 0,
                    Some(Ok(n)) if n <= MAX_DATA => n,
                    Some(_) => return c.line(500, "Syntax error in 'llrpc'"),
                };
                let name = words[1];
                let (elem, number) = name.split_once('#').unwrap_or((name, ""));
                let msg = if u32::from_str_radix(number, 16).is_err() {
                    (500, format!("Syntax error in LLRPC name '{name}'"))
                } else if cx.element_index(elem).is_none() {
                    (510, format!("No element named '{elem}'"))
                } else {
                    (501, format!("Cannot call LLRPC '{name}' remotely"))
                };
                c.skip(n);
                c.line(msg.0, &msg.1);
            }
            "QUIT" | "CLOSE" => {
                if words.len() != 1 {
                    c.line(500, "Bad command syntax");
                }
                c.line(200, "Goodbye!");
                c.in_closed = true;
                c.closed = true;
            }
            "HELP" => {
                const HELP: &[&str] = &[
                    "Commands supported:",
                    "READ handler [arg...]   call read handler, return DATA",
                    "READDATA handler len    call read handler with len data bytes, return DATA",
                    "READUNTIL handler term  call read handler, take data until term, return DATA",
                    "WRITE handler [arg...]  call write handler",
                    "WRITEDATA handler len   call write handler, pass len data bytes",
                    "WRITEUNTIL handler term call write handler, take data until term",
                    "CHECKREAD handler       check if read handler is valid",
                    "CHECKWRITE handler      check if write handler is valid",
                    "LLRPC elt#number [len]  call LLRPC, pass len data bytes, return DATA",
                    "QUIT                    close connection",
                ];
                for (k, l) in HELP.iter().enumerate() {
                    c.message(200, l, k + 1 < HELP.len());
                }
            }
            _ => c.line(501, &format!("Command '{cmd}' unimplemented")),
        }
    }

    /// The handler path a client's name means: `.NAME` and `0.NAME` are router handlers, a
    /// numeric element is an index from 1, and with PROXY the proxy element answers.
    fn resolve(&self, name: &str, cx: &mut Cx) -> Result<String, (u16, String)> {
        let canonical = name
            .strip_prefix('.')
            .or_else(|| name.strip_prefix("0."))
            .unwrap_or(name);
        if let Some(p) = &self.proxy {
            return Ok(format!("{p}.{canonical}"));
        }
        let Some((e, h)) = canonical.rsplit_once('.') else {
            return Ok(canonical.to_string());
        };
        if cx.element_index(e).is_some() {
            return Ok(canonical.to_string());
        }
        let by_index = usize::from_arg(e).ok().filter(|&n| n > 0).and_then(|n| {
            let list = cx.read_handler("list").ok()?;
            list.lines().nth(n).map(|el| format!("{el}.{h}"))
        });
        by_index.ok_or_else(|| (510, format!("No element named '{e}'")))
    }

    /// Reply code and message for a handler that cannot be called.
    fn refusal(&self, name: &str, e: &HandlerError) -> (u16, String) {
        match e {
            _ if self.proxy.is_some() => (511, format!("No proxied handler named '{name}'")),
            HandlerError::NoElement(el) => (510, format!("No element named '{el}'")),
            HandlerError::NoHandler(_) => (511, format!("No handler named '{name}'")),
            HandlerError::NotReadable(_) => (530, format!("Handler '{name}' write-only")),
            HandlerError::NotWritable(_) => (530, format!("Handler '{name}' read-only")),
            HandlerError::Failed(m) => (590, m.clone()),
        }
    }

    /// Calls read (`write` false) or write handler `name` with `data` and replies.
    fn call(&mut self, i: usize, write: bool, name: &str, data: &str, cx: &mut Cx) {
        let path = match self.resolve(name, cx) {
            Ok(p) => p,
            Err((code, m)) => return self.conns[i].line(code, &m),
        };
        if write {
            if self.readonly {
                let r = cx.check_handler(&path, true);
                let c = &mut self.conns[i];
                return match r {
                    Ok(()) => c.line(530, &format!("Permission denied for '{name}'")),
                    Err(e) => {
                        let (code, m) = self.refusal(name, &e);
                        self.conns[i].line(code, &m)
                    }
                };
            }
            match cx.write_handler(&path, data) {
                Ok(()) => self.conns[i].line(200, &format!("Write handler '{name}' OK")),
                Err(HandlerError::Failed(m)) => {
                    self.conns[i].failure(520, &format!("Write handler '{name}' error"), &m)
                }
                Err(e) => {
                    let (code, m) = self.refusal(name, &e);
                    self.conns[i].line(code, &m)
                }
            }
        } else {
            // This element is busy serving the command: it answers its own handlers.
            let own = path
                .strip_prefix(cx.name())
                .and_then(|h| h.strip_prefix('.'))
                .filter(|_| data.is_empty())
                .and_then(|h| {
                    let table = self.handler_table();
                    table.read(self, h, "").and_then(Result::ok)
                });
            // Values go out as the handler wrote them, as Click's ControlSocket sends them
            // (a count of 2 is `DATA 1`).
            let r = match own {
                Some(v) => Ok(v),
                None if data.is_empty() => cx.read_handler_verbatim(&path, None),
                None => cx.read_handler_verbatim(&path, Some(data)),
            };
            let c = &mut self.conns[i];
            match r {
                Ok(v) => {
                    c.line(200, &format!("Read handler '{name}' OK"));
                    c.send(format!("DATA {}\r\n", v.len()).as_bytes());
                    c.send(v.as_bytes());
                }
                Err(HandlerError::Failed(m)) => {
                    c.failure(590, &format!("Read handler '{name}' error"), &m)
                }
                Err(e) => {
                    let (code, m) = self.refusal(name, &e);
                    self.conns[i].line(code, &m)
                }
            }
        }
    }

    /// Answers CHECKREAD / CHECKWRITE.
    fn check(&mut self, i: usize, name: &str, write: bool, cx: &mut Cx) {
        let path = match self.resolve(name, cx) {
            Ok(p) => p,
            Err((code, m)) => return self.conns[i].line(code, &m),
        };
        let (code, m) = match cx.check_handler(&path, write) {
            Ok(()) if write && self.readonly => (530, format!("Permission denied for '{name}'")),
            Ok(()) => {
                let kind = if write { "Write" } else { "Read" };
                (200, format!("{kind} handler '{name}' OK"))
            }
            Err(HandlerError::NotReadable(_) | HandlerError::NotWritable(_)) => {
                let what = if write { "writable" } else { "readable" };
                (511, format!("Handler '{name}' not {what}"))
            }
            Err(e) => self.refusal(name, &e),
        };
        self.conns[i].line(code, &m);
    }

    fn close_finished(&mut self, cx: &mut Cx) {
        let (verbose, name) = (self.verbose, cx.name().to_string());
        self.conns.retain(|c| {
            if c.closed {
                cx.remove_select(c.stream.fd());
                if verbose {
                    eprintln!("{name}: closed connection {}", c.stream.fd());
                }
            }
            !c.closed
        });
        if self.conns.is_empty() {
            self.conns.shrink_to_fit();
        }
    }
}

/// Finds the first line of `buf` at or after `from` that equals `term` (trailing spaces
/// ignored): `Ok((start of that line, index after it))`, or `Err(where to resume)`.
fn find_terminator(buf: &[u8], from: usize, term: &str) -> Result<(usize, usize), usize> {
    let mut start = from.min(buf.len());
    loop {
        let Some(off) = buf[start..].iter().position(|&b| b == b'\n' || b == b'\r') else {
            return Err(start);
        };
        let end = start + off;
        let mut next = end + 1;
        if buf[end] == b'\r' {
            match buf.get(end + 1) {
                Some(b'\n') => next += 1,
                // The LF of a CRLF may still be on its way.
                None => return Err(start),
                _ => {}
            }
        }
        if buf[start..end].trim_ascii_end() == term.as_bytes() {
            return Ok((start, next));
        }
        start = next;
    }
}

impl Element for ControlSocket {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let t: String = args.read_mp("TYPE")?;
        self.readonly = args.read("READONLY")?.unwrap_or(false);
        let proxy: Option<Word> = args.read("PROXY")?;
        self.verbose = args.read("VERBOSE")?.unwrap_or(false);
        self.retries = args.read("RETRIES")?.unwrap_or(0);
        self.retry_warnings = args.read("RETRY_WARNINGS")?.unwrap_or(true);
        self.localhost = args.read("LOCALHOST")?.unwrap_or(false);
        if let Some(Word(p)) = proxy {
            if cx.element_index(&p).is_none() {
                args.error(format!("PROXY: no element named '{p}'"));
                return Err(());
            }
            self.proxy = Some(p);
        }
        match t.to_ascii_uppercase().as_str() {
            "TCP" => {
                self.unix = false;
                match args.read_mp::<Word>("PORT") {
                    Ok(Word(w)) => match TcpPort::from_arg(&w) {
                        Ok(p) => self.port = p,
                        Err(_) => {
                            args.error("PORT requires TCP port");
                            return Err(());
                        }
                    },
                    Err(()) => return Err(()),
                }
            }
            "UNIX" => {
                self.unix = true;
                self.path = args.read_mp("FILENAME")?;
                if self.path.len() > MAX_PATH {
                    args.error("filename too long");
                    return Err(());
                }
            }
            _ => {
                args.error(format!("unknown socket type '{t}'"));
                return Err(());
            }
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.successor = cx.has_predecessor();
        if !self.try_open(cx)? {
            cx.schedule_after(RETRY_TIMER, Timestamp::from_secs_f64(1.0));
        }
        Ok(())
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        let Some(old) = old.as_any_mut().downcast_mut::<ControlSocket>() else {
            return;
        };
        if old.unix != self.unix || (self.unix && old.path != self.path) {
            return;
        }
        if self.listener.is_none() {
            if let Some(l) = old.listener.take() {
                cx.cancel_timer(RETRY_TIMER);
                self.listener = Some(l);
                self.listen_fd = old.listen_fd;
                self.port = old.port;
                cx.add_select(self.listen_fd);
            }
        }
        for c in old.conns.drain(..) {
            cx.add_select(c.stream.fd());
            self.conns.push(c);
        }
        if !self.conns.is_empty() {
            // Commands that arrived before the swap are answered by this configuration.
            cx.schedule_after(RESUME_TIMER, Timestamp::ZERO);
        }
    }

    fn run_timer(&mut self, id: usize, cx: &mut Cx) {
        if id == RESUME_TIMER {
            for i in 0..self.conns.len() {
                self.process(i, cx);
                self.serve(i, cx);
            }
            self.close_finished(cx);
            return;
        }
        match self.try_open(cx) {
            Ok(true) => {}
            Ok(false) => cx.schedule_after(RETRY_TIMER, Timestamp::from_secs_f64(1.0)),
            Err(e) => {
                eprintln!("{}: {e}", cx.name());
                cx.request_driver_stop();
            }
        }
    }

    fn selected(&mut self, fd: i32, cx: &mut Cx) {
        if fd == self.listen_fd {
            self.accept(cx);
        } else if let Some(i) = self.conns.iter().position(|c| c.stream.fd() == fd) {
            self.serve(i, cx);
        }
        self.close_finished(cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("port", |e| {
                if e.unix {
                    String::new()
                } else {
                    e.port.port.to_string()
                }
            })
            .read("filename", |e| {
                if e.unix {
                    e.path.clone()
                } else {
                    String::new()
                }
            })
            .read("connections", |e| e.conns.len())
            .read("count", |e| e.count)
            .into()
    }

    fn cleanup(&mut self, cx: &mut Cx) {
        for c in self.conns.drain(..) {
            cx.remove_select(c.stream.fd());
        }
        if self.listener.take().is_some() {
            cx.remove_select(self.listen_fd);
            if self.unix {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ControlSocket",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("control_socket.rs"),
    make: || Box::new(ControlSocket::default()),
};
