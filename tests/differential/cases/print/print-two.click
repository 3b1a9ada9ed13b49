// print-two: one printer, its lines on standard error.
FromDump(in.pcap, STOP true) -> c :: Classifier(12/0800, -);
c[0] -> Print(first, 8) -> Print(second, 8) -> Discard;
c[1] -> Print(other) -> Discard;
