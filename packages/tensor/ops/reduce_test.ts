import assert from "node:assert/strict";
import fc from "fast-check";
import { assertClose, gradcheck } from "../testing.ts";
import { arbShape, f64, leaf } from "../_test_utils.ts";
import { tensor } from "../creation.ts";
import { Rng } from "../random.ts";
import * as red from "./reduce.ts";

// Gradient checks: float64, eps 1e-6, rtol 1e-5, atol 1e-6. Forward checks against loops in
// float64 at rtol 1e-12.

function arbShapeAndAxes(): fc.Arbitrary<[number[], number[]]> {
  return arbShape(3, 4).chain((s) =>
    fc.tuple(fc.constant(s), fc.subarray([...s.keys()], { minLength: 1 }))
  );
}

/** Sum over `axes` with plain loops over multi-indices (independent of the kernel's layout). */
function loopSum(values: ArrayLike<number>, shape: number[], axes: number[]): number[] {
  const outShape = shape.map((d, i) => (axes.includes(i) ? 1 : d));
  const out = new Array<number>(outShape.reduce((a, b) => a * b, 1)).fill(0);
  const idx = new Array<number>(shape.length).fill(0);
  for (let flat = 0; flat < values.length; flat++) {
    let o = 0;
    for (let d = 0; d < shape.length; d++) o = o * outShape[d]! + (axes.includes(d) ? 0 : idx[d]!);
    out[o]! += values[flat]!;
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
  return out;
}

Deno.test("sum: matches a multi-index loop over any axes, with and without keepdim", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbShapeAndAxes(),
      fc.integer(),
      fc.boolean(),
      async ([shape, axes], seed, keepdim) => {
        const x = leaf(shape, seed, (v) => v, false);
        const s = red.sum(x, axes, keepdim);
        const expectShape = keepdim
          ? shape.map((d, i) => (axes.includes(i) ? 1 : d))
          : shape.filter((_, i) => !axes.includes(i));
        assert.deepEqual(s.shape, expectShape);
        assertClose(await s.data(), loopSum(await x.data(), shape, axes), {
          rtol: 1e-12,
          atol: 1e-12,
        });
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("sum/mean/var/max/min: gradients match finite differences over drawn axes", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbShapeAndAxes(),
      fc.integer(),
      fc.boolean(),
      async ([shape, axes], seed, keepdim) => {
        const x = leaf(shape, seed);
        await gradcheck((v) => red.sum(v, axes, keepdim), [x], { msg: "sum" });
        await gradcheck((v) => red.mean(v, axes, keepdim), [x], { msg: "mean" });
        await gradcheck((v) => red.max(v, axes, keepdim), [x], { msg: "max" });
        await gradcheck((v) => red.min(v, axes, keepdim), [x], { msg: "min" });
        const n = axes.reduce((p, a) => p * shape[a]!, 1);
        if (n > 1) await gradcheck((v) => red.variance(v, axes, { keepdim }), [x], { msg: "var" });
      },
    ),
    { numRuns: 20 },
  );
});

Deno.test("var: unbiased by default like torch.var, correction 0 is the population variance", async () => {
  const x = tensor([[1, 2, 3, 4], [2, 2, 2, 2]]);
  assertClose(await red.variance(x, 1).data(), [5 / 3, 0], { rtol: 1e-6 });
  assertClose(await red.variance(x, 1, { correction: 0 }).data(), [1.25, 0], { rtol: 1e-6 });
});

Deno.test("max: tied maxima share the gradient evenly", async () => {
  const x = tensor([[3, 1, 3], [0, 2, 1]], { requiresGrad: true });
  red.max(x, 1).sum().backward();
  assert.deepEqual(await x.grad!.toArray(), [[0.5, 0, 0.5], [0, 1, 0]]);
});

Deno.test("argmax/argmin: first index of the extremum, i32", async () => {
  const x = tensor([[1, 7, 7], [-1, -5, -5]]);
  const a = red.argmax(x, 1);
  assert.equal(a.dtype, "i32");
  assert.deepEqual(await a.toArray(), [1, 0]);
  assert.deepEqual(await red.argmin(x, 1).toArray(), [0, 1]);
  assert.deepEqual(await red.argmax(x, 0, true).toArray(), [[0, 0, 0]]);
});

Deno.test("cumsum: matches running sums along any axis, gradient is the reversed cumsum", async () => {
  const rng = new Rng(3);
  await fc.assert(
    fc.asyncProperty(arbShape(3, 4), fc.nat(), async (shape, pick) => {
      const axis = pick % shape.length;
      const x = leaf(shape, rng.int(1000));
      const c = await red.cumsum(x, axis).data();
      const v = await x.data();
      const stride = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
      for (let i = 0; i < v.length; i++) {
        const pos = Math.floor(i / stride) % shape[axis]!;
        let s = 0;
        for (let k = 0; k <= pos; k++) s += v[i - (pos - k) * stride]!;
        assertClose(c[i]!, s, { rtol: 1e-12, atol: 1e-12 });
      }
      await gradcheck((t) => red.cumsum(t, axis), [x]);
    }),
    { numRuns: 20 },
  );
});

Deno.test("reductions: bad axes name the op and the valid range", () => {
  const x = tensor([[1, 2]], { backend: f64 });
  assert.throws(
    () => red.sum(x, 2),
    /sum: axis 2 is out of range for a tensor with 2 dimensions; use -2..1/,
  );
  assert.throws(() => red.sum(x, [0, -2]), /sum: axes \[0,-2\] name the same axis twice/);
});
