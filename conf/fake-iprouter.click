// fake-iprouter.click -- Sluice's equivalent of Click's conf/fake-iprouter.click, the IP
// router benchmark of the Click paper without network devices.
//
// Same graph, same element arguments and the same 64-byte UDP packet as Click's file, so that
// `sluice bench` on it compares like with like: an InfiniteSource stands in for the eth1
// receive path, EtherEncaps stand in for the ARPQueriers (no ARP traffic in a benchmark), and
// Queue -> Discard(BURST 32) stands in for the transmit paths (a device drains its queue in
// batches; Discard alone pulls one packet per run, as in Click).
//
// Router "cone" between 18.26.4/24 (eth0, 00:00:C0:AE:67:EF, 18.26.4.24)
// and 18.26.7/24 (eth1, 00:00:C0:4F:71:EF, 18.26.7.1); proxy ARP for 18.26.7 on eth0.

// Frame classification per interface: [0] ARP query, [1] ARP reply, [2] IP, [3] other.
c0 :: Classifier(12/0806 20/0001,
                  12/0806 20/0002,
                  12/0800,
                  -);
c1 :: Classifier(12/0806 20/0001,
                  12/0806 20/0002,
                  12/0800,
                  -);

// eth0 receives nothing; eth1 receives the benchmark packet: Ethernet header (to eth0's
// address, type IP), IP header 1.0.0.1 -> 2.0.0.2, UDP, TTL 64, UDP 4969 -> 4969 and a
// payload. The hex blob is quoted because Sluice reads "\<...>" escapes inside double quotes.
// `sluice bench fake-iprouter` sets LIMIT and BURST (32, Sluice's batch size) on its command line.
define($LIMIT 600000, $BURST 5);
Idle -> [0]c0;
InfiniteSource(DATA "\<
  00 00 c0 ae 67 ef  00 00 00 00 00 00  08 00
  45 00 00 28  00 00 00 00  40 11 77 c3  01 00 00 01  02 00 00 02
  13 69 13 69  00 14 d6 41
  55 44 50 20  70 61 63 6b  65 74 21 0a  04 00 00 00  01 00 00 00
  01 00 00 00  00 00 00 00  00 80 04 08  00 80 04 08  53 53 00 00
  53 53 00 00  05 00 00 00  00 10 00 00  01 00 00 00  54 53 00 00
  54 e3 04 08  54 e3 04 08  d8 01 00 00>", LIMIT $LIMIT, BURST $BURST, STOP true) -> [0]c1;

// Transmit queues and the host.
out0 :: Queue(200) -> Discard(BURST 32);
out1 :: Queue(200) -> Discard(BURST 32);
tol :: Discard;

// Stand-ins for the ARPQueriers: fixed Ethernet headers.
fake_arpq0 :: EtherEncap(0x0800, 00:00:c0:ae:67:ef, 00:00:c0:4f:71:ef);
fake_arpq1 :: EtherEncap(0x0800, 00:00:c0:4f:71:ef, 00:00:c0:4f:71:ef);

// ARP replies go to the host and (in the real router) to both queriers.
t :: Tee(3);
c0[1] -> t;
c1[1] -> t;
t[0] -> tol;
t[1] -> fake_arpq0;
t[2] -> fake_arpq1;

fake_arpq0 -> out0;
fake_arpq1 -> out1;

// ARP responders: eth0 answers for the router and, as a proxy, for 18.26.7/24.
ar0 :: ARPResponder(18.26.4.24 00:00:C0:AE:67:EF,
                    18.26.7.0/24 00:00:C0:AE:67:EF);
c0[0] -> ar0 -> out0;
ar1 :: ARPResponder(18.26.7.1 00:00:C0:4F:71:EF);
c1[0] -> ar1 -> out1;

// Routes: 0 = this host, 1 = 18.26.4/24 (eth0), 2 = 18.26.7/24 (eth1),
// default via 18.26.4.1 on eth0.
rt :: StaticIPLookup(18.26.4.24/32 0,
		    18.26.4.255/32 0,
		    18.26.4.0/32 0,
		    18.26.7.1/32 0,
		    18.26.7.255/32 0,
		    18.26.7.0/32 0,
		    18.26.4.0/24 1,
		    18.26.7.0/24 2,
		    0.0.0.0/0 18.26.4.1 1);

// Input IP path: paint by interface, strip Ethernet, check the header, route.
ip ::   Strip(14)
     -> CheckIPHeader(18.26.4.255 1.255.255.255)
     -> [0]rt;
c0[2] -> Paint(1) -> ip;
c1[2] -> Paint(2) -> ip;

// Local delivery, with a made-up Ethernet header.
rt[0] -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> tol;

// Output paths: broadcast filter, redirect check, IP options, source fix, TTL, fragmentation.
rt[1] -> DropBroadcasts
      -> cp1 :: PaintTee(1)
      -> gio1 :: IPGWOptions(18.26.4.24)
      -> FixIPSrc(18.26.4.24)
      -> dt1 :: DecIPTTL
      -> fr1 :: IPFragmenter(300)
      -> [0]fake_arpq0;
rt[2] -> DropBroadcasts
      -> cp2 :: PaintTee(2)
      -> gio2 :: IPGWOptions(18.26.7.1)
      -> FixIPSrc(18.26.7.1)
      -> dt2 :: DecIPTTL
      -> fr2 :: IPFragmenter(300)
      -> [0]fake_arpq1;

// ICMP errors (the addresses are those of Click's file).
dt1[1] -> ICMPError(18.26.4.24, timeexceeded) -> [0]rt;
dt2[1] -> ICMPError(18.26.4.24, timeexceeded) -> [0]rt;
fr1[1] -> ICMPError(18.26.7.1, unreachable, needfrag) -> [0]rt;
fr2[1] -> ICMPError(18.26.7.1, unreachable, needfrag) -> [0]rt;
gio1[1] -> ICMPError(18.26.4.24, parameterproblem) -> [0]rt;
gio2[1] -> ICMPError(18.26.4.24, parameterproblem) -> [0]rt;
cp1[1] -> ICMPError(18.26.4.24, redirect, host) -> [0]rt;
cp2[1] -> ICMPError(18.26.7.1, redirect, host) -> [0]rt;

// Unknown Ethernet types.
c0[3] -> Print(c3) -> Discard;
c1[3] -> Print(c3) -> Discard;
