"""Shared fixtures for Sluice's end-to-end tests: the built binary and a runner.

Packets are crafted and dissected with scapy (an independent implementation), never with
Sluice's own parsers.
"""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from sluice_binary import ensure_built  # noqa: E402


@pytest.fixture(scope="session")
def sluice_bin():
    """Path to the `sluice` binary (tests/sluice_binary.py), built once per test session."""
    return ensure_built()


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
