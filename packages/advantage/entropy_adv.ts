/**
 * Entropy-based advantage shaping (Cheng et al., "Reasoning with Exploration: An Entropy
 * Perspective", arXiv 2506.14758): a clipped, gradient-detached per-token entropy bonus added to
 * any estimator's advantages to encourage longer exploratory reasoning.
 *
 * Design: this is a transform of existing advantages, not an estimator of its own; the
 * registry's `entropy_adv` runs a base estimator (`baseEstimator`, default `"grpo"`) and then
 * applies it, keeping the base returns. Entropies are plain numbers here, so "detached" holds
 * by construction: the caller passes `H_t` computed from the sampling logits (e.g. `@rlvr/tensor`'s
 * `entropyFromLogits`). The clip `|A_t|/κ` bounds the bonus by a fraction of the advantage, so
 * with κ > 1 the bonus never flips the sign of a non-zero advantage, and a zero advantage gets
 * no bonus. α and κ have no defaults: the caller chooses them (the paper tunes them per setup).
 *
 * @module
 */

import { ESTIMATORS } from "./_estimators.ts";
import { checkMask, checkNumber, checkObject, checkTokens, missing } from "./_validate.ts";
import type { TokenMatrix } from "./types.ts";

/** Input of {@link entropyShapedAdvantages}. */
export interface EntropyShapedInput {
  /** The base advantages `A_t`, `[batch, length]` (any estimator's output). */
  advantages: TokenMatrix;
  /** Per-token entropy `H_t >= 0` of the sampling distribution, `[batch, length]`. */
  entropy: TokenMatrix;
  /** Response mask `[batch, length]`. */
  responseMask: TokenMatrix;
  /** α >= 0, the scale of the entropy bonus. */
  alpha: number;
  /** κ > 0; the bonus is at most `|A_t|/κ`. */
  kappa: number;
}

/**
 * Entropy-shaped advantages (arXiv 2506.14758):
 *
 * ```
 * ψ(H_t) = min(α·H_t, |A_t|/κ)      (H_t detached)
 * A'_t   = A_t + ψ(H_t)
 * ```
 *
 * on valid tokens, 0 elsewhere. No veRL or TRL option (the paper's code is a one-line change to
 * veRL's advantage computation).
 *
 * @example Usage
 * ```ts
 * import { entropyShapedAdvantages, fromRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const a = entropyShapedAdvantages({
 *   advantages: fromRows([[1, -1, 0.1]]),
 *   entropy: fromRows([[0.5, 0.5, 2]]),
 *   responseMask: fromRows([[1, 1, 1]]),
 *   alpha: 0.4,
 *   kappa: 2,
 * });
 * // min(0.2, 0.5) = 0.2 on the first two; min(0.8, 0.05) = 0.05 on the third
 * assert.ok(Math.abs(a[0]! - 1.2) < 1e-15 && Math.abs(a[1]! + 0.8) < 1e-15);
 * assert.ok(Math.abs(a[2]! - 0.15) < 1e-15);
 * ```
 */
export function entropyShapedAdvantages(input: EntropyShapedInput): Float64Array {
  const owner = "entropyShapedAdvantages";
  checkObject(owner, input, "{advantages, entropy, responseMask, alpha, kappa}");
  const mask = checkMask(owner, "responseMask", input.responseMask);
  return shapeEntropy(owner, input, mask);
}

/** {@link entropyShapedAdvantages} with a checked mask; checks the rest. */
function shapeEntropy(
  owner: string,
  input: Omit<EntropyShapedInput, "responseMask">,
  mask: TokenMatrix,
  names: { alpha: string; kappa: string } = { alpha: "alpha", kappa: "kappa" },
): Float64Array {
  const adv = checkTokens(owner, "advantages", input.advantages, mask);
  const entropy = checkTokens(owner, "entropy", input.entropy, mask);
  const alpha = checkNumber(owner, names.alpha, input.alpha, { min: 0 });
  const kappa = checkNumber(owner, names.kappa, input.kappa, { min: 0, minExclusive: true });
  const out = new Float64Array(mask.data.length);
  for (let k = 0; k < out.length; k++) {
    if (mask.data[k] !== 1) continue;
    const h = entropy.data[k]!;
    if (h < 0) {
      throw new RangeError(
        `${owner}: entropy[${Math.floor(k / mask.length)}, ${
          k % mask.length
        }] is ${h}; entropies must be >= 0`,
      );
    }
    const a = adv.data[k]!;
    out[k] = a + Math.min(alpha * h, Math.abs(a) / kappa);
  }
  return out;
}

ESTIMATORS.register("entropy_adv", (x) => {
  const baseKey = x.baseEstimator ?? "grpo";
  if (baseKey === "entropy_adv") {
    throw new RangeError(`entropy_adv: baseEstimator cannot be "entropy_adv" itself`);
  }
  const base = ESTIMATORS.get(baseKey, "entropy_adv: baseEstimator")(x);
  const advantages = entropyShapedAdvantages({
    advantages: {
      data: base.advantages,
      batch: x.responseMask.batch,
      length: x.responseMask.length,
    },
    entropy: x.entropy ?? missing("entropy_adv", "entropy", "per-token entropy [batch, length]"),
    responseMask: x.responseMask,
    alpha: x.entropyAlpha ?? missing("entropy_adv", "entropyAlpha", "α of the entropy bonus"),
    kappa: x.entropyKappa ?? missing("entropy_adv", "entropyKappa", "κ of the clip |A|/κ"),
  });
  return { advantages, returns: base.returns };
});
