import assert from "node:assert/strict";
import fc from "fast-check";
import type { Backend } from "../backend/types.ts";
import { createCpuBackend } from "../backend/cpu/cpu_backend.ts";
import { tensor } from "../creation.ts";
import { tidy } from "../runtime.ts";
import type { Tensor } from "../tensor.ts";
import { assertClose, gradcheck } from "../testing.ts";
import { layerNorm, rmsNorm } from "./norm.ts";

const F64 = createCpuBackend({ precision: "f64" });
const F32 = createCpuBackend();

/** Arbitrary doubles in [-2, 2]: gradient checks need no exact representability. */
const reals = (n: number) =>
  fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: n, maxLength: n });
/** Multiples of 1/8 in [-2, 2]: exact in f32, so both backends see identical inputs. */
const grid = (n: number) =>
  fc.array(fc.integer({ min: -16, max: 16 }).map((i) => i / 8), { minLength: n, maxLength: n });

/** Leading axes of 0..2 dims and a last axis of 1..5 (odd sizes included), with data. */
const normCase = (vals: (n: number) => fc.Arbitrary<number[]>) =>
  fc.record({
    lead: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
    d: fc.integer({ min: 1, max: 5 }),
  })
    .chain(({ lead, d }) => {
      const n = lead.reduce((a, b) => a * b, 1) * d;
      return fc.record({
        shape: fc.constant([...lead, d]),
        x: vals(n),
        w: vals(d),
        b: vals(d),
        up: vals(n),
      });
    });

interface Input {
  data: number[];
  shape: readonly number[];
}

/** Runs `fn` on `backend`, back-propagates `Σ y·up` and returns y and every input's gradient. */
async function valueAndGrads(
  backend: Backend,
  fn: (...xs: Tensor[]) => Tensor,
  inputs: Input[],
  up: number[],
): Promise<{ y: number[]; grads: number[][] }> {
  const ts = inputs.map((i) => tensor(i.data, { shape: i.shape, backend, requiresGrad: true }));
  // tidy frees the reference compositions' intermediates; the graph keeps what it needs.
  const y = tidy(() => fn(...ts));
  const u = tensor(up, { shape: y.shape, backend });
  const loss = y.mul(u).sum();
  loss.backward();
  const out = {
    y: [...await y.data()],
    grads: await Promise.all(ts.map(async (t) => [...await t.grad!.data()])),
  };
  for (const t of [...ts, y, u, loss]) t.dispose();
  return out;
}

function rmsRef(x: Tensor, w: Tensor, eps: number): Tensor {
  return x.mul(x).mean(-1, true).add(eps).rsqrt().mul(x).mul(w);
}

function layerRef(x: Tensor, w: Tensor, b: Tensor, eps: number): Tensor {
  const xc = x.sub(x.mean(-1, true));
  return xc.mul(xc.square().mean(-1, true).add(eps).rsqrt()).mul(w).add(b);
}

Deno.test("rmsNorm: gradients of x and weight match central differences (f64)", async () => {
  // rtol 1e-5, atol 1e-6 (float64, step 1e-6). eps = 1e-2 keeps rstd <= 10 for rows near zero,
  // where the third derivative (~eps^-1.5) would otherwise swamp the finite-difference error.
  await fc.assert(
    fc.asyncProperty(normCase(reals), async ({ shape, x, w }) => {
      const xt = tensor(x, { shape, backend: F64, requiresGrad: true });
      const wt = tensor(w, { backend: F64, requiresGrad: true });
      await gradcheck((a, b) => rmsNorm(a, b, 1e-2), [xt, wt], { rtol: 1e-5, atol: 1e-6 });
      xt.dispose();
      wt.dispose();
    }),
    { numRuns: 20 },
  );
});

Deno.test("layerNorm: gradients of x, weight and bias match central differences (f64)", async () => {
  // rtol 1e-5, atol 1e-6 (float64, step 1e-6); eps = 1e-2 for the same conditioning reason as rmsNorm.
  await fc.assert(
    fc.asyncProperty(normCase(reals), async ({ shape, x, w, b }) => {
      const xt = tensor(x, { shape, backend: F64, requiresGrad: true });
      const wt = tensor(w, { backend: F64, requiresGrad: true });
      const bt = tensor(b, { backend: F64, requiresGrad: true });
      await gradcheck((p, q, r) => layerNorm(p, q, r, 1e-2), [xt, wt, bt], {
        rtol: 1e-5,
        atol: 1e-6,
      });
      // Without weight and bias the stand-in ones/zeros must not disturb the input gradient.
      await gradcheck((p) => layerNorm(p, undefined, undefined, 1e-2), [xt], {
        rtol: 1e-5,
        atol: 1e-6,
      });
      for (const t of [xt, wt, bt]) t.dispose();
    }),
    { numRuns: 20 },
  );
});

Deno.test("rmsNorm: value and gradients equal the composition of elementwise ops, f32 and f64", async () => {
  // Truth is the composition on f64. f64 kernel: rtol/atol 1e-9 (summation order only). f32
  // kernel: rtol/atol 1e-4, since outputs and the saved rstd round to f32 (~6e-8 relative) and
  // rstd can reach 1/sqrt(eps) = 1e3 for an all-zero row.
  await fc.assert(
    fc.asyncProperty(normCase(grid), async ({ shape, x, w, up }) => {
      const inputs = [{ data: x, shape }, { data: w, shape: [w.length] }];
      const want = await valueAndGrads(F64, (a, b) => rmsRef(a!, b!, 1e-6), inputs, up);
      for (const [backend, tol] of [[F64, 1e-9], [F32, 1e-4]] as const) {
        const got = await valueAndGrads(backend, (a, b) => rmsNorm(a!, b!), inputs, up);
        const o = { rtol: tol, atol: tol, msg: backend.name };
        assertClose(got.y, want.y, o);
        got.grads.forEach((g, i) =>
          assertClose(g, want.grads[i]!, { ...o, msg: `${backend.name} grad ${i}` })
        );
      }
    }),
    { numRuns: 30 },
  );
});

Deno.test("layerNorm: value and gradients equal the composition of elementwise ops, f32 and f64", async () => {
  // Same tolerances as the rmsNorm comparison (rstd can reach 1/sqrt(1e-5) ≈ 316 for a constant row).
  await fc.assert(
    fc.asyncProperty(normCase(grid), async ({ shape, x, w, b, up }) => {
      const inputs = [{ data: x, shape }, { data: w, shape: [w.length] }, {
        data: b,
        shape: [b.length],
      }];
      const want = await valueAndGrads(F64, (p, q, r) => layerRef(p!, q!, r!, 1e-5), inputs, up);
      for (const [backend, tol] of [[F64, 1e-9], [F32, 1e-4]] as const) {
        const got = await valueAndGrads(backend, (p, q, r) => layerNorm(p!, q!, r!), inputs, up);
        const o = { rtol: tol, atol: tol, msg: backend.name };
        assertClose(got.y, want.y, o);
        got.grads.forEach((g, i) =>
          assertClose(g, want.grads[i]!, { ...o, msg: `${backend.name} grad ${i}` })
        );
      }
    }),
    { numRuns: 30 },
  );
});

Deno.test("layerNorm: a large mean with a small spread normalises accurately on f32 storage", async () => {
  // At 1e7 even float64 E[x²] − E[x]² loses ~2% of the variance (ulp of 1e14 is 0.016); the
  // two-pass variance gives ±sqrt(1.5) (rtol 1e-6). The inputs are integers below 2^24, exact in f32.
  const y = layerNorm(tensor([1e7 - 1, 1e7, 1e7 + 1], { backend: F32 }), undefined, undefined, 0);
  assertClose(await y.data(), [-Math.sqrt(1.5), 0, Math.sqrt(1.5)], { rtol: 1e-6, atol: 1e-6 });
});

Deno.test("rmsNorm / layerNorm: bad arguments fail with the op, the shapes and the fix", () => {
  const x = tensor([...Array(24).keys()], { shape: [2, 3, 4] });
  assert.throws(
    () => rmsNorm(x, tensor([1, 1, 1, 1, 1])),
    /^RangeError: rmsNorm: weight shape \[5\] must equal the last axis of x \[2,3,4\] \(4\); pass a 1-D weight of length 4$/,
  );
  assert.throws(
    () => layerNorm(x, undefined, tensor([[0, 0, 0, 0]])),
    /layerNorm: bias shape \[1,4\] must equal/,
  );
  assert.throws(
    () => rmsNorm(x.cast("i32"), tensor([1, 1, 1, 1])),
    /rmsNorm: x must be f32, got i32/,
  );
  assert.throws(() => layerNorm(tensor(1)), /layerNorm: x must have at least one axis/);
  assert.throws(
    () => rmsNorm(x, tensor([1, 1, 1, 1]), -1),
    /rmsNorm: eps must be a finite number >= 0/,
  );
  assert.throws(
    () => rmsNorm(x, tensor([1, 1, 1, 1], { backend: F64 })),
    /rmsNorm: tensors live on different backends/,
  );
});

Deno.test("rmsNorm / layerNorm: forward and backward free every temporary buffer", () => {
  const be = createCpuBackend();
  const x = tensor([1, 2, 3, -4, 5, 6], { shape: [2, 3], backend: be, requiresGrad: true });
  const w = tensor([1, 2, 3], { backend: be, requiresGrad: true });
  for (const y of [rmsNorm(x, w), layerNorm(x, w, w), layerNorm(x)]) {
    const loss = y.sum();
    loss.backward();
    loss.dispose();
    y.dispose();
  }
  const plain = tensor([1, 2, 3], { backend: be });
  rmsNorm(plain, plain).dispose();
  layerNorm(plain).dispose();
  for (const t of [x, w, plain]) t.dispose();
  assert.deepEqual(be.memory(), { liveBuffers: 0, liveBytes: 0 });
});
