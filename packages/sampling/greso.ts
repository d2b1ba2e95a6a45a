/**
 * GRESO pre-rollout filtering (Zheng et al., "Act Only When It Pays: Efficient Reinforcement
 * Learning for LLM Reasoning via Selective Rollouts", arXiv 2506.02177): skip, before sampling,
 * the prompts whose recent groups were all correct or all wrong, since a zero-variance group
 * carries no GRPO gradient and the paper finds that a prompt uninformative once tends to stay so.
 *
 * Design, as the authors' veRL code (`DataProfiler.filter_examples_all_probabilistic`):
 * - each prompt keeps its trace of group mean rewards; `z_easy` counts the trailing groups that
 *   were all correct (mean ≥ `easyThreshold`, default 0.98), `z_hard` those all wrong (mean ≤
 *   `hardThreshold`, default 0.11, and only when the latest group was all wrong);
 * - an easy prompt is skipped with probability `1 − max(p_easy^z_easy, 0.01)`, a hard one with
 *   `1 − max(p_hard^z_hard, 0.01)`: the longer a prompt has been uninformative the likelier it is
 *   skipped, but never with certainty (it may have become informative);
 * - after every round of groups, `p_easy` and `p_hard` move by `adjust` (default 0.01) within
 *   `[minP, maxP]` so that the batch's all-correct and all-wrong fractions approach their targets:
 *   `targetZeroVariance / 3` for easy and `2 · targetZeroVariance / 3` for hard (more exploration
 *   is kept on hard prompts, which turn solvable as training goes on). The paper's defaults:
 *   `p_easy = p_hard = 0.5`, `targetZeroVariance = 0.25`.
 *
 * Randomness is the caller's: {@link GresoFilter.skipProbability} is a pure function of the
 * state, and {@link GresoFilter.skip} takes the uniform draw, so a trainer can key the draws by
 * `(seed, step, prompt)` and resume without saving a generator. The state is plain JSON.
 *
 * @module
 */

import { checkNumber, checkUnit, show } from "./_args.ts";

/** Options of {@link GresoFilter}. */
export interface GresoOptions {
  /** Initial `p_easy` in (0, 1) (default 0.5). */
  pEasy?: number;
  /** Initial `p_hard` in (0, 1) (default 0.5). */
  pHard?: number;
  /** Target fraction of zero-variance groups (default 0.25). */
  targetZeroVariance?: number;
  /** Step of the `p` adaptation (default 0.01). */
  adjust?: number;
  /** Lower bound of `p` (default 0.05). */
  minP?: number;
  /** Upper bound of `p` (default 0.95). */
  maxP?: number;
  /** A group mean at or above this is "all correct" (default 0.98). */
  easyThreshold?: number;
  /** A group mean at or below this is "all wrong" (default 0.11). */
  hardThreshold?: number;
  /** Group means kept per prompt (default 16). */
  historyLength?: number;
}

/** The serialisable state of a {@link GresoFilter}. */
export interface GresoState {
  /** Format version (1). */
  version: 1;
  /** The options, defaults filled in. */
  options: Required<GresoOptions>;
  /** Current `p_easy`. */
  pEasy: number;
  /** Current `p_hard`. */
  pHard: number;
  /** Recent group mean rewards per prompt, oldest first. */
  traces: Record<string, number[]>;
  /** Prompts skipped so far, easy and hard. */
  skipped: { easy: number; hard: number };
}

function resolve(options: GresoOptions): Required<GresoOptions> {
  const owner = "GresoFilter";
  const open = { min: 0, max: 1, minExclusive: true, maxExclusive: true };
  const o: Required<GresoOptions> = {
    pEasy: checkNumber(owner, "pEasy", options.pEasy ?? 0.5, open),
    pHard: checkNumber(owner, "pHard", options.pHard ?? 0.5, open),
    targetZeroVariance: checkUnit(owner, "targetZeroVariance", options.targetZeroVariance ?? 0.25),
    adjust: checkNumber(owner, "adjust", options.adjust ?? 0.01, { min: 0, max: 1 }),
    minP: checkNumber(owner, "minP", options.minP ?? 0.05, open),
    maxP: checkNumber(owner, "maxP", options.maxP ?? 0.95, open),
    easyThreshold: checkNumber(owner, "easyThreshold", options.easyThreshold ?? 0.98),
    hardThreshold: checkNumber(owner, "hardThreshold", options.hardThreshold ?? 0.11),
    historyLength: checkNumber(owner, "historyLength", options.historyLength ?? 16, {
      integer: true,
      min: 1,
    }),
  };
  if (o.minP > o.maxP) {
    throw new RangeError(`${owner}: minP ${o.minP} exceeds maxP ${o.maxP}; use minP <= maxP`);
  }
  if (o.hardThreshold >= o.easyThreshold) {
    throw new RangeError(
      `${owner}: hardThreshold ${o.hardThreshold} must be below easyThreshold ${o.easyThreshold}`,
    );
  }
  return o;
}

/** What {@link GresoFilter.classify} says of a prompt. */
export interface GresoVerdict {
  /** `"easy"` (trailing all-correct groups), `"hard"` (trailing all-wrong) or `"open"`. */
  kind: "easy" | "hard" | "open";
  /** Consecutive uninformative groups at the end of its trace (0 when open). */
  streak: number;
}

/**
 * GRESO's probabilistic pre-rollout filter (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { GresoFilter } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const g = new GresoFilter();
 * g.observe("q1", [1, 1, 1, 1]); // all correct once
 * g.observe("q1", [1, 1, 1, 1]); // twice
 * g.observe("q2", [1, 0, 1, 0]); // informative
 * assert.equal(g.skipProbability("q1"), 1 - 0.5 ** 2);
 * assert.equal(g.skipProbability("q2"), 0);
 * assert.equal(g.skipProbability("never seen"), 0);
 * assert.equal(g.skip("q1", 0.7), true); // 0.7 < 0.75
 * // A round with more all-correct groups than the target lowers p_easy: easy prompts are skipped more.
 * g.adapt({ easy: 0.5, hard: 0 });
 * assert.equal(g.pEasy, 0.49);
 * ```
 */
export class GresoFilter {
  /** The options, defaults filled in. */
  readonly options: Required<GresoOptions>;
  #pEasy: number;
  #pHard: number;
  #traces = new Map<string, number[]>();
  #skipped = { easy: 0, hard: 0 };

  /** A filter with no history (see {@link GresoOptions} for the defaults). */
  constructor(options: GresoOptions = {}) {
    this.options = resolve(options);
    this.#pEasy = this.options.pEasy;
    this.#pHard = this.options.pHard;
  }

  /** Current `p_easy`. */
  get pEasy(): number {
    return this.#pEasy;
  }

  /** Current `p_hard`. */
  get pHard(): number {
    return this.#pHard;
  }

  /** Prompts skipped so far (counted by {@link GresoFilter.skip}). */
  get skipped(): { easy: number; hard: number } {
    return { ...this.#skipped };
  }

  /** Records a group of rewards (in [0, 1]) for `uid`; returns its mean. */
  observe(uid: string, rewards: ArrayLike<number>): number {
    const owner = "GresoFilter.observe";
    if (typeof uid !== "string") {
      throw new TypeError(`${owner}: uid must be a string, got ${show(uid)}`);
    }
    if (rewards.length === 0) throw new RangeError(`${owner}: ${uid}: rewards is empty`);
    let sum = 0;
    for (let i = 0; i < rewards.length; i++) {
      sum += checkNumber(owner, `rewards[${i}] of ${uid}`, rewards[i]);
    }
    const mean = sum / rewards.length;
    const trace = this.#traces.get(uid) ?? [];
    trace.push(mean);
    if (trace.length > this.options.historyLength) trace.shift();
    this.#traces.set(uid, trace);
    return mean;
  }

  /** Whether `uid` is on an easy or hard streak, and how long. */
  classify(uid: string): GresoVerdict {
    const trace = this.#traces.get(uid);
    if (trace === undefined || trace.length === 0) return { kind: "open", streak: 0 };
    const { easyThreshold, hardThreshold } = this.options;
    const count = (pred: (m: number) => boolean) => {
      let n = 0;
      for (let i = trace.length - 1; i >= 0 && pred(trace[i]!); i--) n++;
      return n;
    };
    const easy = count((m) => m >= easyThreshold);
    if (easy > 0) return { kind: "easy", streak: easy };
    const hard = count((m) => m <= hardThreshold);
    if (hard > 0) return { kind: "hard", streak: hard };
    return { kind: "open", streak: 0 };
  }

  /** The probability that `uid` is skipped now: `1 − max(p^streak, 0.01)`, 0 when open. */
  skipProbability(uid: string): number {
    const v = this.classify(uid);
    if (v.kind === "open") return 0;
    const p = v.kind === "easy" ? this.#pEasy : this.#pHard;
    return 1 - Math.max(p ** v.streak, 0.01);
  }

  /** Decides with the uniform draw `u ∈ [0, 1)` whether to skip `uid` (counted when skipped). */
  skip(uid: string, u: number): boolean {
    checkNumber("GresoFilter.skip", "u", u, { min: 0, max: 1, maxExclusive: true });
    const v = this.classify(uid);
    const out = u < this.skipProbability(uid);
    if (out && v.kind !== "open") this.#skipped[v.kind]++;
    return out;
  }

  /**
   * Moves `p_easy` and `p_hard` after a round whose all-correct and all-wrong fractions of the
   * sampled groups were `easy` and `hard` (see the module doc).
   */
  adapt(fractions: { easy: number; hard: number }): void {
    const easy = checkUnit("GresoFilter.adapt", "easy", fractions.easy);
    const hard = checkUnit("GresoFilter.adapt", "hard", fractions.hard);
    const { targetZeroVariance: t, adjust, minP, maxP } = this.options;
    const move = (p: number, fraction: number, target: number) =>
      fraction >= target ? Math.max(p - adjust, minP) : Math.min(p + adjust, maxP);
    this.#pEasy = move(this.#pEasy, easy, t / 3);
    this.#pHard = move(this.#pHard, hard, (2 * t) / 3);
  }

  /** The state as plain JSON-compatible data. */
  state(): GresoState {
    return {
      version: 1,
      options: { ...this.options },
      pEasy: this.#pEasy,
      pHard: this.#pHard,
      traces: Object.fromEntries([...this.#traces].map(([k, v]) => [k, [...v]])),
      skipped: { ...this.#skipped },
    };
  }

  /** A filter continuing exactly from `state`. */
  static fromState(state: GresoState): GresoFilter {
    const owner = "GresoFilter.fromState";
    if (state?.version !== 1) {
      throw new TypeError(`${owner}: version must be 1, got ${show(state?.version)}`);
    }
    const g = new GresoFilter(state.options);
    g.#pEasy = checkNumber(owner, "pEasy", state.pEasy, { min: 0, max: 1 });
    g.#pHard = checkNumber(owner, "pHard", state.pHard, { min: 0, max: 1 });
    for (const [uid, trace] of Object.entries(state.traces ?? {})) {
      if (!Array.isArray(trace)) {
        throw new TypeError(`${owner}: traces.${uid} must be an array, got ${show(trace)}`);
      }
      g.#traces.set(uid, trace.map((m, i) => checkNumber(owner, `traces.${uid}[${i}]`, m)));
    }
    g.#skipped = {
      easy: checkNumber(owner, "skipped.easy", state.skipped?.easy, { integer: true, min: 0 }),
      hard: checkNumber(owner, "skipped.hard", state.skipped?.hard, { integer: true, min: 0 }),
    };
    return g;
  }
}
