/**
 * Math answer verification: extraction of the final answer from a completion, normalisation,
 * equivalence (exact rationals, tolerant decimals, symbolic LaTeX through
 * `@cortex-js/compute-engine`, intervals, sets, tuples, equations, inequalities, matrices,
 * multiple choice), {@linkcode verifyMath} on top, and the {@linkcode mathReward} factory.
 *
 * Design decision: no false positives. Whenever a comparison cannot be established, the answer is
 * wrong and the result says why; recall comes from normalisation and the CAS, never from
 * loosening the comparison.
 *
 * Design decision: nothing is computed unbounded. Answers over the size budget
 * ({@linkcode MathBudget}: input and answer length, nesting, exponents, digits) are refused before
 * any exact or CAS computation, with a `refused: …` reason, and one deadline covers each call.
 *
 * The `@rlvr/rewards/math` entry point: it loads the CAS (`verifyMath` is synchronous, so the
 * CAS is imported up front) but neither Pyodide nor the code sandbox.
 *
 * @example Usage
 * ```ts
 * import { verifyMath } from "@rlvr/rewards/math";
 * import assert from "node:assert/strict";
 * assert.equal(verifyMath("so $\\boxed{\\frac{2}{4}}$", "0.5").correct, true);
 * ```
 *
 * @module
 */

export * from "./budget.ts";
export * from "./rational.ts";
export * from "./extract.ts";
export * from "./normalize.ts";
export * from "./parse.ts";
export * from "./cas.ts";
export * from "./identity.ts";
export * from "./equivalence.ts";
export * from "./verify.ts";
export * from "./reward.ts";
export type {
  Reward,
  RewardContext,
  RewardInput,
  RewardValue,
  Row,
  ScoreBatchFn,
  ScoreFn,
} from "../types.ts";
