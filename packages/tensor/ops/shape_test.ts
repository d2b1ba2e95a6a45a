import assert from "node:assert/strict";
import fc from "fast-check";
import { gradcheck } from "../testing.ts";
import { arbShape, f64, leaf } from "../_test_utils.ts";
import { arange, tensor } from "../creation.ts";
import { sizeOf } from "../shape.ts";
import * as sh from "./shape.ts";

// Gradient checks: float64, eps 1e-6, rtol 1e-5, atol 1e-6 (gradcheck defaults). Shape ops only
// move values, so forward results are compared exactly.

function arbPermutation(n: number): fc.Arbitrary<number[]> {
  return fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n });
}

Deno.test("reshape: round-trips through any factorisation and back (property)", async () => {
  await fc.assert(
    fc.asyncProperty(arbShape(4, 4), async (shape) => {
      const x = arange(sizeOf(shape), undefined, 1, { dtype: "f32" }).reshape(...shape);
      const flat = x.reshape(-1);
      const back = flat.reshape(...shape);
      assert.deepEqual(back.shape, shape);
      assert.deepEqual([...await back.data()], [...await x.data()]);
    }),
    { numRuns: 30 },
  );
});

Deno.test("reshape: a wrong size names both shapes", () => {
  assert.throws(
    () => arange(6).reshape(4, 2),
    /reshape: cannot view \[6\] \(6 elements\) as \[4,2\]/,
  );
  assert.throws(() => arange(6).reshape(-1, -1), /reshape: invalid target shape/);
});

Deno.test("permute: inverse permutation restores the tensor; values follow index rules", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbShape(4, 3).chain((s) => fc.tuple(fc.constant(s), arbPermutation(s.length))),
      async ([shape, perm]) => {
        const x = leaf(shape, 1, (v) => v, false);
        const y = sh.permute(x, perm);
        assert.deepEqual(y.shape, perm.map((p) => shape[p]));
        const inv = new Array<number>(perm.length);
        perm.forEach((p, i) => (inv[p] = i));
        assert.deepEqual([...await sh.permute(y, inv).data()], [...await x.data()]);
      },
    ),
    { numRuns: 30 },
  );
  assert.deepEqual(await sh.transpose(tensor([[1, 2, 3], [4, 5, 6]])).toArray(), [[1, 4], [2, 5], [
    3,
    6,
  ]]);
});

Deno.test("permute/transpose/narrow/slice: gradients match finite differences", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbShape(3, 4, 2).chain((s) =>
        fc.tuple(fc.constant(s), arbPermutation(s.length), fc.integer())
      ),
      async ([shape, perm, seed]) => {
        await gradcheck((x) => sh.permute(x, perm).mul(sh.permute(x, perm)), [leaf(shape, seed)]);
        const len = Math.max(1, shape[0]! - 1);
        await gradcheck((x) => sh.narrow(x, 0, shape[0]! - len, len), [leaf(shape, seed)]);
        await gradcheck((x) => sh.slice(x, [null, [-1, 100]]), [leaf(shape, seed)]);
      },
    ),
    { numRuns: 15 },
  );
});

Deno.test("slice: negative and clamped bounds like Python", async () => {
  const x = tensor([[1, 2, 3, 4], [5, 6, 7, 8]]);
  assert.deepEqual(await sh.slice(x, [[1, 2], [-3, -1]]).toArray(), [[6, 7]]);
  assert.deepEqual(await sh.slice(x, [[0, 9]]).toArray(), await x.toArray());
  assert.throws(
    () => sh.narrow(x, 1, 3, 2),
    /narrow: range start=3 length=2 does not fit axis 1 of size 4/,
  );
});

Deno.test("concat/stack: values, errors and gradients", async () => {
  const a = tensor([[1, 2]]);
  const b = tensor([[3, 4], [5, 6]]);
  assert.deepEqual(await sh.concat([a, b], 0).toArray(), [[1, 2], [3, 4], [5, 6]]);
  assert.deepEqual(await sh.stack([tensor([1, 2]), tensor([3, 4])]).toArray(), [[1, 2], [3, 4]]);
  assert.throws(
    () => sh.concat([a, b], 1),
    /concat: cannot join \[1,2\] f32 with \[2,2\] f32 along axis 1/,
  );
  await gradcheck((x, y) => sh.concat([x, y, x], 1).square(), [leaf([2, 3], 1), leaf([2, 1], 2)]);
  await gradcheck((x, y) => sh.stack([x, y], 2).square(), [leaf([2, 3], 3), leaf([2, 3], 4)]);
});

Deno.test("expand/squeeze/unsqueeze/flatten: shapes and gradients", async () => {
  const x = tensor([[1], [2]]);
  assert.deepEqual(await sh.expand(x, [3, 2, 2]).toArray(), [[[1, 1], [2, 2]], [[1, 1], [2, 2]], [[
    1,
    1,
  ], [2, 2]]]);
  assert.throws(() => sh.expand(tensor([1, 2]), [3]), /expand: cannot broadcast \[2\] to \[3\]/);
  assert.deepEqual(sh.unsqueeze(x, -1).shape, [2, 1, 1]);
  assert.deepEqual(sh.squeeze(x, 1).shape, [2]);
  assert.throws(() => sh.squeeze(x, 0), /squeeze: axis 0 of \[2,1\] has size 2, not 1/);
  assert.deepEqual(sh.flatten(tensor([[[1, 2]], [[3, 4]]])).shape, [4]);
  await gradcheck((v) => sh.expand(v, [2, 3, 4]).square(), [leaf([3, 1], 5)]);
  assert.equal(f64.name, "cpu-f64");
});

Deno.test("reshape/concat/stack/expand/squeeze/unsqueeze: gradients on drawn shapes", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbShape(3, 3),
      fc.nat(),
      fc.integer({ min: 1, max: 3 }),
      fc.integer(),
      async (shape, pick, extra, seed) => {
        const axis = pick % shape.length;
        const other = shape.map((d, i) => (i === axis ? extra : d));
        const a = leaf(shape, seed);
        const b = leaf(other, seed + 1);
        await gradcheck((x) => sh.reshape(x, [-1]).square(), [a], { msg: "reshape" });
        await gradcheck((x, y) => sh.concat([x, y], axis).square(), [a, b], { msg: "concat" });
        await gradcheck((x) => sh.stack([x, x.square()], axis).square(), [a], { msg: "stack" });
        await gradcheck((x) => sh.squeeze(sh.unsqueeze(x, axis), axis).square(), [a], {
          msg: "squeeze",
        });
        const ones = shape.map((d, i) => (i === axis ? 1 : d));
        await gradcheck((x) => sh.expand(x, [2, ...shape]).square(), [leaf(ones, seed + 2)], {
          msg: "expand",
        });
      },
    ),
    { numRuns: 20 },
  );
});

Deno.test("permute: with axes of size 1 (a view when the others keep their order) values equal a reference", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.constantFrom<number>(1, 1, 2, 3), { minLength: 1, maxLength: 5 })
        .chain((s) => fc.tuple(fc.constant(s), arbPermutation(s.length))),
      async ([shape, perm]) => {
        const x = leaf(shape, 2, (v) => v, false);
        const xs = [...await x.data()];
        const outShape = perm.map((p) => shape[p]!);
        const inStrides = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
        const want = xs.map((_, flat) => {
          // Index of `flat` in the output, mapped back to the input through the permutation.
          let rest = flat;
          let src = 0;
          for (let i = outShape.length - 1; i >= 0; i--) {
            const idx = rest % outShape[i]!;
            rest = Math.floor(rest / outShape[i]!);
            src += idx * inStrides[perm[i]!]!;
          }
          return xs[src]!;
        });
        const y = sh.permute(x, perm);
        assert.deepEqual(y.shape, outShape);
        assert.deepEqual([...await y.data()], want);
      },
    ),
    { numRuns: 60 },
  );
});
