/**
 * Difficulty curricula: easy→hard schedules over a `difficulty` field.
 *
 * Design: competence-based curriculum learning (Platanios et al., NAACL 2019, arXiv 1903.09848).
 * Each item's difficulty is turned into its rank on the empirical CDF, `r_i = #{j : d_j ≤ d_i} / N`
 * in (0, 1], so schedules do not depend on the difficulty scale; a schedule gives a competence
 * `c(t) ∈ (0, 1]` at step `t`, and at step `t` the sampler draws uniformly among the items with
 * `r_i ≤ c(t)` (always at least the easiest difficulty level). Schedules: `linear`
 * `c(t) = min(1, c₀ + (1 − c₀)·t/T)`; `root` (Platanios' square root for `power` 2)
 * `c(t) = min(1, (c₀^p + (1 − c₀^p)·t/T)^(1/p))`; and `step`, a staircase of
 * `{ until, competence }` stages (E2H-style easy→medium→hard phases). Difficulty is read from a
 * dotted path (default `difficulty`) or a function, e.g. `1 − pass rate` from offline
 * estimation (POLARIS). Draws are deterministic under the seed, and the state is plain JSON.
 *
 * @module
 */

import { checkChoice, checkNumber, show } from "./_args.ts";
import { checkSeed, Prng } from "./_prng.ts";
import { getPath } from "./datasets/fields.ts";

/** A competence schedule. */
export type CompetenceSchedule =
  | {
    /** `c(t) = min(1, c₀ + (1 − c₀)·t/T)`. */
    kind: "linear";
    /** `T`: steps until full competence. */
    steps: number;
    /** `c₀` in (0, 1] (default 0.1). */
    initial?: number;
  }
  | {
    /** `c(t) = min(1, (c₀^p + (1 − c₀^p)·t/T)^(1/p))`. */
    kind: "root";
    /** `T`: steps until full competence. */
    steps: number;
    /** `c₀` in (0, 1] (default 0.1). */
    initial?: number;
    /** `p` ≥ 1 (default 2). */
    power?: number;
  }
  | {
    /** Piecewise constant: the first stage with `t < until` applies; after the last, 1. */
    kind: "step";
    /** Stages in increasing `until`, each competence in (0, 1]. */
    stages: readonly { until: number; competence: number }[];
  };

/**
 * The competence `c(t)` of a schedule at step `t ≥ 0`.
 *
 * @example Usage
 * ```ts
 * import { competence } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(competence({ kind: "linear", steps: 100, initial: 0.5 }, 50), 0.75);
 * assert.equal(competence({ kind: "root", steps: 100, initial: 0 }, 25), 0.5);
 * const stairs = { kind: "step", stages: [{ until: 10, competence: 0.3 }, { until: 20, competence: 0.7 }] } as const;
 * assert.deepEqual([0, 10, 19, 20].map((t) => competence(stairs, t)), [0.3, 0.7, 0.7, 1]);
 * ```
 */
export function competence(schedule: CompetenceSchedule, t: number): number {
  const owner = "competence";
  checkNumber(owner, "t", t, { min: 0 });
  const kind = checkChoice(owner, "schedule.kind", schedule?.kind, ["linear", "root", "step"]);
  if (kind === "step") {
    const s = schedule as Extract<CompetenceSchedule, { kind: "step" }>;
    if (!Array.isArray(s.stages)) {
      throw new TypeError(`${owner}: schedule.stages must be an array, got ${show(s.stages)}`);
    }
    let prev = -Infinity;
    for (const [i, st] of s.stages.entries()) {
      checkNumber(owner, `schedule.stages[${i}].until`, st.until, { min: 0 });
      checkNumber(owner, `schedule.stages[${i}].competence`, st.competence, {
        min: 0,
        max: 1,
        minExclusive: true,
      });
      if (st.until <= prev) {
        throw new RangeError(
          `${owner}: schedule.stages[${i}].until (${st.until}) must be > the previous stage's (${prev})`,
        );
      }
      prev = st.until;
    }
    for (const st of s.stages) if (t < st.until) return st.competence;
    return 1;
  }
  const s = schedule as Extract<CompetenceSchedule, { kind: "linear" | "root" }>;
  const steps = checkNumber(owner, "schedule.steps", s.steps, { min: 0, minExclusive: true });
  const c0 = checkNumber(owner, "schedule.initial", s.initial ?? 0.1, { min: 0, max: 1 });
  const frac = Math.min(1, t / steps);
  if (kind === "linear") return Math.min(1, c0 + (1 - c0) * frac);
  const p = checkNumber(owner, "schedule.power", (s as { power?: number }).power ?? 2, {
    min: 1,
  });
  const c0p = Math.pow(c0, p);
  return Math.min(1, Math.pow(c0p + (1 - c0p) * frac, 1 / p));
}

/**
 * Empirical-CDF ranks `r_i = #{j : d_j ≤ d_i} / N` (ties share the larger rank).
 *
 * @example Usage
 * ```ts
 * import { difficultyRanks } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.deepEqual([...difficultyRanks([3, 1, 2, 2])], [1, 0.25, 0.75, 0.75]);
 * ```
 */
export function difficultyRanks(difficulties: readonly number[]): Float64Array {
  const n = difficulties.length;
  difficulties.forEach((d, i) => checkNumber("difficultyRanks", `difficulties[${i}]`, d));
  const order = [...difficulties.keys()].sort((a, b) => difficulties[a]! - difficulties[b]!);
  const ranks = new Float64Array(n);
  let i = 0;
  while (i < n) {
    let j = i;
    while (j + 1 < n && difficulties[order[j + 1]!] === difficulties[order[i]!]) j++;
    for (let k = i; k <= j; k++) ranks[order[k]!] = (j + 1) / n;
    i = j + 1;
  }
  return ranks;
}

/** Options of {@link CurriculumSampler}. */
export interface CurriculumOptions<T> {
  /** The competence schedule. */
  schedule: CompetenceSchedule;
  /** Seed, an integer in [0, 2^53). */
  seed: number;
  /** Dotted path of the difficulty (default `"difficulty"`), or a function of the item. */
  difficulty?: string | ((item: T) => number);
}

/** The serialisable state of a {@link CurriculumSampler}. */
export interface CurriculumState {
  /** Format version (1). */
  version: 1;
  /** The generator's words. */
  rng: [number, number, number, number];
  /** Items drawn so far. */
  draws: number;
}

/**
 * Samples items whose difficulty rank is within the current competence.
 *
 * @example Usage
 * ```ts
 * import { CurriculumSampler } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const items = Array.from({ length: 10 }, (_, i) => ({ id: i, difficulty: i }));
 * const cur = new CurriculumSampler(items, {
 *   schedule: { kind: "linear", steps: 100, initial: 0.3 },
 *   seed: 1,
 * });
 * assert.deepEqual(cur.eligible(0).map((x) => x.id), [0, 1, 2]); // easiest 30%
 * assert.ok(cur.sample(0, 5).every((x) => x.difficulty <= 2));
 * assert.equal(cur.eligible(100).length, 10);
 * ```
 */
export class CurriculumSampler<T> {
  /** The items. */
  readonly items: readonly T[];
  /** The competence schedule. */
  readonly schedule: CompetenceSchedule;
  /** Each item's difficulty rank on the empirical CDF, in (0, 1]. */
  readonly ranks: Float64Array;
  #rng: Prng;
  #draws = 0;
  #minRank: number;

  /** A sampler over `items`; reads every item's difficulty now (errors name the item). */
  constructor(items: readonly T[], options: CurriculumOptions<T>) {
    const owner = "CurriculumSampler";
    if (!Array.isArray(items) || items.length === 0) {
      throw new RangeError(`${owner}: items must be a non-empty array, got ${show(items)}`);
    }
    checkSeed(owner, options.seed);
    competence(options.schedule, 0); // validates the schedule
    const read = options.difficulty ?? "difficulty";
    const diffs = items.map((item, i) => {
      const d = typeof read === "function" ? read(item) : getPath(item, read, `items[${i}]`);
      return checkNumber(owner, `difficulty of items[${i}]`, d);
    });
    this.items = [...items];
    this.schedule = options.schedule;
    this.ranks = difficultyRanks(diffs);
    this.#minRank = Math.min(...this.ranks);
    this.#rng = Prng.fromSeed(options.seed);
  }

  /** Indices of the items eligible at step `t` (in item order). */
  eligibleIndices(t: number): number[] {
    const c = Math.max(competence(this.schedule, t), this.#minRank);
    const out: number[] = [];
    this.ranks.forEach((r, i) => {
      if (r <= c + 1e-12) out.push(i);
    });
    return out;
  }

  /** Items eligible at step `t` (in item order). */
  eligible(t: number): T[] {
    return this.eligibleIndices(t).map((i) => this.items[i]!);
  }

  /**
   * `k` items drawn uniformly from those eligible at step `t`: distinct while possible, then
   * further passes over a fresh permutation when `k` exceeds the eligible count.
   */
  sample(t: number, k: number): T[] {
    checkNumber("CurriculumSampler.sample", "k", k, { integer: true, min: 0 });
    const pool = this.eligibleIndices(t);
    const out: T[] = [];
    while (out.length < k) {
      const perm = [...pool];
      const want = Math.min(k - out.length, perm.length);
      for (let i = 0; i < want; i++) {
        const j = i + this.#rng.int(perm.length - i);
        [perm[i], perm[j]] = [perm[j]!, perm[i]!];
        out.push(this.items[perm[i]!]!);
      }
    }
    this.#draws += k;
    return out;
  }

  /** The state as plain JSON-compatible data. */
  state(): CurriculumState {
    return { version: 1, rng: this.#rng.state(), draws: this.#draws };
  }

  /** A sampler over the same items and options continuing exactly from `state`. */
  static fromState<T>(
    items: readonly T[],
    options: CurriculumOptions<T>,
    state: CurriculumState,
  ): CurriculumSampler<T> {
    const owner = "CurriculumSampler.fromState";
    if (state?.version !== 1) {
      throw new TypeError(`${owner}: version must be 1, got ${show(state?.version)}`);
    }
    const s = new CurriculumSampler(items, options);
    s.#rng = Prng.fromState(state.rng, owner);
    s.#draws = checkNumber(owner, "draws", state.draws, { integer: true, min: 0 });
    return s;
  }
}
