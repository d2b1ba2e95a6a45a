/**
 * End-to-end training on WebGPU: the optimizer-stack acceptance test of `optim/mlp_test.ts`
 * (a 1→32→1 tanh MLP fitted to sin(x) with AdamW) run on the CPU oracle and on WebGPU from the
 * same initial weights, comparing the loss at every step; and a 1,000-step no-leak test.
 */

import assert from "node:assert/strict";
import { randn, tensor, zeros } from "../../creation.ts";
import { stack } from "../../ops/shape.ts";
import { AdamW } from "../../optim/adamw.ts";
import { paramGroupsNoDecay } from "../../optim/param_groups.ts";
import { noGrad, tidy } from "../../runtime.ts";
import type { Tensor } from "../../tensor.ts";
import type { Backend } from "../types.ts";
import { cpu, gpuTest } from "./_test_utils.ts";
import type { WebGpuPoolStats } from "./webgpu_backend.ts";

const N = 64;
const HIDDEN = 32;
const STEPS = 400;

function param(shape: number[], seed: number, scale: number, backend: Backend): Tensor {
  const t = noGrad(() => tidy(() => randn(shape, { seed, backend }).mul(scale)));
  t.requiresGrad = true;
  return t;
}

/** Trains the MLP of `optim/mlp_test.ts` on `backend`; returns the loss of every step. */
async function train(backend: Backend, steps: number): Promise<number[]> {
  const live = backend.memory().liveBuffers;
  const xs = Array.from({ length: N }, (_, i) => -3 + (6 * i) / (N - 1));
  const x = tensor(xs, { shape: [N, 1], backend });
  const target = tensor(xs.map(Math.sin), { shape: [N, 1], backend });
  const named = {
    "fc1.weight": param([1, HIDDEN], 1, 1, backend),
    "fc1.bias": param([HIDDEN], 2, 0.5, backend),
    "fc2.weight": param([HIDDEN, 1], 3, 1 / Math.sqrt(HIDDEN), backend),
    "fc2.bias": zeros([1], { requiresGrad: true, backend }),
  };
  const { "fc1.weight": w1, "fc1.bias": b1, "fc2.weight": w2, "fc2.bias": b2 } = named;
  const opt = new AdamW(paramGroupsNoDecay(named, { weightDecay: 0.01 }), { lr: 1e-2 });
  const forward = () => x.matmul(w1).add(b1).tanh().matmul(w2).add(b2).sub(target).square().mean();
  // Keep every step's loss on the device and read them all at the end: one readback, not 400.
  const kept: Tensor[] = [];
  for (let step = 0; step < steps; step++) {
    const loss = tidy(forward);
    loss.backward();
    opt.step();
    opt.zeroGrad();
    kept.push(loss.detach());
    loss.dispose();
  }
  const all = stack(kept);
  const losses = [...await all.data()];
  all.dispose();
  for (const t of kept) t.dispose();
  opt.dispose();
  for (const t of [x, target, w1, b1, w2, b2]) t.dispose();
  assert.equal(backend.memory().liveBuffers, live, `${backend.name}: per-step temporaries leaked`);
  return losses;
}

gpuTest(
  "MLP 1→32→1 learns sin(x) with AdamW on WebGPU with the CPU oracle's loss curve",
  async (gpu) => {
    const t0 = performance.now();
    const want = await train(cpu, STEPS);
    const t1 = performance.now();
    const got = await train(gpu, STEPS);
    const t2 = performance.now();
    let worst = 0;
    for (let i = 0; i < STEPS; i++) {
      worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / Math.abs(want[i]!));
    }
    console.log(
      `MLP sin(x) on ${gpu.description}: loss ${got[0]!.toFixed(5)} -> ${
        got[STEPS - 1]!.toFixed(5)
      } (CPU ${want[0]!.toFixed(5)} -> ${want[STEPS - 1]!.toFixed(5)}); worst per-step relative ` +
        `difference ${worst.toExponential(2)}; CPU ${(t1 - t0).toFixed(0)} ms, WebGPU ${
          (t2 - t1).toFixed(0)
        } ms`,
    );
    assert.ok(got[STEPS - 1]! < got[0]! / 10, "the WebGPU run did not learn");
    // The kernels differ from the CPU oracle only by f32 rounding (~1e-7 relative per op; the CPU
    // sums in float64); AdamW's normalised steps carry such differences forward without
    // amplifying them much on this smooth problem: about 3e-6 is observed on lavapipe. 1e-4
    // relative per step leaves a 30x margin while still catching any real kernel difference.
    assert.ok(worst < 1e-4, `per-step losses differ by up to ${worst} (relative)`);
  },
);

gpuTest("1,000 forward/backward/AdamW steps keep live and pooled memory flat", async (gpu) => {
  const backend = gpu;
  const x = tensor(Array.from({ length: 16 * 4 }, (_, i) => Math.cos(i)), {
    shape: [16, 4],
    backend,
  });
  const y = tensor(Array.from({ length: 16 }, (_, i) => Math.sin(i)), { shape: [16, 1], backend });
  const w1 = param([4, 8], 1, 0.5, backend);
  const b1 = zeros([8], { requiresGrad: true, backend });
  const w2 = param([8, 1], 2, 0.5, backend);
  const opt = new AdamW([w1, b1, w2], { lr: 1e-2 });
  const snapshot = (): [ReturnType<Backend["memory"]>, WebGpuPoolStats] => [
    backend.memory(),
    backend.poolStats(),
  ];
  let at100: ReturnType<typeof snapshot> | null = null;
  let last = NaN;
  for (let step = 1; step <= 1000; step++) {
    const loss = tidy(() => x.matmul(w1).add(b1).relu().matmul(w2).sub(y).square().mean());
    loss.backward();
    opt.step();
    opt.zeroGrad();
    if (step === 100 || step === 1000) {
      last = await loss.item(); // submits and waits: every deferred free has been released
    } else {
      backend.flush(); // one submit per step (no wait), so every step ends in the same state
    }
    loss.dispose();
    if (step === 100) at100 = snapshot();
  }
  const at1000 = snapshot();
  assert.deepEqual(at1000, at100, "memory counters changed between step 100 and step 1000");
  assert.equal(at1000[1].pendingBuffers, 0);
  assert.ok(Number.isFinite(last));
  opt.dispose();
  for (const t of [x, y, w1, b1, w2]) t.dispose();
});
