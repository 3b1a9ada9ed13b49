;; trap.wat — hostile: traps on packets whose first byte is 0xFF (`unreachable`) or 0xEE
;; (an integer division by zero), and passes the others to output 0. A call that traps is
;; a fault: its packets are dropped and counted as "trap".
(module
  (memory (export "memory") 2)

  ;; Looks at packet $i's first byte (if it has one).
  (func $check (param $i i32)
    (local $b i32)
    (if (i32.eqz (i32.load offset=4 (i32.add (i32.const 32)
                                             (i32.mul (local.get $i) (i32.const 48)))))
      (then (return)))
    (local.set $b (i32.load8_u (i32.add (i32.const 2048)
                                        (i32.mul (local.get $i) (i32.const 2048)))))
    (if (i32.eq (local.get $b) (i32.const 0xFF))
      (then (unreachable)))
    (if (i32.eq (local.get $b) (i32.const 0xEE))
      (then (drop (i32.div_u (local.get $b) (i32.sub (local.get $b) (i32.const 0xEE)))))))

  (func (export "sluice_batch") (param $count i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (call $check (local.get $i))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  (func (export "sluice_packet") (param $len i32) (result i32)
    (call $check (i32.const 0))
    (i32.const 0)))
