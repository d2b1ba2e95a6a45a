/**
 * Per-prompt pass-rate tracking with exponential decay.
 *
 * Design: a sample *passes* when its reward is at least `successThreshold` (default 0.5, which
 * reads 0/1 and ±1 verifier rewards correctly; set it to 1 for "fully correct only" with
 * partial-credit rewards). Each evaluation of a prompt (one group of samples) gives an observed
 * pass rate `o ∈ [0, 1]`, and the tracked rate is the exponential moving average
 * `s ← decay·s + (1 − decay)·o`, initialised to the first observation (no prior pulls it). The
 * tracker also keeps the last `historyLength` observations, so "mastered" (`o ≥ threshold` for
 * `m` consecutive evaluations, POLARIS-style removal) can be asked with any threshold later.
 * The whole state is plain JSON ({@link PassRateTracker.state}); restoring it gives an identical
 * tracker.
 *
 * @module
 */

import { checkNumber, checkRewards, checkUnit, show } from "./_args.ts";

/**
 * The fraction of `rewards` that are `≥ successThreshold` (default 0.5).
 *
 * @example Usage
 * ```ts
 * import { passRate } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(passRate([1, 0, 1, 1]), 0.75);
 * assert.equal(passRate([1, -1, -1, -1]), 0.25); // ±1 rewards
 * assert.equal(passRate([0.9, 0.2], 0.9), 0.5);
 * ```
 */
export function passRate(rewards: ArrayLike<number>, successThreshold = 0.5): number {
  const owner = "passRate";
  const rs = checkRewards(owner, "rewards", rewards);
  checkNumber(owner, "successThreshold", successThreshold);
  if (rs.length === 0) {
    throw new RangeError(`${owner}: rewards is empty; a pass rate needs at least one sample`);
  }
  let pass = 0;
  for (const r of rs) if (r >= successThreshold) pass++;
  return pass / rs.length;
}

/** Options of {@link PassRateTracker}. */
export interface PassRateOptions {
  /** EMA decay in [0, 1): weight of the old rate (default 0.9; 0 keeps only the latest). */
  decay?: number;
  /** A reward `≥` this passes (default 0.5). */
  successThreshold?: number;
  /** Observations kept per prompt for mastery checks (default 8). */
  historyLength?: number;
}

/** What the tracker knows about one prompt. */
export interface PassRateEntry {
  /** The decayed pass rate. */
  rate: number;
  /** Evaluations seen. */
  count: number;
  /** The most recent observed pass rates, oldest first (at most `historyLength`). */
  recent: number[];
}

/** The serialisable state of a {@link PassRateTracker}. */
export interface PassRateState {
  /** Format version (1). */
  version: 1;
  /** EMA decay. */
  decay: number;
  /** Reward threshold of a pass. */
  successThreshold: number;
  /** Observations kept per prompt. */
  historyLength: number;
  /** Entries by prompt uid. */
  entries: Record<string, PassRateEntry>;
}

/**
 * Tracks each prompt's pass rate as an exponential moving average over its evaluations.
 *
 * @example Usage
 * ```ts
 * import { PassRateTracker } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const t = new PassRateTracker({ decay: 0.5 });
 * t.update("q1", [1, 0, 0, 0]); // first observation: 0.25
 * t.update("q1", [1, 1, 1, 1]); // 0.5·0.25 + 0.5·1
 * assert.equal(t.rate("q1"), 0.625);
 * assert.equal(t.rate("unseen", 0), 0);
 * const copy = PassRateTracker.fromState(JSON.parse(JSON.stringify(t.state())));
 * assert.equal(copy.rate("q1"), 0.625);
 * ```
 */
export class PassRateTracker {
  /** EMA decay (weight of the old rate). */
  readonly decay: number;
  /** A reward `≥` this passes. */
  readonly successThreshold: number;
  /** Observations kept per prompt. */
  readonly historyLength: number;
  #entries: Map<string, PassRateEntry> = new Map();

  /** A tracker with no observations. */
  constructor(options: PassRateOptions = {}) {
    const owner = "PassRateTracker";
    this.decay = checkNumber(owner, "decay", options.decay ?? 0.9, {
      min: 0,
      max: 1,
      maxExclusive: true,
    });
    this.successThreshold = checkNumber(
      owner,
      "successThreshold",
      options.successThreshold ?? 0.5,
    );
    this.historyLength = checkNumber(owner, "historyLength", options.historyLength ?? 8, {
      integer: true,
      min: 1,
    });
  }

  /**
   * Records one evaluation of `uid`: either the group's rewards (turned into a pass rate with
   * `successThreshold`) or an already-computed pass rate in [0, 1]. Returns the new rate.
   */
  update(uid: string, observation: number | ArrayLike<number>): number {
    const owner = "PassRateTracker.update";
    if (typeof uid !== "string") {
      throw new TypeError(`${owner}: uid must be a string, got ${show(uid)}`);
    }
    const o = typeof observation === "number"
      ? checkUnit(owner, `observed pass rate of ${uid}`, observation)
      : passRate(observation, this.successThreshold);
    const prev = this.#entries.get(uid);
    if (!prev) {
      this.#entries.set(uid, { rate: o, count: 1, recent: [o] });
      return o;
    }
    prev.rate = this.decay * prev.rate + (1 - this.decay) * o;
    prev.count++;
    prev.recent.push(o);
    if (prev.recent.length > this.historyLength) prev.recent.shift();
    return prev.rate;
  }

  /** Records many groups at once (e.g. every group of a dynamic-sampling round, kept or not). */
  updateGroups(groups: Iterable<{ uid: string; rewards: ArrayLike<number> }>): void {
    for (const g of groups) this.update(g.uid, g.rewards);
  }

  /** The decayed pass rate of `uid`, or `undefined` if never evaluated. */
  rate(uid: string): number | undefined;
  /** The decayed pass rate of `uid`, or `fallback` if never evaluated. */
  rate(uid: string, fallback: number): number;
  rate(uid: string, fallback?: number): number | undefined {
    return this.#entries.get(uid)?.rate ?? fallback;
  }

  /** Evaluations recorded for `uid`. */
  count(uid: string): number {
    return this.#entries.get(uid)?.count ?? 0;
  }

  /** A copy of the entry of `uid`, if any. */
  entry(uid: string): PassRateEntry | undefined {
    const e = this.#entries.get(uid);
    return e ? { rate: e.rate, count: e.count, recent: [...e.recent] } : undefined;
  }

  /** Uids with at least one evaluation, in first-seen order. */
  uids(): string[] {
    return [...this.#entries.keys()];
  }

  /**
   * True when the last `consecutive` observations of `uid` all reached `threshold` (default 1:
   * every sample passed). Needs `consecutive ≤ historyLength`.
   */
  isMastered(uid: string, consecutive: number, threshold = 1): boolean {
    const owner = "PassRateTracker.isMastered";
    checkNumber(owner, "consecutive", consecutive, {
      integer: true,
      min: 1,
      max: this.historyLength,
    });
    checkUnit(owner, "threshold", threshold);
    const e = this.#entries.get(uid);
    if (!e || e.recent.length < consecutive) return false;
    for (let i = e.recent.length - consecutive; i < e.recent.length; i++) {
      if (e.recent[i]! < threshold) return false;
    }
    return true;
  }

  /**
   * True when `uid`'s rate is in `[low, high]`; a never-evaluated prompt gives `unknown`
   * (default true: keep it, so it gets evaluated). Pre-rollout accuracy-band filtering.
   */
  inBand(uid: string, low: number, high: number, unknown = true): boolean {
    const owner = "PassRateTracker.inBand";
    checkUnit(owner, "low", low);
    checkUnit(owner, "high", high);
    if (low > high) throw new RangeError(`${owner}: low (${low}) must be <= high (${high})`);
    const r = this.#entries.get(uid)?.rate;
    return r === undefined ? unknown : r >= low && r <= high;
  }

  /** The state as plain JSON-compatible data (a deep copy). */
  state(): PassRateState {
    const entries: Record<string, PassRateEntry> = {};
    for (const [k, e] of this.#entries) {
      entries[k] = { rate: e.rate, count: e.count, recent: [...e.recent] };
    }
    return {
      version: 1,
      decay: this.decay,
      successThreshold: this.successThreshold,
      historyLength: this.historyLength,
      entries,
    };
  }

  /** A tracker restored from {@link state}; throws naming the first malformed field. */
  static fromState(state: PassRateState): PassRateTracker {
    const owner = "PassRateTracker.fromState";
    if (state?.version !== 1) {
      throw new TypeError(`${owner}: version must be 1, got ${show(state?.version)}`);
    }
    const t = new PassRateTracker({
      decay: state.decay,
      successThreshold: state.successThreshold,
      historyLength: state.historyLength,
    });
    if (typeof state.entries !== "object" || state.entries === null) {
      throw new TypeError(`${owner}: entries must be an object, got ${show(state.entries)}`);
    }
    for (const [uid, e] of Object.entries(state.entries)) {
      checkUnit(owner, `entries[${JSON.stringify(uid)}].rate`, e?.rate);
      checkNumber(owner, `entries[${JSON.stringify(uid)}].count`, e?.count, {
        integer: true,
        min: 1,
      });
      if (!Array.isArray(e.recent) || e.recent.length > t.historyLength) {
        throw new TypeError(
          `${owner}: entries[${
            JSON.stringify(uid)
          }].recent must be an array of at most ${t.historyLength} rates`,
        );
      }
      e.recent.forEach((r, i) =>
        checkUnit(owner, `entries[${JSON.stringify(uid)}].recent[${i}]`, r)
      );
      t.#entries.set(uid, { rate: e.rate, count: e.count, recent: [...e.recent] });
    }
    return t;
  }
}
