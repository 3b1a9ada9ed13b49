"""Hostile inputs for Script, DriverManager and ControlSocket: deep nesting, doubling
variables, loops that never wait, stop signals during a long script step, oversized
ControlSocket lines, and -u/-p on paths and ports that are taken. Every run must end by itself,
in bounded time and memory, with a clear message."""
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from sluice_binary import ensure_built  # noqa: E402

MIB = 1 << 20


@pytest.fixture(scope="module")
def sluice():
    return str(ensure_built())


def peak_rss(pid):
    """Peak resident memory of a running process, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def run(sluice, *args, cwd=None, timeout=60):
    """Runs sluice to completion; returns (returncode, stdout, stderr, peak RSS in bytes)."""
    p = subprocess.Popen([sluice, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=cwd)
    peak = 0
    deadline = time.monotonic() + timeout
    while p.poll() is None:
        try:
            peak = max(peak, peak_rss(p.pid))
        except (FileNotFoundError, ProcessLookupError):
            pass
        if time.monotonic() > deadline:
            p.kill()
            pytest.fail(f"sluice {' '.join(args)[:80]} did not end in {timeout}s")
        time.sleep(0.02)
    out, err = p.communicate()
    return p.returncode, out, err, peak


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_print_and_driver_manager_read_handlers(sluice):
    rc, out, err, _ = run(sluice, "-e", """
        InfiniteSource(LIMIT 5, STOP true) -> e :: Counter -> Discard;
        DriverManager(wait_stop, print e.count, print "e.count", printn e.count,
                      print $(min 10 6 20), print $(sprintf "%03d" 7), print $(if $(eq 1 1) a b),
                      read e.count, readq length "\\<0a 09 01>", stop)""")
    assert rc == 0, err
    assert out == "5\ne.count\n56\n007\na\n"
    assert "e.count:\n5\n" in err
    assert "DriverManager@4.length:\n3\n" in err


@pytest.mark.parametrize("levels", [10_000, 100_000])
def test_deep_nesting_is_linear_and_bounded(sluice, tmp_path, levels):
    conf = tmp_path / "nest.click"
    conf.write_text("Script(print " + "$(add 1 " * levels + "1" + ")" * levels + ", stop)")
    t0 = time.monotonic()
    rc, out, err, peak = run(sluice, str(conf))
    assert rc == 0, err[-2000:]
    assert time.monotonic() - t0 < 20
    assert peak < 200 * MIB, peak
    assert "nested more than 10 deep" in err
    # Error lines stay short even though the unexpanded text is huge.
    assert max(len(l) for l in err.splitlines()) < 300


def test_doubling_variable_stops_at_the_size_bound(sluice):
    rc, _, err, peak = run(sluice, "--simtime", "-e",
                           'Script(set a 1, label l, set a "$a$a", goto l); Script(wait 1, stop)',
                           timeout=30)
    assert rc == 0
    assert "larger than 16777216 bytes; script ended" in err
    assert peak < 400 * MIB, peak


def test_loop_without_wait_gives_up_like_click(sluice):
    rc, _, err, _ = run(sluice, "--simtime", "-e",
                        "s0 :: Script(label a, goto a); s1 :: Script(wait 1, stop)")
    assert rc == 0
    assert err == "s0 :: Script: too many jumps, giving up\n"


def test_sigint_stops_a_long_script_step(sluice):
    conf = ('Script(set a 1, label d, setq a "$a$a", goto d $(lt $(length $a) 4000000), '
            'label l, set b $a$a$a, goto l)')
    p = subprocess.Popen([sluice, "-e", conf], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.7)
    assert p.poll() is None, "the script step should still be running"
    p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    try:
        p.wait(timeout=3)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("SIGINT did not stop the router during a long script step")
    assert time.monotonic() - t0 < 3


class Client:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.f = self.s.makefile("rb")
        assert self.line().startswith("Click::ControlSocket/1.")

    def line(self):
        return self.f.readline().decode().rstrip("\r\n")

    def data(self):
        n = int(self.line().split()[1])
        return self.f.read(n).decode()

    def close(self):
        self.f.close()
        self.s.close()


def start(sluice, conf, *args):
    p = subprocess.Popen([sluice, *args, "-e", conf], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    return p


def connect(port, p):
    for _ in range(200):
        try:
            return Client(port)
        except OSError:
            assert p.poll() is None, p.communicate()[1]
            time.sleep(0.05)
    pytest.fail("ControlSocket did not open")


def stop(p, c):
    c.s.sendall(b"WRITE stop\n")
    p.wait(timeout=10)


def test_control_socket_line_limit_applies_while_reading(sluice):
    port = free_port()
    p = start(sluice, f"cs :: ControlSocket(tcp, {port}); Idle -> c :: Counter -> Discard")
    try:
        c = connect(port, p)
        before = peak_rss(p.pid)
        chunk = b"x" * MIB
        try:
            for _ in range(64):
                c.s.sendall(chunk)
        except OSError:
            pass  # the server closed the connection: that is the point
        assert c.line() == "500 Line too long"
        assert c.f.readline() == b""
        c.close()
        assert peak_rss(p.pid) - before < 16 * MIB
        # Clients that leave mid-line are forgotten, with their buffers.
        for _ in range(20):
            c = Client(port)
            c.s.sendall(b"READ c.count" + b" " * 60000)
            c.close()
        c = Client(port)
        for _ in range(100):
            c.s.sendall(b"READ cs.connections\n")
            c.line()
            if c.data() == "1":
                break
            time.sleep(0.05)
        else:
            pytest.fail("connections of departed clients were kept")
        # Oversized data is refused without buffering it.
        c.s.sendall(b"WRITEDATA c.reset %d\n" % (16 * MIB + 1))
        assert c.line().startswith("521 ")
        c.s.sendall(b"x" * (16 * MIB + 1))
        c.s.sendall(b"READ c.count\n")
        assert c.line() == "200 Read handler 'c.count' OK"
        assert peak_rss(p.pid) - before < 16 * MIB
        stop(p, c)
    finally:
        p.kill()
        p.wait()


def test_control_socket_click_argument_forms(sluice, tmp_path):
    port = free_port()
    path = tmp_path / "cs.sock"
    conf = (f"ControlSocket(tcp, {port}+, READONLY false, VERBOSE true, LOCALHOST true, "
            f"RETRIES 1, RETRY_WARNINGS false); ControlSocket(unix, {path}, READONLY true); "
            "s :: Script(TYPE PASSIVE, return $(add $1 1)); Idle -> c :: Counter -> Discard")
    p = start(sluice, conf)
    try:
        c = connect(port, p)
        c.s.sendall(b"READ s.add 1 1\nREAD s.cat /etc/hostname\nCHECKWRITE c.count\n"
                    b"GET .version\nREAD 5.count\nREADDATA s.length 3\nabcWRITEUNTIL s.run END\n"
                    b"7\nEND\nREAD s.run\nHELLO\n")
        assert c.line() == "200 Read handler 's.add' OK"
        assert c.data() == "2"
        assert c.line() == "511 No handler named 's.cat'"
        assert c.line() == "511 Handler 'c.count' not writable"
        assert c.line().startswith("200 ")
        c.data()
        assert c.line() == "200 Read handler '5.count' OK"
        assert c.data() == "0"
        assert c.line().startswith("200 ")
        assert c.data() == "3"
        assert c.line() == "200 Write handler 's.run' OK"
        assert c.line().startswith("200 ")
        assert c.data() == "8"
        assert c.line() == "501 Command 'HELLO' unimplemented"
        u = socket.socket(socket.AF_UNIX)
        u.connect(str(path))
        u.sendall(b"WRITE c.reset\nQUIT\n")
        got = b""
        while not got.endswith(b"Goodbye!\r\n"):
            more = u.recv(4096)
            assert more, got
            got += more
        assert b"530 Permission denied for 'c.reset'" in got
        u.close()
        stop(p, c)
        err = p.communicate()[1]
        assert "opened connection" in err
    finally:
        p.kill()
        p.wait()
    assert not path.exists()


def test_unix_socket_path_never_deletes_other_files(sluice, tmp_path):
    regular = tmp_path / "precious.txt"
    regular.write_text("keep me\n")
    rc, _, err, _ = run(sluice, "-u", str(regular), "-e", "Idle -> Discard")
    assert rc == 1
    assert "Address already in use" in err
    assert regular.read_text() == "keep me\n"

    # A socket someone listens on is not taken over either.
    live = tmp_path / "live.sock"
    holder = socket.socket(socket.AF_UNIX)
    holder.bind(str(live))
    holder.listen(1)
    rc, _, err, _ = run(sluice, "-u", str(live), "-e", "Idle -> Discard")
    holder.close()
    assert rc == 1 and "Address already in use" in err
    assert live.exists()

    # A stale socket (its owner died) is replaced, and removed at exit.
    stale = tmp_path / "stale.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(stale))
    s.close()
    rc, _, err, _ = run(sluice, "-u", str(stale), "-e", "Script(stop)")
    assert rc == 0, err
    assert not stale.exists()


def test_busy_port_is_reported_against_the_option(sluice, tmp_path):
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    conf = tmp_path / "r.click"
    conf.write_text("Idle -> Discard;\n")
    rc, _, err, _ = run(sluice, str(conf), "-p", str(port))
    holder.close()
    assert rc == 1
    first = err.splitlines()[0]
    assert first.startswith("<command line>:2: While initializing "
                            "'click_driver@@ControlSocket :: ControlSocket'"), err
    assert "bind: Address already in use" in err
    assert "r.click" not in err
