/**
 * Generalized Advantage Estimation (Schulman et al., arXiv 1506.02438) for critic-based PPO,
 * with the long-CoT variants: decoupled λ for critic and actor (VC-PPO, arXiv 2503.01491; VAPO,
 * arXiv 2504.05118) and VAPO's length-adaptive actor λ.
 *
 * Design, mask handling: this follows veRL `compute_gae_advantage_return`, which scans the full
 * padded length backwards and, at a masked position, keeps the running `nextvalues` and
 * `lastgaelam` unchanged ("skip values and TD-error on observation tokens"). Masked positions are
 * therefore transparent: the recursion runs over the valid tokens only, a valid token's
 * `V(s_{t+1})` is the value at the next *valid* token, and past the last valid token the
 * bootstrap value is 0. Padding after EOS thus terminates the episode, and tool/observation
 * tokens in the middle of a response are skipped. Rewards and values under a 0 are never read.
 * On valid tokens the numbers equal veRL's; at masked positions veRL leaves the carried (and
 * whitened) value while we write 0, and veRL's `returns` there are `carry + V` while ours are 0.
 *
 * As in veRL (and TRL's PPO), the advantages are whitened over the batch's valid tokens with
 * {@link maskedWhiten} (unbiased variance) unless `whiten: false`; the returns (critic targets)
 * are never whitened.
 *
 * @module
 */

import { ESTIMATORS, pick } from "./_estimators.ts";
import {
  checkBoolean,
  checkMask,
  checkNumber,
  checkObject,
  checkTokens,
  missing,
} from "./_validate.ts";
import { lengthsOf } from "./_layout.ts";
import type { AdvantageOutput, TokenMatrix } from "./types.ts";
import { whitenChecked } from "./_whiten.ts";

/** Input of {@link gae}. */
export interface GaeInput {
  /** Token rewards `r_{i,t}`, `[batch, length]` (KL-shaped if KL is in the reward). */
  tokenRewards: TokenMatrix;
  /** Critic values `V(s_{i,t})`, `[batch, length]`. */
  values: TokenMatrix;
  /** 1 for response tokens that are actions, 0 for padding and observation tokens. */
  responseMask: TokenMatrix;
  /** Discount γ in [0, 1] (default 1, veRL `algorithm.gamma`). */
  gamma?: number;
  /** λ in [0, 1] for the actor's advantages (default 1, veRL `algorithm.lam`). */
  lam?: number;
  /**
   * λ in [0, 1] for the critic's targets `returns = GAE(λ_critic) + V` (default `lam`, which is
   * veRL). VC-PPO and VAPO use 1.0 here while the actor uses a smaller λ.
   */
  criticLam?: number;
  /**
   * VAPO length-adaptive λ: when set, the actor uses `λ_i = 1 − 1/(α·l_i)` per response, with
   * `l_i` its number of valid tokens (clamped to [0, 1]), instead of `lam`. VAPO reports α = 0.05.
   */
  lengthAdaptiveAlpha?: number;
  /** Whiten the advantages over the batch's valid tokens (default true, as veRL). */
  whiten?: boolean;
}

/**
 * VAPO's length-adaptive actor λ for a response of `length` valid tokens:
 * `λ = 1 − 1/(α·length)`, clamped to [0, 1] (short responses, `α·length < 1`, get 0).
 *
 * @example Usage
 * ```ts
 * import { vapoLambda } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * assert.equal(vapoLambda(200, 0.05), 0.9); // 1 − 1/(0.05·200) = 1 − 1/10
 * assert.equal(vapoLambda(10, 0.05), 0); // 1 − 1/0.5 = −1, clamped
 * ```
 */
export function vapoLambda(length: number, alpha: number): number {
  checkNumber("vapoLambda", "length", length, { min: 0 });
  checkNumber("vapoLambda", "alpha", alpha, { min: 0, minExclusive: true });
  return lambdaFor(length, alpha);
}

function lambdaFor(length: number, alpha: number): number {
  if (length <= 0) return 0;
  return Math.min(1, Math.max(0, 1 - 1 / (alpha * length)));
}

/** The GAE reverse scan of one row with masked positions skipped; writes `out` at valid tokens. */
function scanRow(
  rewards: ArrayLike<number>,
  values: ArrayLike<number>,
  mask: ArrayLike<number>,
  row: number,
  length: number,
  gamma: number,
  lam: number,
  out: Float64Array,
): void {
  let nextValue = 0;
  let lastGae = 0;
  for (let t = length - 1; t >= 0; t--) {
    const k = row * length + t;
    if (mask[k] !== 1) continue;
    const v = values[k]!;
    const delta = rewards[k]! + gamma * nextValue - v;
    lastGae = delta + gamma * lam * lastGae;
    nextValue = v;
    out[k] = lastGae;
  }
}

/**
 * Generalized Advantage Estimation, one reverse scan per response over its valid tokens:
 *
 * ```
 * δ_t = r_t + γ·V_{t+1} − V_t          (V past the last valid token is 0)
 * Â_t = δ_t + γλ·Â_{t+1}               (= Σ_l (γλ)^l δ_{t+l})
 * returns_t = Â_t(λ_critic) + V_t
 * advantages = maskedWhiten(Â(λ_actor))  (unless whiten: false)
 * ```
 *
 * Matches veRL `compute_gae_advantage_return` (`algorithm.adv_estimator=gae`) on valid tokens
 * when `criticLam` and `lengthAdaptiveAlpha` are unset. With γ = λ = 1 and no whitening,
 * `Â_t = Σ_{s≥t} r_s − V_t`, i.e. advantages = returns − values.
 *
 * Decoupled λ (VC-PPO arXiv 2503.01491, VAPO arXiv 2504.05118): `{ criticLam: 1, lam: 0.95 }`;
 * VAPO's length-adaptive actor: `{ criticLam: 1, lengthAdaptiveAlpha: 0.05 }` (see
 * {@link vapoLambda}). See {@link maskedWhiten} for the whitening.
 *
 * @example Usage
 * ```ts
 * import { fromRows, gae, toRows } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const out = gae({
 *   tokenRewards: fromRows([[0, 1, 0]]), // reward 1 on the last valid token
 *   values: fromRows([[0.5, 0.5, 0]]),
 *   responseMask: fromRows([[1, 1, 0]]),
 *   gamma: 1,
 *   lam: 1,
 *   whiten: false,
 * });
 * // t=1: δ = 1 + 0 − 0.5 = 0.5; t=0: δ = 0 + 0.5 − 0.5 = 0, Â = 0 + 0.5 = 0.5
 * assert.deepEqual(toRows(out.advantages, 3), [[0.5, 0.5, 0]]);
 * assert.deepEqual(toRows(out.returns, 3), [[1, 1, 0]]);
 * ```
 */
export function gae(input: GaeInput): AdvantageOutput {
  const owner = "gae";
  checkObject(owner, input, "{tokenRewards, values, responseMask, gamma?, lam?, ...}");
  const mask = checkMask(owner, "responseMask", input.responseMask);
  const rewards = checkTokens(owner, "tokenRewards", input.tokenRewards, mask);
  const values = checkTokens(owner, "values", input.values, mask);
  const gamma = checkNumber(owner, "gamma", input.gamma ?? 1, { min: 0, max: 1 });
  const lam = checkNumber(owner, "lam", input.lam ?? 1, { min: 0, max: 1 });
  const criticLam = checkNumber(owner, "criticLam", input.criticLam ?? lam, { min: 0, max: 1 });
  const alpha = input.lengthAdaptiveAlpha === undefined
    ? undefined
    : checkNumber(owner, "lengthAdaptiveAlpha", input.lengthAdaptiveAlpha, {
      min: 0,
      minExclusive: true,
    });
  const whiten = checkBoolean(owner, "whiten", input.whiten ?? true);

  const { batch, length } = mask;
  const lengths = alpha === undefined ? undefined : lengthsOf(mask);
  const actor = new Float64Array(batch * length);
  for (let i = 0; i < batch; i++) {
    const l = lengths ? lambdaFor(lengths[i]!, alpha!) : lam;
    scanRow(rewards.data, values.data, mask.data, i, length, gamma, l, actor);
  }
  let critic = actor;
  if (lengths !== undefined || criticLam !== lam) {
    critic = new Float64Array(batch * length);
    for (let i = 0; i < batch; i++) {
      scanRow(rewards.data, values.data, mask.data, i, length, gamma, criticLam, critic);
    }
  }
  const returns = new Float64Array(batch * length);
  for (let k = 0; k < returns.length; k++) {
    if (mask.data[k] === 1) returns[k] = critic[k]! + values.data[k]!;
  }
  const advantages = whiten ? whitenChecked(owner, { data: actor, batch, length }, mask) : actor;
  return { advantages, returns };
}

ESTIMATORS.register("gae", (x) =>
  gae({
    tokenRewards: x.tokenRewards,
    values: x.values ?? missing("gae", "values", "critic values [batch, length]"),
    responseMask: x.responseMask,
    ...pick(x, ["gamma", "lam", "criticLam", "lengthAdaptiveAlpha", "whiten"] as const),
  }));
