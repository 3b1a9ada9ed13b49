// PACKET scripts: the return value picks the output, `end` means output 0, `exit` and
// outputs that do not exist drop the packet; $input is the input port.
FromIPSummaryDump(IN, STOP true)
-> ps :: PaintSwitch;
t :: ToIPSummaryDump(-, FIELDS paint sport);

ps[0] -> Script(TYPE PACKET) -> Paint(0) -> t;
ps[1] -> Script(TYPE PACKET, end) -> Paint(1) -> t;
ps[2] -> Script(TYPE PACKET, exit) -> Paint(2) -> t;
ps[3] -> sx :: Script(TYPE PACKET, init i 0, set j $i, set i $(if $(eq $i 0) 1 0), return $j) -> Paint(3) -> t;
      sx [1] -> Paint(4) -> t;
ps[4] -> sy :: Script(TYPE PACKET, init i 0, set j $i, set i $(add $i 1), set i $(if $(eq $i 3) 0 $i), return $j) -> Paint(5) -> t;
      sy [1] -> Paint(6) -> t;
ps[5] -> sz :: Script(return $(add $input 7)) -> Paint(7) -> t;
Idle -> [1] sz [1] -> Paint(8) -> t;
