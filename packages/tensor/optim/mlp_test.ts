/**
 * Acceptance test of the optimizer stack: a 1→32→1 tanh MLP fitted to y = sin(x) with AdamW,
 * full batch, on the CPU backend, with every per-step temporary freed.
 */

import assert from "node:assert/strict";
import { randn, tensor, zeros } from "../creation.ts";
import { getBackend, noGrad, tidy } from "../runtime.ts";
import type { Tensor } from "../tensor.ts";
import { AdamW } from "./adamw.ts";
import { paramGroupsNoDecay } from "./param_groups.ts";

// Acceptance criterion: final loss < initial loss / 10 (in practice it falls by >100x).
// Memory criterion: live backend buffers after the last step equal those after the first.

const N = 64;
const HIDDEN = 32;
const STEPS = 400;

/** A parameter leaf: seeded normal values times `scale`. */
function param(shape: number[], seed: number, scale: number): Tensor {
  const t = noGrad(() => tidy(() => randn(shape, { seed }).mul(scale)));
  t.requiresGrad = true;
  return t;
}

Deno.test("MLP 1→32→1 (tanh) learns sin(x) on [−3, 3] with AdamW; memory stays flat", async () => {
  const backend = getBackend();
  // 64 evenly spaced points in [−3, 3] and targets sin(x), as [64, 1] columns.
  const xs = Array.from({ length: N }, (_, i) => -3 + (6 * i) / (N - 1));
  const x = tensor(xs, { shape: [N, 1] });
  const target = tensor(xs.map(Math.sin), { shape: [N, 1] });

  const named = {
    "fc1.weight": param([1, HIDDEN], 1, 1), // fan-in 1: unit variance
    "fc1.bias": param([HIDDEN], 2, 0.5),
    "fc2.weight": param([HIDDEN, 1], 3, 1 / Math.sqrt(HIDDEN)), // fan-in 32
    "fc2.bias": zeros([1], { requiresGrad: true }),
  };
  const { "fc1.weight": w1, "fc1.bias": b1, "fc2.weight": w2, "fc2.bias": b2 } = named;
  const opt = new AdamW(paramGroupsNoDecay(named, { weightDecay: 0.01 }), { lr: 1e-2 });
  assert.deepEqual(opt.paramGroups.map((g) => g.params.length), [2, 2]); // weights | biases

  const forward = () => x.matmul(w1).add(b1).tanh().matmul(w2).add(b2).sub(target).square().mean();

  let initial = NaN;
  let liveAfterFirst = -1;
  const t0 = performance.now();
  for (let step = 0; step < STEPS; step++) {
    const loss = tidy(forward);
    loss.backward();
    opt.step();
    opt.zeroGrad();
    if (step === 0) initial = await loss.item();
    loss.dispose();
    if (step === 0) liveAfterFirst = backend.memory().liveBuffers;
  }
  const ms = performance.now() - t0;
  const liveAtEnd = backend.memory().liveBuffers;
  const finalLoss = noGrad(() => tidy(forward));
  const final = await finalLoss.item();
  finalLoss.dispose();

  console.log(
    `MLP sin(x): initial loss ${initial.toFixed(5)}, final loss ${
      final.toFixed(5)
    } after ${STEPS} AdamW steps ` +
      `(${(initial / final).toFixed(1)}x lower, ${
        ms.toFixed(0)
      } ms); live buffers ${liveAfterFirst} -> ${liveAtEnd}`,
  );
  assert.ok(Number.isFinite(initial) && Number.isFinite(final));
  assert.ok(final < initial / 10, `final loss ${final} is not below initial ${initial} / 10`);
  assert.equal(liveAtEnd, liveAfterFirst, "per-step temporaries leaked");

  opt.dispose();
  for (const t of [x, target, w1, b1, w2, b2]) t.dispose();
});
