/**
 * `@rlvr/advantage`: advantage estimators for RL of reasoning language models (GAE, GRPO,
 * Dr. GRPO, LitePPO, RLOO, REINFORCE++, ReMax, OPO, GPG, pass@k, PSR/NSR, PRIME, GiGPO for
 * multi-turn agent episodes, entropy shaping, KL-in-reward) over plain arrays and typed arrays,
 * each a named export and registered under a stable string key. It depends on no other package
 * and on no tensor library.
 *
 * Design: the data layout mirrors veRL's `(token_level_rewards, response_mask, index)`
 * signatures. Token-level data is a dense row-major `[batch, length]` {@link TokenMatrix},
 * sequence-level rewards are `ArrayLike<number>` of length `batch`, groups are an `index` of ids
 * (veRL's `uid`), and every estimator returns `{ advantages, returns }` as `Float64Array`s of
 * `batch·length` with zeros wherever the mask is 0 (see `types.ts`). All arithmetic is float64;
 * on valid tokens the numbers are veRL's (or TRL's, or the paper's where neither has the
 * estimator), with every deliberate difference stated in the estimator's documentation. Each
 * estimator's file holds its math and registers its keys (`registry.ts` lists the files);
 * files whose names start with `_` are internal and not exported.
 *
 * @example Usage
 * ```ts
 * import { estimatorNames, fromRows, getEstimator, grpo } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const input = {
 *   rewards: [1, 0, 1],
 *   responseMask: fromRows([[1, 1, 0], [1, 1, 1], [1, 0, 0]]),
 *   index: ["q1", "q1", "q1"],
 * };
 * // the named export and the registry give the same numbers
 * assert.deepEqual(getEstimator("grpo")(input).advantages, grpo(input).advantages);
 * assert.ok(estimatorNames().includes("rloo"));
 * ```
 *
 * @module
 */

export * from "./types.ts";
export * from "./layout.ts";
export * from "./whiten.ts";
export * from "./group.ts";
export * from "./returns.ts";
export * from "./kl_reward.ts";
// The registry first, so that the package registers its estimators in the order of its list.
export * from "./registry.ts";
export * from "./entropy_adv.ts";
export * from "./gae.ts";
export * from "./gdpo.ts";
export * from "./gigpo.ts";
export * from "./gpg.ts";
export * from "./grpo.ts";
export * from "./opo.ts";
export * from "./optimal_token_baseline.ts";
export * from "./passk.ts";
export * from "./prime.ts";
export * from "./psr_nsr.ts";
export * from "./reinforce_pp.ts";
export * from "./remax.ts";
export * from "./rloo.ts";
