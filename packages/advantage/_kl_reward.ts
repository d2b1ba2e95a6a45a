/**
 * The unchecked cores of `kl_reward.ts`: the per-token KL estimates and the shaping the
 * registry's `klInReward` and `klShapedRewards` share.
 *
 * @module
 */

import { checkChoice, checkNumber, checkObject, checkTokens } from "./_validate.ts";
import type { KlPenalty, KlShapedRewards, KlShapedRewardsInput } from "./kl_reward.ts";
import type { TokenMatrix } from "./types.ts";

/** The KL estimator names of `KlPenalty`, for checks. */
export const PENALTIES: readonly KlPenalty[] = [
  "k1",
  "kl",
  "abs",
  "k2",
  "mse",
  "k3",
  "low_var_kl",
  "k1+",
  "kl+",
  "abs+",
  "k2+",
  "mse+",
  "k3+",
  "low_var_kl+",
];

/** One KL estimate from `logp` (sampling policy) and `ref` (reference policy). */
function penaltyOf(logp: number, ref: number, penalty: KlPenalty): number {
  // A final "+" only changes the gradient (straight-through k2); rewards carry no gradient.
  switch (penalty.endsWith("+") ? penalty.slice(0, -1) as KlPenalty : penalty) {
    case "k1":
    case "kl":
      return logp - ref;
    case "abs":
      return Math.abs(logp - ref);
    case "k2":
    case "mse":
      return 0.5 * (logp - ref) * (logp - ref);
    case "k3":
    case "low_var_kl": {
      const d = Math.min(20, Math.max(-20, ref - logp));
      return Math.min(10, Math.max(-10, Math.exp(d) - d - 1));
    }
    default:
      throw new RangeError(`unknown KL penalty ${JSON.stringify(penalty)}`);
  }
}

/** Per-token KL estimates of checked inputs, 0 at masked positions. */
export function klOf(
  lp: TokenMatrix,
  ref: TokenMatrix,
  mask: TokenMatrix,
  kind: KlPenalty,
): Float64Array {
  const out = new Float64Array(mask.data.length);
  for (let k = 0; k < out.length; k++) {
    if (mask.data[k] === 1) out[k] = penaltyOf(lp.data[k]!, ref.data[k]!, kind);
  }
  return out;
}

/**
 * Subtracts `β·KL` from already-checked token scores on valid tokens (masked positions keep
 * their score, as veRL `apply_kl_penalty`); checks the KL inputs.
 * `field` prefixes the argument names in errors (the registry passes `"klInReward."`).
 */
export function shapeChecked(
  owner: string,
  tokenScores: TokenMatrix,
  input: Omit<KlShapedRewardsInput, "rewards" | "responseMask">,
  mask: TokenMatrix,
  field = "",
): KlShapedRewards {
  checkObject(owner, input, "{logProbs, refLogProbs, coef, penalty?}");
  const lp = checkTokens(owner, `${field}logProbs`, input.logProbs, mask);
  const ref = checkTokens(owner, `${field}refLogProbs`, input.refLogProbs, mask);
  const coef = checkNumber(owner, `${field}coef`, input.coef, { min: 0 });
  const kind = checkChoice(owner, `${field}penalty`, input.penalty ?? "k1", PENALTIES);
  const kl = klOf(lp, ref, mask, kind);
  const { batch, length } = mask;
  const data = new Float64Array(batch * length);
  let sumOfMeans = 0;
  for (let i = 0; i < batch; i++) {
    let s = 0;
    let n = 0;
    for (let t = 0; t < length; t++) {
      const k = i * length + t;
      if (mask.data[k] !== 1) {
        // veRL: token_level_scores − β·kl·mask keeps the score of a masked position
        data[k] = tokenScores.data[k]!;
        continue;
      }
      data[k] = tokenScores.data[k]! - coef * kl[k]!;
      s += kl[k]!;
      n++;
    }
    if (n > 0) sumOfMeans += s / n;
  }
  return {
    tokenRewards: { data, batch, length },
    kl,
    meanKl: batch > 0 ? sumOfMeans / batch : 0,
  };
}
