/**
 * The policy-loss registry: losses by key, as veRL's `POLICY_LOSS_REGISTRY`
 * (`actor.policy_loss.loss_mode`). Every veRL key means what it means in veRL's `core_algos.py`
 * (commit 1dda039b), forced aggregations and degenerate cases included; our variants have keys of
 * their own.
 *
 * | key                  | loss                                                  | veRL `loss_mode`          |
 * | -------------------- | ----------------------------------------------------- | ------------------------- |
 * | `vanilla`            | PPO clip, clip-higher, dual-clip                      | `vanilla`                 |
 * | `decoupled_ppo`      | PPO vs proximal policy × behaviour weight             | — (AReaL decoupled loss)  |
 * | `gspo`               | GSPO-token, `seq-mean-token-mean` always              | `gspo`                    |
 * | `gspo_token`         | GSPO-token, any aggregation, paper's clip             | — (ours)                  |
 * | `gspo_seq`           | GSPO, sequence-level ratio                            | — (ours)                  |
 * | `cispo`              | clipped stop-gradient IS weight                       | `cispo`                   |
 * | `gppo`               | gradient-preserving clip                              | — (Klear-Reasoner)        |
 * | `geo_mean`           | GMPO, mean over all rows, geometric-mean IS weights   | `geo_mean`                |
 * | `gmpo`               | GMPO, any aggregation, token IS weights               | — (ours)                  |
 * | `sapo`               | soft adaptive gate, `seq-mean-token-mean` always      | `sapo`                    |
 * | `sapo_agg`           | soft adaptive gate, any aggregation                   | — (ours)                  |
 * | `clip_cov`           | Clip-Cov                                              | `clip_cov`                |
 * | `kl_cov`             | KL-Cov                                                | `kl_cov`                  |
 * | `reinforce`, `gpg`   | `−A·log π`                                            | `gpg`                     |
 * | `nsr`, `psr`, `w_reinforce` | sign-split REINFORCE                           | —                         |
 * | `dppo_tv`, `dppo_kl` | divergence trust region, truncated-IS REINFORCE       | `dppo_tv`, `dppo_kl`      |
 * | `dro`                | `−(A·log π − ½β·log²r)`                               | `dro`                     |
 * | `bypass_mode`        | PPO clip or IS-weighted REINFORCE vs π_rollout        | `bypass_mode`             |
 *
 * Design decisions:
 * - A veRL key keeps veRL's numbers even where they are arguably a bug (`geo_mean` counts fully
 *   masked rows in its mean); the files document each such case and offer our form under its
 *   own key.
 * - The keys live in one `Registry` of `@rlvr/common` (its key rule, its errors, registration
 *   order). Each built-in loss registers itself at the end of its own file, beside its math;
 *   the list of those files is at the end of this module, so adding a loss is one new file and
 *   one import line there.
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import type { LossOutput, PolicyLossFn, PolicyLossInputs, PolicyLossOptions } from "./types.ts";

/**
 * Registers a policy loss under `name` (build it with `definePolicyLoss` to get the shared
 * masking, aggregation and metrics). The name follows the key rule of `@rlvr/common`'s
 * `Registry` (a lowercase letter, then lowercase letters, digits and `_`, words joined by `-`,
 * optionally one final `+`); a bad name or a non-function is a `TypeError`, a taken name a
 * `RangeError` unless `{ override: true }`.
 *
 * @example Usage
 * ```ts
 * import { definePolicyLoss, getPolicyLoss, registerPolicyLoss } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * const core = definePolicyLoss("doc_pg", (ctx) => ({
 *   perToken: ctx.advantages.mul(ctx.logProbs).neg(),
 * }), { requiresOld: false });
 * registerPolicyLoss("doc_pg", core);
 * assert.equal(getPolicyLoss("doc_pg"), core);
 * assert.throws(() => registerPolicyLoss("doc_pg", core), /already registered/);
 * ```
 */
export function registerPolicyLoss(
  name: string,
  fn: PolicyLossFn,
  options: { override?: boolean } = {},
): void {
  POLICY_LOSSES.register(name, fn, options);
}

/**
 * The registered policy-loss keys, in registration order: for a program that loads the package
 * through `mod.ts`, the built-ins in the order of the list in `registry.ts`, then custom ones.
 *
 * @example Usage
 * ```ts
 * import { policyLossNames } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * assert.ok(policyLossNames().includes("vanilla"));
 * assert.ok(policyLossNames().includes("geo_mean"));
 * ```
 */
export function policyLossNames(): string[] {
  return POLICY_LOSSES.names();
}

/**
 * The policy loss registered as `key` (veRL `get_policy_loss_fn`); an unknown key throws a
 * RangeError listing the valid keys, with a "did you mean" for a likely typo.
 *
 * @example Usage
 * ```ts
 * import { getPolicyLoss } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * assert.equal(typeof getPolicyLoss("gspo"), "function");
 * assert.throws(() => getPolicyLoss("ppo2"), /unknown policy loss "ppo2"; valid keys: vanilla/);
 * assert.throws(() => getPolicyLoss("cipso"), /\(did you mean "cispo"\?\)$/);
 * ```
 */
export function getPolicyLoss(key: string): PolicyLossFn {
  return POLICY_LOSSES.get(key);
}

/**
 * Looks up `key` and runs it: `getPolicyLoss(key)(inputs, options)`.
 *
 * @example Usage
 * ```ts
 * import { computePolicyLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { loss } = computePolicyLoss("vanilla", {
 *   logProbs: tensor([[-1]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[-1]]),
 *   advantages: tensor([[2]]),
 *   responseMask: tensor([[1]]),
 * });
 * assert.equal(await loss.item(), -2);
 * ```
 */
export function computePolicyLoss(
  key: string,
  inputs: PolicyLossInputs,
  options: PolicyLossOptions = {},
): LossOutput {
  return getPolicyLoss(key)(inputs, options);
}

// The built-in losses: each file registers its keys beside its math, in this order when the
// package is loaded through mod.ts. Adding a loss is one new file and one line here.
import "./ppo_clip.ts";
import "./gspo.ts";
import "./cispo.ts";
import "./gppo.ts";
import "./gmpo.ts";
import "./sapo.ts";
import "./cov.ts";
import "./reinforce.ts";
import "./dppo.ts";
import "./dro.ts";
import "./bypass.ts";
