;; Pointwise kernels of the CPU backend in WebAssembly SIMD, two float64 lanes at a time.
;;
;; Source of pointwise_wasm_bytes.ts (`deno task build:wasm`). Plain SIMD128 only: one binary for
;; every engine with SIMD, and no fused multiply-add anywhere.
;;
;; Numerics: each function computes, lane by lane, the operations of its TypeScript kernel in
;; ../cpu/ in the same order, in float64 (the type of a JavaScript number), loading f32 values
;; exactly (promote) and storing them with the same round-to-nearest-even a Float32Array store
;; uses (demote). IEEE 754 add, sub, mul, div and sqrt are exactly rounded, so the bits equal the
;; TypeScript kernel's; the tests compare them bit for bit.
;;
;; Layout: the caller copies blocks of its arrays into this memory; every array argument is a byte
;; address, `n` is a count of f32 values and even (the caller pads a block with zeros).

(module
  (import "env" "memory" (memory 1))

  ;; AdamW (../cpu/adamw.ts), in place on p, m, v from g:
  ;;   m' = b1·m + c1·g              (c1 = 1 − b1, computed by the caller as JavaScript does)
  ;;   v' = b2·v + (c2·g)·g          (c2 = 1 − b2)
  ;;   u  = (m'/bc1) / (sqrt(v'/bc2) + eps)
  ;;   p' = p − lr·(u + wd·p)
  ;; with m' and v' in float64 for u, stored rounded to f32.
  (func (export "adamw")
    (param $g i32) (param $p i32) (param $m i32) (param $v i32) (param $n i32)
    (param $b1 f64) (param $c1 f64) (param $b2 f64) (param $c2 f64)
    (param $bc1 f64) (param $bc2 f64) (param $eps f64) (param $lr f64) (param $wd f64)
    (local $o i32) (local $end i32)
    (local $gi v128) (local $mi v128) (local $vi v128) (local $pi v128) (local $u v128)
    (local $B1 v128) (local $C1 v128) (local $B2 v128) (local $C2 v128)
    (local $BC1 v128) (local $BC2 v128) (local $EPS v128) (local $LR v128) (local $WD v128)
    (local.set $B1 (f64x2.splat (local.get $b1)))
    (local.set $C1 (f64x2.splat (local.get $c1)))
    (local.set $B2 (f64x2.splat (local.get $b2)))
    (local.set $C2 (f64x2.splat (local.get $c2)))
    (local.set $BC1 (f64x2.splat (local.get $bc1)))
    (local.set $BC2 (f64x2.splat (local.get $bc2)))
    (local.set $EPS (f64x2.splat (local.get $eps)))
    (local.set $LR (f64x2.splat (local.get $lr)))
    (local.set $WD (f64x2.splat (local.get $wd)))
    (local.set $end (i32.shl (local.get $n) (i32.const 2)))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $o) (local.get $end)))
        (local.set $gi (f64x2.promote_low_f32x4
          (v128.load64_zero (i32.add (local.get $g) (local.get $o)))))
        (local.set $mi (f64x2.add
          (f64x2.mul (local.get $B1) (f64x2.promote_low_f32x4
            (v128.load64_zero (i32.add (local.get $m) (local.get $o)))))
          (f64x2.mul (local.get $C1) (local.get $gi))))
        (local.set $vi (f64x2.add
          (f64x2.mul (local.get $B2) (f64x2.promote_low_f32x4
            (v128.load64_zero (i32.add (local.get $v) (local.get $o)))))
          (f64x2.mul (f64x2.mul (local.get $C2) (local.get $gi)) (local.get $gi))))
        (v128.store64_lane 0 (i32.add (local.get $m) (local.get $o))
          (f32x4.demote_f64x2_zero (local.get $mi)))
        (v128.store64_lane 0 (i32.add (local.get $v) (local.get $o))
          (f32x4.demote_f64x2_zero (local.get $vi)))
        (local.set $u (f64x2.div
          (f64x2.div (local.get $mi) (local.get $BC1))
          (f64x2.add (f64x2.sqrt (f64x2.div (local.get $vi) (local.get $BC2))) (local.get $EPS))))
        (local.set $pi (f64x2.promote_low_f32x4
          (v128.load64_zero (i32.add (local.get $p) (local.get $o)))))
        (v128.store64_lane 0 (i32.add (local.get $p) (local.get $o))
          (f32x4.demote_f64x2_zero (f64x2.sub (local.get $pi)
            (f64x2.mul (local.get $LR)
              (f64x2.add (local.get $u) (f64x2.mul (local.get $WD) (local.get $pi)))))))
        (local.set $o (i32.add (local.get $o) (i32.const 8)))
        (br $l))))
)
