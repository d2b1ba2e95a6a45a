/**
 * A replay buffer for RL rollouts: bounded capacity with first-in-first-out eviction, three
 * sampling modes (uniform FIFO, prioritised, success replay), policy-version staleness tags, and
 * exact save/restore.
 *
 * - `"fifo"`: uniform sampling over the buffer.
 * - `"prioritized"`: prioritised experience replay (Schaul et al., arXiv 1511.05952):
 *   `P(i) = p_i^α / Σ_j p_j^α`, importance weights `w_i = (N·P(i))^−β / max_j (N·P(j))^−β`
 *   (normalised by the largest weight in the buffer, as OpenAI Baselines), new entries get the
 *   largest priority seen so far unless given one, `updatePriorities` after training on them.
 * - `"success"`: success replay (RLEP-style reuse of verified successes, DAPO/GRESO-style reuse
 *   of informative groups): `add` keeps an entry only when `success` is true, e.g. a group with
 *   at least one correct response (`groupHasSuccess`), and samples uniformly.
 *
 * Design: entries live in insertion order (oldest first); every sampling decision is a function
 * of that order, the priorities and a {@link CounterRng} whose state is three integers. So
 * `toJSON()` captures everything (entries, counters, RNG state) and `ReplayBuffer.fromJSON`
 * continues with exactly the samples the buffer would have produced had it never stopped.
 * Sampling is `O(N + n log N)` with replacement (prefix sums and binary search) and `O(n·N)`
 * without; eviction is `O(N)`. Meant for buffers of up to ~10^5 entries (groups or prompts,
 * not tokens). Items are stored by reference; `toJSON` output round-trips through
 * `JSON.stringify` when the items do.
 *
 * Staleness: every entry carries the policy `version` that produced it (the weight-sync
 * counter); `evictOlderThan(v)` drops entries with `version < v`, e.g. `current − maxStaleness`.
 *
 * @module
 */

import {
  checkBoolean,
  checkChoice,
  checkKnownFields,
  checkNumber,
  checkObject,
  show,
} from "./_args.ts";
import { CounterRng, type CounterRngState } from "./rng.ts";

/** How a {@link ReplayBuffer} admits and samples entries. */
export type ReplayMode = "fifo" | "prioritized" | "success";

/** Options of a {@link ReplayBuffer}. */
export interface ReplayOptions {
  /** The most entries kept; adding beyond it evicts the oldest. An integer ≥ 1. */
  capacity: number;
  /** `"fifo"` (default), `"prioritized"` or `"success"`. */
  mode?: ReplayMode;
  /** Priority exponent α ≥ 0 (default 0.6; 0 is uniform). Prioritized mode only. */
  alpha?: number;
  /** Importance-weight exponent β ≥ 0 (default 0.4; 1 fully corrects). Prioritized mode only. */
  beta?: number;
  /** RNG seed, an integer in [0, 2^53) (default 0). */
  seed?: number;
  /** RNG stream, an integer in [0, 2^32) (default 0): one per buffer under a shared seed. */
  stream?: number;
}

/** Metadata of an added entry. */
export interface AddMeta {
  /** The policy version (weight-sync counter) that produced the entry, an integer ≥ 0. */
  version: number;
  /** Priority ≥ 0 (prioritized mode; default: the largest priority seen so far, initially 1). */
  priority?: number;
  /** Whether the entry succeeded (required in success mode, where `false` is not stored). */
  success?: boolean;
}

/** A stored entry. */
export interface ReplayEntry<T> {
  /** A unique id, increasing with insertion (0, 1, 2, … over the buffer's life). */
  id: number;
  /** The stored item. */
  item: T;
  /** Its policy version. */
  version: number;
  /** Its priority (1 outside prioritized mode unless given). */
  priority: number;
}

/** A sampled entry with its sampling probability and importance weight. */
export interface ReplaySample<T> extends ReplayEntry<T> {
  /** Its probability under one draw (`P(i)`; `1/N` in the uniform modes). */
  probability: number;
  /** Its importance weight (`(N·P(i))^−β / max_j`; 1 in the uniform modes). */
  weight: number;
}

/** The serialised form of a {@link ReplayBuffer} (`toJSON()`). */
export interface ReplayBufferJSON<T> {
  /** Format tag, `"rlvr.replay/1"`. */
  format: "rlvr.replay/1";
  /** The options, defaults filled in. */
  options: Required<ReplayOptions>;
  /** The id the next entry gets. */
  nextId: number;
  /** The largest priority seen (the default priority of new prioritized entries). */
  maxPriority: number;
  /** Lifetime counters. */
  counts: ReplayCounts;
  /** The RNG state. */
  rng: CounterRngState;
  /** The entries, oldest first. */
  entries: ReplayEntry<T>[];
}

/** Lifetime counters of a {@link ReplayBuffer}. */
export interface ReplayCounts {
  /** Entries stored. */
  added: number;
  /** Entries refused (success mode, `success: false`). */
  rejected: number;
  /** Entries dropped by capacity. */
  evicted: number;
  /** Entries dropped by `evictOlderThan`. */
  stale: number;
  /** Entries dropped by `remove`. */
  removed: number;
}

/**
 * Whether a group of rewards holds at least one success (`reward ≥ threshold`, default 1):
 * the admission test of success replay for binary verifiers.
 *
 * @example Usage
 * ```ts
 * import { groupHasSuccess } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(groupHasSuccess([0, 0, 1, 0]), true);
 * assert.equal(groupHasSuccess([0, 0.4], 0.5), false);
 * ```
 */
export function groupHasSuccess(rewards: ArrayLike<number>, threshold = 1): boolean {
  const owner = "groupHasSuccess";
  checkNumber(owner, "threshold", threshold);
  for (let i = 0; i < rewards.length; i++) {
    const r = rewards[i];
    if (typeof r !== "number" || Number.isNaN(r)) {
      throw new RangeError(`${owner}: rewards[${i}] is ${show(r)}; rewards must be numbers`);
    }
    if (r >= threshold) return true;
  }
  return false;
}

function resolveOptions(owner: string, options: unknown): Required<ReplayOptions> {
  checkObject(owner, "options", options, "{capacity, mode?, alpha?, beta?, seed?, stream?}");
  const o = options as ReplayOptions;
  checkKnownFields(owner, "options", o, ["capacity", "mode", "alpha", "beta", "seed", "stream"]);
  return {
    capacity: checkNumber(owner, "capacity", o.capacity, { min: 1, integer: true }),
    mode: checkChoice(owner, "mode", o.mode ?? "fifo", ["fifo", "prioritized", "success"] as const),
    alpha: checkNumber(owner, "alpha", o.alpha ?? 0.6, { min: 0 }),
    beta: checkNumber(owner, "beta", o.beta ?? 0.4, { min: 0 }),
    seed: checkNumber(owner, "seed", o.seed ?? 0, {
      min: 0,
      max: Number.MAX_SAFE_INTEGER,
      integer: true,
    }),
    stream: checkNumber(owner, "stream", o.stream ?? 0, {
      min: 0,
      max: 4294967295,
      integer: true,
    }),
  };
}

/**
 * A bounded replay buffer with FIFO eviction; see the module documentation for the modes.
 *
 * @example Usage
 * ```ts
 * import { ReplayBuffer } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const buf = new ReplayBuffer<string>({ capacity: 3, mode: "prioritized", seed: 1 });
 * buf.add("a", { version: 0, priority: 1 });
 * buf.add("b", { version: 1, priority: 4 });
 * buf.add("c", { version: 2, priority: 2 });
 * const batch = buf.sample(2);
 * assert.equal(batch.length, 2);
 * buf.updatePriorities(batch.map((s) => s.id), [0.5, 0.5]);
 * assert.equal(buf.evictOlderThan(1), 1); // "a" came from policy version 0
 * // save → restore → the same next samples
 * const copy = ReplayBuffer.fromJSON<string>(JSON.parse(JSON.stringify(buf.toJSON())));
 * assert.deepEqual(copy.sample(4), buf.sample(4));
 * ```
 */
export class ReplayBuffer<T> {
  /** The validated options. */
  readonly options: Readonly<Required<ReplayOptions>>;
  #entries: ReplayEntry<T>[] = [];
  #nextId = 0;
  #maxPriority = 1;
  #rng: CounterRng;
  #counts: ReplayCounts = { added: 0, rejected: 0, evicted: 0, stale: 0, removed: 0 };

  /** An empty buffer; throws on invalid options. */
  constructor(options: ReplayOptions) {
    this.options = Object.freeze(resolveOptions("ReplayBuffer", options));
    this.#rng = new CounterRng(this.options.seed, this.options.stream);
  }

  /** The number of entries. */
  get size(): number {
    return this.#entries.length;
  }

  /** The capacity. */
  get capacity(): number {
    return this.options.capacity;
  }

  /** A copy of the lifetime counters. */
  get counts(): ReplayCounts {
    return { ...this.#counts };
  }

  /** The entries, oldest first (copies of the records; the items themselves are shared). */
  entries(): ReplayEntry<T>[] {
    return this.#entries.map((e) => ({ ...e }));
  }

  /**
   * Adds an item with its policy version (and priority or success flag). Returns the new
   * entry's id, or `null` when success mode refused it. At capacity, the oldest entry goes.
   */
  add(item: T, meta: AddMeta): number | null {
    const owner = "ReplayBuffer.add";
    checkObject(owner, "meta", meta, "{version, priority?, success?}");
    checkKnownFields(owner, "meta", meta, ["version", "priority", "success"]);
    const version = checkNumber(owner, "meta.version", meta.version, { min: 0, integer: true });
    const priority = meta.priority === undefined
      ? (this.options.mode === "prioritized" ? this.#maxPriority : 1)
      : checkNumber(owner, "meta.priority", meta.priority, { min: 0 });
    if (this.options.mode === "success") {
      if (meta.success === undefined) {
        throw new TypeError(
          `${owner}: meta.success is required in success mode (true keeps the entry; see groupHasSuccess), got undefined`,
        );
      }
      if (!checkBoolean(owner, "meta.success", meta.success)) {
        this.#counts.rejected++;
        return null;
      }
    } else if (meta.success !== undefined) {
      checkBoolean(owner, "meta.success", meta.success);
    }
    if (priority > this.#maxPriority) this.#maxPriority = priority;
    if (this.#entries.length >= this.options.capacity) {
      const drop = this.#entries.length - this.options.capacity + 1;
      this.#entries.splice(0, drop);
      this.#counts.evicted += drop;
    }
    const id = this.#nextId++;
    this.#entries.push({ id, item, version, priority });
    this.#counts.added++;
    return id;
  }

  /** Removes the entries with `version < minVersion`; returns how many went. */
  evictOlderThan(minVersion: number): number {
    checkNumber("ReplayBuffer.evictOlderThan", "minVersion", minVersion, { min: 0 });
    const before = this.#entries.length;
    this.#entries = this.#entries.filter((e) => e.version >= minVersion);
    const gone = before - this.#entries.length;
    this.#counts.stale += gone;
    return gone;
  }

  /** Removes the entries with these ids (unknown ids are ignored); returns how many went. */
  remove(ids: readonly number[]): number {
    if (!Array.isArray(ids)) {
      throw new TypeError(
        `ReplayBuffer.remove: ids must be an array of entry ids, got ${show(ids)}`,
      );
    }
    const drop = new Set(ids);
    const before = this.#entries.length;
    this.#entries = this.#entries.filter((e) => !drop.has(e.id));
    const gone = before - this.#entries.length;
    this.#counts.removed += gone;
    return gone;
  }

  /** Sets new priorities (≥ 0) for entries by id (prioritized mode); unknown ids are an error. */
  updatePriorities(ids: readonly number[], priorities: readonly number[]): void {
    const owner = "ReplayBuffer.updatePriorities";
    if (this.options.mode !== "prioritized") {
      throw new TypeError(
        `${owner}: this buffer's mode is ${
          JSON.stringify(this.options.mode)
        }; only a "prioritized" buffer has priorities`,
      );
    }
    if (!Array.isArray(ids) || !Array.isArray(priorities) || ids.length !== priorities.length) {
      throw new RangeError(
        `${owner}: ids and priorities must be arrays of equal length, got ${show(ids)} and ${
          show(priorities)
        }`,
      );
    }
    const byId = new Map(this.#entries.map((e) => [e.id, e]));
    const checked = priorities.map((p, i) => checkNumber(owner, `priorities[${i}]`, p, { min: 0 }));
    for (let i = 0; i < ids.length; i++) {
      const e = byId.get(ids[i]!);
      if (!e) {
        throw new RangeError(
          `${owner}: ids[${i}] = ${show(ids[i])} is not in the buffer (evicted or never added)`,
        );
      }
      e.priority = checked[i]!;
      if (e.priority > this.#maxPriority) this.#maxPriority = e.priority;
    }
  }

  /** The single-draw probabilities of the entries (oldest first). */
  probabilities(): Float64Array {
    const N = this.#entries.length;
    const p = new Float64Array(N);
    if (N === 0) return p;
    if (this.options.mode !== "prioritized") return p.fill(1 / N);
    let total = 0;
    for (let i = 0; i < N; i++) {
      p[i] = this.#entries[i]!.priority ** this.options.alpha;
      total += p[i]!;
    }
    if (!(total > 0)) {
      throw new RangeError(
        "ReplayBuffer: every priority is 0, so nothing can be drawn; give some entry a priority > 0",
      );
    }
    for (let i = 0; i < N; i++) p[i] = p[i]! / total;
    return p;
  }

  /**
   * Draws `n` entries (with replacement by default). Uniform in `"fifo"` and `"success"`
   * modes, `∝ priority^α` in `"prioritized"` mode, where each sample carries its importance
   * weight. Without replacement, each draw is from the entries not drawn yet (renormalised) and
   * the reported `probability`/`weight` are still the single-draw ones; `n` must be ≤ size.
   */
  sample(n: number, options: { replace?: boolean } = {}): ReplaySample<T>[] {
    const owner = "ReplayBuffer.sample";
    checkNumber(owner, "n", n, { min: 0, integer: true });
    checkObject(owner, "options", options, "{replace?}");
    checkKnownFields(owner, "options", options, ["replace"]);
    const replace = checkBoolean(owner, "options.replace", options.replace ?? true);
    const N = this.#entries.length;
    if (n === 0) return [];
    if (N === 0) {
      throw new RangeError(`${owner}: the buffer is empty; add entries before sampling ${n}`);
    }
    if (!replace && n > N) {
      throw new RangeError(
        `${owner}: cannot draw ${n} entries without replacement from ${N}; ask for at most Math.min(n, buffer.size)`,
      );
    }
    const probs = this.probabilities();
    const prioritized = this.options.mode === "prioritized";
    let maxWeight = 1;
    if (prioritized) {
      let pMin = Infinity;
      for (let i = 0; i < N; i++) if (probs[i]! > 0 && probs[i]! < pMin) pMin = probs[i]!;
      maxWeight = (N * pMin) ** -this.options.beta;
    }
    const picks: number[] = [];
    if (!prioritized) {
      if (replace) {
        for (let j = 0; j < n; j++) picks.push(this.#rng.nextInt(N));
      } else {
        const idx = Array.from({ length: N }, (_, i) => i);
        for (let j = 0; j < n; j++) {
          const r = j + this.#rng.nextInt(N - j);
          const t = idx[j]!;
          idx[j] = idx[r]!;
          idx[r] = t;
          picks.push(idx[j]!);
        }
      }
    } else if (replace) {
      const cum = new Float64Array(N);
      let acc = 0;
      for (let i = 0; i < N; i++) cum[i] = acc += probs[i]!;
      for (let j = 0; j < n; j++) picks.push(searchCumulative(cum, this.#rng.next() * acc));
    } else {
      const w = Float64Array.from(probs);
      for (let j = 0; j < n; j++) {
        let total = 0;
        for (let i = 0; i < N; i++) total += w[i]!;
        if (!(total > 0)) {
          throw new RangeError(
            `${owner}: only ${j} entries have priority > 0; cannot draw ${n} without replacement`,
          );
        }
        const target = this.#rng.next() * total;
        let acc = 0;
        let pick = -1;
        for (let i = 0; i < N; i++) {
          if (w[i]! <= 0) continue;
          acc += w[i]!;
          pick = i;
          if (target < acc) break;
        }
        picks.push(pick);
        w[pick] = 0;
      }
    }
    return picks.map((i) => {
      const e = this.#entries[i]!;
      const probability = probs[i]!;
      const weight = prioritized ? (N * probability) ** -this.options.beta / maxWeight : 1;
      return { ...e, probability, weight };
    });
  }

  /** The whole state as plain data (entries, counters, RNG state); see the module doc. */
  toJSON(): ReplayBufferJSON<T> {
    return {
      format: "rlvr.replay/1",
      options: { ...this.options },
      nextId: this.#nextId,
      maxPriority: this.#maxPriority,
      counts: { ...this.#counts },
      rng: this.#rng.state(),
      entries: this.entries(),
    };
  }

  /** Restores a buffer saved with `toJSON()`; throws naming the first malformed field. */
  static fromJSON<T>(json: ReplayBufferJSON<T>): ReplayBuffer<T> {
    const owner = "ReplayBuffer.fromJSON";
    checkObject(owner, "json", json, "from ReplayBuffer.toJSON()");
    if (json.format !== "rlvr.replay/1") {
      throw new TypeError(
        `${owner}: format must be "rlvr.replay/1", got ${
          show(json.format)
        }; pass the output of toJSON()`,
      );
    }
    const buf = new ReplayBuffer<T>(json.options);
    buf.#nextId = checkNumber(owner, "nextId", json.nextId, { min: 0, integer: true });
    buf.#maxPriority = checkNumber(owner, "maxPriority", json.maxPriority, { min: 0 });
    checkObject(owner, "counts", json.counts, "{added, rejected, evicted, stale, removed}");
    for (const k of ["added", "rejected", "evicted", "stale", "removed"] as const) {
      buf.#counts[k] = checkNumber(owner, `counts.${k}`, json.counts[k], { min: 0, integer: true });
    }
    checkObject(owner, "rng", json.rng, "{seed, stream, index}");
    if (json.rng.seed !== buf.options.seed || json.rng.stream !== buf.options.stream) {
      throw new RangeError(
        `${owner}: rng {seed ${json.rng.seed}, stream ${json.rng.stream}} does not match options {seed ${buf.options.seed}, stream ${buf.options.stream}}`,
      );
    }
    buf.#rng = CounterRng.fromState(json.rng);
    if (!Array.isArray(json.entries) || json.entries.length > buf.options.capacity) {
      throw new RangeError(
        `${owner}: entries must be an array of at most capacity (${buf.options.capacity}) entries, got ${
          show(json.entries)
        }`,
      );
    }
    let prevId = -1;
    buf.#entries = json.entries.map((e, i) => {
      checkObject(owner, `entries[${i}]`, e, "{id, item, version, priority}");
      const id = checkNumber(owner, `entries[${i}].id`, e.id, {
        min: prevId + 1,
        max: buf.#nextId - 1,
        integer: true,
      });
      prevId = id;
      return {
        id,
        item: e.item,
        version: checkNumber(owner, `entries[${i}].version`, e.version, { min: 0, integer: true }),
        priority: checkNumber(owner, `entries[${i}].priority`, e.priority, { min: 0 }),
      };
    });
    return buf;
  }
}

/** The first index with `cum[i] > target` (cum non-decreasing); the last positive-mass index. */
function searchCumulative(cum: Float64Array, target: number): number {
  let lo = 0;
  let hi = cum.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cum[mid]! > target) hi = mid;
    else lo = mid + 1;
  }
  // guard the measure-zero case target ≥ total: step back over zero-mass tail entries
  while (lo > 0 && cum[lo]! === cum[lo - 1]!) lo--;
  return lo;
}
