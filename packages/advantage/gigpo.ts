/**
 * GiGPO, Group-in-Group Policy Optimization (Feng et al., "Group-in-Group Policy Optimization
 * for LLM Agent Training", arXiv 2505.10978): turn-level advantages for multi-turn agent
 * episodes. Each turn's advantage is an episode-level group-relative advantage plus ω times a
 * step-level one, computed among the turns (of the same prompt's episodes) that acted from the
 * same environment state, the paper's *anchor state* groups:
 *
 * ```
 * A(i, t) = A_E(i) + ω · A_S(i, t)
 * A_E(i)    = norm(R_i;    episode rewards of the group of i)       (paper Eq. 3)
 * G_{i,t}   = r_{i,t} + γ · G_{i,t+1},  G past the last turn = 0      (Eq. 5)
 * A_S(i, t) = norm(G_{i,t}; returns of the turns of the same group whose state equals s_{i,t})
 *                                                                     (Eqs. 6, 7)
 * norm(x; X) = x − mean(X)                            mode "mean_norm"      (F_norm = 1)
 * norm(x; X) = (x − mean(X)) / (std(X) + ε)           mode "mean_std_norm"  (F_norm = std)
 * ```
 *
 * Numbers follow verl-agent's `gigpo/core_gigpo.py` (`compute_gigpo_outcome_advantage`,
 * `episode_norm_reward`, `build_step_group`, `step_norm_reward`, and
 * `compute_step_discounted_returns` for `G`), where every batch row is one step of one
 * trajectory. Here a row is a whole response and its turns are given explicitly.
 *
 * Design decisions:
 *
 * - **Turns are explicit.** Per response, `turns[i]` lists its turns in time order: `state`,
 *   a canonical string key of the environment state the turn acted from (e.g. the observation
 *   text; verl-agent's `anchor_obs`), an optional `reward`, and `[start, end)`, the columns of
 *   the policy's tokens of that turn. Spans must be in order and must not overlap; every
 *   column where `responseMask` is 1 must lie in a span (observation tokens between turns are
 *   masked by the caller). A span may be empty (a turn whose tokens were all truncated still
 *   counts as a step, as a verl-agent row does).
 * - **Turn rewards.** A turn without `reward` has reward 0, except the last turn, whose reward
 *   defaults to `R_i` minus the rewards given on the other turns, so the turn rewards sum to the
 *   episode reward as in verl-agent (whose `episode_rewards` is the sum of the step `rewards`).
 *   With no turn rewards at all (the sparse case) the last turn carries `R_i`, so
 *   `G_{i,t} = γ^{T−1−t} R_i`.
 * - **Episode statistics are over turns** (`episodeWeighting: "turn"`, default): verl-agent's
 *   `episode_norm_reward` (`compute_mean_std_cross_steps=True`, not configurable there) puts
 *   every step row of a group into the mean and std, so an episode of `T` turns counts `T`
 *   times. `episodeWeighting: "episode"` counts each episode once, as the paper's Eq. 3 (and
 *   verl-agent with that flag False).
 * - **Singleton rules are verl-agent's**: an episode group with a single entry gets mean 0 and
 *   std 1 (its advantage is `R_i`, or `R_i/(1 + ε)`), as veRL GRPO; a step group with a single
 *   turn gets mean = its own return, so its step advantage is exactly 0.
 * - **std** is the unbiased (Bessel-corrected) std, `torch.std`; ε is added to it, not inside
 *   the square root. Means are shifted by the group's first value, so equal values give an
 *   advantage of exactly 0 (never NaN, even with ε = 0).
 * - **Anchor grouping is within a prompt group**: step groups are keyed by (`index[i]`,
 *   `state`), as `build_step_group` clusters identical observations inside each `uid`; a state
 *   an episode revisits joins the same step group twice. Only exact equality is supported
 *   (verl-agent's optional `enable_similarity` fuzzy matching is not).
 * - **Defaults**: ω = 1, mode `"mean_norm"`, ε = 1e-6 (verl-agent's
 *   `algorithm.gigpo.step_advantage_w`, `algorithm.gigpo.mode`, `epsilon`), γ = 0.95 (every
 *   verl-agent GiGPO example script sets `algorithm.gamma=0.95`; its YAML default is 1.0).
 * - **Output**: `A(i, t)` on every token of turn `t` of response `i` where the mask is 1, 0
 *   elsewhere; `returns` equals `advantages`, as verl-agent returns `(scores, scores)`.
 *
 * @module
 */

import { ESTIMATORS, outcomeOf, pick } from "./_estimators.ts";
import { checkChoice, checkNumber, checkOutcome, missing, show } from "./_validate.ts";
import { statsOf } from "./_group.ts";
import type { AdvantageOutput, GroupIndex, TokenMatrix } from "./types.ts";

/**
 * GiGPO's normalisation of both levels (verl-agent `algorithm.gigpo.mode`): `x − μ`
 * (`"mean_norm"`, the paper's F_norm = 1) or `(x − μ)/(σ + ε)` (`"mean_std_norm"`, F_norm = std).
 */
export type GigpoMode = "mean_norm" | "mean_std_norm";

/**
 * Who counts once in GiGPO's episode-level mean and std: each turn (`"turn"`, verl-agent) or
 * each episode (`"episode"`, the paper's Eq. 3).
 */
export type EpisodeWeighting = "turn" | "episode";

/** One turn of a response: the state it acted from, its reward and its token span. */
export interface GigpoTurn {
  /** Canonical key of the environment state the turn acted from (verl-agent `anchor_obs`). */
  readonly state: string;
  /** The turn's reward (default 0; the last turn's default is the rest of the episode reward). */
  readonly reward?: number;
  /** First column of the turn's policy tokens in the response row. */
  readonly start: number;
  /** One past the last column of the turn's policy tokens (`start <= end <= length`). */
  readonly end: number;
}

/** Input of {@link gigpo}. */
export interface GigpoInput {
  /** Episode reward `R_i`, one per response. */
  rewards: ArrayLike<number>;
  /** Response mask `[batch, length]`; 0 on padding and on observation tokens between turns. */
  responseMask: TokenMatrix;
  /** Group id per response (verl-agent `uid`): the episodes of one task/prompt. */
  index: GroupIndex;
  /** Per response, its turns in time order (at least one each). */
  turns: readonly (readonly GigpoTurn[])[];
  /** Discount γ of the turn returns, in [0, 1] (default 0.95). */
  gamma?: number;
  /** Weight ω >= 0 of the step-level advantage (default 1, verl-agent `step_advantage_w`). */
  omega?: number;
  /** Normalisation of both levels (default `"mean_norm"`, verl-agent `algorithm.gigpo.mode`). */
  mode?: GigpoMode;
  /** Added to the std in `"mean_std_norm"` (default 1e-6). */
  epsilon?: number;
  /** Who counts once in the episode mean and std (default `"turn"`, as verl-agent). */
  episodeWeighting?: EpisodeWeighting;
}

const MODES: readonly GigpoMode[] = ["mean_norm", "mean_std_norm"];
const WEIGHTINGS: readonly EpisodeWeighting[] = ["turn", "episode"];

/** A checked turn: its reward resolved, its span validated. */
interface Turn {
  state: string;
  reward: number;
  start: number;
  end: number;
}

function checkTurns(owner: string, turns: unknown, mask: TokenMatrix): Turn[][] {
  const { batch, length, data } = mask;
  if (!Array.isArray(turns)) {
    throw new TypeError(
      `${owner}: turns must be an array of ${batch} turn lists ({state, reward?, start, end}[] per response), got ${
        show(turns)
      }`,
    );
  }
  if (turns.length !== batch) {
    throw new RangeError(
      `${owner}: turns has ${turns.length} entries but responseMask has batch ${batch}; they must match`,
    );
  }
  const out: Turn[][] = [];
  for (let i = 0; i < batch; i++) {
    const row: unknown = turns[i];
    if (!Array.isArray(row) || row.length === 0) {
      throw new RangeError(
        `${owner}: turns[${i}] must be a non-empty array of turns {state, reward?, start, end}, got ${
          show(row)
        }`,
      );
    }
    const checked: Turn[] = [];
    let prevEnd = 0;
    for (let t = 0; t < row.length; t++) {
      const field = `turns[${i}][${t}]`;
      const turn: unknown = row[t];
      if (typeof turn !== "object" || turn === null || Array.isArray(turn)) {
        throw new TypeError(
          `${owner}: ${field} must be a turn {state, reward?, start, end}, got ${show(turn)}`,
        );
      }
      const { state, reward, start, end } = turn as Record<string, unknown>;
      if (typeof state !== "string") {
        throw new TypeError(
          `${owner}: ${field}.state must be a string (a canonical key of the environment state), got ${
            show(state)
          }`,
        );
      }
      const s = checkNumber(owner, `${field}.start`, start, { min: 0, max: length, integer: true });
      const e = checkNumber(owner, `${field}.end`, end, { min: 0, max: length, integer: true });
      if (e < s) {
        throw new RangeError(
          `${owner}: ${field} has end ${e} < start ${s}; a turn span [start, end) needs start <= end`,
        );
      }
      if (s < prevEnd) {
        throw new RangeError(
          `${owner}: ${field} starts at ${s}, before turns[${i}][${
            t - 1
          }] ends (${prevEnd}); turn spans must be in order and must not overlap`,
        );
      }
      const r = reward === undefined ? NaN : checkNumber(owner, `${field}.reward`, reward, {});
      checked.push({ state, reward: r, start: s, end: e });
      prevEnd = e;
    }
    // every valid token must belong to a turn
    let t = 0;
    for (let c = 0; c < length; c++) {
      while (t < checked.length && checked[t]!.end <= c) t++;
      const inside = t < checked.length && checked[t]!.start <= c;
      if (!inside && data[i * length + c] === 1) {
        throw new RangeError(
          `${owner}: responseMask[${i}, ${c}] is 1 but no turn of turns[${i}] covers column ${c}; ` +
            `mask observation tokens out (0) or extend a turn span over it`,
        );
      }
    }
    out.push(checked);
  }
  return out;
}

/** `n / d`, or 0 when `d` is 0 (only possible with ε = 0, where `n` is then 0 too). */
function safeDiv(n: number, d: number): number {
  return d === 0 ? 0 : n / d;
}

/**
 * GiGPO advantages for multi-turn episodes: on every valid token of turn `t` of response `i`,
 * `A_E(i) + ω·A_S(i, t)`, the episode-level group-relative advantage plus ω times the
 * step-level advantage of the turn's discounted return `G_{i,t}` among the turns of the same
 * prompt group that acted from the same `state`. Matches verl-agent
 * `compute_gigpo_outcome_advantage` (`algorithm.adv_estimator=gigpo`,
 * `algorithm.gigpo.step_advantage_w`, `algorithm.gigpo.mode`, `algorithm.gamma`) with step
 * returns from `compute_step_discounted_returns`; see the module documentation for the design
 * decisions. Paper: arXiv 2505.10978.
 *
 * @example Usage
 * ```ts
 * import { fromRows, gigpo } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * // One task, two episodes from the same start state "s0". Columns: [turn 1 | obs | turn 2].
 * const { advantages } = gigpo({
 *   rewards: [1, 0],
 *   responseMask: fromRows([[1, 0, 1], [1, 0, 1]]),
 *   index: ["task", "task"],
 *   turns: [
 *     [{ state: "s0", start: 0, end: 1 }, { state: "s1", start: 2, end: 3 }],
 *     [{ state: "s0", start: 0, end: 1 }, { state: "s2", start: 2, end: 3 }],
 *   ],
 *   gamma: 0.5,
 * });
 * // A_E = R − mean over the 4 turn rows = ±0.5.
 * // Step groups: {s0, s0} with returns G = 0.5·1 = 0.5 and 0 (mean 0.25) → ±0.25;
 * // s1 and s2 are singleton groups → 0.
 * assert.deepEqual([...advantages], [0.75, 0, 0.5, -0.75, 0, -0.5]);
 * ```
 */
export function gigpo(input: GigpoInput): AdvantageOutput {
  const owner = "gigpo";
  const { rewards, mask, index } = checkOutcome(owner, input);
  const gamma = checkNumber(owner, "gamma", input.gamma ?? 0.95, { min: 0, max: 1 });
  const omega = checkNumber(owner, "omega", input.omega ?? 1, { min: 0 });
  const mode = checkChoice(owner, "mode", input.mode ?? "mean_norm", MODES);
  const epsilon = checkNumber(owner, "epsilon", input.epsilon ?? 1e-6, { min: 0 });
  const weighting = checkChoice(
    owner,
    "episodeWeighting",
    input.episodeWeighting ?? "turn",
    WEIGHTINGS,
  );
  const turns = checkTurns(owner, input.turns, mask);
  const batch = mask.batch;
  const norm = (x: number, mean: number, std: number) =>
    mode === "mean_norm" ? x - mean : safeDiv(x - mean, std + epsilon);

  // Flatten the turns into verl-agent's one-row-per-step layout.
  const rowReturn: number[] = [];
  const rowEpisodeReward: number[] = [];
  const rowGroup: (string | number)[] = [];
  const rowStepGroup: number[] = [];
  const stepIds = new Map<string | number, Map<string, number>>();
  const firstRow: number[] = [];
  let nextId = 0;
  for (let i = 0; i < batch; i++) {
    const list = turns[i]!;
    const T = list.length;
    let given = 0;
    for (let t = 0; t < T - 1; t++) given += Number.isNaN(list[t]!.reward) ? 0 : list[t]!.reward;
    const r = (t: number) => {
      const v = list[t]!.reward;
      if (!Number.isNaN(v)) return v;
      return t === T - 1 ? rewards[i]! - given : 0;
    };
    const returns = new Array<number>(T);
    let g = 0;
    for (let t = T - 1; t >= 0; t--) returns[t] = g = r(t) + gamma * g;
    const key = index[i]!;
    let states = stepIds.get(key);
    if (!states) stepIds.set(key, states = new Map());
    firstRow.push(rowReturn.length);
    for (let t = 0; t < T; t++) {
      const state = list[t]!.state;
      let id = states.get(state);
      if (id === undefined) {
        id = nextId++;
        states.set(state, id);
      }
      rowReturn.push(returns[t]!);
      rowEpisodeReward.push(rewards[i]!);
      rowGroup.push(key);
      rowStepGroup.push(id);
    }
  }

  // Episode level: one scalar per response.
  const episode = new Float64Array(batch);
  const groupStats = weighting === "turn"
    ? statsOf(rowEpisodeReward, rowGroup)
    : statsOf(rewards, index);
  const byKey = new Map<string | number, { mean: number; std: number }>();
  for (const g of groupStats) {
    byKey.set(g.key, g.count === 1 ? { mean: 0, std: 1 } : { mean: g.mean, std: g.std });
  }
  for (let i = 0; i < batch; i++) {
    const s = byKey.get(index[i]!)!;
    episode[i] = norm(rewards[i]!, s.mean, s.std);
  }

  // Step level: one scalar per turn row.
  const step = new Float64Array(rowReturn.length);
  for (const g of statsOf(rowReturn, rowStepGroup)) {
    if (g.count === 1) continue; // mean = its own return: exactly 0
    for (const k of g.members) step[k] = norm(rowReturn[k]!, g.mean, g.std);
  }

  const { length, data } = mask;
  const advantages = new Float64Array(batch * length);
  for (let i = 0; i < batch; i++) {
    const list = turns[i]!;
    const a = episode[i]!;
    for (let t = 0; t < list.length; t++) {
      const value = a + omega * step[firstRow[i]! + t]!;
      const { start, end } = list[t]!;
      for (let c = i * length + start; c < i * length + end; c++) {
        if (data[c] === 1) advantages[c] = value;
      }
    }
  }
  return { advantages, returns: advantages.slice() };
}

ESTIMATORS.register("gigpo", (x) =>
  gigpo({
    ...outcomeOf("gigpo", x),
    turns: x.turns ??
      missing("gigpo", "turns", "each response's turns {state, reward?, start, end}[]"),
    ...pick(x, ["gamma", "omega", "epsilon", "episodeWeighting"] as const),
    ...(x.gigpoMode === undefined ? {} : { mode: x.gigpoMode }),
  }));
