import assert from "node:assert/strict";
import fc from "fast-check";
import { assertClose } from "./_test_utils.ts";
import { fromRows } from "./layout.ts";
import { discountedReturns } from "./returns.ts";

Deno.test("discountedReturns golden: reset (veRL REINFORCE++) vs skip (veRL ReMax) at a hole", () => {
  const r = fromRows([[1, 2, NaN, 4, NaN]]);
  const m = fromRows([[1, 1, 0, 1, 0]]);
  // reset, γ = 0.5: t=3: 4; t=2 masked: running → 0; t=1: 2 + 0.5·0 = 2; t=0: 1 + 0.5·2 = 2
  assert.deepEqual([...discountedReturns(r, m, { gamma: 0.5 })], [2, 2, 0, 4, 0]);
  // skip, γ = 0.5: t=3: 4; t=1: 2 + 0.5·4 = 4; t=0: 1 + 0.5·4 = 3
  assert.deepEqual([...discountedReturns(r, m, { gamma: 0.5, maskMode: "skip" })], [3, 4, 0, 4, 0]);
  // γ = 1 skip is the reward-to-go: [7, 6, ., 4]
  assert.deepEqual([...discountedReturns(r, m, { maskMode: "skip" })], [7, 6, 0, 4, 0]);
});

Deno.test("discountedReturns property: R_t = r_t + γ·R_{t+1} on a contiguous response", () => {
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 1, maxLength: 12 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.integer({ min: 0, max: 4 }),
      fc.constantFrom("reset" as const, "skip" as const),
      (rs, gamma, pad, maskMode) => {
        const n = rs.length;
        const r = fromRows([[...rs, ...Array(pad).fill(0)]]);
        const m = fromRows([[...Array(n).fill(1), ...Array(pad).fill(0)]]);
        const R = discountedReturns(r, m, { gamma, maskMode });
        for (let t = 0; t < n; t++) {
          const next = t + 1 < n ? R[t + 1]! : 0;
          assert.ok(Math.abs(R[t]! - (rs[t]! + gamma * next)) <= 1e-9 * (1 + Math.abs(R[t]!)));
        }
        for (let t = n; t < n + pad; t++) assert.equal(R[t], 0);
      },
    ),
  );
});

Deno.test("discountedReturns: larger random case vs a closed-form Σ γ^(s−t) r_s", () => {
  const length = 50;
  const rows = Array.from(
    { length: 20 },
    (_, i) => Array.from({ length }, (_, t) => Math.sin(i * 7 + t)),
  );
  const r = fromRows(rows);
  const m = fromRows(rows.map((_, i) => Array.from({ length }, (_, t) => (t < 10 + i ? 1 : 0))));
  const got = discountedReturns(r, m, { gamma: 0.95 });
  const ref = rows.flatMap((row, i) =>
    row.map((_, t) => {
      if (t >= 10 + i) return 0;
      let s = 0;
      for (let u = t; u < 10 + i; u++) s += 0.95 ** (u - t) * row[u]!;
      return s;
    })
  );
  assertClose(got, ref, { rtol: 1e-12, atol: 1e-12 });
});

Deno.test("discountedReturns: invalid inputs name the argument and the value", () => {
  const m = fromRows([[1, 1]]);
  assert.throws(
    () => discountedReturns(fromRows([[1, 2]]), m, { gamma: 2 }),
    /discountedReturns: gamma must be a finite number in \[0, 1\], got 2/,
  );
  assert.throws(
    () => discountedReturns(fromRows([[1, 2]]), m, { maskMode: "zero" as never }),
    /discountedReturns: maskMode must be one of "reset", "skip", got "zero"/,
  );
  assert.throws(
    () => discountedReturns(fromRows([[1, Infinity]]), m),
    /discountedReturns: tokenRewards\[0, 1\] is Infinity/,
  );
});
