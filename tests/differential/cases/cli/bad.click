i :: InfiniteSource -> Print -> d :: Discard;
i -> Print -> d;
x :: Idle -> Discard;
Idle -> [1] x;
