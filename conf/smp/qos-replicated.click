// qos-replicated.click -- Figure 16 of SMP Click: the QoS configuration replicated into three
// streams that run in parallel, each with its own priority scheduler.
//
// Thread 0 runs the sources and the HashSwitch (device handling and header processing in
// the paper). HashSwitch breaks the flows into three streams; each stream classifies by the
// IP TOS byte into three ThreadSafeQueues (EF 0xb8 high, AF11 0x28 medium, the rest low), a
// PrioSched serves them strictly by priority, and the stream's PullToPush runs the expensive
// element (SyntheticLoad) on its own thread: streams s0, s1, s2 on threads 1, 2, 3 (with
// -j 2 the numbers wrap: s0 and s2 on thread 1, s1 on thread 0). Full queues drop and count.
// Traffic: six UDP flows 198.18.0.1 -> 198.18.1.1 .. 198.18.1.6 (64-byte Ethernet frames), one
// InfiniteSource each, LIMIT packets per flow. HashSwitch(30, 4) hashes the destination
// address; these six addresses split evenly over 3 outputs.
// Flows 1-2 are EF, 3-4 AF11, 5-6 best effort.
//
// Run: sluice -j 2 -f conf/smp/qos-replicated.click LIMIT=100000 -h 's*/out.count' -h tasks

define($LIMIT 10000, $BURST 8, $N 4, $S 256K, $CYCLES 300, $QCAP 1024);

elementclass QoSStream { $qcap, $n, $s, $cycles, $seed |
    input -> cl :: Classifier(15/b8, 15/28, -);
    cl[0] -> hi :: ThreadSafeQueue($qcap) -> [0]ps :: PrioSched;
    cl[1] -> mid :: ThreadSafeQueue($qcap) -> [1]ps;
    cl[2] -> lo :: ThreadSafeQueue($qcap) -> [2]ps;
    ps -> pp :: PullToPush
       -> w :: SyntheticLoad($n, $s, CYCLES $cycles, SEED $seed)
       -> out :: Counter -> output;
}

hs :: HashSwitch(30, 4);
f1 :: InfiniteSource(DATA "\<02 00 00 00 00 02 02 00 00 00 00 01 08 00  45 b8 00 32 00 00 00 00 40 11 ec dc c6 12 00 01 c6 12 01 01  04 d2 16 2e 00 1e 00 00 73 6c 75 69 63 65 20 73 6d 70 20 66 6c 6f 77 20 31 2e 2e 2e 2e 2e>",
    LIMIT $LIMIT, BURST $BURST, STOP true, TIMESTAMP false) -> hs;
f2 :: InfiniteSource(DATA "\<02 00 00 00 00 02 02 00 00 00 00 01 08 00  45 b8 00 32 00 00 00 00 40 11 ec db c6 12 00 01 c6 12 01 02  04 d2 16 2e 00 1e 00 00 73 6c 75 69 63 65 20 73 6d 70 20 66 6c 6f 77 20 32 2e 2e 2e 2e 2e>",
    LIMIT $LIMIT, BURST $BURST, STOP true, TIMESTAMP false) -> hs;
f3 :: InfiniteSource(DATA "\<02 00 00 00 00 02 02 00 00 00 00 01 08 00  45 28 00 32 00 00 00 00 40 11 ed 6a c6 12 00 01 c6 12 01 03  04 d2 16 2e 00 1e 00 00 73 6c 75 69 63 65 20 73 6d 70 20 66 6c 6f 77 20 33 2e 2e 2e 2e 2e>",
    LIMIT $LIMIT, BURST $BURST, STOP true, TIMESTAMP false) -> hs;
f4 :: InfiniteSource(DATA "\<02 00 00 00 00 02 02 00 00 00 00 01 08 00  45 28 00 32 00 00 00 00 40 11 ed 69 c6 12 00 01 c6 12 01 04  04 d2 16 2e 00 1e 00 00 73 6c 75 69 63 65 20 73 6d 70 20 66 6c 6f 77 20 34 2e 2e 2e 2e 2e>",
    LIMIT $LIMIT, BURST $BURST, STOP true, TIMESTAMP false) -> hs;
f5 :: InfiniteSource(DATA "\<02 00 00 00 00 02 02 00 00 00 00 01 08 00  45 00 00 32 00 00 00 00 40 11 ed 90 c6 12 00 01 c6 12 01 05  04 d2 16 2e 00 1e 00 00 73 6c 75 69 63 65 20 73 6d 70 20 66 6c 6f 77 20 35 2e 2e 2e 2e 2e>",
    LIMIT $LIMIT, BURST $BURST, STOP true, TIMESTAMP false) -> hs;
f6 :: InfiniteSource(DATA "\<02 00 00 00 00 02 02 00 00 00 00 01 08 00  45 00 00 32 00 00 00 00 40 11 ed 8f c6 12 00 01 c6 12 01 06  04 d2 16 2e 00 1e 00 00 73 6c 75 69 63 65 20 73 6d 70 20 66 6c 6f 77 20 36 2e 2e 2e 2e 2e>",
    LIMIT $LIMIT, BURST $BURST, STOP true, TIMESTAMP false) -> hs;

hs[0] -> s0 :: QoSStream($QCAP, $N, $S, $CYCLES, 1) -> Discard;
hs[1] -> s1 :: QoSStream($QCAP, $N, $S, $CYCLES, 2) -> Discard;
hs[2] -> s2 :: QoSStream($QCAP, $N, $S, $CYCLES, 3) -> Discard;

StaticThreadSched(f1 0, f2 0, f3 0, f4 0, f5 0, f6 0, s0/pp 1, s1/pp 2, s2/pp 3);

// The run ends when all 6 sources are done and the packets in flight have drained.
DriverManager(wait_stop 6, stop);
