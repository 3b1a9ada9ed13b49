require(package sluice);
a :: Idle; d :: Discard;
a -> ( [0] -> b :: Counter; c :: Counter -> [0] ) -> d; b -> c;
t :: Tee(2); Idle -> t; t[1] -> [0] Print("x, y") -> d; t => d;
