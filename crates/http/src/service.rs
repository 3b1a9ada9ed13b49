//! The control threads: tiny_http's server and the workers that take its requests, check
//! the bearer token, serve the web view's files, and hand each API request to the
//! HTTPServer element on the router's thread, waiting for its answer.
//!
//! A request reaches the router through a bounded queue and a wake-up socket that the
//! router's event loop watches; the answer comes back on a channel of its own. A full queue
//! is answered 503 at once, and a router that does not answer in [`REPLY_WAIT`] 504: the
//! router's thread never waits for a client, and a client never waits forever.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::api::{self, Call, Method, Reply};
use crate::web;

/// Threads taking requests from the server.
const WORKERS: usize = 4;
/// API requests that may wait for the router.
pub const QUEUE: usize = 64;
/// Largest request body accepted (a configuration, a handler value).
pub const MAX_BODY: usize = 16 * 1024 * 1024;
/// How long a request waits for the router's answer.
pub const REPLY_WAIT: Duration = Duration::from_secs(30);
/// How often idle workers look whether the service has stopped.
const POLL: Duration = Duration::from_millis(200);
/// How long a stopping service waits for the answers being sent.
const LINGER: Duration = Duration::from_secs(1);

/// One API request waiting for the router, and where its answer goes.
pub struct Job {
    /// The request.
    pub call: Call,
    reply: SyncSender<Reply>,
}

impl Job {
    /// Sends the answer to the waiting client.
    pub fn answer(self, reply: Reply) {
        let _ = self.reply.try_send(reply);
    }
}

/// What the workers check and report; a hot swap may change it.
#[derive(Clone, Debug, Default)]
pub struct Access {
    /// The bearer token every API request must carry.
    pub token: Option<String>,
    /// Report each request on standard error.
    pub verbose: bool,
    /// The element's name, for messages.
    pub name: String,
}

/// What the workers share with the element.
struct Shared {
    server: tiny_http::Server,
    jobs: SyncSender<Job>,
    wake: UnixStream,
    access: Mutex<Access>,
    stop: AtomicBool,
    /// Requests being answered.
    busy: AtomicUsize,
}

/// A running server: its workers, the queue of requests for the router and the socket that
/// wakes the router's event loop. Dropping it answers the requests still queued with 503,
/// gives the answers being sent up to [`LINGER`] to go out (the last one may be the `stop`
/// that ends the process), stops the workers and closes the listening socket.
pub struct Service {
    shared: Arc<Shared>,
    jobs: Receiver<Job>,
    woken: UnixStream,
    addr: SocketAddr,
}

impl Service {
    /// Serves HTTP on `listener` with `WORKERS` threads.
    pub fn start(listener: TcpListener, access: Access) -> std::io::Result<Service> {
        let addr = listener.local_addr()?;
        let server = tiny_http::Server::from_listener(listener, None)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let (woken, wake) = UnixStream::pair()?;
        woken.set_nonblocking(true)?;
        wake.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            server,
            jobs: tx,
            wake,
            access: Mutex::new(access),
            stop: AtomicBool::new(false),
            busy: AtomicUsize::new(0),
        });
        let service = Service {
            shared,
            jobs: rx,
            woken,
            addr,
        };
        for i in 0..WORKERS {
            let shared = service.shared.clone();
            std::thread::Builder::new()
                .name(format!("http-{i}"))
                .spawn(move || work(&shared))?;
        }
        Ok(service)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The descriptor the router watches: readable when requests wait.
    pub fn fd(&self) -> i32 {
        self.woken.as_raw_fd()
    }

    /// Replaces the token and reporting settings.
    pub fn set_access(&self, access: Access) {
        *lock(&self.shared.access) = access;
    }

    /// Empties the wake-up socket.
    pub fn drain_wake(&self) {
        let mut buf = [0u8; 256];
        while matches!((&self.woken).read(&mut buf), Ok(n) if n > 0) {}
    }

    /// Makes the wake-up socket readable (requests left for a new configuration).
    pub fn wake(&self) {
        let _ = (&self.shared.wake).write(&[1]);
    }

    /// The next API request waiting, if any.
    pub fn next_job(&self) -> Option<Job> {
        self.jobs.try_recv().ok()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        while let Some(job) = self.next_job() {
            job.answer(Reply::error(503, "the router has stopped"));
        }
        let deadline = Instant::now() + LINGER;
        while self.shared.busy.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// `m`'s value, also after a thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A worker: serves requests until the service stops.
fn work(shared: &Shared) {
    while !shared.stop.load(Ordering::Relaxed) {
        match shared.server.recv_timeout(POLL) {
            Ok(Some(rq)) => serve(shared, rq),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "HTTP server stopped accepting connections");
                break;
            }
        }
    }
}

/// Answers one request.
fn serve(shared: &Shared, mut rq: tiny_http::Request) {
    shared.busy.fetch_add(1, Ordering::AcqRel);
    let started = Instant::now();
    let access = lock(&shared.access).clone();
    let method = rq.method().to_string();
    let url = rq.url().to_string();
    let reply = answer(shared, &access, &mut rq);
    let status = reply.status;
    let micros = started.elapsed().as_micros() as u64;
    tracing::debug!(element = %access.name, %method, %url, status, micros, "HTTP request");
    if status >= 500 {
        let error = reply.error_message().unwrap_or_default();
        tracing::warn!(element = %access.name, %method, %url, status, %error, "HTTP request failed");
    }
    if access.verbose {
        eprintln!("{}: {method} {url} {status}", access.name);
    }
    let mut response = tiny_http::Response::from_data(reply.body).with_status_code(status);
    if let Ok(h) = tiny_http::Header::from_bytes("Content-Type", reply.content_type) {
        response.add_header(h);
    }
    if status == 401 {
        if let Ok(h) = tiny_http::Header::from_bytes("WWW-Authenticate", "Bearer") {
            response.add_header(h);
        }
    }
    if let Err(e) = rq.respond(response) {
        tracing::debug!(element = %access.name, %url, error = %e, "HTTP answer not delivered");
    }
    shared.busy.fetch_sub(1, Ordering::AcqRel);
}

/// The answer to `rq`: a web view file, a refusal, or the router's answer.
fn answer(shared: &Shared, access: &Access, rq: &mut tiny_http::Request) -> Reply {
    let url = rq.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let method = match rq.method() {
        tiny_http::Method::Get | tiny_http::Method::Head => Method::Get,
        tiny_http::Method::Post | tiny_http::Method::Put => Method::Post,
        m => return Reply::error(405, format!("method {m} is not served")),
    };
    if !api::is_api(path) {
        if method != Method::Get {
            return Reply::error(405, format!("{path} is read with GET"));
        }
        return match web::asset(path) {
            Some((content_type, bytes)) => Reply {
                status: 200,
                content_type,
                body: bytes.into_owned(),
            },
            None => Reply::error(404, format!("no file '{path}'")),
        };
    }
    if let Some(token) = &access.token {
        if !authorized(rq, token) {
            return Reply::error(
                401,
                "missing or wrong bearer token (Authorization: Bearer TOKEN)",
            );
        }
    }
    let body = match method {
        Method::Get => String::new(),
        Method::Post => match read_body(rq) {
            Ok(b) => b,
            Err(r) => return r,
        },
    };
    submit(
        shared,
        Call {
            method,
            path: path.to_string(),
            query: query.to_string(),
            body,
        },
    )
}

/// True if the request carries `Authorization: Bearer TOKEN`.
fn authorized(rq: &tiny_http::Request, token: &str) -> bool {
    rq.headers()
        .iter()
        .filter(|h| h.field.equiv("Authorization"))
        .filter_map(|h| h.value.as_str().trim().strip_prefix("Bearer "))
        .any(|t| same(t.trim().as_bytes(), token.as_bytes()))
}

/// Compares secrets in time independent of where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// The request body, at most [`MAX_BODY`] bytes, as configuration text.
fn read_body(rq: &mut tiny_http::Request) -> Result<String, Reply> {
    let too_large = || Reply::error(413, format!("request body over {MAX_BODY} bytes"));
    if rq.body_length().is_some_and(|n| n > MAX_BODY) {
        return Err(too_large());
    }
    let mut buf = Vec::new();
    rq.as_reader()
        .take(MAX_BODY as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Reply::error(400, format!("reading the request body: {e}")))?;
    if buf.len() > MAX_BODY {
        return Err(too_large());
    }
    Ok(sluice_lang::decode_config(&buf))
}

/// Hands `call` to the router and waits for its answer.
fn submit(shared: &Shared, call: Call) -> Reply {
    let (tx, rx) = mpsc::sync_channel(1);
    match shared.jobs.try_send(Job { call, reply: tx }) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => {
            return Reply::error(503, format!("{QUEUE} requests already wait for the router"))
        }
        Err(TrySendError::Disconnected(_)) => return Reply::error(503, "the router has stopped"),
    }
    match (&shared.wake).write(&[1]) {
        Ok(_) => {}
        // Full: the router has been woken already.
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Err(e) => return Reply::error(503, format!("cannot wake the router: {e}")),
    }
    match rx.recv_timeout(REPLY_WAIT) {
        Ok(r) => r,
        Err(RecvTimeoutError::Timeout) => Reply::error(
            504,
            format!("the router did not answer in {} s", REPLY_WAIT.as_secs()),
        ),
        Err(RecvTimeoutError::Disconnected) => {
            Reply::error(503, "the router stopped before answering")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same(b"s3cret", b"s3cret"));
        assert!(!same(b"s3cret", b"s3cre"));
        assert!(!same(b"s3cret", b"s3creT"));
        assert!(!same(b"", b"x"));
    }
}
