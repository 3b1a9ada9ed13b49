"""A real Prometheus server (Debian's prometheus package, installed by scripts/setup.sh)
scrapes `sluice --http`'s /metrics every second; its query API must then show a Counter's
packets growing and the drops of a RandomSample.
"""
import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from processes import free_port, stop

# Traffic at 2000 packets/s through a counter; a RandomSample drops about half of it.
CONFIG = """
src :: RatedSource(RATE 2000, LIMIT -1) -> c :: Counter -> s :: RandomSample(DROP 0.5)
    -> Discard;
"""

SCRAPE_CONFIG = """
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: sluice
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ["127.0.0.1:{port}"]
"""


def query(prom, expr):
    """The instant vector of PromQL `expr`: a list of (labels, value)."""
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return [(s["metric"], float(s["value"][1])) for s in body["data"]["result"]]


def wait_for(what, fn, timeout=15):
    """Polls `fn` until it returns something truthy; fails naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = fn()
        except OSError:
            got = None
        if got:
            return got
        assert time.monotonic() < deadline, f"no {what} after {timeout} s"
        time.sleep(0.25)


def test_prometheus_scrapes_sluice(sluice_bin, tmp_path):
    prometheus = shutil.which("prometheus")
    assert prometheus, "prometheus is missing: run scripts/setup.sh"
    conf = tmp_path / "prom.click"
    conf.write_text(CONFIG)
    port, prom_port = free_port(), free_port()
    (tmp_path / "prometheus.yml").write_text(SCRAPE_CONFIG.format(port=port))
    sluice = subprocess.Popen(
        [str(sluice_bin), "--http", f"127.0.0.1:{port}", str(conf)],
        cwd=tmp_path, stdout=open(tmp_path / "sluice.log", "w"), stderr=subprocess.STDOUT)
    prom = subprocess.Popen(
        [prometheus, f"--config.file={tmp_path / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{prom_port}"],
        cwd=tmp_path, stdout=open(tmp_path / "prometheus.log", "w"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{prom_port}"
    try:
        def target_up():
            assert prom.poll() is None, (tmp_path / "prometheus.log").read_text()
            assert sluice.poll() is None, (tmp_path / "sluice.log").read_text()
            return any(v == 1 for _, v in query(base, 'up{job="sluice"}'))

        wait_for("scrape of sluice by prometheus", target_up)
        packets = 'sluice_element_packets_total{element="c",direction="in"}'
        first = wait_for(packets, lambda: query(base, packets))
        assert len(first) == 1 and first[0][0]["class"] == "Counter", first
        assert first[0][1] > 0, first

        def grown():
            now = query(base, packets)
            return now and now[0][1] > first[0][1]

        wait_for("growth of " + packets, grown, timeout=10)
        drops = wait_for("drop counter", lambda: query(base, 'sluice_drops_total{element="s"}'))
        assert drops[0][0]["reason"] and drops[0][1] > 0, drops
        rate = query(base, f"rate({packets}[5s])")
        assert rate and rate[0][1] > 0, rate
    finally:
        stop(prom)
        stop(sluice)
