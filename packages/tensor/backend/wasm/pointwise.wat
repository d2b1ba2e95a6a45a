;; Pointwise kernels of the CPU backend in WebAssembly SIMD, two float64 lanes at a time.
;;
;; Source of pointwise_wasm_bytes.ts (`deno task build:wasm`). Plain SIMD128 only: one binary for
;; every engine with SIMD, and no fused multiply-add anywhere.
;;
;; Numerics: each function computes, lane by lane, the operations of its TypeScript kernel in
;; ../cpu/ in the same order, in float64 (the type of a JavaScript number), loading f32 values
;; exactly (promote) and storing them with the same round-to-nearest-even a Float32Array store
;; uses (demote). IEEE 754 add, sub, mul, div and sqrt are exactly rounded, so the bits equal the
;; TypeScript kernel's; the tests compare them bit for bit. Math.exp is no IEEE operation: the
;; activations use an exp that is correctly rounded where it can prove it, as the engine's
;; Math.exp is, and list the elements where it cannot for the caller to compute again (see `$run`).
;;
;; Layout: bytes [0, 2048) hold the table of 2^(j/128) the exp uses, and `heap_base` exports where
;; the caller's arrays may start. The caller copies blocks of its arrays into this memory; every
;; array argument is a byte address, `n` is a count of values (f32; f64 for `exp`) and even (the
;; caller pads a block: the padding lane computes on whatever is there and is not copied out).

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

  ;; exp, correctly rounded, or flagged; and the activations built on it.
  ;;
  ;; The JavaScript engine this matches (V8 15.0 of Deno 2.9.6, whose src/base/ieee754.cc `exp` is
  ;; LLVM libc's exp) rounds exp correctly: Math.exp(x) is the double nearest e^x. So any method that also
  ;; rounds correctly gives its bits, and this one is built to know when it does: it computes e^x
  ;; as an unevaluated sum h + l with an absolute error below E·2^m, and keeps h only when every
  ;; value within E of h + l rounds to h (Ziv's test). A lane it cannot vouch for is flagged and
  ;; the caller computes that element with the TypeScript kernel (Math.exp). `pointwise.ts` checks
  ;; at start-up that the engine's Math.exp is the correctly rounded one (fdlibm's, in older V8,
  ;; is not: it is off by an ulp on about 9% of arguments) and does not use these kernels
  ;; otherwise.
  ;;
  ;; Method (two lanes, no branch): x = k·ln2/128 + ρ with k = nearest(x·128/ln2) (adding and
  ;; subtracting 1.5·2^52, which also leaves k in the low bits); ln2/128 = C1 + C2 (+ < 2^-98),
  ;; C1 with 35 significant bits so that k·C1 is exact (|k| < 2^18) and so is rh = x − k·C1
  ;; (Sterbenz); kc = fl(k·C2) (|kc| < 2^-24), r = fl(rh − kc), |r| <= 0.002708. With j = k mod
  ;; 128, m = floor(k/128) and 2^(j/128) = th + tl from the table (th with 27 significant bits,
  ;; |tl| <= 2^-27, error < 2^-79):
  ;;   e^x = 2^m·(th + tl)·e^ρ,  e^ρ ≈ (1 + r + q)(1 + (ρ − r)),  q = r²(1/2 + r/6 + ... + r^4/720)
  ;;   r1 = r with its mantissa cut to 26 bits, so th·r1 is exact and th + th·r1 = sum + e
  ;;   exactly (Fast2Sum); t = (rh − r1) − kc = r − r1 + (ρ − r) to within 2^-76;
  ;;   lo = (e + (tl + tl·(r + q))) + th·(t + q);  h + l = sum + lo exactly (Fast2Sum).
  ;; Error of h + l against e^x/2^m, in units of 2^-72: Taylor tail 2, rounding of q 13.3,
  ;; t + q 2, th·(...) 2, the sum lo 2, the dropped (th + tl)·(ρ − r)·(r + q) 5.7, the rest
  ;; < 0.3: below 27.3·2^-72 < 2^-67.2 (the largest seen on 400000 random x, half of them near
  ;; the largest |r|, against 160-bit arithmetic: 2^-67.8).
  ;; E = 2^-65 leaves a factor 4.7. The test: h + (l + copysign(E, l)) rounds to h (the far end
  ;; of the interval; the near end is within E of h + l on the other side, inside any half-ulp).
  ;; A lane fails it with probability about 2E/ulp(h) = 2^-12 (h in [1, 2)), 2^-11 (h below 1).
  ;; Range: |x| <= 708 is computed (the result is normal: e^-708 > 2^-1022); everything else
  ;; (NaN, ±inf, underflow, overflow) is flagged.
  ;;
  ;; One loop serves the four exports, so that exp is written once and inlined in it (not called
  ;; per pair, which is slower). $mode: 0 exp (float64 in and out), 1 sigmoid, 2 silu, 3 silu_backward
  ;; (float32; $dy only for 3). sigmoid of ../cpu/elementwise.ts is
  ;;   x >= 0 ? 1/(1 + exp(−x)) : exp(x)/(1 + exp(x)),
  ;; so exp's argument is −|x| (or +0 where x is −0: exp(±0) = 1 alike), one exp per lane (both
  ;; calls of the second form agree); silu is x·sigmoid(x), silu_backward (dy·s)·(1 + x·(1 − s))
  ;; with s = sigmoid(x).
  ;; Writes y for the n (even) elements and, to the i32 list at $bad, the index of each element
  ;; whose y is not the TypeScript kernel's (its exp was flagged); returns how many it listed.
  (func $run (param $mode i32) (param $x i32) (param $dy i32) (param $y i32) (param $bad i32)
    (param $n i32) (result i32)
    (local $i i32) (local $nb i32) (local $a0 i32) (local $a1 i32)
    (local $xv v128) (local $arg v128) (local $kb v128) (local $kd v128) (local $rh v128)
    (local $kc v128) (local $r v128) (local $th v128) (local $tl v128) (local $r1 v128)
    (local $p v128) (local $sum v128) (local $rr v128) (local $q v128) (local $lo v128)
    (local $h v128) (local $l v128) (local $ok v128) (local $ev v128) (local $s v128)
    (local $out v128)
    (local $INV v128) (local $MAGIC v128) (local $C1 v128) (local $C2 v128) (local $CUT v128)
    (local $Q3 v128) (local $Q4 v128) (local $Q5 v128) (local $Q6 v128) (local $E v128)
    (local $SIGN v128) (local $LIM v128) (local $ONE v128) (local $HALF v128) (local $EXPO v128)
    (local $BIAS v128)
    (local.set $INV (v128.const i64x2 0x40671547652B82FE 0x40671547652B82FE)) ;; 128/ln2
    (local.set $MAGIC (v128.const f64x2 0x1.8p52 0x1.8p52))
    (local.set $C1 (v128.const i64x2 0x3F762E42FEFC0000 0x3F762E42FEFC0000))
    (local.set $C2 (v128.const i64x2 0xBD3C610CA86C3899 0xBD3C610CA86C3899))
    (local.set $CUT (v128.const i64x2 0xFFFFFFFFF8000000 0xFFFFFFFFF8000000))
    (local.set $Q3 (v128.const i64x2 0x3FC5555555555555 0x3FC5555555555555)) ;; 1/6
    (local.set $Q4 (v128.const i64x2 0x3FA5555555555555 0x3FA5555555555555)) ;; 1/24
    (local.set $Q5 (v128.const i64x2 0x3F81111111111111 0x3F81111111111111)) ;; 1/120
    (local.set $Q6 (v128.const i64x2 0x3F56C16C16C16C17 0x3F56C16C16C16C17)) ;; 1/720
    (local.set $E (v128.const f64x2 0x1p-65 0x1p-65))
    (local.set $SIGN (v128.const i64x2 0x8000000000000000 0x8000000000000000))
    (local.set $LIM (v128.const f64x2 708 708))
    (local.set $ONE (v128.const f64x2 1 1))
    (local.set $HALF (v128.const f64x2 0.5 0.5))
    (local.set $EXPO (v128.const i64x2 0xFFF0000000000000 0xFFF0000000000000))
    (local.set $BIAS (v128.const i64x2 0x3FF0000000000000 0x3FF0000000000000))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.eqz (local.get $mode))
          (then
            (local.set $xv
              (v128.load (i32.add (local.get $x) (i32.shl (local.get $i) (i32.const 3)))))
            (local.set $arg (local.get $xv)))
          (else
            (local.set $xv (f64x2.promote_low_f32x4
              (v128.load64_zero (i32.add (local.get $x) (i32.shl (local.get $i) (i32.const 2))))))
            (local.set $arg (v128.or (local.get $xv) (local.get $SIGN)))))
        ;; --- ev = exp(arg), ok ---
        ;; kb = arg·128/ln2 + 1.5·2^52: k = kb − 1.5·2^52, and k in the low bits of kb.
        (local.set $kb (f64x2.add (f64x2.mul (local.get $arg) (local.get $INV))
          (local.get $MAGIC)))
        (local.set $kd (f64x2.sub (local.get $kb) (local.get $MAGIC)))
        (local.set $rh (f64x2.sub (local.get $arg) (f64x2.mul (local.get $kd) (local.get $C1))))
        (local.set $kc (f64x2.mul (local.get $kd) (local.get $C2)))
        (local.set $r (f64x2.sub (local.get $rh) (local.get $kc)))
        ;; th, tl = the table entry j = k mod 128 of each lane (16 bytes at 16·j).
        (local.set $a0 (i32.shl (i32.and (i32x4.extract_lane 0 (local.get $kb)) (i32.const 127))
          (i32.const 4)))
        (local.set $a1 (i32.shl (i32.and (i32x4.extract_lane 2 (local.get $kb)) (i32.const 127))
          (i32.const 4)))
        (local.set $th (v128.load64_lane 1 (local.get $a1) (v128.load64_zero (local.get $a0))))
        (local.set $tl (v128.load64_lane offset=8 1 (local.get $a1)
          (v128.load64_zero offset=8 (local.get $a0))))
        ;; sum + (p − (sum − th)) = th + th·r1 exactly.
        (local.set $r1 (v128.and (local.get $r) (local.get $CUT)))
        (local.set $p (f64x2.mul (local.get $th) (local.get $r1)))
        (local.set $sum (f64x2.add (local.get $th) (local.get $p)))
        ;; q = r²·(1/2 + r/6) + r^4·((1/24 + r/120) + r²/720) (Estrin: a shorter chain).
        (local.set $rr (f64x2.mul (local.get $r) (local.get $r)))
        (local.set $q (f64x2.add
          (f64x2.mul (local.get $rr)
            (f64x2.add (local.get $HALF) (f64x2.mul (local.get $r) (local.get $Q3))))
          (f64x2.mul (f64x2.mul (local.get $rr) (local.get $rr))
            (f64x2.add (f64x2.add (local.get $Q4) (f64x2.mul (local.get $r) (local.get $Q5)))
              (f64x2.mul (local.get $rr) (local.get $Q6))))))
        ;; lo = (e + (tl + tl·(r + q))) + th·(((rh − r1) − kc) + q).
        (local.set $lo (f64x2.add
          (f64x2.add
            (f64x2.sub (local.get $p) (f64x2.sub (local.get $sum) (local.get $th)))
            (f64x2.add (local.get $tl)
              (f64x2.mul (local.get $tl) (f64x2.add (local.get $r) (local.get $q)))))
          (f64x2.mul (local.get $th) (f64x2.add
            (f64x2.sub (f64x2.sub (local.get $rh) (local.get $r1)) (local.get $kc))
            (local.get $q)))))
        ;; h + l = sum + lo; ok where h + (l + copysign(E, l)) rounds to h, and |arg| <= 708.
        (local.set $h (f64x2.add (local.get $sum) (local.get $lo)))
        (local.set $l (f64x2.sub (local.get $lo) (f64x2.sub (local.get $h) (local.get $sum))))
        (local.set $ok (v128.and
          (f64x2.eq (local.get $h) (f64x2.add (local.get $h) (f64x2.add (local.get $l)
            (v128.or (local.get $E) (v128.and (local.get $l) (local.get $SIGN))))))
          (f64x2.le (f64x2.abs (local.get $arg)) (local.get $LIM))))
        ;; ev = h·2^m (exact: the result is normal). k << 45 has m in the exponent field and j
        ;; below it: masking j off and adding the bias gives the bits of 2^m.
        (local.set $ev (f64x2.mul (local.get $h) (i64x2.add (local.get $BIAS)
          (v128.and (local.get $EXPO) (i64x2.shl (local.get $kb) (i32.const 45))))))
        ;; --- the element ---
        (if (i32.eqz (local.get $mode))
          (then (v128.store (i32.add (local.get $y) (i32.shl (local.get $i) (i32.const 3)))
            (local.get $ev)))
          (else
            ;; s = (x >= 0 ? 1 : e)/(1 + e).
            (local.set $s (f64x2.div
              (v128.bitselect (local.get $ONE) (local.get $ev)
                (f64x2.ge (local.get $xv) (v128.const f64x2 0 0)))
              (f64x2.add (local.get $ONE) (local.get $ev))))
            (local.set $out (local.get $s))
            (if (i32.eq (local.get $mode) (i32.const 2))
              (then (local.set $out (f64x2.mul (local.get $xv) (local.get $s)))))
            (if (i32.eq (local.get $mode) (i32.const 3))
              (then (local.set $out (f64x2.mul
                (f64x2.mul (f64x2.promote_low_f32x4 (v128.load64_zero
                  (i32.add (local.get $dy) (i32.shl (local.get $i) (i32.const 2))))) (local.get $s))
                (f64x2.add (local.get $ONE) (f64x2.mul (local.get $xv)
                  (f64x2.sub (local.get $ONE) (local.get $s))))))))
            (v128.store64_lane 0 (i32.add (local.get $y) (i32.shl (local.get $i) (i32.const 2)))
              (f32x4.demote_f64x2_zero (local.get $out)))))
        ;; Flagged lanes: list their indices.
        (if (i32.ne (i64x2.bitmask (local.get $ok)) (i32.const 3))
          (then
            (if (i64.eqz (i64x2.extract_lane 0 (local.get $ok)))
              (then
                (i32.store (i32.add (local.get $bad) (i32.shl (local.get $nb) (i32.const 2)))
                  (local.get $i))
                (local.set $nb (i32.add (local.get $nb) (i32.const 1)))))
            (if (i64.eqz (i64x2.extract_lane 1 (local.get $ok)))
              (then
                (i32.store (i32.add (local.get $bad) (i32.shl (local.get $nb) (i32.const 2)))
                  (i32.add (local.get $i) (i32.const 1)))
                (local.set $nb (i32.add (local.get $nb) (i32.const 1)))))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $l)))
    (local.get $nb))

  ;; exp over float64 arrays: y = exp(x); the check of the exp above against Math.exp.
  (func (export "exp") (param $x i32) (param $y i32) (param $bad i32) (param $n i32) (result i32)
    (call $run (i32.const 0) (local.get $x) (i32.const 0) (local.get $y) (local.get $bad)
      (local.get $n)))

  ;; sigmoid: y = sigmoid(x) over float32 arrays.
  (func (export "sigmoid") (param $x i32) (param $y i32) (param $bad i32) (param $n i32)
    (result i32)
    (call $run (i32.const 1) (local.get $x) (i32.const 0) (local.get $y) (local.get $bad)
      (local.get $n)))

  ;; silu: y = x·sigmoid(x) over float32 arrays.
  (func (export "silu") (param $x i32) (param $y i32) (param $bad i32) (param $n i32)
    (result i32)
    (call $run (i32.const 2) (local.get $x) (i32.const 0) (local.get $y) (local.get $bad)
      (local.get $n)))

  ;; silu_backward: dx = (dy·s)·(1 + x·(1 − s)), s = sigmoid(x), over float32 arrays.
  (func (export "silu_backward")
    (param $x i32) (param $dy i32) (param $dx i32) (param $bad i32) (param $n i32) (result i32)
    (call $run (i32.const 3) (local.get $x) (local.get $dy) (local.get $dx) (local.get $bad)
      (local.get $n)))

  ;; First byte after the table: the caller's arrays start here.
  (global (export "heap_base") i32 (i32.const 2048))

  ;; 2^(j/128) = th + tl for j = 0..127 at byte 16·j: th (f64) is 2^(j/128) rounded to 27
  ;; significant bits, tl (f64) the rest rounded to nearest (from 300-bit arithmetic; the tests
  ;; check each entry to 2^-78).
  (data (i32.const 0)
    "\00\00\00\00\00\00\f0\3f\00\00\00\00\00\00\00\00"
    "\00\00\00\a8\3d\16\f0\3f\67\4a\d8\56\33\b3\3f\3e"
    "\00\00\00\40\9a\2c\f0\3f\35\08\19\f1\f9\87\38\be"
    "\00\00\00\e8\15\43\f0\3f\e7\e3\5c\2f\e1\9f\1b\3e"
    "\00\00\00\d4\b0\59\f0\3f\57\07\a3\78\51\4f\2d\be"
    "\00\00\00\28\6b\70\f0\3f\04\c4\6d\dc\6d\df\3d\3e"
    "\00\00\00\18\45\87\f0\3f\c9\d7\30\02\f2\66\1d\3e"
    "\00\00\00\cc\3e\9e\f0\3f\fa\e1\ad\cb\c7\90\33\be"
    "\00\00\00\6c\58\b5\f0\3f\25\17\53\ec\21\31\2f\3e"
    "\00\00\00\2c\92\cc\f0\3f\f5\91\f0\17\01\b7\21\be"
    "\00\00\00\34\ec\e3\f0\3f\d2\8b\df\df\e5\c2\32\be"
    "\00\00\00\b0\66\fb\f0\3f\22\6e\df\dc\50\ce\b2\bd"
    "\00\00\00\d0\01\13\f1\3f\1b\bf\eb\a4\50\5b\f2\3d"
    "\00\00\00\c0\bd\2a\f1\3f\b5\ae\e4\fe\72\0c\1b\3e"
    "\00\00\00\b0\9a\42\f1\3f\e7\ef\cb\04\22\6d\35\be"
    "\00\00\00\c8\98\5a\f1\3f\ae\1a\90\24\ca\b1\24\3e"
    "\00\00\00\3c\b8\72\f1\3f\23\df\37\b7\5e\54\1f\3e"
    "\00\00\00\38\f9\8a\f1\3f\17\ee\77\37\bd\91\21\3e"
    "\00\00\00\ec\5b\a3\f1\3f\e1\2c\69\58\91\06\22\be"
    "\00\00\00\84\e0\bb\f1\3f\ad\9c\c7\6a\4e\73\d1\3d"
    "\00\00\00\30\87\d4\f1\3f\80\5b\80\a7\9a\8b\36\3e"
    "\00\00\00\24\50\ed\f1\3f\01\e6\77\34\6e\32\30\be"
    "\00\00\00\88\3b\06\f2\3f\c1\ba\e3\8e\35\a3\18\3e"
    "\00\00\00\90\49\1f\f2\3f\d3\2f\55\62\c9\dd\37\3e"
    "\00\00\00\70\7a\38\f2\3f\52\e0\93\79\dc\a9\38\be"
    "\00\00\00\50\ce\51\f2\3f\21\55\9f\32\70\56\13\be"
    "\00\00\00\64\45\6b\f2\3f\73\a6\57\d2\cd\27\3e\3e"
    "\00\00\00\e0\df\84\f2\3f\5d\f1\6c\09\38\56\3f\3e"
    "\00\00\00\f4\9d\9e\f2\3f\16\5d\c2\12\ee\fd\31\3e"
    "\00\00\00\d0\7f\b8\f2\3f\8d\d4\bb\ff\31\5b\2b\3e"
    "\00\00\00\a8\85\d2\f2\3f\2b\6e\ff\4b\cf\bf\31\be"
    "\00\00\00\a8\af\ec\f2\3f\f4\a0\1c\61\f5\e2\33\3e"
    "\00\00\00\0c\fe\06\f3\3f\a6\72\21\ad\8e\e4\3c\be"
    "\00\00\00\fc\70\21\f3\3f\c7\73\4e\4d\0c\36\13\3e"
    "\00\00\00\b4\08\3c\f3\3f\9f\37\36\0b\90\be\39\be"
    "\00\00\00\60\c5\56\f3\3f\2e\77\ae\cd\03\58\1b\be"
    "\00\00\00\38\a7\71\f3\3f\60\75\1d\ab\c6\aa\28\be"
    "\00\00\00\6c\ae\8c\f3\3f\b1\9c\5a\58\86\5d\30\3e"
    "\00\00\00\34\db\a7\f3\3f\25\79\43\dd\fe\b3\2c\3e"
    "\00\00\00\c4\2d\c3\f3\3f\1c\fc\7f\6f\e3\8a\2d\be"
    "\00\00\00\4c\a6\de\f3\3f\24\12\b4\35\22\34\f2\3d"
    "\00\00\00\04\45\fa\f3\3f\03\ee\17\74\03\90\25\3e"
    "\00\00\00\20\0a\16\f4\3f\5c\32\84\9f\e2\72\3f\3e"
    "\00\00\00\d8\f5\31\f4\3f\44\04\c7\6d\89\0a\35\3e"
    "\00\00\00\60\08\4e\f4\3f\d0\db\c4\40\4b\62\18\3e"
    "\00\00\00\ec\41\6a\f4\3f\f4\12\25\77\05\d0\31\3e"
    "\00\00\00\b4\a2\86\f4\3f\3b\1a\3c\01\cd\13\3c\3e"
    "\00\00\00\f0\2a\a3\f4\3f\7a\b1\e5\cc\7b\fa\2a\3e"
    "\00\00\00\d4\da\bf\f4\3f\7b\39\d4\71\a2\62\33\3e"
    "\00\00\00\98\b2\dc\f4\3f\ef\36\3b\d6\d0\dd\3f\3e"
    "\00\00\00\78\b2\f9\f4\3f\75\c2\2c\95\35\2d\36\be"
    "\00\00\00\a4\da\16\f5\3f\ad\d0\ee\e3\9b\09\33\be"
    "\00\00\00\58\2b\34\f5\3f\c4\57\0f\e2\07\2b\36\be"
    "\00\00\00\cc\a4\51\f5\3f\9e\13\ad\13\df\26\3a\be"
    "\00\00\00\38\47\6f\f5\3f\00\35\91\59\82\ad\34\be"
    "\00\00\00\d4\12\8d\f5\3f\57\78\a5\a4\ff\f8\22\3e"
    "\00\00\00\dc\07\ab\f5\3f\01\93\8c\95\42\85\34\3e"
    "\00\00\00\8c\26\c9\f5\3f\e4\b4\e3\8f\94\6b\3a\be"
    "\00\00\00\14\6f\e7\f5\3f\4c\be\e9\86\14\d2\3a\3e"
    "\00\00\00\b8\e1\05\f6\3f\59\6f\07\8b\c0\6d\37\3e"
    "\00\00\00\b0\7e\24\f6\3f\03\7d\f8\58\c2\2a\0d\3e"
    "\00\00\00\34\46\43\f6\3f\e3\f0\ed\f8\63\98\29\3e"
    "\00\00\00\84\38\62\f6\3f\62\82\ed\b6\dd\ad\3a\be"
    "\00\00\00\d4\55\81\f6\3f\c9\15\07\c2\5c\2a\13\3e"
    "\00\00\00\68\9e\a0\f6\3f\05\4d\f7\36\43\0c\38\be"
    "\00\00\00\74\12\c0\f6\3f\9a\6a\d7\ee\ab\bd\30\3e"
    "\00\00\00\3c\b2\df\f6\3f\b3\38\88\bc\8b\46\19\3e"
    "\00\00\00\f8\7d\ff\f6\3f\1b\7e\f8\3c\48\19\35\3e"
    "\00\00\00\e8\75\1f\f7\3f\1e\6e\a4\7b\ee\8b\2d\3e"
    "\00\00\00\48\9a\3f\f7\3f\4a\93\ab\77\2e\b0\24\3e"
    "\00\00\00\58\eb\5f\f7\3f\56\16\09\74\83\d9\3b\be"
    "\00\00\00\50\69\80\f7\3f\ec\8f\32\4f\60\d1\00\be"
    "\00\00\00\74\14\a1\f7\3f\dc\ef\2a\28\79\fe\f4\bd"
    "\00\00\00\00\ed\c1\f7\3f\34\93\c4\27\13\0c\33\3e"
    "\00\00\00\38\f3\e2\f7\3f\d4\2f\fa\de\19\0b\33\be"
    "\00\00\00\54\27\04\f8\3f\3b\f3\06\db\08\0d\0f\3e"
    "\00\00\00\98\89\25\f8\3f\8b\f8\ac\28\e1\cc\34\3e"
    "\00\00\00\48\1a\47\f8\3f\94\d0\1a\33\85\c3\3d\be"
    "\00\00\00\9c\d9\68\f8\3f\4e\7c\e3\6f\a2\6d\27\be"
    "\00\00\00\d8\c7\8a\f8\3f\bd\30\65\96\69\a6\38\3e"
    "\00\00\00\44\e5\ac\f8\3f\aa\83\45\4a\f2\55\3d\be"
    "\00\00\00\18\32\cf\f8\3f\e3\55\0d\41\b7\ab\34\be"
    "\00\00\00\98\ae\f1\f8\3f\74\82\b9\62\73\57\31\3e"
    "\00\00\00\0c\5b\14\f9\3f\2e\79\d6\9d\0e\80\1b\be"
    "\00\00\00\b0\37\37\f9\3f\88\03\8a\9e\bc\b8\29\3e"
    "\00\00\00\cc\44\5a\f9\3f\4b\be\25\8b\f8\d6\0b\be"
    "\00\00\00\a0\82\7d\f9\3f\f8\b6\30\3a\d8\d8\00\be"
    "\00\00\00\70\f1\a0\f9\3f\37\21\46\37\f7\40\29\3e"
    "\00\00\00\84\91\c4\f9\3f\95\3b\38\fe\f6\c0\35\be"
    "\00\00\00\18\63\e8\f9\3f\a8\4c\82\31\32\32\3e\3e"
    "\00\00\00\7c\66\0c\fa\3f\af\a4\ac\69\53\43\24\be"
    "\00\00\00\ec\9b\30\fa\3f\7e\5c\30\d6\4c\8b\12\3e"
    "\00\00\00\b4\03\55\fa\3f\b7\db\4b\37\aa\1d\3c\be"
    "\00\00\00\14\9e\79\fa\3f\9b\40\1a\f2\94\e9\29\be"
    "\00\00\00\54\6b\9e\fa\3f\44\b2\3e\f4\db\9f\37\3e"
    "\00\00\00\c0\6b\c3\fa\3f\cb\34\92\1f\43\06\06\be"
    "\00\00\00\98\9f\e8\fa\3f\4d\73\e8\d5\3a\ad\35\3e"
    "\00\00\00\28\07\0e\fb\3f\ad\42\08\59\66\db\38\3e"
    "\00\00\00\b8\a2\33\fb\3f\3a\f4\af\bd\7e\c5\13\3e"
    "\00\00\00\8c\72\59\fb\3f\11\88\e3\98\93\55\3e\3e"
    "\00\00\00\f4\76\7f\fb\3f\f8\84\55\91\1b\4a\30\be"
    "\00\00\00\30\b0\a5\fb\3f\79\96\81\30\c9\20\24\3e"
    "\00\00\00\90\1e\cc\fb\3f\3d\e8\1e\89\74\f0\12\3e"
    "\00\00\00\5c\c2\f2\fb\3f\7f\94\fb\bd\fb\70\04\be"
    "\00\00\00\dc\9b\19\fc\3f\b1\0c\22\c2\29\55\38\3e"
    "\00\00\00\60\ab\40\fc\3f\f8\3e\90\75\c9\c2\87\bd"
    "\00\00\00\30\f1\67\fc\3f\80\ec\5d\4b\eb\82\3a\be"
    "\00\00\00\94\6d\8f\fc\3f\22\f1\b2\46\d4\9e\db\3d"
    "\00\00\00\dc\20\b7\fc\3f\7a\79\a0\22\0d\f2\2d\3e"
    "\00\00\00\54\0b\df\fc\3f\96\f8\44\9c\3f\dc\35\3e"
    "\00\00\00\4c\2d\07\fd\3f\d1\0d\2f\47\68\87\3f\be"
    "\00\00\00\08\87\2f\fd\3f\73\24\bc\15\e3\13\eb\3d"
    "\00\00\00\dc\18\58\fd\3f\b6\40\bb\e4\90\74\2f\3e"
    "\00\00\00\18\e3\80\fd\3f\63\b0\47\84\c6\67\33\be"
    "\00\00\00\04\e6\a9\fd\3f\2d\ff\b9\47\bd\66\02\be"
    "\00\00\00\f4\21\d3\fd\3f\44\d4\92\f6\73\c9\2f\be"
    "\00\00\00\34\97\fc\fd\3f\a8\e6\d2\28\94\8c\20\be"
    "\00\00\00\14\46\26\fe\3f\3f\ec\24\14\25\b4\2e\3e"
    "\00\00\00\e8\2e\50\fe\3f\40\bb\30\76\02\30\1d\be"
    "\00\00\00\fc\51\7a\fe\3f\6c\ba\55\5a\be\59\0c\be"
    "\00\00\00\a4\af\a4\fe\3f\c6\08\a7\67\f2\b6\35\be"
    "\00\00\00\2c\48\cf\fe\3f\13\03\db\08\7f\e6\38\3e"
    "\00\00\00\f0\1b\fa\fe\3f\de\02\8e\88\5d\ea\39\be"
    "\00\00\00\38\2b\25\ff\3f\20\2d\2f\16\ad\88\22\be"
    "\00\00\00\5c\76\50\ff\3f\69\0f\16\f3\57\37\22\be"
    "\00\00\00\ac\fd\7b\ff\3f\4c\3b\91\38\e1\cb\39\3e"
    "\00\00\00\80\c1\a7\ff\3f\7e\0a\e9\82\0d\e9\39\3e"
    "\00\00\00\2c\c2\d3\ff\3f\6d\91\a2\bd\83\23\1c\be")
)
