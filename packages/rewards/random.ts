/**
 * The random reward of the spurious-rewards experiments: 1 with probability `p`, independent
 * of whether the completion is right.
 *
 * Design: Shao et al. ("Spurious Rewards: Rethinking Training Signals in RLVR", arXiv
 * 2506.10947) draw a Bernoulli(γ) reward per response. Here the draw is a hash of the seed, the
 * row (`row.id`, else the prompt) and the completion, so a run is reproducible, the same
 * response to the same problem always gets the same reward, and no state is kept.
 *
 * @module
 */

import { fmix32 } from "@rlvr/common";
import { checkNumber, checkOptions } from "./_check.ts";
import { defineReward } from "./define.ts";
import type { Reward, Row } from "./types.ts";

/** Options of {@link randomReward}. */
export interface RandomRewardOptions {
  /** Probability of a reward of 1 (in [0, 1]; default 0.5). */
  p?: number;
  /** Seed of the draws (integer; default 0). */
  seed?: number;
}

function hash(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return fmix32(h) >>> 0;
}

/**
 * A reward of 1 with probability `p` and 0 otherwise, drawn from the seed, the row and the
 * completion (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { randomReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const inputs = Array.from({ length: 400 }, (_, i) => ({ prompt: "1+1=", completion: `${i}`, row: { id: "a" } }));
 * const { totals } = await scoreRewards([randomReward({ p: 0.5 })], inputs);
 * const mean = totals.reduce((a, b) => a + b, 0) / totals.length;
 * assert.ok(mean > 0.4 && mean < 0.6);
 * assert.deepEqual((await scoreRewards([randomReward()], inputs)).totals, totals);
 * ```
 */
export function randomReward<R extends Row = Row>(options?: RandomRewardOptions): Reward<R> {
  const owner = "randomReward";
  const o = checkOptions<RandomRewardOptions>(owner, options, "{p?, seed?}");
  for (const key of Object.keys(o)) {
    if (key !== "p" && key !== "seed") {
      throw new TypeError(`${owner}: unknown option ${JSON.stringify(key)}; use p or seed`);
    }
  }
  const p = checkNumber(owner, "options.p", o.p ?? 0.5, { min: 0, max: 1 });
  const seed = checkNumber(owner, "options.seed", o.seed ?? 0, { integer: true });
  return defineReward<R>("random", (input) => {
    const row = input.row as { id?: unknown };
    const key = typeof row?.id === "string" ? row.id : input.prompt;
    return hash(`${key}\u0000${input.completion}`, seed) / 2 ** 32 < p ? 1 : 0;
  });
}
