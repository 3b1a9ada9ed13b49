#!/usr/bin/env python3
"""Traffic generator and summary for scripts/main-job.sh (Python standard library only).

    main-job.py gen DIR       writes DIR/<if>-in.pcap for the topology below and
                              DIR/manifest.json (what was sent, by kind)
    main-job.py summary DIR HANDLERS
                              reads the router's output pcaps (DIR/<if>-out.pcap,
                              DIR/host.pcap) and its handler dump (the output of
                              `sluice -h ...`), prints what was forwarded per interface,
                              dropped by reason and answered with ICMP by type, and checks
                              that every input frame is accounted for; with --json FILE
                              also writes the numbers as JSON.

Topology (three interfaces, RadixIPLookup):
    eth0 198.18.0.1/24   hosts 198.18.0.2-.5, gateway 198.18.0.254 (route 198.19.0.0/16)
    eth1 198.18.1.1/24   hosts 198.18.1.2-.5
    eth2 198.18.2.1/24   hosts 198.18.2.2-.5, MTU 576
Each input file starts (t=0) with ARP replies from that interface's neighbours, which
teach the router their Ethernet addresses; the traffic follows from t=1.
"""
import json
import random
import struct
import sys
from collections import Counter, defaultdict
from pathlib import Path

IFS = [
    {"name": "eth0", "ip": "198.18.0.1", "len": 24, "eth": "00:00:c0:00:00:01", "mtu": 1500},
    {"name": "eth1", "ip": "198.18.1.1", "len": 24, "eth": "00:00:c0:00:01:01", "mtu": 1500},
    {"name": "eth2", "ip": "198.18.2.1", "len": 24, "eth": "00:00:c0:00:02:01", "mtu": 576},
]
GATEWAY = ("198.18.0.254", 0)  # on eth0, for 198.19.0.0/16
ROUTES = ["198.19.0.0/16:198.18.0.254:eth0"]
ICMP_NAMES = {
    (0, None): "echo reply",
    (3, 0): "destination unreachable (net)",
    (3, 1): "destination unreachable (host)",
    (3, 3): "destination unreachable (port)",
    (3, 4): "destination unreachable (fragmentation needed)",
    (5, 0): "redirect (net)",
    (5, 1): "redirect (host)",
    (8, None): "echo request",
    (11, 0): "time exceeded (TTL)",
    (12, 0): "parameter problem",
}


def ip2b(a):
    return bytes(int(x) for x in a.split("."))


def b2ip(b):
    return ".".join(str(x) for x in b)


def mac2b(m):
    return bytes(int(x, 16) for x in m.split(":"))


def host_mac(k, h):
    return f"02:00:00:00:{k:02x}:{h:02x}"


def host_ip(k, h):
    return f"198.18.{k}.{h}"


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(src, dst, proto, payload, ttl=64, ident=0, df=False, tos=0, options=b"", bad_sum=False):
    hl = 20 + len(options)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | hl // 4, tos, hl + len(payload), ident,
                      0x4000 if df else 0, ttl, proto, 0, ip2b(src), ip2b(dst)) + options
    c = csum(hdr)
    if bad_sum:
        c ^= 0x5A5A
    return hdr[:10] + struct.pack("!H", c) + hdr[12:] + payload


def udp(sport, dport, data):
    return struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data


def icmp_echo(ident, seq, data):
    body = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + data
    return body[:2] + struct.pack("!H", csum(body)) + body[4:]


def ether(dst, src, ethertype, payload):
    return mac2b(dst) + mac2b(src) + struct.pack("!H", ethertype) + payload


def arp(op, sha, spa, tha, tpa):
    return struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, mac2b(sha), ip2b(spa),
                       mac2b(tha), ip2b(tpa))


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for t, fr in frames:
            sec = int(t)
            usec = int(round((t - sec) * 1e6))
            f.write(struct.pack("<IIII", sec, usec, len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    data = Path(path).read_bytes() if Path(path).exists() else b""
    if len(data) < 24:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    out, off = [], 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        out.append((linktype, data[off:off + incl]))
        off += incl
    return out


def generate(d, seed=1812, n_normal=600):
    """Writes the input pcaps; returns the manifest (frames sent per kind and interface)."""
    rnd = random.Random(seed)
    d = Path(d)
    d.mkdir(parents=True, exist_ok=True)
    per_if = {i["name"]: [] for i in IFS}
    kinds = defaultdict(Counter)
    t = {i["name"]: 1.0 for i in IFS}

    def add(k, frame, kind):
        name = IFS[k]["name"]
        t[name] += 0.001
        per_if[name].append((t[name], frame))
        kinds[name][kind] += 1

    # Neighbours announce themselves (t = 0).
    for k, i in enumerate(IFS):
        hosts = [(host_ip(k, h), host_mac(k, h)) for h in range(2, 6)]
        if k == GATEWAY[1]:
            hosts.append((GATEWAY[0], "02:00:00:00:00:fe"))
        for n, (hip, hmac) in enumerate(hosts):
            fr = ether(i["eth"], hmac, 0x0806, arp(2, hmac, hip, i["eth"], i["ip"]))
            per_if[i["name"]].append((n * 0.01, fr))
            kinds[i["name"]]["ARP reply (neighbour announces itself)"] += 1

    def src_of(k):
        h = rnd.randrange(2, 6)
        return host_ip(k, h), host_mac(k, h)

    def to_router(k, payload_ip):
        return ether(IFS[k]["eth"], src_of(k)[1], 0x0800, payload_ip)

    for n in range(n_normal):
        k = rnd.randrange(3)
        dk = (k + 1 + rnd.randrange(2)) % 3
        sip, smac = src_of(k)
        dip = host_ip(dk, rnd.randrange(2, 6))
        size = rnd.choice([18, 64, 200, 500])
        if rnd.random() < 0.2:
            pkt = ipv4(sip, dip, 1, icmp_echo(7, n, bytes(size)), ident=n)
        else:
            pkt = ipv4(sip, dip, 17, udp(1000 + n, 53, bytes(size)), ident=n)
        add(k, ether(IFS[k]["eth"], smac, 0x0800, pkt), "normal (forwarded)")
        if n % 10 == 0:
            # Via the gateway (route 198.19/16 on eth0).
            k = rnd.randrange(1, 3)
            sip, smac = src_of(k)
            pkt = ipv4(sip, f"198.19.{rnd.randrange(256)}.{rnd.randrange(1, 255)}", 17,
                       udp(2000 + n, 80, bytes(32)), ident=n)
            add(k, ether(IFS[k]["eth"], smac, 0x0800, pkt), "normal via gateway (forwarded)")
        if n % 12 == 0:
            k = rnd.randrange(3)
            sip, smac = src_of(k)
            pkt = ipv4(sip, host_ip((k + 1) % 3, 2), 17, udp(3000, 33434, bytes(20)), ttl=1, ident=n)
            add(k, ether(IFS[k]["eth"], smac, 0x0800, pkt), "TTL 1 (ICMP time exceeded)")
        if n % 15 == 0:
            k = rnd.randrange(3)
            sip, smac = src_of(k)
            pkt = ipv4(sip, host_ip((k + 1) % 3, 3), 17, udp(4000, 9, bytes(40)), ident=n, bad_sum=True)
            add(k, ether(IFS[k]["eth"], smac, 0x0800, pkt), "bad IP checksum (dropped)")
        if n % 20 == 0:
            k = rnd.randrange(3)
            sip, smac = src_of(k)
            kind = rnd.choice(["udp", "ping"])
            rip = IFS[rnd.randrange(3)]["ip"]
            if kind == "udp":
                pkt = ipv4(sip, rip, 17, udp(5000, 161, bytes(30)), ident=n)
            else:
                pkt = ipv4(sip, rip, 1, icmp_echo(9, n, bytes(56)), ident=n)
            add(k, ether(IFS[k]["eth"], smac, 0x0800, pkt), "to the router itself (host)")
        if n % 25 == 0:
            k = rnd.randrange(3)
            sip, smac = src_of(k)
            fr = ether("ff:ff:ff:ff:ff:ff", smac, 0x0806,
                       arp(1, smac, sip, "00:00:00:00:00:00", IFS[k]["ip"]))
            add(k, fr, "ARP request for the router (answered)")
        if n % 18 == 0:
            # Over eth2's MTU of 576: fragmented, or with DF an ICMP "fragmentation needed".
            k = rnd.randrange(2)
            sip, smac = src_of(k)
            df = n % 36 == 0
            pkt = ipv4(sip, host_ip(2, 4), 17, udp(6000, 7, bytes(1000)), ident=n, df=df)
            add(k, ether(IFS[k]["eth"], smac, 0x0800, pkt),
                "over-MTU with DF (ICMP fragmentation needed)" if df else "over-MTU (fragmented)")
        if n % 40 == 0:
            # Back out of the interface it came in on: forwarded, and an ICMP redirect.
            sip, smac = host_ip(1, 2), host_mac(1, 2)
            pkt = ipv4(sip, host_ip(1, 5), 17, udp(7000, 7, bytes(20)), ident=n)
            add(1, ether(IFS[1]["eth"], smac, 0x0800, pkt), "same-interface (forwarded + ICMP redirect)")
        if n % 50 == 0:
            k = rnd.randrange(3)
            sip, smac = src_of(k)
            pkt = ipv4(sip, "203.0.113.9", 17, udp(8000, 7, bytes(20)), ident=n)
            add(k, ether(IFS[k]["eth"], smac, 0x0800, pkt), "no route (dropped)")
        if n % 60 == 0:
            k = rnd.randrange(3)
            sip, smac = src_of(k)
            fr = ether(IFS[k]["eth"], smac, 0x86DD, bytes(60))
            add(k, fr, "IPv6 frame (other protocol, dropped)")
        if n % 45 == 0:
            k = rnd.randrange(3)
            sip, smac = src_of(k)
            pkt = ipv4(sip, host_ip((k + 2) % 3, 2), 17, udp(9000, 7, bytes(20)), ident=n)
            fr = ether("02:99:99:99:99:99", smac, 0x0800, pkt)
            add(k, fr, "for another Ethernet host (filtered)")

    for i in IFS:
        write_pcap(d / f"{i['name']}-in.pcap", sorted(per_if[i["name"]], key=lambda x: x[0]))
    manifest = {k: dict(v) for k, v in kinds.items()}
    (d / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return manifest


def parse_handlers(text):
    """Parses `sluice -h` output ("ELEM.HANDLER:" line, value lines, blank line)."""
    res, name, buf = {}, None, []
    for line in text.splitlines():
        if name is None:
            if line.endswith(":"):
                name, buf = line[:-1], []
        elif line == "":
            res[name] = "\n".join(buf)
            name = None
        else:
            buf.append(line)
    if name is not None:
        res[name] = "\n".join(buf)
    return res


def num(h, key):
    try:
        return int(h.get(key, "0").split()[0])
    except (ValueError, IndexError):
        return 0


def dissect(frame):
    """(kind, info) of an Ethernet frame written by the router."""
    if len(frame) < 14:
        return "short", {}
    et = struct.unpack("!H", frame[12:14])[0]
    if et == 0x0806 and len(frame) >= 42:
        op = struct.unpack("!H", frame[20:22])[0]
        return ("arp-reply" if op == 2 else "arp-request"), {}
    if et != 0x0800 or len(frame) < 34:
        return "other", {}
    ip = frame[14:]
    hl = (ip[0] & 15) * 4
    src, dst = b2ip(ip[12:16]), b2ip(ip[16:20])
    frag = struct.unpack("!H", ip[6:8])[0]
    info = {"src": src, "dst": dst, "proto": ip[9], "offset": frag & 0x1FFF,
            "mf": bool(frag & 0x2000), "id": struct.unpack("!H", ip[4:6])[0]}
    if ip[9] == 1 and len(ip) >= hl + 2:
        info["icmp"] = (ip[hl], ip[hl + 1])
    return "ip", info


def summarize(d, handler_text, out=sys.stdout):
    d = Path(d)
    h = parse_handlers(handler_text)
    manifest = json.loads((d / "manifest.json").read_text())
    router_ips = {i["ip"] for i in IFS}
    w = out.write
    res = {"input": {}, "forwarded": {}, "fragments": {}, "icmp": {}, "arp": {}, "dropped": {}}

    # Input.
    total_in = 0
    w("Sluice main job: the Figure 8 IPv4 router (scripts/make-ip-conf.py, 3 interfaces,\n")
    w("RadixIPLookup) on generated traffic (scripts/main-job.py)\n\n")
    w("Input frames by kind:\n")
    kinds = Counter()
    for name, ks in manifest.items():
        n = sum(ks.values())
        res["input"][name] = n
        total_in += n
        kinds.update(ks)
    for k, n in sorted(kinds.items(), key=lambda x: -x[1]):
        w(f"  {n:6}  {k}\n")
    w(f"  {total_in:6}  total ({', '.join(f'{k} {v}' for k, v in res['input'].items())})\n\n")

    # Outputs, dissected.
    forwarded_pkts = 0
    icmp = Counter()
    icmp_by_if = defaultdict(Counter)
    w("Forwarded, per output interface (IP packets from hosts; fragments of one packet count once):\n")
    for i in IFS:
        frames = read_pcap(d / f"{i['name']}-out.pcap")
        pk = frs = 0
        arp_rep = arp_req = 0
        for _, fr in frames:
            kind, info = dissect(fr)
            if kind == "arp-reply":
                arp_rep += 1
            elif kind == "arp-request":
                arp_req += 1
            elif kind == "ip":
                if info["src"] in router_ips and "icmp" in info:
                    t, c = info["icmp"]
                    key = (t, c) if (t, c) in ICMP_NAMES else (t, None)
                    name = ICMP_NAMES.get(key, f"type {t} code {c}")
                    icmp[name] += 1
                    icmp_by_if[i["name"]][name] += 1
                else:
                    frs += 1
                    if info["offset"] == 0:
                        pk += 1
        forwarded_pkts += pk
        res["forwarded"][i["name"]] = pk
        res["fragments"][i["name"]] = frs
        res["arp"][i["name"]] = {"replies": arp_rep, "requests": arp_req}
        w(f"  {i['name']}: {pk:5} packets ({frs} frames); ARP replies sent {arp_rep}, "
          f"ARP queries sent {arp_req}\n")
    w(f"  total: {forwarded_pkts} packets\n\n")

    w("ICMP sent by the router, by type:\n")
    for name, n in sorted(icmp.items()):
        per = ", ".join(f"{k} {v[name]}" for k, v in icmp_by_if.items() if v[name])
        w(f"  {n:6}  {name}  ({per})\n")
    if not icmp:
        w("  none\n")
    res["icmp"] = dict(icmp)
    w("\n")

    host = read_pcap(d / "host.pcap")
    res["host"] = len(host)
    w(f"Delivered to the router itself (host output, host.pcap): {len(host)}\n\n")

    # Drops: the router-wide `drops` handler lists every drop by element and reason.
    drops = Counter()
    for line in h.get("drops", "").splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[2].isdigit():
            drops[f"{parts[1]} ({parts[0]})"] += int(parts[2])
    res["dropped"] = dict(drops)
    w("Dropped, by reason and element (the router's `drops` handler):\n")
    for reason, c in sorted(drops.items(), key=lambda x: -x[1]):
        w(f"  {c:6}  {reason}\n")
    total_drops = sum(drops.values())
    w(f"  {total_drops:6}  total\n")
    # Frames the configuration sends to a Discard on purpose (not IP or ARP).
    discarded = sum(num(h, k[:-len(".class")] + ".count") for k, v in h.items()
                    if k.endswith(".class") and v.strip() == "Discard")
    w(f"  {discarded:6}  discarded by the configuration (Discard elements)\n\n")

    # Accounting: every input frame has exactly one fate.
    arp_replies_in = kinds.get("ARP reply (neighbour announces itself)", 0)
    learned = sum(num(h, f"arpq_{i['name']}.responses") for i in IFS)
    answered = sum(num(h, f"ar_{i['name']}.replies") for i in IFS)
    pending = sum(num(h, f"arpq_{i['name']}.length") for i in IFS)
    icmp_errors = sum(v for k, v in icmp.items() if not k.startswith("echo"))
    # An ICMP error replaces the packet it reports, except a redirect, whose packet is also
    # forwarded.
    replaced = sum(v for k, v in icmp.items() if not k.startswith("echo") and "redirect" not in k)
    accounted = (learned + answered + forwarded_pkts + len(host) + replaced + total_drops
                 + discarded + pending)
    res.update({"total_in": total_in, "arp_learned": learned, "arp_answered": answered,
                "pending": pending, "total_dropped": total_drops, "total_forwarded": forwarded_pkts,
                "icmp_errors": icmp_errors, "discarded": discarded, "accounted": accounted})
    w("Accounting (each input frame has one fate):\n")
    w(f"  {learned} ARP replies learned + {answered} ARP requests answered + {forwarded_pkts} forwarded"
      f" + {len(host)} to the router + {replaced} answered by an ICMP error + {total_drops} dropped"
      f" + {discarded} discarded + {pending} waiting for ARP"
      f" = {accounted} of {total_in} input frames: {'OK' if accounted == total_in else 'MISMATCH'}\n")
    if arp_replies_in != learned:
        w(f"  note: {arp_replies_in} ARP replies sent, {learned} learned\n")
    return res


HANDLERS = ["drops", "*.class", "*.count"]
for _i in IFS:
    _n = _i["name"]
    HANDLERS += [f"ar_{_n}.replies", f"arpq_{_n}.responses", f"arpq_{_n}.queries",
                 f"arpq_{_n}.length", f"fr_{_n}.fragments"]


def ifspecs(d):
    return [f"name={i['name']},addr={i['ip']}/{i['len']},eth={i['eth']},mtu={i['mtu']},"
            f"in={d}/{i['name']}-in.pcap,out={d}/{i['name']}-out.pcap" for i in IFS]


def main(argv):
    if len(argv) >= 2 and argv[0] == "gen":
        generate(argv[1])
    elif len(argv) >= 2 and argv[0] == "ifspecs":
        print("\n".join(ifspecs(argv[1])))
    elif len(argv) >= 1 and argv[0] == "routes":
        print("\n".join(ROUTES))
    elif len(argv) >= 1 and argv[0] == "handlers":
        print("\n".join(HANDLERS))
    elif len(argv) >= 3 and argv[0] == "summary":
        res = summarize(argv[1], Path(argv[2]).read_text())
        if len(argv) >= 5 and argv[3] == "--json":
            Path(argv[4]).write_text(json.dumps(res, indent=1, sort_keys=True))
        if res["accounted"] != res["total_in"]:
            return 1
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
