import assert from "node:assert/strict";
import fc from "fast-check";
import { assertClose, gradcheck } from "../testing.ts";
import { arbShape, leaf } from "../_test_utils.ts";
import { tensor } from "../creation.ts";
import * as sm from "./softmax.ts";

// Gradient checks: float64, eps 1e-6, rtol 1e-5, atol 1e-6. Laws are checked in float64 at
// 1e-12 and on the default f32 backend at 1e-6.

Deno.test("softmax: rows sum to 1 and values are in [0, 1] along any axis (property)", async () => {
  await fc.assert(
    fc.asyncProperty(arbShape(3, 5), fc.nat(), fc.integer(), async (shape, pick, seed) => {
      const axis = pick % shape.length;
      const p = sm.softmax(leaf(shape, seed, (v) => 5 * v, false), axis);
      const v = await p.data();
      assert.ok(v.every((x) => x >= 0 && x <= 1));
      const sums = await p.sum(axis).data();
      assertClose(sums, new Array(sums.length).fill(1), { rtol: 1e-12, atol: 1e-12 });
    }),
    { numRuns: 40 },
  );
});

Deno.test("logsumexp: shift invariance lse(x + c) = lse(x) + c (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbShape(3, 5),
      fc.integer(),
      fc.double({ min: -50, max: 50, noNaN: true }),
      async (shape, seed, c) => {
        const x = leaf(shape, seed, (v) => v, false);
        const a = await sm.logsumexp(x.add(c), -1).data();
        const b = await sm.logsumexp(x, -1).add(c).data();
        assertClose(a, b, { rtol: 1e-12, atol: 1e-10 });
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("logSoftmax = x − logsumexp(x, keepdim) and exp(logSoftmax) = softmax", async () => {
  const x = leaf([3, 7], 11, (v) => 3 * v, false);
  const ls = await sm.logSoftmax(x).data();
  assertClose(ls, await x.sub(sm.logsumexp(x, -1, true)).data(), { rtol: 1e-12, atol: 1e-12 });
  assertClose(await sm.logSoftmax(x).exp().data(), await sm.softmax(x).data(), {
    rtol: 1e-12,
    atol: 1e-14,
  });
});

Deno.test("softmax/logSoftmax/logsumexp: gradients match finite differences on any axis", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbShape(3, 4),
      fc.nat(),
      fc.integer(),
      fc.boolean(),
      async (shape, pick, seed, keep) => {
        const axis = pick % shape.length;
        const x = leaf(shape, seed, (v) => 2 * v);
        await gradcheck((t) => sm.softmax(t, axis), [x], { msg: "softmax" });
        await gradcheck((t) => sm.logSoftmax(t, axis), [x], { msg: "logSoftmax" });
        await gradcheck((t) => sm.logsumexp(t, axis, keep), [x], { msg: "logsumexp" });
      },
    ),
    { numRuns: 20 },
  );
});

Deno.test("softmax: huge logits stay finite on the f32 backend", async () => {
  const p = await sm.softmax(tensor([[1e4, 1e4 - 1, -1e4]])).data();
  assertClose(p, [1 / (1 + Math.exp(-1)), Math.exp(-1) / (1 + Math.exp(-1)), 0], { rtol: 1e-6 });
  assert.equal(await sm.logsumexp(tensor([-Infinity, -Infinity])).item(), -Infinity);
});
