/**
 * The policy-loss registry: losses by key, as veRL's `POLICY_LOSS_REGISTRY`
 * (`actor.policy_loss.loss_mode`), with veRL's names where veRL has the loss.
 *
 * | key                  | loss                                        | veRL `loss_mode`          |
 * | -------------------- | ------------------------------------------- | ------------------------- |
 * | `vanilla`            | PPO clip, clip-higher, dual-clip            | `vanilla`                 |
 * | `decoupled_ppo`      | PPO vs proximal policy × behaviour weight   | — (AReaL decoupled loss)  |
 * | `gspo`               | GSPO, sequence-level ratio                  | —                         |
 * | `gspo_token`         | GSPO-token                                  | `gspo`                    |
 * | `cispo`              | clipped stop-gradient IS weight             | `cispo`                   |
 * | `gppo`               | gradient-preserving clip                    | — (Klear-Reasoner)        |
 * | `gmpo`, `geo_mean`   | geometric-mean PO                           | `geo_mean`                |
 * | `sapo`               | soft adaptive gate                          | `sapo`                    |
 * | `clip_cov`           | Clip-Cov                                    | `clip_cov`                |
 * | `kl_cov`             | KL-Cov                                      | `kl_cov`                  |
 * | `reinforce`, `gpg`   | `−A·log π`                                  | `gpg`                     |
 * | `nsr`, `psr`, `w_reinforce` | sign-split REINFORCE                 | —                         |
 *
 * Design decision: veRL's `gspo` mode computes the token form of GSPO; here `gspo` is the
 * sequence-level objective as the paper writes it and `gspo_token` is veRL's (they agree in
 * value and gradient when advantages are constant per sequence, which is how GRPO-style
 * advantages are built).
 *
 * @module
 */

import { clipCovLoss, klCovLoss } from "./cov.ts";
import { cispoLoss } from "./cispo.ts";
import { gmpoLoss } from "./gmpo.ts";
import { gppoLoss } from "./gppo.ts";
import { gspoLoss, gspoTokenLoss } from "./gspo.ts";
import { decoupledPpoLoss, vanillaLoss } from "./ppo_clip.ts";
import { nsrLoss, psrLoss, reinforceLoss, wReinforceLoss } from "./reinforce.ts";
import { sapoLoss } from "./sapo.ts";
import type { LossOutput, PolicyLossFn, PolicyLossInputs, PolicyLossOptions } from "./types.ts";

const registry = new Map<string, PolicyLossFn>();

/**
 * Registers a policy loss under `name` (build it with `definePolicyLoss` to get the shared
 * masking, aggregation and metrics). An existing name throws unless `override`.
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
  if (typeof name !== "string" || name === "") {
    throw new TypeError(
      `registerPolicyLoss: name must be a non-empty string, got ${JSON.stringify(name)}`,
    );
  }
  if (typeof fn !== "function") {
    throw new TypeError(`registerPolicyLoss: ${name}: fn must be a function, got ${typeof fn}`);
  }
  if (registry.has(name) && !options.override) {
    throw new Error(
      `registerPolicyLoss: ${
        JSON.stringify(name)
      } is already registered; pass { override: true } to replace it`,
    );
  }
  registry.set(name, fn);
}

/**
 * The registered policy-loss keys, in registration order.
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
  return [...registry.keys()];
}

/**
 * The policy loss registered as `key` (veRL `get_policy_loss_fn`); an unknown key throws a
 * RangeError listing the valid keys.
 *
 * @example Usage
 * ```ts
 * import { getPolicyLoss } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * assert.equal(typeof getPolicyLoss("gspo"), "function");
 * assert.throws(() => getPolicyLoss("ppo2"), /unknown policy loss "ppo2"; valid keys: vanilla/);
 * ```
 */
export function getPolicyLoss(key: string): PolicyLossFn {
  const fn = registry.get(key);
  if (fn === undefined) {
    throw new RangeError(
      `getPolicyLoss: unknown policy loss ${JSON.stringify(key)}; valid keys: ${
        policyLossNames().join(", ")
      }`,
    );
  }
  return fn;
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

registerPolicyLoss("vanilla", vanillaLoss);
registerPolicyLoss("decoupled_ppo", decoupledPpoLoss);
registerPolicyLoss("gspo", gspoLoss);
registerPolicyLoss("gspo_token", gspoTokenLoss);
registerPolicyLoss("cispo", cispoLoss);
registerPolicyLoss("gppo", gppoLoss);
registerPolicyLoss("gmpo", gmpoLoss);
registerPolicyLoss("geo_mean", gmpoLoss);
registerPolicyLoss("sapo", sapoLoss);
registerPolicyLoss("clip_cov", clipCovLoss);
registerPolicyLoss("kl_cov", klCovLoss);
registerPolicyLoss("reinforce", reinforceLoss);
registerPolicyLoss("gpg", reinforceLoss);
registerPolicyLoss("nsr", nsrLoss);
registerPolicyLoss("psr", psrLoss);
registerPolicyLoss("w_reinforce", wReinforceLoss);
