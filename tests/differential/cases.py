"""The differential cases: each runs a configuration on committed inputs, with the same
command line for Click (when recording) and for Sluice (when testing).

A case's outputs are its standard output (handler values), standard error, exit status and
the files it writes (pcaps), kept under expected/CASE/ by record.py.
"""

HANDLERS = [
    "chk.drops",
    "arpq_eth0.queries", "arpq_eth0.responses", "arpq_eth0.drops",
    "arpq_eth1.queries", "arpq_eth1.responses", "arpq_eth1.drops",
    "fr_eth1.fragments", "fr_eth1.drops",
    "dt_eth0.drops", "dt_eth1.drops", "gio_eth0.drops",
    "other_eth0.count", "other_eth1.count",
]

CASES = {
    # The Figure 8 router (scripts/make-ip-conf.py) on traces reaching every drop and ICMP path.
    "iprouter": {
        "dir": "iprouter",
        "args": ["--simtime", "router.click"] + [a for h in HANDLERS for a in ("-h", h)],
        "outputs": ["eth0-out.pcap", "eth1-out.pcap", "host.pcap"],
    },
}

# Print and IPPrint formats, one printer per case (make_inputs.PRINTERS); "print-two" chains
# two printers, whose lines Click interleaves packet by packet.
for _name in ["print-default", "print-timestamp", "print-ascii", "print-none", "print-two",
              "ipprint-default", "ipprint-fields", "ipprint-hex", "ipprint-payload"]:
    CASES[_name] = {"dir": "print", "args": [f"{_name}.click"], "outputs": []}
