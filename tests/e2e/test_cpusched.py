"""Panama's Figure 13 as a test: integrated CPU and link scheduling with CPUSched.

Runs bench/qos/fig13.py --check against the built binary (wall clock, real cycles): without
CPU scheduling the conforming flow and the one sending twice its reservation progress at
the same rate; with CPUSched the conforming flow receives at least 95% of its reservation
and about twice the other's rate. The script writes its time lines to a temporary folder.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_figure_13(sluice_bin, tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "qos" / "fig13.py"), "--sluice", str(sluice_bin),
         "--time", "2", "--check", "--no-plot", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = (tmp_path / "fig13.csv").read_text().splitlines()
    assert len(rows) > 30, rows
