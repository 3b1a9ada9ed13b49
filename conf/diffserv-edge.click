// diffserv-edge.click -- a DiffServ edge router on one link, on pcap files.
//
// Ethernet/IPv4 frames from $IN are classified by address and port into three classes,
// metered, marked with their DSCP and queued; a priority scheduler serves the expedited
// class first and shares the rest of the link by deficit round robin. The link is modelled
// by LinkUnqueue; what it sends is written to $OUT.
//
//   EF (expedited forwarding): UDP to port $EF_PORT (voice). Metered in packets/s: in
//      profile it is marked DSCP 46, above $EF_RATE it is policed (dropped, counted by
//      ef_excess). A Shaper keeps EF within $EF_SHAPE packets/s so that it cannot starve
//      the other classes.
//   AF (assured forwarding, class 1): traffic from the customer prefix $AF_NET. Metered in
//      bytes/s: below $AF_RATE it is AF11 (DSCP 10), above it AF12 (DSCP 12, dropped first
//      downstream); both share one queue, so AF packets stay in order.
//   BE (best effort): everything else, re-marked DSCP 0. RED watches the BE queue and drops
//      early as its average length grows.
//
// The AF and BE queues share what EF leaves of the link through DRRSched (equal byte shares
// per round of $QUANTUM bytes). Every packet that does not leave is counted: chk.drops
// (bad IP headers), ef_excess.count (EF policing), red.drops, and the queues' drops. The
// Shaper has no timer of its own: under --simtime, EF packets it still holds back when the
// input ends stay in ef_q (its length handler counts them).
//
// Run: sluice --simtime -f conf/diffserv-edge.click IN=in.pcap OUT=out.pcap \
//        -h chk.drops -h ef_excess.count -h red.drops -h '*_q.drops' -h '*_q.length' -h link.count

define($IN in.pcap, $OUT out.pcap,
       $EF_PORT 5004, $AF_NET 198.18.0.32/27,
       $EF_RATE 200, $EF_SHAPE 400, $AF_RATE 100kBps,
       $LINK 10Mbps, $QUANTUM 1500);

src :: FromDump($IN, STOP true, TIMING true)
  -> chk :: CheckIPHeader(OFFSET 14)
  -> cls :: IPClassifier(udp dst port $EF_PORT, src net $AF_NET, -);

// EF: police to $EF_RATE, mark, shape.
cls[0] -> ef_meter :: Meter($EF_RATE);
ef_meter[0] -> SetIPDSCP(46) -> ef_q :: Queue(50);
ef_meter[1] -> ef_excess :: Counter -> Discard;

// AF1: in profile AF11, out of profile AF12.
cls[1] -> af_meter :: BandwidthMeter($AF_RATE);
af_meter[0] -> SetIPDSCP(10) -> af_q :: Queue(200);
af_meter[1] -> SetIPDSCP(12) -> af_q;

// Best effort, with RED in front of its queue.
cls[2] -> SetIPDSCP(0) -> red :: RED(10, 60, 0.1) -> be_q :: Queue(100);

// Scheduling: EF (shaped) strictly first, then AF and BE by deficit round robin.
ef_q -> ef_shaper :: Shaper($EF_SHAPE) -> [0]prio :: PrioSched;
af_q -> [0]drr :: DRRSched(QUANTUM $QUANTUM);
be_q -> [1]drr;
drr -> [1]prio;
prio -> link :: LinkUnqueue(1ms, $LINK) -> ToDump($OUT);
