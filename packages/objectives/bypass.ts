/**
 * veRL's `bypass_mode` policy loss: the two-policy setting where the trainer uses the rollout
 * engine's log-probs as `π_old` (`oldLogProbs` here hold `log π_rollout`), so the loss itself
 * computes the importance weights `π_θ/π_rollout` (without gradient) and the rejection mask
 * (veRL `compute_rollout_correction_and_rejection_mask`), then dispatches on `bypass.lossType`:
 *
 * - `"ppo_clip"` (default): `vanilla` on `r = π_θ/π_rollout` (clip, dual clip, ±20 clamp) over
 *   the mask after rejection, with no importance weight (the ratio already is one);
 * - `"reinforce"`: `ℓ_t = −w_t·A_t·log π_θ(y_t)` over the mask after rejection, `w` the weights
 *   below (1 when `bypass.is` is null).
 *
 * Importance weights (veRL `compute_rollout_correction_weights`), with `δ_t = log π_θ − log
 * π_rollout`: `"token"`: `exp(clamp(δ_t, ±20))`; `"sequence"`: `exp(clamp(Σ_t δ_t m_t, ±20))` on
 * every token of the row; 0 on masked positions. `isThreshold` `"u"` (or a number) truncates them
 * at `u`; `"l_u"` zeroes those outside `[l, u]` (IcePop). `isBatchNormalize` divides them by
 * their mean (token: over valid tokens; sequence: over non-empty rows, each row's token mean;
 * `Σ/(n + 1e-8)` as veRL), unless that mean is ≤ 1e-8.
 *
 * Rejection (veRL `compute_rollout_rejection_mask`): `rs` lists criteria, all of which must
 * pass, on `k1 = −δ`, `k2 = ½δ²`, `k3 = e^δ − 1 − δ` (δ clamped to ±20): `token_kN` per token,
 * `seq_sum_kN`, `seq_mean_kN` (`Σ/(n + 1e-8)`), `seq_max_k2`/`seq_max_k3` per row. `rsThreshold`
 * gives one threshold for all criteria or one per criterion (comma-separated); a k1 criterion takes
 * ratio bounds `"l_u"` (or `u`, with `l = 1/u`) and keeps `log l ≤ k1 ≤ log u`, the others an
 * upper bound `u` and keep `≤ u`.
 *
 * The KL and entropy terms of the frame keep the mask before rejection, as veRL's actor does.
 * veRL raises on an empty response mask; this loss reads no values and gives 0 there. Extra
 * metrics: `bypass_is_mean` (masked mean of the weights, when `is` is set) and
 * `bypass_rs_masked_frac` (fraction of valid tokens rejected, when `rs` is set).
 *
 * @module
 */

import { POLICY_LOSSES } from "./_policy_losses.ts";
import { noGrad, type Tensor, where } from "@rlvr/tensor";
import { clippedSurrogate } from "./_clip.ts";
import { and, maskedMean } from "./_util.ts";
import {
  definePolicyLoss,
  type PolicyLossContext,
  type PolicyLossTerms,
  type ResolvedPolicyLossOptions,
} from "./policy_loss.ts";
import type { BypassOptions, PolicyLossFn } from "./types.ts";

/** veRL's `SUPPORTED_ROLLOUT_RS_OPTIONS`. */
const RS_OPTIONS = [
  "token_k1",
  "token_k2",
  "token_k3",
  "seq_sum_k1",
  "seq_sum_k2",
  "seq_sum_k3",
  "seq_mean_k1",
  "seq_mean_k2",
  "seq_mean_k3",
  "seq_max_k2",
  "seq_max_k3",
] as const;

const BYPASS_KEYS: readonly (keyof BypassOptions)[] = [
  "lossType",
  "is",
  "isThreshold",
  "isBatchNormalize",
  "rs",
  "rsThreshold",
];

/** One parsed rejection criterion: a statistic, its level and its bounds (k1: in log space). */
interface Criterion {
  stat: "k1" | "k2" | "k3";
  level: "token" | "sum" | "mean" | "max";
  lower: number | null;
  upper: number;
}

const NAME = "bypass_mode";

function fail(message: string): never {
  throw new RangeError(`${NAME}: ${message}`);
}

function parseNumber(field: string, text: string): number {
  const v = text.trim() === "" ? NaN : Number(text);
  if (!Number.isFinite(v)) fail(`${field} "${text}" is not a number`);
  return v;
}

/** `rollout_is_threshold`: `[upper, lower | null]`. */
function parseIsThreshold(spec: unknown): [number, number | null] {
  let upper: number;
  let lower: number | null = null;
  if (typeof spec === "number") {
    upper = spec;
  } else if (typeof spec === "string") {
    const s = spec.trim();
    if (s === "") fail("bypass.isThreshold must not be empty");
    if (s.includes("_")) {
      const at = s.indexOf("_");
      lower = parseNumber("bypass.isThreshold", s.slice(0, at));
      upper = parseNumber("bypass.isThreshold", s.slice(at + 1));
    } else {
      upper = parseNumber("bypass.isThreshold", s);
    }
  } else {
    throw new TypeError(
      `${NAME}: bypass.isThreshold must be a number or a "upper" / "lower_upper" string, got ${
        JSON.stringify(spec)
      }`,
    );
  }
  if (!(upper > 0) || !Number.isFinite(upper)) fail(`bypass.isThreshold upper bound must be > 0`);
  if (lower !== null) {
    if (!(lower > 0)) fail(`bypass.isThreshold lower bound must be > 0`);
    if (lower > upper) fail(`bypass.isThreshold lower bound must be <= its upper bound`);
  }
  return [upper, lower];
}

/** `rollout_rs` and `rollout_rs_threshold` as veRL parses them. */
function parseRejection(rs: unknown, threshold: unknown): Criterion[] {
  if (typeof rs !== "string") {
    throw new TypeError(`${NAME}: bypass.rs must be a string, got ${JSON.stringify(rs)}`);
  }
  const options: string[] = [];
  for (const part of rs.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    if (!(RS_OPTIONS as readonly string[]).includes(part)) {
      fail(`bypass.rs option "${part}" is not one of ${RS_OPTIONS.join(", ")}`);
    }
    if (!options.includes(part)) options.push(part);
  }
  if (options.length === 0) fail(`bypass.rs must name at least one criterion`);
  let specs: string[];
  if (typeof threshold === "number") specs = [String(threshold)];
  else if (typeof threshold === "string") {
    specs = threshold.split(",").map((p) => p.trim()).filter((p) => p !== "");
  } else {
    throw new TypeError(
      `${NAME}: bypass.rsThreshold must be given (a number or a comma-separated string) with bypass.rs`,
    );
  }
  if (specs.length === 0) fail(`bypass.rsThreshold must hold at least one threshold`);
  if (specs.length !== 1 && specs.length !== options.length) {
    fail(
      `bypass.rsThreshold has ${specs.length} thresholds; give one for all or one per criterion (${options.length})`,
    );
  }
  return options.map((option, i) => {
    const spec = specs.length === 1 ? specs[0]! : specs[i]!;
    const [kind, ...rest] = option.split("_");
    const stat = option.slice(-2) as Criterion["stat"];
    const level = (kind === "token" ? "token" : rest[0]) as Criterion["level"];
    if (stat === "k1") {
      let lower: number;
      let upper: number;
      if (spec.includes("_")) {
        const at = spec.indexOf("_");
        lower = parseNumber(`bypass.rsThreshold of ${option}`, spec.slice(0, at));
        upper = parseNumber(`bypass.rsThreshold of ${option}`, spec.slice(at + 1));
      } else {
        upper = parseNumber(`bypass.rsThreshold of ${option}`, spec);
        lower = 1 / upper;
      }
      if (!(lower > 0) || !(upper > 0)) fail(`thresholds of ${option} must be > 0, got "${spec}"`);
      if (lower > upper) fail(`thresholds of ${option} must have lower <= upper, got "${spec}"`);
      return { stat, level, lower: Math.log(lower), upper: Math.log(upper) };
    }
    if (spec.includes("_")) {
      fail(`bypass.rsThreshold of ${option} takes one upper bound, got "${spec}"`);
    }
    const upper = parseNumber(`bypass.rsThreshold of ${option}`, spec);
    if (!(upper > 0)) fail(`bypass.rsThreshold of ${option} must be > 0, got "${spec}"`);
    return { stat, level, lower: null, upper };
  });
}

function checkBypass(o: ResolvedPolicyLossOptions): void {
  const b = o.bypass ?? {};
  if (typeof b !== "object" || b === null) {
    throw new TypeError(`${NAME}: bypass must be an object, got ${JSON.stringify(b)}`);
  }
  for (const key of Object.keys(b)) {
    if (!(BYPASS_KEYS as readonly string[]).includes(key)) {
      fail(`unknown bypass option "${key}"; valid: ${BYPASS_KEYS.join(", ")}`);
    }
  }
  const lossType = b.lossType ?? "ppo_clip";
  if (lossType !== "ppo_clip" && lossType !== "reinforce") {
    fail(`bypass.lossType must be "ppo_clip" or "reinforce", got ${JSON.stringify(lossType)}`);
  }
  const level = b.is === undefined ? "sequence" : b.is;
  if (level !== null && level !== "token" && level !== "sequence") {
    fail(`bypass.is must be "token", "sequence" or null, got ${JSON.stringify(level)}`);
  }
  parseIsThreshold(b.isThreshold ?? 2);
  if (b.isBatchNormalize !== undefined && typeof b.isBatchNormalize !== "boolean") {
    throw new TypeError(`${NAME}: bypass.isBatchNormalize must be true or false`);
  }
  if (b.rs !== undefined && b.rs !== null) parseRejection(b.rs, b.rsThreshold);
}

/** veRL `compute_rollout_correction_weights` (no gradient); `logRatio = log π_θ − log π_rollout`. */
function isWeightsOf(logRatio: Tensor, mask: Tensor, b: BypassOptions): Tensor {
  const level = b.is === undefined ? "sequence" : b.is!;
  const [upper, lower] = parseIsThreshold(b.isThreshold ?? 2);
  const rows = mask.shape[0]!;
  const raw = level === "token"
    ? logRatio.clamp(-20, 20).exp().mul(mask)
    : logRatio.mul(mask).sum(1).clamp(-20, 20).exp().reshape(rows, 1).mul(mask);
  let w = lower === null
    ? raw.clamp(undefined, upper)
    : where(and(raw.ge(lower), raw.le(upper)), raw, 0);
  if (b.isBatchNormalize ?? false) {
    let mean: Tensor;
    if (level === "token") {
      mean = w.mul(mask).sum().div(mask.sum().add(1e-8));
    } else {
      const perRow = w.mul(mask).sum(1).div(mask.sum(1).add(1e-8));
      const nonEmpty = mask.sum(1).gt(0).cast("f32");
      mean = perRow.mul(nonEmpty).sum().div(nonEmpty.sum().clamp(1e-8));
    }
    w = w.div(where(mean.gt(1e-8), mean, 1));
  }
  return w;
}

/** veRL `compute_rollout_rejection_mask`: `[B, T]` f32, 1 where every criterion passes. */
function rejectionKeep(logRatio: Tensor, mask: Tensor, criteria: Criterion[]): Tensor {
  const [rows, cols] = mask.shape as [number, number];
  const lr = logRatio.clamp(-20, 20);
  const stats = {
    k1: lr.neg(),
    k2: lr.square().mul(0.5),
    k3: lr.exp().sub(1).sub(lr),
  };
  const valid = mask.gt(0);
  let keep = mask.mul(0).add(1);
  for (const c of criteria) {
    const stat = stats[c.stat];
    let x: Tensor;
    if (c.level === "token") x = stat;
    else if (c.level === "max") {
      const m = where(valid, stat, -Infinity).max(1);
      x = where(m.eq(-Infinity), 0, m).reshape(rows, 1);
    } else {
      const sum = where(valid, stat, 0).mul(mask).sum(1);
      x = (c.level === "sum" ? sum : sum.div(mask.sum(1).add(1e-8))).reshape(rows, 1);
    }
    const ok = c.lower === null ? x.le(c.upper) : and(x.ge(c.lower), x.le(c.upper));
    keep = keep.mul(ok.cast("f32"));
  }
  return keep.reshape(rows, cols);
}

function bypassCore(ctx: PolicyLossContext): PolicyLossTerms {
  const b = ctx.options.bypass ?? {};
  const rollout = ctx.oldLogProbs!;
  const a = ctx.advantages;
  const logp = ctx.logProbs;
  const metrics: Record<string, Tensor> = {};
  const { weights, mask } = noGrad(() => {
    const logRatio = logp.detach().sub(rollout);
    const level = b.is === undefined ? "sequence" : b.is;
    const weights = level === null ? null : isWeightsOf(logRatio, ctx.mask, b);
    if (weights !== null) metrics.bypass_is_mean = maskedMean(weights, ctx.mask);
    let mask = ctx.mask;
    if (b.rs !== undefined && b.rs !== null) {
      const keep = rejectionKeep(logRatio, ctx.mask, parseRejection(b.rs, b.rsThreshold));
      metrics.bypass_rs_masked_frac = maskedMean(keep.neg().add(1), ctx.mask);
      mask = ctx.mask.mul(keep);
    }
    return { weights, mask };
  });
  if ((b.lossType ?? "ppo_clip") === "reinforce") {
    let perToken = a.neg().mul(logp);
    if (weights !== null) perToken = perToken.mul(weights);
    return { perToken, mask, metrics };
  }
  const { clipRatioLow: low, clipRatioHigh: high } = ctx.options;
  const logRatio = logp.sub(rollout).clamp(-20, 20);
  const ratio = logRatio.exp();
  const terms = clippedSurrogate(ctx, ratio, ratio.clamp(1 - low, 1 + high));
  return { ...terms, logRatio, mask, metrics };
}

/**
 * `bypass_mode`: veRL `compute_policy_loss_bypass_mode` (module doc): `oldLogProbs` are the
 * rollout policy's log-probs; options in `bypass` (`lossType`, `is`, `isThreshold`,
 * `isBatchNormalize`, `rs`, `rsThreshold`; veRL's `rollout_correction` defaults: `ppo_clip`,
 * `sequence`, 2, false, none) plus the clip options of `vanilla`. The `isWeights` input and
 * `offPolicy` weights are ignored (veRL computes the weights internally).
 *
 * @example Usage
 * ```ts
 * import { bypassModeLoss } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const inputs = {
 *   logProbs: tensor([[-1, -1]], { requiresGrad: true }),
 *   oldLogProbs: tensor([[-1, -1 - Math.log(4)]]), // π_rollout: the second token's ratio is 4
 *   advantages: tensor([[1, 1]]),
 *   responseMask: tensor([[1, 1]]),
 * };
 * // REINFORCE with token weights truncated at 2: −(1·(−1) + 2·(−1))/2
 * const { loss } = bypassModeLoss(inputs, {
 *   bypass: { lossType: "reinforce", is: "token", isThreshold: 2 },
 * });
 * assert.ok(Math.abs(await loss.item() - 1.5) < 1e-6);
 * // rejecting tokens whose k1 = log(π_rollout/π_θ) is outside [log 0.5, log 2] drops the second
 * const r = bypassModeLoss(inputs, {
 *   bypass: { lossType: "reinforce", is: null, rs: "token_k1", rsThreshold: 2 },
 * });
 * assert.ok(Math.abs(await r.loss.item() - 1) < 1e-6);
 * ```
 */
export const bypassModeLoss: PolicyLossFn = definePolicyLoss(NAME, bypassCore, {
  ownsWeights: true,
  validate: checkBypass,
});

POLICY_LOSSES.register(NAME, bypassModeLoss);
