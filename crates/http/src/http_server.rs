//! HTTPServer — serves the router's HTTP/JSON API, Prometheus metrics and live web view
//!
//! Synopsis: `HTTPServer([PORT, keywords ADDRESS, TOKEN_FILE, READ_ONLY, VERBOSE])`
//!
//! Ports: none. Listens for HTTP on TCP address ADDRESS, port PORT (127.0.0.1:7780 by
//! default: loopback only). HTTP is parsed by tiny_http on the server's own threads; each
//! API request is handed to this element, which answers it on the router's thread, between
//! tasks, with handler calls, as ControlSocket does. At most 64 requests wait for the router
//! (more are answered 503 at once); one it has not answered in 30 seconds gets 504. Request
//! bodies may be up to 16 MiB (larger: 413).
//!
//! The API (JSON; errors are `{"error":"..."}` with an HTTP status):
//! - `GET /api/graph`: `{"elements":[{"index","name","class","config","inputs","outputs",
//!   "handlers":[{"name","read","write"}]}],"connections":[{"from","from_port","to",
//!   "to_port"}]}`.
//! - `GET /api/stats`: `{"time":SECONDS,"counting":BOOL,"elements":{"NAME":{"in_packets",
//!   "in_bytes","out_packets","out_bytes","drops"}}}`, cumulative since the router started.
//!   Packets and bytes are counted when the router counts them per element (the `--http`
//!   option turns that on; `counting` says whether it does); drops come from the router's
//!   `drops` handler.
//! - `GET /api/handlers/ELEMENT/HANDLER` (with `?param=P` for a handler that takes a
//!   parameter) → `{"element","handler","value"}`; `POST` or `PUT` to the same path writes
//!   the request body → `{"ok":true}`. `GET` and `POST /api/router/HANDLER` do the same
//!   with the router's handlers (`list`, `flatconfig`, `drops`, `tasks`, `stop`, ...).
//! - `POST /api/hotconfig` with a configuration as body: hot swap (the router's `hotconfig`
//!   handler, there when sluice runs with `-R`; 409 otherwise). A configuration that does
//!   not build is answered 400 with its errors and the running one stays. The HTTPServer of
//!   the same name in the new configuration takes over the socket and the waiting requests.
//! - `GET /api/routes/ELEMENT`: a route lookup element's routes as a list of strings
//!   (`"198.18.5.0/24 198.18.0.2 1"`, `-` for no gateway); `POST` with
//!   `{"add":[ROUTE...],"remove":[PREFIX...],"set":[ROUTE...]}` changes them through its
//!   `ctrl` handler, all or none (removals first, then replacements, then additions).
//! - `GET /metrics`: Prometheus text format 0.0.4: `sluice_element_packets_total` and
//!   `sluice_element_bytes_total` `{element,class,direction}`, `sluice_drops_total{element,
//!   reason}`, `sluice_queue_length`, `sluice_queue_capacity`, `sluice_queue_drops_total`
//!   `{element}`, `sluice_thread_busy_cycles_total{thread}`,
//!   `sluice_route_table_routes{element}`, `sluice_elements`, `sluice_build_info{version}`.
//! - Any other `GET`: the live web view's files (`/` is its page).
//!
//! Status codes: 401 (no or wrong token), 403 (a write to a read-only server), 404 (no such
//! element, handler or endpoint), 405 (a read of a write-only handler, a write of a
//! read-only one), 400 (a write handler refused the value; a bad body), 500 (a read handler
//! failed), 503 (too many requests waiting, or the router stopped).
//!
//! Arguments:
//! - `PORT` (TCP port, default 7780): 0 picks a free port (see the `port` handler).
//! - `ADDRESS` (IPv4 or IPv6 address, default 127.0.0.1): where to listen; `0.0.0.0` or `::`
//!   listens on every address. Anyone who reaches the port may read every handler and,
//!   unless READ_ONLY, write them: give TOKEN_FILE before listening beyond loopback.
//! - `TOKEN_FILE` (file name): the file holds a bearer token (surrounding white space
//!   ignored); every API and metrics request must then carry `Authorization: Bearer TOKEN`
//!   (401 otherwise). The web view's files are served without it.
//! - `READ_ONLY` (boolean, default false): every handler write, hot swap and route change
//!   is refused with 403.
//! - `VERBOSE` (boolean, default false): report each request (method, path, status) on
//!   standard error. Requests are also logged at debug level, failures at warning level.
//!
//! The command-line option `--http [ADDR:]PORT` adds an HTTPServer named
//! `sluice@@HTTPServer` (with `--http-token-file FILE` and `--http-read-only`) and makes the
//! router count packets per element.
//!
//! Handlers: `port` (r, the bound TCP port), `address` (r, the listening address), `url`
//! (r, `http://ADDRESS:PORT/`), `requests` (r, API requests answered), `read_only` (r).
//!
//! Example: `HTTPServer(7780)`, then `curl http://127.0.0.1:7780/api/handlers/c/count`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};

use sluice_core::{ConfigCx, Cx, Element, ElementClass, HandlerError, Handlers, InitCx, Table};
use sluice_lang::args::{Args, FromArg};

use crate::api::{Api, Control};
use crate::service::{Access, Service};

/// The port listened on by default.
pub const DEFAULT_PORT: u16 = 7780;

/// An ADDRESS argument: an IPv4 or IPv6 address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Address(IpAddr);

impl FromArg for Address {
    fn from_arg(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let t = t
            .strip_prefix('[')
            .and_then(|a| a.strip_suffix(']'))
            .unwrap_or(t);
        t.parse()
            .map(Address)
            .map_err(|_| "expected IP address".into())
    }
}

/// The HTTPServer element.
pub struct HttpServer {
    port: u16,
    address: IpAddr,
    token_file: Option<String>,
    token: Option<String>,
    read_only: bool,
    verbose: bool,
    /// The server, once listening (or taken over from a predecessor).
    service: Option<Service>,
    /// The port bound (PORT, or the one picked for 0).
    bound: u16,
    api: Api,
    requests: u64,
    /// This element replaces an HTTPServer of a running configuration (hot swap) and takes
    /// its socket.
    successor: bool,
}

impl Default for HttpServer {
    fn default() -> HttpServer {
        HttpServer {
            port: DEFAULT_PORT,
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            token_file: None,
            token: None,
            read_only: false,
            verbose: false,
            service: None,
            bound: 0,
            api: Api::default(),
            requests: 0,
            successor: false,
        }
    }
}

impl HttpServer {
    /// What the control threads check and report.
    fn access(&self, name: &str) -> Access {
        Access {
            token: self.token.clone(),
            verbose: self.verbose,
            name: name.to_string(),
        }
    }

    /// Starts listening; `Err` says where and why not.
    fn open(&mut self, cx: &mut Cx) -> Result<(), String> {
        let at = SocketAddr::new(self.address, self.port);
        let listener = TcpListener::bind(at).map_err(|e| format!("bind {at}: {}", strerror(&e)))?;
        let service = Service::start(listener, self.access(cx.name()))
            .map_err(|e| format!("HTTP server on {at}: {}", strerror(&e)))?;
        self.bound = service.addr().port();
        cx.add_select(service.fd());
        if self.verbose {
            eprintln!("{}: listening on http://{}/", cx.name(), service.addr());
        }
        self.service = Some(service);
        Ok(())
    }

    /// The values of this element's own handlers: it is busy while it answers, so the router
    /// cannot ask it.
    fn own_values(&mut self) -> Vec<(&'static str, String)> {
        let table = self.handler_table();
        let names: Vec<&'static str> = table
            .specs()
            .filter(|h| h.read && !h.param)
            .map(|h| h.name)
            .collect();
        names
            .into_iter()
            .filter_map(|n| Some((n, table.read(self, n, "")?.ok()?)))
            .collect()
    }

    /// `http://ADDRESS:PORT/`.
    fn url(&self) -> String {
        format!("http://{}/", SocketAddr::new(self.address, self.bound))
    }
}

/// The message of an OS error, without Rust's "(os error N)".
fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The router as the API sees it from this element: its handlers, with this element's own
/// answered from `own`.
struct Here<'a, 'r> {
    cx: &'a mut Cx<'r>,
    own: &'a [(&'static str, String)],
}

impl Control for Here<'_, '_> {
    fn read(&mut self, path: &str, param: Option<&str>) -> Result<String, HandlerError> {
        let mine = path
            .strip_prefix(self.cx.name())
            .and_then(|h| h.strip_prefix('.'))
            .filter(|_| param.is_none())
            .and_then(|h| self.own.iter().find(|(n, _)| *n == h));
        match mine {
            Some((_, v)) => Ok(v.clone()),
            None => self.cx.read_handler_verbatim(path, param),
        }
    }

    fn write(&mut self, path: &str, value: &str) -> Result<(), HandlerError> {
        self.cx.write_handler(path, value)
    }

    fn check(&mut self, path: &str, write: bool) -> Result<(), HandlerError> {
        self.cx.check_handler(path, write)
    }

    fn now(&self) -> f64 {
        self.cx.now().as_secs_f64()
    }
}

impl Element for HttpServer {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(port) = args.read_p("PORT")? {
            self.port = port;
        }
        if let Some(Address(a)) = args.read("ADDRESS")? {
            self.address = a;
        }
        self.token_file = args.read("TOKEN_FILE")?;
        args.read_into("READ_ONLY", &mut self.read_only)?;
        args.read_into("VERBOSE", &mut self.verbose)?;
        self.api = Api::new(self.read_only);
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if let Some(f) = &self.token_file {
            let text = std::fs::read_to_string(f)
                .map_err(|e| format!("TOKEN_FILE {f}: {}", strerror(&e)))?;
            let token = text.trim();
            if token.is_empty() || token.contains(char::is_whitespace) {
                return Err(format!(
                    "TOKEN_FILE {f}: expected one word of token, not {} bytes",
                    text.len()
                ));
            }
            self.token = Some(token.to_string());
        }
        self.successor = cx.has_predecessor();
        if self.successor {
            // The predecessor's socket is taken over in `take_state`.
            return Ok(());
        }
        self.open(cx)
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        let Some(old) = old.as_any_mut().downcast_mut::<HttpServer>() else {
            return;
        };
        if (old.address, old.port) == (self.address, self.port) {
            if let Some(s) = old.service.take() {
                s.set_access(self.access(cx.name()));
                cx.add_select(s.fd());
                // Requests the old configuration left are answered by this one.
                s.wake();
                self.bound = old.bound;
                self.service = Some(s);
            }
        }
        if self.service.is_none() {
            if let Err(e) = self.open(cx) {
                eprintln!("{}: {e}", cx.name());
                tracing::warn!(element = %cx.name(), error = %e, "HTTP server not listening");
            }
        }
    }

    fn selected(&mut self, fd: i32, cx: &mut Cx) {
        if self.service.as_ref().map(Service::fd) != Some(fd) {
            return;
        }
        let own = self.own_values();
        let Some(service) = &self.service else {
            return;
        };
        service.drain_wake();
        // Every request queued when woken (at most the queue's bound), then the next wake.
        for _ in 0..crate::service::QUEUE {
            // After a hot swap is decided, the next requests are the new configuration's.
            if cx.swap_pending() {
                return;
            }
            let Some(job) = service.next_job() else {
                return;
            };
            self.requests += 1;
            let reply = self.api.answer(&job.call, &mut Here { cx, own: &own });
            job.answer(reply);
        }
        service.wake();
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("port", |e| e.bound)
            .read("address", |e| e.address.to_string())
            .read("url", |e| e.url())
            .read("requests", |e| e.requests)
            .read("read_only", |e| e.read_only)
            .into()
    }

    fn cleanup(&mut self, cx: &mut Cx) {
        if let Some(s) = self.service.take() {
            cx.remove_select(s.fd());
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "HTTPServer",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("http_server.rs"),
    make: || Box::new(HttpServer::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(
            Address::from_arg("127.0.0.1"),
            Ok(Address(IpAddr::V4(Ipv4Addr::LOCALHOST)))
        );
        assert_eq!(
            Address::from_arg("[::1]").unwrap().0,
            "::1".parse::<IpAddr>().unwrap()
        );
        assert!(Address::from_arg("localhost").is_err());
    }
}
