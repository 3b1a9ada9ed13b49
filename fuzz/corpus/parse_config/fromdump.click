FromDump(f.pcap, STOP true) -> ToDump(out.pcap)
