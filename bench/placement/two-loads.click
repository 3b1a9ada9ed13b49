// two-loads.click -- the chain of Dobrescu et al. (PRESTO 2010) §3.1: each packet is processed
// by two elements, each reading N random words of its own S-byte array.
//
// Plan it:  sluice plan bench/placement/two-loads.click -j 2 S=4M
// Run it:   sluice -f bench/placement/two-loads.click S=4M  (one thread; `sluice plan --show`
//           prints the cloned or pipelined version to run with -j 2)

define($N 200, $S 1M, $CYCLES 0, $LIMIT 1000000);

src :: InfiniteSource(LENGTH 64, LIMIT $LIMIT, BURST 32, STOP true, TIMESTAMP false)
    -> a :: SyntheticLoad($N, $S, CYCLES $CYCLES, SEED 1)
    -> b :: SyntheticLoad($N, $S, CYCLES $CYCLES, SEED 2)
    -> d :: Discard;
