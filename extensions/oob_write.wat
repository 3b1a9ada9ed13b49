;; oob_write.wat — hostile: stores a word just past the end of its memory. The sandbox
;; stops it; each call is a fault counted as "out-of-bounds access".
(module
  (memory (export "memory") 2)
  (func $scribble
    (i32.store (i32.mul (memory.size) (i32.const 65536)) (i32.const 0xDEADBEEF)))
  (func (export "sluice_batch") (param $count i32)
    (call $scribble))
  (func (export "sluice_packet") (param $len i32) (result i32)
    (call $scribble)
    (i32.const 0)))
