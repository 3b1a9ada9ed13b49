"""End-to-end tests of trace I/O and control: FromDump -> ToDump byte identity on pcaps
written by scapy, and a ControlSocket driven by a TCP client while sluice runs."""
import contextlib
import json
import socket
import subprocess
import time
from decimal import Decimal

import pytest
from scapy.all import IP, TCP, UDP, Ether, ICMP, Raw, rdpcap, wrpcap
from scapy.layers.inet6 import IPv6
from processes import free_port


def sample_packets(nano):
    pkts = []
    sizes = [0, 18, 100, 500, 1000, 1458]
    for i, n in enumerate(sizes):
        if i % 3 == 0:
            p = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(
                src="198.18.0.1", dst="198.19.0.2", ttl=64 - i
            ) / UDP(sport=1000 + i, dport=53) / Raw(b"x" * n)
        elif i % 3 == 1:
            p = Ether(src="02:00:00:00:00:03", dst="02:00:00:00:00:04") / IP(
                src="198.18.0.7", dst="198.18.1.9"
            ) / TCP(sport=40000 + i, dport=80, flags="S") / Raw(bytes(range(256)) * (n // 256) + b"y" * (n % 256))
        else:
            p = Ether(src="02:00:00:00:00:05", dst="02:00:00:00:00:06") / IPv6(
                src="2001:db8::1", dst="2001:db8::2"
            ) / ICMP() / Raw(b"z" * n)
        frac = "123456789" if nano else "123456"
        p.time = Decimal(f"{1700000000 + i}.{frac}") + (
            Decimal(i) / (Decimal(10**9) if nano else Decimal(10**6))
        )
        pkts.append(p)
    return pkts


@pytest.mark.parametrize("nano", [False, True])
def test_from_dump_to_dump_is_byte_identical(run_sluice, tmp_path, nano):
    pkts = sample_packets(nano)
    wrpcap(str(tmp_path / "in.pcap"), pkts, nano=nano)
    conf = (
        "fd :: FromDump(in.pcap, STOP true) -> c :: Counter -> "
        f"ToDump(out.pcap, SNAPLEN 65535, NANO {'true' if nano else 'false'}, USE_ENCAP_FROM fd);"
    )
    proc = run_sluice(conf, "-h", "c.count")
    assert proc.stdout.strip() == "6"
    src = (tmp_path / "in.pcap").read_bytes()
    out = (tmp_path / "out.pcap").read_bytes()
    assert out == src
    # And independently dissected: same frames, same timestamps.
    back = rdpcap(str(tmp_path / "out.pcap"))
    assert len(back) == len(pkts)
    for a, b in zip(pkts, back):
        assert bytes(a) == bytes(b)
        assert Decimal(a.time) == Decimal(b.time)


def test_raw_ip_link_type_round_trip(run_sluice, tmp_path):
    pkts = [IP(src="198.18.0.1", dst="198.18.0.2") / UDP(dport=9) / Raw(b"a" * n) for n in (0, 40, 1400)]
    for i, p in enumerate(pkts):
        p.time = 1600000000 + i
    wrpcap(str(tmp_path / "in.pcap"), pkts, linktype=101)
    run_sluice("fd :: FromDump(in.pcap, STOP true) -> ToDump(out.pcap, SNAPLEN 65535, ENCAP IP);")
    assert (tmp_path / "out.pcap").read_bytes() == (tmp_path / "in.pcap").read_bytes()


def test_truncated_pcap_is_counted_not_fatal(run_sluice, tmp_path):
    pkts = sample_packets(False)
    wrpcap(str(tmp_path / "in.pcap"), pkts)
    data = (tmp_path / "in.pcap").read_bytes()
    (tmp_path / "cut.pcap").write_bytes(data[:-10])
    proc = run_sluice(
        "fd :: FromDump(cut.pcap, STOP true) -> c :: Counter -> Discard;",
        "-h", "c.count", "-h", "fd.errors",
    )
    assert "fd:" in proc.stderr and "truncated" in proc.stderr  # reported with the name
    assert "c.count:\n5\n" in proc.stdout
    assert "fd.errors:\n1\n" in proc.stdout


class Client:
    def __init__(self, port):
        deadline = time.time() + 20
        while True:
            try:
                self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        self.f = self.s.makefile("rb")

    def line(self):
        l = self.f.readline()
        assert l.endswith(b"\r\n"), l
        return l[:-2].decode()

    def cmd(self, text):
        self.s.sendall(text.encode() + b"\r\n")
        return self.line()

    def read(self, handler):
        head = self.cmd(f"READ {handler}")
        assert head == f"200 Read handler '{handler}' OK", head
        n = int(self.line().split()[1])
        return self.f.read(n).decode()


@contextlib.contextmanager
def control_session(args, port, cwd):
    """Runs sluice with `args`; yields a greeted Client on `port`. The session must end with
    `WRITE stop`: sluice must then exit with status 0."""
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        cl = Client(port)
        assert cl.line() == "Click::ControlSocket/1.3"
        yield cl
        assert cl.cmd("WRITE stop") == "200 Write handler 'stop' OK"
        proc.wait(timeout=20)
        assert proc.returncode == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_control_socket_read_write_stop(sluice_bin, tmp_path):
    port = free_port()
    conf = tmp_path / "cs.click"
    conf.write_text(
        f"ControlSocket(TCP, {port});\n"
        "src :: InfiniteSource(LIMIT 5) -> c :: Counter -> Discard;\n"
    )
    with control_session([str(sluice_bin), "-f", str(conf)], port, tmp_path) as cl:
        assert cl.read("c.count") == "5"
        assert cl.cmd("WRITE c.reset") == "200 Write handler 'c.reset' OK"
        assert cl.read("c.count") == "0"
        assert cl.cmd("READ nosuch.count").startswith("510")
        assert cl.cmd("READ c.nosuch").startswith("511")
        assert cl.cmd("CHECKWRITE c.reset").startswith("200")
        assert cl.cmd("LLRPC c#0") == "501 Cannot call LLRPC 'c#0' remotely"
        assert cl.cmd("LLRPC 0 c") == "500 Syntax error in 'llrpc'"


def test_hot_swap_over_control_socket(sluice_bin, tmp_path):
    """`-R`: a configuration written to `hotconfig` replaces the running one; the connection
    that wrote it goes on with the new one, queued packets move over, and a configuration
    that fails to initialise is refused with Click's messages while the old one runs on."""
    port = free_port()
    conf = "InfiniteSource(LIMIT 5, STOP false) -> q :: Queue -> d :: Discard(ACTIVE false);"
    with control_session([str(sluice_bin), "-R", "-p", str(port), "-e", conf], port, tmp_path) as cl:
        assert cl.read("q.length") == "5"
        new = "Idle -> q :: Queue -> d :: Discard(ACTIVE false); Idle -> c :: Counter -> Discard;"
        # Both commands at once: the second is answered by the new configuration.
        cl.s.sendall(f"WRITE hotconfig {new}\r\nREAD c.count\r\n".encode())
        assert cl.line() == "200 Write handler 'hotconfig' OK"
        assert cl.line() == "200 Read handler 'c.count' OK"
        assert cl.line() == "DATA 1" and cl.f.read(1) == b"0"
        assert cl.read("q.length") == "5"
        assert cl.cmd("WRITE hotconfig Print") == "520-Write handler 'hotconfig' error:"
        assert cl.line().endswith("'Print@1 :: Print' input 0 unused")
        assert cl.line().endswith("'Print@1 :: Print' output 0 unused")
        assert cl.line() == "520 Router could not be initialized!"
        assert cl.cmd("WRITE d.active true") == "200 Write handler 'd.active' OK"
        deadline = time.time() + 10
        while cl.read("d.count") != "5" and time.time() < deadline:
            time.sleep(0.05)
        assert cl.read("d.count") == "5"


@pytest.mark.parametrize("cls", ["Queue", "ThreadSafeQueue", "CPUQueue"])
def test_hot_swap_takes_packets_queued_between_threads(sluice_bin, tmp_path, cls):
    """A queue whose pusher and puller run on different threads is shared between them; a hot
    swap moves the packets it holds into its successor (of the same class) all the same."""
    port = free_port()

    def conf(cap):
        return (f"s :: InfiniteSource(LIMIT 50, STOP false) -> q :: {cls}({cap}) -> "
                "d :: Discard(ACTIVE false); StaticThreadSched(s 0, d 1);")

    args = [str(sluice_bin), "-R", "-j", "2", "-p", str(port), "-e", conf(100)]
    with control_session(args, port, tmp_path) as cl:
        deadline = time.time() + 10
        while cl.read("q.length") != "50" and time.time() < deadline:
            time.sleep(0.05)
        assert cl.read("q.length") == "50"
        assert cl.cmd(f"WRITE hotconfig {conf(200)}") == "200 Write handler 'hotconfig' OK"
        assert cl.read("q.capacity") == "200"
        assert cl.read("q.length") == "50"
        assert "hot swap" not in cl.read("drops")
        assert cl.cmd("WRITE d.active true") == "200 Write handler 'd.active' OK"
        while cl.read("d.count") != "50" and time.time() < deadline:
            time.sleep(0.05)
        assert cl.read("d.count") == "50"


@pytest.mark.parametrize("threads", [1, 2])
def test_hot_swaps_under_load_lose_and_repeat_nothing(sluice_bin, tmp_path, threads):
    """A source at a fixed rate runs through six hot swaps (alternating queue capacities, so
    each is a new configuration): every packet it sent reaches the sink exactly once, with one
    thread and with the source and the sink on different threads (the queue then a ring)."""
    port = free_port()
    total = 24000

    def conf(cap):
        c = (f"s :: RatedSource(RATE 12000, LIMIT {total}) -> q :: Queue({cap}) -> "
             "u :: Unqueue(BURST 32) -> c :: Counter -> d :: Discard;")
        return c + ("StaticThreadSched(s 0, u 1);" if threads > 1 else "")

    args = [str(sluice_bin), "-R", "-j", str(threads), "-p", str(port), "-e", conf(4096)]
    with control_session(args, port, tmp_path) as cl:
        for i in range(6):
            time.sleep(0.25)
            reply = cl.cmd(f"WRITE hotconfig {conf(3000 + 1000 * (i % 2))}")
            assert reply == "200 Write handler 'hotconfig' OK", reply
        assert 0 < int(cl.read("s.count")) < total, "the swaps happened while packets flowed"
        deadline = time.time() + 20
        while cl.read("d.count") != str(total) and time.time() < deadline:
            time.sleep(0.1)
        got = {h: int(cl.read(h)) for h in ("s.count", "c.count", "d.count", "q.drops")}
        assert got == {"s.count": total, "c.count": total, "d.count": total, "q.drops": 0}
        assert "hot swap" not in cl.read("drops")


def test_log_events_are_structured_and_quiet_by_default(sluice_bin, tmp_path):
    """`--log info --log-format json` writes a hot swap as JSON events on standard error;
    without `--log` the same run writes nothing there."""
    conf = "i :: Idle -> q :: Queue -> d :: Discard;"
    for log in (["--log", "info", "--log-format", "json"], []):
        port = free_port()
        args = [str(sluice_bin), *log, "-R", "-p", str(port), "-e", conf]
        proc = subprocess.Popen(args, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
        try:
            cl = Client(port)
            assert cl.line() == "Click::ControlSocket/1.3"
            assert cl.cmd(f"WRITE hotconfig {conf}") == "200 Write handler 'hotconfig' OK"
            assert cl.cmd("WRITE stop") == "200 Write handler 'stop' OK"
            _, err = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
        if not log:
            assert err == ""
            continue
        events = [json.loads(line) for line in err.splitlines()]
        messages = [e["fields"]["message"] for e in events]
        assert messages == ["hot swap: new configuration built",
                            "hot swap: new configuration installed"], err
        assert all(e["level"] == "INFO" for e in events)
        assert events[1]["fields"]["took_state"] == 4  # i, q, d and the ControlSocket
