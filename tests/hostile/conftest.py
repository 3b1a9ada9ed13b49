"""Shared helpers for the hostile-input tests: the release binary and a runner that confines
each run to 3 GB of address space and a wall-clock limit, so a crash, a runaway allocation or a
hang shows up as a failed assertion rather than a stuck or killed test session."""
import os
import resource
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
BINARY = TARGET / "release" / "sluice"
MEMORY_LIMIT = 3_000_000 * 1024  # `ulimit -v 3000000`


@pytest.fixture(scope="session")
def sluice_bin():
    """Path to the release `sluice` binary, built once per session unless
    SLUICE_SKIP_BUILD=1 and it exists."""
    if os.environ.get("SLUICE_SKIP_BUILD") != "1" or not BINARY.exists():
        subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "sluice-cli"], cwd=ROOT, check=True
        )
    return BINARY


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.fixture
def run_limited(sluice_bin, tmp_path):
    """Runs `sluice ARGS...` under the memory limit and `timeout` seconds; returns
    (returncode, stdout bytes, stderr text). A configuration given as `config` (str or bytes)
    is written to tmp_path/'test.click' and its path replaces every '{conf}' in ARGS."""

    def run(*args, config=None, timeout=30):
        conf = tmp_path / "test.click"
        if config is not None:
            conf.write_bytes(config.encode() if isinstance(config, str) else config)
        argv = [str(sluice_bin)] + [a.replace("{conf}", conf.name) for a in args]
        try:
            proc = subprocess.run(
                argv,
                cwd=tmp_path,
                capture_output=True,
                timeout=timeout,
                preexec_fn=_limit_memory,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"sluice {' '.join(args)[:200]} ran past {timeout} s")
        return proc.returncode, proc.stdout, proc.stderr.decode(errors="replace")

    return run
