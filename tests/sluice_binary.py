"""Where the test suites find the `sluice` binary: `$CARGO_TARGET_DIR/$SLUICE_PROFILE/sluice`
(defaults: `target`, the `release` profile; `scripts/test.sh` uses the `tests` profile that
`cargo test` has already built). Built once unless SLUICE_SKIP_BUILD=1 and it exists."""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
PROFILE = os.environ.get("SLUICE_PROFILE", "release")
BINARY = TARGET / PROFILE / "sluice"

_built = False


def ensure_built():
    """Builds the binary (once per process) unless told to skip; returns its path."""
    global _built
    if not _built and (os.environ.get("SLUICE_SKIP_BUILD") != "1" or not BINARY.exists()):
        subprocess.run(["cargo", "build", "--profile", PROFILE, "-q", "-p", "sluice-cli"],
                       cwd=ROOT, check=True)
    _built = True
    return BINARY
