import assert from "node:assert/strict";
import fc from "fast-check";
import { createCpuBackend } from "../backend/cpu/cpu_backend.ts";
import type { Backend } from "../backend/types.ts";
import { tensor, zeros } from "../creation.ts";
import { Rng } from "../random.ts";
import { getBackend } from "../runtime.ts";
import { assertClose } from "../testing.ts";
import { AdamW } from "./adamw.ts";

// Tolerances: on the default CPU backend parameters and moments are stored in f32 (relative
// rounding 6e-8 per store), so golden values are compared with rtol 1e-6 / atol 1e-7. Against
// the float64 reference on the f32 backend: rtol 1e-5 / atol 1e-6 after up to 6 steps. On the
// f64 CPU backend the kernel does the same double arithmetic as the reference: rtol 1e-12.

const values = async (t: { data(): Promise<ArrayLike<number>> }) => Array.from(await t.data());

Deno.test("AdamW: three golden steps derived by hand", async () => {
  const p = tensor([1, -2], { requiresGrad: true });
  const opt = new AdamW([p], { lr: 0.1, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01 });
  const step = async (g: number[]) => {
    p.grad = tensor(g);
    opt.step();
    opt.zeroGrad();
    return await values(p);
  };

  // t = 1, g = [0.5, −1]
  //   m = 0.1·g = [0.05, −0.1];  v = 0.001·g² = [0.00025, 0.001]
  //   bc1 = 1 − 0.9 = 0.1;  bc2 = 1 − 0.999 = 0.001
  //   m̂ = m/bc1 = [0.5, −1];  v̂ = v/bc2 = [0.25, 1];  √v̂ = [0.5, 1]
  //   u = m̂/(√v̂ + 1e-8) = [0.5/0.50000001, −1/1.00000001] = [0.99999998, −0.99999999]
  //   θ = θ − 0.1·(u + 0.01·θ) = [1 − 0.1·1.00999998, −2 − 0.1·(−1.01999999)]
  assertClose(await step([0.5, -1]), [0.899000002, -1.898000001], { rtol: 1e-6, atol: 1e-7 });

  // t = 2, g = [0.5, 1]
  //   m = 0.9·[0.05, −0.1] + 0.1·g = [0.095, 0.01]
  //   v = 0.999·[0.00025, 0.001] + 0.001·g² = [0.00049975, 0.001999]
  //   bc1 = 1 − 0.81 = 0.19;  bc2 = 1 − 0.998001 = 0.001999
  //   m̂ = [0.5, 0.01/0.19 = 1/19];  v̂ = [0.25, 1]
  //   u = [0.99999998, (1/19)/1.00000001 = 0.0526315784210526]
  //   θ0 = 0.899000002 − 0.1·(0.99999998 + 0.00899000002) = 0.798101003998
  //   θ1 = −1.898000001 − 0.1·(0.0526315784210526 − 0.01898000001) = −1.9013651588411053
  assertClose(await step([0.5, 1]), [0.798101003998, -1.9013651588411053], {
    rtol: 1e-6,
    atol: 1e-7,
  });

  // t = 3, g = [−0.25, 0]
  //   m = 0.9·[0.095, 0.01] + 0.1·g = [0.0605, 0.009]
  //   v = 0.999·[0.00049975, 0.001999] + 0.001·g² = [0.00056175025, 0.001997001]
  //   bc1 = 1 − 0.729 = 0.271;  bc2 = 1 − 0.997002999 = 0.002997001
  //   m̂ = [0.0605/0.271, 0.009/0.271] = [0.22324723247, 0.03321033210]
  //   v̂ = [0.00056175025/0.002997001, 0.001997001/0.002997001] = [0.18743745831, 0.66633311100]
  //   u = m̂/(√v̂ + 1e-8) = [0.22324723247/0.43294047895, 0.03321033210/0.81629229508]
  //     = [0.51565339387, 0.04068436257]
  //   θ0 = 0.798101003998 − 0.1·(0.51565339387 + 0.00798101004) = 0.74573756361
  //   θ1 = −1.90136515884 − 0.1·(0.04068436257 − 0.01901365159) = −1.90353222994
  assertClose(await step([-0.25, 0]), [0.74573756361, -1.90353222994], { rtol: 1e-6, atol: 1e-7 });

  // The moments after step 3, as the checkpoint reports them.
  const st = await opt.state();
  assert.equal(st.params[0]!.step, 3);
  assertClose(st.params[0]!.buffers.m!, [0.0605, 0.009], { rtol: 1e-6, atol: 1e-9 });
  assertClose(st.params[0]!.buffers.v!, [0.00056175025, 0.001997001], { rtol: 1e-6, atol: 1e-12 });
  opt.dispose();
  p.dispose();
});

/** Independent float64 AdamW (Loshchilov & Hutter 2019, Algorithm 2 with torch's ε placement). */
function referenceAdamW(
  param: number[],
  grads: number[][],
  h: { lr: number; beta1: number; beta2: number; eps: number; wd: number },
): number[] {
  const p = [...param];
  const m = new Array<number>(p.length).fill(0);
  const v = new Array<number>(p.length).fill(0);
  for (let t = 1; t <= grads.length; t++) {
    const g = grads[t - 1]!;
    for (let i = 0; i < p.length; i++) {
      p[i] = p[i]! * (1 - h.lr * h.wd);
      m[i] = h.beta1 * m[i]! + (1 - h.beta1) * g[i]!;
      v[i] = h.beta2 * v[i]! + (1 - h.beta2) * g[i]! * g[i]!;
      const mHat = m[i]! / (1 - Math.pow(h.beta1, t));
      const vHat = v[i]! / (1 - Math.pow(h.beta2, t));
      p[i] = p[i]! - h.lr * mHat / (Math.sqrt(vHat) + h.eps);
    }
  }
  return p;
}

const arbCase: fc.Arbitrary<Case> = fc.record({
  size: fc.integer({ min: 1, max: 12 }),
  steps: fc.integer({ min: 1, max: 6 }),
  seed: fc.integer({ min: 0, max: 1_000_000 }),
  lr: fc.double({ min: 1e-4, max: 0.1, noNaN: true }),
  beta1: fc.double({ min: 0, max: 0.99, noNaN: true }),
  beta2: fc.double({ min: 0.9, max: 0.9999, noNaN: true }),
  eps: fc.constantFrom(1e-8, 1e-6, 1e-3),
  wd: fc.double({ min: 0, max: 0.5, noNaN: true }),
});

interface Case {
  size: number;
  steps: number;
  seed: number;
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  wd: number;
}

async function runCase(backend: Backend, c: Case): Promise<[number[], number[]]> {
  const rng = new Rng(c.seed);
  const init = Array.from({ length: c.size }, () => rng.normal());
  const grads = Array.from(
    { length: c.steps },
    () => Array.from({ length: c.size }, () => rng.normal()),
  );
  const p = tensor(init, { requiresGrad: true, backend });
  // The reference starts from the values the backend stored (f32-rounded on the f32 backend).
  const start = await values(p);
  const opt = new AdamW([p], {
    lr: c.lr,
    betas: [c.beta1, c.beta2],
    eps: c.eps,
    weightDecay: c.wd,
  });
  for (const g of grads) {
    p.grad = tensor(g, { backend });
    opt.step();
    opt.zeroGrad();
  }
  const got = await values(p);
  opt.dispose();
  p.dispose();
  return [got, referenceAdamW(start, grads, c)];
}

Deno.test("AdamW: matches an independent float64 implementation (f64 backend, exact)", async () => {
  const f64 = createCpuBackend({ precision: "f64" });
  await fc.assert(
    fc.asyncProperty(arbCase, async (c) => {
      const [got, want] = await runCase(f64, c);
      assertClose(got, want, { rtol: 1e-12, atol: 1e-14 });
    }),
    { numRuns: 60 },
  );
});

Deno.test("AdamW: matches the float64 implementation within f32 rounding (f32 backend)", async () => {
  const f32 = createCpuBackend();
  await fc.assert(
    fc.asyncProperty(arbCase, async (c) => {
      const [got, want] = await runCase(f32, c);
      assertClose(got, want, { rtol: 1e-5, atol: 1e-6 });
    }),
    { numRuns: 60 },
  );
});

Deno.test("AdamW: weight decay is decoupled (a zero gradient still shrinks θ by lr·wd·θ)", async () => {
  const p = tensor([2, -4], { requiresGrad: true });
  const opt = new AdamW([p], { lr: 0.1, weightDecay: 0.5 });
  p.grad = zeros([2]);
  opt.step(); // m = v = 0 so the Adam term is 0/(0 + ε) = 0; θ ← θ·(1 − 0.1·0.5)
  assertClose(await values(p), [1.9, -3.8], { rtol: 1e-7 });
  p.grad = zeros([2]);
  opt.step();
  assertClose(await values(p), [1.805, -3.61], { rtol: 1e-7 });
  // An L2 penalty folded into the gradient (Adam + L2) would instead move θ by ≈ lr·sign(θ).
  opt.dispose();
  p.dispose();
});

Deno.test("AdamW: parameters with grad === null are untouched and keep their own step count", async () => {
  const a = tensor([1, 2], { requiresGrad: true });
  const b = tensor([3, 4], { requiresGrad: true });
  const opt = new AdamW([a, b], { lr: 0.1 });
  a.grad = tensor([1, 1]);
  opt.step();
  opt.zeroGrad();
  assert.deepEqual(await values(b), [3, 4]);
  assert.equal((await opt.state()).params[1], null); // no state allocated for b
  // b's first update (optimizer step 2) uses t = 1, like a fresh optimizer (torch semantics).
  b.grad = tensor([0.5, -0.5]);
  opt.step();
  const fresh = tensor([3, 4], { requiresGrad: true });
  const opt2 = new AdamW([fresh], { lr: 0.1 });
  fresh.grad = tensor([0.5, -0.5]);
  opt2.step();
  assert.deepEqual(await values(b), await values(fresh));
  const st = await opt.state();
  assert.equal(st.stepCount, 2);
  assert.equal(st.params[0]!.step, 1);
  assert.equal(st.params[1]!.step, 1);
  for (const t of [a, b, fresh]) t.dispose();
  opt.dispose();
  opt2.dispose();
});

Deno.test("AdamW: updates in place (same tensor, same buffer) and per-group hyperparameters apply", async () => {
  const w = tensor([[1, 1], [1, 1]], { requiresGrad: true });
  const bias = tensor([1, 1], { requiresGrad: true });
  const wBuffer = w.buffer;
  const opt = new AdamW([{ params: [w] }, { params: [bias], lr: 0.01, weightDecay: 0 }], {
    lr: 0.1,
    weightDecay: 0,
  });
  w.grad = tensor([[1, -1], [2, -2]]);
  bias.grad = tensor([1, -1]);
  opt.step();
  assert.equal(w.buffer, wBuffer);
  // First step: θ moves by lr·g/(|g| + ε) ≈ lr·sign(g), with each group's lr.
  assertClose(await values(w), [0.9, 1.1, 0.9, 1.1], { rtol: 1e-6 });
  assertClose(await values(bias), [0.99, 1.01], { rtol: 1e-6 });
  assert.equal(opt.paramGroups[1]!.lr, 0.01);
  opt.dispose();
  w.dispose();
  bias.dispose();
});

Deno.test("AdamW: many steps leave the number of live buffers constant", () => {
  const backend = getBackend();
  const w = tensor([[0.5, -0.5], [0.25, 1]], { requiresGrad: true });
  const b = tensor([0, 0], { requiresGrad: true });
  const opt = new AdamW([w, b], { lr: 1e-2 });
  let after1 = -1;
  for (let i = 0; i < 50; i++) {
    w.grad = tensor([[1, 2], [3, 4]]);
    b.grad = tensor([1, -1]);
    opt.step();
    opt.zeroGrad();
    if (i === 0) after1 = backend.memory().liveBuffers;
  }
  assert.equal(backend.memory().liveBuffers, after1);
  const live = backend.memory().liveBuffers;
  opt.dispose(); // frees m and v of both parameters
  assert.equal(backend.memory().liveBuffers, live - 4);
  w.dispose();
  b.dispose();
});

Deno.test("AdamW: invalid hyperparameters are rejected with the field, the value and the range", () => {
  const w = tensor([1], { requiresGrad: true });
  assert.throws(
    () => new AdamW([w], { lr: -1 }),
    /AdamW: options.lr must be a finite number >= 0, got -1/,
  );
  assert.throws(
    () => new AdamW([w], { betas: [0.9, 1] }),
    /AdamW: options.betas\[1\] must be a finite number in \[0, 1\), got 1/,
  );
  assert.throws(
    () => new AdamW([w], { eps: NaN }),
    /AdamW: options.eps must be a finite number >= 0, got NaN/,
  );
  assert.throws(
    () => new AdamW([{ params: [w], weightDecay: -0.1 }]),
    /AdamW: paramGroups\[0\].weightDecay must be a finite number >= 0, got -0.1/,
  );
  assert.throws(
    () => new AdamW([w], { weight_decay: 0.1 } as never),
    /AdamW: unknown option "weight_decay"; known options: lr, weightDecay, betas, eps/,
  );
  const opt = new AdamW([w]);
  assert.throws(() => (opt.lr = -1), /AdamW: lr must be a finite number >= 0, got -1/);
  opt.paramGroups[0]!.lr = Infinity;
  w.grad = tensor([1]);
  assert.throws(() => opt.step(), /AdamW: lr must be a finite number >= 0, got Infinity/);
  assert.deepEqual(opt.stepCount, 0);
  opt.dispose();
  w.dispose();
});
