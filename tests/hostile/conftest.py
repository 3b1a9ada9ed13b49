"""Shared helpers for the hostile-input tests: the binary and a runner that confines
each run to 3 GB of address space and a wall-clock limit, so a crash, a runaway allocation or a
hang shows up as a failed assertion rather than a stuck or killed test session."""
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from sluice_binary import ensure_built  # noqa: E402

MEMORY_LIMIT = 3_000_000 * 1024  # `ulimit -v 3000000`


@pytest.fixture(scope="session")
def sluice_bin():
    """Path to the `sluice` binary (tests/sluice_binary.py), built once per session."""
    return ensure_built()


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
