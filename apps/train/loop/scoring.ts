/**
 * Scoring a batch before the update, without gradient: the old log-probs (π_old, the ratio's
 * denominator), the reference's log-probs (KL, PRIME's implicit rewards), per-token entropies
 * (`entropy_adv`) and the critic's values (GAE), each only when something reads it.
 *
 * Design decisions:
 * - **Old log-probs are the learner's own** (the veRL convention), recomputed here before the
 *   first optimizer step; the sampler's numerics never enter the ratio. When the update is a
 *   single optimizer step and nothing reads them before the loss, they are not computed here at
 *   all: the gradient pass computes the same numbers (θ_old = θ before the only step) and the
 *   update reads them from it, one forward pass fewer (`old: null`).
 * - **No reference model unless something needs it**: the caller passes `ref` only then; with
 *   LoRA it passes `"base"`, the policy with its adapters detached (`withoutAdapters`).
 *
 * @module
 */

import { type CausalLM, scoreCompletions, ValueHead } from "@rlvr/policy";
import { concat, noGrad, type Tensor, tensor, tidy, zeros } from "@rlvr/tensor";
import { withoutAdapters } from "./lora.ts";
import type { RolloutItem } from "./rollout.ts";
import type { TrainBatch } from "./train_batch.ts";
import { forwardHookOf, type VisionInputs } from "./vision.ts";

/** What {@link scoreBeforeUpdate} computes; each `[B, Tc]`, or null when not asked for. */
export interface PreScores {
  /** log π_old per token, or null: the update reads it from its gradient pass. */
  old: Float32Array | null;
  /** log π_ref per token. */
  ref: Float32Array | null;
  /** Entropy of π_old per token (at the sampling temperature). */
  entropy: Float32Array | null;
  /** The value head's prediction before each completion token. */
  values: Float32Array | null;
}

/** What {@link scoreBeforeUpdate} is asked to compute. */
export interface ScoreNeeds {
  /** Old log-probs (several optimizer steps, KL in the reward, PRIME ...). */
  old: boolean;
  /** Entropies (they come with the old log-probs' pass). */
  entropy: boolean;
  /** Reference log-probs (needs a reference). */
  ref: boolean;
  /** Critic values (needs a value head). */
  values: boolean;
}

/** The models {@link scoreBeforeUpdate} scores with. */
export interface ScoringModels {
  /** The policy. */
  model: CausalLM;
  /** The frozen reference, `"base"` (LoRA: the policy without adapters) or null. */
  ref: CausalLM | "base" | null;
  /** The sampling temperature (log-probs are of `softmax(logits / T)`). */
  temperature: number;
  /** A vision-language policy's images (each item's row's images go with its forward pass). */
  vision?: VisionInputs | null;
}

async function host(t: Tensor): Promise<Float32Array> {
  try {
    return (await t.data()) as Float32Array;
  } finally {
    t.dispose();
  }
}

/**
 * The value head's prediction at the state before each completion token of `items`, `[B, Tc]`
 * (`Tc` their longest completion). With a vision-language policy's `vision` inputs the critic
 * reads each item's images (its row's), through the same forward hook as the policy's scoring.
 *
 * @example Usage
 * ```ts
 * import { attachValueHead } from "@rlvr/policy";
 * import { loadPolicy } from "./policy.ts";
 * import { completionValues } from "./scoring.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * attachValueHead(model, { seed: 0 });
 * const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
 * const it = { row, group: 0, promptIds: [1, 2], completionIds: [3, 4, 5], samplerLogprobs: [0, 0, 0],
 *   text: "", prompt: "", reward: 0, correct: 0, format: null };
 * const v = completionValues(model, [it]);
 * assert.deepEqual(v.shape, [1, 3]);
 * v.dispose();
 * model.dispose();
 * ```
 */
export function completionValues(
  model: CausalLM,
  items: readonly RolloutItem[],
  vision?: VisionInputs | null,
): Tensor {
  const head = model.extension("valueHead");
  if (!(head instanceof ValueHead)) {
    throw new Error("trainStep: estimator gae needs a value head; set model.valueHead: true");
  }
  const B = items.length;
  const L = items.reduce(
    (m, it) => Math.max(m, it.promptIds.length + it.completionIds.length),
    -Infinity,
  );
  const Tc = items.reduce((m, it) => Math.max(m, it.completionIds.length), -Infinity);
  const pad = model.config.padTokenId ?? 0;
  const ids = items.map((it) => {
    const row = [...it.promptIds, ...it.completionIds];
    while (row.length < L) row.push(pad);
    return row;
  });
  const where = new Int32Array(B * Tc).fill(B * L);
  items.forEach((it, b) => {
    for (let j = 0; j < it.completionIds.length; j++) {
      where[b * Tc + j] = b * L + it.promptIds.length - 1 + j;
    }
  });
  return tidy(() => {
    const { forwardHook } = forwardHookOf(vision, model, (i) => items[i]?.row);
    const extra = forwardHook?.({ ids, rows: items.map((_, i) => i), cacheLength: 0, mask: null });
    const v = head.values(model.hidden(tensor(ids, { dtype: "i32" }), extra ?? {})).reshape(B * L);
    return concat([v, zeros([1])], 0).indexSelect(
      0,
      tensor(where, { shape: [B * Tc], dtype: "i32" }),
    )
      .reshape(B, Tc);
  });
}

/**
 * Scores the batch without gradient (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { loadPolicy } from "./policy.ts";
 * import { heldOutProblems, TrainStream } from "./problems.ts";
 * import { collectRollout } from "./rollout.ts";
 * import { scoreBeforeUpdate } from "./scoring.ts";
 * import { trainBatch } from "./train_batch.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * const r = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, heldOutProblems(task, 4)), {
 *   step: 1, seed: 0, batchSize: 4, groupSize: 2, maxNewTokens: 4,
 *   sampling: { temperature: 1 }, dynamicRetries: null, overlong: null,
 * });
 * const batch = trainBatch(r.items);
 * const s = await scoreBeforeUpdate({ model, ref: null, temperature: 1 }, batch,
 *   { old: true, entropy: true, ref: false, values: false });
 * // the learner's log-probs are the sampler's (same weights, same temperature)
 * assert.ok(Math.abs(s.old![0]! - batch.sampled[0]!) < 1e-4);
 * assert.equal(s.ref, null);
 * model.dispose();
 * ```
 */
export async function scoreBeforeUpdate(
  models: ScoringModels,
  batch: TrainBatch,
  needs: ScoreNeeds,
): Promise<PreScores> {
  const { model, ref, temperature } = models;
  const score = (m: CausalLM, entropy: boolean, reference = false) =>
    noGrad(() => {
      const s = scoreCompletions(m, batch.scoreItems, {
        temperature,
        entropy,
        ...forwardHookOf(models.vision, m, (i) => batch.items[i]?.row, reference),
      });
      s.mask.dispose();
      return s;
    });
  let old: Float32Array | null = null;
  let entropy: Float32Array | null = null;
  if (needs.old || needs.entropy) {
    const s = score(model, needs.entropy);
    old = await host(s.logprobs);
    if (s.entropies != null) {
      const e = await host(s.entropies);
      if (needs.entropy) entropy = e;
    }
    if (!needs.old) old = null;
  }
  let refLp: Float32Array | null = null;
  if (needs.ref) {
    if (ref === null) {
      throw new Error("scoreBeforeUpdate: reference log-probs were asked for without a reference");
    }
    refLp = await host(
      ref === "base"
        ? withoutAdapters(model, () => score(model, false, true).logprobs)
        : score(ref, false).logprobs,
    );
  }
  const values = needs.values
    ? await host(noGrad(() => completionValues(model, batch.items, models.vision)))
    : null;
  return { old, ref: refLp, entropy, values };
}
