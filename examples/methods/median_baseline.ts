/**
 * A user estimator in one file: REINFORCE with each group's median reward as the baseline
 * (a sample's advantage is its reward minus the median of its group), which one outlier sample
 * cannot drag the way it drags GRPO's mean.
 *
 *   npx -y deno@2.9.6 task train --set algorithm.estimator=./examples/methods/median_baseline.ts#medianBaseline --set trainer.steps=20
 *
 * @module
 */

import { broadcastScalars, type EstimatorFn } from "@rlvr/advantage";

/** Each response's sequence reward: the caller's, or its token rewards summed over the mask. */
function sequenceRewards(x: Parameters<EstimatorFn>[0]): number[] {
  if (x.rewards !== undefined) return Array.from(x.rewards, Number);
  const { data, batch, length } = x.tokenRewards;
  const mask = x.responseMask.data;
  return Array.from({ length: batch }, (_, i) => {
    let s = 0;
    for (let t = 0; t < length; t++) s += mask[i * length + t]! * data[i * length + t]!;
    return s;
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Advantage = reward − the median reward of the response's group (`index`).
 *
 * @example Usage
 * ```ts
 * import { medianBaseline } from "./median_baseline.ts";
 * import assert from "node:assert/strict";
 * const mask = { data: [1, 1, 1, 1], batch: 4, length: 1 };
 * const out = medianBaseline({
 *   tokenRewards: { data: [0, 0, 0, 0], batch: 4, length: 1 },
 *   rewards: [1, 0, 0, 10],
 *   responseMask: mask,
 *   index: ["a", "a", "a", "b"],
 * });
 * assert.deepEqual([...out.advantages], [1, 0, 0, 0]);
 * ```
 */
export const medianBaseline: EstimatorFn = (x) => {
  const rewards = sequenceRewards(x);
  const index = x.index ?? rewards.map(() => 0);
  const groups = new Map<string | number, number[]>();
  index.forEach((g, i) => groups.set(g, [...(groups.get(g) ?? []), rewards[i]!]));
  const scalars = rewards.map((r, i) => r - median(groups.get(index[i]!)!));
  const advantages = broadcastScalars(scalars, x.responseMask);
  return { advantages, returns: advantages.slice() };
};
