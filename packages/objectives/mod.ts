/**
 * @module
 *
 * `@rlvr/objectives`: policy losses for RL of reasoning language models (PPO clip with
 * clip-higher and dual-clip, GSPO, CISPO, GPPO, GMPO, SAPO, Clip-Cov, KL-Cov, REINFORCE/NSR,
 * DPPO, DRO, veRL's bypass mode), off-policy corrections (TIS, decoupled PPO, rejection, OPSM),
 * KL estimators and controllers, entropy terms, loss aggregation modes and masked reductions, the
 * PPO value loss, SFT and DPO, built on `@rlvr/tensor` autograd.
 *
 * Design: every loss takes `[B, T]` tensors and returns `{ loss, metrics }`, a scalar loss to
 * back-propagate and scalar metric tensors, computed inside one `tidy` so nothing else survives,
 * and without reading values back to the host (a GPU backend stays asynchronous; read the
 * metrics with `readMetrics` once per step). Policy losses are registered by key with veRL's
 * names (`getPolicyLoss("vanilla")`) and share one frame (`definePolicyLoss`) for masking,
 * off-policy weights, aggregation, KL and entropy terms and metrics, so a new loss supplies only
 * its per-token formula. Numbers match veRL's `core_algos.py` (and TRL where it has the loss) on
 * valid positions; each file documents the function it matches and where it differs. Each
 * loss's file registers its keys (`registry.ts` lists the files); files whose names start with
 * `_` are internal and not exported.
 *
 * @example Usage
 * ```ts
 * import { getPolicyLoss, readMetrics } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const logProbs = tensor([[-1.0, -0.5, -2.0], [-0.7, -1.2, -9.9]], { requiresGrad: true });
 * const ppo = getPolicyLoss("vanilla");
 * const { loss, metrics } = ppo({
 *   logProbs,
 *   oldLogProbs: tensor([[-1.1, -0.5, -1.9], [-0.7, -1.0, 0]]),
 *   refLogProbs: tensor([[-1.0, -0.6, -2.0], [-0.8, -1.2, 0]]),
 *   advantages: tensor([[1, 1, 1], [-1, -1, -1]]),
 *   responseMask: tensor([[true, true, true], [true, true, false]]),
 * }, { clipRatioLow: 0.2, clipRatioHigh: 0.28, klCoef: 0.01, klType: "low_var_kl" });
 * loss.backward();
 * const m = await readMetrics(metrics, { dispose: true });
 * assert.ok(Number.isFinite(m.ppo_kl));
 * assert.ok(Math.abs(m.masked_frac! - 1 / 6) < 1e-6);
 * assert.ok(logProbs.grad !== null);
 * loss.dispose();
 * ```
 */

// `Tensor` (and the types its public methods mention) come from `@rlvr/tensor`; they are
// re-exported as types so that this package's API documentation is complete on its own.
export type * from "@rlvr/tensor/types";
export * from "./types.ts";
export * from "./aggregate.ts";
export * from "./policy_loss.ts";
// The registry before the losses, so that the package registers them in the order of its list.
export * from "./registry.ts";
export * from "./ppo_clip.ts";
export * from "./gspo.ts";
export * from "./cispo.ts";
export * from "./gppo.ts";
export * from "./gmpo.ts";
export * from "./sapo.ts";
export * from "./cov.ts";
export * from "./reinforce.ts";
export * from "./dppo.ts";
export * from "./dro.ts";
export * from "./bypass.ts";
export * from "./masked.ts";
export * from "./off_policy.ts";
export * from "./kl.ts";
export * from "./kl_controller.ts";
export * from "./entropy.ts";
export * from "./value_loss.ts";
export * from "./sft.ts";
export * from "./dpo.ts";
export * from "./metrics.ts";
export * from "./validate.ts";
