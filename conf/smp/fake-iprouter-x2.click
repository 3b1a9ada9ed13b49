// fake-iprouter-x2.click -- two complete, independent copies of conf/fake-iprouter.click (the
// Figure 8 IP router of the Click paper without devices), one per thread: SMP Click's
// "one core per packet" cloning. Each copy is the whole router (comments removed: the
// language does not yet accept comments inside an elementclass body) wrapped in a compound
// element; StaticThreadSched puts copy 0's source on thread 0 and copy 1's on thread 1, and
// every task that shares a queue with a source (the Discards pulling the transmit queues)
// follows it. Each source STOPs after LIMIT packets; a DriverManager stops the router when
// both have, once the packets in flight have drained.
//
// Run: sluice -j 2 -f conf/smp/fake-iprouter-x2.click LIMIT=1000000 -h tasks
// (sluice bench scaling generates N copies the same way.)

define($LIMIT 600000);

elementclass FakeIPRouter {
    c0 :: Classifier(12/0806 20/0001,
                      12/0806 20/0002,
                      12/0800,
                      -);
    c1 :: Classifier(12/0806 20/0001,
                      12/0806 20/0002,
                      12/0800,
                      -);

    Idle -> [0]c0;
    src :: InfiniteSource(DATA "\<
      00 00 c0 ae 67 ef  00 00 00 00 00 00  08 00
      45 00 00 28  00 00 00 00  40 11 77 c3  01 00 00 01  02 00 00 02
      13 69 13 69  00 14 d6 41
      55 44 50 20  70 61 63 6b  65 74 21 0a  04 00 00 00  01 00 00 00
      01 00 00 00  00 00 00 00  00 80 04 08  00 80 04 08  53 53 00 00
      53 53 00 00  05 00 00 00  00 10 00 00  01 00 00 00  54 53 00 00
      54 e3 04 08  54 e3 04 08  d8 01 00 00>", LIMIT $LIMIT, BURST 5, STOP true) -> [0]c1;

    out0 :: Queue(200) -> Discard(BURST 32);
    out1 :: Queue(200) -> Discard(BURST 32);
    tol :: Discard;

    fake_arpq0 :: EtherEncap(0x0800, 00:00:c0:ae:67:ef, 00:00:c0:4f:71:ef);
    fake_arpq1 :: EtherEncap(0x0800, 00:00:c0:4f:71:ef, 00:00:c0:4f:71:ef);

    t :: Tee(3);
    c0[1] -> t;
    c1[1] -> t;
    t[0] -> tol;
    t[1] -> fake_arpq0;
    t[2] -> fake_arpq1;

    fake_arpq0 -> out0;
    fake_arpq1 -> out1;

    ar0 :: ARPResponder(18.26.4.24 00:00:C0:AE:67:EF,
                        18.26.7.0/24 00:00:C0:AE:67:EF);
    c0[0] -> ar0 -> out0;
    ar1 :: ARPResponder(18.26.7.1 00:00:C0:4F:71:EF);
    c1[0] -> ar1 -> out1;

    rt :: StaticIPLookup(18.26.4.24/32 0,
                18.26.4.255/32 0,
                18.26.4.0/32 0,
                18.26.7.1/32 0,
                18.26.7.255/32 0,
                18.26.7.0/32 0,
                18.26.4.0/24 1,
                18.26.7.0/24 2,
                0.0.0.0/0 18.26.4.1 1);

    ip ::   Strip(14)
         -> CheckIPHeader(18.26.4.255 1.255.255.255)
         -> [0]rt;
    c0[2] -> Paint(1) -> ip;
    c1[2] -> Paint(2) -> ip;

    rt[0] -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> tol;

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

    dt1[1] -> ICMPError(18.26.4.24, timeexceeded) -> [0]rt;
    dt2[1] -> ICMPError(18.26.4.24, timeexceeded) -> [0]rt;
    fr1[1] -> ICMPError(18.26.7.1, unreachable, needfrag) -> [0]rt;
    fr2[1] -> ICMPError(18.26.7.1, unreachable, needfrag) -> [0]rt;
    gio1[1] -> ICMPError(18.26.4.24, parameterproblem) -> [0]rt;
    gio2[1] -> ICMPError(18.26.4.24, parameterproblem) -> [0]rt;
    cp1[1] -> ICMPError(18.26.4.24, redirect, host) -> [0]rt;
    cp2[1] -> ICMPError(18.26.7.1, redirect, host) -> [0]rt;

    c0[3] -> Print(c3) -> Discard;
    c1[3] -> Print(c3) -> Discard;
}

r0 :: FakeIPRouter;
r1 :: FakeIPRouter;
StaticThreadSched(r0/src 0, r1/src 1);

// The run ends when all 2 sources are done and the packets in flight have drained.
DriverManager(wait_stop 2, stop);
