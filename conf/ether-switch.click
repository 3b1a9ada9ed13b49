// ether-switch.click -- a three-port Ethernet switch with IEEE 802.1D spanning tree, the
// configuration of Figure 16 of the Click paper.
//
//   $DEV0 --+                                              +-- $DEV0
//   $DEV1 --+-- Classifier --[data]--> in_supp -> switch -> out_supp --+-- $DEV1 (Queue,
//   $DEV2 --+        |                                      stp ------+-- $DEV2  ToDevice)
//                    +--[BPDUs]--> stp
//
// EtherSwitch learns which port each source address is on and forwards or floods. The
// spanning tree protocol (EtherSpanTree) talks with the other bridges of the network
// (BPDUs to 01:80:c2:00:00:00, LLC 42 42 03, which the Classifier sends it) and breaks
// loops by suppressing the ports that must not forward, in the Suppressors on both sides
// of the switch; it sends its own BPDUs straight to the devices. While the network
// signals a topology change, it lowers the switch's TIMEOUT to the forward delay.
//
// Parameters (sluice ether-switch.click NAME=VALUE ...): the devices, the bridge's
// Ethernet address and priority, the timers it announces if it becomes the root (802.1D's
// defaults; the smallest 802.1D allows are HELLO_TIME 1, MAX_AGE 6, FORWARD_DELAY 4), and
// the switch's address timeout. Run as root: FromDevice reads every frame of the device.

define($DEV0 eth0, $DEV1 eth1, $DEV2 eth2,
       $BRIDGE_ETH 02:00:00:00:5e:01, $PRIORITY 0xdead,
       $HELLO_TIME 2, $MAX_AGE 20, $FORWARD_DELAY 15, $TIMEOUT 300);

stp :: EtherSpanTree($BRIDGE_ETH, in_supp, out_supp, switch,
                     PRIORITY $PRIORITY, HELLO_TIME $HELLO_TIME, MAX_AGE $MAX_AGE,
                     FORWARD_DELAY $FORWARD_DELAY);
switch :: EtherSwitch(TIMEOUT $TIMEOUT);
in_supp, out_supp :: Suppressor;

q0 :: Queue(1000) -> ToDevice($DEV0);
q1 :: Queue(1000) -> ToDevice($DEV1);
q2 :: Queue(1000) -> ToDevice($DEV2);

// Output 0: BPDUs (to the bridge group address, LLC SAP 0x42); output 1: everything else.
FromDevice($DEV0, PROMISC true) -> c0 :: Classifier(0/0180c2000000 14/4242, -);
FromDevice($DEV1, PROMISC true) -> c1 :: Classifier(0/0180c2000000 14/4242, -);
FromDevice($DEV2, PROMISC true) -> c2 :: Classifier(0/0180c2000000 14/4242, -);

c0[0] -> [0]stp[0] -> q0;
c1[0] -> [1]stp[1] -> q1;
c2[0] -> [2]stp[2] -> q2;

c0[1] -> [0]in_supp[0] -> [0]switch[0] -> [0]out_supp[0] -> q0;
c1[1] -> [1]in_supp[1] -> [1]switch[1] -> [1]out_supp[1] -> q1;
c2[1] -> [2]in_supp[2] -> [2]switch[2] -> [2]out_supp[2] -> q2;
