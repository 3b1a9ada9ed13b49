a :: Idle;
a :: Idle;
a -> -> b;
elementclass R { input -> R -> output } Idle -> R -> Discard;
x :: Foo(
