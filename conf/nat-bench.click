// nat-bench.click -- the Click paper's IP router benchmark (conf/fake-iprouter.click) with a
// NAPT on its input path, for `sluice bench nat`.
//
// The router of fake-iprouter.click, fed by FastUDPFlows instead of one repeated packet:
// 64-byte UDP frames from 1.0.0.1 to 2.0.0.2 in $FLOWS flows (random ports, taking turns),
// forwarded eth1 -> eth0 by the default route. Every packet is translated by IPRewriter to
// the router's eth0 address and a port of 1024-65535 before the route lookup, as a NAT
// gateway does. `sluice bench nat` times this file and, as the baseline in the same run, the
// same file without the line that declares `nat`.

// Frame classification per interface: [0] ARP query, [1] ARP reply, [2] IP, [3] other.
c0 :: Classifier(12/0806 20/0001,
                  12/0806 20/0002,
                  12/0800,
                  -);
c1 :: Classifier(12/0806 20/0001,
                  12/0806 20/0002,
                  12/0800,
                  -);

// eth0 receives nothing; eth1 receives the flows (to eth0's Ethernet address).
define($LIMIT 2000000, $FLOWS 1000, $BURST 32);
Idle -> [0]c0;
src :: FastUDPFlows(0, $LIMIT, 64, 00:00:00:00:00:00, 1.0.0.1, 00:00:c0:ae:67:ef, 2.0.0.2,
                    $FLOWS, 1000000000, CHECKSUM true, STOP true)
    -> Unqueue(BURST $BURST) -> [0]c1;

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

// Input IP path: paint by interface, strip Ethernet, check the header, translate, route.
ip ::   Strip(14)
     -> CheckIPHeader(18.26.4.255 1.255.255.255)
     -> nat :: IPRewriter(pattern 18.26.4.24 1024-65535# - - 0 0, MAPPING_CAPACITY 4000000)
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
