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

# The command line: -h (one handler alone; several, globs and classes with their names; the
# router's own handlers), -q, -o, and Click's error messages.
CASES["cli-one-handler"] = {"dir": "cli", "args": ["-q", "router.click", "-h", "c.count"],
                            "outputs": []}
CASES["cli-handlers"] = {
    "dir": "cli",
    "args": ["-qf", "router.click", "-hc.ports", "-h", "q.ports", "-h", "t.ports",
             "-h", "Counter.count", "-h", "d*.count", "-h", "Counter@5.ports", "-h", "list",
             "-h", "config", "-h", "flatconfig", "-h", "requirements", "-h", "driver",
             "-h", "c.config", "-h", "c.class", "-h", "c.name"],
    "outputs": [],
}
CASES["cli-handler-errors"] = {
    "dir": "cli",
    "args": ["-q", "router.click", "-h", "x.count", "-h", "y*.count", "-h", "Nothing.count",
             "-h", "c.nothing", "-h", "c.reset", "-h", "c.count"],
    "outputs": [],
}
CASES["cli-output"] = {"dir": "cli", "args": ["-qo", "flat.click", "router.click"],
                       "outputs": ["flat.click"]}
CASES["cli-output-stdout"] = {"dir": "cli", "args": ["-qo-", "router.click"], "outputs": []}
CASES["cli-output-compound"] = {"dir": "cli", "args": ["-qo-", "compound.click"], "outputs": []}
CASES["cli-expression"] = {"dir": "cli", "args": ["-q", "-e", "a :: Idle -> b :: Discard; a -> b"],
                           "outputs": []}
CASES["cli-exit-handler"] = {"dir": "cli", "args": ["-q", "router.click", "-x", "c.count",
                                                    "-h", "nothing.count"], "outputs": []}
CASES["cli-exit-handler-error"] = {"dir": "cli", "args": ["-q", "router.click", "-x", "c.reset"],
                                   "outputs": []}
CASES["cli-empty"] = {"dir": "cli", "args": ["-e", ""], "outputs": []}
CASES["cli-missing-file"] = {"dir": "cli", "args": ["missing.click"], "outputs": []}
CASES["cli-port-errors"] = {"dir": "cli", "args": ["-q", "bad.click"], "outputs": []}

# Print and IPPrint formats, one printer per case (make_inputs.PRINTERS); "print-two" chains
# two printers, whose lines Click interleaves packet by packet.
for _name in ["print-default", "print-timestamp", "print-ascii", "print-none", "print-two",
              "ipprint-default", "ipprint-fields", "ipprint-hex", "ipprint-payload"]:
    CASES[_name] = {"dir": "print", "args": [f"{_name}.click"], "outputs": []}

# Script: PACKET scripts choosing outputs; SIGNAL scripts, reinstalled by `end` and not by
# `exit` (the next signal then ends the process).
for _name in ["packet", "signal-reinstall", "signal-exit"]:
    CASES[f"script-{_name}"] = {"dir": "script", "args": [f"{_name}.click"], "outputs": []}
