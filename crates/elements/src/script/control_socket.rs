//! ControlSocket — lets other programs call handlers over a TCP or Unix socket
//!
//! Synopsis: `ControlSocket(TCP, PORT [, READONLY, VERBOSE, LOCALHOST, RETRIES])` or
//! `ControlSocket(UNIX, FILENAME [, keywords])`
//!
//! Ports: none. Listens on TCP port PORT (on 127.0.0.1 with `LOCALHOST true`, the default
//! here, else on every address; PORT 0 picks a free port, see the `port` handler) or on the
//! Unix-domain socket FILENAME (an old socket file there is replaced; it is removed at
//! cleanup). Sockets are non-blocking and served from the router's event loop, between tasks.
//!
//! Protocol (Click's ControlSocket 1.3): on connection the server sends
//! `Click::ControlSocket/1.3`. Commands are lines (ended by CR, LF or CRLF) of words; every
//! reply line ends with CRLF and starts with a three-digit code:
//! - `READ HANDLER [PARAMS]` → `200 Read handler 'HANDLER' OK`, then `DATA N` and N bytes of
//!   value. PARAMS go to handlers that take a parameter (e.g. a route table's `lookup ADDR`).
//! - `WRITE HANDLER [VALUE...]` → `200 Write handler 'HANDLER' OK`.
//! - `WRITEDATA HANDLER N` followed by N bytes: writes those bytes.
//! - `CHECKREAD HANDLER`, `CHECKWRITE HANDLER` → 200 if the handler exists and allows it.
//! - `LLRPC ...` → 501; `QUIT` → `200 Goodbye!` and the connection closes.
//!
//! HANDLER is `ELEMENT.NAME` or a router handler (`list`, `config`, `stop`, ...). Error codes:
//! 500 syntax error, 501 unimplemented command, 510 no such element, 511 no such handler (or
//! not readable / writable), 520 handler error (the message follows), 530 permission denied
//! (writes on a READONLY socket).
//!
//! Arguments:
//! - `TYPE` (`TCP` or `UNIX`, mandatory), then `PORT` (integer) or `FILENAME` (string).
//! - `READONLY` (boolean, default false): refuse writes.
//! - `VERBOSE` (boolean, default false): log connections and commands on standard error.
//! - `LOCALHOST` (boolean, default true): TCP listens on 127.0.0.1 only.
//! - `RETRIES` (integer, default 0): retry a failed bind this many times, a second apart.
//! - `PROXY` is not supported (an error).
//!
//! Handlers: `port` (r, the bound TCP port), `connections` (r, open connections), `count`
//! (r, commands served).
//!
//! Example: `ControlSocket(TCP, 7777)` then `printf 'READ c.count\nQUIT\n' | nc 127.0.0.1 7777`

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::{Duration, Instant};

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, HandlerError, InitCx};
use sluice_lang::args::Args;

const GREETING: &str = "Click::ControlSocket/1.3";
/// Longest command line accepted.
const MAX_LINE: usize = 64 * 1024;
/// Largest WRITEDATA payload accepted.
const MAX_DATA: usize = 16 * 1024 * 1024;

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn fd(&self) -> i32 {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }

    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
}

struct Conn {
    stream: Stream,
    inbuf: Vec<u8>,
    /// A WRITEDATA waiting for its bytes: (handler, length).
    data: Option<(String, usize)>,
    closed: bool,
}

impl Conn {
    /// Sends everything, waiting briefly when the peer's buffer is full.
    fn send(&mut self, bytes: &[u8]) {
        let mut off = 0;
        let deadline = Instant::now() + Duration::from_secs(5);
        while off < bytes.len() && !self.closed {
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

    fn line(&mut self, code: u16, msg: &str) {
        self.send(format!("{code} {msg}\r\n").as_bytes());
    }
}

/// The ControlSocket element.
pub struct ControlSocket {
    unix: bool,
    port: u16,
    path: String,
    readonly: bool,
    verbose: bool,
    localhost: bool,
    retries: u32,
    listener: Option<Listener>,
    listen_fd: i32,
    conns: Vec<Conn>,
    count: u64,
}

impl Default for ControlSocket {
    fn default() -> ControlSocket {
        ControlSocket {
            unix: false,
            port: 0,
            path: String::new(),
            readonly: false,
            verbose: false,
            localhost: true,
            retries: 0,
            listener: None,
            listen_fd: -1,
            conns: Vec::new(),
            count: 0,
        }
    }
}

/// Maps a handler failure onto a ControlSocket reply.
fn error_reply(e: &HandlerError, write: bool, h: &str) -> (u16, String) {
    match e {
        HandlerError::NoElement(el) => (510, format!("No element named '{el}'")),
        HandlerError::NoHandler(_)
        | HandlerError::NotReadable(_)
        | HandlerError::NotWritable(_) => {
            let kind = if write { "write" } else { "read" };
            (511, format!("No {kind} handler named '{h}'"))
        }
        HandlerError::Failed(m) => {
            let kind = if write { "Write" } else { "Read" };
            (520, format!("{kind} handler '{h}' error: {}", m.trim_end()))
        }
    }
}

impl ControlSocket {
    fn bind(&mut self) -> Result<(), String> {
        let mut tries = 0;
        loop {
            let r = if self.unix {
                let _ = std::fs::remove_file(&self.path);
                UnixListener::bind(&self.path)
                    .map(Listener::Unix)
                    .map_err(|e| format!("{}: {}", self.path, e))
            } else {
                let host = if self.localhost {
                    "127.0.0.1"
                } else {
                    "0.0.0.0"
                };
                TcpListener::bind((host, self.port))
                    .map(Listener::Tcp)
                    .map_err(|e| format!("bind {}:{}: {}", host, self.port, e))
            };
            match r {
                Ok(l) => {
                    let (nb, fd) = match &l {
                        Listener::Tcp(t) => {
                            if let Ok(a) = t.local_addr() {
                                self.port = a.port();
                            }
                            (t.set_nonblocking(true), t.as_raw_fd())
                        }
                        Listener::Unix(u) => (u.set_nonblocking(true), u.as_raw_fd()),
                    };
                    nb.map_err(|e| e.to_string())?;
                    self.listen_fd = fd;
                    self.listener = Some(l);
                    return Ok(());
                }
                Err(e) if tries >= self.retries => return Err(e),
                Err(_) => {
                    tries += 1;
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        }
    }

    fn accept(&mut self, cx: &mut Cx) {
        loop {
            let s = match self.listener.as_ref() {
                Some(Listener::Tcp(t)) => t.accept().map(|(s, _)| {
                    let _ = s.set_nodelay(true);
                    (s.set_nonblocking(true), Stream::Tcp(s))
                }),
                Some(Listener::Unix(u)) => u
                    .accept()
                    .map(|(s, _)| (s.set_nonblocking(true), Stream::Unix(s))),
                None => return,
            };
            match s {
                Ok((Ok(()), stream)) => {
                    let fd = stream.fd();
                    if self.verbose {
                        eprintln!("{}: new connection (fd {})", cx.name(), fd);
                    }
                    let mut c = Conn {
                        stream,
                        inbuf: Vec::new(),
                        data: None,
                        closed: false,
                    };
                    c.send(format!("{GREETING}\r\n").as_bytes());
                    if !c.closed {
                        cx.add_select(fd);
                        self.conns.push(c);
                    }
                }
                Ok((Err(_), _)) => continue,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
    }

    fn serve(&mut self, i: usize, cx: &mut Cx) {
        let mut buf = [0u8; 4096];
        loop {
            let c = &mut self.conns[i];
            match c.stream.read(&mut buf) {
                Ok(0) => {
                    c.closed = true;
                    break;
                }
                Ok(n) => c.inbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => {
                    c.closed = true;
                    break;
                }
            }
        }
        self.process(i, cx);
    }

    /// Executes every complete command in connection `i`'s input.
    fn process(&mut self, i: usize, cx: &mut Cx) {
        loop {
            let c = &mut self.conns[i];
            if let Some((h, n)) = c.data.clone() {
                if c.inbuf.len() < n {
                    return;
                }
                let bytes: Vec<u8> = c.inbuf.drain(..n).collect();
                c.data = None;
                let v = String::from_utf8_lossy(&bytes).into_owned();
                self.write(i, &h, &v, cx);
                continue;
            }
            let Some(end) = c.inbuf.iter().position(|&b| b == b'\n' || b == b'\r') else {
                if c.inbuf.len() > MAX_LINE {
                    c.line(500, "Line too long");
                    c.closed = true;
                }
                return;
            };
            let line = String::from_utf8_lossy(&c.inbuf[..end]).into_owned();
            let mut skip = end + 1;
            if c.inbuf[end] == b'\r' && c.inbuf.get(end + 1) == Some(&b'\n') {
                skip += 1;
            }
            c.inbuf.drain(..skip);
            if c.closed {
                return;
            }
            self.command(i, line.trim(), cx);
            if self.conns[i].closed {
                return;
            }
        }
    }

    fn command(&mut self, i: usize, line: &str, cx: &mut Cx) {
        if line.is_empty() {
            return;
        }
        self.count += 1;
        if self.verbose {
            eprintln!("{}: command: {}", cx.name(), line);
        }
        let mut words = line.split_whitespace();
        let cmd = words.next().unwrap_or("").to_ascii_uppercase();
        let args: Vec<&str> = words.collect();
        let c = &mut self.conns[i];
        match cmd.as_str() {
            "READ" => {
                if args.is_empty() {
                    return c.line(500, "Wrong number of arguments");
                }
                let h = args[0];
                let r = if args.len() > 1 {
                    cx.read_handler_param(h, &args[1..].join(" "))
                } else {
                    cx.read_handler(h)
                };
                match r {
                    Ok(v) => {
                        c.line(200, &format!("Read handler '{h}' OK"));
                        c.send(format!("DATA {}\r\n", v.len()).as_bytes());
                        c.send(v.as_bytes());
                    }
                    Err(e) => {
                        let (code, m) = error_reply(&e, false, h);
                        c.line(code, &m);
                    }
                }
            }
            "WRITE" => {
                if args.is_empty() {
                    return c.line(500, "Wrong number of arguments");
                }
                let h = args[0].to_string();
                let v = args[1..].join(" ");
                self.write(i, &h, &v, cx);
            }
            "WRITEDATA" => {
                if args.len() != 2 {
                    return c.line(500, "Wrong number of arguments");
                }
                match args[1].parse::<usize>() {
                    Ok(n) if n <= MAX_DATA => c.data = Some((args[0].to_string(), n)),
                    Ok(_) => c.line(521, "Data too big"),
                    Err(_) => c.line(500, "Syntax error: expected data length"),
                }
            }
            "CHECKREAD" | "CHECKWRITE" => {
                if args.len() != 1 {
                    return c.line(500, "Wrong number of arguments");
                }
                let write = cmd == "CHECKWRITE";
                let h = args[0];
                if write && self.readonly {
                    return c.line(530, "Permission denied");
                }
                let (code, m) = check_handler(cx, h, write);
                self.conns[i].line(code, &m);
            }
            "LLRPC" => c.line(501, "Unimplemented command 'LLRPC'"),
            "QUIT" => {
                c.line(200, "Goodbye!");
                c.closed = true;
            }
            _ => c.line(501, &format!("Unimplemented command '{cmd}'")),
        }
    }

    fn write(&mut self, i: usize, h: &str, v: &str, cx: &mut Cx) {
        if self.readonly {
            return self.conns[i].line(530, "Permission denied");
        }
        let r = cx.write_handler(h, v);
        let c = &mut self.conns[i];
        match r {
            Ok(()) => c.line(200, &format!("Write handler '{h}' OK")),
            Err(e) => {
                let (code, m) = error_reply(&e, true, h);
                c.line(code, &m);
            }
        }
    }

    fn close_finished(&mut self, cx: &mut Cx) {
        let verbose = self.verbose;
        self.conns.retain(|c| {
            if c.closed {
                cx.remove_select(c.stream.fd());
                if verbose {
                    eprintln!("{}: connection closed (fd {})", cx.name(), c.stream.fd());
                }
            }
            !c.closed
        });
    }
}

/// Answers CHECKREAD / CHECKWRITE: whether `path` exists and allows reading or writing.
fn check_handler(cx: &Cx, path: &str, write: bool) -> (u16, String) {
    match cx.check_handler(path, write) {
        Ok(()) => {
            let kind = if write { "Write" } else { "Read" };
            (200, format!("{kind} handler '{path}' OK"))
        }
        Err(e) => error_reply(&e, write, path),
    }
}

impl Element for ControlSocket {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let t: String = args.read_mp("TYPE")?;
        match t.to_ascii_uppercase().as_str() {
            "TCP" => {
                self.unix = false;
                self.port = args.read_mp("PORT")?;
            }
            "UNIX" => {
                self.unix = true;
                self.path = args.read_mp("FILENAME")?;
            }
            _ => {
                args.error(format!("TYPE: expected TCP or UNIX, got '{t}'"));
                return Err(());
            }
        }
        self.readonly = args.read("READONLY")?.unwrap_or(false);
        self.verbose = args.read("VERBOSE")?.unwrap_or(false);
        self.localhost = args.read("LOCALHOST")?.unwrap_or(true);
        self.retries = args.read("RETRIES")?.unwrap_or(0);
        let _: Option<bool> = args.read("RETRY_WARNINGS")?;
        if args.read::<String>("PROXY")?.is_some() {
            args.error("PROXY: not supported");
            return Err(());
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.bind()?;
        cx.add_select(self.listen_fd);
        Ok(())
    }

    fn selected(&mut self, fd: i32, cx: &mut Cx) {
        if fd == self.listen_fd {
            self.accept(cx);
        } else if let Some(i) = self.conns.iter().position(|c| c.stream.fd() == fd) {
            self.serve(i, cx);
        }
        self.close_finished(cx);
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("port"),
                Handler::r("connections"),
                Handler::r("count"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "port" => self.port.to_string(),
            "connections" => self.conns.len().to_string(),
            "count" => self.count.to_string(),
            _ => return None,
        })
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
