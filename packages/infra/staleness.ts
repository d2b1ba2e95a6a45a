/**
 * Bounded staleness: which samples the trainer may use, given the policy version that produced
 * each one.
 *
 * Every sample carries `policyVersion`, the version of the weights that generated it. At trainer
 * version `v` a sample's staleness is `v - policyVersion`, and a {@link StalenessGate} with bound
 * η lets it through only when the staleness is at most η (AReaL's `max_head_offpolicyness`, veRL's
 * `staleness_threshold`, TRL's `max_staleness`). The three training modes are the same gate
 * with different η: synchronous on-policy is η = 0, one-step-off is η = 1, fully asynchronous is
 * η = k.
 *
 * Design decisions:
 * - The gate sits where samples enter the trainer, not where they are produced: only there is
 *   the version that matters (the trainer's) known exactly, so the guarantee "no sample is used
 *   with staleness > η" holds however late a sample arrives or however far a worker lags.
 *   Producer-side checks (a worker that refuses to publish with old weights) only save work.
 * - A stale sample is never dropped silently: it is counted as `dropped`, or as `regenerated`
 *   when the policy is `"regenerate"` (the caller sends its prompt back to the work queue), and
 *   every decision goes into a staleness histogram, so `used + dropped + regenerated` always
 *   equals the number of samples decided.
 * - A sample from a version newer than the trainer's is a bookkeeping bug, not staleness, and
 *   throws.
 *
 * @module
 */

import { Histogram, type HistogramState } from "./metrics/histogram.ts";
import { checkInt, checkVersion } from "./_util.ts";

/**
 * Anything tagged with the policy version that produced it.
 *
 * @example Usage
 * ```ts
 * import type { VersionedSample } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const s: VersionedSample & { text: string } = { policyVersion: 3, text: "42" };
 * assert.equal(s.policyVersion, 3);
 * ```
 */
export interface VersionedSample {
  /** Version of the policy weights that generated the sample. */
  readonly policyVersion: number;
}

/**
 * What happens to a sample that is too stale: `"drop"` discards it, `"regenerate"` asks for its
 * prompt to be generated again under the current weights.
 *
 * @example Usage
 * ```ts
 * import type { StalePolicy } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const p: StalePolicy = "regenerate";
 * assert.equal(p, "regenerate");
 * ```
 */
export type StalePolicy = "drop" | "regenerate";

/**
 * The gate's verdict for one sample.
 *
 * @example Usage
 * ```ts
 * import type { StalenessDecision } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const d: StalenessDecision = "use";
 * assert.equal(d, "use");
 * ```
 */
export type StalenessDecision = "use" | "drop" | "regenerate";

/**
 * Training modes and their staleness bound: `"sync"` (η = 0), `"one-step-off"` (η = 1),
 * `"async"` (η = k, given).
 *
 * @example Usage
 * ```ts
 * import type { RolloutMode } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const m: RolloutMode = "one-step-off";
 * assert.equal(m, "one-step-off");
 * ```
 */
export type RolloutMode = "sync" | "one-step-off" | "async";

/**
 * Options of {@link StalenessGate}.
 *
 * @example Usage
 * ```ts
 * import type { StalenessGateOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: StalenessGateOptions = { maxStaleness: 2, policy: "drop" };
 * assert.equal(o.maxStaleness, 2);
 * ```
 */
export interface StalenessGateOptions {
  /** η: the largest `trainerVersion - policyVersion` a used sample may have (integer >= 0). */
  maxStaleness: number;
  /** What to do with a sample beyond η (default `"drop"`). */
  policy?: StalePolicy;
  /** Largest staleness with its own histogram bin (default η + 2; larger ones overflow). */
  histogramMax?: number;
}

/**
 * Counts of a {@link StalenessGate}'s decisions.
 *
 * @example Usage
 * ```ts
 * import { StalenessGate, type StalenessCounts } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const c: StalenessCounts = new StalenessGate({ maxStaleness: 1 }).counts;
 * assert.deepEqual(c, { used: 0, dropped: 0, regenerated: 0 });
 * ```
 */
export interface StalenessCounts {
  /** Samples let through. */
  used: number;
  /** Stale samples discarded (policy `"drop"`). */
  dropped: number;
  /** Stale samples sent back for regeneration (policy `"regenerate"`). */
  regenerated: number;
}

/**
 * Saved state of a {@link StalenessGate} (checkpoints).
 *
 * @example Usage
 * ```ts
 * import { StalenessGate, type StalenessGateState } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const s: StalenessGateState = new StalenessGate({ maxStaleness: 0 }).toJSON();
 * assert.equal(s.maxStaleness, 0);
 * ```
 */
export interface StalenessGateState {
  /** η. */
  maxStaleness: number;
  /** Stale policy. */
  policy: StalePolicy;
  /** Decision counts. */
  counts: StalenessCounts;
  /** Staleness histogram. */
  histogram: HistogramState;
}

/**
 * Samples partitioned by {@link StalenessGate.partition}.
 *
 * @example Usage
 * ```ts
 * import { StalenessGate, type StalenessPartition } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const p: StalenessPartition<{ policyVersion: number }> = new StalenessGate({ maxStaleness: 0 })
 *   .partition([{ policyVersion: 1 }], 1);
 * assert.equal(p.use.length, 1);
 * ```
 */
export interface StalenessPartition<T> {
  /** Samples within η, in input order. */
  use: T[];
  /** Stale samples discarded. */
  drop: T[];
  /** Stale samples whose prompts must be generated again. */
  regenerate: T[];
}

/**
 * Lets a sample through only when `trainerVersion - sample.policyVersion <= maxStaleness`;
 * counts and histograms every decision.
 *
 * @example Usage
 * ```ts
 * import { StalenessGate } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const gate = StalenessGate.forMode("one-step-off"); // η = 1
 * assert.equal(gate.decide({ policyVersion: 4 }, 5), "use"); // one step behind: fine
 * assert.equal(gate.decide({ policyVersion: 3 }, 5), "drop"); // two steps behind: dropped
 * assert.deepEqual(gate.counts, { used: 1, dropped: 1, regenerated: 0 });
 * assert.equal(gate.toRecord()["staleness/2"], 1);
 * ```
 */
export class StalenessGate {
  /** η: the largest staleness a used sample may have. */
  readonly maxStaleness: number;
  /** What happens to samples beyond η. */
  readonly policy: StalePolicy;
  /** Staleness of every decided sample (used or not). */
  readonly histogram: Histogram;
  #counts: StalenessCounts = { used: 0, dropped: 0, regenerated: 0 };

  /**
   * A gate with zero counts and an empty histogram.
   *
   * @param options η, the stale policy and the histogram range.
   */
  constructor(options: StalenessGateOptions) {
    this.maxStaleness = checkInt(
      options.maxStaleness,
      "StalenessGate: maxStaleness",
      0,
      "use 0 for synchronous on-policy training, 1 for one-step-off, k for asynchronous",
    );
    const policy = options.policy ?? "drop";
    if (policy !== "drop" && policy !== "regenerate") {
      throw new RangeError(
        `StalenessGate: policy must be "drop" or "regenerate", got ${JSON.stringify(policy)}`,
      );
    }
    this.policy = policy;
    const max = options.histogramMax ?? this.maxStaleness + 2;
    checkInt(max, "StalenessGate: histogramMax", 0, "pass the largest staleness to bin");
    this.histogram = Histogram.integers(max);
  }

  /**
   * The gate of a training mode: `"sync"` η = 0, `"one-step-off"` η = 1, `"async"` η given.
   *
   * @param mode The training mode.
   * @param options η (required for `"async"`, must match the mode otherwise) and the policy.
   * @returns The gate.
   *
   * @example Usage
   * ```ts
   * import { StalenessGate } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * assert.equal(StalenessGate.forMode("sync").maxStaleness, 0);
   * assert.equal(StalenessGate.forMode("async", { maxStaleness: 4 }).maxStaleness, 4);
   * assert.throws(() => StalenessGate.forMode("async"), /needs options.maxStaleness/);
   * ```
   */
  static forMode(
    mode: RolloutMode,
    options: Partial<StalenessGateOptions> = {},
  ): StalenessGate {
    let eta: number;
    if (mode === "sync") eta = 0;
    else if (mode === "one-step-off") eta = 1;
    else if (mode === "async") {
      if (options.maxStaleness === undefined) {
        throw new RangeError(
          `StalenessGate.forMode("async") needs options.maxStaleness (η, e.g. 2-8); ` +
            `use "one-step-off" for η = 1`,
        );
      }
      eta = options.maxStaleness;
    } else {
      throw new RangeError(
        `StalenessGate.forMode: mode must be "sync", "one-step-off" or "async", got ` +
          `${JSON.stringify(mode)}`,
      );
    }
    if (options.maxStaleness !== undefined && options.maxStaleness !== eta) {
      throw new RangeError(
        `StalenessGate.forMode(${JSON.stringify(mode)}): maxStaleness is ${eta} in this mode, ` +
          `got options.maxStaleness ${options.maxStaleness}; use mode "async" for another η`,
      );
    }
    return new StalenessGate({ ...options, maxStaleness: eta });
  }

  /**
   * Staleness of a sample at `trainerVersion` (without recording anything).
   *
   * @param sample The sample.
   * @param trainerVersion The trainer's current version.
   * @returns `trainerVersion - sample.policyVersion`.
   *
   * @example Usage
   * ```ts
   * import { StalenessGate } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * assert.equal(new StalenessGate({ maxStaleness: 1 }).staleness({ policyVersion: 2 }, 5), 3);
   * ```
   */
  staleness(sample: VersionedSample, trainerVersion: number): number {
    checkVersion(trainerVersion, "trainerVersion");
    const pv = checkVersion(sample?.policyVersion, "sample.policyVersion");
    if (pv > trainerVersion) {
      throw new RangeError(
        `StalenessGate: sample.policyVersion ${pv} is newer than the trainer's version ` +
          `${trainerVersion}; versions come from the trainer, so this is a bookkeeping bug ` +
          `(check that workers tag samples with the version they loaded)`,
      );
    }
    return trainerVersion - pv;
  }

  /**
   * Decides one sample and records the decision.
   *
   * @param sample The sample (its `policyVersion`).
   * @param trainerVersion The trainer's current version.
   * @returns `"use"` within η; otherwise the stale policy (`"drop"` or `"regenerate"`).
   *
   * @example Usage
   * ```ts
   * import { StalenessGate } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const gate = new StalenessGate({ maxStaleness: 0, policy: "regenerate" });
   * assert.equal(gate.decide({ policyVersion: 7 }, 7), "use");
   * assert.equal(gate.decide({ policyVersion: 6 }, 7), "regenerate");
   * ```
   */
  decide(sample: VersionedSample, trainerVersion: number): StalenessDecision {
    const s = this.staleness(sample, trainerVersion);
    this.histogram.add(s);
    if (s <= this.maxStaleness) {
      this.#counts.used++;
      return "use";
    }
    if (this.policy === "drop") {
      this.#counts.dropped++;
      return "drop";
    }
    this.#counts.regenerated++;
    return "regenerate";
  }

  /**
   * Decides a batch, keeping input order within each group.
   *
   * @param samples The samples.
   * @param trainerVersion The trainer's current version.
   * @returns The samples split by decision.
   *
   * @example Usage
   * ```ts
   * import { StalenessGate } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const gate = StalenessGate.forMode("async", { maxStaleness: 2 });
   * const out = gate.partition([0, 1, 2, 3].map((v) => ({ policyVersion: v })), 3);
   * assert.deepEqual(out.use.map((s) => s.policyVersion), [1, 2, 3]);
   * assert.deepEqual(out.drop.map((s) => s.policyVersion), [0]);
   * ```
   */
  partition<T extends VersionedSample>(
    samples: Iterable<T>,
    trainerVersion: number,
  ): StalenessPartition<T> {
    const out: StalenessPartition<T> = { use: [], drop: [], regenerate: [] };
    for (const s of samples) out[this.decide(s, trainerVersion)].push(s);
    return out;
  }

  /**
   * Decision counts so far (a copy).
   *
   * @example Usage
   * ```ts
   * import { StalenessGate } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const gate = new StalenessGate({ maxStaleness: 0 });
   * gate.decide({ policyVersion: 0 }, 0);
   * assert.equal(gate.counts.used, 1);
   * ```
   */
  get counts(): StalenessCounts {
    return { ...this.#counts };
  }

  /**
   * Metrics: `prefix/used`, `prefix/dropped`, `prefix/regenerated`, `prefix/max` and the
   * histogram's `prefix/<staleness>` bins, count and mean.
   *
   * @param prefix Key prefix (default `"staleness"`).
   * @returns A flat record for a metrics sink.
   *
   * @example Usage
   * ```ts
   * import { StalenessGate } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const gate = new StalenessGate({ maxStaleness: 1 });
   * gate.decide({ policyVersion: 2 }, 3);
   * const r = gate.toRecord();
   * assert.equal(r["staleness/used"], 1);
   * assert.equal(r["staleness/1"], 1);
   * ```
   */
  toRecord(prefix = "staleness"): Record<string, number | null> {
    return {
      [`${prefix}/used`]: this.#counts.used,
      [`${prefix}/dropped`]: this.#counts.dropped,
      [`${prefix}/regenerated`]: this.#counts.regenerated,
      [`${prefix}/max`]: this.maxStaleness,
      ...this.histogram.toRecord(prefix),
    };
  }

  /**
   * Saved state for a checkpoint; {@link StalenessGate.fromJSON} restores it.
   *
   * @returns η, policy, counts and histogram.
   *
   * @example Usage
   * ```ts
   * import { StalenessGate } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const gate = new StalenessGate({ maxStaleness: 1 });
   * gate.decide({ policyVersion: 0 }, 3);
   * const back = StalenessGate.fromJSON(JSON.parse(JSON.stringify(gate)));
   * assert.deepEqual(back.counts, gate.counts);
   * ```
   */
  toJSON(): StalenessGateState {
    return {
      maxStaleness: this.maxStaleness,
      policy: this.policy,
      counts: { ...this.#counts },
      histogram: this.histogram.toJSON(),
    };
  }

  /**
   * Restores a gate saved with {@link StalenessGate.toJSON}.
   *
   * @param state The saved state.
   * @returns The gate.
   *
   * @example Usage
   * ```ts
   * import { StalenessGate } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const saved = new StalenessGate({ maxStaleness: 2, policy: "regenerate" }).toJSON();
   * assert.equal(StalenessGate.fromJSON(saved).policy, "regenerate");
   * ```
   */
  static fromJSON(state: StalenessGateState): StalenessGate {
    const gate = new StalenessGate({
      maxStaleness: state.maxStaleness,
      policy: state.policy,
      histogramMax: state.histogram.edges.length - 2,
    });
    gate.histogram.merge(Histogram.fromJSON(state.histogram));
    gate.#counts = { ...state.counts };
    return gate;
  }
}
