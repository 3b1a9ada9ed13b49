// Flattening compound elements: names of their contents and where they go.
elementclass Stage { $n | input -> Counter -> Print($n, 8) -> output }
elementclass Two { input -> a :: Stage(a) -> Stage(b) -> output }
Idle -> s1 :: Stage(one) -> Two -> Discard;
