"""`sluice plan` and `--plan auto|show` from the command line: the planned configuration
forwards every packet of the original once, on two threads (bench/placement/two-loads.click,
two SyntheticLoad stages)."""
import re
import subprocess

from sluice_binary import ROOT

CONF = str(ROOT / "bench" / "placement" / "two-loads.click")


def sluice(sluice_bin, *args, timeout=120):
    return subprocess.run([str(sluice_bin), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def counts(text):
    """`NAME.count` handler values from -h output."""
    return {m[0]: int(m[1]) for m in re.findall(r"^(\S+)\.count:\n(\d+)", text, re.M)}


def test_plan_reports_candidates_and_a_choice(sluice_bin):
    p = sluice(sluice_bin, "plan", CONF, "-j", "2", "N=20", "S=256K")
    assert p.returncode == 0, p.stderr
    assert "cloning" in p.stdout and "pipelining" in p.stdout
    assert re.search(r"^## choice", p.stdout, re.M), p.stdout
    assert "reason:" in p.stdout


def test_plan_auto_forwards_every_packet_once(sluice_bin):
    for size in ("128K", "4M"):
        p = sluice(sluice_bin, "-j", "2", "--plan", "auto", CONF, "N=20", f"S={size}",
                   "LIMIT=40000", "-h", "*.count", "-h", "drops")
        assert p.returncode == 0, p.stderr
        assert p.stderr.startswith("plan: "), p.stderr
        c = counts(p.stdout)
        sinks = {k: v for k, v in c.items() if k == "d" or k.startswith("d_t")}
        assert sum(sinks.values()) == 40000, (size, c)


def test_plan_show_prints_a_runnable_configuration(sluice_bin, tmp_path):
    p = sluice(sluice_bin, "-j", "2", "--plan", "show", CONF, "N=20", "S=1M", "LIMIT=30000")
    assert p.returncode == 0, p.stderr
    assert "StaticThreadSched" in p.stdout
    f = tmp_path / "planned.click"
    f.write_text(p.stdout)
    r = sluice(sluice_bin, "-j", "2", str(f), "-h", "*.count")
    assert r.returncode == 0, r.stderr
    c = counts(r.stdout)
    assert sum(v for k, v in c.items() if k == "d" or k.startswith("d_t")) == 30000, c


def test_plan_refuses_what_is_not_a_chain(sluice_bin):
    p = sluice(sluice_bin, "-j", "2", "--plan", "auto", "-e",
               "s :: InfiniteSource(LIMIT 10) -> t :: Tee -> Discard; t[1] -> Discard;")
    assert p.returncode != 0
    assert "chain" in p.stderr, p.stderr
