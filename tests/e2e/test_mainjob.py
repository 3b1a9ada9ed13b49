"""The README's main job (scripts/main-job.sh): the generated Figure 8 router on generated
traffic. Runs it (skipping setup and build: the session fixture built the binary) and checks
that the summary's numbers add up, against the traffic manifest and independently of
Sluice's handlers where possible (output pcaps dissected with scapy).
"""
import json
import os
import subprocess
from pathlib import Path

import pytest
from scapy.all import ICMP, IP, UDP, Ether, rdpcap

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def job(sluice_bin, tmp_path_factory):
    work = tmp_path_factory.mktemp("mainjob")
    env = dict(os.environ, MAINJOB_SKIP_SETUP="1", MAINJOB_SKIP_BUILD="1",
               CARGO_TARGET_DIR=str(Path(sluice_bin).parents[1]))
    proc = subprocess.run([str(ROOT / "scripts" / "main-job.sh"), str(work)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((work / "summary.json").read_text())
    manifest = json.loads((work / "manifest.json").read_text())
    return work, proc.stdout, summary, manifest


def kinds(manifest):
    out = {}
    for ks in manifest.values():
        for k, v in ks.items():
            out[k] = out.get(k, 0) + v
    return out


def test_summary_printed_and_accounted(job):
    _, out, s, _ = job
    for head in ("Forwarded, per output interface", "ICMP sent by the router, by type",
                 "Dropped, by reason", "Accounting"):
        assert head in out
    assert ": OK" in out
    assert s["accounted"] == s["total_in"]
    assert s["total_forwarded"] == sum(s["forwarded"].values())
    assert s["total_dropped"] == sum(s["dropped"].values())


def test_numbers_match_the_traffic(job):
    _, _, s, m = job
    k = kinds(m)
    assert s["total_in"] == sum(k.values())
    assert s["arp_learned"] == k["ARP reply (neighbour announces itself)"]
    assert s["arp_answered"] == k["ARP request for the router (answered)"]
    assert s["host"] == k["to the router itself (host)"]
    assert s["total_forwarded"] == (k["normal (forwarded)"] + k["normal via gateway (forwarded)"]
                                    + k["over-MTU (fragmented)"]
                                    + k["same-interface (forwarded + ICMP redirect)"])
    assert s["icmp"]["time exceeded (TTL)"] == k["TTL 1 (ICMP time exceeded)"]
    assert s["icmp"]["destination unreachable (fragmentation needed)"] == \
        k["over-MTU with DF (ICMP fragmentation needed)"]
    assert s["icmp"]["redirect (host)"] == k["same-interface (forwarded + ICMP redirect)"]
    d = s["dropped"]
    assert d["bad IP checksum (chk)"] == k["bad IP checksum (dropped)"]
    assert d["no route (rt)"] == k["no route (dropped)"]
    assert s["discarded"] == k["IPv6 frame (other protocol, dropped)"]
    assert sum(v for r, v in d.items() if r.startswith("other host")) == \
        k["for another Ethernet host (filtered)"]
    assert s["total_dropped"] == (k["bad IP checksum (dropped)"] + k["no route (dropped)"]
                                  + k["for another Ethernet host (filtered)"])
    assert s["pending"] == 0


def test_outputs_dissected_by_scapy(job):
    work, _, s, _ = job
    routers = {"198.18.0.1", "198.18.1.1", "198.18.2.1"}
    icmp_types = {}
    for name in ("eth0", "eth1", "eth2"):
        pkts = rdpcap(str(work / f"{name}-out.pcap"))
        fwd = 0
        for p in pkts:
            if IP not in p:
                continue
            ip = p[IP]
            if ip.src in routers:
                assert ICMP in p
                icmp_types[ip[ICMP].type] = icmp_types.get(ip[ICMP].type, 0) + 1
                continue
            # Forwarded: TTL decremented from 64, valid checksum, router's source MAC.
            assert ip.ttl == 63
            if ip.frag == 0:
                fwd += 1
            raw = bytes(ip)[: ip.ihl * 4]
            fresh = IP(raw)
            del fresh.chksum
            assert IP(bytes(fresh)).chksum == ip.chksum
        assert fwd == s["forwarded"][name]
        if name == "eth2":
            # MTU 576 on eth2: no frame longer than 576 bytes of IP.
            assert all(len(p[IP]) <= 576 for p in pkts if IP in p)
    assert icmp_types.get(11) == s["icmp"]["time exceeded (TTL)"]
    assert icmp_types.get(5) == s["icmp"]["redirect (host)"]
    host = rdpcap(str(work / "host.pcap"))
    assert len(host) == s["host"]
    assert all(p[IP].dst in routers for p in host)
