"""The HTTP/JSON control API and /metrics of `sluice --http`, end to end: a running router with
traffic, read and written over HTTP as an operator's tools would (Python's own HTTP client),
the metrics checked by Prometheus's `promtool` (Debian's prometheus package, installed by
scripts/setup.sh).
"""
import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from processes import free_port, stop

# Traffic at 2000 packets/s through a counter and a queue; a Tee's second branch through a
# RandomSample that drops about half; a route table beside it.
CONFIG = """
src :: RatedSource(RATE 2000, LIMIT -1) -> t :: Tee
    -> c :: Counter -> q :: Queue(100) -> u :: Unqueue -> d :: Discard;
t[1] -> s :: RandomSample(DROP 0.5) -> Discard;
Idle -> rt :: RadixIPLookup(198.18.0.0/16 0, 0.0.0.0/0 198.18.0.1 1) -> Discard;
rt[1] -> Discard;
"""

# The configuration hot-swapped in: the same source and counter, and a second counter.
NEW_CONFIG = """
src :: RatedSource(RATE 2000, LIMIT -1) -> c :: Counter -> c2 :: Counter -> Discard;
"""


def call(base, path, body=None, method=None, token=None):
    """One request: (status, parsed JSON or text). A body makes it a POST."""
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(base + path, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, ctype, text = r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        status, ctype, text = e.code, e.headers.get("Content-Type", ""), e.read().decode()
    return status, (json.loads(text) if ctype.startswith("application/json") else text)


@pytest.fixture
def start(sluice_bin, tmp_path):
    """start(*options, config=CONFIG): `sluice --http 127.0.0.1:PORT OPTIONS FILE` running,
    once its API answers; returns the base URL. Stopped at the end of the test."""
    procs = []

    def run(*options, config=CONFIG, token=None):
        conf = tmp_path / "http.click"
        conf.write_text(config)
        port = free_port()
        log = tmp_path / "sluice.log"
        proc = subprocess.Popen(
            [str(sluice_bin), "--http", f"127.0.0.1:{port}", *options, str(conf)],
            cwd=tmp_path,
            stdout=open(log, "w"),
            stderr=subprocess.STDOUT,
        )
        procs.append(proc)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 10
        while True:
            assert proc.poll() is None, f"sluice exited: {log.read_text()}"
            try:
                call(base, "/api/router/version", token=token)
                return base
            except OSError:
                assert time.monotonic() < deadline, "sluice --http did not answer in 10 s"
                time.sleep(0.1)

    yield run
    for p in procs:
        stop(p)


def count(base, element="c", token=None):
    status, body = call(base, f"/api/handlers/{element}/count", token=token)
    assert status == 200, body
    return int(body["value"])


def test_graph_and_stats(start):
    base = start()
    status, g = call(base, "/api/graph")
    assert status == 200, g
    names = [e["name"] for e in g["elements"]]
    for n in ["src", "t", "c", "q", "u", "d", "s", "rt", "sluice@@HTTPServer"]:
        assert n in names, names
    assert [e["index"] for e in g["elements"]] == list(range(len(names)))
    by_name = {e["name"]: e for e in g["elements"]}
    assert by_name["q"]["class"] == "Queue" and by_name["q"]["config"] == "100"
    assert (by_name["t"]["inputs"], by_name["t"]["outputs"]) == (1, 2)
    handlers = {h["name"]: h for h in by_name["c"]["handlers"]}
    assert handlers["count"] == {"name": "count", "read": True, "write": False}
    assert handlers["reset"]["write"] and not handlers["reset"]["read"]
    assert {"from": "c", "from_port": 0, "to": "q", "to_port": 0} in g["connections"]
    assert {"from": "t", "from_port": 1, "to": "s", "to_port": 0} in g["connections"]

    _, first = call(base, "/api/stats")
    time.sleep(0.5)
    _, second = call(base, "/api/stats")
    assert first["counting"] is True
    assert second["time"] > first["time"]
    c1, c2 = first["elements"]["c"], second["elements"]["c"]
    assert 0 < c1["in_packets"] < c2["in_packets"], (c1, c2)
    assert c2["in_bytes"] > c1["in_bytes"] > 0
    assert second["elements"]["s"]["drops"] > 0
    assert second["elements"]["src"]["in_packets"] == 0
    assert second["elements"]["src"]["out_packets"] > 0


def test_handlers(start):
    base = start()
    time.sleep(0.2)
    before = count(base)
    assert before > 0
    assert call(base, "/api/handlers/c/reset", body="") == (200, {"ok": True})
    assert count(base) < before
    assert call(base, "/api/handlers/q/capacity", body="200")[0] == 200
    assert call(base, "/api/handlers/q/capacity") == (
        200, {"element": "q", "handler": "capacity", "value": "200"})
    status, body = call(base, "/api/handlers/q/capacity", body="lots", method="PUT")
    assert status == 400 and "error" in body
    status, body = call(base, "/api/handlers/c/nosuch")
    assert status == 404 and "nosuch" in body["error"]
    assert call(base, "/api/handlers/nosuch/count")[0] == 404
    assert call(base, "/api/handlers/c/count", body="5")[0] == 405
    assert call(base, "/api/nosuch")[0] == 404
    assert call(base, "/api/graph", method="DELETE")[0] == 405
    status, body = call(base, "/api/router/list")
    assert status == 200 and "sluice@@HTTPServer" in body["value"].split("\n")
    status, body = call(base, "/api/handlers/rt/lookup?param=198.18.7.1")
    assert body["value"] == "0", body
    assert call(base, "/api/handlers/sluice@@HTTPServer/requests")[0] == 200


def test_hotconfig(start):
    base = start("-R")
    status, body = call(base, "/api/hotconfig", body="c :: Counter -> ;")
    assert status == 400 and "config:1" in body["error"], body
    # The old configuration runs on.
    before = count(base)
    time.sleep(0.2)
    assert count(base) > before
    assert call(base, "/api/hotconfig", body=NEW_CONFIG) == (200, {"ok": True})
    # The new configuration answers on the same socket; Counter c kept its count.
    status, g = call(base, "/api/graph")
    assert status == 200
    names = [e["name"] for e in g["elements"]]
    assert "c2" in names and "q" not in names, names
    assert count(base) >= before
    time.sleep(0.2)
    assert count(base, "c2") > 0


def test_hotconfig_needs_R(start):
    base = start()
    status, body = call(base, "/api/hotconfig", body=NEW_CONFIG)
    assert status == 409 and "-R" in body["error"]


def test_routes(start):
    base = start()
    status, routes = call(base, "/api/routes/rt")
    assert status == 200
    assert sorted(routes) == ["0.0.0.0/0 198.18.0.1 1", "198.18.0.0/16 - 0"], routes
    change = {"add": ["198.18.5.0/24 198.18.0.2 1"], "remove": ["198.18.0.0/16"]}
    assert call(base, "/api/routes/rt", body=json.dumps(change)) == (200, {"ok": True})
    _, routes = call(base, "/api/routes/rt")
    assert "198.18.5.0/24 198.18.0.2 1" in routes and "198.18.0.0/16 - 0" not in routes
    _, body = call(base, "/api/handlers/rt/lookup?param=198.18.5.9")
    assert body["value"] == "1 198.18.0.2"
    # All or none: a bad route leaves the table as it was.
    bad = {"add": ["198.19.1.0/24 0"], "set": ["198.19.2.0/24 7"]}
    status, body = call(base, "/api/routes/rt", body=json.dumps(bad))
    assert status == 400 and "out of range" in body["error"], body
    assert call(base, "/api/routes/rt")[1] == routes
    assert call(base, "/api/routes/rt", body="not json")[0] == 400
    assert call(base, "/api/routes/c")[0] == 404
    _, text = call(base, "/metrics")
    assert 'sluice_route_table_routes{element="rt"} 2' in text.splitlines()


def test_metrics_pass_promtool(start, tmp_path):
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: run scripts/setup.sh (Debian's prometheus package)"
    base = start()
    time.sleep(0.3)
    req = urllib.request.urlopen(base + "/metrics", timeout=10)
    assert req.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    text = req.read().decode()
    check = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr + text
    lines = text.splitlines()
    assert "# TYPE sluice_element_packets_total counter" in lines
    assert any(l.startswith('sluice_element_packets_total{element="c",class="Counter",'
                            'direction="in"} ') for l in lines), text
    assert any(l.startswith('sluice_drops_total{element="s",reason=') for l in lines), text
    assert 'sluice_queue_capacity{element="q"} 100' in lines
    assert any(l.startswith('sluice_queue_length{element="q"} ') for l in lines)
    assert any(l.startswith('sluice_thread_busy_cycles_total{thread="0"} ') for l in lines)
    assert any(l.startswith("sluice_build_info{version=") for l in lines)


def test_token(start, tmp_path):
    (tmp_path / "token").write_text("s3cret-token\n")
    base = start("--http-token-file", str(tmp_path / "token"), token="s3cret-token")
    assert call(base, "/api/graph")[0] == 401
    assert call(base, "/metrics", token="wrong")[0] == 401
    assert call(base, "/api/graph", token="s3cret-token")[0] == 200
    assert call(base, "/metrics", token="s3cret-token")[0] == 200
    status, body = call(base, "/api/handlers/c/reset", body="", token="s3cret-token")
    assert (status, body) == (200, {"ok": True})


def test_read_only(start):
    base = start("--http-read-only", "-R")
    assert call(base, "/api/handlers/c/reset", body="")[0] == 403
    assert call(base, "/api/hotconfig", body=NEW_CONFIG)[0] == 403
    assert call(base, "/api/routes/rt", body='{"add":["198.18.5.0/24 0"]}')[0] == 403
    assert call(base, "/api/router/stop", body="")[0] == 403
    assert call(base, "/api/handlers/c/nosuch", body="")[0] == 404
    assert call(base, "/api/handlers/c/count")[0] == 200
    assert len(call(base, "/api/routes/rt")[1]) == 2


def test_bad_options(sluice_bin, tmp_path):
    conf = tmp_path / "x.click"
    conf.write_text("Idle -> Discard;")
    p = subprocess.run([str(sluice_bin), "--http", "localhost:80", str(conf)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1 and "expects [ADDR:]PORT" in p.stderr
    p = subprocess.run([str(sluice_bin), "--http-read-only", str(conf)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1 and "need '--http'" in p.stderr
    (tmp_path / "empty").write_text("")
    p = subprocess.run([str(sluice_bin), "--http", "0", "--http-token-file",
                        str(tmp_path / "empty"), str(conf)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1 and "TOKEN_FILE" in p.stderr, p.stderr
    p = subprocess.run([str(sluice_bin), "doc", "HTTPServer"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0 and "GET /api/graph" in p.stdout
