#!/usr/bin/env python3
"""Records Click's outputs for the differential cases (cases.py) as the expected results.

Usage: tests/differential/record.py CLICK_SOURCE_TREE

CLICK_SOURCE_TREE is a Click 2.1 tree built at userlevel (its binary is userlevel/click).
Writes expected/CASE/{stdout,stderr,status,OUTPUT...} and expected/CLICK_COMMIT, the commit
of the Click tree used.
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from cases import CASES

HERE = Path(__file__).resolve().parent


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2])
    tree = Path(sys.argv[1]).resolve()
    click = tree / "userlevel" / "click"
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    expected = HERE / "expected"
    for name, case in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            for f in (HERE / "cases" / case["dir"]).iterdir():
                shutil.copy(f, tmp)
            proc = subprocess.run([str(click), *case["args"]], cwd=tmp, capture_output=True,
                                  timeout=120)
            out = expected / name
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            (out / "stdout").write_bytes(proc.stdout)
            (out / "stderr").write_bytes(proc.stderr)
            (out / "status").write_text(f"{proc.returncode}\n")
            for o in case["outputs"]:
                shutil.copy(Path(tmp) / o, out / o)
        print(f"{name}: exit {proc.returncode}")
    (expected / "CLICK_COMMIT").write_text(f"{commit}\n")
    print(f"recorded with Click {commit}")


if __name__ == "__main__":
    main()
