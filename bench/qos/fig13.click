// Panama's Figure 13: integrated CPU and link scheduling (bench/qos/fig13.py runs it).
//
// Two flows reserve 2/3 and 1/3 of the link and of the processor. Flow 1 sends at its
// reservation, flow 2 at twice its own; both go through a processing path that costs
// $CYCLES cycles per packet, so together they ask for 4/3 of the processor. With $SCHED 1
// the flows wait in their own queues and CPUSched (8 packets per decision) shares the
// processor by their reservations, derived from their link reservations $RES1 and $RES2;
// with $SCHED 0 they share one FIFO queue, served as they arrive. After processing, each
// flow has its own link queue and StrideSched shares the $LINK link 2:1 (work-conserving).
// A script prints, every $TICK seconds, the time and the packets each flow has delivered
// over the link; the run stops after $TIME seconds.

define($RATE1 40000, $RATE2 40000, $CYCLES 50000, $LENGTH 1000,
       $LINK 60MBps, $RES1 40MBps, $RES2 20MBps,
       $TIME 3, $TICK 0.1, $SCHED 1);

// The two ways into the processing paths: $SCHED picks one, the other sees no packets.
s1 :: RatedSource(LENGTH $LENGTH, RATE $RATE1) -> Paint(1) -> sw1 :: StaticSwitch($SCHED);
s2 :: RatedSource(LENGTH $LENGTH, RATE $RATE2) -> Paint(2) -> sw2 :: StaticSwitch($SCHED);
sw1[0] -> fifo :: Queue(2000); sw2[0] -> fifo;
sw1[1] -> q1 :: Queue(10000); sw2[1] -> q2 :: Queue(10000);

fifo -> Unqueue -> split :: PaintSwitch;
split[1] -> path1 :: SyntheticLoad(0, 8, CYCLES $CYCLES) -> out1 :: Queue(1000);
split[2] -> path2 :: SyntheticLoad(0, 8, CYCLES $CYCLES) -> out2 :: Queue(1000);
split[0] -> Discard;

q1 -> [0]cpu :: CPUSched($RES1, $RES2, BATCH 8);
q2 -> [1]cpu;
cpu[0] -> path1;
cpu[1] -> path2;

out1 -> [0]link :: StrideSched(2, 1);
out2 -> [1]link;
link -> BandwidthRatedUnqueue($LINK) -> done :: PaintSwitch;
done[1] -> c1 :: Counter -> Discard;
done[2] -> c2 :: Counter -> Discard;
done[0] -> Discard;

Script(TYPE ACTIVE, print "$(now) $(c1.count) $(c2.count)", wait $TICK, loop);
Script(TYPE ACTIVE, wait $TIME, write s1.active false, write s2.active false, stop);
