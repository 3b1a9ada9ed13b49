// A SIGNAL script that ends with `end` handles the next signal too; signals that arrive
// before it runs are handled once.
Script(print "K 1",
       set y $(kill USR1 $$),
       print "K 2",
       set y $(kill USR1 $$),
       wait 0.00001s,
       print "K 3",
       set y $(kill USR1 $$),
       wait 0.00001s,
       stop)
Script(TYPE SIGNAL USR1 USR2,
       print "got USR1",
       end)
