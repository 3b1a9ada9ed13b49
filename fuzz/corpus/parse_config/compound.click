// compound elements with parameters, overloading and extension
elementclass Shaper { $rate | input -> q :: Queue(100) -> BandwidthShaper($rate) -> output
  || input -> Queue -> output }
elementclass Shaper { $a, $b | input -> Shaper($a) -> Shaper($b) -> output || ... }
define($R 10Mbps);
src :: InfiniteSource(DATA "\<00 11 22>", LIMIT 5);
src -> s1 :: Shaper($R) -> Unqueue -> Discard;
Idle -> Shaper -> Unqueue -> Discard;
Idle -> Shaper(1kbps, 2kbps) -> Unqueue -> Discard;
