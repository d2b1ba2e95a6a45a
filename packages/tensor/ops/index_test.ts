import assert from "node:assert/strict";
import fc from "fast-check";
import { gradcheck } from "../testing.ts";
import { arbShape, f64, leaf } from "../_test_utils.ts";
import { tensor } from "../creation.ts";
import { Rng } from "../random.ts";
import * as ix from "./index.ts";

// Gradient checks: float64, eps 1e-6, rtol 1e-5, atol 1e-6. Indices are drawn with repeats so
// the scatter-add backward must accumulate.

function indices(n: number, count: number, seed: number): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => rng.int(n));
}

Deno.test("gather: values and gradient (with repeated indices) along any axis", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbShape(3, 4),
      fc.nat(),
      fc.integer({ min: 1, max: 5 }),
      fc.integer(),
      async (shape, pick, m, seed) => {
        const axis = pick % shape.length;
        const idxShape = shape.map((d, i) => (i === axis ? m : d));
        const count = idxShape.reduce((a, b) => a * b, 1);
        const idx = tensor(indices(shape[axis]!, count, seed), {
          shape: idxShape,
          dtype: "i32",
          backend: f64,
        });
        const x = leaf(shape, seed);
        await gradcheck((t) => ix.gather(t, idx, axis), [x]);
      },
    ),
    { numRuns: 25 },
  );
  const x = tensor([[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual(await ix.gather(x, tensor([[0, 0], [2, 1]], { dtype: "i32" }), 1).toArray(), [[
    1,
    1,
  ], [6, 5]]);
});

Deno.test("indexSelect and embedding: values and scatter-add gradients", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbShape(3, 4),
      fc.nat(),
      fc.integer({ min: 1, max: 6 }),
      fc.integer(),
      async (shape, pick, m, seed) => {
        const axis = pick % shape.length;
        const idx = tensor(indices(shape[axis]!, m, seed), { dtype: "i32", backend: f64 });
        await gradcheck((t) => ix.indexSelect(t, axis, idx), [leaf(shape, seed)]);
      },
    ),
    { numRuns: 25 },
  );
  const w = tensor([[1, 1], [2, 2], [3, 3]], { requiresGrad: true });
  const ids = tensor([[2, 0], [2, 2]], { dtype: "i32" });
  const e = ix.embedding(w, ids);
  assert.deepEqual(e.shape, [2, 2, 2]);
  e.sum().backward();
  // Row 2 is used three times, row 0 once, row 1 never.
  assert.deepEqual(await w.grad!.toArray(), [[1, 1], [0, 0], [3, 3]]);
});

Deno.test("index ops: out-of-range ids and wrong dtypes fail with the value and position", () => {
  const w = tensor([[1, 1], [2, 2]]);
  assert.throws(
    () => ix.embedding(w, tensor([0, 5], { dtype: "i32" })),
    /index_select: index 5 at position 1 is out of range for a dimension of size 2/,
  );
  assert.throws(() => ix.gather(w, tensor([[0], [1]]), 1), /gather: index must be i32, got f32/);
  assert.throws(
    () => ix.gather(w, tensor([[0]], { dtype: "i32" }), 1),
    /gather: index shape \[1,1\] must match input \[2,2\] except along axis 1/,
  );
});

Deno.test("embedding: gradient on drawn vocabularies and id shapes (repeated ids accumulate)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 4 }),
      arbShape(2, 4),
      fc.integer(),
      async (vocab, dim, idShape, seed) => {
        const count = idShape.reduce((a, b) => a * b, 1);
        const ids = tensor(indices(vocab, count, seed), {
          shape: idShape,
          dtype: "i32",
          backend: f64,
        });
        await gradcheck((w) => ix.embedding(w, ids), [leaf([vocab, dim], seed)]);
      },
    ),
    { numRuns: 20 },
  );
});
