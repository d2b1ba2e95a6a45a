/**
 * Optimal Token Baseline (OTB, veRL `compute_optimal_token_baseline_advantage` and its
 * multi-turn form `compute_multi_turn_optimal_token_baseline_advantage`): instead of one
 * baseline per response, a baseline per time step, weighted by a proxy of each trajectory's
 * accumulated gradient variance. With `G_t` the reward-to-go, `π_t = exp(log π_old(y_t))`,
 * `Σπ²_t` the sum of squared probabilities over the vocabulary and `ρ_t` optional rollout IS
 * weights:
 *
 * ```
 * G_t = Σ_{s≥t} r_s·m_s                    (every position t)
 * w_t = (1 − 2π_t + Σπ²_t)·ρ_t²            (ρ = 1 without rollout IS weights)
 * W_t = Σ_{s≤t} w_s·m_s
 * B_t = Σ_{i∈g} G_i,t·W_i,t·m_i,t / (Σ_{i∈g} W_i,t·m_i,t + ε)     (groups of 2 or more; else 0)
 * A_t = (G_t − B_t)·m_t,   returns = G·m
 * ```
 *
 * - `optimal_token_baseline`: `t` is the absolute position in the padded row, and every row of a
 *   group counts in it (a fully masked row too).
 * - `tir_optimal_token_baseline`: each row's valid positions are first packed to the left
 *   (`t` counts valid tokens, so the turns of a multi-turn response line up), fully masked rows
 *   are left out of the groups and get advantage 0, and the advantages are put back on the valid
 *   positions.
 *
 * `handleZeroTail` (veRL `handle_zero_tail`, default true in both at the pinned commit): when one
 * row of a group is strictly the longest, its baseline is 0 from the second-longest length on
 * (nothing to compare its tail with). ε defaults to 1e-8 as in veRL.
 *
 * Design: inputs are only read at valid positions (`oldLogProbs`, `sumPiSquared`,
 * `rolloutIsWeights` may hold anything elsewhere); veRL multiplies them by the mask, which gives
 * the same numbers when they are finite. As every estimator of this package, both outputs are 0
 * at masked positions (veRL's `returns` keep the reward-to-go there).
 *
 * @module
 */

import { ESTIMATORS, needIndex, pick } from "./_estimators.ts";
import { groupsOf } from "./_group.ts";
import {
  checkBoolean,
  checkIndex,
  checkMask,
  checkNumber,
  checkObject,
  checkTokens,
  missing,
} from "./_validate.ts";
import type { ResolvedInput } from "./registry.ts";
import type { AdvantageOutput, GroupIndex, TokenMatrix } from "./types.ts";

/** Input of {@link optimalTokenBaseline} and {@link tirOptimalTokenBaseline}. */
export interface OptimalTokenBaselineInput {
  /** Token rewards `[batch, length]` (veRL `token_level_rewards`). */
  tokenRewards: TokenMatrix;
  /** Response mask `[batch, length]`. */
  responseMask: TokenMatrix;
  /** Group id per response (veRL `uid`). */
  index: GroupIndex;
  /** Log-probs of the sampled tokens under the policy that generated them (veRL `old_log_probs`). */
  oldLogProbs: TokenMatrix;
  /** Σ_v π(v)² per position (veRL `sum_pi_squared`, actor `calculate_sum_pi_squared`). */
  sumPiSquared: TokenMatrix;
  /** Rollout importance weights ρ per token (veRL `rollout_is_weights`); W is scaled by ρ². */
  rolloutIsWeights?: TokenMatrix;
  /** Zero the baseline of a strictly longest row past the second-longest length (default true). */
  handleZeroTail?: boolean;
  /** Added to the baseline's denominator (default 1e-8). */
  epsilon?: number;
}

interface Checked {
  rewards: TokenMatrix;
  mask: TokenMatrix;
  index: GroupIndex;
  w: Float64Array;
  handleZeroTail: boolean;
  epsilon: number;
}

function checkOtb(owner: string, input: OptimalTokenBaselineInput): Checked {
  checkObject(owner, input, "{tokenRewards, responseMask, index, oldLogProbs, sumPiSquared, ...}");
  const mask = checkMask(owner, "responseMask", input.responseMask);
  const rewards = checkTokens(owner, "tokenRewards", input.tokenRewards, mask);
  const index = checkIndex(owner, "index", input.index, mask.batch);
  if (input.oldLogProbs === undefined) missing(owner, "oldLogProbs", "log-probs of the old policy");
  if (input.sumPiSquared === undefined) {
    missing(owner, "sumPiSquared", "Σ_v π(v)² per position (veRL sum_pi_squared)");
  }
  const old = checkTokens(owner, "oldLogProbs", input.oldLogProbs, mask);
  const sps = checkTokens(owner, "sumPiSquared", input.sumPiSquared, mask);
  const rho = input.rolloutIsWeights === undefined
    ? null
    : checkTokens(owner, "rolloutIsWeights", input.rolloutIsWeights, mask);
  const handleZeroTail = checkBoolean(owner, "handleZeroTail", input.handleZeroTail ?? true);
  const epsilon = checkNumber(owner, "epsilon", input.epsilon ?? 1e-8, { min: 0 });
  const w = new Float64Array(mask.data.length);
  for (let k = 0; k < w.length; k++) {
    if (mask.data[k] !== 1) continue;
    let v = 1 - 2 * Math.exp(old.data[k]!) + sps.data[k]!;
    if (rho !== null) v *= rho.data[k]! * rho.data[k]!;
    w[k] = v;
  }
  return { rewards, mask, index, w, handleZeroTail, epsilon };
}

/** Reward-to-go `G` (every position) and cumulative weight `W` of checked inputs. */
function returnsAndWeights(c: Checked): { G: Float64Array; W: Float64Array } {
  const { batch, length } = c.mask;
  const G = new Float64Array(batch * length);
  const W = new Float64Array(batch * length);
  for (let i = 0; i < batch; i++) {
    let g = 0;
    for (let t = length - 1; t >= 0; t--) {
      const k = i * length + t;
      if (c.mask.data[k] === 1) g += c.rewards.data[k]!;
      G[k] = g;
    }
    let cw = 0;
    for (let t = 0; t < length; t++) {
      const k = i * length + t;
      cw += c.w[k]!; // 0 at masked positions
      W[k] = cw;
    }
  }
  return { G, W };
}

/**
 * The row of a group whose tail gets baseline 0 (`handle_zero_tail`), and from which position:
 * the unique longest row, from the second-longest length; null when there is none.
 */
function zeroTail(members: number[], lengths: number[]): { row: number; from: number } | null {
  const sorted = members.map((m) => lengths[m]!).sort((a, b) => a - b);
  const max = sorted[sorted.length - 1]!;
  const second = sorted[sorted.length - 2]!;
  const longest = members.filter((m) => lengths[m] === max);
  return longest.length === 1 && max > second ? { row: longest[0]!, from: second } : null;
}

/**
 * OTB advantages on absolute positions (veRL `optimal_token_baseline`; module doc).
 *
 * @example Usage
 * ```ts
 * import { fromRows, optimalTokenBaseline } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const mask = fromRows([[1, 1], [1, 1]]);
 * const out = optimalTokenBaseline({
 *   tokenRewards: fromRows([[0, 1], [0, 0]]),
 *   responseMask: mask,
 *   index: [0, 0],
 *   oldLogProbs: fromRows([[Math.log(0.5), Math.log(0.5)], [Math.log(0.5), Math.log(0.5)]]),
 *   sumPiSquared: fromRows([[0.5, 0.5], [0.5, 0.5]]),
 * });
 * // w = 1 − 1 + 0.5 = 0.5 everywhere, so W is the same for both rows: B_t is the mean of G_t
 * assert.deepEqual([...out.returns], [1, 1, 0, 0]);
 * assert.ok(Math.abs(out.advantages[0]! - 0.5) < 1e-7 && Math.abs(out.advantages[2]! + 0.5) < 1e-7);
 * ```
 */
export function optimalTokenBaseline(input: OptimalTokenBaselineInput): AdvantageOutput {
  const c = checkOtb("optimalTokenBaseline", input);
  const { batch, length } = c.mask;
  const { G, W } = returnsAndWeights(c);
  const lengths = Array.from({ length: batch }, (_, i) => {
    let n = 0;
    for (let t = 0; t < length; t++) n += c.mask.data[i * length + t]!;
    return n;
  });
  const B = new Float64Array(batch * length);
  for (const g of groupsOf(c.index)) {
    if (g.members.length === 1) continue;
    for (let t = 0; t < length; t++) {
      let num = 0;
      let den = 0;
      for (const i of g.members) {
        const k = i * length + t;
        const m = c.mask.data[k]!;
        num += G[k]! * W[k]! * m;
        den += W[k]! * m;
      }
      const b = num / (den + c.epsilon);
      for (const i of g.members) B[i * length + t] = b;
    }
    const tail = c.handleZeroTail ? zeroTail(g.members, lengths) : null;
    if (tail !== null) B.fill(0, tail.row * length + tail.from, (tail.row + 1) * length);
  }
  const advantages = new Float64Array(batch * length);
  for (let k = 0; k < advantages.length; k++) {
    if (c.mask.data[k] === 1) advantages[k] = G[k]! - B[k]!;
  }
  return { advantages, returns: masked(G, c.mask) };
}

/**
 * OTB advantages on packed valid positions (veRL `tir_optimal_token_baseline`, for multi-turn
 * responses whose tool outputs are masked; module doc).
 *
 * @example Usage
 * ```ts
 * import { fromRows, tirOptimalTokenBaseline } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const lp = Math.log(0.5);
 * const out = tirOptimalTokenBaseline({
 *   // row 0 has a masked tool output at position 1; packed, both rows have 2 valid tokens
 *   tokenRewards: fromRows([[0, 0, 1], [0, 0, 0]]),
 *   responseMask: fromRows([[1, 0, 1], [1, 1, 0]]),
 *   index: [0, 0],
 *   oldLogProbs: fromRows([[lp, 0, lp], [lp, lp, 0]]),
 *   sumPiSquared: fromRows([[0.5, 0, 0.5], [0.5, 0.5, 0]]),
 * });
 * // packed G: row 0 [1, 1], row 1 [0, 0]; equal weights: B = [0.5, 0.5]
 * assert.ok(Math.abs(out.advantages[2]! - 0.5) < 1e-7 && Math.abs(out.advantages[4]! + 0.5) < 1e-7);
 * assert.equal(out.advantages[1], 0); // the masked position
 * ```
 */
export function tirOptimalTokenBaseline(input: OptimalTokenBaselineInput): AdvantageOutput {
  const c = checkOtb("tirOptimalTokenBaseline", input);
  const { batch, length } = c.mask;
  const { G, W } = returnsAndWeights(c);
  // pack each row's valid positions to the left
  const positions: number[][] = [];
  for (let i = 0; i < batch; i++) {
    const p: number[] = [];
    for (let t = 0; t < length; t++) if (c.mask.data[i * length + t] === 1) p.push(t);
    positions.push(p);
  }
  const lengths = positions.map((p) => p.length);
  const width = Math.max(0, ...lengths);
  const at = (i: number, u: number, m: Float64Array) =>
    u < lengths[i]! ? m[i * length + positions[i]![u]!]! : 0;
  const baselines = new Float64Array(batch * width);
  const nonEmpty = c.index.map((id, i) => (lengths[i]! > 0 ? id : null));
  const groups = groupsOf(c.index).map((g) => g.members.filter((i) => nonEmpty[i] !== null))
    .filter((m) => m.length > 0);
  for (const members of groups) {
    if (members.length === 1) continue; // baseline 0: the advantage is the return
    for (let u = 0; u < width; u++) {
      let num = 0;
      let den = 0;
      for (const i of members) {
        const wv = at(i, u, W);
        num += at(i, u, G) * wv;
        den += wv;
      }
      const b = num / (den + c.epsilon);
      for (const i of members) baselines[i * width + u] = b;
    }
    const tail = c.handleZeroTail ? zeroTail(members, lengths) : null;
    if (tail !== null) baselines.fill(0, tail.row * width + tail.from, (tail.row + 1) * width);
  }
  const advantages = new Float64Array(batch * length);
  for (let i = 0; i < batch; i++) {
    positions[i]!.forEach((t, u) => {
      const k = i * length + t;
      advantages[k] = G[k]! - baselines[i * width + u]!;
    });
  }
  return { advantages, returns: masked(G, c.mask) };
}

/** `values·mask` (0 at masked positions). */
function masked(values: Float64Array, mask: TokenMatrix): Float64Array {
  return values.map((v, k) => (mask.data[k] === 1 ? v : 0));
}

function otbInput(key: string, x: ResolvedInput): OptimalTokenBaselineInput {
  return {
    tokenRewards: x.tokenRewards,
    responseMask: x.responseMask,
    index: needIndex(key, x),
    oldLogProbs: x.oldLogProbs ?? missing(key, "oldLogProbs", "log-probs of the old policy"),
    sumPiSquared: x.sumPiSquared ??
      missing(key, "sumPiSquared", "Σ_v π(v)² per position (veRL sum_pi_squared)"),
    ...pick(x, ["rolloutIsWeights", "handleZeroTail", "epsilon"] as const),
  };
}

ESTIMATORS.register(
  "optimal_token_baseline",
  (x) => optimalTokenBaseline(otbInput("optimal_token_baseline", x)),
);
ESTIMATORS.register(
  "tir_optimal_token_baseline",
  (x) => tirOptimalTokenBaseline(otbInput("tir_optimal_token_baseline", x)),
);
