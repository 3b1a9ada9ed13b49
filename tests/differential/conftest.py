"""Fixtures for the differential tests: the `sluice` binary (tests/sluice_binary.py)."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from sluice_binary import ensure_built  # noqa: E402


@pytest.fixture(scope="session")
def sluice_bin():
    """Path to the `sluice` binary, built once per test session."""
    return ensure_built()
