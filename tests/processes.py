"""Processes and ports the end-to-end tests use: a free loopback port, and ending a process a
test started (by its PID)."""
import os
import signal
import socket
import subprocess


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc):
    """Ends a process this test started, by its PID: SIGTERM, then SIGKILL after 5 s."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
