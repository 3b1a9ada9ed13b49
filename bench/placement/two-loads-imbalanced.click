// two-loads-imbalanced.click -- the pipeline-imbalance experiment of Dobrescu et al. (PRESTO
// 2010) §3.1: two elements as in two-loads.click, but the first reads N1 random words of its
// S-byte array per packet and the second N2 (the paper: N1 = 396, N2 = 4, S = 6 MB).
//
// Plan it:  sluice plan bench/placement/two-loads-imbalanced.click -j 2 S=6M
// Measured by bench/placement/fig2.py (cloned and pipelined versions built like `sluice bench
// scaling`'s load section).

define($N1 396, $N2 4, $S 6M, $CYCLES 0, $LIMIT 1000000);

src :: InfiniteSource(LENGTH 64, LIMIT $LIMIT, BURST 32, STOP true, TIMESTAMP false)
    -> a :: SyntheticLoad($N1, $S, CYCLES $CYCLES, SEED 1)
    -> b :: SyntheticLoad($N2, $S, CYCLES $CYCLES, SEED 2)
    -> d :: Discard;
