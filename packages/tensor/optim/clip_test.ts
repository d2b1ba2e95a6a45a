import assert from "node:assert/strict";
import fc from "fast-check";
import { tensor } from "../creation.ts";
import { getBackend } from "../runtime.ts";
import type { Tensor } from "../tensor.ts";
import { assertClose } from "../testing.ts";
import { clipGradNorm, gradNorm } from "./clip.ts";

// Tolerances: squares are summed in f32 on the backend, so norms agree with the float64
// reference to rtol 1e-5; scaled gradients are f32 products, compared with rtol 1e-5 too.

const arbGrads = fc.array(
  fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 1, maxLength: 8 }),
  { minLength: 1, maxLength: 4 },
);

/** Parameters with the given gradients (f32-rounded values returned for the reference). */
function withGrads(grads: number[][]): { params: Tensor[]; stored: number[][] } {
  const params = grads.map((g) => {
    const p = tensor(new Array<number>(g.length).fill(0), { requiresGrad: true });
    p.grad = tensor(g);
    return p;
  });
  return { params, stored: grads.map((g) => Array.from(Float32Array.from(g))) };
}

const l2 = (gs: number[][]) => Math.sqrt(gs.flat().reduce((s, x) => s + x * x, 0));

Deno.test("gradNorm: equals the square root of the sum of squares over all gradients", async () => {
  await fc.assert(
    fc.asyncProperty(arbGrads, async (grads) => {
      const { params, stored } = withGrads(grads);
      assertClose(await gradNorm(params), l2(stored), { rtol: 1e-5, atol: 1e-6 });
      const inf = Math.max(...stored.flat().map(Math.abs));
      assert.equal(await gradNorm(params, { normType: Infinity }), inf);
      const l1 = stored.flat().reduce((s, x) => s + Math.abs(x), 0);
      assertClose(await gradNorm(params, { normType: 1 }), l1, { rtol: 1e-5, atol: 1e-6 });
      const l3 = Math.cbrt(stored.flat().reduce((s, x) => s + Math.abs(x) ** 3, 0));
      assertClose(await gradNorm(params, { normType: 3 }), l3, { rtol: 1e-4, atol: 1e-6 });
      for (const p of params) p.dispose();
    }),
    { numRuns: 100 },
  );
});

Deno.test("clipGradNorm: scales to exactly maxNorm when above it, leaves grads untouched otherwise", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbGrads,
      fc.double({ min: 0.01, max: 200, noNaN: true }),
      async (grads, maxNorm) => {
        const { params, stored } = withGrads(grads);
        const before = params.map((p) => p.grad!);
        const total = await clipGradNorm(params, maxNorm);
        assertClose(total, l2(stored), { rtol: 1e-5, atol: 1e-6 });
        const coef = maxNorm / (total + 1e-6);
        if (coef < 1) {
          const after = await Promise.all(
            params.map(async (p) => Array.from(await p.grad!.data())),
          );
          assertClose(after, stored.map((g) => g.map((x) => x * coef)), {
            rtol: 1e-5,
            atol: 1e-12,
          });
          // New norm: total·coef = maxNorm·total/(total + 1e-6), i.e. maxNorm up to the 1e-6 guard.
          const clipped = await gradNorm(params);
          assertClose(clipped, total * coef, { rtol: 1e-5 });
          assertClose(clipped, maxNorm, { rtol: 1e-5, atol: 1e-6 });
          for (const g of before) {
            assert.ok(
              g.isDisposed,
              "the replaced gradient handles are released",
            );
          }
        } else {
          params.forEach((p, i) => assert.equal(p.grad, before[i], "same gradient tensor"));
          const after = await Promise.all(
            params.map(async (p) => Array.from(await p.grad!.data())),
          );
          assert.deepEqual(after, stored);
        }
        for (const p of params) p.dispose();
      },
    ),
    { numRuns: 100 },
  );
});

Deno.test("clipGradNorm: params without grad are ignored; duplicates count once; no leaks", async () => {
  const backend = getBackend();
  const a = tensor([0, 0], { requiresGrad: true });
  const b = tensor([0], { requiresGrad: true });
  a.grad = tensor([3, 4]);
  const live = backend.memory().liveBuffers;
  assert.equal(await clipGradNorm([a, b, a], 10), 5);
  assert.equal(b.grad, null);
  assert.equal(await clipGradNorm([a, b], 1), 5);
  assertClose(Array.from(await a.grad!.data()), [0.6, 0.8], { rtol: 1e-6 });
  assert.equal(
    backend.memory().liveBuffers,
    live,
    "the old gradient buffer was freed, only the new one lives",
  );
  assert.equal(await gradNorm([b]), 0);
  a.dispose();
  b.dispose();
});

Deno.test("clipGradNorm: gradients that share one buffer are each scaled once", async () => {
  const a = tensor([0, 0], { requiresGrad: true });
  const b = tensor([0, 0], { requiresGrad: true });
  a.grad = tensor([3, 4]);
  b.grad = a.grad.share(); // a view of the same buffer, as autograd can produce
  const total = await clipGradNorm([a, b], 1);
  assertClose(total, Math.sqrt(50), { rtol: 1e-6 });
  const s = 1 / (Math.sqrt(50) + 1e-6);
  assertClose(Array.from(await a.grad!.data()), [3 * s, 4 * s], { rtol: 1e-6 });
  assertClose(Array.from(await b.grad!.data()), [3 * s, 4 * s], { rtol: 1e-6 });
  for (const t of [a, b]) t.dispose();
});

Deno.test("clipGradNorm: a non-finite norm is returned and grads left alone (or throws on request)", async () => {
  const a = tensor([0, 0], { requiresGrad: true });
  a.grad = tensor([NaN, 1]);
  const g = a.grad;
  assert.ok(Number.isNaN(await clipGradNorm([a], 1)));
  assert.equal(a.grad, g);
  a.grad = tensor([Infinity, 1]);
  g.dispose();
  assert.equal(await clipGradNorm([a], 1), Infinity);
  await assert.rejects(
    () => clipGradNorm([a], 1, { errorIfNonfinite: true }),
    /clipGradNorm: the total 2-norm of the gradients is Infinity/,
  );
  assert.deepEqual(Array.from(await a.grad.data()), [Infinity, 1]);
  a.dispose();
});

Deno.test("clipGradNorm: invalid arguments name the field and the value", async () => {
  const a = tensor([0], { requiresGrad: true });
  await assert.rejects(
    () => clipGradNorm([a], -1),
    /clipGradNorm: maxNorm must be a finite number >= 0, got -1/,
  );
  await assert.rejects(
    () => clipGradNorm([a], 1, { normType: 0 }),
    /clipGradNorm: normType must be a finite number > 0, got 0/,
  );
  await assert.rejects(
    () => gradNorm([1 as never]),
    /gradNorm: params\[0\] must be a Tensor, got 1/,
  );
  a.dispose();
});
