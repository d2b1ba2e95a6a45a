/**
 * `mathReward`: the math verifier as a {@linkcode Reward}: 1 when the completion's final answer
 * is equivalent to the row's gold answer, 0 when it is not, `null` when the row has no gold
 * answer (so a math reward on a code row is absent, not zero).
 *
 * Design decision: a gold field holding a list accepts any of its answers (datasets that list
 * several accepted forms), and numbers in the gold field are read as their decimal text.
 *
 * @module
 */

import type { Reward, RewardValue } from "../types.ts";
import { type MathVerifyOptions, verifyMath } from "./verify.ts";

/** Options of {@linkcode mathReward}. */
export interface MathRewardOptions extends MathVerifyOptions {
  /** Row field that holds the gold answer (default `"answer"`). */
  goldField?: string;
  /** Reward name, the metric key (default `"math"`). */
  name?: string;
  /** Time budget per call in milliseconds (the runner's default when omitted). */
  timeoutMs?: number;
}

/** The gold answers in a row field: strings, numbers, or a list of them; `null` when absent. */
function goldAnswers(value: unknown): string[] | null {
  const one = (v: unknown): string | null => {
    if (typeof v === "string") return v.trim() === "" ? null : v;
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
    if (typeof v === "bigint") return v.toString();
    return null;
  };
  if (Array.isArray(value)) {
    const all = value.map(one).filter((x): x is string => x !== null);
    return all.length > 0 ? all : null;
  }
  const s = one(value);
  return s === null ? null : [s];
}

/**
 * A reward scoring 1/0 by {@linkcode verifyMath} against `row[goldField]`; `null` when the row has
 * no gold answer.
 *
 * @example Usage
 * ```ts
 * import { mathReward } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const reward = mathReward();
 * const ctx = { signal: new AbortController().signal };
 * assert.equal(await reward.score!({ completion: "\\boxed{72}", prompt: "", row: { answer: "72" } }, ctx), 1);
 * assert.equal(await reward.score!({ completion: "\\boxed{71}", prompt: "", row: { answer: 72 } }, ctx), 0);
 * assert.equal(await reward.score!({ completion: "\\boxed{72}", prompt: "", row: {} }, ctx), null);
 * ```
 */
export function mathReward(options: MathRewardOptions = {}): Reward {
  const { goldField = "answer", name = "math", timeoutMs, ...verify } = options;
  const score = (
    { completion, row }: { completion: string; row: Record<string, unknown> },
  ): RewardValue => {
    const golds = goldAnswers(row[goldField]);
    if (golds === null) return null;
    return golds.some((g) => verifyMath(completion, g, verify).correct) ? 1 : 0;
  };
  return timeoutMs === undefined ? { name, score } : { name, score, timeoutMs };
}
