/**
 * Reward composition: weighted sums, gates (G-RA style), per-reward normalisation before summing
 * (GDPO style), clipping and scaling.
 *
 * Design: every combinator returns a {@link CompositeReward}, whose components the runner scores
 * as rewards of their own (own time budget, fallback and metrics under `composite/component`)
 * before calling the pure `combine`. A component's `null` ("does not apply to this sample") is
 * treated as absent, never as 0; each combinator states its rule:
 *
 * | combinator         | a `null` component                                                        |
 * | ------------------ | ------------------------------------------------------------------------- |
 * | `weightedSum`      | left out of the sum; the result is `null` only when every term is `null`   |
 * | `normalizeThenSum` | left out of the statistics and of the sum; `null` when every term is `null` |
 * | `gated`            | a `null` gate makes the result `null`; a `null` reward stays `null`         |
 * | `clip`, `scale`    | passed through as `null`                                                   |
 *
 * Weighted sums do not renormalise the weights of the terms present. A component that fails
 * (throws, times out) contributes the runner's `onError` value like any other reward (0 unless
 * set otherwise; with `onError: null` it is absent).
 *
 * @module
 */

import {
  checkChoice,
  checkFunction,
  checkName,
  checkNumber,
  checkOptions,
  show,
} from "./_check.ts";
import { checkReward, valuesOf } from "./_evaluate.ts";
import type { CompositeReward, Reward, RewardInput, RewardValue, Row } from "./types.ts";

/** A term of a weighted combination. */
export interface WeightedTerm<R extends Row = Row> {
  /** The reward. */
  reward: Reward<R>;
  /** Its weight (finite; may be negative for a penalty expressed as a positive score). */
  weight: number;
}

/** The `name` option every combinator accepts. */
export interface NameOption {
  /** Metric key of the composite (each combinator has a default). */
  name?: string;
}

function composite<R extends Row>(
  owner: string,
  name: string,
  components: readonly Reward<R>[],
  combine: CompositeReward<R>["combine"],
): CompositeReward<R> {
  checkName(owner, "options.name", name);
  const seen = new Map<string, Reward<R>>();
  components.forEach((c, k) => {
    checkReward(owner, `components[${k}]`, c);
    const prev = seen.get(c.name);
    if (prev !== undefined && prev !== c) {
      throw new TypeError(
        `${owner}: two different components are named "${c.name}"; give each a distinct name (metrics are keyed by it)`,
      );
    }
    seen.set(c.name, c);
  });
  const self: CompositeReward<R> = {
    name,
    components: Object.freeze([...components]),
    combine,
    // Components are timed one by one; the composite itself has no budget of its own.
    timeoutMs: Infinity,
    scoreBatch: (inputs: readonly RewardInput<R>[], ctx) => valuesOf(self, inputs, ctx.signal),
  };
  return Object.freeze(self);
}

function checkTerms<R extends Row>(owner: string, terms: unknown): WeightedTerm<R>[] {
  if (!Array.isArray(terms) || terms.length === 0) {
    throw new TypeError(
      `${owner}: terms must be a non-empty array of {reward, weight}, got ${show(terms)}`,
    );
  }
  return terms.map((t: unknown, k) => {
    if (typeof t !== "object" || t === null) {
      throw new TypeError(`${owner}: terms[${k}] must be {reward, weight}, got ${show(t)}`);
    }
    const term = t as WeightedTerm<R>;
    checkReward(owner, `terms[${k}].reward`, term.reward);
    checkNumber(owner, `terms[${k}].weight`, term.weight);
    return term;
  });
}

function weighted(
  parts: readonly (readonly RewardValue[])[],
  weights: readonly number[],
  i: number,
): RewardValue {
  let sum = 0;
  let present = false;
  parts.forEach((p, k) => {
    const v = p[i];
    if (v === null || v === undefined) return;
    sum += weights[k]! * v;
    present = true;
  });
  return present ? sum : null;
}

/**
 * `Σ_k w_k · r_k` over the terms that apply (`null` terms are left out, weights are not
 * renormalised); `null` when no term applies. Each term is scored and recorded on its own, so
 * the runner reports per-term metrics under `name/term`.
 *
 * @example Usage
 * ```ts
 * import { defineReward, scoreRewards, weightedSum } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const acc = defineReward("acc", ({ completion }) => (completion.includes("42") ? 1 : 0));
 * const fmt = defineReward("fmt", ({ completion }) => (completion.startsWith("<") ? 1 : 0));
 * const total = weightedSum([{ reward: acc, weight: 1 }, { reward: fmt, weight: 0.5 }]);
 * const r = await scoreRewards([total], [{ prompt: "", completion: "<a>42</a>", row: {} }]);
 * assert.deepEqual(r.totals, [1.5]);
 * assert.equal(r.metrics["weighted_sum/fmt"]!.mean, 1);
 * ```
 */
export function weightedSum<R extends Row = Row>(
  terms: readonly WeightedTerm<R>[],
  options?: NameOption,
): CompositeReward<R> {
  const owner = "weightedSum";
  const opts = checkOptions<NameOption>(owner, options, "{name?}");
  const list = checkTerms<R>(owner, terms);
  const weights = list.map((t) => t.weight);
  return composite(
    owner,
    opts.name ?? "weighted_sum",
    list.map((t) => t.reward),
    (parts, inputs) => inputs.map((_, i) => weighted(parts, weights, i)),
  );
}

/** Options of {@link gated}. */
export interface GatedOptions extends NameOption {
  /** The gate passes when its value is `>= threshold` (finite; default 1, i.e. "fully correct"). */
  threshold?: number;
  /** Value when the gate fails (a finite number or `null`; default 0). */
  otherwise?: number | null;
}

/**
 * Applies `reward` only where `gate` passes (`gate ≥ threshold`), else `otherwise` (0, or
 * `null` to mark the sample "not applicable"); G-RA's gated aggregation and P-GRPO's "process
 * reward only for successful rollouts". A `null` gate (the gate does not apply) makes the result
 * `null`; a `null` reward behind a passing gate stays `null`.
 *
 * @example Usage
 * ```ts
 * import { defineReward, gated, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const correct = defineReward("correct", ({ completion, row }) =>
 *   completion.includes(String(row.answer)) ? 1 : 0
 * );
 * const brevity = defineReward("brevity", ({ completion }) => 1 / completion.length);
 * const bonus = gated(brevity, correct); // brevity counts only for correct answers
 * const r = await scoreRewards([bonus], [
 *   { prompt: "", completion: "4", row: { answer: 4 } },
 *   { prompt: "", completion: "5", row: { answer: 4 } },
 * ]);
 * assert.deepEqual(r.totals, [1, 0]);
 * ```
 */
export function gated<R extends Row = Row>(
  reward: Reward<R>,
  gate: Reward<R>,
  options?: GatedOptions,
): CompositeReward<R> {
  const owner = "gated";
  const opts = checkOptions<GatedOptions>(owner, options, "{threshold?, otherwise?, name?}");
  checkReward(owner, "reward", reward);
  checkReward(owner, "gate", gate);
  const threshold = checkNumber(owner, "options.threshold", opts.threshold ?? 1);
  const otherwise = opts.otherwise === undefined
    ? 0
    : opts.otherwise === null
    ? null
    : checkNumber(owner, "options.otherwise", opts.otherwise);
  return composite(
    owner,
    opts.name ?? `${reward.name}_gated`,
    [reward, gate],
    (parts, inputs) =>
      inputs.map((_, i) => {
        const g = parts[1]![i]!;
        if (g === null) return null;
        return g >= threshold ? parts[0]![i]! : otherwise;
      }),
  );
}

/** How {@link normalizeThenSum} normalises each reward. */
export type NormalizeMethod = "zscore" | "minmax";

/** Options of {@link normalizeThenSum}. */
export interface NormalizeOptions<R extends Row = Row> extends NameOption {
  /** `"zscore"` (default): `(r − μ)/(σ + ε)`; `"minmax"`: `(r − min)/(max − min)`. */
  method?: NormalizeMethod;
  /**
   * Over which samples the statistics are taken: the whole batch (default) or each group of
   * samples sharing a prompt (GDPO's group-wise decoupled normalisation).
   */
  scope?: "batch" | "group";
  /** Group key for `scope: "group"` (default: the prompt). */
  groupBy?: (input: RewardInput<R>) => string;
  /** ε added to the std for `"zscore"` (finite, >= 0; default 1e-6). */
  epsilon?: number;
}

/**
 * Normalises each reward across the batch (or per group), then takes the weighted sum:
 *
 * ```
 * z_k,i = (r_k,i − μ_k) / (σ_k + ε)              method "zscore" (σ: population std)
 * z_k,i = (r_k,i − min_k) / (max_k − min_k)       method "minmax"
 * R_i   = Σ_k w_k · z_k,i                         over the terms that apply
 * ```
 *
 * so rewards on different scales (a 0/1 verifier, a −1…0 length penalty) contribute evenly and
 * one reward's variance cannot swamp another's (GDPO, "decoupled" normalisation). Statistics
 * use only the non-null values of a reward; a reward that is constant over its scope (σ = 0,
 * or max = min) normalises to 0 there. `null` stays absent.
 *
 * @example Usage
 * ```ts
 * import { defineReward, normalizeThenSum, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const a = defineReward("a", ({ row }) => row.a as number);
 * const b = defineReward("b", ({ row }) => row.b as number);
 * const sum = normalizeThenSum([{ reward: a, weight: 1 }, { reward: b, weight: 1 }], {
 *   method: "minmax",
 * });
 * const r = await scoreRewards([sum], [
 *   { prompt: "", completion: "", row: { a: 0, b: 100 } },
 *   { prompt: "", completion: "", row: { a: 1, b: 300 } },
 * ]);
 * assert.deepEqual(r.totals, [0, 2]);
 * ```
 */
export function normalizeThenSum<R extends Row = Row>(
  terms: readonly WeightedTerm<R>[],
  options?: NormalizeOptions<R>,
): CompositeReward<R> {
  const owner = "normalizeThenSum";
  const opts = checkOptions<NormalizeOptions<R>>(
    owner,
    options,
    "{method?, scope?, groupBy?, epsilon?, name?}",
  );
  const list = checkTerms<R>(owner, terms);
  const method = checkChoice<NormalizeMethod>(owner, "options.method", opts.method ?? "zscore", [
    "zscore",
    "minmax",
  ]);
  const scope = checkChoice(owner, "options.scope", opts.scope ?? "batch", ["batch", "group"]);
  const groupBy = opts.groupBy === undefined
    ? (x: RewardInput<R>) => x.prompt
    : checkFunction<(x: RewardInput<R>) => string>(
      owner,
      "options.groupBy",
      opts.groupBy,
      "a function (input) => string",
    );
  const epsilon = checkNumber(owner, "options.epsilon", opts.epsilon ?? 1e-6, { min: 0 });
  const weights = list.map((t) => t.weight);
  return composite(
    owner,
    opts.name ?? "normalized_sum",
    list.map((t) => t.reward),
    (parts, inputs) => {
      const scopes = new Map<string, number[]>();
      inputs.forEach((x, i) => {
        const key = scope === "batch" ? "" : String(groupBy(x));
        const members = scopes.get(key);
        if (members) members.push(i);
        else scopes.set(key, [i]);
      });
      const normalized = parts.map((p) => {
        const out: RewardValue[] = p.map(() => null);
        for (const members of scopes.values()) {
          const idx = members.filter((i) => p[i] !== null);
          if (idx.length === 0) continue;
          const vals = idx.map((i) => p[i]!);
          const lo = Math.min(...vals), hi = Math.max(...vals);
          if (lo === hi) {
            idx.forEach((i) => (out[i] = 0));
            continue;
          }
          if (method === "minmax") {
            idx.forEach((i) => (out[i] = (p[i]! - lo) / (hi - lo)));
          } else {
            const mean = vals.reduce((s, v) => s + v, 0) / vals.length;
            const std = Math.sqrt(vals.reduce((s, v) => s + (v - mean) ** 2, 0) / vals.length);
            idx.forEach((i) => (out[i] = (p[i]! - mean) / (std + epsilon)));
          }
        }
        return out;
      });
      return inputs.map((_, i) => weighted(normalized, weights, i));
    },
  );
}

/** Options of {@link clip}. */
export interface ClipOptions extends NameOption {
  /** Lower bound (finite; default −Infinity). */
  min?: number;
  /** Upper bound (finite, >= min; default +Infinity). */
  max?: number;
}

/**
 * Clamps a reward into `[min, max]`; `null` passes through. Useful to bound a process reward
 * (the "Clip" of Clip/Delta PRM shaping) or a judge score.
 *
 * @example Usage
 * ```ts
 * import { clip, defineReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const raw = defineReward("raw", ({ row }) => row.v as number);
 * const r = await scoreRewards([clip(raw, { min: -1, max: 1 })], [
 *   { prompt: "", completion: "", row: { v: 5 } },
 *   { prompt: "", completion: "", row: { v: -0.5 } },
 * ]);
 * assert.deepEqual(r.totals, [1, -0.5]);
 * ```
 */
export function clip<R extends Row = Row>(
  reward: Reward<R>,
  options: ClipOptions,
): CompositeReward<R> {
  const owner = "clip";
  const opts = checkOptions<ClipOptions>(owner, options, "{min?, max?, name?}");
  checkReward(owner, "reward", reward);
  if (opts.min === undefined && opts.max === undefined) {
    throw new TypeError(`${owner}: options needs min, max or both (e.g. {min: -1, max: 1})`);
  }
  const lo = opts.min === undefined ? -Infinity : checkNumber(owner, "options.min", opts.min);
  const hi = opts.max === undefined
    ? Infinity
    : checkNumber(owner, "options.max", opts.max, Number.isFinite(lo) ? { min: lo } : {});
  return composite(
    owner,
    opts.name ?? `${reward.name}_clipped`,
    [reward],
    (parts) => parts[0]!.map((v) => (v === null ? null : Math.min(hi, Math.max(lo, v)))),
  );
}

/** Options of {@link scale}. */
export interface ScaleOptions extends NameOption {
  /** Added after multiplying (finite; default 0). */
  offset?: number;
}

/**
 * `factor · r + offset`; `null` passes through. E.g. map a {0,1} verifier to {−1, 1} with
 * `scale(r, 2, {offset: -1})`.
 *
 * @example Usage
 * ```ts
 * import { defineReward, scale, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const acc = defineReward("acc", ({ row }) => row.ok as number);
 * const r = await scoreRewards([scale(acc, 2, { offset: -1 })], [
 *   { prompt: "", completion: "", row: { ok: 1 } },
 *   { prompt: "", completion: "", row: { ok: 0 } },
 * ]);
 * assert.deepEqual(r.totals, [1, -1]);
 * ```
 */
export function scale<R extends Row = Row>(
  reward: Reward<R>,
  factor: number,
  options?: ScaleOptions,
): CompositeReward<R> {
  const owner = "scale";
  const opts = checkOptions<ScaleOptions>(owner, options, "{offset?, name?}");
  checkReward(owner, "reward", reward);
  const f = checkNumber(owner, "factor", factor);
  const offset = checkNumber(owner, "options.offset", opts.offset ?? 0);
  return composite(
    owner,
    opts.name ?? `${reward.name}_scaled`,
    [reward],
    (parts) => parts[0]!.map((v) => (v === null ? null : f * v + offset)),
  );
}
