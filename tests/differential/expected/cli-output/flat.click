require(compact_config);

src :: Idle;
c :: Counter;
q :: Queue(5);
u :: Unqueue;
Counter@5 :: Counter;
Print@6 :: Print(one, 8);
d1 :: Discard;
Discard@8 :: Discard;
t :: Tee(2);
Idle@10 :: Idle;
d2 :: Discard;
d3 :: Discard;

src -> c
    -> q
    -> u
    -> Counter@5
    -> Print@6
    -> d1;
src [1] -> Discard@8;
Idle@10 -> t
    -> d2;
t [1] -> d3;
