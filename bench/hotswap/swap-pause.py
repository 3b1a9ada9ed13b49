#!/usr/bin/env python3
"""Hot swap pause: how long a `hotconfig` write of a configuration with N elements keeps the
router from forwarding. Runs `sluice -R` on a loopback ControlSocket with a chain of N-4 Null
elements, writes the same configuration back SWAPS times and reports, per swap, the time
until the write is acknowledged (the new configuration is parsed and initialised while the
old one waits) and until the new configuration answers a read (installed and running).

Usage: bench/hotswap/swap-pause.py [SLUICE_BINARY] [N] [SWAPS]
"""
import socket
import subprocess
import sys
import time


def conf(n):
    chain = " -> ".join(["Null"] * (n - 4))
    return f"i :: Idle -> q :: Queue -> {chain} -> c :: Counter -> Discard(BURST 32);"


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/sluice"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    swaps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    proc = subprocess.Popen([binary, "-R", "-p", str(port), "-e", conf(n)])
    try:
        for _ in range(200):
            try:
                s = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.05)
        f = s.makefile("rb")
        f.readline()
        acks, installs = [], []
        for _ in range(swaps):
            t0 = time.perf_counter()
            s.sendall(f"WRITE hotconfig {conf(n)}\r\n".encode())
            reply = f.readline()
            assert reply.startswith(b"200"), reply
            t1 = time.perf_counter()
            s.sendall(b"READ c.count\r\n")
            f.readline()
            f.read(int(f.readline().split()[1]))
            t2 = time.perf_counter()
            acks.append(1000 * (t1 - t0))
            installs.append(1000 * (t2 - t0))
        s.sendall(b"WRITE stop\r\n")
        f.readline()
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    acks.sort()
    installs.sort()
    print(f"{n} elements, {swaps} swaps: built and initialised in {acks[len(acks) // 2]:.1f} ms "
          f"(median; max {acks[-1]:.1f}), running the new configuration after "
          f"{installs[len(installs) // 2]:.1f} ms (median; max {installs[-1]:.1f})")


if __name__ == "__main__":
    main()
