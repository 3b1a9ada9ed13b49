"""End-to-end tests of the classifiers and route lookups, checked with scapy.

Classifier, IPClassifier and IPFilter: a scapy-crafted pcap of varied frames (ARP, IPv6, TCP,
UDP, ICMP, fragments, IP options, TOS values, short frames) goes through a configuration
whose outputs each go to their own ToDump; each output pcap is dissected with scapy and
compared with what a Python predicate (the pattern's meaning, written independently) says.
IPv6 patterns run on a mix of IPv4 and IPv6 frames (TCP, UDP, ICMPv6 echo, neighbor
solicitations and advertisements, extension headers, traffic classes, hop limits).

Route lookups: a table taken from ../shared/data/ipv4-prefixes.txt.gz (every Nth prefix
plus some nested ones) and a few thousand random destinations (inside table prefixes and
uniform) go through StaticIPLookup, LinearIPLookup, RadixIPLookup, DirectIPLookup and
RangeIPLookup; the destinations in each output's pcap must be those a Python longest-prefix-match reference
sends to that port, and the misses must be counted in `drops`.
"""
import gzip
import ipaddress
import random
from pathlib import Path

import pytest
from scapy.all import (ARP, ICMP, IP, TCP, UDP, Ether, ICMPv6EchoReply, ICMPv6EchoRequest,
                       ICMPv6ND_NA, ICMPv6ND_NS, IPOption_RR, IPv6, IPv6ExtHdrFragment,
                       IPv6ExtHdrHopByHop, Raw, rdpcap, wrpcap)

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "ipv4-prefixes.txt.gz"
MAC_R, MAC_H = "00:00:c0:ae:67:ef", "02:00:00:00:00:02"


def frames():
    """A deterministic mix of frames; each carries a unique IP id (or payload) tag."""
    rnd = random.Random(7)
    out = []
    srcs = ["198.18.0.2", "198.18.0.77", "198.18.1.9", "198.19.4.4"]
    dsts = ["198.18.0.1", "198.18.1.2", "198.18.1.200", "198.19.0.5", "198.18.2.3"]
    ident = 1
    for i in range(240):
        s, d = rnd.choice(srcs), rnd.choice(dsts)
        kind = rnd.choice(["tcp", "tcp", "udp", "udp", "icmp", "other"])
        tos = rnd.choice([0, 0, 0xB8, 0x20, 0x03])
        ttl = rnd.choice([1, 2, 64, 255])
        ip = IP(src=s, dst=d, id=ident, tos=tos, ttl=ttl)
        ident += 1
        if rnd.random() < 0.1:
            ip.options = [IPOption_RR(routers=["0.0.0.0"] * 2)]
        if kind == "tcp":
            flags = rnd.choice(["S", "SA", "A", "FA", "R", "PA"])
            l4 = TCP(sport=rnd.choice([1024, 4000, 80]), dport=rnd.choice([22, 80, 443, 8080]),
                     flags=flags, window=rnd.choice([512, 65535]))
        elif kind == "udp":
            l4 = UDP(sport=rnd.choice([53, 5000]), dport=rnd.choice([53, 123, 5000, 9]))
        elif kind == "icmp":
            l4 = ICMP(type=rnd.choice([0, 8, 3, 11]), code=0)
        else:
            ip.proto = 47
            l4 = Raw(b"\0" * 8)
        pkt = Ether(src=MAC_H, dst=MAC_R) / ip / l4 / Raw(bytes(rnd.randrange(0, 40)))
        if rnd.random() < 0.08:
            # A non-first fragment: transport fields are not there.
            pkt[IP].frag = 3
            pkt[IP].flags = 0
        elif rnd.random() < 0.05:
            pkt[IP].flags = "MF"
        out.append(pkt)
    out.append(Ether(src=MAC_H, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, psrc="198.18.0.2", pdst="198.18.0.1"))
    out.append(Ether(src=MAC_H, dst=MAC_R) / ARP(op=2, psrc="198.18.0.2", pdst="198.18.0.1"))
    out.append(Ether(src=MAC_H, dst=MAC_R) / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP())
    out.append(Ether(src=MAC_H, dst=MAC_R, type=0x0800) / Raw(b"\x45\x00"))  # truncated IP
    for k, p in enumerate(out):
        p.time = 1 + k * 0.001
    return out


@pytest.fixture(scope="module")
def pcap(tmp_path_factory):
    d = tmp_path_factory.mktemp("cls")
    f = d / "in.pcap"
    wrpcap(str(f), frames())
    return f


def tag(p):
    """Identity of a frame in the outputs: IP id, or the raw bytes for non-IP frames."""
    return ("ip", p[IP].id) if IP in p else ("raw", bytes(p))


def read_outs(tmp_path, nout):
    res = []
    for k in range(nout):
        f = tmp_path / f"out{k}.pcap"
        res.append(list(rdpcap(str(f))) if f.exists() and f.stat().st_size > 24 else [])
    return res


def check(tmp_path, inputs, nout, choose, drops_text):
    """`choose(pkt)` gives the expected output port or None (dropped)."""
    outs = read_outs(tmp_path, nout)
    expect = [[] for _ in range(nout)]
    dropped = 0
    for p in inputs:
        k = choose(p)
        if k is None:
            dropped += 1
        else:
            expect[k].append(tag(p))
    assert sum(1 for e in expect if e) >= min(2, nout), "the traffic exercises several outputs"
    for k in range(nout):
        got = [tag(Ether(bytes(p))) for p in outs[k]]
        assert got == expect[k], f"output {k}: got {len(got)} expected {len(expect[k])}"
    assert int(drops_text) == dropped


def handler(proc, name):
    """Value of a handler read with -h (a single -h prints the bare value, like Click)."""
    lines = (proc.stdout + proc.stderr).splitlines()
    if name + ":" in lines:
        return lines[lines.index(name + ":") + 1].strip()
    return [ln for ln in proc.stdout.splitlines() if ln.strip()][-1].strip()


def is_ip(p):
    return IP in p and len(bytes(p[IP])) >= 20 and p[IP].version == 4


def ip_bytes(p):
    return bytes(p)[14:]


# ---------------------------------------------------------------- Classifier (offset/value)


def test_classifier_ether_patterns(run_sluice, pcap, tmp_path):
    el = "Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -)"
    proc = run_sluice(f"FromDump({pcap}, STOP true) -> e :: {el};"
                      + "".join(f"e[{k}] -> ToDump(out{k}.pcap);" for k in range(4)), "-h", "e.drops")

    def choose(p):
        b = bytes(p)
        if b[12:14] == b"\x08\x06" and b[20:22] == b"\x00\x01":
            return 0
        if b[12:14] == b"\x08\x06" and b[20:22] == b"\x00\x02":
            return 1
        if b[12:14] == b"\x08\x00":
            return 2
        return 3

    check(tmp_path, frames(), 4, choose, handler(proc, "e.drops"))


def test_classifier_masks_negation_and_drop(run_sluice, pcap, tmp_path):
    # 23/06: TCP; 23/11 !36/0035: UDP not to port 53 (header without options only);
    # 15/b8%fc: DSCP 46 (EF); no '-': everything else dropped.
    el = "Classifier(12/0800 23/06, 12/0800 23/11 !36/0035, 12/0800 15/b8%fc)"
    proc = run_sluice(f"FromDump({pcap}, STOP true) -> e :: {el};"
                      + "".join(f"e[{k}] -> ToDump(out{k}.pcap);" for k in range(3)), "-h", "e.drops")

    def choose(p):
        b = bytes(p)
        if len(b) < 24 or b[12:14] != b"\x08\x00":
            return None
        if b[23] == 6:
            return 0
        if b[23] == 17 and not (len(b) >= 38 and b[36:38] == b"\x00\x35"):
            return 1
        if b[15] & 0xFC == 0xB8:
            return 2
        return None

    check(tmp_path, frames(), 3, choose, handler(proc, "e.drops"))


# ---------------------------------------------------------------- IPClassifier


def ip_frames():
    return [p for p in frames() if is_ip(p)]


@pytest.fixture(scope="module")
def ip_pcap(tmp_path_factory):
    d = tmp_path_factory.mktemp("clsip")
    f = d / "in.pcap"
    wrpcap(str(f), ip_frames())
    return f


def first_frag(ip):
    return ip.frag == 0


def run_ip(run_sluice, ip_pcap, element, nout):
    conf = (f"FromDump({ip_pcap}, STOP true) -> Strip(14) -> MarkIPHeader -> e :: {element};"
            + "".join(f"e[{k}] -> Unstrip(14) -> ToDump(out{k}.pcap);" for k in range(nout)))
    return run_sluice(conf, "-h", "e.drops")


IPC_PATTERNS = [
    ("tcp dst port 80 or tcp dst port 443",
     lambda ip: ip.proto == 6 and first_frag(ip) and TCP in ip and ip[TCP].dport in (80, 443)),
    ("udp and src host 198.18.0.2",
     lambda ip: ip.proto == 17 and ip.src == "198.18.0.2"),
    ("icmp type echo",
     lambda ip: ip.proto == 1 and first_frag(ip) and ICMP in ip and ip[ICMP].type == 8),
    ("dst net 198.18.1.0/24 && ip ttl < 3",
     lambda ip: ipaddress.ip_address(ip.dst) in ipaddress.ip_network("198.18.1.0/24") and ip.ttl < 3),
    ("ip dscp 46", lambda ip: ip.tos >> 2 == 46),
    ("syn and not ack",
     lambda ip: ip.proto == 6 and first_frag(ip) and TCP in ip and "S" in str(ip[TCP].flags)
     and "A" not in str(ip[TCP].flags)),
    ("ip frag", lambda ip: ip.frag != 0 or bool(ip.flags.MF)),
    ("-", lambda ip: True),
]


def classify_check(run_sluice, ip_pcap, tmp_path, pats):
    """Runs IPClassifier(patterns) on the IP frames and checks each output against the
    first matching reference predicate; returns the reference output of every frame."""
    el = "IPClassifier(" + ", ".join(p for p, _ in pats) + ")"
    proc = run_ip(run_sluice, ip_pcap, el, len(pats))

    def choose(p):
        for k, (_, f) in enumerate(pats):
            if f(p[IP]):
                return k
        return None

    check(tmp_path, ip_frames(), len(pats), choose, handler(proc, "e.drops"))
    return [choose(p) for p in ip_frames()]


def test_ipclassifier_expressions(run_sluice, ip_pcap, tmp_path):
    classify_check(run_sluice, ip_pcap, tmp_path, IPC_PATTERNS)


def test_ipclassifier_ternary_and_ports_by_name(run_sluice, ip_pcap, tmp_path):
    pats = [("src net 198.18.0.0/24 ? tcp port www : udp port domain",
             lambda ip: (ipaddress.ip_address(ip.src) in ipaddress.ip_network("198.18.0.0/24")
                         and ip.proto == 6 and first_frag(ip) and TCP in ip and 80 in (ip[TCP].sport, ip[TCP].dport))
             or (ipaddress.ip_address(ip.src) not in ipaddress.ip_network("198.18.0.0/24")
                 and ip.proto == 17 and first_frag(ip) and UDP in ip and 53 in (ip[UDP].sport, ip[UDP].dport))),
            ("tcp win >= 1024", lambda ip: ip.proto == 6 and first_frag(ip) and TCP in ip and ip[TCP].window >= 1024)]
    classify_check(run_sluice, ip_pcap, tmp_path, pats)


def transp_bytes(ip):
    raw = bytes(ip)
    return raw[(raw[0] & 0xf) * 4:]


def test_ipclassifier_data_fields(run_sluice, ip_pcap, tmp_path):
    pats = [("ip[9] == 17 and transp[2:2] >= 1024",
             lambda ip: bytes(ip)[9] == 17 and first_frag(ip) and len(transp_bytes(ip)) >= 4
             and int.from_bytes(transp_bytes(ip)[2:4], "big") >= 1024),
            ("ip[12:4] & 0xffffff00 == 0xc6120000",
             lambda ip: int.from_bytes(bytes(ip)[12:16], "big") & 0xffffff00 == 0xc6120000),
            ("transp[13] & 0x12 == 0x12",
             lambda ip: first_frag(ip) and len(transp_bytes(ip)) > 13 and transp_bytes(ip)[13] & 0x12 == 0x12),
            ("ip[8] < 3", lambda ip: bytes(ip)[8] < 3),
            ("-", lambda ip: True)]
    outs = classify_check(run_sluice, ip_pcap, tmp_path, pats)
    assert all(k in outs for k in range(4)), outs  # every data-field pattern matches something


def test_ipfilter_rules(run_sluice, ip_pcap, tmp_path):
    el = ("IPFilter(deny src host 198.19.4.4, allow tcp dst port 22, 1 icmp, "
          "drop ip proto 47, allow udp, deny all)")
    proc = run_ip(run_sluice, ip_pcap, el, 2)

    def choose(p):
        ip = p[IP]
        if ip.src == "198.19.4.4":
            return None
        if ip.proto == 6 and first_frag(ip) and TCP in ip and ip[TCP].dport == 22:
            return 0
        if ip.proto == 1:
            return 1
        if ip.proto == 47:
            return None
        if ip.proto == 17:
            return 0
        return None

    check(tmp_path, ip_frames(), 2, choose, handler(proc, "e.drops"))


# ---------------------------------------------------------------- IPv6 (mixed with IPv4)


def mixed_frames():
    """IPv4 and IPv6 frames; an IPv4 frame is tagged by its IP id, an IPv6 one by its flow
    label."""
    rnd = random.Random(11)
    out = []
    for i in range(1, 301):
        if rnd.random() < 0.3:
            ip = IP(src=rnd.choice(["198.18.0.2", "198.18.0.77"]), dst="198.18.1.2", id=i,
                    tos=rnd.choice([0, 0xB8]), ttl=rnd.choice([1, 64]))
            l4 = rnd.choice([TCP(dport=80, flags="S"), TCP(dport=22, flags="SA"),
                             UDP(dport=53), ICMP(type=8)])
            out.append(Ether(src=MAC_H, dst=MAC_R) / ip / l4)
            continue
        ip = IPv6(src=rnd.choice(["2001:db8::1", "2001:db8:1::5", "2001:db8:1:2::7", "fe80::1"]),
                  dst=rnd.choice(["2001:db8::2", "2001:db8:1::9", "ff02::1:ff00:2"]),
                  fl=i, tc=rnd.choice([0, 0, 0xB8, 0xB9, 0x03]), hlim=rnd.choice([1, 64, 255]))
        kind = rnd.choice(["tcp", "tcp", "udp", "udp", "echo", "reply", "ns", "na", "hbh", "frag"])
        l4 = {
            "tcp": lambda: TCP(sport=40000, dport=rnd.choice([22, 80, 443]),
                               flags=rnd.choice(["S", "SA", "A"])),
            "udp": lambda: UDP(sport=5353, dport=rnd.choice([53, 123])),
            "echo": lambda: ICMPv6EchoRequest(id=7, seq=i),
            "reply": lambda: ICMPv6EchoReply(id=7, seq=i),
            "ns": lambda: ICMPv6ND_NS(tgt="2001:db8::2"),
            "na": lambda: ICMPv6ND_NA(tgt="2001:db8::2"),
            "hbh": lambda: IPv6ExtHdrHopByHop() / UDP(dport=53),
            "frag": lambda: IPv6ExtHdrFragment(offset=0, m=1, id=i) / UDP(dport=53),
        }[kind]()
        out.append(Ether(src=MAC_H, dst="33:33:ff:00:00:02") / ip / l4)
    for k, p in enumerate(out):
        p.time = 1 + k * 0.001
    return out


def tag6(p):
    return ("ip6", p[IPv6].fl) if IPv6 in p else ("ip", p[IP].id)


@pytest.fixture(scope="module")
def mixed_pcap(tmp_path_factory):
    f = tmp_path_factory.mktemp("cls6") / "in.pcap"
    wrpcap(str(f), mixed_frames())
    return f


def after6(p, nh):
    """The layer right after the IPv6 fixed header if its next header is `nh`, else None."""
    if IPv6 not in p or p[IPv6].nh != nh:
        return None
    return p[IPv6].payload


def tcp_of(p):
    """The TCP header that a transport primitive reads (IPv4 first fragments, IPv6 packets
    whose next header is TCP), or None."""
    if IPv6 in p:
        return after6(p, 6)
    return p[TCP] if p[IP].proto == 6 and p[IP].frag == 0 and TCP in p else None


def in6(a, net):
    return ipaddress.ip_address(a) in ipaddress.ip_network(net)


def run_mixed(run_sluice, pcap, element, nout, tmp_path):
    conf = (f"FromDump({pcap}, STOP true) -> MarkIPHeader(14) -> e :: {element};"
            + "".join(f"e[{k}] -> ToDump(out{k}.pcap);" for k in range(nout)))
    proc = run_sluice(conf, "-h", "e.drops")
    return read_outs(tmp_path, nout), int(handler(proc, "e.drops"))


def check_mixed(outs, drops, choose):
    expect = [[] for _ in outs]
    dropped = 0
    for p in mixed_frames():
        k = choose(p)
        if k is None:
            dropped += 1
        else:
            expect[k].append(tag6(p))
    assert all(expect), [len(e) for e in expect]  # every output has traffic
    for k, got in enumerate(outs):
        assert [tag6(Ether(bytes(p))) for p in got] == expect[k], f"output {k}"
    assert drops == dropped


MIXED_PATTERNS = [
    ("icmp6 type echo-request", lambda p: (m := after6(p, 58)) is not None and m.type == 128),
    ("icmp6 type neighbor-solicitation and ip6 hlim 255",
     lambda p: (m := after6(p, 58)) is not None and m.type == 135 and p[IPv6].hlim == 255),
    ("ip6 src net 2001:db8:1::/48 and tcp dst port 80",
     lambda p: IPv6 in p and in6(p[IPv6].src, "2001:db8:1::/48")
     and (t := tcp_of(p)) is not None and t.dport == 80),
    ("dst host 2001:db8::2 and udp", lambda p: IPv6 in p and p[IPv6].dst == "2001:db8::2"
     and p[IPv6].nh == 17),
    ("tcp opt syn and not tcp opt ack",
     lambda p: (t := tcp_of(p)) is not None and t.flags.S and not t.flags.A),
    ("ip6 dscp 46 or ip dscp 46",
     lambda p: (p[IPv6].tc if IPv6 in p else p[IP].tos) >> 2 == 46),
    ("src host 198.18.0.2", lambda p: IP in p and p[IP].src == "198.18.0.2"),
    ("ip6 hlim < 2 or ip ttl < 2", lambda p: (p[IPv6].hlim if IPv6 in p else p[IP].ttl) < 2),
    ("ip6 frag", lambda p: IPv6 in p and p[IPv6].nh == 44),
    ("ip6", lambda p: IPv6 in p),
    ("-", lambda p: True),
]


def test_ipclassifier_ipv6_mixed(run_sluice, mixed_pcap, tmp_path):
    el = "IPClassifier(" + ", ".join(pat for pat, _ in MIXED_PATTERNS) + ")"
    outs, drops = run_mixed(run_sluice, mixed_pcap, el, len(MIXED_PATTERNS), tmp_path)

    def choose(p):
        return next(k for k, (_, f) in enumerate(MIXED_PATTERNS) if f(p))

    check_mixed(outs, drops, choose)


def test_ipfilter_ipv6_mixed(run_sluice, mixed_pcap, tmp_path):
    el = ("IPFilter(allow icmp6 echo-reply, 1 ip6 dst net ff02::/16, drop ip6 hlim < 2, "
          "allow ip6 tcp dst port 22 or 443, 1 udp dst port domain, allow ip, deny all)")
    outs, drops = run_mixed(run_sluice, mixed_pcap, el, 2, tmp_path)

    def choose(p):
        if (m := after6(p, 58)) is not None and m.type == 129:
            return 0
        if IPv6 in p and in6(p[IPv6].dst, "ff02::/16"):
            return 1
        if IPv6 in p and p[IPv6].hlim < 2:
            return None
        if IPv6 in p and (t := after6(p, 6)) is not None and t.dport in (22, 443):
            return 0
        if IPv6 in p and (u := after6(p, 17)) is not None and u.dport == 53:
            return 1
        if IP in p and (u := p.getlayer(UDP)) is not None and p[IP].frag == 0 and u.dport == 53:
            return 1
        if IP in p:
            return 0
        return None

    check_mixed(outs, drops, choose)


# ---------------------------------------------------------------- route lookups


def load_table(every=200):
    routes = {}
    with gzip.open(DATA, "rt") as f:
        for n, line in enumerate(f):
            if line.startswith("#") or not line.strip():
                continue
            if n % every:
                continue
            pfx, port = line.split()
            routes[ipaddress.ip_network(pfx)] = int(port)
    # Nested prefixes: a covering /8 and /16 under some entries, and a few host routes.
    some = list(routes)[:40]
    for net in some[:10]:
        routes.setdefault(net.supernet(new_prefix=max(8, net.prefixlen - 8)), 15)
    for net in some[10:20]:
        routes[ipaddress.ip_network((int(net.network_address) + 1, 32))] = 14
    return routes


def reference(routes):
    by_len = {}
    for net, port in routes.items():
        by_len.setdefault(net.prefixlen, {})[int(net.network_address)] = port
    lens = sorted(by_len, reverse=True)

    def lookup(a):
        for ln in lens:
            m = (0xFFFFFFFF << (32 - ln)) & 0xFFFFFFFF if ln else 0
            p = by_len[ln].get(a & m)
            if p is not None:
                return p
        return None

    return lookup


@pytest.fixture(scope="module")
def lpm_case(tmp_path_factory):
    assert DATA.exists(), f"{DATA} missing: ../shared/data must sit beside the repository"
    routes = load_table()
    rnd = random.Random(42)
    nets = list(routes)
    dsts = []
    for _ in range(2500):
        if rnd.random() < 0.6:
            n = rnd.choice(nets)
            dsts.append(int(n.network_address) + rnd.randrange(n.num_addresses))
        else:
            dsts.append(rnd.getrandbits(32))
    d = tmp_path_factory.mktemp("lpm")
    pk = []
    for k, a in enumerate(dsts):
        p = IP(src="198.18.0.2", dst=str(ipaddress.ip_address(a)), id=k & 0xFFFF) / UDP(dport=9)
        p.time = 1 + k * 1e-4
        pk.append(p)
    f = d / "dsts.pcap"
    wrpcap(str(f), pk)  # raw IP (DLT_RAW)
    return routes, dsts, f


@pytest.mark.parametrize("cls", ["StaticIPLookup", "LinearIPLookup", "RadixIPLookup", "DirectIPLookup",
                                 "RangeIPLookup"])
def test_lookup_matches_reference(run_sluice, lpm_case, tmp_path, cls):
    routes, dsts, f = lpm_case
    ref = reference(routes)
    table = ",\n ".join(f"{n} {p}" for n, p in routes.items())
    conf = (f"FromDump({f}, STOP true) -> GetIPAddress(16) -> e :: {cls}({table});\n"
            + "".join(f"e[{k}] -> ToDump(port{k}.pcap, ENCAP IP);\n" for k in range(16)))
    proc = run_sluice(conf, "-h", "e.drops", timeout=180)
    expect = [[] for _ in range(16)]
    misses = 0
    for a in dsts:
        p = ref(a)
        if p is None:
            misses += 1
        else:
            expect[p].append(str(ipaddress.ip_address(a)))
    for k in range(16):
        out = tmp_path / f"port{k}.pcap"
        got = [IP(bytes(p)).dst for p in rdpcap(str(out))] if out.exists() and out.stat().st_size > 24 else []
        assert got == expect[k], f"{cls} port {k}: {len(got)} vs {len(expect[k])}"
    assert int(handler(proc, "e.drops")) == misses
    assert misses > 0 and sum(map(len, expect)) > 1000


def test_lookup_handler_agrees(run_sluice, lpm_case):
    routes, dsts, _ = lpm_case
    ref = reference(routes)
    table = ", ".join(f"{n} {p}" for n, p in routes.items())
    sample = dsts[:60]
    script = " ".join(f"read e.lookup {ipaddress.ip_address(a)}," for a in sample)
    conf = f"e :: RadixIPLookup({table}); Idle -> e; e[0] -> Discard; " \
           + "".join(f"e[{k}] -> Discard; " for k in range(1, 16)) \
           + f"Script({script} stop);"
    proc = run_sluice(conf)
    vals = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip() and not ln.startswith("e.lookup")]
    got = [int(v.split()[0]) for v in vals]
    assert got == [ref(a) if ref(a) is not None else -1 for a in sample]
