import assert from "node:assert/strict";
import fc from "fast-check";
import { assertClose, gradcheck } from "../testing.ts";
import { leaf } from "../_test_utils.ts";
import { tensor } from "../creation.ts";
import { matmul } from "./matmul.ts";

// Gradient checks: float64, eps 1e-6, rtol 1e-5, atol 1e-6. Forward against a triple loop at
// 1e-12 (float64); associativity within 1e-9 relative (float64 reassociation error).

function loopMatmul(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  m: number,
  k: number,
  n: number,
): number[] {
  const c = new Array<number>(m * n).fill(0);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      for (let p = 0; p < k; p++) c[i * n + j]! += a[i * k + p]! * b[p * n + j]!;
    }
  }
  return c;
}

const dim = fc.integer({ min: 1, max: 5 });

Deno.test("matmul: NN/NT/TN/TT equal a triple loop on ragged sizes", async () => {
  await fc.assert(
    fc.asyncProperty(
      dim,
      dim,
      dim,
      fc.boolean(),
      fc.boolean(),
      fc.integer(),
      async (m, k, n, ta, tb, seed) => {
        const a = leaf([m, k], seed, (v) => v, false);
        const b = leaf([k, n], seed + 1, (v) => v, false);
        const expected = loopMatmul(await a.data(), await b.data(), m, k, n);
        const A = ta ? a.transpose() : a;
        const B = tb ? b.transpose() : b;
        const c = matmul(A, B, { transA: ta, transB: tb });
        assert.deepEqual(c.shape, [m, n]);
        assertClose(await c.data(), expected, { rtol: 1e-12, atol: 1e-12 });
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("matmul: gradients with batch broadcasting and transpose flags", async () => {
  const batchShapes: [number[], number[]][] = [[[], []], [[2], [2]], [[2, 3], []], [[1], [3]], [[
    2,
    1,
  ], [1, 3]]];
  await fc.assert(
    fc.asyncProperty(
      dim,
      dim,
      dim,
      fc.constantFrom(...batchShapes),
      fc.boolean(),
      fc.boolean(),
      fc.integer(),
      async (m, k, n, [ba, bb], ta, tb, seed) => {
        const a = leaf([...ba, ...(ta ? [k, m] : [m, k])], seed);
        const b = leaf([...bb, ...(tb ? [n, k] : [k, n])], seed + 1);
        await gradcheck((x, y) => matmul(x, y, { transA: ta, transB: tb }), [a, b]);
      },
    ),
    { numRuns: 25 },
  );
});

Deno.test("matmul: vectors follow torch.matmul (dot, matrix-vector, vector-matrix)", async () => {
  const v = tensor([1, 2, 3]);
  const M = tensor([[1, 0], [0, 1], [1, 1]]);
  assert.equal(await matmul(v, v).item(), 14);
  assert.deepEqual(await matmul(v, M).toArray(), [4, 5]);
  assert.deepEqual(await matmul(M, tensor([1, 2]), {}).toArray(), [1, 2, 3]);
  await gradcheck((x, y) => matmul(x, y), [leaf([3], 1), leaf([3, 2], 2)]);
});

Deno.test("matmul: associativity (AB)C = A(BC) within float64 rounding (property)", async () => {
  await fc.assert(
    fc.asyncProperty(dim, dim, dim, dim, fc.integer(), async (m, k, n, p, seed) => {
      const a = leaf([m, k], seed, (v) => v, false);
      const b = leaf([k, n], seed + 1, (v) => v, false);
      const c = leaf([n, p], seed + 2, (v) => v, false);
      assertClose(await matmul(matmul(a, b), c).data(), await matmul(a, matmul(b, c)).data(), {
        rtol: 1e-9,
        atol: 1e-9,
      });
    }),
    { numRuns: 40 },
  );
});

Deno.test("matmul: shape errors name the op and both shapes", () => {
  assert.throws(
    () =>
      matmul(
        tensor([[1, 2, 3], [4, 5, 6]]),
        tensor([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5]]),
      ),
    /matmul: cannot multiply \[2,3\] by \[4,5\]/,
  );
  assert.throws(
    () => matmul(tensor([[[1]], [[1]]]), tensor([[[1]], [[1]], [[1]]])),
    /matmul: cannot broadcast \[2\] with \[3\]/,
  );
  assert.throws(
    () => matmul(tensor([[1]], { dtype: "i32" }), tensor([[1]])),
    /matmul: a must be f32, got i32/,
  );
});
