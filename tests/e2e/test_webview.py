"""The live web view (crates/http/web/) in a real headless browser: Debian's chromium, driven
by Selenium through chromedriver, against `sluice --http` running a router with traffic.

The page must show every element of the router, rates that are non-zero and move while
packets flow, an element's handlers (read and write) when it is clicked, the new graph after
a hot swap, a message when the router goes away, and a prompt for the token when the API
asks for one (401). `SLUICE_SCREENSHOT=1` also saves docs/img/webview.png.
"""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from processes import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "img" / "webview.png"

# A source at 2000 packets/s split by a Tee: one branch through a queue, the other through a
# RandomSample that drops about half of its packets.
CONFIG = """
src :: RatedSource(RATE 2000, LIMIT -1) -> t :: Tee
    -> c :: Counter -> q :: Queue(100) -> u :: Unqueue -> d :: Discard;
t[1] -> s :: RandomSample(DROP 0.5) -> c2 :: Counter -> d2 :: Discard;
"""

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,760",
]


def get_json(url, timeout=2):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.load(r)


@contextlib.contextmanager
def running_sluice(sluice_bin, tmp_path, *options):
    """`sluice --http` running CONFIG; yields (process, base URL) once the API answers."""
    conf = tmp_path / "webview.click"
    conf.write_text(CONFIG)
    port = free_port()
    log_path = tmp_path / "sluice.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [str(sluice_bin), "--http", f"127.0.0.1:{port}", *options, str(conf)],
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while True:
            assert proc.poll() is None, f"sluice exited: {log_path.read_text()}"
            try:
                urllib.request.urlopen(base + "/", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "sluice --http did not answer in 10 s"
                time.sleep(0.1)
        yield proc, base
    finally:
        stop(proc)
        log.close()


@pytest.fixture
def browser(tmp_path):
    """Headless chromium under chromedriver, with a fresh profile and the console log kept."""
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and chromedriver):
        pytest.fail("chromium and chromedriver are missing: run scripts/setup.sh")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + tempfile.mkdtemp(dir=tmp_path, prefix="chromium-"))
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(chromedriver, log_output=str(tmp_path / "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()
        if service.process is not None and service.process.poll() is None:
            os.kill(service.process.pid, signal.SIGKILL)
            service.process.wait()


def wait_for(driver, what, condition, timeout=10):
    """Waits for `condition(driver)` to be truthy; fails with what the page says otherwise."""
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(condition)
    except TimeoutException:
        status = driver.find_element(By.ID, "status").text
        message = driver.find_element(By.ID, "message").text
        pytest.fail(f"timed out waiting for {what}; status: {status!r}, message: {message!r}")


def node(driver, name):
    return driver.find_element(By.CSS_SELECTOR, f'g.element[data-element="{name}"]')


def rates(driver):
    """Every element's displayed rate: name -> (label text, data-rate)."""
    return {
        g.get_attribute("data-element"): (
            g.find_element(By.CSS_SELECTOR, ".rate").text,
            g.find_element(By.CSS_SELECTOR, ".rate").get_attribute("data-rate"),
        )
        for g in driver.find_elements(By.CSS_SELECTOR, "g.element")
    }


def handler_row(driver, name):
    return driver.find_element(By.CSS_SELECTOR, f'#handlers tr[data-handler="{name}"]')


def test_live_view_in_headless_chromium(sluice_bin, tmp_path, browser):
    with running_sluice(sluice_bin, tmp_path, "-R") as (proc, base):
        check_live_view(browser, proc, base)


def check_live_view(browser, proc, base):
    graph = get_json(base + "/api/graph")
    names = {e["name"] for e in graph["elements"]}
    assert names >= {"src", "t", "c", "q", "u", "d", "s", "c2", "d2"}

    browser.get(base + "/")
    assert browser.title.startswith("Sluice")

    # Every element of the running router has a node, every connection an edge.
    wait_for(browser, "the graph", lambda d: d.find_elements(By.CSS_SELECTOR, "g.element"))
    nodes = browser.find_elements(By.CSS_SELECTOR, "g.element")
    assert {g.get_attribute("data-element") for g in nodes} == names
    assert len(browser.find_elements(By.CSS_SELECTOR, "path.edge")) == len(graph["connections"])
    for name in names:
        label = node(browser, name).find_element(By.CSS_SELECTOR, ".name").text
        assert label == name

    # Rates: non-zero while traffic flows, and moving from one sample to the next.
    wait_for(browser, "a rate on c", lambda d: float(rates(d)["c"][1] or 0) > 0)
    first = rates(browser)
    time.sleep(2)
    second = rates(browser)
    for sample in (first, second):
        text, value = sample["c"]
        assert float(value) > 0 and text.endswith(" pkt/s"), sample["c"]
        assert 500 < float(sample["src"][1]) < 8000, sample["src"]
    assert first != second, "no rate changed in 2 s"
    fill = node(browser, "c").find_element(By.CSS_SELECTOR, ".box").get_attribute("fill")
    assert fill != "#e3e6ea", "c is coloured as idle"

    # The RandomSample's drops are counted and it is outlined while it drops.
    wait_for(browser, "s outlined", lambda d: "dropping" in node(d, "s").get_attribute("class"))
    drops = node(browser, "s").find_element(By.CSS_SELECTOR, ".drops")
    assert int(drops.get_attribute("data-drops")) > 0
    assert drops.text.startswith("drops "), drops.text
    assert "dropping" not in node(browser, "c").get_attribute("class")

    # Clicking an element lists its handlers, with values read from the router.
    node(browser, "c").click()
    panel = browser.find_element(By.ID, "panel")
    wait_for(browser, "the handler panel", lambda d: panel.is_displayed())
    assert browser.find_element(By.ID, "panel-title").text == "c"
    rows = browser.find_elements(By.CSS_SELECTOR, "#handlers tbody tr")
    listed = [tr.get_attribute("data-handler") for tr in rows]
    c = next(e for e in graph["elements"] if e["name"] == "c")
    assert sorted(listed) == sorted(h["name"] for h in c["handlers"])
    assert listed.index("count") < listed.index("name"), "the element's own handlers first"
    count = handler_row(browser, "count").find_element(By.CSS_SELECTOR, "pre.value")
    wait_for(browser, "c.count's value", lambda d: "loaded" in count.get_attribute("class"))
    assert int(count.text) > 0
    if os.environ.get("SLUICE_SCREENSHOT") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(SCREENSHOT))

    # A write through the panel: stopping the source brings its rate to zero.
    node(browser, "src").click()
    title = browser.find_element(By.ID, "panel-title")
    wait_for(browser, "src's panel", lambda d: title.text == "src")
    active = handler_row(browser, "active")
    active.find_element(By.CSS_SELECTOR, "input").send_keys("false")
    active.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    written = active.find_element(By.CSS_SELECTOR, ".result")
    wait_for(browser, "the write", lambda d: written.text.startswith("written"))
    value = active.find_element(By.CSS_SELECTOR, "pre.value")
    wait_for(browser, "src.active to read false", lambda d: value.text == "false")
    wait_for(browser, "src's rate to fall to zero", lambda d: rates(d)["src"][1] == "0", timeout=5)

    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe

    # A write the router refuses shows its error.
    rate = handler_row(browser, "rate")
    rate.find_element(By.CSS_SELECTOR, "input").send_keys("fast")
    rate.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    result = rate.find_element(By.CSS_SELECTOR, ".result")
    wait_for(browser, "the refusal", lambda d: "error" in result.get_attribute("class"))
    assert result.text.startswith("error "), result.text

    # A hot swap that adds an element: the page redraws the new graph.
    swapped = CONFIG.replace("-> d2 ::", "-> added :: Counter -> d2 ::")
    request = urllib.request.Request(base + "/api/hotconfig", swapped.encode(), method="POST")
    urllib.request.urlopen(request, timeout=10).close()
    wait_for(browser, "the new element", lambda d: d.find_elements(
        By.CSS_SELECTOR, 'g.element[data-element="added"]'), timeout=5)
    assert len(browser.find_elements(By.CSS_SELECTOR, "g.element")) == len(names) + 1

    # The router goes away: the page says so.
    stop(proc)
    message = browser.find_element(By.ID, "message")
    wait_for(browser, "the message", lambda d: "unreachable" in message.text, timeout=5)


def test_live_view_asks_for_the_token(sluice_bin, tmp_path, browser):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret+token/1\n")
    with running_sluice(sluice_bin, tmp_path, "--http-token-file", str(token_file)) as (_, base):
        browser.get(base + "/")
        message = browser.find_element(By.ID, "message")
        wait_for(browser, "the 401 message", lambda d: "Not authorised" in message.text)
        assert "401" in message.text
        assert not browser.find_elements(By.CSS_SELECTOR, "g.element")

        message.find_element(By.CSS_SELECTOR, "input").send_keys("s3cret+token/1")
        message.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait_for(browser, "the graph", lambda d: d.find_elements(By.CSS_SELECTOR, "g.element"))
        wait_for(browser, "a rate on c", lambda d: float(rates(d)["c"][1] or 0) > 0)
        assert not message.is_displayed()
        assert "#token=" in browser.current_url
