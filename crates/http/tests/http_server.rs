//! HTTPServer in a running router: requests over a real socket from another thread while the
//! router runs on the test's thread, hot swap included.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use sluice_testkit::Kit;

/// Sends one HTTP/1.0 request to 127.0.0.1:`port`: the status and the body.
fn request(port: u16, method: &str, path: &str, body: &str, headers: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.0\r\nContent-Length: {}\r\n{headers}\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).expect("answer");
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text.split_once("\r\n\r\n").map(|x| x.1).unwrap_or("");
    (status, body.to_string())
}

fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

const CONF: &str = "src :: RatedSource(RATE 2000) -> c :: Counter -> q :: Queue(50)
    -> u :: Unqueue(BURST 1) -> r :: RadixIPLookup(198.18.0.0/16 0) -> Discard;
    h :: HTTPServer(PORT 0);";

/// Runs `conf` with hot swap and element counters while `client` talks to the server `h`
/// on the port it got; at the end the router is stopped through `h`, or through `admin` if
/// there is one. Returns what the client returns.
fn serve<T: Send + 'static>(conf: &str, client: impl FnOnce(u16) -> T + Send + 'static) -> T {
    let mut r = Kit::new()
        .classes(sluice_http::CLASSES)
        .hot_swap()
        .element_stats()
        .router(conf);
    let port_of = |r: &mut sluice_core::Router, e: &str| -> Option<u16> {
        r.read_path(&format!("{e}.port")).ok()?.trim().parse().ok()
    };
    let port = port_of(&mut r, "h").unwrap();
    let admin = port_of(&mut r, "admin").unwrap_or(port);
    assert_ne!(port, 0);
    let t = std::thread::spawn(move || {
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| client(port)));
        assert_eq!(request(admin, "POST", "/api/router/stop", "", "").0, 200);
        out
    });
    r.run();
    r.cleanup();
    match t.join().unwrap() {
        Ok(v) => v,
        Err(p) => std::panic::resume_unwind(p),
    }
}

#[test]
fn graph_stats_handlers_routes_and_metrics() {
    serve(CONF, |port| {
        let (status, body) = request(port, "GET", "/api/graph", "", "");
        assert_eq!(status, 200, "{body}");
        let g = json(&body);
        let names: Vec<&str> = g["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 7);
        assert_eq!(names[..5], ["src", "c", "q", "u", "r"]);
        assert_eq!(g["elements"][2]["class"], "Queue");
        assert_eq!(g["elements"][2]["config"], "50");
        assert_eq!(g["elements"][0]["outputs"], 1);
        assert!(g["connections"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!({"from": "c", "from_port": 0, "to": "q", "to_port": 0})));

        std::thread::sleep(Duration::from_millis(300));
        let first = json(&request(port, "GET", "/api/stats", "", "").1);
        std::thread::sleep(Duration::from_millis(300));
        let second = json(&request(port, "GET", "/api/stats", "", "").1);
        assert_eq!(first["counting"], true);
        let n = |v: &serde_json::Value| v["elements"]["c"]["in_packets"].as_u64().unwrap();
        assert!(n(&first) > 0 && n(&second) > n(&first), "{first} {second}");
        assert!(second["time"].as_f64().unwrap() > first["time"].as_f64().unwrap());

        let (status, body) = request(port, "GET", "/api/handlers/c/count", "", "");
        assert_eq!(status, 200);
        let count: u64 = json(&body)["value"].as_str().unwrap().parse().unwrap();
        assert!(count > 0);
        assert_eq!(
            request(port, "POST", "/api/handlers/c/reset", "", "").0,
            200
        );
        let (_, body) = request(port, "GET", "/api/handlers/c/count", "", "");
        let after: u64 = json(&body)["value"].as_str().unwrap().parse().unwrap();
        assert!(after < count, "{after} after reset, {count} before");
        let (status, body) = request(port, "GET", "/api/handlers/h/requests", "", "");
        assert_eq!(status, 200, "the server answers its own handlers: {body}");
        assert_eq!(
            request(port, "GET", "/api/handlers/c/nosuch", "", "").0,
            404
        );
        assert_eq!(
            request(port, "GET", "/api/handlers/nosuch/count", "", "").0,
            404
        );
        assert_eq!(
            request(port, "POST", "/api/handlers/q/capacity", "x", "").0,
            400
        );
        let (_, body) = request(
            port,
            "GET",
            "/api/handlers/r/lookup?param=198.18.1.1",
            "",
            "",
        );
        assert_eq!(json(&body)["value"], "0");

        let change = r#"{"add":["198.19.5.0/24 198.18.0.2 0"]}"#;
        assert_eq!(request(port, "POST", "/api/routes/r", change, "").0, 200);
        let routes = json(&request(port, "GET", "/api/routes/r", "", "").1);
        assert!(routes
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("198.19.5.0/24 198.18.0.2 0")));
        let (status, body) = request(
            port,
            "POST",
            "/api/routes/r",
            r#"{"add":["198.19.5.0/24 9"]}"#,
            "",
        );
        assert_eq!(status, 400, "port out of range: {body}");

        let (status, text) = request(port, "GET", "/metrics", "", "");
        assert_eq!(status, 200);
        for needle in [
            "# TYPE sluice_element_packets_total counter",
            "sluice_element_packets_total{element=\"c\",class=\"Counter\",direction=\"in\"} ",
            "sluice_queue_capacity{element=\"q\"} 50",
            "sluice_route_table_routes{element=\"r\"} 2",
            "sluice_thread_busy_cycles_total{thread=\"0\"} ",
        ] {
            assert!(text.contains(needle), "{needle} not in\n{text}");
        }
    });
}

#[test]
fn hot_swap_answers_and_keeps_the_socket() {
    serve(CONF, |port| {
        let (status, body) = request(port, "POST", "/api/hotconfig", "nonsense ->", "");
        assert_eq!(status, 400);
        assert!(
            json(&body)["error"].as_str().unwrap().contains("config:"),
            "{body}"
        );
        let new = "src :: RatedSource(RATE 2000) -> c :: Counter -> c2 :: Counter -> Discard;
            h :: HTTPServer(PORT 0);";
        let (status, body) = request(port, "POST", "/api/hotconfig", new, "");
        assert_eq!(
            (status, json(&body)),
            (200, serde_json::json!({"ok": true}))
        );
        let (status, body) = request(port, "GET", "/api/handlers/c2/count", "", "");
        assert_eq!(status, 200, "the new configuration answers: {body}");
        assert_eq!(
            request(port, "GET", "/api/handlers/q/length", "", "").0,
            404
        );
    });
}

#[test]
fn token_and_read_only() {
    let dir = std::env::temp_dir().join(format!("sluice-http-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token = dir.join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    let conf = format!(
        "src :: RatedSource(RATE 100) -> c :: Counter -> Discard;
         h :: HTTPServer(PORT 0, TOKEN_FILE {}, READ_ONLY true);
         admin :: HTTPServer(0);",
        token.display()
    );
    serve(&conf, |port| {
        assert_eq!(request(port, "GET", "/api/graph", "", "").0, 401);
        let wrong = "Authorization: Bearer nope\r\n";
        assert_eq!(request(port, "GET", "/metrics", "", wrong).0, 401);
        let auth = "Authorization: Bearer s3cret\r\n";
        assert_eq!(
            request(port, "GET", "/api/handlers/c/count", "", auth).0,
            200
        );
        let (status, body) = request(port, "POST", "/api/handlers/c/reset", "", auth);
        assert_eq!(status, 403, "{body}");
        assert_eq!(request(port, "POST", "/api/hotconfig", "Idle", auth).0, 403);
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let e = Kit::new()
        .classes(sluice_http::CLASSES)
        .error(&format!("HTTPServer({port})"));
    assert!(
        e.contains(&format!("bind 127.0.0.1:{port}: Address already in use")),
        "{e}"
    );
}
