;; mark_dscp.wat — sets the DSCP of IPv4 packets to PARAM (0 to 63), keeping the ECN bits,
;; and updates the header checksum incrementally (RFC 1624: HC' = ~(~HC + ~m + m')).
;;
;; `WasmElement(extensions/mark_dscp.wat, PARAM 46)` marks Expedited Forwarding. The IP
;; header is at `net_off`, or at the packet's start without one; packets too short for an
;; IP header, or not IPv4, pass unchanged. A changed packet has bit 0 of its descriptor's
;; flags set, so that the host copies its bytes back. Every packet leaves by output 0.
;; Batch mode only (ABI 1, see docs/wasm-extensions.md).
(module
  (memory (export "memory") 2)

  ;; Marks packet $i.
  (func $mark (param $i i32)
    (local $desc i32) (local $ip i32) (local $off i32)
    (local $old i32) (local $new i32) (local $sum i32)
    (local.set $desc (i32.add (i32.const 32) (i32.mul (local.get $i) (i32.const 48))))
    (local.set $off (i32.load16_u offset=34 (local.get $desc)))
    (if (i32.eq (local.get $off) (i32.const 0xFFFF))
      (then (local.set $off (i32.const 0))))
    (if (i32.lt_u (i32.load offset=4 (local.get $desc))
                  (i32.add (local.get $off) (i32.const 20)))
      (then (return)))
    (local.set $ip (i32.add (i32.add (i32.const 2048) (i32.mul (local.get $i) (i32.const 2048)))
                            (local.get $off)))
    (if (i32.ne (i32.shr_u (i32.load8_u (local.get $ip)) (i32.const 4)) (i32.const 4))
      (then (return)))
    ;; m: the header's first 16-bit word (version/IHL, TOS), big-endian
    (local.set $old (i32.or (i32.shl (i32.load8_u (local.get $ip)) (i32.const 8))
                            (i32.load8_u offset=1 (local.get $ip))))
    ;; m': the same word with the new DSCP and the old ECN bits
    (local.set $new (i32.or (i32.and (local.get $old) (i32.const 0xFF03))
                            (i32.shl (i32.and (i32.load offset=24 (i32.const 0)) (i32.const 63))
                                     (i32.const 2))))
    (if (i32.eq (local.get $new) (local.get $old))
      (then (return)))
    (i32.store8 offset=1 (local.get $ip) (local.get $new))
    ;; ~HC + ~m + m', folded to 16 bits twice, complemented
    (local.set $sum
      (i32.add
        (i32.add
          (i32.xor (i32.or (i32.shl (i32.load8_u offset=10 (local.get $ip)) (i32.const 8))
                           (i32.load8_u offset=11 (local.get $ip)))
                   (i32.const 0xFFFF))
          (i32.xor (local.get $old) (i32.const 0xFFFF)))
        (local.get $new)))
    (local.set $sum (i32.add (i32.and (local.get $sum) (i32.const 0xFFFF))
                             (i32.shr_u (local.get $sum) (i32.const 16))))
    (local.set $sum (i32.add (i32.and (local.get $sum) (i32.const 0xFFFF))
                             (i32.shr_u (local.get $sum) (i32.const 16))))
    (local.set $sum (i32.xor (local.get $sum) (i32.const 0xFFFF)))
    (i32.store8 offset=10 (local.get $ip) (i32.shr_u (local.get $sum) (i32.const 8)))
    (i32.store8 offset=11 (local.get $ip) (local.get $sum))
    ;; flags: bytes changed
    (i32.store offset=12 (local.get $desc)
      (i32.or (i32.load offset=12 (local.get $desc)) (i32.const 1))))

  (func (export "sluice_batch") (param $count i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (call $mark (local.get $i))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))))
