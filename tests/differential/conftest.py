"""Fixtures for the differential tests: the release `sluice` binary (as tests/e2e builds it)."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
BINARY = TARGET / "release" / "sluice"


@pytest.fixture(scope="session")
def sluice_bin():
    """Path to the release `sluice` binary, built once per test session."""
    if os.environ.get("SLUICE_SKIP_BUILD") != "1" or not BINARY.exists():
        subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "sluice-cli"], cwd=ROOT, check=True
        )
    return BINARY
