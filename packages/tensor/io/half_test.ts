import assert from "node:assert/strict";
import fc from "fast-check";
import { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from "./half.ts";

const ALL16 = Uint16Array.from({ length: 65536 }, (_, i) => i);

/** Independent reference: the value of a binary16 pattern by the textbook formula. */
function f16Value(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0x1f) return m === 0 ? sign * Infinity : NaN;
  if (e === 0) return sign * m * 2 ** -24;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** The f32 bit pattern of a number. */
function bitsOf(x: number): number {
  return new Uint32Array(new Float32Array([x]).buffer)[0]!;
}

/** The f32 number with this bit pattern. */
function fromBits(u: number): number {
  return new Float32Array(new Uint32Array([u]).buffer)[0]!;
}

const isF16NaN = (h: number) => (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0;
const isBf16NaN = (h: number) => (h & 0x7f80) === 0x7f80 && (h & 0x7f) !== 0;

Deno.test("f16ToF32 decodes all 65536 patterns like the textbook formula and Float16Array", () => {
  const out = f16ToF32(ALL16);
  const oracle = new Float16Array(ALL16.buffer);
  for (let h = 0; h < 65536; h++) {
    const want = f16Value(h);
    if (Number.isNaN(want)) {
      assert.ok(Number.isNaN(out[h]), `0x${h.toString(16)} should decode to NaN`);
      assert.ok(Number.isNaN(oracle[h]));
    } else {
      assert.ok(Object.is(out[h], want), `0x${h.toString(16)}: got ${out[h]}, want ${want}`);
      assert.ok(Object.is(out[h], oracle[h]));
    }
  }
});

Deno.test("f16 -> f32 -> f16 round trip is exact for all non-NaN patterns; NaN stays NaN", () => {
  const back = f32ToF16(f16ToF32(ALL16));
  for (let h = 0; h < 65536; h++) {
    if (isF16NaN(h)) {
      assert.ok(isF16NaN(back[h]!), `NaN 0x${h.toString(16)} became 0x${back[h]!.toString(16)}`);
      assert.equal(back[h]! & 0x8000, h & 0x8000, "NaN keeps its sign");
    } else {
      assert.equal(back[h], h, `0x${h.toString(16)} came back as 0x${back[h]!.toString(16)}`);
    }
  }
  // Plain-number input takes the same path.
  const viaNumbers = f32ToF16(Array.from(f16ToF32(ALL16)));
  for (let h = 0; h < 65536; h++) if (!isF16NaN(h)) assert.equal(viaNumbers[h], h);
});

Deno.test("f32ToF16 matches Float16Array (hardware-style RNE) on random f32 bit patterns", () => {
  const same = (u: number) => {
    const x = fromBits(u);
    const got = f32ToF16(new Float32Array([x]))[0]!;
    const want = new Uint16Array(new Float16Array([x]).buffer)[0]!;
    if (Number.isNaN(x)) return isF16NaN(got);
    return got === want;
  };
  fc.assert(fc.property(fc.integer({ min: 0, max: 0xffffffff }), same), { numRuns: 20000 });
  // Patterns at and next to a rounding tie in the f16 normal range (13 dropped bits = 0x1000).
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 0x7ffff }),
      fc.constantFrom(0xfff, 0x1000, 0x1001),
      (top, low) => same(top * 0x2000 + low),
    ),
    { numRuns: 20000 },
  );
  // Every f32 exponent that lands in or below the f16 subnormal range, with random mantissas.
  fc.assert(
    fc.property(
      fc.boolean(),
      fc.integer({ min: 90, max: 114 }),
      fc.integer({ min: 0, max: 0x7fffff }),
      (neg, exp, mant) => same(((neg ? 0x80000000 : 0) + exp * 0x800000 + mant) >>> 0),
    ),
    { numRuns: 20000 },
  );
});

Deno.test("f32ToF16 picks the nearest f16, ties to even, overflow to Inf", () => {
  const MAX = 65504;
  const check = (x: number) => {
    const h = f32ToF16([x])[0]!;
    const r = f16Value(h);
    if (Math.abs(x) >= 65520) return r === Math.sign(x) * Infinity; // >= MAX + half ulp (2^4)
    if (!Number.isFinite(r)) return false;
    // Neighbours of r in magnitude (exact arithmetic: f16 values are f64-exact).
    const up = (h & 0x7fff) === 0x7bff ? 65536 : Math.abs(f16Value((h & 0x7fff) + 1));
    const down = (h & 0x7fff) === 0 ? -Math.abs(f16Value(1)) : Math.abs(f16Value((h & 0x7fff) - 1));
    const ax = Math.abs(x);
    const ar = Math.abs(r);
    const d = Math.abs(ax - ar);
    if (d > Math.abs(ax - up) || d > Math.abs(ax - down)) return false;
    if (d === Math.abs(ax - up) || d === Math.abs(ax - down)) {
      if (d !== 0 && (h & 1) !== 0) return false; // a tie must go to the even pattern
    }
    return Math.abs(r) <= MAX && (x === 0 || Math.sign(r) === Math.sign(x) || r === 0);
  };
  fc.assert(
    fc.property(fc.float({ noNaN: true, min: -70000, max: 70000 }), check),
    { numRuns: 20000 },
  );
  // Exact ties: the midpoint between consecutive f16 values (exact in f32).
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 0x7bfe }), fc.boolean(), (h, neg) => {
      const mid = (f16Value(h) + f16Value(h + 1)) / 2;
      assert.equal(Math.fround(mid), mid);
      const got = f32ToF16([neg ? -mid : mid])[0]! & 0x7fff;
      return got === (h % 2 === 0 ? h : h + 1);
    }),
  );
  assert.equal(f32ToF16([65519.99])[0], 0x7bff);
  assert.equal(f32ToF16([65520])[0], 0x7c00);
  assert.equal(f32ToF16([-65520])[0], 0xfc00);
  assert.equal(f32ToF16([2 ** -25])[0], 0); // tie between 0 and the smallest subnormal
  assert.equal(f32ToF16([2 ** -25 * 1.5])[0], 1);
  assert.equal(f32ToF16([-0])[0], 0x8000);
});

Deno.test("bf16ToF32 of all 65536 patterns is u16 << 16, and the round trip is exact", () => {
  const out = bf16ToF32(ALL16);
  const outBits = new Uint32Array(out.buffer);
  for (let h = 0; h < 65536; h++) assert.equal(outBits[h], h * 65536);
  const back = f32ToBf16(out);
  for (let h = 0; h < 65536; h++) {
    if (isBf16NaN(h)) {
      assert.ok(Number.isNaN(out[h]));
      assert.ok(isBf16NaN(back[h]!), `NaN 0x${h.toString(16)} became 0x${back[h]!.toString(16)}`);
    } else {
      assert.equal(back[h], h, `0x${h.toString(16)} came back as 0x${back[h]!.toString(16)}`);
    }
  }
});

/** Value of a bf16 pattern with an unbounded exponent: 0x7f80 counts as 2^128, not Inf. */
function bf16Unbounded(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  if ((h & 0x7fff) === 0x7f80) return sign * 2 ** 128;
  return fromBits(h * 65536);
}

Deno.test("f32ToBf16 picks the nearest bf16 (compared with both neighbours), ties to even", () => {
  const nearest = (u: number) => {
    const x = fromBits(u);
    const got = f32ToBf16(new Float32Array([x]))[0]!;
    if (Number.isNaN(x)) return isBf16NaN(got);
    if (!Number.isFinite(x)) return got === u >>> 16;
    // The two candidates: x truncated toward zero, and the next bf16 away from zero.
    const lo = u >>> 16;
    const hi = lo + 1;
    const dLo = Math.abs(x - bf16Unbounded(lo));
    const dHi = Math.abs(x - bf16Unbounded(hi));
    const want = dLo < dHi ? lo : dHi < dLo ? hi : lo % 2 === 0 ? lo : hi;
    assert.equal(got, want, `x=${x} (0x${u.toString(16)}): got 0x${got.toString(16)}`);
    return true;
  };
  fc.assert(fc.property(fc.integer({ min: 0, max: 0xffffffff }), nearest), { numRuns: 20000 });
  // Exact ties (dropped half is 0x8000) and values next to ties.
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 0xffff }),
      fc.constantFrom(0x7fff, 0x8000, 0x8001),
      (top, low) => nearest(top * 65536 + low),
    ),
    { numRuns: 20000 },
  );
  // Same answers for plain numbers and for Float32Array input.
  fc.assert(
    fc.property(fc.array(fc.float()), (xs) => {
      assert.deepEqual(f32ToBf16(xs), f32ToBf16(new Float32Array(xs)));
    }),
  );
  assert.equal(f32ToBf16([fromBits(0x7f7fffff)])[0], 0x7f80); // max f32 rounds up to Inf
  assert.equal(f32ToBf16([fromBits(0x7f7f7fff)])[0], 0x7f7f);
  assert.equal(f32ToBf16([fromBits(0x7f800001)])[0]! & 0x7fc0, 0x7fc0); // payload-only NaN stays NaN
  assert.equal(bitsOf(bf16ToF32(f32ToBf16([-0]))[0]!), 0x80000000);
});

Deno.test("half conversions handle empty inputs and subarray views", () => {
  assert.equal(f16ToF32(new Uint16Array(0)).length, 0);
  assert.equal(f32ToF16(new Float32Array(0)).length, 0);
  assert.equal(bf16ToF32(new Uint16Array(0)).length, 0);
  assert.equal(f32ToBf16([]).length, 0);
  const big = new Float32Array([9, 1, 2, 3]);
  assert.deepEqual(f32ToBf16(big.subarray(1)), new Uint16Array([0x3f80, 0x4000, 0x4040]));
  assert.deepEqual(f32ToF16(big.subarray(1)), new Uint16Array([0x3c00, 0x4000, 0x4200]));
});
