/**
 * The shared frame of every policy loss: input and option checks, masking, off-policy
 * corrections, the high-entropy mask, aggregation, the KL and entropy terms, and the common
 * metrics. A loss only supplies its per-token loss (a {@link PolicyLossCore}); this file turns it
 * into a {@link PolicyLossFn}.
 *
 * The frame computes, with `ℓ_t` the core's per-token loss, `m_t` the response mask (after
 * rejection), `w_t` importance weights (given `isWeights`, TIS or decoupled), `e_t` the
 * high-entropy mask and `o_t` the OPSM mask:
 *
 * `loss = agg(ℓ·w·e·o, m) + β·agg(kl(π_θ, π_ref), m) − α·agg(H, m)`
 *
 * as veRL's actor does (`pg_loss * rollout_is_weights`, then `+ kl_loss_coef·kl_loss` and
 * `− entropy_coeff·entropy_loss`, all with `loss_agg_mode`). A loss may force the aggregation of
 * its first term (veRL's `gspo`, `sapo` and `geo_mean` ignore `loss_agg_mode`), apply the weights
 * `w` itself (`geo_mean` takes their per-sequence geometric mean) or narrow the mask of its first
 * term (`bypass_mode`'s rejection sampling); see {@link PolicyLossDefinition}.
 *
 * Design decisions:
 * - Everything runs inside one `tidy`; only the loss and the metric tensors survive, and the
 *   metrics are computed without gradient. Nothing is read back to the host, so a GPU backend
 *   stays asynchronous; value checks (NaN, mask values) live in the async `validatePolicyInputs`.
 * - Inputs are zeroed on masked positions before any arithmetic, so padding values (NaN, −inf)
 *   cannot reach the loss or its gradient.
 * - Common metrics (all scalar tensors): `pg_loss`, `pg_clipfrac` (= `clipfrac_low +
 *   clipfrac_high`, veRL's `pg_clipfrac` for PPO), `clipfrac_low` (A < 0 and the ratio clipped
 *   below), `clipfrac_high` (A > 0 and clipped above), `clipfrac_dual` (veRL
 *   `pg_clipfrac_lower`), `ppo_kl` (masked mean of `log π_old − log π_θ`), `ratio_mean`,
 *   `ratio_min`, `ratio_max` (token ratio `π_θ/π_old` over valid tokens), `masked_frac` (masked
 *   positions over B·T), `entropy` (token-mean, when entropy or logits are given), `kl` and
 *   `kl_loss` (with `klCoef > 0`), and the metrics of the off-policy corrections.
 *
 * @module
 */

import { noGrad, type Tensor, tidy, zeros } from "@rlvr/tensor";
import { type AggregationFn, getAggregation } from "./aggregate.ts";
import { highEntropyMask, tokenEntropy } from "./entropy.ts";
import { KL_ESTIMATORS } from "./_kl_estimators.ts";
import { klPenalty } from "./kl.ts";
import {
  decoupledImportanceWeights,
  offPolicySequenceMask,
  rejectionMask,
  truncatedImportanceWeights,
} from "./off_policy.ts";
import {
  check2d,
  checkFloat,
  checkKnownKeys,
  checkNumber,
  checkSameShape,
  maskedFraction,
  maskedMax,
  maskedMean,
  maskedMin,
  validOf,
  zeroMasked,
} from "./_util.ts";
import type {
  AggregationOptions,
  Metrics,
  OffPolicyOptions,
  PolicyLossFn,
  PolicyLossInputs,
  PolicyLossOptions,
} from "./types.ts";

/**
 * Every option name of {@link PolicyLossOptions}; any other name is rejected by the losses.
 *
 * @example Usage
 * ```ts
 * import { POLICY_LOSS_OPTION_KEYS } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * assert.ok(POLICY_LOSS_OPTION_KEYS.includes("clipRatioHigh"));
 * ```
 */
export const POLICY_LOSS_OPTION_KEYS: readonly (keyof PolicyLossOptions)[] = [
  "aggregation",
  "globalTokens",
  "globalSequences",
  "lossScaleFactor",
  "clipRatio",
  "clipRatioLow",
  "clipRatioHigh",
  "clipRatioC",
  "tauPos",
  "tauNeg",
  "covRatio",
  "covLowerBound",
  "covUpperBound",
  "klCovCoef",
  "seed",
  "covPermutation",
  "droBeta",
  "bypass",
  "positiveWeight",
  "negativeWeight",
  "klCoef",
  "klType",
  "entropyCoef",
  "topEntropyFraction",
  "offPolicy",
];

const OFF_POLICY_KEYS: readonly (keyof OffPolicyOptions)[] = [
  "tis",
  "decoupled",
  "rejection",
  "sequenceMaskThreshold",
];

/** Options after defaults: the clip range is resolved to numbers. */
export interface ResolvedPolicyLossOptions extends PolicyLossOptions {
  /** ε_low after defaults. */
  clipRatioLow: number;
  /** ε_high after defaults. */
  clipRatioHigh: number;
  /** Dual-clip c after defaults (`Infinity` = off). */
  clipRatioC: number;
  /** Aggregation key after defaults. */
  aggregation: string;
}

/** What a {@link PolicyLossCore} sees: masked inputs and resolved options. */
export interface PolicyLossContext {
  /** The loss's registry name, for messages. */
  readonly name: string;
  /** `[B, T]` log π_θ, 0 on masked positions; gradients flow through it. */
  readonly logProbs: Tensor;
  /** `[B, T]` log π_old (0 on masked positions, no gradient), or null when not given. */
  readonly oldLogProbs: Tensor | null;
  /** `[B, T]` advantages (0 on masked positions, no gradient). */
  readonly advantages: Tensor;
  /** `[B, T]` bool: valid positions (after off-policy rejection). */
  readonly valid: Tensor;
  /** `[B, T]` f32 0/1 version of `valid`. */
  readonly mask: Tensor;
  /** `[B, T]` per-token entropy (0 on masked positions), or null. */
  readonly entropy: Tensor | null;
  /**
   * `[B, T]` importance weights (the product of the `isWeights` input and the `offPolicy.tis` /
   * `offPolicy.decoupled` weights, 0 on masked positions, no gradient), or null when there are
   * none. Only given to a loss whose definition sets `ownsWeights` (it applies them itself);
   * every other loss gets null and the frame multiplies its per-token loss by them.
   */
  readonly weights: Tensor | null;
  /** The options with the loss's defaults applied. */
  readonly options: ResolvedPolicyLossOptions;
}

/** The per-token result of a {@link PolicyLossCore}. */
export interface PolicyLossTerms {
  /** `[B, T]` per-token loss ℓ_t (to be minimised); aggregated by the frame. */
  perToken: Tensor;
  /**
   * `[B, T]` log-ratio `log π_θ − log π_old` as the loss computed it (e.g. clamped), for
   * `ppo_kl` and the ratio metrics; default `logProbs − oldLogProbs`.
   */
  logRatio?: Tensor;
  /** `[B, T]` bool: tokens clipped below with A < 0 (for `clipfrac_low`). */
  clippedLow?: Tensor;
  /** `[B, T]` bool: tokens clipped above with A > 0 (for `clipfrac_high`). */
  clippedHigh?: Tensor;
  /** `[B, T]` bool: tokens capped by the dual clip (for `clipfrac_dual`). */
  clippedDual?: Tensor;
  /** Extra scalar metrics of this loss (compute them without gradient). */
  metrics?: Metrics;
  /**
   * `[B, T]` f32 0/1: the mask the policy-gradient term is aggregated over and the common
   * metrics are taken on, when the loss narrows the response mask itself (veRL `bypass_mode`'s
   * rejection sampling); default the frame's mask. The KL and entropy terms keep the frame's.
   */
  mask?: Tensor;
}

/** The loss-specific part of a policy loss: per-token loss and indicators from the context. */
export type PolicyLossCore = (ctx: PolicyLossContext) => PolicyLossTerms;

/** How {@link definePolicyLoss} treats a core. */
export interface PolicyLossDefinition {
  /** Defaults of this loss, applied under the caller's options (e.g. GSPO's clip range). */
  defaults?: PolicyLossOptions;
  /** Whether `oldLogProbs` is required (default true). */
  requiresOld?: boolean;
  /** Extra option checks; throw naming the option and the value. */
  validate?: (options: ResolvedPolicyLossOptions) => void;
  /**
   * Aggregation of the policy-gradient term that this loss forces whatever `aggregation` says:
   * a registered key (veRL's `gspo` and `sapo` force `seq-mean-token-mean`, still with the
   * global counts) or a function (veRL's `geo_mean` takes a plain mean over all rows). The KL
   * and entropy terms keep `options.aggregation`, as veRL's actor does. Default: none.
   */
  aggregation?: string | AggregationFn;
  /**
   * Whether the core applies the importance weights itself (it receives them as
   * `ctx.weights`; veRL's `geo_mean` takes their per-sequence geometric mean, `bypass_mode`
   * ignores them). Default false: the frame multiplies the per-token loss by them.
   */
  ownsWeights?: boolean;
}

/**
 * Builds a policy loss from a per-token core: the result checks its inputs and options, applies
 * masks, off-policy corrections and the high-entropy mask, aggregates, adds the KL and entropy
 * terms, and returns `{ loss, metrics }` (see the module doc). Use it with `registerPolicyLoss`
 * to add a loss that behaves like the built-in ones.
 *
 * @example Usage
 * ```ts
 * import { definePolicyLoss, readMetrics } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * // plain policy gradient −A·log π
 * const pg = definePolicyLoss("my_pg", (ctx) => ({
 *   perToken: ctx.advantages.mul(ctx.logProbs).neg(),
 * }), { requiresOld: false });
 * const { loss, metrics } = pg({
 *   logProbs: tensor([[-1, -2]], { requiresGrad: true }),
 *   advantages: tensor([[1, 1]]),
 *   responseMask: tensor([[1, 1]]),
 * });
 * assert.equal(await loss.item(), 1.5);
 * assert.equal((await readMetrics(metrics)).masked_frac, 0);
 * ```
 */
export function definePolicyLoss(
  name: string,
  core: PolicyLossCore,
  definition: PolicyLossDefinition = {},
): PolicyLossFn {
  return (inputs: PolicyLossInputs, options: PolicyLossOptions = {}) => {
    const resolved = resolveOptions(name, options, definition);
    checkInputs(name, inputs, resolved, definition.requiresOld ?? true);
    definition.validate?.(resolved);
    const aggregateFn = getAggregation(resolved.aggregation);
    const forced = definition.aggregation;
    const pgAggregateFn = forced === undefined
      ? aggregateFn
      : typeof forced === "string"
      ? getAggregation(forced)
      : forced;
    const aggOptions: AggregationOptions = {};
    if (resolved.globalTokens !== undefined) aggOptions.globalTokens = resolved.globalTokens;
    if (resolved.globalSequences !== undefined) {
      aggOptions.globalSequences = resolved.globalSequences;
    }
    if (resolved.lossScaleFactor !== undefined) {
      aggOptions.lossScaleFactor = resolved.lossScaleFactor;
    }
    const agg = (x: Tensor, m: Tensor) => aggregateFn(x, m, aggOptions);
    const ownsWeights = definition.ownsWeights ?? false;

    return tidy(() => {
      const metrics: Metrics = {};
      const off = resolved.offPolicy ?? {};
      let valid = validOf(inputs.responseMask);
      const total = inputs.logProbs.size;
      if (off.rejection !== undefined) {
        const rej = rejectionMask(
          inputs.oldLogProbs!,
          inputs.rolloutLogProbs!,
          valid,
          off.rejection,
        );
        Object.assign(metrics, rej.metrics);
        valid = rej.mask.gt(0);
      }
      const mask = valid.cast("f32");
      const logProbs = zeroMasked(inputs.logProbs, valid);
      const old = inputs.oldLogProbs === undefined
        ? null
        : zeroMasked(inputs.oldLogProbs.detach(), valid);
      const advantages = zeroMasked(inputs.advantages.detach(), valid);
      const rawEntropy = inputs.entropy ??
        (inputs.logits === undefined ? undefined : tokenEntropy(inputs.logits));
      const entropy = rawEntropy === undefined ? null : zeroMasked(rawEntropy, valid);

      // Importance weights: the isWeights input, TIS and decoupled weights (all without
      // gradient), multiplied into the per-token loss unless the loss applies them itself.
      let weights: Tensor | null = inputs.isWeights === undefined
        ? null
        : zeroMasked(inputs.isWeights.detach(), valid);
      const times = (w: Tensor) => (weights = weights === null ? w : weights.mul(w));
      if (off.tis !== undefined) {
        const tis = truncatedImportanceWeights(old!, inputs.rolloutLogProbs!, valid, off.tis);
        Object.assign(metrics, tis.metrics);
        times(tis.weights);
      }
      if (off.decoupled !== undefined) {
        const dec = decoupledImportanceWeights(old!, inputs.rolloutLogProbs!, valid, off.decoupled);
        Object.assign(metrics, dec.metrics);
        times(dec.weights);
      }

      const terms = core({
        name,
        logProbs,
        oldLogProbs: old,
        advantages,
        valid,
        mask,
        entropy,
        weights: ownsWeights ? weights : null,
        options: resolved,
      });
      let perToken = terms.perToken;
      if (weights !== null && !ownsWeights) perToken = perToken.mul(weights);
      if (off.sequenceMaskThreshold !== undefined) {
        const opsm = offPolicySequenceMask(
          inputs.logProbs,
          inputs.rolloutLogProbs!,
          advantages,
          valid,
          { threshold: off.sequenceMaskThreshold },
        );
        Object.assign(metrics, opsm.metrics);
        perToken = perToken.mul(opsm.mask);
      }
      const top = resolved.topEntropyFraction ?? 1;
      if (top < 1) {
        const keep = highEntropyMask(entropy!, valid, { topFraction: top });
        metrics.entropy_mask_frac = maskedMean(keep, mask);
        perToken = perToken.mul(keep);
      }

      const pgMask = terms.mask ?? mask;
      const pgValid = terms.mask === undefined ? valid : pgMask.gt(0);
      const pgLoss = pgAggregateFn(perToken, pgMask, aggOptions);
      let loss = pgLoss;
      const klCoef = resolved.klCoef ?? 0;
      if (klCoef > 0) {
        const ref = zeroMasked(inputs.refLogProbs!.detach(), valid);
        const kl = klPenalty(logProbs, ref, resolved.klType ?? "low_var_kl");
        const klTerm = agg(kl, mask);
        loss = loss.add(klTerm.mul(klCoef));
        metrics.kl = maskedMean(kl.detach(), mask);
        metrics.kl_loss = klTerm.detach();
      }
      const entropyCoef = resolved.entropyCoef ?? 0;
      if (entropyCoef !== 0) loss = loss.sub(agg(entropy!, mask).mul(entropyCoef));

      // Common metrics, without gradient.
      const zero = () => zeros([], { backend: logProbs.backend });
      const logRatio = terms.logRatio?.detach() ??
        noGrad(() => (old === null ? logProbs.mul(0) : logProbs.sub(old)));
      const ratio = logRatio.exp();
      const frac = (x: Tensor | undefined) => x === undefined ? zero() : maskedFraction(x, pgMask);
      const low = frac(terms.clippedLow);
      const high = frac(terms.clippedHigh);
      Object.assign(metrics, {
        pg_loss: pgLoss.detach(),
        pg_clipfrac: low.add(high),
        clipfrac_low: low,
        clipfrac_high: high,
        clipfrac_dual: frac(terms.clippedDual),
        ppo_kl: maskedMean(logRatio.neg(), pgMask),
        ratio_mean: maskedMean(ratio, pgMask),
        ratio_min: maskedMin(ratio, pgValid),
        ratio_max: maskedMax(ratio, pgValid),
        masked_frac: pgMask.sum().div(-total).add(1),
      });
      if (entropy !== null) metrics.entropy = maskedMean(entropy.detach(), mask);
      for (const [key, value] of Object.entries(terms.metrics ?? {})) {
        metrics[key] = value.detach();
      }
      return { loss, metrics };
    });
  };
}

function resolveOptions(
  name: string,
  options: PolicyLossOptions,
  definition: PolicyLossDefinition,
): ResolvedPolicyLossOptions {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${name}: options must be an object, got ${String(options)}`);
  }
  checkKnownKeys(name, "option", options, POLICY_LOSS_OPTION_KEYS);
  const defaults = definition.defaults ?? {};
  const merged: PolicyLossOptions = { ...defaults, ...options };
  if (defaults.offPolicy !== undefined || options.offPolicy !== undefined) {
    merged.offPolicy = { ...defaults.offPolicy, ...options.offPolicy };
  }
  // The caller's options win over the loss's defaults, and a specific bound over `clipRatio`:
  // caller low/high, caller clipRatio, default low/high, default clipRatio, 0.2.
  if (options.clipRatio !== undefined) {
    checkNumber(name, "clipRatio", options.clipRatio, { min: 0 });
  }
  const low = checkNumber(
    name,
    "clipRatioLow",
    options.clipRatioLow ?? options.clipRatio ?? defaults.clipRatioLow ?? defaults.clipRatio ?? 0.2,
    { min: 0, max: 1 },
  );
  const high = checkNumber(
    name,
    "clipRatioHigh",
    options.clipRatioHigh ?? options.clipRatio ?? defaults.clipRatioHigh ?? defaults.clipRatio ??
      0.2,
    { min: 0 },
  );
  const c = checkNumber(name, "clipRatioC", merged.clipRatioC ?? 3, {
    min: 1,
    minExclusive: true,
    allowInfinity: true,
  });
  return {
    ...merged,
    clipRatioLow: low,
    clipRatioHigh: high,
    clipRatioC: c,
    aggregation: merged.aggregation ?? "token-mean",
  };
}

function checkInputs(
  name: string,
  inputs: PolicyLossInputs,
  options: ResolvedPolicyLossOptions,
  requiresOld: boolean,
): void {
  if (typeof inputs !== "object" || inputs === null) {
    throw new TypeError(`${name}: inputs must be an object, got ${String(inputs)}`);
  }
  check2d(name, "logProbs", inputs.logProbs);
  checkFloat(name, "logProbs", inputs.logProbs);
  for (const key of ["advantages", "responseMask"] as const) {
    if (inputs[key] === undefined) throw new TypeError(`${name}: ${key} is required`);
  }
  const sameShape = [
    "oldLogProbs",
    "advantages",
    "responseMask",
    "refLogProbs",
    "rolloutLogProbs",
    "entropy",
    "isWeights",
  ] as const;
  for (const key of sameShape) {
    checkSameShape(name, key, inputs[key], inputs.logProbs, "logProbs");
    if (key !== "responseMask") checkFloat(name, key, inputs[key]);
  }
  if (inputs.logits !== undefined) {
    const [b, t] = inputs.logProbs.shape;
    const ls = inputs.logits.shape;
    if (ls.length !== 3 || ls[0] !== b || ls[1] !== t) {
      throw new RangeError(
        `${name}: logits shape [${
          ls.join(", ")
        }] must be [B, T, V] with [B, T] = [${b}, ${t}] of logProbs`,
      );
    }
  }
  if (requiresOld && inputs.oldLogProbs === undefined) {
    throw new TypeError(`${name}: oldLogProbs is required by this loss`);
  }
  const hasEntropy = inputs.entropy !== undefined || inputs.logits !== undefined;
  const klCoef = checkNumber(name, "klCoef", options.klCoef ?? 0, { min: 0 });
  if (klCoef > 0) {
    if (inputs.refLogProbs === undefined) {
      throw new TypeError(`${name}: klCoef = ${klCoef} needs refLogProbs`);
    }
    if (options.klType !== undefined) klTypeCheck(name, options.klType);
  }
  const entropyCoef = checkNumber(name, "entropyCoef", options.entropyCoef ?? 0);
  if (entropyCoef !== 0 && !hasEntropy) {
    throw new TypeError(`${name}: entropyCoef = ${entropyCoef} needs entropy or logits`);
  }
  const top = checkNumber(name, "topEntropyFraction", options.topEntropyFraction ?? 1, {
    min: 0,
    minExclusive: true,
    max: 1,
  });
  if (top < 1 && !hasEntropy) {
    throw new TypeError(`${name}: topEntropyFraction = ${top} needs entropy or logits`);
  }
  const off = options.offPolicy;
  if (off !== undefined) {
    if (typeof off !== "object" || off === null) {
      throw new TypeError(`${name}: offPolicy must be an object, got ${String(off)}`);
    }
    checkKnownKeys(`${name}: offPolicy`, "option", off, OFF_POLICY_KEYS);
    const used = OFF_POLICY_KEYS.filter((k) => off[k] !== undefined);
    if (used.length > 0 && inputs.rolloutLogProbs === undefined) {
      throw new TypeError(`${name}: offPolicy.${used[0]} needs rolloutLogProbs`);
    }
    if (used.some((k) => k !== "sequenceMaskThreshold") && inputs.oldLogProbs === undefined) {
      throw new TypeError(`${name}: offPolicy.${used[0]} needs oldLogProbs`);
    }
    if (off.tis !== undefined && off.decoupled !== undefined) {
      throw new RangeError(
        `${name}: offPolicy.tis and offPolicy.decoupled both weight the loss by π_old/π_rollout; use one`,
      );
    }
  }
}

function klTypeCheck(name: string, klType: unknown): void {
  KL_ESTIMATORS.get(klType as string, `${name}: klType`);
}
