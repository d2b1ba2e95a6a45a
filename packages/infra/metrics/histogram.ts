/**
 * A histogram with fixed bins, for staleness, queue depth or latency distributions in metrics.
 *
 * Design decision: the bin edges are fixed at construction (no adaptive re-binning), so the
 * flattened record of {@link Histogram.toRecord} has the same keys at every step. That keeps a CSV
 * sink's header valid for the whole run and lets two histograms with the same edges be merged
 * (several workers, or a checkpoint and the run that resumes from it). Values below the first
 * edge and at or above the last one are counted in underflow and overflow bins rather than
 * dropped, so `count` is always the number of values added.
 *
 * @module
 */

/**
 * Fixed-bin histogram: bin `i` counts values in `[edges[i], edges[i + 1])`.
 *
 * @example Usage
 * ```ts
 * import { Histogram } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const h = Histogram.integers(2); // bins 0, 1, 2 and an overflow for >= 3
 * for (const s of [0, 0, 1, 5]) h.add(s);
 * assert.deepEqual(h.toRecord("staleness"), {
 *   "staleness/<0": 0,
 *   "staleness/0": 2,
 *   "staleness/1": 1,
 *   "staleness/2": 0,
 *   "staleness/>=3": 1,
 *   "staleness/count": 4,
 *   "staleness/mean": 1.5,
 * });
 * ```
 */
export class Histogram {
  /** Bin edges, strictly increasing (`bins + 1` of them). */
  readonly edges: readonly number[];
  /** Whether the bins are the unit bins of {@link Histogram.integers} (labels `0`, `1`, ...). */
  readonly integerBins: boolean;
  #counts: number[];
  #under = 0;
  #over = 0;
  #sum = 0;

  /**
   * An empty histogram over fixed edges.
   *
   * @param edges At least two finite, strictly increasing edges.
   * @param integerBins Label bins by their integer (set by {@link Histogram.integers}).
   */
  constructor(edges: readonly number[], integerBins = false) {
    if (edges.length < 2) {
      throw new RangeError(
        `Histogram: edges must hold at least 2 numbers (one bin), got ${edges.length}; ` +
          `e.g. new Histogram([0, 1, 2, 4, 8])`,
      );
    }
    for (let i = 0; i < edges.length; i++) {
      const e = edges[i]!;
      if (!Number.isFinite(e) || (i > 0 && e <= edges[i - 1]!)) {
        throw new RangeError(
          `Histogram: edges must be finite and strictly increasing; edges[${i}] = ${e} ` +
            `follows ${i > 0 ? edges[i - 1] : "nothing"}`,
        );
      }
    }
    this.edges = Object.freeze([...edges]);
    this.integerBins = integerBins;
    this.#counts = new Array<number>(edges.length - 1).fill(0);
  }

  /**
   * Unit bins for the integers `0..max` plus overflow for `> max`: the staleness histogram.
   *
   * @param max Largest integer with its own bin (e.g. the staleness bound η, or a bit more).
   * @returns An empty histogram.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * assert.deepEqual(Histogram.integers(3).edges, [0, 1, 2, 3, 4]);
   * ```
   */
  static integers(max: number): Histogram {
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new RangeError(
        `Histogram.integers: max must be a non-negative integer, got ${max}; pass the largest ` +
          `value that should get its own bin`,
      );
    }
    return new Histogram(Array.from({ length: max + 2 }, (_, i) => i), true);
  }

  /**
   * Counts `value` (`times` times).
   *
   * @param value A finite number.
   * @param times How many observations of it (a non-negative integer, default 1).
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const h = new Histogram([0, 10, 100]);
   * h.add(5, 3);
   * assert.deepEqual(h.counts, [3, 0]);
   * ```
   */
  add(value: number, times = 1): void {
    if (!Number.isFinite(value)) {
      throw new RangeError(`Histogram.add: value must be finite, got ${value}`);
    }
    if (!Number.isSafeInteger(times) || times < 0) {
      throw new RangeError(`Histogram.add: times must be a non-negative integer, got ${times}`);
    }
    const e = this.edges;
    if (value < e[0]!) this.#under += times;
    else if (value >= e[e.length - 1]!) this.#over += times;
    else {
      // binary search for the last edge <= value
      let lo = 0;
      let hi = e.length - 1;
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (e[mid]! <= value) lo = mid;
        else hi = mid;
      }
      this.#counts[lo]! += times;
    }
    this.#sum += value * times;
  }

  /**
   * Counts per bin (without underflow and overflow), a copy.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const h = Histogram.integers(1);
   * h.add(1);
   * assert.deepEqual(h.counts, [0, 1]);
   * ```
   */
  get counts(): number[] {
    return [...this.#counts];
  }

  /**
   * Values below the first edge.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const h = new Histogram([0, 1]);
   * h.add(-3);
   * assert.equal(h.underflow, 1);
   * ```
   */
  get underflow(): number {
    return this.#under;
  }

  /**
   * Values at or above the last edge.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const h = new Histogram([0, 1]);
   * h.add(1);
   * assert.equal(h.overflow, 1);
   * ```
   */
  get overflow(): number {
    return this.#over;
  }

  /**
   * Number of values added.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const h = new Histogram([0, 1]);
   * h.add(0.5);
   * h.add(7);
   * assert.equal(h.count, 2);
   * ```
   */
  get count(): number {
    return this.#under + this.#over + this.#counts.reduce((a, b) => a + b, 0);
  }

  /**
   * Mean of the values added (NaN when empty).
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const h = new Histogram([0, 10]);
   * h.add(1);
   * h.add(3);
   * assert.equal(h.mean, 2);
   * ```
   */
  get mean(): number {
    const n = this.count;
    return n === 0 ? NaN : this.#sum / n;
  }

  /**
   * Bin labels in {@link Histogram.toRecord} order: underflow, each bin, overflow.
   *
   * @returns e.g. `["<0", "0", "1", ">=2"]` or `["<0", "[0,10)", ">=10"]`.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * assert.deepEqual(new Histogram([0, 0.5, 1]).labels(), ["<0", "[0,0.5)", "[0.5,1)", ">=1"]);
   * ```
   */
  labels(): string[] {
    const e = this.edges;
    const bins = this.#counts.map((_, i) =>
      this.integerBins ? String(e[i]) : `[${e[i]},${e[i + 1]})`
    );
    return [`<${e[0]}`, ...bins, `>=${e[e.length - 1]}`];
  }

  /**
   * Adds the counts of `other` (same edges) into this histogram.
   *
   * @param other A histogram with identical edges.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const a = Histogram.integers(1);
   * const b = Histogram.integers(1);
   * a.add(0);
   * b.add(1);
   * a.merge(b);
   * assert.deepEqual(a.counts, [1, 1]);
   * ```
   */
  merge(other: Histogram): void {
    const same = other.edges.length === this.edges.length &&
      other.edges.every((e, i) => e === this.edges[i]);
    if (!same) {
      throw new RangeError(
        `Histogram.merge: edges differ ([${other.edges.join(", ")}] vs ` +
          `[${this.edges.join(", ")}]); only histograms with the same edges can be merged`,
      );
    }
    other.#counts.forEach((c, i) => this.#counts[i]! += c);
    this.#under += other.#under;
    this.#over += other.#over;
    this.#sum += other.#sum;
  }

  /**
   * Forgets every value (the edges stay), e.g. after each logging interval.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const h = Histogram.integers(1);
   * h.add(0);
   * h.reset();
   * assert.equal(h.count, 0);
   * ```
   */
  reset(): void {
    this.#counts.fill(0);
    this.#under = 0;
    this.#over = 0;
    this.#sum = 0;
  }

  /**
   * Flattens to a metrics record: `prefix/<label>` per bin (underflow and overflow included),
   * `prefix/count` and `prefix/mean` (null when empty). Same keys at every call.
   *
   * @param prefix Key prefix, e.g. `"staleness"`.
   * @returns The record.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const h = new Histogram([0, 1]);
   * assert.deepEqual(h.toRecord("x"), {
   *   "x/<0": 0, "x/[0,1)": 0, "x/>=1": 0, "x/count": 0, "x/mean": null,
   * });
   * ```
   */
  toRecord(prefix: string): Record<string, number | null> {
    const labels = this.labels();
    const values = [this.#under, ...this.#counts, this.#over];
    const out: Record<string, number | null> = {};
    labels.forEach((l, i) => out[`${prefix}/${l}`] = values[i]!);
    out[`${prefix}/count`] = this.count;
    out[`${prefix}/mean`] = this.count === 0 ? null : this.mean;
    return out;
  }

  /**
   * Plain data for a checkpoint; {@link Histogram.fromJSON} restores it.
   *
   * @returns Edges, counts, underflow, overflow and sum.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const h = Histogram.integers(2);
   * h.add(1);
   * const back = Histogram.fromJSON(JSON.parse(JSON.stringify(h)));
   * assert.deepEqual(back.toRecord("s"), h.toRecord("s"));
   * ```
   */
  toJSON(): HistogramState {
    return {
      edges: [...this.edges],
      integerBins: this.integerBins,
      counts: [...this.#counts],
      underflow: this.#under,
      overflow: this.#over,
      sum: this.#sum,
    };
  }

  /**
   * Restores a histogram saved with {@link Histogram.toJSON}.
   *
   * @param state The saved data.
   * @returns The histogram.
   *
   * @example Usage
   * ```ts
   * import { Histogram } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const h = Histogram.fromJSON({
   *   edges: [0, 1], integerBins: false, counts: [2], underflow: 0, overflow: 0, sum: 1,
   * });
   * assert.equal(h.mean, 0.5);
   * ```
   */
  static fromJSON(state: HistogramState): Histogram {
    const h = new Histogram(state.edges, state.integerBins);
    if (state.counts.length !== h.#counts.length) {
      throw new RangeError(
        `Histogram.fromJSON: ${state.counts.length} counts for ${h.#counts.length} bins; the ` +
          `saved state is inconsistent`,
      );
    }
    h.#counts = [...state.counts];
    h.#under = state.underflow;
    h.#over = state.overflow;
    h.#sum = state.sum;
    return h;
  }
}

/**
 * The serialized form of a {@link Histogram} (checkpoints).
 *
 * @example Usage
 * ```ts
 * import { Histogram, type HistogramState } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const s: HistogramState = Histogram.integers(0).toJSON();
 * assert.deepEqual(s.counts, [0]);
 * ```
 */
export interface HistogramState {
  /** Bin edges. */
  edges: number[];
  /** Integer labels. */
  integerBins: boolean;
  /** Counts per bin. */
  counts: number[];
  /** Values below the first edge. */
  underflow: number;
  /** Values at or above the last edge. */
  overflow: number;
  /** Sum of all values (for the mean). */
  sum: number;
}
