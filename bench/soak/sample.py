#!/usr/bin/env python3
"""Samples a running Sluice router for the soak benchmark (bench/soak/run.sh).

Every INTERVAL seconds for SECONDS seconds it records, as one CSV row: the time, the router
process's resident memory (VmRSS), the generator's and the sink's interface counters (read
inside their network namespaces) and the sum of every element's `drops` handler, read through
the router's ControlSocket (a Unix socket). After SECONDS it goes on sampling until the
generator has stopped sending (two samples with the same offered count, 10 s at most), so
that the last row counts every packet delivered. It stops early, with status 1, if the router
process ends.

Usage: sample.py PID SOCKET GEN_NS SINK_NS SECONDS INTERVAL OUT.csv
"""
import csv
import socket
import subprocess
import sys
import time


class Control:
    """A ControlSocket client (Click's protocol: code lines, `DATA N` then N bytes)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.buf = b""
        self.line()  # the greeting

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("ControlSocket closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line.decode()

    def read(self, handler):
        """The value of a read handler, or None if it fails."""
        self.s.sendall(f"READ {handler}\n".encode())
        code = self.line()
        while code[3:4] == "-":
            code = self.line()
        if not code.startswith("200"):
            return None
        n = int(self.line().split()[1])
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("ControlSocket closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data.decode()


def netns_counter(ns, ifname, counter):
    out = subprocess.run(
        ["ip", "netns", "exec", ns, "cat", f"/sys/class/net/{ifname}/statistics/{counter}"],
        capture_output=True, text=True, check=True)
    return int(out.stdout)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    pid, sock, gen_ns, sink_ns = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    secs, interval, out = float(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
    ctl = Control(sock)
    names = ctl.read("list").split("\n")[1:]
    droppers = [n for n in names if n and ctl.read(f"{n}.drops") is not None]
    start = time.monotonic()
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t", "rss_kb", "offered", "gen_dropped", "forwarded", "sluice_drops"])
        k, last_offered = 0, None
        while True:
            try:
                drops = sum(int(ctl.read(f"{n}.drops") or 0) for n in droppers)
                offered = netns_counter(gen_ns, "eth0", "tx_packets")
                dropped = netns_counter(gen_ns, "eth0", "tx_dropped")
                forwarded = netns_counter(sink_ns, "eth0", "rx_packets")
                # The time of the forwarded count, which the rates are computed from.
                t = time.monotonic() - start
                row = [f"{t:.2f}", rss_kb(pid), offered, dropped, forwarded, drops]
            except (OSError, ConnectionError, subprocess.CalledProcessError) as e:
                print(f"sample.py: the router is gone at {time.monotonic() - start:.1f} s: {e}",
                      file=sys.stderr)
                return 1
            w.writerow(row)
            f.flush()
            if t >= secs and (row[2] == last_offered or t >= secs + 10):
                for n in droppers:
                    print(f"drops {n}: {ctl.read(f'{n}.drops').strip()}")
                return 0
            last_offered = row[2]
            k += 1
            time.sleep(max(0.0, start + k * interval - time.monotonic()))


if __name__ == "__main__":
    sys.exit(main())
