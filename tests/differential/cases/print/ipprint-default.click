// ipprint-default: one printer, its lines on standard error.
FromDump(in.pcap, STOP true) -> c :: Classifier(12/0800, -);
c[0] -> Strip(14) -> MarkIPHeader -> IPPrint(ip) -> Discard;
c[1] -> Print(other) -> Discard;
