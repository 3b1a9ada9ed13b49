;; null.wat — the null extension: every packet leaves by output 0, unchanged.
;;
;; The smallest module WasmElement runs (ABI 1, see docs/wasm-extensions.md): it exports
;; its memory (two pages hold the packet area at address 0) and both entry points, which
;; do nothing. The host presets every verdict to port 0, so an empty sluice_batch passes
;; the batch on. wasm_bench measures the cost of a call with it.
(module
  (memory (export "memory") 2)
  (func (export "sluice_batch") (param $count i32))
  (func (export "sluice_packet") (param $len i32) (result i32)
    (i32.const 0)))
