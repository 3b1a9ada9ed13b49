// A SIGNAL script that exits is not called again: the next signal takes its default
// action and ends the process.
Script(print "K 1",
       set y $(kill USR1 $$),
       wait 0.00001s,
       print "K 2",
       set y $(kill USR1 $$),
       wait 0.00001s,
       print "not reached",
       stop)
Script(TYPE SIGNAL USR1,
       print "got USR1",
       exit)
