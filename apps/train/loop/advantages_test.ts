import assert from "node:assert/strict";
import { arithmeticTask } from "@rlvr/rewards";
import { loadConfig } from "../config/load.ts";
import { batchAdvantages, estimatorInput } from "./advantages.ts";
import type { RolloutItem } from "./rollout.ts";
import { trainBatch } from "./train_batch.ts";

const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
function item(reward: number, group: number, length: number, extra = {}): RolloutItem {
  return {
    row,
    group,
    promptIds: [1],
    completionIds: Array.from({ length }, (_, i) => 2 + i),
    samplerLogprobs: Array.from({ length }, () => -1),
    text: "",
    prompt: "",
    reward,
    correct: reward,
    format: null,
    ...extra,
  };
}
const none = { old: null, ref: null, entropy: null, values: null };

Deno.test("remax: the advantage is the reward minus its prompt's greedy reward, on every valid token", async () => {
  const { config } = await loadConfig({
    set: [
      "algorithm.estimator=remax",
      "rollout.batchSize=4",
      "rollout.groupSize=2",
      "algorithm.microBatchSize=4",
    ],
  });
  const items = [
    item(1, 0, 2, { baselineReward: 0 }),
    item(0, 0, 3, { baselineReward: 0 }),
    item(1, 1, 1, { baselineReward: 1 }),
    item(0, 1, 2, { baselineReward: 1 }),
  ];
  const batch = trainBatch(items);
  const { advantages } = batchAdvantages(config, batch, none);
  const T = batch.Tc;
  assert.deepEqual([...advantages.slice(0, T)], [1, 1, 0]);
  assert.deepEqual([...advantages.slice(T, 2 * T)], [0, 0, 0]);
  assert.deepEqual([...advantages.slice(2 * T, 3 * T)], [0, 0, 0]);
  assert.deepEqual([...advantages.slice(3 * T, 4 * T)], [-1, -1, 0]);
  assert.throws(
    () => batchAdvantages(config, trainBatch([item(1, 0, 1), item(0, 0, 1)]), none),
    /response 0 has no greedy baseline reward/,
  );
});

Deno.test("prime: implicit process rewards are β·(log π_old − log π_ref) on the loss tokens", async () => {
  const { config } = await loadConfig({
    set: ["algorithm.estimator=prime", "algorithm.prime={beta: 0.5}"],
  });
  const batch = trainBatch([item(1, 0, 2), item(0, 0, 1)]);
  // [2, 2]: the second response has one token, its second column is padding.
  const old = new Float32Array([-1, -2, -0.5, -9]);
  const ref = new Float32Array([-1.5, -1, -1, -1]);
  const input = estimatorInput(config, batch, { old, ref, entropy: null, values: null });
  const process = input.processRewards!;
  assert.deepEqual([...Array.from(process.data)], [0.25, -0.5, 0.25, 0]);
  assert.throws(() => estimatorInput(config, batch, none), /old log-probs were not scored/);
});

Deno.test("entropy_adv: the scored entropies reach the estimator and shape its base advantages", async () => {
  const { config } = await loadConfig({
    set: [
      "algorithm.estimator=entropy_adv",
      "algorithm.estimatorOptions={entropyAlpha: 0.1, entropyKappa: 2}",
    ],
  });
  const batch = trainBatch([item(1, 0, 2), item(0, 0, 2)]);
  const entropy = new Float32Array([1, 0, 2, 100]);
  const shaped = batchAdvantages(config, batch, { ...none, entropy }).advantages;
  const { config: grpo } = await loadConfig({});
  const base = batchAdvantages(grpo, batch, none).advantages;
  // ψ = min(α·H, |A|/κ): +0.1 where H = 1, 0 where H = 0, +0.2 and the clip |A|/2 below.
  const a = base[0]!;
  assert.ok(Math.abs(shaped[0]! - (a + 0.1)) < 1e-12 && shaped[1] === a);
  assert.ok(Math.abs(shaped[2]! - (-a + 0.2)) < 1e-12);
  assert.ok(Math.abs(shaped[3]! - (-a + a / 2)) < 1e-12);
});
