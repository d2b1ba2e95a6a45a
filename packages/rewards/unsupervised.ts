/**
 * Unsupervised rewards, which need no reference answer: majority vote over a group (TTRL),
 * answer-cluster frequency (EMPO's simplest form), self-certainty (Intuitor) and negative
 * entropy (RENT) from the policy's own per-token log-probabilities.
 *
 * Design: the vote rewards are batched rewards that group samples by prompt (configurable) and
 * compare extracted final answers as normalised strings (trimmed, inner whitespace collapsed,
 * lower-cased, a trailing period dropped; pass `normalize` for more, e.g. a math canonicaliser).
 * The log-prob rewards read per-token distributions that the rollout engine attaches to the
 * input as `input.logprobs` (or that `options.logprobs` returns): one array per generated token
 * with either the full vocabulary's log-probs or only the top-k. With top-k rows, pass
 * `vocabSize`: the missing probability mass is spread evenly over the other `V − k` tokens. That
 * is the most uniform completion of the tail, so the top-k self-certainty is a lower bound and
 * the top-k entropy an upper bound of the exact values. These rewards are known to be hackable
 * and to collapse on weak base models; use them with care.
 *
 * @module
 */

import { checkFunction, checkName, checkNumber, checkOptions, show } from "./_check.ts";
import { extractFinalAnswer } from "./extract.ts";
import { defineBatchReward, defineReward } from "./define.ts";
import type { Reward, RewardInput, Row } from "./types.ts";

/** Per-token log-probabilities: one row per generated token (full vocabulary or top-k). */
export type TokenLogprobs = readonly ArrayLike<number>[];

/** An input that carries the policy's per-token log-probs (attached by the rollout engine). */
export interface RewardInputWithLogprobs<R extends Row = Row> extends RewardInput<R> {
  /** Per-token log-prob rows of the completion. */
  logprobs?: TokenLogprobs;
}

function defaultNormalize(answer: string): string {
  return answer.trim().replace(/\s+/g, " ").replace(/\.$/, "").toLowerCase();
}

/** Options of {@link majorityVoteReward}. */
export interface MajorityVoteOptions<R extends Row = Row> {
  /** Reads the final answer (default `extractFinalAnswer`: `<answer>` or `\boxed{}`). */
  extract?: (completion: string) => string | null;
  /** Canonicalises answers before comparing (default: trim, collapse spaces, lower-case). */
  normalize?: (answer: string) => string;
  /** Group key (default: the prompt). */
  groupBy?: (input: RewardInput<R>) => string;
  /**
   * `"majority"` (default, TTRL): 1 if the answer equals the group's most frequent answer;
   * `"frequency"` (EMPO-style): the share of the group giving the same answer.
   */
  mode?: "majority" | "frequency";
  /** Metric key (default `"majority_vote"`). */
  name?: string;
}

/**
 * TTRL's majority-vote pseudo-label reward (Zuo et al., arXiv 2504.16084): within each group of
 * completions for one prompt, the most frequent extracted answer is the pseudo-label and
 * `r_i = 1[ans(y_i) = majority]`. Ties go to the answer seen first. A completion without an
 * answer scores 0 and does not vote; a group where nobody answers scores 0 throughout. With
 * `mode: "frequency"`, `r_i = |{j : ans(y_j) = ans(y_i)}| / G` (`G` = group size).
 *
 * @example Usage
 * ```ts
 * import { majorityVoteReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const prompt = "What is 6 × 7?";
 * const inputs = ["42", "42", "41", "no idea"].map((a) => ({
 *   prompt,
 *   completion: `<answer>${a}</answer>`,
 *   row: {},
 * }));
 * const r = await scoreRewards([majorityVoteReward()], inputs);
 * assert.deepEqual(r.totals, [1, 1, 0, 0]);
 * ```
 */
export function majorityVoteReward<R extends Row = Row>(
  options?: MajorityVoteOptions<R>,
): Reward<R> {
  const owner = "majorityVoteReward";
  const opts = checkOptions<MajorityVoteOptions<R>>(
    owner,
    options,
    "{extract?, normalize?, groupBy?, mode?, name?}",
  );
  const extract = opts.extract === undefined
    ? extractFinalAnswer
    : checkFunction<(c: string) => string | null>(
      owner,
      "options.extract",
      opts.extract,
      "a function (completion) => string | null",
    );
  const normalize = opts.normalize === undefined
    ? defaultNormalize
    : checkFunction<(a: string) => string>(
      owner,
      "options.normalize",
      opts.normalize,
      "a function (answer) => string",
    );
  const groupBy = opts.groupBy === undefined
    ? (x: RewardInput<R>) => x.prompt
    : checkFunction<(x: RewardInput<R>) => string>(
      owner,
      "options.groupBy",
      opts.groupBy,
      "a function (input) => string",
    );
  const mode = opts.mode ?? "majority";
  if (mode !== "majority" && mode !== "frequency") {
    throw new TypeError(
      `${owner}: options.mode must be "majority" or "frequency", got ${show(mode)}`,
    );
  }
  const name = checkName(owner, "options.name", opts.name ?? "majority_vote");
  return defineBatchReward<R>(name, (inputs) => {
    const answers = inputs.map((x) => {
      const a = extract(x.completion);
      return a === null ? null : normalize(a);
    });
    const groups = new Map<string, number[]>();
    inputs.forEach((x, i) => {
      const key = String(groupBy(x));
      const g = groups.get(key);
      if (g) g.push(i);
      else groups.set(key, [i]);
    });
    const out = inputs.map(() => 0);
    for (const members of groups.values()) {
      const votes = new Map<string, number>();
      for (const i of members) {
        const a = answers[i];
        if (a !== null && a !== undefined) votes.set(a, (votes.get(a) ?? 0) + 1);
      }
      let best: string | null = null;
      for (const [a, n] of votes) if (best === null || n > votes.get(best)!) best = a;
      for (const i of members) {
        const a = answers[i];
        if (a === null || a === undefined) continue;
        out[i] = mode === "majority" ? (a === best ? 1 : 0) : votes.get(a)! / members.length;
      }
    }
    return out;
  });
}

function tokenRows(owner: string, logprobs: unknown): TokenLogprobs {
  if (!Array.isArray(logprobs)) {
    throw new TypeError(
      `${owner}: logprobs must be an array with one array of log-probs per token, got ${
        show(logprobs)
      }; attach input.logprobs in the rollout engine or pass options.logprobs`,
    );
  }
  return logprobs as TokenLogprobs;
}

/** Per-token (log Σ_known p, Σ_known log p, Σ_known p log p, k) with validation. */
function rowStats(owner: string, row: ArrayLike<number>, t: number) {
  let mass = 0, sumLog = 0, plogp = 0;
  const k = row.length;
  if (k === 0) {
    throw new RangeError(
      `${owner}: logprobs[${t}] is empty; each token needs at least one log-prob`,
    );
  }
  for (let j = 0; j < k; j++) {
    const lp = row[j]!;
    if (typeof lp !== "number" || Number.isNaN(lp) || lp > 1e-6) {
      throw new RangeError(
        `${owner}: logprobs[${t}][${j}] is ${show(lp)}; log-probabilities must be numbers <= 0`,
      );
    }
    const p = Math.exp(lp);
    mass += p;
    sumLog += lp;
    if (p > 0) plogp += p * lp;
  }
  return { mass, sumLog, plogp, k };
}

function vocabOf(owner: string, vocabSize: number | undefined, k: number, t: number): number {
  const v = vocabSize ?? k;
  if (v < k) {
    throw new RangeError(
      `${owner}: logprobs[${t}] has ${k} entries but vocabSize is ${v}; vocabSize must be >= the row length`,
    );
  }
  return v;
}

/** Options of {@link selfCertainty} and {@link tokenEntropy}. */
export interface LogprobOptions {
  /** Vocabulary size `V` (integer >= row length). Omit when rows hold the full vocabulary. */
  vocabSize?: number;
}

/**
 * Self-certainty (Kang et al.; Intuitor, Zhao et al., arXiv 2505.19590): the mean over tokens
 * of `KL(U ‖ p_t) = −log V − (1/V) Σ_j log p_t(j)`. 0 for a uniform distribution, larger when
 * the model is more certain. With top-k rows the tail is spread evenly (a lower bound; see the
 * module doc). An empty completion scores 0.
 *
 * @example Usage
 * ```ts
 * import { selfCertainty } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const uniform = [Math.log(0.25), Math.log(0.25), Math.log(0.25), Math.log(0.25)];
 * assert.ok(Math.abs(selfCertainty([uniform])) < 1e-12);
 * const peaked = [Math.log(0.97), Math.log(0.01), Math.log(0.01), Math.log(0.01)];
 * assert.ok(selfCertainty([peaked]) > 1);
 * ```
 */
export function selfCertainty(logprobs: TokenLogprobs, options?: LogprobOptions): number {
  const owner = "selfCertainty";
  const rows = tokenRows(owner, logprobs);
  const opts = checkOptions<LogprobOptions>(owner, options, "{vocabSize?}");
  if (opts.vocabSize !== undefined) {
    checkNumber(owner, "options.vocabSize", opts.vocabSize, { min: 1, integer: true });
  }
  if (rows.length === 0) return 0;
  let total = 0;
  rows.forEach((row, t) => {
    const { mass, sumLog, k } = rowStats(owner, row, t);
    const V = vocabOf(owner, opts.vocabSize, k, t);
    let sum = sumLog;
    if (V > k) {
      const rest = Math.max(1 - mass, 1e-12); // the unseen mass, spread evenly
      sum += (V - k) * Math.log(rest / (V - k));
    }
    total += -Math.log(V) - sum / V;
  });
  return total / rows.length;
}

/**
 * Mean per-token entropy `H_t = −Σ_j p_t(j) log p_t(j)` in nats. With top-k rows the tail is
 * spread evenly (an upper bound; see the module doc). An empty completion scores 0.
 *
 * @example Usage
 * ```ts
 * import { tokenEntropy } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const coin = [Math.log(0.5), Math.log(0.5)];
 * assert.ok(Math.abs(tokenEntropy([coin, coin]) - Math.log(2)) < 1e-12);
 * // top-1 of a 3-token vocabulary: 0.5 known, 0.25 + 0.25 assumed for the rest
 * assert.ok(Math.abs(tokenEntropy([[Math.log(0.5)]], { vocabSize: 3 }) - 1.5 * Math.log(2)) < 1e-12);
 * ```
 */
export function tokenEntropy(logprobs: TokenLogprobs, options?: LogprobOptions): number {
  const owner = "tokenEntropy";
  const rows = tokenRows(owner, logprobs);
  const opts = checkOptions<LogprobOptions>(owner, options, "{vocabSize?}");
  if (opts.vocabSize !== undefined) {
    checkNumber(owner, "options.vocabSize", opts.vocabSize, { min: 1, integer: true });
  }
  if (rows.length === 0) return 0;
  let total = 0;
  rows.forEach((row, t) => {
    const { mass, plogp, k } = rowStats(owner, row, t);
    const V = vocabOf(owner, opts.vocabSize, k, t);
    let h = -plogp;
    const rest = 1 - mass;
    if (V > k && rest > 1e-12) h += -rest * Math.log(rest / (V - k));
    total += h;
  });
  return total / rows.length;
}

/** Options of {@link selfCertaintyReward} and {@link negativeEntropyReward}. */
export interface LogprobRewardOptions<R extends Row = Row> extends LogprobOptions {
  /** Reads the per-token log-probs (default: `input.logprobs`). */
  logprobs?: (input: RewardInputWithLogprobs<R>) => TokenLogprobs;
  /** Metric key (default `"self_certainty"` / `"neg_entropy"`). */
  name?: string;
}

function logprobReward<R extends Row>(
  owner: string,
  defaultName: string,
  options: LogprobRewardOptions<R> | undefined,
  f: (rows: TokenLogprobs, o: LogprobOptions) => number,
): Reward<R> {
  const opts = checkOptions<LogprobRewardOptions<R>>(
    owner,
    options,
    "{vocabSize?, logprobs?, name?}",
  );
  const read = opts.logprobs === undefined
    ? (x: RewardInputWithLogprobs<R>) => x.logprobs as TokenLogprobs
    : checkFunction<(x: RewardInputWithLogprobs<R>) => TokenLogprobs>(
      owner,
      "options.logprobs",
      opts.logprobs,
      "a function (input) => per-token log-prob arrays",
    );
  const inner: LogprobOptions = opts.vocabSize === undefined ? {} : { vocabSize: opts.vocabSize };
  if (opts.vocabSize !== undefined) {
    checkNumber(owner, "options.vocabSize", opts.vocabSize, { min: 1, integer: true });
  }
  const name = checkName(owner, "options.name", opts.name ?? defaultName);
  return defineReward<R>(name, (input) => {
    const rows = read(input as RewardInputWithLogprobs<R>);
    if (rows === undefined) {
      throw new TypeError(
        `${owner}: input.logprobs is missing; attach the per-token log-probs to each input or pass options.logprobs`,
      );
    }
    return f(rows, inner);
  });
}

/**
 * Intuitor's reward: the self-certainty of the completion (see {@link selfCertainty}), read
 * from `input.logprobs` by default.
 *
 * @example Usage
 * ```ts
 * import { scoreRewards, selfCertaintyReward } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const sure = { prompt: "", completion: "a", row: {}, logprobs: [[Math.log(0.9)]] };
 * const unsure = { prompt: "", completion: "b", row: {}, logprobs: [[Math.log(0.2)]] };
 * const r = await scoreRewards([selfCertaintyReward({ vocabSize: 10 })], [sure, unsure]);
 * assert.ok(r.totals[0]! > r.totals[1]!);
 * ```
 */
export function selfCertaintyReward<R extends Row = Row>(
  options?: LogprobRewardOptions<R>,
): Reward<R> {
  return logprobReward("selfCertaintyReward", "self_certainty", options, selfCertainty);
}

/**
 * RENT / EM-RL's reward: the negative mean token entropy, `−(1/T) Σ_t H_t` (see
 * {@link tokenEntropy}), read from `input.logprobs` by default.
 *
 * @example Usage
 * ```ts
 * import { negativeEntropyReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const coin = { prompt: "", completion: "", row: {}, logprobs: [[Math.log(0.5), Math.log(0.5)]] };
 * const r = await scoreRewards([negativeEntropyReward()], [coin]);
 * assert.ok(Math.abs(r.totals[0]! + Math.log(2)) < 1e-12);
 * ```
 */
export function negativeEntropyReward<R extends Row = Row>(
  options?: LogprobRewardOptions<R>,
): Reward<R> {
  return logprobReward(
    "negativeEntropyReward",
    "neg_entropy",
    options,
    (rows, o) => 0 - tokenEntropy(rows, o),
  );
}
