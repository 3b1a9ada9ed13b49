#!/usr/bin/env python3
"""Generates the Click configuration of an N-interface IPv4 or dual-stack router (Figure 8 of
the Click paper, in the spirit of Click's make-ip-conf.pl).

Each interface is given as comma-separated KEY=VALUE pairs:

    name=eth0,addr=198.18.0.1/24,eth=00:00:c0:ae:67:ef,in=eth0-in.pcap,out=eth0-out.pcap,mtu=1500
    name=eth0,addr=198.18.0.1/24,eth=00:00:c0:ae:67:ef,dev=veth0

Keys: name (mandatory), addr (ADDR/LEN, mandatory), eth (mandatory), mtu (default 1500),
in/out (pcap files, --mode pcap; default NAME-in.pcap / NAME-out.pcap), dev (device name,
--mode device; default NAME), proxy (extra prefixes answered by proxy ARP, space-separated),
addr6 (IPv6 ADDR/LEN: the interface also routes IPv6).

In --mode bench (for `sluice bench iprouter`) each interface's input is an InfiniteSource of
64-byte UDP frames from host .2 of its network to host .2 of the next interface's network
(LIMIT $LIMIT, BURST $BURST, defaults 1000000 and 32), each output a Queue drained by a
Discard, and the ARP tables start with those hosts (written by a Script at initialisation).
In pcap and bench modes the inputs stop at their end, and a DriverManager stops the router
(after the packets in flight drain) when every input is done.

Extra routes: --route PREFIX[:GATEWAY]:IFNAME (e.g. 0.0.0.0/0:198.18.0.254:eth0), and for
IPv6 --route6 PREFIX[,GATEWAY],IFNAME (e.g. ::/0,2001:db8::fe,eth0).

IPv6 (interfaces with addr6): the per-interface Classifier also sends neighbour solicitations
to an IP6NDAdvertiser (answering for the interface's address and its EUI-64 link-local
address, with the router flag), neighbour advertisements to the interface's IP6NDSolicitor,
and other IPv6 frames to Strip(14), CheckIP6Header, GetIP6Address(24) and the shared
LookupIP6Route. Its output 0 holds packets for the router (an ICMP6PingResponder answers
echo requests), output k interface k, then one output for destinations with no route (ICMPv6
destination unreachable, RFC 4443) and one for link-local and multicast destinations, which a
router does not forward (counted and dropped). On the way out: DecIP6HLIM (hop limit exceeded
answered with ICMPv6 time exceeded), CheckLength(MTU) (larger packets answered with ICMPv6
packet too big carrying the link MTU, RFC 8200 §5: routers do not fragment), and the
IP6NDSolicitor. IPv6 packets are painted with their interface's number on the way in, and a
PaintSwitch per error kind sends time exceeded and destination unreachable from the address
of the interface the offending packet arrived on (what traceroute6 shows as the hop); packet
too big comes from the outgoing interface, whose MTU it carries. In --mode bench with --bench6 the inputs send 78-byte UDP-in-IPv6 frames
between hosts ::2 of the interfaces' networks (neighbour entries inserted at start) instead
of IPv4.

With --names the interfaces' addresses are declared once, in an AddressInfo element (NAME
ADDR/LEN ETH), and every element refers to them by name as Click configurations do: the bare
name where an address, a prefix or an Ethernet address is expected (ARPResponder(NAME),
ARPQuerier(NAME), HostEtherFilter(NAME), CheckIPHeader(INTERFACES NAME...)), and the suffixes
NAME:ip, NAME:ipnet and NAME:bcast in the route table and the ICMP errors' BADADDRS.

Per interface the configuration has: input (FromDump or FromDevice), HostEtherFilter (sets
the packet type that DropBroadcasts reads), a Classifier splitting ARP queries, ARP replies,
IP and other frames, an ARPResponder and an ARPQuerier, Paint, Strip(14), CheckIPHeader,
GetIPAddress(16) into the shared route lookup; and on the way out DropBroadcasts, PaintTee
(ICMP redirect for packets leaving by the interface they came in on), IPGWOptions,
FixIPSrc, DecIPTTL, IPFragmenter(MTU), each error path to an ICMPError that goes back into
the route lookup. Route lookup output 0 holds packets for the router itself (host output).

Usage: make-ip-conf.py [--mode pcap|device|bench] [--lookup CLASS] [--names] [--bench6]
                       [--host FILE|discard|tap:DEVNAME:ADDR/LEN]
                       [--route R]... [--route6 R]... [--timing] IFSPEC...
"""
import argparse
import ipaddress
import sys


def parse_if(spec, mode):
    d = {}
    for part in spec.split(","):
        if "=" not in part:
            raise SystemExit(f"make-ip-conf: bad interface item '{part}' (expected KEY=VALUE)")
        k, v = part.split("=", 1)
        d[k.strip()] = v.strip()
    for k in ("name", "addr", "eth"):
        if k not in d:
            raise SystemExit(f"make-ip-conf: interface '{spec}' lacks {k}=")
    iface = ipaddress.ip_interface(d["addr"])
    if iface.version != 4:
        raise SystemExit("make-ip-conf: IPv4 addresses only")
    d["ip"] = str(iface.ip)
    d["len"] = iface.network.prefixlen
    d["net"] = str(iface.network.network_address)
    d["bcast"] = str(iface.network.broadcast_address)
    d["prefix"] = str(iface.network)
    d["mtu"] = int(d.get("mtu", 1500))
    if "addr6" in d:
        i6 = ipaddress.ip_interface(d["addr6"])
        if i6.version != 6:
            raise SystemExit(f"make-ip-conf: addr6 '{d['addr6']}' is not an IPv6 address")
        d["ip6"] = str(i6.ip)
        d["prefix6"] = str(i6.network)
        d["ll6"] = link_local(d["eth"])
    if mode == "pcap":
        d.setdefault("in", f"{d['name']}-in.pcap")
        d.setdefault("out", f"{d['name']}-out.pcap")
    else:
        d.setdefault("dev", d["name"])
    return d


def eth_bytes(e):
    return bytes(int(x, 16) for x in e.split(":"))


def link_local(eth):
    """The EUI-64 link-local address of Ethernet address eth (RFC 4291 appendix A)."""
    b = bytearray(eth_bytes(eth))
    b[0] ^= 0x02
    iid = bytes(b[:3]) + b"\xff\xfe" + bytes(b[3:])
    return str(ipaddress.IPv6Address(b"\xfe\x80" + bytes(6) + iid))


def host6_of(i, n=2):
    """Address ::n of interface i's IPv6 network."""
    return str(ipaddress.ip_network(i["prefix6"]).network_address + n)


def host_of(i, n=2):
    """Address .n of interface i's network."""
    return str(ipaddress.ip_network(i["prefix"]).network_address + n)


def bench_frame(src_if, dst_if, k):
    """A 64-byte Ethernet frame (no FCS): UDP from host .2 of src_if to host .2 of dst_if."""
    import struct
    ip_len = 64 - 14
    src = ipaddress.ip_address(host_of(src_if)).packed
    dst = ipaddress.ip_address(host_of(dst_if)).packed
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0, 64, 17, 0, src, dst)
    s = sum(struct.unpack("!10H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    hdr = hdr[:10] + struct.pack("!H", ~s & 0xFFFF) + hdr[12:]
    udp = struct.pack("!HHHH", 1234, 5678, ip_len - 20, 0)
    frame = eth_bytes(src_if["eth"]) + bytes([2, 0, 0, 0, 0, k]) + b"\x08\x00" + hdr + udp
    frame += b"\x55" * (64 - len(frame))
    return '"\\<' + " ".join(f"{b:02x}" for b in frame) + '>"'


def bench_frame6(src_if, dst_if, k):
    """A 78-byte Ethernet frame: UDP (16 bytes of data) from ::2 of src_if to ::2 of dst_if."""
    import struct
    src = ipaddress.ip_address(host6_of(src_if)).packed
    dst = ipaddress.ip_address(host6_of(dst_if)).packed
    data = b"\x55" * 16
    ulen = 8 + len(data)
    pseudo = src + dst + struct.pack("!IxxxB", ulen, 17)
    udp = struct.pack("!HHHH", 1234, 5678, ulen, 0) + data
    words = pseudo + udp
    s = sum(struct.unpack(f"!{len(words) // 2}H", words))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    udp = udp[:6] + struct.pack("!H", (~s & 0xFFFF) or 0xFFFF) + udp[8:]
    hdr = struct.pack("!IHBB", 6 << 28, ulen, 17, 64) + src + dst
    frame = eth_bytes(src_if["eth"]) + bytes([2, 0, 0, 0, 0, k]) + b"\x86\xdd" + hdr + udp
    return '"\\<' + " ".join(f"{b:02x}" for b in frame) + '>"'


def generate(ifs, routes, mode="pcap", lookup="StaticIPLookup", host="discard", timing=False,
             by_name=False, routes6=(), bench6=False):
    out = []
    w = out.append
    names = [i["name"] for i in ifs]
    v6 = [i for i in ifs if "ip6" in i]
    if (routes6 or bench6) and not v6:
        raise SystemExit("make-ip-conf: IPv6 routes or traffic need an interface with addr6=")
    if bench6 and len(v6) != len(ifs):
        raise SystemExit("make-ip-conf: --bench6 needs addr6= on every interface")

    def spell(i, what):
        """How the configuration spells interface i's address, prefix, Ethernet address..."""
        if by_name:
            return {"ip": i["name"], "iplen": i["name"], "eth": i["name"],
                    "host": f"{i['name']}:ip/32", "bcast": f"{i['name']}:bcast",
                    "bcast32": f"{i['name']}:bcast/32", "net32": f"{i['net']}/32",
                    "prefix": f"{i['name']}:ipnet"}[what]
        return {"ip": i["ip"], "iplen": f"{i['ip']}/{i['len']}", "eth": i["eth"],
                "host": f"{i['ip']}/32", "bcast": i["bcast"], "bcast32": f"{i['bcast']}/32",
                "net32": f"{i['net']}/32", "prefix": i["prefix"]}[what]
    if mode == "bench":
        w("define($LIMIT 1000000, $BURST 32);")
    kind = "Dual-stack (IPv4 and IPv6)" if v6 else "IPv4"
    w(f"// {kind} router with {len(ifs)} interfaces ({', '.join(names)}), Figure 8 of the Click paper.")
    w("// Generated by scripts/make-ip-conf.py.")
    for i in ifs:
        a6 = f" {i['addr6']}" if "ip6" in i else ""
        w(f"// {i['name']}: {i['ip']}/{i['len']}{a6} {i['eth']} mtu {i['mtu']}")
    w("")
    if by_name:
        w("AddressInfo(" + ",\n\t".join(f"{i['name']} {i['ip']}/{i['len']} {i['eth']}" for i in ifs) + ");")
        w("")
    w("// Shared route table. Output 0: packets for the router itself;")
    w("// output k: interface k (1-based, in the order above).")
    rt = []
    for i in ifs:
        for a in ("host", "bcast32", "net32"):
            rt.append(f"{spell(i, a)} 0")
    rt.append("255.255.255.255/32 0")
    rt.append("0.0.0.0/32 0")
    for k, i in enumerate(ifs, 1):
        rt.append(f"{spell(i, 'prefix')} {k}")
    for r in routes:
        parts = r.split(":")
        if len(parts) == 2:
            pfx, gw, ifn = parts[0], None, parts[1]
        elif len(parts) == 3:
            pfx, gw, ifn = parts
        else:
            raise SystemExit(f"make-ip-conf: bad route '{r}' (PREFIX[:GATEWAY]:IFNAME)")
        if ifn not in names:
            raise SystemExit(f"make-ip-conf: route '{r}': unknown interface {ifn}")
        net = ipaddress.ip_network(pfx, strict=False)
        k = names.index(ifn) + 1
        rt.append(f"{net} {gw} {k}" if gw else f"{net} {k}")
    w(f"rt :: {lookup}(" + ",\n\t".join(rt) + ");")
    w("")
    interfaces = " ".join(spell(i, "iplen") for i in ifs)
    bad = " ".join(a for i in ifs for a in (spell(i, "bcast"), i["net"]))
    w("// Incoming IP packets: strip Ethernet, check the header, look up the route.")
    w(f"ip :: Strip(14)\n   -> chk :: CheckIPHeader(INTERFACES {interfaces})\n   -> GetIPAddress(16)\n   -> rt;")
    w("")
    w("// Packets for the router itself.")
    if host == "discard":
        w("rt[0] -> host :: Discard;")
    elif host.startswith("tap:"):
        # tap:DEVNAME:ADDR/LEN -- the host's own stack through a KernelTap. Its peer answers
        # ARP for every address (proxy); the kernel's packets go back into the route lookup.
        parts = host.split(":", 2)
        if len(parts) != 3:
            raise SystemExit("make-ip-conf: --host tap:DEVNAME:ADDR/LEN")
        _, dev, addr = parts
        w(f"tap :: KernelTap({addr}, ETHER 02:00:00:00:00:fe, DEVNAME {dev});")
        w("tc :: Classifier(12/0806 20/0001, 12/0800, -);")
        w("tap -> tc;")
        w("tc[0] -> ARPResponder(0.0.0.0/0 02:00:00:00:00:fd) -> tap;")
        w("tc[1] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;")
        w("tc[2] -> Discard;")
        w("rt[0] -> EtherEncap(0x0800, 02:00:00:00:00:fd, 02:00:00:00:00:fe) -> tap;")
    else:
        w(f"rt[0] -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> host :: ToDump({host});")
    w("")
    if v6:
        generate_ip6_core(w, ifs, names, routes6)
    for k, i in enumerate(ifs, 1):
        n = i["name"]
        w(f"// ---- interface {n}: {i['ip']}/{i['len']} {i['eth']}")
        if mode == "pcap":
            w(f"in_{n} :: FromDump({i['in']}, STOP true, TIMING {'true' if timing else 'false'});")
            w(f"out_{n} :: ToDump({i['out']});")
        elif mode == "bench":
            nxt = ifs[k % len(ifs)]
            if bench6:
                w(f"// in-memory traffic: {host6_of(i)} -> {host6_of(nxt)}")
                frame = bench_frame6(i, nxt, k)
            else:
                w(f"// in-memory traffic: {host_of(i)} -> {host_of(nxt)}")
                frame = bench_frame(i, nxt, k)
            w(f"in_{n} :: InfiniteSource(DATA {frame},")
            w("    LIMIT $LIMIT, BURST $BURST, STOP true, TIMESTAMP false);")
            w(f"out_{n} :: Queue(1024) -> sink_{n} :: Discard;")
            w(f"Script(write arpq_{n}.insert {host_of(i)} 02:00:00:00:00:{k:02x});")
            if "ip6" in i:
                w(f"Script(write nds_{n}.insert {host6_of(i)} 02:00:00:00:00:{k:02x});")
        else:
            w(f"in_{n} :: FromDevice({i['dev']});")
            w(f"out_{n} :: Queue(1000) -> ToDevice({i['dev']});")
        if "ip6" in i:
            w(f"c_{n} :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800,")
            w("    12/86dd 20/3a 54/87, 12/86dd 20/3a 54/88, 12/86dd, -);")
        else:
            w(f"c_{n} :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);")
        w(f"in_{n} -> hf_{n} :: HostEtherFilter({spell(i, 'eth')}) -> c_{n};")
        proxy = " ".join(i.get("proxy", "").split())
        if by_name:
            ar = f"{n}, {proxy} {n}" if proxy else n
            aq = n
        else:
            ar = f"{i['ip']} {proxy} {i['eth']}" if proxy else f"{i['ip']} {i['eth']}"
            aq = f"{i['ip']}/{i['len']}, {i['eth']}"
        w(f"c_{n}[0] -> ar_{n} :: ARPResponder({ar}) -> out_{n};")
        w(f"arpq_{n} :: ARPQuerier({aq}) -> out_{n};")
        w(f"c_{n}[1] -> [1]arpq_{n};")
        w(f"c_{n}[2] -> Paint({k}) -> ip;")
        if "ip6" in i:
            generate_ip6_interface(w, i, k)
            w(f"c_{n}[6] -> other_{n} :: Discard;")
        else:
            w(f"c_{n}[3] -> other_{n} :: Discard;")
        w(f"rt[{k}] -> db_{n} :: DropBroadcasts")
        w(f"   -> cp_{n} :: PaintTee({k})")
        w(f"   -> gio_{n} :: IPGWOptions({spell(i, 'ip')})")
        w(f"   -> FixIPSrc({spell(i, 'ip')})")
        w(f"   -> dt_{n} :: DecIPTTL")
        w(f"   -> fr_{n} :: IPFragmenter({i['mtu']})")
        w(f"   -> [0]arpq_{n};")
        w(f"cp_{n}[1] -> icmp_redirect_{n} :: ICMPError({spell(i, 'ip')}, redirect, host, BADADDRS {bad}) -> rt;")
        w(f"gio_{n}[1] -> icmp_param_{n} :: ICMPError({spell(i, 'ip')}, parameterproblem, BADADDRS {bad}) -> rt;")
        w(f"dt_{n}[1] -> icmp_ttl_{n} :: ICMPError({spell(i, 'ip')}, timeexceeded, BADADDRS {bad}) -> rt;")
        w(f"fr_{n}[1] -> icmp_frag_{n} :: ICMPError({spell(i, 'ip')}, unreachable, needfrag, BADADDRS {bad}, PMTU {i['mtu']}) -> rt;")
        w("")
    if mode in ("pcap", "bench"):
        # The run ends once every input has ended and the packets in flight have drained.
        w(f"DriverManager(wait_stop {len(ifs)}, stop);")
    return "\n".join(out) + "\n"


def generate_ip6_core(w, ifs, names, routes6):
    """The shared IPv6 part: route table, input checks, the router's own ICMPv6 answers."""
    v6 = [i for i in ifs if "ip6" in i]
    n = len(ifs)
    unreach, scope = n + 1, n + 2
    w("// IPv6: shared route table. Output 0: packets for the router itself; output k:")
    w(f"// interface k; output {unreach}: no route; output {scope}: link-local and multicast")
    w("// destinations (not forwarded).")
    rt = []
    for i in v6:
        rt.append(f"{i['ip6']}/128 0")
        rt.append(f"{i['ll6']}/128 0")
    for k, i in enumerate(ifs, 1):
        if "ip6" in i:
            rt.append(f"{i['prefix6']} {k}")
    has_default = False
    for r in routes6:
        parts = r.split(",")
        if len(parts) == 2:
            pfx, gw, ifn = parts[0], None, parts[1]
        elif len(parts) == 3:
            pfx, gw, ifn = parts
        else:
            raise SystemExit(f"make-ip-conf: bad IPv6 route '{r}' (PREFIX[,GATEWAY],IFNAME)")
        if ifn not in names or "ip6" not in ifs[names.index(ifn)]:
            raise SystemExit(f"make-ip-conf: IPv6 route '{r}': no IPv6 interface {ifn}")
        net = ipaddress.ip_network(pfx, strict=False)
        has_default |= net.prefixlen == 0
        k = names.index(ifn) + 1
        rt.append(f"{net} {gw} {k}" if gw else f"{net} {k}")
    if not has_default:
        rt.append(f"::/0 {unreach}")
    rt.append(f"fe80::/10 {scope}")
    rt.append(f"ff00::/8 {scope}")
    w("rt6 :: LookupIP6Route(" + ",\n\t".join(rt) + ");")
    w("")
    w("// Incoming IPv6 packets: strip Ethernet, check the header, look up the route.")
    w("ip6 :: Strip(14)\n   -> chk6 :: CheckIP6Header\n   -> GetIP6Address(24)\n   -> rt6;")
    w("// The router answers echo requests; other packets for it are dropped (counted).")
    w("rt6[0] -> ping6 :: ICMP6PingResponder -> rt6;")
    w("ping6[1] -> host6 :: Discard;")
    w(f"rt6[{scope}] -> scope6 :: Discard;")
    w("// Time exceeded and unreachable come from the address of the interface the packet")
    w("// arrived on (its paint).")
    errors = [("unreach", "unreachable, 0"), ("hlim", "timeexceeded, 0")]
    for kind, _ in errors:
        w(f"err6_{kind} :: PaintSwitch;")
        w(f"err6_{kind}[0] -> Discard;")
    for k, i in enumerate(ifs, 1):
        if "ip6" not in i:
            continue
        for kind, what in errors:
            w(f"err6_{kind}[{k}] -> icmp6_{kind}_{i['name']} :: ICMP6Error({i['ip6']}, {what}) -> rt6;")
    w(f"rt6[{unreach}] -> err6_unreach;")
    w("")


def generate_ip6_interface(w, i, k):
    """Interface k's IPv6 paths: neighbour discovery both ways and the output checks."""
    n = i["name"]
    w(f"c_{n}[3] -> nda_{n} :: IP6NDAdvertiser({i['ip6']}/128 {i['ll6']}/128 {i['eth']}) -> out_{n};")
    w(f"nds_{n} :: IP6NDSolicitor({i['ip6']}, {i['eth']}) -> out_{n};")
    w(f"c_{n}[4] -> [1]nds_{n};")
    w(f"c_{n}[5] -> Paint({k}) -> ip6;")
    w(f"rt6[{k}] -> dh_{n} :: DecIP6HLIM")
    w(f"   -> mtu6_{n} :: CheckLength({i['mtu']})")
    w(f"   -> [0]nds_{n};")
    w(f"dh_{n}[1] -> err6_hlim;")
    w(f"mtu6_{n}[1] -> icmp6_toobig_{n} :: ICMP6Error({i['ip6']}, packettoobig, 0, MTU {i['mtu']}) -> rt6;")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=["pcap", "device", "bench"], default="pcap")
    ap.add_argument("--lookup", default="StaticIPLookup",
                    help="route lookup class (StaticIPLookup, LinearIPLookup, RadixIPLookup, DirectIPLookup)")
    ap.add_argument("--host", default="discard",
                    help="pcap file for packets to the router, 'discard', or tap:DEVNAME:ADDR/LEN "
                         "(a KernelTap to the host's own stack)")
    ap.add_argument("--route", action="append", default=[], help="PREFIX[:GATEWAY]:IFNAME")
    ap.add_argument("--route6", action="append", default=[], help="PREFIX[,GATEWAY],IFNAME")
    ap.add_argument("--bench6", action="store_true",
                    help="--mode bench: the inputs send IPv6 frames (every interface has addr6)")
    ap.add_argument("--names", action="store_true",
                    help="declare the addresses in an AddressInfo and refer to them by name")
    ap.add_argument("--timing", action="store_true", help="FromDump TIMING true (pcap mode)")
    ap.add_argument("interfaces", nargs="+", help="name=...,addr=A/L,eth=...,[in=,out=|dev=],mtu=")
    a = ap.parse_args(argv)
    ifs = [parse_if(s, a.mode) for s in a.interfaces]
    if len({i["name"] for i in ifs}) != len(ifs):
        raise SystemExit("make-ip-conf: interface names must be unique")
    sys.stdout.write(generate(ifs, a.route, a.mode, a.lookup, a.host, a.timing, a.names,
                              a.route6, a.bench6))


if __name__ == "__main__":
    main()
