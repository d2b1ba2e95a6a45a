/**
 * A bounded pool of sandbox slots: at most `concurrency` test cases run at once, whoever asks.
 *
 * Design: one pool is shared by every code reward in a process (so a batch of samples cannot
 * oversubscribe the machine), tasks queue in FIFO order, and each slot may hold one warm
 * resource (a loaded Python interpreter) tagged with a key (the program it serves). A free slot
 * takes, in this order: a queued task its resource can serve (reuse); the first task that needs
 * no resource or whose program no slot is serving yet (so a batch warms up one interpreter per
 * program, not one per slot); else a task of a program already served, but only when at least
 * 4 of its cases wait per running one (a spare slot then warms up a second interpreter for it).
 * Tasks handed out in one go (a burst of `run` calls) are seen whole before slots are assigned.
 * A resource is closed as soon as its slot moves to another key or no queued task needs it, so
 * no interpreter of a finished program lingers. Aborting a queued task removes it from the
 * queue.
 *
 * @module
 */

/** A resource a slot keeps between tasks of the same key. */
export interface SlotResource {
  /** The key of the tasks it serves. */
  readonly key: string;
  /** Releases it (kills the process). */
  close(): Promise<void>;
}

/** A slot of the pool, lent to one task at a time. */
export interface PoolSlot {
  /** Which slot (0 .. concurrency-1). */
  readonly index: number;
  /** The warm resource left by the previous task of the same key, or `null`. */
  resource: SlotResource | null;
}

/** Options of {@link SandboxPool}. */
export interface PoolOptions {
  /** Most tasks running at once (integer >= 1; default: the number of CPU cores). */
  concurrency?: number;
}

/** Options of {@link SandboxPool.run}. */
export interface PoolRunOptions {
  /** Tasks with the same key may reuse a slot's resource (default `""`: none to share). */
  key?: string;
  /** Removes the task from the queue when aborted (it rejects with the abort reason). */
  signal?: AbortSignal;
}

interface Entry {
  key: string;
  start: (slot: PoolSlot) => void;
}

/**
 * Runs async tasks with bounded concurrency, lending each a {@link PoolSlot}.
 *
 * @example Usage
 * ```ts
 * import { SandboxPool } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * const pool = new SandboxPool({ concurrency: 2 });
 * let running = 0;
 * let peak = 0;
 * const task = async () => {
 *   peak = Math.max(peak, ++running);
 *   await new Promise((r) => setTimeout(r, 10));
 *   running--;
 * };
 * await Promise.all([1, 2, 3, 4, 5].map(() => pool.run(task)));
 * assert.equal(peak, 2);
 * assert.equal(pool.maxActive, 2);
 * await pool.close();
 * ```
 */
export class SandboxPool {
  /** Most tasks running at once. */
  readonly concurrency: number;
  #free: PoolSlot[];
  #queue: Entry[] = [];
  #active = 0;
  #maxActive = 0;
  #closing: Promise<void>[] = [];
  #running = new Map<PoolSlot, string>();
  #scheduled = false;

  /** Creates a pool of `options.concurrency` slots (default: the number of CPU cores). */
  constructor(options: PoolOptions = {}) {
    const n = options.concurrency ?? defaultConcurrency();
    if (!Number.isInteger(n) || n < 1) {
      throw new RangeError(`SandboxPool: concurrency must be an integer >= 1, got ${n}`);
    }
    this.concurrency = n;
    this.#free = Array.from({ length: n }, (_, index) => ({ index, resource: null }));
  }

  /** Tasks running now. */
  get active(): number {
    return this.#active;
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.#queue.length;
  }

  /** The most tasks that ever ran at once in this pool. */
  get maxActive(): number {
    return this.#maxActive;
  }

  /** Runs `task` when a slot is free; resolves or rejects with it. */
  run<T>(task: (slot: PoolSlot) => Promise<T>, options: PoolRunOptions = {}): Promise<T> {
    const key = options.key ?? "";
    const signal = options.signal;
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const entry: Entry = {
        key,
        start: (slot) => {
          signal?.removeEventListener("abort", onAbort);
          this.#execute(slot, entry, task).then(resolve, reject);
        },
      };
      const onAbort = () => {
        const i = this.#queue.indexOf(entry);
        if (i >= 0) {
          this.#queue.splice(i, 1);
          reject(signal!.reason);
        }
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(entry);
      this.#schedule();
    });
  }

  /** Closes every idle slot's resource (running tasks keep theirs until they finish). */
  async close(): Promise<void> {
    for (const slot of this.#free) {
      const r = slot.resource;
      slot.resource = null;
      if (r) this.#closing.push(r.close());
    }
    const pending = this.#closing;
    this.#closing = [];
    await Promise.all(pending);
  }

  /**
   * Dispatches on the next microtask, so that a burst of `run` calls made in one go (all cases
   * of a batch) is seen whole before slots are handed out.
   */
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#free.length > 0 && this.#queue.length > 0) {
      const pick = this.#choose();
      if (pick === null) return;
      const [s, e] = pick;
      const slot = this.#free.splice(s, 1)[0]!;
      const entry = this.#queue.splice(e, 1)[0]!;
      this.#running.set(slot, entry.key);
      this.#active++;
      this.#maxActive = Math.max(this.#maxActive, this.#active);
      entry.start(slot);
    }
  }

  /** Picks (free slot, queued task) indices, or `null` to leave the free slots idle. */
  #choose(): [number, number] | null {
    // 1. Reuse: a free slot whose warm resource serves a queued task.
    for (let s = 0; s < this.#free.length; s++) {
      const key = this.#free[s]!.resource?.key;
      if (key === undefined || key === "") continue;
      const e = this.#queue.findIndex((q) => q.key === key);
      if (e >= 0) return [s, e];
    }
    const running = new Map<string, number>();
    for (const key of this.#running.values()) running.set(key, (running.get(key) ?? 0) + 1);
    // 2. Spread: the first task needing no resource, or of a program no slot is serving yet.
    let e = this.#queue.findIndex((q) => q.key === "" || !running.has(q.key));
    // 3. Spare capacity for a program already served: only when enough of its cases wait to
    //    pay for warming up another resource.
    if (e < 0) {
      const waiting = new Map<string, number>();
      for (const q of this.#queue) waiting.set(q.key, (waiting.get(q.key) ?? 0) + 1);
      e = this.#queue.findIndex((q) =>
        waiting.get(q.key)! >= SPARE_WARMUP_CASES * running.get(q.key)!
      );
    }
    if (e < 0) return null;
    const s = this.#free.findIndex((slot) => slot.resource === null);
    return [s < 0 ? 0 : s, e];
  }

  async #execute<T>(
    slot: PoolSlot,
    entry: Entry,
    task: (slot: PoolSlot) => Promise<T>,
  ): Promise<T> {
    try {
      if (slot.resource !== null && slot.resource.key !== entry.key) {
        const r = slot.resource;
        slot.resource = null;
        await r.close();
      }
      return await task(slot);
    } finally {
      // Keep the resource only for a queued task of the same key; close it before this task
      // settles, so a caller that awaited all its tasks leaves no process behind.
      const r = slot.resource;
      if (r !== null && !this.#queue.some((e) => e.key === r.key)) {
        slot.resource = null;
        await r.close().catch(() => {});
      }
      this.#running.delete(slot);
      this.#active--;
      this.#free.push(slot);
      this.#dispatch();
    }
  }
}

/**
 * A spare slot warms up another resource for a program that already has one running only when
 * at least this many of its cases wait per running one (warming a Python interpreter costs
 * about 0.4 s of CPU, more than most cases).
 */
const SPARE_WARMUP_CASES = 4;

function defaultConcurrency(): number {
  const n = typeof navigator !== "undefined" ? navigator.hardwareConcurrency : undefined;
  return typeof n === "number" && n >= 1 ? Math.floor(n) : 2;
}

let shared: SandboxPool | undefined;

/**
 * The process-wide pool the code reward uses unless given one (concurrency = CPU cores).
 *
 * @example Usage
 * ```ts
 * import { defaultPool } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * assert.equal(defaultPool(), defaultPool());
 * assert.ok(defaultPool().concurrency >= 1);
 * ```
 */
export function defaultPool(): SandboxPool {
  shared ??= new SandboxPool();
  return shared;
}
