#!/usr/bin/env python3
"""Writes the differential tests' configurations and input pcaps (deterministic: fixed
timestamps, no randomness). The files it writes are committed next to it, under cases/;
run it again after changing it, then scripts/click-record.sh to record Click's outputs.

Usage: tests/differential/make_inputs.py   (needs scapy; the project venv has it)
"""
import importlib.util
import struct
from pathlib import Path

from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_RR
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CASES = HERE / "cases"

# Input timestamps start here (seconds) and every packet has its own offset.
T0 = 1_700_000_000

# The router: eth0 198.18.0.1/24, eth1 198.19.0.1/24 with MTU 576.
R0_MAC, R0_IP = "00:00:c0:ae:67:ef", "198.18.0.1"
R1_MAC, R1_IP = "00:00:c0:4f:71:ef", "198.19.0.1"
# Hosts: A on eth0, B on eth1 (both reachable once they answer ARP), C on eth0 (never
# answers), D on eth1 (never answers).
A_MAC, A_IP = "02:00:00:00:00:02", "198.18.0.2"
B_MAC, B_IP = "02:00:00:00:01:02", "198.19.0.2"
C_IP = "198.18.0.3"


def write_pcap(path, records, linktype=1):
    """Writes a microsecond pcap; records are (seconds offset from T0, bytes)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype))
        for off, data in records:
            usec = round(off * 1_000_000)
            f.write(struct.pack("<IIII", T0 + usec // 1_000_000, usec % 1_000_000,
                                len(data), len(data)))
            f.write(data)


def from_a(ip, payload=b"", dst_mac=R0_MAC):
    """A frame from host A to the router's eth0."""
    return bytes(Ether(src=A_MAC, dst=dst_mac) / ip / payload)


def with_ip_checksum(frame, csum):
    """The frame with its IPv4 checksum field replaced."""
    return frame[:24] + struct.pack("!H", csum) + frame[26:]


def iprouter():
    """The Figure 8 router on traces that reach every path: ARP queries and responses,
    forwarding, the drops (bad checksum, bad length, bad version or header length, bad source,
    truncation, link-level broadcast, not for us, unknown ethertype) and the ICMP errors
    (parameter problem for a bad option, time exceeded, redirect, fragmentation needed),
    IP options, fragmentation and packets for the router itself."""
    spec = importlib.util.spec_from_file_location("make_ip_conf", ROOT / "scripts" / "make-ip-conf.py")
    mic = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mic)
    ifs = [mic.parse_if(f"name=eth0,addr={R0_IP}/24,eth={R0_MAC}", "pcap"),
           mic.parse_if(f"name=eth1,addr={R1_IP}/24,eth={R1_MAC},mtu=576", "pcap")]
    conf = mic.generate(ifs, [], mode="pcap", host="host.pcap", timing=True)
    conf = conf.replace("STOP false", "STOP true")
    conf += "\n// Stop once both inputs are done.\nDriverManager(wait_stop 2, stop);\n"

    udp = UDP(sport=1234, dport=5678)
    ok = IP(src=A_IP, dst=B_IP, ttl=64, id=1) / udp / Raw(b"forwarded")
    eth0 = [
        (0.00, bytes(Ether(src=A_MAC, dst=R0_MAC, type=0x88B5) / Raw(b"\x00" * 46))),
        (0.10, bytes(Ether(src=A_MAC, dst="ff:ff:ff:ff:ff:ff")
                     / ARP(op=1, hwsrc=A_MAC, psrc=A_IP, pdst=R0_IP))),
        (0.11, bytes(Ether(src=A_MAC, dst=R0_MAC)
                     / ARP(op=2, hwsrc=A_MAC, psrc=A_IP, hwdst=R0_MAC, pdst=R0_IP))),
        # Waits in ARPQuerier until B answers at 0.25.
        (0.20, from_a(ok)),
        (0.30, from_a(IP(src=A_IP, dst=B_IP, ttl=64, id=2) / udp / Raw(b"second"))),
        (0.31, with_ip_checksum(from_a(IP(src=A_IP, dst=B_IP, id=3) / udp), 0x1234)),
        (0.32, from_a(IP(src=A_IP, dst=B_IP, id=4, len=200) / udp / Raw(b"short"))),
        (0.33, from_a(IP(src=A_IP, dst=B_IP, id=5, ihl=4) / udp)),
        (0.34, from_a(IP(src=A_IP, dst=B_IP, id=6, version=5) / udp)),
        (0.35, from_a(IP(src=A_IP, dst=B_IP, id=7, options=[IPOption_RR(routers=["0.0.0.0"] * 3)])
                      / udp / Raw(b"record route"))),
        # Option length 1 is malformed: parameter problem.
        (0.36, from_a(IP(src=A_IP, dst=B_IP, id=8, options=[b"\x07\x01\x00\x00"]) / udp)),
        (0.37, from_a(IP(src=A_IP, dst=B_IP, id=9, ttl=1) / udp / Raw(b"ttl one"))),
        # Back out the interface it came in on: redirect (and C never answers ARP).
        (0.38, from_a(IP(src=A_IP, dst=C_IP, id=10) / udp / Raw(b"redirect me"))),
        (0.39, from_a(IP(src=A_IP, dst=B_IP, id=11, flags="DF") / udp / Raw(b"D" * 1000))),
        (0.40, from_a(IP(src=A_IP, dst=B_IP, id=12) / udp / Raw(bytes(range(256)) * 4))),
        (0.41, from_a(IP(src=A_IP, dst=R0_IP, id=13) / ICMP(type=8, id=7, seq=1) / Raw(b"ping"))),
        (0.42, from_a(IP(src=A_IP, dst=B_IP, id=14) / udp, dst_mac="ff:ff:ff:ff:ff:ff")),
        (0.43, from_a(IP(src=A_IP, dst=B_IP, id=15) / udp, dst_mac="02:00:00:00:00:99")),
        (0.44, from_a(IP(src=A_IP, dst="198.18.0.255", id=16) / udp / Raw(b"subnet bcast"))),
        (0.45, from_a(IP(src="198.19.0.255", dst=B_IP, id=17) / udp)),
        (0.46, from_a(IP(src=A_IP, dst=B_IP, id=18)
                      / TCP(sport=40000, dport=80, seq=1000, ack=2000, flags="PA", window=512)
                      / Raw(b"GET / HTTP/1.0\r\n\r\n"))),
        (0.47, from_a(IP(src=A_IP, dst=B_IP, id=19) / udp / Raw(b"cut"))[:14 + 10]),
        (0.48, from_a(IP(src=A_IP, dst="203.0.113.9", id=20) / udp / Raw(b"no route"))),
    ]
    eth1 = [
        (0.00, bytes(Ether(src=B_MAC, dst=R1_MAC, type=0x88B5) / Raw(b"\x00" * 46))),
        (0.25, bytes(Ether(src=B_MAC, dst=R1_MAC)
                     / ARP(op=2, hwsrc=B_MAC, psrc=B_IP, hwdst=R1_MAC, pdst=R1_IP))),
        (0.50, bytes(Ether(src=B_MAC, dst=R1_MAC)
                     / IP(src=B_IP, dst=A_IP, id=100) / UDP(sport=53, dport=1234) / Raw(b"reply"))),
        (0.51, bytes(Ether(src=B_MAC, dst="ff:ff:ff:ff:ff:ff")
                     / ARP(op=1, hwsrc=B_MAC, psrc=B_IP, pdst=R1_IP))),
    ]
    d = CASES / "iprouter"
    d.mkdir(parents=True, exist_ok=True)
    (d / "router.click").write_text(conf)
    write_pcap(d / "eth0-in.pcap", eth0)
    write_pcap(d / "eth1-in.pcap", eth1)


def prints():
    """Print and IPPrint formats on TCP, UDP, ICMP, fragments, options and broken packets."""
    pkts = [
        IP(src="198.18.0.2", dst="198.19.0.2", id=1, ttl=33, tos=0x10)
        / TCP(sport=40000, dport=80, seq=1000, ack=2000, flags="S", window=512),
        IP(src="198.18.0.2", dst="198.19.0.2", id=2)
        / TCP(sport=40000, dport=80, seq=1001, ack=2001, flags="PA", window=1024) / Raw(b"hello"),
        IP(src="198.18.0.2", dst="198.19.0.2", id=3)
        / TCP(sport=40000, dport=80, seq=1006, ack=2001, flags="FA"),
        IP(src="198.18.0.2", dst="198.19.0.2", id=4) / TCP(sport=1, dport=2, flags="R"),
        IP(src="198.18.0.2", dst="198.19.0.2", id=5) / UDP(sport=53, dport=5353) / Raw(b"dns?"),
        IP(src="198.18.0.2", dst="198.19.0.2", id=6) / ICMP(type=8, id=7, seq=9) / Raw(b"ping"),
        IP(src="198.19.0.2", dst="198.18.0.2", id=7) / ICMP(type=0, id=7, seq=9) / Raw(b"pong"),
        IP(src="198.19.0.1", dst="198.18.0.2", id=8)
        / ICMP(type=3, code=4, nexthopmtu=576) / bytes(IP(src="198.18.0.2", dst="198.19.0.2") / UDP()),
        IP(src="198.19.0.1", dst="198.18.0.2", id=9) / ICMP(type=11, code=0)
        / bytes(IP(src="198.18.0.2", dst="198.19.0.2", ttl=1) / UDP()),
        IP(src="198.18.0.2", dst="198.19.0.2", id=10, flags="MF", frag=0, proto=17) / Raw(b"A" * 16),
        IP(src="198.18.0.2", dst="198.19.0.2", id=10, frag=2, proto=17) / Raw(b"B" * 8),
        IP(src="198.18.0.2", dst="198.19.0.2", id=11, proto=47) / Raw(b"gre"),
        IP(src="198.18.0.2", dst="198.19.0.2", id=12, options=[IPOption_RR(routers=["0.0.0.0"])])
        / UDP(sport=1, dport=2),
    ]
    records = [(0.001 * k, bytes(Ether(src=A_MAC, dst=R0_MAC) / p)) for k, p in enumerate(pkts)]
    records.append((0.1, bytes(Ether(src=A_MAC, dst=R0_MAC, type=0x0806) / Raw(b"\x00\x01" * 14))))
    d = CASES / "print"
    d.mkdir(parents=True, exist_ok=True)
    write_pcap(d / "in.pcap", records)
    for name, printer in PRINTERS.items():
        (d / f"{name}.click").write_text(
            f"// {name}: one printer, its lines on standard error.\n"
            "FromDump(in.pcap, STOP true) -> c :: Classifier(12/0800, -);\n"
            + (f"c[0] -> Strip(14) -> MarkIPHeader -> {printer} -> Discard;\n"
               if printer.startswith("IPPrint") else
               f"c[0] -> {printer} -> Discard;\n")
            + "c[1] -> Print(other) -> Discard;\n")


# The printer of each print case (cases.py runs them all).
PRINTERS = {
    "print-default": "Print(eth)",
    "print-timestamp": "Print(ts, 20, TIMESTAMP true)",
    "print-ascii": "Print(ascii, CONTENTS ASCII, MAXLENGTH 30)",
    "print-none": "Print(none, CONTENTS NONE)",
    "print-two": "Print(first, 8) -> Print(second, 8)",
    "ipprint-default": "IPPrint(ip)",
    "ipprint-fields": "IPPrint(all, TIMESTAMP true, ID true, TTL true, TOS true, LENGTH true)",
    "ipprint-hex": "IPPrint(hex, CONTENTS HEX, MAXLENGTH 24)",
    "ipprint-payload": "IPPrint(payload, PAYLOAD ASCII)",
}


if __name__ == "__main__":
    iprouter()
    prints()
