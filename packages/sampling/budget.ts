/**
 * Per-prompt rollout budgets: how many samples `n` to draw for a prompt from its difficulty or
 * pass rate.
 *
 * Design: a prompt of pass rate `p` gives a group with non-zero reward variance with probability
 * `1 − pⁿ − (1 − p)ⁿ`, and the Bernoulli variance `p(1 − p)` of its rewards is largest at
 * `p = ½`; so the default `"medium"` shape spends the most samples on medium-difficulty prompts,
 * with weight `w(p) = 4p(1 − p)` (1 at `p = ½`, 0 at 0 and 1). The `"hard"` shape, `w(p) = 1 − p`,
 * gives more samples to harder prompts instead (DARS, arXiv 2508.13755). A single prompt's budget
 * is `round(min + (max − min)·w(p))`; {@link allocateBudget} splits a fixed total over a batch in
 * proportion to `w` (each prompt between `min` and `max`; largest remainders, ties to the earlier
 * prompt) so the batch's sample count is exact. An unknown pass rate counts as `unknownRate`
 * (default ½: the full budget under `"medium"`). Difficulty `d ∈ [0, 1]` is read as `p = 1 − d`.
 *
 * @module
 */

import { checkChoice, checkNumber, checkUnit } from "./_args.ts";

/** Options of the budget functions. */
export interface BudgetOptions {
  /** Fewest samples per prompt (≥ 1; ≥ 2 for group-relative advantages). */
  min: number;
  /** Most samples per prompt (≥ `min`). */
  max: number;
  /** `"medium"` (default, `4p(1 − p)`) or `"hard"` (`1 − p`). */
  shape?: "medium" | "hard";
  /** Pass rate assumed when it is unknown (default 0.5). */
  unknownRate?: number;
}

function checkBudget(owner: string, o: BudgetOptions): Required<BudgetOptions> {
  const min = checkNumber(owner, "min", o.min, { integer: true, min: 1 });
  const max = checkNumber(owner, "max", o.max, { integer: true, min });
  const shape = checkChoice(owner, "shape", o.shape ?? "medium", ["medium", "hard"]);
  const unknownRate = checkUnit(owner, "unknownRate", o.unknownRate ?? 0.5);
  return { min, max, shape, unknownRate };
}

/**
 * The budget weight in [0, 1] of pass rate `p`: `4p(1 − p)` (`"medium"`) or `1 − p` (`"hard"`).
 *
 * @example Usage
 * ```ts
 * import { budgetWeight } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(budgetWeight(0.5), 1);
 * assert.equal(budgetWeight(0.25), 0.75);
 * assert.equal(budgetWeight(0.25, "hard"), 0.75);
 * assert.equal(budgetWeight(1), 0);
 * ```
 */
export function budgetWeight(p: number, shape: "medium" | "hard" = "medium"): number {
  checkUnit("budgetWeight", "p", p);
  checkChoice("budgetWeight", "shape", shape, ["medium", "hard"]);
  return shape === "medium" ? 4 * p * (1 - p) : 1 - p;
}

/**
 * Samples for one prompt of pass rate `p` (or unknown): `round(min + (max − min)·w(p))`.
 *
 * @example Usage
 * ```ts
 * import { budgetForPassRate } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const o = { min: 4, max: 16 };
 * assert.deepEqual([0, 0.1, 0.5, 0.9, 1].map((p) => budgetForPassRate(p, o)), [4, 8, 16, 8, 4]);
 * assert.equal(budgetForPassRate(undefined, o), 16);
 * ```
 */
export function budgetForPassRate(p: number | undefined, options: BudgetOptions): number {
  const o = checkBudget("budgetForPassRate", options);
  const w = budgetWeight(p ?? o.unknownRate, o.shape);
  return Math.round(o.min + (o.max - o.min) * w);
}

/**
 * Samples for one prompt of difficulty `d ∈ [0, 1]` (read as pass rate `1 − d`).
 *
 * @example Usage
 * ```ts
 * import { budgetForDifficulty } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(budgetForDifficulty(0.5, { min: 2, max: 8 }), 8);
 * assert.equal(budgetForDifficulty(0.9, { min: 2, max: 8, shape: "hard" }), 7); // 2 + 6·0.9 = 7.4
 * ```
 */
export function budgetForDifficulty(d: number, options: BudgetOptions): number {
  checkUnit("budgetForDifficulty", "d", d);
  return budgetForPassRate(1 - d, options);
}

/**
 * Splits `total` samples over prompts in proportion to their budget weights, each between `min`
 * and `max`; the result sums to `total` exactly. Throws when `total` is outside
 * `[n·min, n·max]`.
 *
 * @example Usage
 * ```ts
 * import { allocateBudget } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const n = allocateBudget([0.5, 0.9, 1, undefined], 24, { min: 2, max: 10 });
 * assert.equal(n.reduce((a, b) => a + b, 0), 24);
 * assert.equal(n[2], 2); // solved prompt: the minimum
 * assert.ok(n[0]! > n[1]!); // medium beats easy
 * ```
 */
export function allocateBudget(
  rates: readonly (number | undefined)[],
  total: number,
  options: BudgetOptions,
): number[] {
  const owner = "allocateBudget";
  const o = checkBudget(owner, options);
  const n = rates.length;
  checkNumber(owner, "total", total, { integer: true, min: 0 });
  if (total < n * o.min || total > n * o.max) {
    throw new RangeError(
      `${owner}: total ${total} cannot be split over ${n} prompts with ${o.min}..${o.max} samples each; it must be in [${
        n * o.min
      }, ${n * o.max}]`,
    );
  }
  const weights = rates.map((p, i) =>
    budgetWeight(p === undefined ? o.unknownRate : checkUnit(owner, `rates[${i}]`, p), o.shape)
  );
  const cap = o.max - o.min;
  const extra = new Float64Array(n); // real-valued extra samples above min
  let remaining = total - n * o.min;
  let open = [...weights.keys()].filter(() => cap > 0);
  // Water-filling: share in proportion to weight, cap at max − min, repeat with the rest.
  while (remaining > 1e-9 && open.length > 0) {
    let wsum = open.reduce((a, i) => a + weights[i]!, 0);
    const useUniform = wsum === 0;
    if (useUniform) wsum = open.length;
    const capped: number[] = [];
    let handed = 0;
    for (const i of open) {
      const share = remaining * (useUniform ? 1 : weights[i]!) / wsum;
      const room = cap - extra[i]!;
      if (share >= room) {
        extra[i] = cap;
        handed += room;
        capped.push(i);
      }
    }
    if (capped.length === 0) {
      for (const i of open) extra[i]! += remaining * (useUniform ? 1 : weights[i]!) / wsum;
      remaining = 0;
    } else {
      remaining -= handed;
      open = open.filter((i) => !capped.includes(i));
    }
  }
  const out = Array.from(extra, (e) => o.min + Math.floor(e + 1e-9));
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = [...extra.keys()].sort((a, b) => {
    const ra = extra[a]! - Math.floor(extra[a]! + 1e-9);
    const rb = extra[b]! - Math.floor(extra[b]! + 1e-9);
    return rb - ra || a - b;
  });
  for (let pass = 0; left > 0 && pass < 2; pass++) {
    for (const i of order) {
      if (left === 0) break;
      if (out[i]! < o.max && (pass === 1 || extra[i]! - Math.floor(extra[i]! + 1e-9) > 0)) {
        out[i]! += 1;
        left--;
      }
    }
  }
  return out;
}
