/**
 * Mini-batch plans: which responses each optimizer step of an update sees (veRL
 * `ppo_mini_batch_size` × `ppo_epochs`, TRL `steps_per_generation` × `num_iterations`).
 *
 * Design decisions:
 * - **A plan is data**: `epochs × steps × rows`, computed before the update, so a test can check
 *   it and the update only walks it.
 * - **Each epoch is a partition of the batch**: every response is in exactly one mini-batch of
 *   every epoch; only the last mini-batch may be smaller (a dynamic-sampling batch that came up
 *   short of `rollout.batchSize`).
 * - **Shuffling is seeded** by `(seed, step, epoch)`, so a run stays a pure function of its
 *   config and resumes exactly; with a single mini-batch the rows keep their rollout order (the
 *   order of the micro-batches changes f32 sums, and a one-step update has nothing to decorrelate).
 *
 * @module
 */

import { seededRng } from "@rlvr/rewards";

/** Options of {@link miniBatchPlan}. */
export interface MiniBatchPlanOptions {
  /** Responses in the batch. */
  batchSize: number;
  /** Responses per optimizer step (null: the whole batch). */
  miniBatchSize: number | null;
  /** Passes over the batch. */
  epochs: number;
  /** Shuffle the rows of every epoch (only when there are several mini-batches). */
  shuffle: boolean;
  /** The run's seed. */
  seed: number;
  /** The training step (so each step shuffles differently). */
  step: number;
}

// Domain of the shuffling draws, so they never coincide with another seededRng stream.
const SHUFFLE_DOMAIN = 0x6d696e69;

/**
 * The rows of every optimizer step: `plan[epoch][step]` is a list of response indices.
 *
 * @example Usage
 * ```ts
 * import { miniBatchPlan } from "./minibatch.ts";
 * import assert from "node:assert/strict";
 * const plan = miniBatchPlan({ batchSize: 6, miniBatchSize: 4, epochs: 2, shuffle: false, seed: 0, step: 1 });
 * assert.deepEqual(plan, [[[0, 1, 2, 3], [4, 5]], [[0, 1, 2, 3], [4, 5]]]);
 * const one = miniBatchPlan({ batchSize: 3, miniBatchSize: null, epochs: 1, shuffle: true, seed: 0, step: 1 });
 * assert.deepEqual(one, [[[0, 1, 2]]]);
 * ```
 */
export function miniBatchPlan(opts: MiniBatchPlanOptions): number[][][] {
  const { batchSize, epochs } = opts;
  for (const [name, v, min] of [["batchSize", batchSize, 0], ["epochs", epochs, 1]] as const) {
    if (!Number.isInteger(v) || v < min) {
      throw new RangeError(`miniBatchPlan: ${name} must be an integer >= ${min}, got ${v}`);
    }
  }
  const size = opts.miniBatchSize ?? batchSize;
  if (opts.miniBatchSize !== null && !(Number.isInteger(size) && size >= 1)) {
    throw new RangeError(
      `miniBatchPlan: miniBatchSize must be an integer >= 1 or null, got ${opts.miniBatchSize}`,
    );
  }
  const plan: number[][][] = [];
  const steps = batchSize === 0 ? 0 : Math.ceil(batchSize / Math.max(1, size));
  for (let e = 0; e < epochs; e++) {
    let rows = Array.from({ length: batchSize }, (_, i) => i);
    if (opts.shuffle && steps > 1) {
      rows = seededRng(opts.seed, opts.step, e, SHUFFLE_DOMAIN).shuffle(rows);
    }
    const epoch: number[][] = [];
    for (let s = 0; s < steps; s++) epoch.push(rows.slice(s * size, (s + 1) * size));
    plan.push(epoch);
  }
  return plan;
}

/**
 * Splits a mini-batch's rows into micro-batches of at most `size` (gradient accumulation).
 *
 * @example Usage
 * ```ts
 * import { microBatches } from "./minibatch.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(microBatches([4, 0, 2], 2), [[4, 0], [2]]);
 * ```
 */
export function microBatches(rows: readonly number[], size: number): number[][] {
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError(`microBatches: size must be an integer >= 1, got ${size}`);
  }
  const out: number[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
