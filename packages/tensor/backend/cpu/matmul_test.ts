import assert from "node:assert/strict";
import fc from "fast-check";
import { matmul, matmulReference } from "./matmul.ts";

// The fast kernel must equal the reference loop bit for bit (Object.is per element), on every
// layout, ragged sizes around the 4×4 block, broadcast b (batch stride 0), f32 and f64 storage,
// and inputs with zeros, infinities and NaN (the zero-skip semantics).
const dims = fc.integer({ min: 0, max: 13 });

Deno.test("cpu matmul: the 4×4-blocked kernel equals the reference loop bit for bit", () => {
  fc.assert(
    fc.property(
      fc.record({
        batch: fc.integer({ min: 1, max: 3 }),
        m: dims,
        n: dims,
        k: dims,
        transA: fc.boolean(),
        transB: fc.boolean(),
        broadcastB: fc.boolean(),
        f64: fc.boolean(),
        special: fc.boolean(),
        seed: fc.integer(),
      }),
      (s) => {
        const Arr = s.f64 ? Float64Array : Float32Array;
        let state = s.seed >>> 0;
        const draw = () => {
          state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
          const u = state / 2 ** 32;
          if (s.special && u < 0.05) return [Infinity, -Infinity, NaN, 0][Math.floor(u * 80)]!;
          return u < 0.2 ? 0 : u * 8 - 4;
        };
        const aStride = s.m * s.k;
        const bStride = s.broadcastB ? 0 : s.k * s.n;
        const a = new Arr(s.batch * aStride).map(draw);
        const b = new Arr((s.broadcastB ? 1 : s.batch) * s.k * s.n).map(draw);
        const p = {
          batch: s.batch,
          m: s.m,
          n: s.n,
          k: s.k,
          transA: s.transA,
          transB: s.transB,
          aBatchStride: aStride,
          bBatchStride: bStride,
        };
        const fast = new Arr(s.batch * s.m * s.n).fill(7);
        const ref = new Arr(s.batch * s.m * s.n).fill(-7);
        matmul([a, b], [fast], p);
        matmulReference([a, b], [ref], p);
        for (let i = 0; i < ref.length; i++) {
          if (!Object.is(fast[i], ref[i])) {
            assert.fail(
              `element ${i}: fast ${fast[i]} != reference ${ref[i]} (${JSON.stringify(p)})`,
            );
          }
        }
      },
    ),
    { numRuns: 400 },
  );
});

Deno.test("cpu matmul: a zero of op(a) skips an infinity of op(b) in blocks and edges alike", () => {
  // 5×5 · 5×5: the first 4×4 block, the leftover row and the leftover column all see 0 · ∞.
  const n = 5;
  const a = new Float32Array(n * n).fill(1);
  const b = new Float32Array(n * n).fill(1);
  for (let i = 0; i < n; i++) a[i * n] = 0; // column 0 of a is zero
  for (let j = 0; j < n; j++) b[j] = Infinity; // row 0 of b is infinite
  const c = new Float32Array(n * n);
  const p = {
    batch: 1,
    m: n,
    n,
    k: n,
    transA: false,
    transB: false,
    aBatchStride: 0,
    bBatchStride: 0,
  };
  matmul([a, b], [c], p);
  assert.deepEqual([...c], new Array(n * n).fill(4));
  a[0] = 2; // now row 0 meets the infinities
  matmul([a, b], [c], p);
  assert.deepEqual([...c.slice(0, n)], new Array(n).fill(Infinity));
  assert.deepEqual([...c.slice(n)], new Array(n * n - n).fill(4));
});
