/**
 * The mini-batch updates of one training step: `ppoEpochs` passes over the batch, each split into
 * mini-batches of `ppoMiniBatchSize` responses (`miniBatchPlan`), one AdamW step per mini-batch
 * after gradient accumulation over micro-batches of `microBatchSize` and gradient clipping.
 *
 * Design decisions:
 * - **Normalisation per mini-batch**: every micro-batch's loss is given its mini-batch's token and
 *   sequence counts (`globalTokens`, `globalSequences`), so the micro-batch gradients sum to the
 *   mini-batch gradient whatever the micro-batch size (veRL normalises per mini-batch too).
 * - **The ratio acts from the second optimizer step on**: π_old is fixed before the first step
 *   (`scoring.ts`), so the first mini-batch of the first epoch has ratio 1 and every later one is
 *   off-policy by the steps taken so far, which is what clipping, GSPO's sequence ratio and
 *   CISPO's clipped weights act on.
 * - **Metrics over all optimizer steps**: clip fractions, ratio mean and approx-KL to π_old
 *   (`ppo_kl`, the masked mean of `log π_old − log π_θ`) are token-weighted means over every
 *   micro-batch of every step, the ratio max is the maximum, losses and the gradient norm are means
 *   over optimizer steps; entropy and KL to the reference are of the first epoch (the sampling
 *   policy's).
 * - A non-finite gradient norm skips that optimizer step (counted), instead of writing NaN into
 *   the weights.
 *
 * @module
 */

import { type CausalLM, scoreCompletions } from "@rlvr/policy";
import { computePolicyLoss, readMetrics, valueLoss } from "@rlvr/objectives";
import { clipGradNorm, gradNorm, type Optimizer, tidy } from "@rlvr/tensor";
import type { Config } from "../config/types.ts";
import { policyLossOptions } from "../config/mapping.ts";
import { methodKey } from "../config/methods.ts";
import { microBatches } from "./minibatch.ts";
import { completionValues, type PreScores } from "./scoring.ts";
import { gatherRows, tokensOf, type TrainBatch } from "./train_batch.ts";
import { forwardHookOf, type VisionInputs } from "./vision.ts";

/** What {@link miniBatchUpdates} reports. */
export interface UpdateStats {
  /** Token-mean entropy of the policy on the batch (first epoch). */
  entropy: number | null;
  /** KL to the reference (token mean of the loss's estimator, first epoch), or null. */
  klLoss: number | null;
  /** Fraction of tokens clipped below (A < 0), over all optimizer steps. */
  clipFracLow: number | null;
  /** Fraction of tokens clipped above (A > 0), over all optimizer steps. */
  clipFracHigh: number | null;
  /** Token-mean importance ratio π_θ/π_old over all optimizer steps. */
  ratioMean: number | null;
  /** Largest token ratio seen. */
  ratioMax: number | null;
  /** Approx-KL to π_old, token mean of `log π_old − log π_θ` over all optimizer steps. */
  ppoKl: number | null;
  /** Mean gradient norm before clipping over the optimizer steps. */
  gradNorm: number | null;
  /** Policy loss, mean over optimizer steps. */
  pgLoss: number | null;
  /** Value loss (GAE only), mean over optimizer steps. */
  vfLoss: number | null;
  /** Optimizer steps taken. */
  optimizerSteps: number;
  /** Optimizer steps skipped for a non-finite gradient. */
  skippedSteps: number;
  /** log π_old per token: `scores.old`, or read from the gradient pass of a one-step update. */
  old: Float32Array;
}

/** What {@link miniBatchUpdates} works with. */
export interface UpdateContext {
  /** The resolved config. */
  config: Config;
  /** The policy (with a value head for GAE). */
  model: CausalLM;
  /** AdamW over the trained parameters. */
  optimizer: Optimizer;
  /** A vision-language policy's images (each row's images go with its forward pass). */
  vision?: VisionInputs | null;
}

/** Token-weighted running means of scalar metrics. */
class WeightedMeans {
  #sums: Record<string, number> = {};
  #weights: Record<string, number> = {};
  add(key: string, value: number | undefined, w: number): void {
    if (value === undefined || !Number.isFinite(value)) return;
    this.#sums[key] = (this.#sums[key] ?? 0) + value * w;
    this.#weights[key] = (this.#weights[key] ?? 0) + w;
  }
  mean(key: string): number | null {
    const w = this.#weights[key];
    return w ? this.#sums[key]! / w : null;
  }
}

/**
 * Runs the optimizer steps of `plan` on the batch (see the module doc). With `scores.old` null
 * the plan must be a single step: its gradient pass supplies the old log-probs.
 *
 * @example Usage
 * ```ts
 * import { loadConfig } from "@rlvr/train";
 * import { batchAdvantages } from "./advantages.ts";
 * import { miniBatchPlan } from "./minibatch.ts";
 * import { loadPolicy } from "./policy.ts";
 * import { heldOutProblems, TrainStream } from "./problems.ts";
 * import { collectRollout } from "./rollout.ts";
 * import { scoreBeforeUpdate } from "./scoring.ts";
 * import { trainBatch } from "./train_batch.ts";
 * import { miniBatchUpdates } from "./update.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import { AdamW } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { config } = await loadConfig({
 *   set: ["rollout.batchSize=8", "rollout.groupSize=4", "algorithm.microBatchSize=4",
 *     "algorithm.ppoMiniBatchSize=4"],
 * });
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * const r = await collectRollout(model, tokenizer, task, new TrainStream(task, 0, heldOutProblems(task, 8)), {
 *   step: 1, seed: 0, batchSize: 8, groupSize: 4, maxNewTokens: 4,
 *   sampling: { temperature: 1 }, dynamicRetries: null, overlong: null,
 * });
 * const batch = trainBatch(r.items);
 * const scores = await scoreBeforeUpdate({ model, ref: null, temperature: 1 }, batch,
 *   { old: true, entropy: false, ref: false, values: false });
 * const { advantages, returns } = batchAdvantages(config, batch, scores);
 * const optimizer = new AdamW(model.parameters(), { lr: 1e-3 });
 * const plan = miniBatchPlan({ batchSize: 8, miniBatchSize: 4, epochs: 1, shuffle: true, seed: 0, step: 1 });
 * const u = await miniBatchUpdates({ config, model, optimizer }, batch, plan, { advantages, returns, scores });
 * assert.equal(u.optimizerSteps + u.skippedSteps, 2);
 * optimizer.dispose();
 * model.dispose();
 * ```
 */
export async function miniBatchUpdates(
  ctx: UpdateContext,
  batch: TrainBatch,
  plan: readonly (readonly (readonly number[])[])[],
  inputs: { advantages: ArrayLike<number>; returns: ArrayLike<number>; scores: PreScores },
): Promise<UpdateStats> {
  const { config, model, optimizer } = ctx;
  const a = config.algorithm;
  const { Tc, items } = batch;
  const temperature = config.rollout.sampler.temperature;
  const { advantages, returns, scores } = inputs;
  const steps = plan.reduce((n, e) => n + e.length, 0);
  const reuse = scores.old === null;
  if (reuse && steps !== 1) {
    throw new Error(
      `miniBatchUpdates: ${steps} optimizer steps need the old log-probs scored before the first one`,
    );
  }
  const old = scores.old ?? new Float32Array(batch.B * Tc);
  const gae = scores.values !== null && a.value != null;
  const klInLoss = a.kl.placement === "loss" && a.kl.beta > 0 && scores.ref !== null;
  const means = new WeightedMeans();
  let ratioMax: number | null = null;
  let pgSum = 0;
  let vfSum: number | null = null;
  let normSum = 0;
  let normCount = 0;
  let lastNorm: number | null = null;
  let taken = 0;
  let skipped = 0;
  const params = model.parameters();
  const mb = a.microBatchSize;
  for (const [epoch, miniBatches] of plan.entries()) {
    for (const mini of miniBatches) {
      const miniTokens = tokensOf(batch, mini);
      const lossOptions = {
        ...policyLossOptions(config),
        globalTokens: miniTokens,
        globalSequences: mini.length,
      };
      optimizer.zeroGrad();
      let pgMini = 0;
      let vfMini: number | null = null;
      for (const rows of microBatches(mini, mb)) {
        const tokens = tokensOf(batch, rows);
        const part = rows.map((b) => batch.scoreItems[b]!);
        const s = scoreCompletions(model, part, {
          temperature,
          entropy: true,
          ...forwardHookOf(ctx.vision, model, (i) => items[rows[i]!]?.row),
        });
        const T = s.logprobs.shape[1]!;
        if (reuse) {
          const lp = await s.logprobs.data();
          rows.forEach((b, r) => {
            for (let t = 0; t < T; t++) old[b * Tc + t] = lp[r * T + t]!;
          });
        }
        const { loss, metrics } = tidy(() => {
          const lossMask = batch.masked ? gatherRows(batch.mask, Tc, rows, T) : s.mask;
          const out = computePolicyLoss(methodKey(a.loss), {
            logProbs: s.logprobs,
            oldLogProbs: gatherRows(old, Tc, rows, T),
            rolloutLogProbs: gatherRows(batch.sampled, Tc, rows, T),
            advantages: gatherRows(advantages, Tc, rows, T),
            responseMask: lossMask,
            entropy: s.entropies!,
            ...(klInLoss ? { refLogProbs: gatherRows(scores.ref!, Tc, rows, T) } : {}),
          }, lossOptions);
          if (!gae) return out;
          const v = valueLoss({
            values: completionValues(model, rows.map((b) => items[b]!), ctx.vision)
              .narrow(1, 0, T),
            oldValues: gatherRows(scores.values!, Tc, rows, T),
            returns: gatherRows(returns, Tc, rows, T),
            responseMask: lossMask,
          }, { clipRange: a.value!.clipRange, globalTokens: miniTokens });
          return {
            loss: out.loss.add(v.loss.mul(a.value!.coef)),
            metrics: { ...out.metrics, ...v.metrics },
          };
        });
        loss.backward();
        const m = await readMetrics(metrics, { dispose: true });
        for (const t of [loss, s.logprobs, s.mask, s.entropies!]) t.dispose();
        // The micro-batch losses are shares of the mini-batch loss: summed; rates token-weighted.
        if (m.pg_loss !== undefined) pgMini += m.pg_loss;
        if (m.vf_loss !== undefined) vfMini = (vfMini ?? 0) + m.vf_loss;
        means.add("clipfrac_low", m.clipfrac_low, tokens);
        means.add("clipfrac_high", m.clipfrac_high, tokens);
        means.add("ratio_mean", m.ratio_mean, tokens);
        means.add("ppo_kl", m.ppo_kl, tokens);
        if (m.ratio_max !== undefined && Number.isFinite(m.ratio_max)) {
          ratioMax = Math.max(ratioMax ?? -Infinity, m.ratio_max);
        }
        if (epoch === 0) {
          means.add("entropy", m.entropy, tokens);
          means.add("kl", m.kl, tokens);
        }
      }
      pgSum += pgMini;
      if (vfMini !== null) vfSum = (vfSum ?? 0) + vfMini;
      const norm = config.optimizer.gradClip !== null
        ? await clipGradNorm(params, config.optimizer.gradClip)
        : await gradNorm(params);
      lastNorm = norm;
      if (!Number.isFinite(norm)) {
        skipped++;
        optimizer.zeroGrad();
        continue;
      }
      normSum += norm;
      normCount++;
      optimizer.step();
      optimizer.zeroGrad();
      taken++;
    }
  }
  return {
    entropy: means.mean("entropy"),
    klLoss: means.mean("kl"),
    clipFracLow: means.mean("clipfrac_low"),
    clipFracHigh: means.mean("clipfrac_high"),
    ratioMean: means.mean("ratio_mean"),
    ratioMax,
    ppoKl: means.mean("ppo_kl"),
    gradNorm: normCount > 0 ? normSum / normCount : lastNorm,
    pgLoss: steps > 0 ? pgSum / steps : null,
    vfLoss: vfSum === null ? null : vfSum / steps,
    optimizerSteps: taken,
    skippedSteps: skipped,
    old,
  };
}
