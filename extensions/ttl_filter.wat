;; ttl_filter.wat — IPv4 packets whose TTL is below PARAM leave by output 1, or are
;; dropped when only output 0 is in use; everything else leaves by output 0, unchanged.
;;
;; `WasmElement(extensions/ttl_filter.wat, PARAM 5)`. The IP header is at the packet's
;; network header annotation (`net_off`), or at its start without one. Packets too short
;; for an IP header, or not IPv4, pass. Works in both modes (ABI 1, see
;; docs/wasm-extensions.md).
(module
  (memory (export "memory") 2)

  ;; The verdict for packet $i: 0, 1 or -1 (drop).
  (func $verdict (param $i i32) (result i32)
    (local $desc i32) (local $data i32) (local $off i32)
    (local.set $desc (i32.add (i32.const 32) (i32.mul (local.get $i) (i32.const 48))))
    (local.set $data (i32.add (i32.const 2048) (i32.mul (local.get $i) (i32.const 2048))))
    ;; net_off, or 0 without a network header annotation
    (local.set $off (i32.load16_u offset=34 (local.get $desc)))
    (if (i32.eq (local.get $off) (i32.const 0xFFFF))
      (then (local.set $off (i32.const 0))))
    ;; caplen < off + 20: too short to be IPv4
    (if (i32.lt_u (i32.load offset=4 (local.get $desc))
                  (i32.add (local.get $off) (i32.const 20)))
      (then (return (i32.const 0))))
    (local.set $data (i32.add (local.get $data) (local.get $off)))
    ;; version 4?
    (if (i32.ne (i32.shr_u (i32.load8_u (local.get $data)) (i32.const 4)) (i32.const 4))
      (then (return (i32.const 0))))
    ;; TTL (byte 8) below PARAM (header + 24)?
    (if (i32.lt_u (i32.load8_u offset=8 (local.get $data)) (i32.load offset=24 (i32.const 0)))
      (then
        ;; output 1 if in use (noutputs at header + 8), else drop
        (return (select (i32.const 1) (i32.const -1)
                        (i32.gt_u (i32.load offset=8 (i32.const 0)) (i32.const 1))))))
    (i32.const 0))

  (func (export "sluice_batch") (param $count i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        ;; descriptor's port field (+8)
        (i32.store offset=8
          (i32.add (i32.const 32) (i32.mul (local.get $i) (i32.const 48)))
          (call $verdict (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  (func (export "sluice_packet") (param $len i32) (result i32)
    (call $verdict (i32.const 0))))
