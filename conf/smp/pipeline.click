// pipeline.click -- Figure 14 of SMP Click: pipelining one push path over two threads.
//
// Stage 1 (the source and the first SyntheticLoad, standing in for decryption) runs on thread
// 0; a ThreadSafeQueue carries its packets to stage 2 (an Unqueue, SMP Click's PullToPush,
// and the second SyntheticLoad, standing in for encryption) on thread 1. The two stages do the
// same work, so each thread does half of the per-packet work. Packets that find the queue
// full are dropped and counted in q.drops: s1.count = s2.count + q.drops.
//
// Run: sluice -j 2 -f conf/smp/pipeline.click LIMIT=100000 -h s1.count -h s2.count -h q.drops -h tasks

define($LIMIT 10000, $BURST 32, $N 4, $S 256K, $CYCLES 300, $QCAP 4096);

src :: InfiniteSource(LENGTH 64, LIMIT $LIMIT, BURST $BURST, STOP true, TIMESTAMP false)
    -> stage1 :: SyntheticLoad($N, $S, CYCLES $CYCLES, SEED 1)
    -> s1 :: Counter
    -> q :: ThreadSafeQueue($QCAP)
    -> uq :: Unqueue(BURST $BURST)
    -> stage2 :: SyntheticLoad($N, $S, CYCLES $CYCLES, SEED 2)
    -> s2 :: Counter
    -> Discard;

StaticThreadSched(src 0, uq 1);
