//! The JSON API and `/metrics`: what one request asks of the router, answered with handler
//! calls on the router's thread.
//!
//! Endpoints (every answer is JSON but `/metrics`; errors are `{"error":"..."}` with status
//! 400 (a refused value or body), 403 (a write to a read-only server), 404 (no such element,
//! handler or endpoint), 405 (a handler or endpoint that does not allow the method), 409
//! (hot swap without `-R`), 500 (a read handler's error)):
//! - `GET /api/graph`: the elements and connections ([`crate::graph::Graph`]).
//! - `GET /api/stats`: the time and each element's packet, byte and drop counters.
//! - `GET /api/handlers/ELEMENT/HANDLER[?param=P]`: `{"element","handler","value"}`;
//!   `POST` (or `PUT`) writes the request body: `{"ok":true}`.
//! - `GET /api/router/HANDLER`, `POST /api/router/HANDLER`: the router's handlers.
//! - `POST /api/hotconfig`: the body replaces the running configuration.
//! - `GET /api/routes/ELEMENT`: a route table's routes; `POST` with `{"add":[...],
//!   "remove":[...],"set":[...]}` changes them, all or none.
//! - `GET /metrics`: Prometheus metrics ([`crate::metrics`]).

use serde::{Deserialize, Serialize};
use sluice_core::HandlerError;

use crate::{graph, metrics};

/// What the API needs of a router: its handlers and its clock.
pub trait Control {
    /// Reads handler `path` (`ELEMENT.HANDLER`, or a router handler) as the handler wrote
    /// it, with parameter `param` if given.
    fn read(&mut self, path: &str, param: Option<&str>) -> Result<String, HandlerError>;
    /// Writes handler `path` with `value`.
    fn write(&mut self, path: &str, value: &str) -> Result<(), HandlerError>;
    /// Checks that handler `path` exists and can be read (`write` false) or written.
    fn check(&mut self, path: &str, write: bool) -> Result<(), HandlerError>;
    /// The router's clock, in seconds.
    fn now(&self) -> f64;
}

/// An API request's method: reads are `GET` (and `HEAD`), writes `POST` (and `PUT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// A read.
    Get,
    /// A write.
    Post,
}

/// One API request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// Read or write.
    pub method: Method,
    /// The path, percent-encoded as it came (`/api/handlers/c/count`).
    pub path: String,
    /// The query string after `?` (empty without one).
    pub query: String,
    /// The request body.
    pub body: String,
}

/// An answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// Content type of `body`.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

/// The content type of JSON answers.
pub const JSON: &str = "application/json";

impl Reply {
    /// A JSON answer.
    pub fn json(status: u16, value: &impl Serialize) -> Reply {
        Reply {
            status,
            content_type: JSON,
            body: serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec()),
        }
    }

    /// An error answer, `{"error": message}`.
    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        #[derive(Serialize)]
        struct E {
            error: String,
        }
        Reply::json(
            status,
            &E {
                error: message.into(),
            },
        )
    }

    /// `{"ok":true}`.
    pub fn ok() -> Reply {
        Reply::json(200, &serde_json::json!({ "ok": true }))
    }

    /// The error message of an error answer (for logs).
    pub fn error_message(&self) -> Option<String> {
        let v: serde_json::Value = serde_json::from_slice(&self.body).ok()?;
        Some(v.get("error")?.as_str()?.to_string())
    }
}

/// True if `path` is answered by the router (the API and the metrics); other paths are the
/// web view's files.
pub fn is_api(path: &str) -> bool {
    path == "/metrics" || path == "/api" || path.starts_with("/api/")
}

/// Percent-decodes a path segment or query value (`+` stays `+`; see [`query_value`]).
pub fn decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// The value of `key` in a query string (`a=1&param=x+y`), `+` meaning a space.
pub fn query_value(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (decode(&k.replace('+', " ")) == key).then(|| decode(&v.replace('+', " ")))
    })
}

/// The answer to a handler that failed or cannot be called this way. `write` tells whether
/// a write failed: its error is the client's value (400), a read's the router's (500).
fn handler_error(e: HandlerError, write: bool) -> Reply {
    let status = match &e {
        HandlerError::NoElement(_) | HandlerError::NoHandler(_) => 404,
        HandlerError::NotReadable(_) | HandlerError::NotWritable(_) => 405,
        HandlerError::Failed(_) if write => 400,
        HandlerError::Failed(_) => 500,
    };
    Reply::error(status, e.to_string())
}

/// The refusal of a write on a read-only server.
fn read_only_refusal() -> Reply {
    Reply::error(403, "this HTTP server is read-only")
}

/// The route changes of `POST /api/routes/ELEMENT`.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RouteChanges {
    #[serde(default)]
    add: Vec<String>,
    #[serde(default)]
    remove: Vec<String>,
    #[serde(default)]
    set: Vec<String>,
}

/// Answers API requests for one server.
#[derive(Debug, Default)]
pub struct Api {
    /// Refuse every write, hot swap and route change (403).
    pub read_only: bool,
}

impl Api {
    /// An API answering on a server that refuses writes if `read_only`.
    pub fn new(read_only: bool) -> Api {
        Api { read_only }
    }

    /// Answers `call` with the handlers of `ctl`.
    pub fn answer(&mut self, call: &Call, ctl: &mut dyn Control) -> Reply {
        let path = call.path.as_str();
        let get = call.method == Method::Get;
        if path == "/metrics" {
            if !get {
                return Reply::error(405, "/metrics is read with GET");
            }
            return match metrics::collect(ctl) {
                Ok(text) => Reply {
                    status: 200,
                    content_type: metrics::CONTENT_TYPE,
                    body: text.into_bytes(),
                },
                Err(e) => handler_error(e, false),
            };
        }
        let Some(rest) = path.strip_prefix("/api/") else {
            return Reply::error(404, format!("no endpoint '{path}'"));
        };
        let (endpoint, arg) = rest.split_once('/').unwrap_or((rest, ""));
        let wrong_method = || Reply::error(405, format!("{path} does not take {:?}", call.method));
        match (endpoint, arg.is_empty()) {
            ("graph", true) if get => json_or_error(graph::graph(ctl)),
            ("stats", true) if get => json_or_error(graph::stats(ctl)),
            ("graph" | "stats", true) => wrong_method(),
            ("hotconfig", true) if !get => self.hotconfig(&call.body, ctl),
            ("hotconfig", true) => wrong_method(),
            ("handlers", false) => match arg.rsplit_once('/') {
                Some((e, h)) if !e.is_empty() && !h.is_empty() => {
                    let (e, h) = (decode(e), decode(h));
                    self.handler(call, &format!("{e}.{h}"), &e, &h, ctl)
                }
                _ => Reply::error(404, "expected /api/handlers/ELEMENT/HANDLER"),
            },
            ("router", false) if !arg.contains('/') => {
                let h = decode(arg);
                self.handler(call, &h, "", &h, ctl)
            }
            ("routes", false) => self.routes(call, &decode(arg), ctl),
            _ => Reply::error(404, format!("no endpoint '{path}'")),
        }
    }

    /// Reads or writes handler `path` (of element `element`, empty for the router's).
    fn handler(
        &mut self,
        call: &Call,
        path: &str,
        element: &str,
        handler: &str,
        ctl: &mut dyn Control,
    ) -> Reply {
        if call.method == Method::Get {
            let param = query_value(&call.query, "param");
            return match ctl.read(path, param.as_deref()) {
                Ok(value) => Reply::json(
                    200,
                    &serde_json::json!({ "element": element, "handler": handler, "value": value }),
                ),
                Err(e) => handler_error(e, false),
            };
        }
        if path == "hotconfig" {
            return self.hotconfig(&call.body, ctl);
        }
        if self.read_only {
            return match ctl.check(path, true) {
                Ok(()) => read_only_refusal(),
                Err(e) => handler_error(e, true),
            };
        }
        match ctl.write(path, &call.body) {
            Ok(()) => Reply::ok(),
            Err(e) => handler_error(e, true),
        }
    }

    /// Installs configuration `text` (the router's `hotconfig` handler): 400 with the
    /// configuration's errors if it does not build, the running one staying.
    fn hotconfig(&mut self, text: &str, ctl: &mut dyn Control) -> Reply {
        if self.read_only {
            return read_only_refusal();
        }
        if ctl.check("hotconfig", true).is_err() {
            return Reply::error(
                409,
                "hot swap is off: run sluice with -R (--allow-reconfigure) to allow it",
            );
        }
        match ctl.write("hotconfig", text) {
            Ok(()) => Reply::ok(),
            Err(e) => handler_error(e, true),
        }
    }

    /// `GET` or `POST /api/routes/ELEMENT`.
    fn routes(&mut self, call: &Call, element: &str, ctl: &mut dyn Control) -> Reply {
        let class = match ctl.read(&format!("{element}.class"), None) {
            Ok(c) => c.trim().to_string(),
            Err(e) => return handler_error(e, false),
        };
        if !sluice_elements::lookup::CLASSES
            .iter()
            .any(|c| c.name == class)
        {
            return Reply::error(404, format!("'{element}' is no route table ({class})"));
        }
        if call.method == Method::Get {
            return match ctl.read(&format!("{element}.table"), None) {
                Ok(t) => Reply::json(200, &graph::parse_routes(&t)),
                Err(e) => handler_error(e, false),
            };
        }
        let changes: RouteChanges = match serde_json::from_str(&call.body) {
            Ok(c) => c,
            Err(e) => {
                return Reply::error(
                    400,
                    format!("expected {{\"add\":[...],\"remove\":[...],\"set\":[...]}}: {e}"),
                )
            }
        };
        let ctrl = format!("{element}.ctrl");
        if let Err(e) = ctl.check(&ctrl, true) {
            return match e {
                HandlerError::NoHandler(_) | HandlerError::NotWritable(_) => Reply::error(
                    405,
                    format!("the routes of '{element}' ({class}) cannot be changed"),
                ),
                e => handler_error(e, true),
            };
        }
        if self.read_only {
            return read_only_refusal();
        }
        let mut lines = String::new();
        for (verb, items) in [
            ("remove", &changes.remove),
            ("set", &changes.set),
            ("add", &changes.add),
        ] {
            for item in items {
                if item.contains(['\n', '\r']) {
                    return Reply::error(400, format!("{verb}: a route is one line: {item:?}"));
                }
                lines.push_str(&format!("{verb} {item}\n"));
            }
        }
        match ctl.write(&ctrl, &lines) {
            Ok(()) => Reply::ok(),
            Err(e) => handler_error(e, true),
        }
    }
}

/// A JSON answer of `value`, or the handler error that prevented it.
fn json_or_error(value: Result<impl Serialize, HandlerError>) -> Reply {
    match value {
        Ok(v) => Reply::json(200, &v),
        Err(e) => handler_error(e, false),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// A router made of a table of handlers: `(path, value, writable)`.
    #[derive(Default)]
    struct Fake {
        handlers: HashMap<String, (String, bool)>,
        writes: Vec<(String, String)>,
    }

    impl Fake {
        fn new(h: &[(&str, &str, bool)]) -> Fake {
            Fake {
                handlers: h
                    .iter()
                    .map(|(p, v, w)| (p.to_string(), (v.to_string(), *w)))
                    .collect(),
                writes: Vec::new(),
            }
        }

        fn missing(path: &str) -> HandlerError {
            match path.split_once('.') {
                Some((e, _)) if !e.is_empty() && !["src", "c", "r", "s"].contains(&e) => {
                    HandlerError::NoElement(e.to_string())
                }
                _ => HandlerError::NoHandler(path.to_string()),
            }
        }
    }

    impl Control for Fake {
        fn read(&mut self, path: &str, param: Option<&str>) -> Result<String, HandlerError> {
            match (self.handlers.get(path), param) {
                (Some((v, _)), None) => Ok(v.clone()),
                (Some((v, _)), Some(p)) => Ok(format!("{v}({p})")),
                (None, _) => Err(Fake::missing(path)),
            }
        }

        fn write(&mut self, path: &str, value: &str) -> Result<(), HandlerError> {
            match self.handlers.get(path) {
                Some((_, true)) if value.contains("bad") => {
                    Err(HandlerError::Failed(format!("{path}: bad value")))
                }
                Some((_, true)) => {
                    self.writes.push((path.to_string(), value.to_string()));
                    Ok(())
                }
                Some(_) => Err(HandlerError::NotWritable(path.to_string())),
                None => Err(Fake::missing(path)),
            }
        }

        fn check(&mut self, path: &str, write: bool) -> Result<(), HandlerError> {
            match self.handlers.get(path) {
                Some((_, w)) if write && !w => Err(HandlerError::NotWritable(path.to_string())),
                Some(_) => Ok(()),
                None => Err(Fake::missing(path)),
            }
        }

        fn now(&self) -> f64 {
            12.5
        }
    }

    fn router() -> Fake {
        Fake::new(&[
            ("list", "3\nsrc\nc\nr\n", false),
            ("version", "0.1.0\n", false),
            ("flatconfig", "src :: InfiniteSource;\nc :: Counter;\nr :: RadixIPLookup(0/0 0);\nsrc -> c -> r;\n", false),
            ("drops", "r\tno route\t4\n", false),
            ("thread_cycles", "0 1000\n1 0\n", false),
            ("element_stats", "src 0 0 5 300\nc 5 300 5 300\nr 5 300 1 60\n", false),
            ("hotconfig", "", true),
            ("src.class", "InfiniteSource\n", false),
            ("src.config", "LIMIT 5\n", false),
            ("src.ports", "0 inputs\n1 output\npush\t-\t[0] c\n", false),
            ("src.handlers", "count\tr\n", false),
            ("src.count", "5", false),
            ("c.class", "Counter\n", false),
            ("c.config", "\n", false),
            ("c.ports", "1 input\npush~\t-\tsrc [0]\n1 output\npush~\t-\t[0] r\n", false),
            ("c.handlers", "count\tr\nreset\tw\n", false),
            ("c.count", "5", false),
            ("c.reset", "", true),
            ("r.class", "RadixIPLookup\n", false),
            ("r.config", "0/0 0\n", false),
            ("r.ports", "1 input\npush\t-\tc [0]\n1 output\npush\t-\t\n", false),
            ("r.handlers", "table\tr\nsize\tr\nctrl\tw\ndrops\tr\n", false),
            ("r.table", "0.0.0.0/0\t\t-\t\t0\n", false),
            ("r.size", "1\n", false),
            ("r.ctrl", "", true),
        ])
    }

    fn call(method: Method, path: &str, body: &str) -> Call {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        Call {
            method,
            path: path.into(),
            query: query.into(),
            body: body.into(),
        }
    }

    fn json(r: &Reply) -> serde_json::Value {
        assert_eq!(r.content_type, JSON);
        serde_json::from_slice(&r.body).unwrap()
    }

    #[test]
    fn graph_and_stats() {
        let mut f = router();
        let r = Api::new(false).answer(&call(Method::Get, "/api/graph", ""), &mut f);
        assert_eq!(r.status, 200);
        let g = json(&r);
        assert_eq!(g["elements"][0]["name"], "src");
        assert_eq!(g["elements"][0]["class"], "InfiniteSource");
        assert_eq!(g["elements"][0]["config"], "LIMIT 5");
        assert_eq!(g["elements"][0]["inputs"], 0);
        assert_eq!(g["elements"][0]["outputs"], 1);
        assert_eq!(g["elements"][1]["index"], 1);
        assert_eq!(
            g["elements"][1]["handlers"][1],
            serde_json::json!({"name": "reset", "read": false, "write": true})
        );
        assert_eq!(
            g["connections"][0],
            serde_json::json!({"from": "src", "from_port": 0, "to": "c", "to_port": 0})
        );
        let s = json(&Api::new(false).answer(&call(Method::Get, "/api/stats", ""), &mut f));
        assert_eq!(s["time"], 12.5);
        assert_eq!(s["counting"], true);
        assert_eq!(
            s["elements"]["r"],
            serde_json::json!({"in_packets": 5, "in_bytes": 300, "out_packets": 1, "out_bytes": 60, "drops": 4})
        );
        let r = Api::new(false).answer(&call(Method::Post, "/api/graph", ""), &mut f);
        assert_eq!(r.status, 405);
    }

    #[test]
    fn handlers_read_write_and_errors() {
        let mut f = router();
        let mut api = Api::new(false);
        let r = api.answer(&call(Method::Get, "/api/handlers/c/count", ""), &mut f);
        assert_eq!(
            json(&r),
            serde_json::json!({"element": "c", "handler": "count", "value": "5"})
        );
        let r = api.answer(
            &call(Method::Get, "/api/handlers/c/count?param=a+b%2F1", ""),
            &mut f,
        );
        assert_eq!(json(&r)["value"], "5(a b/1)");
        let r = api.answer(&call(Method::Post, "/api/handlers/c/reset", ""), &mut f);
        assert_eq!((r.status, json(&r)), (200, serde_json::json!({"ok": true})));
        assert_eq!(f.writes, vec![("c.reset".to_string(), String::new())]);
        for (m, p, status) in [
            (Method::Get, "/api/handlers/nosuch/count", 404),
            (Method::Get, "/api/handlers/c/nosuch", 404),
            (Method::Post, "/api/handlers/c/count", 405),
            (Method::Get, "/api/handlers/c", 404),
            (Method::Get, "/api/nosuch", 404),
            (Method::Get, "/elsewhere", 404),
        ] {
            let r = api.answer(&call(m, p, ""), &mut f);
            assert_eq!(r.status, status, "{p}");
            assert!(r.error_message().is_some(), "{p}");
        }
        let r = api.answer(&call(Method::Post, "/api/handlers/c/reset", "bad"), &mut f);
        assert_eq!(r.status, 400);
        assert_eq!(r.error_message().unwrap(), "c.reset: bad value");
        let r = api.answer(&call(Method::Get, "/api/router/version", ""), &mut f);
        assert_eq!(json(&r)["value"], "0.1.0\n");
        assert_eq!(json(&r)["element"], "");
    }

    #[test]
    fn read_only_refuses_writes() {
        let mut f = router();
        let mut api = Api::new(true);
        for (p, body) in [
            ("/api/handlers/c/reset", ""),
            ("/api/hotconfig", "Idle -> Discard"),
            ("/api/router/hotconfig", "Idle -> Discard"),
            ("/api/routes/r", r#"{"add":["198.18.5.0/24 0"]}"#),
        ] {
            let r = api.answer(&call(Method::Post, p, body), &mut f);
            assert_eq!(r.status, 403, "{p}");
        }
        assert!(f.writes.is_empty());
        let r = api.answer(&call(Method::Post, "/api/handlers/c/nosuch", ""), &mut f);
        assert_eq!(r.status, 404);
        let r = api.answer(&call(Method::Get, "/api/handlers/c/count", ""), &mut f);
        assert_eq!(r.status, 200);
    }

    #[test]
    fn hotconfig_and_routes() {
        let mut f = router();
        let mut api = Api::new(false);
        let r = api.answer(
            &call(Method::Post, "/api/hotconfig", "Idle -> Discard"),
            &mut f,
        );
        assert_eq!(r.status, 200);
        let r = api.answer(&call(Method::Post, "/api/hotconfig", "bad config"), &mut f);
        assert_eq!(r.status, 400);
        assert_eq!(r.error_message().unwrap(), "hotconfig: bad value");
        let mut without = Fake::new(&[("list", "0\n", false)]);
        let r = api.answer(&call(Method::Post, "/api/hotconfig", "Idle"), &mut without);
        assert_eq!(r.status, 409);
        assert!(r.error_message().unwrap().contains("-R"));

        let r = api.answer(&call(Method::Get, "/api/routes/r", ""), &mut f);
        assert_eq!(json(&r), serde_json::json!(["0.0.0.0/0 - 0"]));
        let body = r#"{"add":["198.18.5.0/24 198.18.0.2 0"],"remove":["198.18.6.0/24"]}"#;
        let r = api.answer(&call(Method::Post, "/api/routes/r", body), &mut f);
        assert_eq!(r.status, 200);
        assert_eq!(
            f.writes.last().unwrap(),
            &(
                "r.ctrl".to_string(),
                "remove 198.18.6.0/24\nadd 198.18.5.0/24 198.18.0.2 0\n".to_string()
            )
        );
        for body in [
            r#"{"add":"x"}"#,
            r#"{"flush":[]}"#,
            r#"{"add":["1.0.0.0/8 0\nremove 0/0"]}"#,
        ] {
            let r = api.answer(&call(Method::Post, "/api/routes/r", body), &mut f);
            assert_eq!(r.status, 400, "{body}");
        }
        let r = api.answer(&call(Method::Get, "/api/routes/c", ""), &mut f);
        assert_eq!(r.status, 404);
        let r = api.answer(&call(Method::Get, "/api/routes/nosuch", ""), &mut f);
        assert_eq!(r.status, 404);
    }

    #[test]
    fn metrics_exposition() {
        let mut f = router();
        let mut api = Api::new(false);
        let r = api.answer(&call(Method::Get, "/metrics", ""), &mut f);
        assert_eq!(r.status, 200);
        assert_eq!(r.content_type, metrics::CONTENT_TYPE);
        let text = String::from_utf8(r.body).unwrap();
        for line in [
            "# TYPE sluice_element_packets_total counter",
            "sluice_element_packets_total{element=\"c\",class=\"Counter\",direction=\"in\"} 5",
            "sluice_element_bytes_total{element=\"r\",class=\"RadixIPLookup\",direction=\"out\"} 60",
            "sluice_drops_total{element=\"r\",reason=\"no route\"} 4",
            "sluice_thread_busy_cycles_total{thread=\"0\"} 1000",
            "sluice_route_table_routes{element=\"r\"} 1",
            "sluice_build_info{version=\"0.1.0\"} 1",
            "sluice_elements 3",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
        assert!(text.contains("sluice_thread_busy_cycles_total{thread=\"1\"} 0\n"));
    }

    #[test]
    fn paths() {
        assert!(is_api("/metrics") && is_api("/api/graph") && is_api("/api"));
        assert!(!is_api("/") && !is_api("/index.html") && !is_api("/apiary"));
        assert_eq!(decode("sluice%40%40HTTPServer"), "sluice@@HTTPServer");
        assert_eq!(
            query_value("a=1&param=x+y%2B", "param").as_deref(),
            Some("x y+")
        );
        assert_eq!(query_value("a=1", "param"), None);
    }
}
