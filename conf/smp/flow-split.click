// flow-split.click -- Figure 3 of SMP Click (Chen & Morris): splitting one push path into
// flows so that several threads run the expensive element.
//
// The sources and the HashSwitch run on thread 0. Each HashSwitch output ends in a
// ThreadSafeQueue (a plain Queue cannot be pushed on one thread and pulled on another); a
// PullToPush per flow group is a new place where a thread enters the configuration and runs
// the expensive element (SyntheticLoad standing in for encryption) for its half of the flows.
// StaticThreadSched puts p0 on thread 0 and p1 on thread 1 (thread numbers wrap with -j 1).
// Packets that find their queue full are dropped and counted in q0.drops / q1.drops.
// Traffic: six UDP flows 198.18.0.1 -> 198.18.1.1 .. 198.18.1.6 (64-byte Ethernet frames), one
// InfiniteSource each, LIMIT packets per flow. HashSwitch(30, 4) hashes the destination
// address; these six addresses split evenly over 2 and over 3 outputs.
//
// Run: sluice -j 2 -f conf/smp/flow-split.click LIMIT=100000 -h c0.count -h c1.count -h q0.drops -h q1.drops -h tasks

define($LIMIT 10000, $BURST 8, $N 4, $S 256K, $CYCLES 300, $QCAP 4096);

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

hs[0] -> q0 :: ThreadSafeQueue($QCAP) -> p0 :: PullToPush
      -> w0 :: SyntheticLoad($N, $S, CYCLES $CYCLES, SEED 1) -> c0 :: Counter -> Discard;
hs[1] -> q1 :: ThreadSafeQueue($QCAP) -> p1 :: PullToPush
      -> w1 :: SyntheticLoad($N, $S, CYCLES $CYCLES, SEED 2) -> c1 :: Counter -> Discard;

StaticThreadSched(f1 0, f2 0, f3 0, f4 0, f5 0, f6 0, p0 0, p1 1);

// The run ends when all 6 sources are done and the packets in flight have drained.
DriverManager(wait_stop 6, stop);
