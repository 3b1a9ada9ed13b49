// Command-line outputs: -h handler values, -o flat configuration, error messages.
require(compact_config);
src :: Idle;
src -> c :: Counter -> q :: Queue(5) -> u :: Unqueue -> Counter -> Print(one, 8) -> d1 :: Discard;
src [1] -> Discard;
t :: Tee(2);
Idle -> t -> d2 :: Discard;
t [1] -> d3 :: Discard;
