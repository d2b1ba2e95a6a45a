/**
 * One supervised step of the demo's warm starts (`pretrain.ts`, `pretrain_agent.ts`): the
 * token-mean negative log-likelihood of each completion given its prompt, computed with
 * `scoreCompletions` (the learner-side scoring RL uses), then gradient clipping at norm 1 and an
 * optimizer step.
 *
 * Design decision: an episode's observation tokens are context, not targets, so a per-token
 * `lossMask` (1 = train on it) may restrict the mean to the policy's tokens, exactly as the RL
 * loss does; without one, every completion token counts.
 *
 * @module
 */

import { type CausalLM, type ForwardHook, scoreCompletions } from "@rlvr/policy";
import { clipGradNorm, type Optimizer, type Tensor, tensor } from "@rlvr/tensor";

/** One training sequence of {@link sftStep}. */
export interface SftSequence {
  /** Prompt token ids (context). */
  promptIds: readonly number[];
  /** Completion token ids (targets). */
  completionIds: readonly number[];
  /** Per completion token: 1 to train on it, 0 to keep it as context only (default all 1). */
  lossMask?: readonly number[];
}

/** Options of {@link sftStep}. */
export interface SftStepOptions {
  /**
   * Sequences per forward/backward pass (default the whole batch): the batch is sorted by
   * length and split, and the gradients summed, so the step is the same token mean with less
   * padding.
   */
  microBatch?: number;
  /**
   * The {@link ForwardHook} of each forward/backward pass, made from the pass's sequences (its
   * rows are indices into `part`): a vision-language model's `forwardHook` puts each sequence's
   * images into its image tokens (`pretrain_vl.ts`). Default none (text only).
   */
  forwardHook?: (part: readonly SftSequence[]) => ForwardHook;
}

/**
 * The tokens of a sequence the loss trains on: its mask's sum, or every completion token.
 *
 * @example Usage
 * ```ts
 * import { trainedTokens } from "./sft.ts";
 * import assert from "node:assert/strict";
 * assert.equal(trainedTokens({ promptIds: [1], completionIds: [5, 6, 2] }), 3);
 * assert.equal(trainedTokens({ promptIds: [1], completionIds: [5, 6, 2], lossMask: [0, 1, 1] }), 2);
 * ```
 */
export function trainedTokens(seq: SftSequence): number {
  return seq.lossMask !== undefined
    ? seq.lossMask.reduce((a: number, x) => a + x, 0)
    : seq.completionIds.length;
}

/** Options of {@link sftGradients}. */
export interface SftGradientOptions extends SftStepOptions {
  /**
   * The loss's denominator: the trained tokens of the whole batch when `batch` is one part of it
   * (data-parallel), so the parts' gradients sum to the whole's (default: this batch's tokens).
   */
  total?: number;
}

/**
 * Accumulates the gradients of {@link sftStep}'s loss on `batch` into the parameters' `grad`
 * without stepping, and returns the loss (its share, with `total`).
 *
 * @example Usage
 * ```ts
 * import { sftGradients } from "./sft.ts";
 * import { loadPolicy } from "../loop/policy.ts";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * const loss = await sftGradients(model, [{ promptIds: [1, 20], completionIds: [22, 2] }], { total: 4 });
 * assert.ok(loss > 0 && model.parameters().every((p) => p.grad !== null));
 * model.dispose();
 * ```
 */
export async function sftGradients(
  model: CausalLM,
  batch: readonly SftSequence[],
  options: SftGradientOptions = {},
): Promise<number> {
  const total = options.total ?? batch.reduce((a, b) => a + trainedTokens(b), 0);
  // Sorting by length before splitting keeps the padding of each micro-batch small.
  const micro = options.microBatch ?? batch.length;
  const order = micro < batch.length
    ? batch.slice().sort((a, b) =>
      a.promptIds.length + a.completionIds.length - b.promptIds.length - b.completionIds.length
    )
    : batch;
  let value = 0;
  for (let at = 0; at < order.length; at += micro) {
    const part = order.slice(at, at + micro);
    const hook = options.forwardHook?.(part);
    const scores = scoreCompletions(model, part, {
      entropy: false,
      ...(hook === undefined ? {} : { forwardHook: hook }),
    });
    let weights = scores.mask;
    if (part.some((b) => b.lossMask !== undefined)) {
      const T = scores.logprobs.shape[1]!;
      const w = new Float32Array(part.length * T);
      part.forEach((b, i) => {
        const m = b.lossMask ?? b.completionIds.map(() => 1);
        m.forEach((x, t) => w[i * T + t] = x);
      });
      weights = tensor(w, { shape: [part.length, T] });
    }
    // Each part's share of the batch's token mean, so the summed gradients equal one pass.
    const sum = scores.logprobs.mul(weights).sum();
    const whole = part.length === batch.length && options.total === undefined;
    const loss = (whole ? sum.div(weights.sum()) : sum.div(total)).neg();
    loss.backward();
    value += await loss.item();
    for (const t of new Set([loss, sum, weights, scores.logprobs, scores.mask])) t.dispose();
  }
  return value;
}

/**
 * Takes one supervised step on `batch` (see the module doc) and returns the loss before it.
 *
 * @example Usage
 * ```ts
 * import { sftStep } from "./sft.ts";
 * import { loadPolicy } from "../loop/policy.ts";
 * import { AdamW } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * const opt = new AdamW(model.parameters(), { lr: 1e-3 });
 * const loss = await sftStep(model, opt, [{ promptIds: [1, 20, 21], completionIds: [22, 2], lossMask: [0, 1] }]);
 * assert.ok(loss > 0);
 * opt.dispose();
 * model.dispose();
 * ```
 */
export async function sftStep(
  model: CausalLM,
  optimizer: Optimizer,
  batch: readonly SftSequence[],
  options: SftStepOptions = {},
): Promise<number> {
  const value = await sftGradients(model, batch, options);
  await applySftGradients(model.parameters(), optimizer);
  return value;
}

/**
 * The update of a supervised step once the gradients are accumulated: clip them to norm 1, step,
 * clear them. {@link sftStep} and `ParallelSft` both end with it, so the one- and two-thread
 * paths apply the same update.
 *
 * @example Usage
 * ```ts
 * import { applySftGradients, sftGradients } from "./sft.ts";
 * import { loadPolicy } from "../loop/policy.ts";
 * import { AdamW } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * const opt = new AdamW(model.parameters(), { lr: 1e-3 });
 * await sftGradients(model, [{ promptIds: [1, 20], completionIds: [22, 2] }]);
 * await applySftGradients(model.parameters(), opt);
 * assert.ok(model.parameters().every((p) => p.grad === null));
 * opt.dispose();
 * model.dispose();
 * ```
 */
export async function applySftGradients(
  params: readonly Tensor[],
  optimizer: Optimizer,
): Promise<void> {
  await clipGradNorm(params, 1);
  optimizer.step();
  optimizer.zeroGrad();
}
