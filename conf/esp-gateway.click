// An IPsec security gateway: ESP in tunnel mode (RFC 4303) between the local network on one
// interface and a peer gateway on the other. Packets from the local network to $REMOTE_NET
// are encrypted (ESPEncap) and sent to $PEER; ESP from the peer is reassembled if it was
// fragmented, authenticated, checked against the anti-replay window and decrypted
// (ESPDecap), and its inner packet is delivered only if it is from $REMOTE_NET to
// $LOCAL_NET (RFC 4301's inbound policy check). Nothing else crosses: other packets are
// dropped and counted (inside_other, outside_other, policy_drop).
//
//   sluice -f conf/esp-gateway.click IN_MAC=… OUT_MAC=… OUT_KEYS=a-to-b.keys IN_KEYS=b-to-a.keys
//
// Key files hold `aead HEX` (aes-gcm-128) or `enc HEX` and `auth HEX` (aes-cbc-128-hmac-sha1),
// as `ip xfrm state` takes them (`sluice doc ESPEncap`). The peer's SAs are the mirror image:
// its inbound SPI is $OUT_SPI with OUT_KEYS, its outbound SPI is $IN_SPI with IN_KEYS.

define($IN_IF ra, $IN_MAC 02:00:00:00:00:01, $IN_ADDR 198.18.1.1, $LOCAL_NET 198.18.1.0/24,
       $OUT_IF rb, $OUT_MAC 02:00:00:00:00:02, $OUT_ADDR 198.18.100.1,
       $PEER 198.18.100.2, $REMOTE_NET 198.18.2.0/24,
       $ALG aes-gcm-128, $OUT_SPI 0x1001, $OUT_KEYS out.keys, $IN_SPI 0x2001, $IN_KEYS in.keys,
       $REPLAY_WINDOW 64, $MTU 1500);

// ---- inside interface: the local network
in_q :: Queue(1000) -> ToDevice($IN_IF);
in_c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($IN_IF) -> HostEtherFilter($IN_MAC) -> in_c;
in_c[0] -> ARPResponder($IN_ADDR $IN_MAC) -> in_q;
in_arp :: ARPQuerier($IN_ADDR, $IN_MAC) -> in_q;
in_c[1] -> [1]in_arp;
in_c[3] -> Discard;

// ---- outside interface: the peer gateway
out_q :: Queue(1000) -> ToDevice($OUT_IF);
out_c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($OUT_IF) -> HostEtherFilter($OUT_MAC) -> out_c;
out_c[0] -> ARPResponder($OUT_ADDR $OUT_MAC) -> out_q;
out_arp :: ARPQuerier($OUT_ADDR, $OUT_MAC) -> out_q;
out_c[1] -> [1]out_arp;
out_c[3] -> Discard;

// ---- outbound: local network -> tunnel
in_c[2] -> Strip(14) -> CheckIPHeader
  -> sel :: IPClassifier(src net $LOCAL_NET and dst net $REMOTE_NET, -);
sel[1] -> inside_other :: Discard;
sel[0] -> out_ttl :: DecIPTTL
  -> esp :: ESPEncap($OUT_SPI, $OUT_ADDR, $PEER, ALG $ALG, KEYFILE $OUT_KEYS)
  -> IPFragmenter($MTU)
  -> [0]out_arp;
out_ttl[1] -> ICMPError($IN_ADDR, timeexceeded) -> [0]in_arp;

// ---- inbound: tunnel -> local network
out_c[2] -> Strip(14) -> CheckIPHeader
  -> tun :: IPClassifier(ip proto 50 and src host $PEER and dst host $OUT_ADDR, -);
tun[1] -> outside_other :: Discard;
tun[0] -> IPReassembler
  -> dec :: ESPDecap($IN_SPI, ALG $ALG, KEYFILE $IN_KEYS, REPLAY_WINDOW $REPLAY_WINDOW)
  -> CheckIPHeader
  -> policy :: IPClassifier(src net $REMOTE_NET and dst net $LOCAL_NET, -);
policy[1] -> policy_drop :: Discard;
policy[0] -> in_ttl :: DecIPTTL -> [0]in_arp;
in_ttl[1] -> expired :: Discard;
