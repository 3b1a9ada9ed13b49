// ipprint-fields: one printer, its lines on standard error.
FromDump(in.pcap, STOP true) -> c :: Classifier(12/0800, -);
c[0] -> Strip(14) -> MarkIPHeader -> IPPrint(all, TIMESTAMP true, ID true, TTL true, TOS true, LENGTH true) -> Discard;
c[1] -> Print(other) -> Discard;
