;; loop_forever.wat — hostile: never returns. Each call runs out of fuel and is a fault
;; (its packets are dropped and counted as "out of fuel").
(module
  (memory (export "memory") 2)
  (func $spin (loop $forever (br $forever)))
  (func (export "sluice_batch") (param $count i32)
    (call $spin))
  (func (export "sluice_packet") (param $len i32) (result i32)
    (call $spin)
    (i32.const 0)))
