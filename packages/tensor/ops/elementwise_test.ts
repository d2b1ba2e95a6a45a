import assert from "node:assert/strict";
import fc from "fast-check";
import { gradcheck } from "../testing.ts";
import { arbBroadcastPair, arbShape, awayFromZero, f64, leaf } from "../_test_utils.ts";
import { tensor } from "../creation.ts";
import type { Tensor } from "../tensor.ts";
import * as ew from "./elementwise.ts";

// Finite differences run in float64 with eps 1e-6: tolerances rtol 1e-5, atol 1e-6 (gradcheck's
// defaults) leave about three orders of magnitude of headroom over the truncation error.

const UNARY: [string, (x: Tensor) => Tensor, (v: number) => number][] = [
  ["neg", ew.neg, (v) => v],
  ["exp", ew.exp, (v) => v],
  ["log", ew.log, (v) => Math.abs(v) + 0.3],
  ["sqrt", ew.sqrt, (v) => Math.abs(v) + 0.3],
  ["rsqrt", ew.rsqrt, (v) => Math.abs(v) + 0.3],
  ["abs", ew.abs, awayFromZero()],
  ["sign", ew.sign, awayFromZero()],
  ["square", ew.square, (v) => v],
  ["tanh", ew.tanh, (v) => v],
  ["sigmoid", ew.sigmoid, (v) => 3 * v],
  ["relu", ew.relu, awayFromZero()],
  ["silu", ew.silu, (v) => 3 * v],
  ["gelu", ew.gelu, (v) => 3 * v],
  ["reciprocal", ew.reciprocal, awayFromZero(0.5)],
];

for (const [name, op, domain] of UNARY) {
  Deno.test(`${name}: gradient matches finite differences on drawn shapes`, async () => {
    await fc.assert(
      fc.asyncProperty(arbShape(3, 4), fc.integer(), async (shape, seed) => {
        await gradcheck(op, [leaf(shape, seed, domain)], { msg: name });
      }),
      { numRuns: 15 },
    );
  });
}

const BINARY: [
  string,
  (a: Tensor, b: Tensor) => Tensor,
  (v: number) => number,
  (v: number) => number,
][] = [
  ["add", ew.add, (v) => v, (v) => v],
  ["sub", ew.sub, (v) => v, (v) => v],
  ["mul", ew.mul, (v) => v, (v) => v],
  ["div", ew.div, (v) => v, awayFromZero(0.5)],
  ["pow", ew.pow, (v) => Math.abs(v) + 0.5, (v) => v],
  // Distinct magnitudes keep minimum/maximum away from ties, where the derivative jumps.
  ["minimum", ew.minimum, (v) => v, (v) => v + 0.05],
  ["maximum", ew.maximum, (v) => v, (v) => v + 0.05],
];

for (const [name, op, da, db] of BINARY) {
  Deno.test(`${name}: broadcasting gradient matches finite differences`, async () => {
    await fc.assert(
      fc.asyncProperty(arbBroadcastPair(3, 3), fc.integer(), async ([sa, sb], seed) => {
        await gradcheck(op, [leaf(sa, seed, da), leaf(sb, seed + 1, db)], { msg: name });
      }),
      { numRuns: 15 },
    );
  });
}

Deno.test("broadcasting: result shape follows NumPy rules and values match a loop", async () => {
  const a = tensor([[1], [2], [3]]);
  const b = tensor([10, 20]);
  assert.deepEqual(ew.add(a, b).shape, [3, 2]);
  assert.deepEqual(await ew.mul(a, b).toArray(), [[10, 20], [20, 40], [30, 60]]);
  assert.deepEqual(await ew.sub(5, a).toArray(), [[4], [3], [2]]);
});

Deno.test("broadcasting: incompatible shapes name the op and both shapes", () => {
  assert.throws(
    () => ew.add(tensor([1, 2, 3]), tensor([1, 2])),
    /add: cannot broadcast \[3\] with \[2\]/,
  );
});

Deno.test("minimum/maximum: a tie sends half of the gradient to each operand", async () => {
  const a = tensor([1, 2, 3], { requiresGrad: true });
  const b = tensor([1, 5, 0], { requiresGrad: true });
  ew.maximum(a, b).sum().backward();
  assert.deepEqual(await a.grad!.toArray(), [0.5, 0, 1]);
  assert.deepEqual(await b.grad!.toArray(), [0.5, 1, 0]);
  a.grad = null;
  b.grad = null;
  ew.minimum(a, b).sum().backward();
  assert.deepEqual(await a.grad!.toArray(), [0.5, 1, 0]);
  assert.deepEqual(await b.grad!.toArray(), [0.5, 0, 1]);
});

Deno.test("clamp: gradient passes inside [min, max] inclusive and is zero outside (PPO clipping)", async () => {
  const r = tensor([0.5, 0.8, 1.0, 1.2, 1.5], { requiresGrad: true });
  const out = ew.clamp(r, 0.8, 1.2);
  const v = await out.toArray() as number[];
  assert.deepEqual(v.map((x) => Math.round(x * 100) / 100), [0.8, 0.8, 1, 1.2, 1.2]);
  out.sum().backward();
  assert.deepEqual(await r.grad!.toArray(), [0, 1, 1, 1, 0]);
});

Deno.test("clamp: tensor bounds receive the gradient where they are active", async () => {
  await gradcheck(
    (x, lo, hi) => ew.clamp(x, lo, hi),
    [
      leaf([6], 1),
      tensor([-0.3], { backend: f64, requiresGrad: true }),
      tensor([0.4], { backend: f64, requiresGrad: true }),
    ],
  );
});

Deno.test("PPO-style min(r·A, clip(r)·A): zero gradient exactly where the clipped branch is active", async () => {
  const ratio = tensor([0.5, 0.9, 1.1, 1.5, 0.5, 1.5], { requiresGrad: true });
  const adv = tensor([1, 1, 1, 1, -1, -1]);
  const loss = ew.minimum(ratio.mul(adv), ew.clamp(ratio, 0.8, 1.2).mul(adv)).neg().sum();
  loss.backward();
  // A>0: clipped when r > 1.2 (index 3); A<0: clipped when r < 0.8 (index 4).
  // Where the unclipped branch is smaller, dL/dr = −A.
  assert.deepEqual(await ratio.grad!.toArray(), [-1, -1, -1, 0, 0, 1]);
});

Deno.test("where: gradient flows to the chosen branch only, with broadcasting", async () => {
  const cond = tensor([[true, false, true], [false, false, true]], { backend: f64 });
  await gradcheck((a, b) => ew.where(cond, a, b), [leaf([2, 3], 1), leaf([3], 2)]);
  await gradcheck((a) => ew.maskedFill(a, cond, -5), [leaf([2, 3], 3)]);
});

Deno.test("comparisons give bool, logical ops combine masks", async () => {
  const x = tensor([1, 2, 3]);
  assert.equal(ew.gt(x, 2).dtype, "bool");
  assert.deepEqual(await ew.le(x, 2).toArray(), [true, true, false]);
  assert.deepEqual(await ew.ne(x, 2).toArray(), [true, false, true]);
  assert.deepEqual(await ew.ge(x, tensor([3, 2, 1])).toArray(), [false, true, true]);
  const m = ew.logicalAnd(ew.gt(x, 1), ew.lt(x, 3));
  assert.deepEqual(await m.toArray(), [false, true, false]);
  assert.deepEqual(await ew.logicalNot(m).toArray(), [true, false, true]);
});

Deno.test("dtype promotion: bool < i32 < f32, division is true division", async () => {
  const i = tensor([1, 2, 3], { dtype: "i32" });
  const m = tensor([true, false, true]);
  assert.equal(ew.add(i, 1).dtype, "i32");
  assert.equal(ew.add(i, 0.5).dtype, "f32");
  assert.equal(ew.mul(m, tensor([2, 3, 4])).dtype, "f32");
  assert.deepEqual(await ew.mul(m, i).toArray(), [1, 0, 3]);
  assert.deepEqual(await ew.div(i, 2).toArray(), [0.5, 1, 1.5]);
  assert.deepEqual(await ew.cast(tensor([2.7, -2.7]), "i32").toArray(), [2, -2]);
});

Deno.test("special values: NaN propagates through maximum; log(0) is -Infinity", async () => {
  assert.ok(Number.isNaN((await ew.maximum(tensor([NaN]), 1).toArray() as number[])[0]));
  assert.deepEqual(await ew.log(tensor([0])).toArray(), [-Infinity]);
  assert.deepEqual(await ew.sigmoid(tensor([-1000, 1000])).toArray(), [0, 1]);
});

Deno.test("clamp/where/maskedFill: gradients on drawn broadcast shapes", async () => {
  await fc.assert(
    fc.asyncProperty(arbBroadcastPair(3, 3), fc.integer(), async ([sa, sb], seed) => {
      // Values sit away from the bounds ±0.5, where the clamp derivative jumps.
      const x = leaf(sa, seed, (v) => (Math.abs(Math.abs(v) - 0.5) < 0.05 ? v + 0.2 : v));
      await gradcheck((t) => ew.clamp(t, -0.5, 0.5), [x], { msg: "clamp" });
      const cond = leaf(sb, seed + 2, (v) => v, false).gt(0);
      await gradcheck((a, b) => ew.where(cond, a, b), [x, leaf(sb, seed + 1)], { msg: "where" });
      await gradcheck((a) => ew.maskedFill(a, cond, 2), [leaf(sa, seed + 3)], {
        msg: "maskedFill",
      });
    }),
    { numRuns: 20 },
  );
});

Deno.test("where with two numbers gives f32; logical ops on non-bool inputs free their casts", async () => {
  assert.deepEqual(await ew.where(tensor([true, false]), 1, 0).toArray(), [1, 0]);
  const x = tensor([0, 2], { backend: f64 });
  const before = f64.memory().liveBuffers;
  const m = ew.logicalOr(x, ew.logicalAnd(x, x));
  assert.deepEqual(await m.toArray(), [false, true]);
  m.dispose();
  // logicalAnd's result is still live (not disposed by this test); nothing else is.
  assert.equal(f64.memory().liveBuffers, before + 1);
});
