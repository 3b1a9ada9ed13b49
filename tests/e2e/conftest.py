"""Shared fixtures for Sluice's end-to-end tests: the built binary and a runner.

Packets are crafted and dissected with scapy (an independent implementation), never with
Sluice's own parsers.
"""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
BINARY = TARGET / "release" / "sluice"


def _ensure_built():
    if os.environ.get("SLUICE_SKIP_BUILD") != "1" or not BINARY.exists():
        subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "sluice-cli"], cwd=ROOT, check=True
        )
    return BINARY


@pytest.fixture(scope="session")
def sluice_bin():
    """Path to the release `sluice` binary, built once per test session."""
    return _ensure_built()


@pytest.fixture
def run_sluice(sluice_bin, tmp_path):
    """Runs `sluice` on a configuration text; returns the CompletedProcess.

    Usage: run_sluice(config, *extra_args, check=True, timeout=60).
    The configuration is written to tmp_path/'test.click' and passed with -f.
    """

    def run(config, *args, check=True, timeout=60):
        conf = tmp_path / "test.click"
        conf.write_text(config)
        proc = subprocess.run(
            [str(sluice_bin), "--simtime", "-f", str(conf), *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"sluice exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
            )
        return proc

    return run
