/**
 * Loss aggregation: reducing a per-token loss matrix `ℓ [B, T]` with a mask `m` to a scalar, by
 * mode key (veRL `agg_loss` / `loss_agg_mode`), with a registry for custom modes.
 *
 * | mode                      | formula                                        | matches                                             |
 * | ------------------------- | ---------------------------------------------- | --------------------------------------------------- |
 * | `token-mean`              | `Σᵢₜ ℓm / N_tok`                                | veRL default; TRL `bnpo`, `dapo` (global N_tok)      |
 * | `token-sum`               | `Σᵢₜ ℓm`                                        | veRL `token-sum` (no normaliser; ignores the counts) |
 * | `seq-mean-token-mean`     | `(1/N_seq) Σᵢ (Σₜ ℓm / Σₜ m)`                    | GRPO (arXiv 2402.03300), GSPO; TRL `grpo`           |
 * | `seq-mean-token-sum`      | `(1/N_seq) Σᵢ Σₜ ℓm`                             | veRL `seq-mean-token-sum`                           |
 * | `seq-mean-token-sum-norm` | `(1/N_seq) Σᵢ Σₜ ℓm / L`                         | Dr. GRPO (arXiv 2503.20783); TRL `dr_grpo`          |
 *
 * `N_tok` is the number of valid tokens and `N_seq` the number of sequences with at least one
 * valid token (current veRL `agg_loss`: fully masked rows neither count nor contribute), unless
 * `globalTokens`/`globalSequences` give the counts of the whole batch: then the losses of the
 * micro-batches of that batch sum to its full-batch loss. `L` is `lossScaleFactor` (default T).
 *
 * Design decision: counts are clamped to ≥ 1, so an all-masked batch gives 0 instead of NaN
 * (veRL divides by `Σm + 1e-8` or by the raw count; TRL clamps like this). Older veRL versions
 * divided `seq-mean-*` by all B rows and `seq-mean-token-sum-norm` by `T` alone (no `1/B`); we
 * follow the current veRL, which agrees with TRL `dr_grpo` (`Σ ℓm / (B·L)`) when no row is empty.
 *
 * @module
 */

import { Registry } from "@rlvr/common";
import { type Tensor, tidy } from "@rlvr/tensor";
import type { AggregationMode, AggregationOptions } from "./types.ts";
import { check2d, checkKnownKeys, checkNumber, checkSameShape } from "./_util.ts";

/**
 * An aggregation: `(loss [B, T], mask f32 0/1 [B, T], options) → scalar`. It must not read the
 * host and must keep gradients of `loss`.
 */
export type AggregationFn = (loss: Tensor, mask: Tensor, options: AggregationOptions) => Tensor;

/** Every aggregation mode, by key; the built-in ones register beside their formulas below. */
const AGGREGATIONS = new Registry<AggregationFn>("aggregation mode");

const AGG_OPTION_KEYS = ["globalTokens", "globalSequences", "lossScaleFactor"] as const;

function denominator(
  given: number | Tensor | undefined,
  local: () => Tensor,
  name: string,
): Tensor | number {
  if (given === undefined) return local().clamp(1);
  if (typeof given === "number") {
    return checkNumber("aggregate", name, given, { min: 0, minExclusive: true });
  }
  return given;
}

function seqParts(loss: Tensor, mask: Tensor): { sums: Tensor; lens: Tensor } {
  return { sums: loss.mul(mask).sum(1), lens: mask.sum(1) };
}

function nonEmpty(lens: Tensor): Tensor {
  return lens.gt(0).cast("f32");
}

function tokenMean(loss: Tensor, mask: Tensor, options: AggregationOptions): Tensor {
  const n = denominator(options.globalTokens, () => mask.sum(), "globalTokens");
  return loss.mul(mask).sum().div(n);
}
AGGREGATIONS.register("token-mean", tokenMean);

function tokenSum(loss: Tensor, mask: Tensor): Tensor {
  return loss.mul(mask).sum();
}
AGGREGATIONS.register("token-sum", tokenSum);

function seqMeanTokenSum(loss: Tensor, mask: Tensor, options: AggregationOptions): Tensor {
  const { sums, lens } = seqParts(loss, mask);
  const n = denominator(options.globalSequences, () => nonEmpty(lens).sum(), "globalSequences");
  return sums.sum().div(n);
}
AGGREGATIONS.register("seq-mean-token-sum", seqMeanTokenSum);

function seqMeanTokenMean(loss: Tensor, mask: Tensor, options: AggregationOptions): Tensor {
  const { sums, lens } = seqParts(loss, mask);
  const n = denominator(options.globalSequences, () => nonEmpty(lens).sum(), "globalSequences");
  return sums.div(lens.clamp(1)).sum().div(n);
}
AGGREGATIONS.register("seq-mean-token-mean", seqMeanTokenMean);

function seqMeanTokenSumNorm(loss: Tensor, mask: Tensor, options: AggregationOptions): Tensor {
  const scale = options.lossScaleFactor === undefined
    ? loss.shape[1]!
    : checkNumber("aggregate", "lossScaleFactor", options.lossScaleFactor, {
      min: 0,
      minExclusive: true,
    });
  return seqMeanTokenSum(loss, mask, options).div(scale);
}
AGGREGATIONS.register("seq-mean-token-sum-norm", seqMeanTokenSumNorm);

/**
 * Registers an aggregation mode under `name` (the key rule of `@rlvr/common`'s `Registry`: a
 * lowercase letter, then lowercase letters, digits and `_`, words joined by `-`, optionally one
 * final `+`); a bad name or a non-function is a `TypeError`, a taken name a `RangeError` unless
 * `{ override: true }`.
 *
 * @example Usage
 * ```ts
 * import { aggregate, registerAggregation } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * registerAggregation("token-max-doc", (loss, mask) => loss.mul(mask).max());
 * const out = aggregate(tensor([[1, 2], [3, 4]]), tensor([[1, 1], [1, 0]]), "token-max-doc");
 * assert.equal(await out.item(), 3);
 * ```
 */
export function registerAggregation(
  name: string,
  fn: AggregationFn,
  options: { override?: boolean } = {},
): void {
  AGGREGATIONS.register(name, fn, options);
}

/**
 * The names of all registered aggregation modes, in registration order.
 *
 * @example Usage
 * ```ts
 * import { aggregationNames } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * assert.ok(aggregationNames().includes("seq-mean-token-sum-norm"));
 * ```
 */
export function aggregationNames(): string[] {
  return AGGREGATIONS.names();
}

/**
 * The aggregation registered as `name`; an unknown name is a `RangeError` listing the valid
 * ones, with a "did you mean" for a likely typo.
 *
 * @example Usage
 * ```ts
 * import { getAggregation } from "@rlvr/objectives";
 * import assert from "node:assert/strict";
 * assert.equal(typeof getAggregation("token-mean"), "function");
 * assert.throws(() => getAggregation("mean"), /valid keys: token-mean/);
 * assert.throws(() => getAggregation("token_mean"), /\(did you mean "token-mean"\?\)$/);
 * ```
 */
export function getAggregation(name: AggregationMode | string): AggregationFn {
  return AGGREGATIONS.get(name);
}

/**
 * Reduces the per-token loss `loss [B, T]` over the valid positions of `mask` (bool or f32 0/1)
 * with the mode `mode` (default `token-mean`); see the module table for the formulas. Matches
 * veRL `agg_loss(loss_mat, loss_mask, loss_agg_mode, batch_num_tokens, global_batch_size,
 * loss_scale_factor)` with `dp_size = 1` (with data parallelism that averages gradients, pass the
 * global counts and multiply by the number of ranks, as veRL does).
 *
 * @example Usage
 * ```ts
 * import { aggregate } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const loss = tensor([[1, 2, 3], [4, 0, 0]]);
 * const mask = tensor([[1, 1, 1], [1, 0, 0]]);
 * assert.equal(await aggregate(loss, mask, "token-mean").item(), 10 / 4);
 * assert.equal(await aggregate(loss, mask, "token-sum").item(), 10);
 * assert.equal(await aggregate(loss, mask, "seq-mean-token-mean").item(), (2 + 4) / 2);
 * assert.equal(await aggregate(loss, mask, "seq-mean-token-sum").item(), (6 + 4) / 2);
 * const norm = await aggregate(loss, mask, "seq-mean-token-sum-norm").item();
 * assert.ok(Math.abs(norm - (6 + 4) / 2 / 3) < 1e-6);
 * // micro-batches with the global token count sum to the full-batch loss:
 * const a = aggregate(loss.narrow(0, 0, 1), mask.narrow(0, 0, 1), "token-mean", { globalTokens: 4 });
 * const b = aggregate(loss.narrow(0, 1, 1), mask.narrow(0, 1, 1), "token-mean", { globalTokens: 4 });
 * assert.ok(Math.abs((await a.item()) + (await b.item()) - 10 / 4) < 1e-6);
 * ```
 */
export function aggregate(
  loss: Tensor,
  mask: Tensor,
  mode: AggregationMode | string = "token-mean",
  options: AggregationOptions = {},
): Tensor {
  const fn = getAggregation(mode);
  check2d("aggregate", "loss", loss);
  checkSameShape("aggregate", "mask", mask, loss, "loss");
  checkKnownKeys("aggregate", "option", options, AGG_OPTION_KEYS);
  return tidy(() => fn(loss, mask.dtype === "f32" ? mask : mask.cast("f32"), options));
}
