/**
 * Dynamic sampling (DAPO, arXiv 2503.14476 §3.2) and accuracy-band filtering (PRIME, arXiv
 * 2502.01456).
 *
 * Design: a group whose rewards all equal each other has zero group-relative advantage and
 * contributes no gradient, so {@link dynamicSample} drops it and keeps generating until the batch
 * holds `batchGroups` informative groups, as veRL's `algorithm.filter_groups` does
 * (`max_num_gen_batches` is `maxRounds` here). It never returns a zero-variance group. When the
 * batch cannot be filled (the round cap is hit or the prompt source runs dry) it does not throw:
 * it returns what it has with `complete: false` and a `reason`, and the caller decides whether to
 * train on a short batch (veRL raises instead). Informative groups beyond `batchGroups` are
 * returned as `surplus` rather than discarded, and dropped groups are returned too, since an
 * all-correct group is exactly the signal a pass-rate tracker needs. Prompts are pulled from the
 * source only as they are generated, never read ahead, so an iterator passed in continues exactly
 * after the last prompt used. Errors from `generate` propagate unchanged.
 *
 * @module
 */

import { checkFunction, checkNumber, checkRewards, checkUnit, show } from "./_args.ts";
import { passRate } from "./pass_rate.ts";

/** A group with one reward per sample. */
export interface ScoredGroup {
  /** Sequence rewards, one per sample of the group. */
  rewards: ArrayLike<number>;
}

/**
 * True when the group's values are not all equal: `max − min > tolerance` (default 0, i.e. any
 * difference; veRL's `filter_groups` keeps a group when its metric's std is > 0).
 *
 * @example Usage
 * ```ts
 * import { hasRewardVariance } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(hasRewardVariance([1, 1, 1, 1]), false); // all correct: no signal
 * assert.equal(hasRewardVariance([0, 0, 1, 0]), true);
 * assert.equal(hasRewardVariance([0.5, 0.5000001], 1e-3), false);
 * ```
 */
export function hasRewardVariance(rewards: ArrayLike<number>, tolerance = 0): boolean {
  const rs = checkRewards("hasRewardVariance", "rewards", rewards);
  checkNumber("hasRewardVariance", "tolerance", tolerance, { min: 0 });
  if (rs.length < 2) return false;
  let min = Infinity;
  let max = -Infinity;
  for (const r of rs) {
    if (r < min) min = r;
    if (r > max) max = r;
  }
  return max - min > tolerance;
}

/** Options of {@link filterGroups}. */
export interface FilterOptions<G> {
  /** The values whose variance decides (default: `group.rewards`; veRL `filter_groups.metric`). */
  metric?: (group: G) => ArrayLike<number>;
  /** Values closer than this count as equal (default 0). */
  tolerance?: number;
}

/** The result of {@link filterGroups}. */
export interface FilterResult<G> {
  /** Groups with non-zero variance, in input order. */
  kept: G[];
  /** Zero-variance groups, in input order. */
  dropped: G[];
  /** `dropped / total` (0 for no groups). */
  filteredFraction: number;
}

/**
 * Splits groups into informative (non-zero reward variance) and zero-variance ones.
 *
 * @example Usage
 * ```ts
 * import { filterGroups } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const { kept, dropped, filteredFraction } = filterGroups([
 *   { uid: "a", rewards: [1, 1] },
 *   { uid: "b", rewards: [0, 1] },
 * ]);
 * assert.deepEqual(kept.map((g) => g.uid), ["b"]);
 * assert.equal(dropped.length, 1);
 * assert.equal(filteredFraction, 0.5);
 * ```
 */
export function filterGroups<G extends ScoredGroup>(
  groups: readonly G[],
  options: FilterOptions<G> = {},
): FilterResult<G> {
  const metric = options.metric ?? ((g: G) => g.rewards);
  const tolerance = options.tolerance ?? 0;
  const kept: G[] = [];
  const dropped: G[] = [];
  for (const g of groups) (hasRewardVariance(metric(g), tolerance) ? kept : dropped).push(g);
  return {
    kept,
    dropped,
    filteredFraction: groups.length === 0 ? 0 : dropped.length / groups.length,
  };
}

/** Options of {@link filterByAccuracy}. */
export interface AccuracyBandOptions {
  /** Lowest pass rate kept (inclusive), e.g. 0.2 (PRIME). */
  low: number;
  /** Highest pass rate kept (inclusive), e.g. 0.8 (PRIME). */
  high: number;
  /** A reward `≥` this passes (default 0.5). */
  successThreshold?: number;
}

/**
 * Keeps the groups whose pass rate is in `[low, high]` (PRIME's online filter keeps accuracy in
 * [0.2, 0.8]). For pre-rollout filtering on tracked rates use
 * {@link PassRateTracker.inBand}.
 *
 * @example Usage
 * ```ts
 * import { filterByAccuracy } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const groups = [
 *   { uid: "easy", rewards: [1, 1, 1, 1, 1] }, // 1.0
 *   { uid: "mid", rewards: [1, 0, 1, 0, 0] }, // 0.4
 *   { uid: "hard", rewards: [0, 0, 0, 0, 0] }, // 0.0
 * ];
 * const kept = filterByAccuracy(groups, { low: 0.2, high: 0.8 });
 * assert.deepEqual(kept.map((g) => g.uid), ["mid"]);
 * ```
 */
export function filterByAccuracy<G extends ScoredGroup>(
  groups: readonly G[],
  options: AccuracyBandOptions,
): G[] {
  const owner = "filterByAccuracy";
  const low = checkUnit(owner, "low", options.low);
  const high = checkUnit(owner, "high", options.high);
  if (low > high) throw new RangeError(`${owner}: low (${low}) must be <= high (${high})`);
  const threshold = options.successThreshold ?? 0.5;
  return groups.filter((g) => {
    const p = passRate(g.rewards, threshold);
    return p >= low && p <= high;
  });
}

/** Why a dynamic-sampling run stopped. */
export type DynamicStopReason = "full" | "max_rounds" | "prompts_exhausted";

/** Counters of a dynamic-sampling run. */
export interface DynamicSampleStats {
  /** Generation rounds used (calls to `generate`). */
  rounds: number;
  /** Prompts pulled from the source (all of them were generated). */
  promptsConsumed: number;
  /** Groups generated. */
  groupsGenerated: number;
  /** Samples generated (sum of group sizes). */
  samplesGenerated: number;
  /** Informative groups (returned in `groups` plus `surplus`). */
  groupsKept: number;
  /** Zero-variance groups dropped. */
  groupsDropped: number;
  /** `groupsDropped / groupsGenerated` (0 when nothing was generated). */
  filteredFraction: number;
}

/** The result of {@link dynamicSample} and {@link DynamicBatch.result}. */
export interface DynamicSampleResult<G> {
  /** At most `batchGroups` groups, none with zero variance, in generation order. */
  groups: G[];
  /** True when `groups.length === batchGroups`. */
  complete: boolean;
  /** `"full"` when complete, else why it stopped short. */
  reason: DynamicStopReason;
  /** Informative groups generated beyond `batchGroups` (veRL drops these). */
  surplus: G[];
  /** The zero-variance groups that were filtered out. */
  dropped: G[];
  /** Counters. */
  stats: DynamicSampleStats;
}

/** Options of {@link DynamicBatch}. */
export interface DynamicBatchOptions<G> extends FilterOptions<G> {
  /** Informative groups wanted (veRL `data.train_batch_size`). */
  batchGroups: number;
  /** Cap on generation rounds (veRL `filter_groups.max_num_gen_batches`); `Infinity`: none. */
  maxRounds: number;
}

/**
 * The bookkeeping of dynamic sampling without the generation loop, for callers that drive
 * generation themselves (e.g. an async rollout service): offer each round's groups, read
 * `needed`, stop when `done`.
 *
 * @example Usage
 * ```ts
 * import { DynamicBatch } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const batch = new DynamicBatch({ batchGroups: 2, maxRounds: 3 });
 * batch.addRound([{ rewards: [1, 1] }, { rewards: [0, 1] }]);
 * assert.equal(batch.needed, 1);
 * batch.addRound([{ rewards: [0, 0] }, { rewards: [1, 0] }, { rewards: [0, 1] }]);
 * const r = batch.result();
 * assert.equal(r.complete, true);
 * assert.equal(r.groups.length, 2);
 * assert.equal(r.surplus.length, 1);
 * assert.equal(r.stats.filteredFraction, 2 / 5);
 * ```
 */
export class DynamicBatch<G extends ScoredGroup> {
  /** Informative groups wanted. */
  readonly batchGroups: number;
  /** Cap on generation rounds. */
  readonly maxRounds: number;
  #metric: (group: G) => ArrayLike<number>;
  #tolerance: number;
  #kept: G[] = [];
  #dropped: G[] = [];
  #rounds = 0;
  #prompts = 0;
  #samples = 0;
  #exhausted = false;

  /** An empty batch. */
  constructor(options: DynamicBatchOptions<G>) {
    const owner = "DynamicBatch";
    this.batchGroups = checkNumber(owner, "batchGroups", options.batchGroups, {
      integer: true,
      min: 1,
    });
    this.maxRounds = checkNumber(owner, "maxRounds", options.maxRounds, {
      integer: true,
      min: 1,
      allowInfinity: true,
    });
    this.#metric = options.metric === undefined
      ? (g: G) => g.rewards
      : checkFunction(owner, "metric", options.metric);
    this.#tolerance = checkNumber(owner, "tolerance", options.tolerance ?? 0, { min: 0 });
  }

  /** Informative groups still needed (0 when full). */
  get needed(): number {
    return Math.max(0, this.batchGroups - this.#kept.length);
  }

  /** Rounds recorded so far. */
  get rounds(): number {
    return this.#rounds;
  }

  /** Fraction of groups kept so far (undefined before any group). */
  get keepRate(): number | undefined {
    const generated = this.#kept.length + this.#dropped.length;
    return generated === 0 ? undefined : this.#kept.length / generated;
  }

  /** True when the batch is full, the round cap is reached, or the source was marked exhausted. */
  get done(): boolean {
    return this.needed === 0 || this.#rounds >= this.maxRounds || this.#exhausted;
  }

  /** Records that the prompt source has no more prompts. */
  markExhausted(): void {
    this.#exhausted = true;
  }

  /**
   * Records one generation round's groups (one per prompt used). Throws if the batch is already
   * done, or if a group's metric is not an array of finite numbers (naming the group).
   */
  addRound(groups: readonly G[], promptsUsed: number = groups.length): void {
    const owner = "DynamicBatch.addRound";
    if (this.done) {
      throw new RangeError(
        `${owner}: the batch is already done (${this.#reasonNow()}); call result() instead`,
      );
    }
    groups.forEach((g, i) => {
      checkRewards(owner, `groups[${i}] metric`, this.#metric(g));
    });
    this.#rounds++;
    this.#prompts += promptsUsed;
    for (const g of groups) {
      const values = this.#metric(g);
      this.#samples += g.rewards.length;
      (hasRewardVariance(values, this.#tolerance) ? this.#kept : this.#dropped).push(g);
    }
  }

  #reasonNow(): DynamicStopReason {
    if (this.needed === 0) return "full";
    if (this.#exhausted) return "prompts_exhausted";
    return "max_rounds";
  }

  /** The batch so far: `complete` iff full. */
  result(): DynamicSampleResult<G> {
    const generated = this.#kept.length + this.#dropped.length;
    return {
      groups: this.#kept.slice(0, this.batchGroups),
      complete: this.needed === 0,
      reason: this.#reasonNow(),
      surplus: this.#kept.slice(this.batchGroups),
      dropped: [...this.#dropped],
      stats: {
        rounds: this.#rounds,
        promptsConsumed: this.#prompts,
        groupsGenerated: generated,
        samplesGenerated: this.#samples,
        groupsKept: this.#kept.length,
        groupsDropped: this.#dropped.length,
        filteredFraction: generated === 0 ? 0 : this.#dropped.length / generated,
      },
    };
  }
}

/** Where prompts come from: any sync or async iterable or iterator. */
export type PromptSource<P> = Iterable<P> | AsyncIterable<P> | Iterator<P> | AsyncIterator<P>;

/** What `generate` is told besides the prompts. */
export interface GenerateContext {
  /** 0-based round number. */
  round: number;
  /** Samples wanted per prompt. */
  groupSize: number;
}

/** How many prompts to generate in a round, given the state so far. */
export interface RoundPlanContext {
  /** 0-based round number. */
  round: number;
  /** Informative groups still needed. */
  needed: number;
  /** Fraction of groups kept so far (undefined before the first round). */
  keepRate: number | undefined;
}

/** Options of {@link dynamicSample}. */
export interface DynamicSampleOptions<P, G extends ScoredGroup> extends FilterOptions<G> {
  /** The prompt source; pass an iterator to continue from where the last call stopped. */
  prompts: PromptSource<P>;
  /** Samples per prompt (≥ 2: one sample can never have variance). */
  groupSize: number;
  /** Informative groups wanted (veRL `data.train_batch_size`). */
  batchGroups: number;
  /** Cap on generation rounds (veRL `filter_groups.max_num_gen_batches`); `Infinity`: none. */
  maxRounds: number;
  /**
   * Prompts per round (veRL `data.gen_batch_size`): a number, or a function of the state, e.g.
   * `({ needed, keepRate }) => Math.ceil(needed / Math.max(keepRate ?? 1, 0.25))` to oversample
   * by the observed keep rate. Default `batchGroups`.
   */
  promptsPerRound?: number | ((context: RoundPlanContext) => number);
  /**
   * Generates `groupSize` samples for each prompt and scores them: must return one group per
   * prompt, in order, each with `groupSize` rewards.
   */
  generate: (prompts: P[], context: GenerateContext) => Promise<G[]>;
}

function toIterator<P>(source: PromptSource<P>): Iterator<P> | AsyncIterator<P> {
  const s = source as Partial<AsyncIterable<P> & Iterable<P> & Iterator<P>>;
  if (typeof s[Symbol.asyncIterator] === "function") return s[Symbol.asyncIterator]!();
  if (typeof s[Symbol.iterator] === "function") return s[Symbol.iterator]!();
  if (typeof s.next === "function") return source as Iterator<P>;
  throw new TypeError(
    `dynamicSample: prompts must be an iterable or iterator, got ${show(source)}`,
  );
}

/**
 * DAPO dynamic sampling: generates rounds of groups, drops zero-variance groups, and stops when
 * `batchGroups` informative groups are in hand, the round cap is reached, or the prompts run out.
 * Never throws for an unfilled batch: see `complete` and `reason`.
 *
 * @example Usage
 * ```ts
 * import { dynamicSample } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * // A fake policy: prompt k solves sample j iff (k + j) % 3 === 0.
 * // Round 0: p0 = [1, 0] kept, p1 = [0, 0] dropped; round 1: p2 = [0, 1] fills, p3 = [1, 0] surplus.
 * const result = await dynamicSample({
 *   prompts: [0, 1, 2, 3, 4, 5, 6, 7],
 *   groupSize: 2,
 *   batchGroups: 2,
 *   maxRounds: 4,
 *   generate: async (prompts, { groupSize }) =>
 *     prompts.map((k) => ({
 *       uid: `p${k}`,
 *       rewards: Array.from({ length: groupSize }, (_, j) => ((k + j) % 3 === 0 ? 1 : 0)),
 *     })),
 * });
 * assert.equal(result.complete, true);
 * assert.deepEqual(result.groups.map((g) => g.uid), ["p0", "p2"]);
 * assert.equal(result.stats.rounds, 2);
 * assert.equal(result.stats.groupsDropped, 1);
 * assert.deepEqual(result.surplus.map((g) => g.uid), ["p3"]);
 * ```
 */
export async function dynamicSample<P, G extends ScoredGroup>(
  options: DynamicSampleOptions<P, G>,
): Promise<DynamicSampleResult<G>> {
  const owner = "dynamicSample";
  const groupSize = checkNumber(owner, "groupSize", options.groupSize, { integer: true, min: 2 });
  const generate = checkFunction(owner, "generate", options.generate);
  const batchOptions: DynamicBatchOptions<G> = {
    batchGroups: options.batchGroups,
    maxRounds: options.maxRounds,
  };
  if (options.metric !== undefined) batchOptions.metric = options.metric;
  if (options.tolerance !== undefined) batchOptions.tolerance = options.tolerance;
  const batch = new DynamicBatch<G>(batchOptions);
  const per = options.promptsPerRound ?? batch.batchGroups;
  if (typeof per === "number") {
    checkNumber(owner, "promptsPerRound", per, { integer: true, min: 1 });
  } else checkFunction(owner, "promptsPerRound", per);
  const it = toIterator(options.prompts);
  while (!batch.done) {
    const round = batch.rounds;
    const want = typeof per === "number" ? per : checkNumber(
      owner,
      `promptsPerRound(round ${round})`,
      per({
        round,
        needed: batch.needed,
        keepRate: batch.keepRate,
      }),
      { integer: true, min: 1 },
    );
    const prompts: P[] = [];
    let exhausted = false;
    while (prompts.length < want) {
      const r = await it.next();
      if (r.done) {
        exhausted = true;
        break;
      }
      prompts.push(r.value);
    }
    if (prompts.length === 0) {
      batch.markExhausted();
      break;
    }
    const groups = await generate(prompts, { round, groupSize });
    if (!Array.isArray(groups) || groups.length !== prompts.length) {
      throw new RangeError(
        `${owner}: generate returned ${
          Array.isArray(groups) ? `${groups.length} groups` : show(groups)
        } for ${prompts.length} prompts in round ${round}; return one group per prompt, in order`,
      );
    }
    groups.forEach((g, i) => {
      const n = (g as Partial<ScoredGroup> | null)?.rewards?.length;
      if (n !== groupSize) {
        throw new RangeError(
          `${owner}: group ${i} of round ${round} has ${
            n === undefined ? "no rewards array" : `${n} rewards`
          }; each group needs groupSize = ${groupSize} rewards`,
        );
      }
    });
    batch.addRound(groups, prompts.length);
    if (exhausted) batch.markExhausted();
  }
  return batch.result();
}
