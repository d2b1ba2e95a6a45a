import assert from "node:assert/strict";
import { arithmeticTask } from "@rlvr/rewards";
import { AdamW, SGD } from "@rlvr/tensor";
import { loadConfig } from "../config/load.ts";
import { loadPolicy } from "./policy.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { collectRollout, type RolloutItem } from "./rollout.ts";
import { trainStep } from "./trainer.ts";

const task = arithmeticTask({ digits: 2, operators: ["+"], chainLength: 1 });

async function rollout(): Promise<RolloutItem[]> {
  const { model, tokenizer } = await loadPolicy("builtin:tiny");
  const stream = new TrainStream(task, 0, heldOutProblems(task, 8));
  const r = await collectRollout(model, tokenizer, task, stream, {
    step: 1,
    seed: 0,
    batchSize: 8,
    groupSize: 4,
    maxNewTokens: 6,
    sampling: { temperature: 1 },
    dynamicRetries: null,
    overlong: null,
  });
  model.dispose();
  return r.items;
}

// The weight change of one plain SGD step with lr 1 is minus the gradient, so comparing weights
// after the step compares gradients, scale included.
async function gradientWith(
  items: RolloutItem[],
  set: string[],
): Promise<Map<string, Float32Array>> {
  const { config } = await loadConfig({
    set: [
      "rollout.batchSize=8",
      "rollout.groupSize=4",
      "algorithm.microBatchSize=8",
      "algorithm.kl.beta=0",
      "optimizer.gradClip=null",
      ...set,
    ],
  });
  const { model } = await loadPolicy("builtin:tiny");
  const before = new Map<string, Float32Array>();
  for (const [n, t] of model.params) before.set(n, (await t.data()) as Float32Array);
  const optimizer = new SGD(model.parameters(), { lr: 1 });
  await trainStep({ config, model, ref: null, optimizer }, items);
  const out = new Map<string, Float32Array>();
  for (const [n, t] of model.params) {
    const after = (await t.data()) as Float32Array;
    out.set(n, after.map((x, i) => before.get(n)![i]! - x));
  }
  optimizer.dispose();
  model.dispose();
  return out;
}

Deno.test("trainStep: global token normalisation makes the update independent of the micro-batch size", async () => {
  const items = await rollout();
  assert.ok(new Set(items.map((it) => it.reward)).size > 1, "the batch has reward variance");
  for (const aggregation of ["token-mean", "seq-mean-token-mean"]) {
    const whole = await gradientWith(items, [
      `algorithm.microBatchSize=8`,
      `algorithm.aggregation=${aggregation}`,
    ]);
    const split = await gradientWith(items, [
      `algorithm.microBatchSize=2`,
      `algorithm.aggregation=${aggregation}`,
    ]);
    let worst = 0;
    let scale = 0;
    for (const [name, a] of whole) {
      const b = split.get(name)!;
      for (let i = 0; i < a.length; i++) {
        worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
        scale = Math.max(scale, Math.abs(a[i]!));
      }
    }
    // Only the f32 summation order differs between one and four micro-batches.
    assert.ok(scale > 1e-3, `${aggregation}: the gradient is not zero (${scale})`);
    assert.ok(worst <= 1e-4 * scale, `${aggregation}: max difference ${worst} of ${scale}`);
  }
});

Deno.test("trainStep: an empty batch skips the update; a batch of equal rewards gives zero loss", async () => {
  const { config } = await loadConfig({
    set: [
      "rollout.batchSize=8",
      "rollout.groupSize=4",
      "algorithm.microBatchSize=8",
      "algorithm.kl.beta=0",
    ],
  });
  const { model } = await loadPolicy("builtin:tiny");
  const optimizer = new AdamW(model.parameters(), { lr: 1e-3 });
  try {
    const m = await trainStep({ config, model, ref: null, optimizer }, []);
    assert.equal(m.gradNorm, null);
    assert.equal(optimizer.stepCount, 0);
    const flat = (await rollout()).map((it) => ({ ...it, reward: 1 }));
    const u = await trainStep({ config, model, ref: null, optimizer }, flat);
    assert.equal(u.pgLoss, 0);
    assert.equal(u.gradNorm, 0);
    assert.ok(u.samplerLogprobDiff! < 1e-4, `sampler vs learner ${u.samplerLogprobDiff}`);
  } finally {
    optimizer.dispose();
    model.dispose();
  }
});
