;; bad_port.wat — hostile: sends every packet to the first output that is not in use
;; (`noutputs`, from the header). Each call is a fault counted as "bad port".
(module
  (memory (export "memory") 2)
  (func (export "sluice_batch") (param $count i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (i32.store offset=8 (i32.add (i32.const 32) (i32.mul (local.get $i) (i32.const 48)))
                   (i32.load offset=8 (i32.const 0)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))
  (func (export "sluice_packet") (param $len i32) (result i32)
    (i32.load offset=8 (i32.const 0))))
