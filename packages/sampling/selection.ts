/**
 * Prompt selection: uniform, prioritised by failure (Kimi k1.5, arXiv 2501.12599: `p_i ∝ 1 − s_i`)
 * and removal of mastered prompts (POLARIS).
 *
 * Design: a prompt's weight is `w_i = max(1 − s_i, ε)` with `s_i` its tracked pass rate from a
 * {@link PassRateTracker}; the floor ε (default 0.05) keeps a mastered prompt's chance small but
 * non-zero, and a never-evaluated prompt counts as `s = unseenRate` (default 0: highest priority,
 * so new prompts get evaluated). Draws within one `select(k)` call are without replacement
 * (Efraimidis–Spirakis keys `log(u)/w`, equivalent to drawing one at a time proportionally to
 * `w` and removing it); `select(1)` therefore samples exactly `p_i = w_i / Σ w`. A prompt is
 * *mastered* when its last `consecutive` observed pass rates are all `≥ threshold` (default 1);
 * mastered prompts are removed from the pool (they stay removed as long as their history says
 * so, and since they are no longer drawn it does not change). Everything is deterministic under
 * `seed`, and {@link PromptSelector.state} (options plus the generator's four words) is plain
 * JSON; the tracker is saved separately.
 *
 * @module
 */

import { checkChoice, checkNumber, checkUnit, show } from "./_args.ts";
import { checkSeed, Prng } from "./_prng.ts";
import type { PassRateTracker } from "./pass_rate.ts";

/** Options of {@link priorityWeights}. */
export interface PriorityOptions {
  /** Floor on `1 − s` (default 0.05), in (0, 1]. */
  epsilon?: number;
  /** Pass rate assumed for an unevaluated prompt (default 0). */
  unseenRate?: number;
}

/**
 * Failure-weighted priorities `w_i = max(1 − s_i, ε)`; `undefined` rates count as `unseenRate`.
 *
 * @example Usage
 * ```ts
 * import { priorityWeights } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const w = priorityWeights([0, 0.75, 1, undefined], { epsilon: 0.1 });
 * assert.deepEqual([...w], [1, 0.25, 0.1, 1]);
 * ```
 */
export function priorityWeights(
  rates: readonly (number | undefined)[],
  options: PriorityOptions = {},
): Float64Array {
  const owner = "priorityWeights";
  const epsilon = checkNumber(owner, "epsilon", options.epsilon ?? 0.05, {
    min: 0,
    max: 1,
    minExclusive: true,
  });
  const unseen = checkUnit(owner, "unseenRate", options.unseenRate ?? 0);
  const out = new Float64Array(rates.length);
  rates.forEach((s, i) => {
    const rate = s === undefined ? unseen : checkUnit(owner, `rates[${i}]`, s);
    out[i] = Math.max(1 - rate, epsilon);
  });
  return out;
}

/** Mastery: removed when the last `consecutive` pass rates are all `≥ threshold`. */
export interface MasteryOptions {
  /** Observed pass rate that counts as mastered (default 1). */
  threshold?: number;
  /** How many consecutive evaluations (≥ 1, ≤ the tracker's `historyLength`). */
  consecutive: number;
}

/**
 * Splits `uids` into those still in play and the mastered ones.
 *
 * @example Usage
 * ```ts
 * import { PassRateTracker, removeMastered } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const t = new PassRateTracker();
 * t.update("a", [1, 1]);
 * t.update("a", [1, 1]);
 * t.update("b", [1, 1]);
 * t.update("b", [1, 0]);
 * const { active, mastered } = removeMastered(["a", "b", "c"], t, { consecutive: 2 });
 * assert.deepEqual(active, ["b", "c"]);
 * assert.deepEqual(mastered, ["a"]);
 * ```
 */
export function removeMastered(
  uids: readonly string[],
  tracker: PassRateTracker,
  options: MasteryOptions,
): { active: string[]; mastered: string[] } {
  const active: string[] = [];
  const mastered: string[] = [];
  for (const uid of uids) {
    (tracker.isMastered(uid, options.consecutive, options.threshold ?? 1) ? mastered : active)
      .push(uid);
  }
  return { active, mastered };
}

/** Options of {@link PromptSelector}. */
export interface SelectorOptions extends PriorityOptions {
  /** `"uniform"` or `"prioritized"` (`p ∝ max(1 − s, ε)`). */
  strategy: "uniform" | "prioritized";
  /** Seed, an integer in [0, 2^53). */
  seed: number;
  /** Remove mastered prompts (default: keep all). */
  mastery?: MasteryOptions;
}

/** The serialisable state of a {@link PromptSelector}. */
export interface SelectorState {
  /** Format version (1). */
  version: 1;
  /** The options it was built with. */
  options: SelectorOptions;
  /** The generator's words. */
  rng: [number, number, number, number];
  /** Prompts drawn so far. */
  draws: number;
}

/**
 * Draws prompts from a fixed pool, uniformly or failure-weighted, skipping mastered ones.
 *
 * @example Usage
 * ```ts
 * import { PassRateTracker, PromptSelector } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const tracker = new PassRateTracker();
 * tracker.update("solved", [1, 1, 1, 1]);
 * tracker.update("hard", [0, 0, 0, 1]);
 * const sel = new PromptSelector(["solved", "hard", "new"], tracker, {
 *   strategy: "prioritized",
 *   seed: 7,
 *   epsilon: 0.05,
 * });
 * const p = sel.probabilities(); // weights 0.05, 0.75, 1
 * assert.ok(Math.abs(p.get("hard")! - 0.75 / 1.8) < 1e-12);
 * const picked = sel.select(2);
 * assert.equal(new Set(picked).size, 2);
 * // save and restore: the continuation is identical
 * const copy = PromptSelector.fromState(["solved", "hard", "new"], tracker, sel.state());
 * assert.deepEqual(copy.select(2), sel.select(2));
 * ```
 */
export class PromptSelector {
  /** The pool of prompt uids. */
  readonly uids: readonly string[];
  /** The options it was built with. */
  readonly options: SelectorOptions;
  #tracker: PassRateTracker;
  #rng: Prng;
  #draws = 0;

  /** A selector over `uids` (distinct, non-empty strings) reading pass rates from `tracker`. */
  constructor(uids: readonly string[], tracker: PassRateTracker, options: SelectorOptions) {
    const owner = "PromptSelector";
    if (!Array.isArray(uids) || uids.length === 0) {
      throw new RangeError(`${owner}: uids must be a non-empty array, got ${show(uids)}`);
    }
    const seen = new Set<string>();
    uids.forEach((u, i) => {
      if (typeof u !== "string") {
        throw new TypeError(`${owner}: uids[${i}] must be a string, got ${show(u)}`);
      }
      if (seen.has(u)) {
        throw new RangeError(
          `${owner}: uid ${show(u)} appears twice (uids[${i}]); uids must be distinct`,
        );
      }
      seen.add(u);
    });
    checkChoice(owner, "strategy", options.strategy, ["uniform", "prioritized"]);
    checkSeed(owner, options.seed);
    priorityWeights([], options); // validates epsilon and unseenRate
    if (options.mastery !== undefined) {
      checkNumber(owner, "mastery.consecutive", options.mastery.consecutive, {
        integer: true,
        min: 1,
        max: tracker.historyLength,
      });
      checkUnit(owner, "mastery.threshold", options.mastery.threshold ?? 1);
    }
    this.uids = [...uids];
    this.options = structuredClone(options);
    this.#tracker = tracker;
    this.#rng = Prng.fromSeed(options.seed);
  }

  /** Prompts still in play (all of them without `mastery`). */
  active(): string[] {
    return this.options.mastery === undefined
      ? [...this.uids]
      : removeMastered(this.uids, this.#tracker, this.options.mastery).active;
  }

  /** Mastered prompts (none without `mastery`). */
  mastered(): string[] {
    return this.options.mastery === undefined
      ? []
      : removeMastered(this.uids, this.#tracker, this.options.mastery).mastered;
  }

  /** The weight of each active prompt (1 each under `"uniform"`). */
  weights(): Map<string, number> {
    const active = this.active();
    if (this.options.strategy === "uniform") return new Map(active.map((u) => [u, 1]));
    const w = priorityWeights(active.map((u) => this.#tracker.rate(u)), this.options);
    return new Map(active.map((u, i) => [u, w[i]!]));
  }

  /** The probability that `select(1)` returns each active prompt. */
  probabilities(): Map<string, number> {
    const w = this.weights();
    let total = 0;
    for (const v of w.values()) total += v;
    return new Map([...w].map(([u, v]) => [u, v / total]));
  }

  /**
   * Draws `k` distinct active prompts (fewer if fewer are active; none if all are mastered).
   */
  select(k: number): string[] {
    checkNumber("PromptSelector.select", "k", k, { integer: true, min: 0 });
    const w = [...this.weights()];
    const take = Math.min(k, w.length);
    // Efraimidis–Spirakis: the k largest keys log(u)/w are a weighted sample without replacement.
    const keyed = w.map(([uid, weight], i) => ({
      uid,
      i,
      key: Math.log(this.#rng.floatOpen()) / weight,
    }));
    keyed.sort((a, b) => b.key - a.key || a.i - b.i);
    this.#draws += take;
    return keyed.slice(0, take).map((e) => e.uid);
  }

  /** Prompts drawn so far. */
  get draws(): number {
    return this.#draws;
  }

  /** The state as plain JSON-compatible data. */
  state(): SelectorState {
    return {
      version: 1,
      options: structuredClone(this.options),
      rng: this.#rng.state(),
      draws: this.#draws,
    };
  }

  /** A selector continuing exactly from `state` over the same `uids` and tracker. */
  static fromState(
    uids: readonly string[],
    tracker: PassRateTracker,
    state: SelectorState,
  ): PromptSelector {
    const owner = "PromptSelector.fromState";
    if (state?.version !== 1) {
      throw new TypeError(`${owner}: version must be 1, got ${show(state?.version)}`);
    }
    const s = new PromptSelector(uids, tracker, state.options);
    s.#rng = Prng.fromState(state.rng, owner);
    s.#draws = checkNumber(owner, "draws", state.draws, { integer: true, min: 0 });
    return s;
  }
}
