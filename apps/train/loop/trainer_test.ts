import assert from "node:assert/strict";
import { arithmeticTask } from "@rlvr/rewards";
import { AdamW, SGD } from "@rlvr/tensor";
import { loadConfig } from "../config/load.ts";
import { loadPolicy } from "./policy.ts";
import { heldOutProblems, TrainStream } from "./problems.ts";
import { collectRollout, type RolloutItem } from "./rollout.ts";
import { trainStep } from "./trainer.ts";

const task = arithmeticTask({ digits: 2, operators: ["+"], chainLength: 1 });

/** The sizes of {@link rollout}'s batch, and no gradient clipping (gradients are compared). */
const BATCH = [
  "rollout.batchSize=8",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=8",
  "optimizer.gradClip=null",
];

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
  const { config } = await loadConfig({ set: [...BATCH, "algorithm.kl.beta=0", ...set] });
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

async function stepWith(
  items: RolloutItem[],
  set: string[],
  optimizerKind: "adamw" | "sgd" = "adamw",
  lr = 5e-2,
): Promise<{ m: Awaited<ReturnType<typeof trainStep>>; weights: Map<string, Float32Array> }> {
  const { config } = await loadConfig({ set: [...BATCH, ...set] });
  const { model } = await loadPolicy("builtin:tiny");
  // AdamW's first step is about lr·sign(g): large moves (the ratio leaves 1), but sign flips of
  // near-zero gradient entries; SGD compares gradients.
  const optimizer = optimizerKind === "adamw"
    ? new AdamW(model.parameters(), { lr })
    : new SGD(model.parameters(), { lr: 1 });
  const m = await trainStep({ config, model, ref: null, optimizer, step: 3 }, items);
  const weights = new Map<string, Float32Array>();
  for (const [n, t] of model.params) weights.set(n, (await t.data()) as Float32Array);
  optimizer.dispose();
  model.dispose();
  return { m, weights };
}

function maxDiff(a: Map<string, Float32Array>, b: Map<string, Float32Array>): number {
  let worst = 0;
  for (const [name, x] of a) {
    const y = b.get(name)!;
    for (let i = 0; i < x.length; i++) worst = Math.max(worst, Math.abs(x[i]! - y[i]!));
  }
  return worst;
}

Deno.test("trainStep with mini-batches: one optimizer step each, the ratio moves off 1 after the first, clipping acts", async () => {
  const items = await rollout();
  const one = await stepWith(items, []);
  assert.equal(one.m.optimizerSteps, 1);
  // A single step: π_θ = π_old at the only loss evaluation.
  assert.ok(Math.abs(one.m.ratioMean! - 1) < 1e-6 && Math.abs(one.m.ratioMax! - 1) < 1e-6);
  assert.equal(one.m.clipFracLow! + one.m.clipFracHigh!, 0);
  const four = await stepWith(items, ["algorithm.ppoMiniBatchSize=2"]);
  assert.equal(four.m.optimizerSteps, 4);
  assert.ok(four.m.ratioMax! > 1 + 1e-3, `ratio max ${four.m.ratioMax}`);
  assert.ok(Math.abs(four.m.ppoKl!) > 1e-5, `approx-KL to π_old ${four.m.ppoKl}`);
  // Small steps leave a narrow trust region more often than ε = 0.2: more tokens are clipped, and
  // that changes the update.
  const wide = await stepWith(items, ["algorithm.ppoMiniBatchSize=2"], "adamw", 1e-2);
  const narrow = await stepWith(
    items,
    [
      "algorithm.ppoMiniBatchSize=2",
      "algorithm.clip.low=0.0001",
      "algorithm.clip.high=0.0001",
    ],
    "adamw",
    1e-2,
  );
  const clipped = (u: typeof wide) => u.m.clipFracLow! + u.m.clipFracHigh!;
  assert.ok(clipped(narrow) > clipped(wide), `${clipped(narrow)} vs ${clipped(wide)}`);
  assert.ok(maxDiff(narrow.weights, wide.weights) > 0, "the clip range changes the update");
  // Two epochs over one mini-batch are two steps, the second off-policy too.
  const epochs = await stepWith(items, ["algorithm.ppoEpochs=2"]);
  assert.equal(epochs.m.optimizerSteps, 2);
  assert.ok(epochs.m.ratioMax! > 1 + 1e-3, `ratio max ${epochs.m.ratioMax}`);
});

Deno.test("trainStep: GSPO's sequence ratio and PPO's token ratio give different updates once the ratio moves", async () => {
  const items = await rollout();
  const mini = [
    "algorithm.ppoMiniBatchSize=2",
    "algorithm.clip.low=0.01",
    "algorithm.clip.high=0.01",
  ];
  const vanilla = await stepWith(items, mini, "sgd");
  const gspo = await stepWith(items, [...mini, "algorithm.loss=gspo"], "sgd");
  assert.ok(
    maxDiff(vanilla.weights, gspo.weights) > 1e-4,
    `${maxDiff(vanilla.weights, gspo.weights)}`,
  );
  // With a single step both are the policy gradient of the same advantages.
  const seq = "algorithm.aggregation=seq-mean-token-mean";
  const v1 = await stepWith(items, [seq], "sgd");
  const g1 = await stepWith(items, ["algorithm.loss=gspo", seq], "sgd");
  assert.ok(maxDiff(v1.weights, g1.weights) < 1e-6, `${maxDiff(v1.weights, g1.weights)}`);
});

Deno.test("trainStep: reading π_old from the gradient pass of a one-step update equals scoring it first", async () => {
  const items = await rollout();
  const shortcut = await stepWith(items, [], "sgd");
  const { config } = await loadConfig({
    set: [...BATCH, "algorithm.ppoMiniBatchSize=8", "algorithm.ppoEpochs=1"],
  });
  const { model } = await loadPolicy("builtin:tiny");
  const optimizer = new SGD(model.parameters(), { lr: 1 });
  // Score first, explicitly, through the same building blocks trainStep uses.
  const { trainBatch } = await import("./train_batch.ts");
  const { scoreBeforeUpdate } = await import("./scoring.ts");
  const { batchAdvantages } = await import("./advantages.ts");
  const { miniBatchPlan } = await import("./minibatch.ts");
  const { miniBatchUpdates } = await import("./update.ts");
  const batch = trainBatch(items);
  const scores = await scoreBeforeUpdate({ model, ref: null, temperature: 1 }, batch, {
    old: true,
    entropy: false,
    ref: false,
    values: false,
  });
  const adv = batchAdvantages(config, batch, scores);
  const plan = miniBatchPlan({
    batchSize: 8,
    miniBatchSize: null,
    epochs: 1,
    shuffle: true,
    seed: 0,
    step: 3,
  });
  await miniBatchUpdates({ config, model, optimizer }, batch, plan, { ...adv, scores });
  const weights = new Map<string, Float32Array>();
  for (const [n, t] of model.params) weights.set(n, (await t.data()) as Float32Array);
  optimizer.dispose();
  model.dispose();
  // Same numbers up to the f32 order of the separate no-grad pass.
  assert.ok(maxDiff(weights, shortcut.weights) < 1e-6, `${maxDiff(weights, shortcut.weights)}`);
});

Deno.test("trainStep: algorithm.oldLogProbs rollout takes π_old from the sampler's log-probs", async () => {
  const items = await rollout();
  const mini = ["algorithm.ppoMiniBatchSize=2"];
  const bypass = "algorithm.oldLogProbs=rollout";
  // The sampler and the learner agree here, so the update is the recomputed one.
  const recomputed = await stepWith(items, mini, "sgd");
  const fromSampler = await stepWith(items, [...mini, bypass], "sgd");
  assert.equal(fromSampler.m.optimizerSteps, 4);
  assert.equal(fromSampler.m.samplerLogprobDiff, null);
  assert.ok(recomputed.m.samplerLogprobDiff! < 1e-5, `${recomputed.m.samplerLogprobDiff}`);
  const d = maxDiff(recomputed.weights, fromSampler.weights);
  assert.ok(d < 1e-5, `bypass vs recompute ${d}`);
  // A sampler that put 0.1 nats less on every token it drew: the first step's ratio is e^0.1
  // against it, 1 against the recomputed π_old.
  const shifted = items.map((it) => ({
    ...it,
    samplerLogprobs: it.samplerLogprobs.map((lp) => lp - 0.1),
  }));
  const one = await stepWith(shifted, [bypass]);
  assert.ok(Math.abs(one.m.ratioMean! - Math.exp(0.1)) < 1e-4, `ratio ${one.m.ratioMean}`);
  const own = await stepWith(shifted, []);
  assert.ok(Math.abs(own.m.ratioMean! - 1) < 1e-6, `ratio ${own.m.ratioMean}`);
  assert.ok(Math.abs(own.m.samplerLogprobDiff! - 0.1) < 1e-4, `${own.m.samplerLogprobDiff}`);
});
