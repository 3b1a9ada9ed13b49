// print-default: one printer, its lines on standard error.
FromDump(in.pcap, STOP true) -> c :: Classifier(12/0800, -);
c[0] -> Print(eth) -> Discard;
c[1] -> Print(other) -> Discard;
