/**
 * A concurrency limiter: at most `limit` async tasks run at once, the rest wait in FIFO order.
 *
 * Design decision: reward workers (verifiers, code sandboxes, LLM judges) are slow and bounded
 * by an external resource, so the trainer should not await them one by one nor start all of
 * them at once. The limiter keeps `limit` of them in flight; combined with a
 * {@link BoundedQueue} in front of it, producers feel backpressure when both the queue and the
 * pool are full. A task that throws frees its slot like one that returns, and its error reaches
 * only its own caller.
 *
 * @module
 */

import { checkInt } from "./_util.ts";

/**
 * Runs async tasks with bounded concurrency.
 *
 * @example Usage
 * ```ts
 * import { ConcurrencyLimiter } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const limiter = new ConcurrencyLimiter(2);
 * let running = 0;
 * let peak = 0;
 * const score = async (x: number) => {
 *   peak = Math.max(peak, ++running);
 *   await new Promise((r) => setTimeout(r, 5));
 *   running--;
 *   return x * x;
 * };
 * assert.deepEqual(await limiter.map([1, 2, 3, 4, 5], score), [1, 4, 9, 16, 25]);
 * assert.equal(peak, 2);
 * ```
 */
export class ConcurrencyLimiter {
  /** Most tasks in flight at once. */
  readonly limit: number;
  #active = 0;
  #waiting: (() => void)[] = [];
  #idle: (() => void)[] = [];

  /**
   * A limiter with no task running.
   *
   * @param limit Most tasks in flight at once (an integer >= 1).
   */
  constructor(limit: number) {
    this.limit = checkInt(
      limit,
      "ConcurrencyLimiter: limit",
      1,
      "pass how many tasks may run at once (e.g. the reward worker pool size)",
    );
  }

  /**
   * Tasks running now.
   *
   * @example Usage
   * ```ts
   * import { ConcurrencyLimiter } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const limiter = new ConcurrencyLimiter(1);
   * const p = limiter.run(() => new Promise((r) => setTimeout(r, 5)));
   * assert.equal(limiter.active, 1);
   * await p;
   * assert.equal(limiter.active, 0);
   * ```
   */
  get active(): number {
    return this.#active;
  }

  /**
   * Tasks waiting for a slot (the backlog).
   *
   * @example Usage
   * ```ts
   * import { ConcurrencyLimiter } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const limiter = new ConcurrencyLimiter(1);
   * const a = limiter.run(() => new Promise((r) => setTimeout(r, 5)));
   * const b = limiter.run(() => 1);
   * assert.equal(limiter.pending, 1);
   * await Promise.all([a, b]);
   * ```
   */
  get pending(): number {
    return this.#waiting.length;
  }

  /**
   * Runs `task` once a slot is free.
   *
   * @param task The work; may be sync or async.
   * @returns The task's result (or its rejection).
   *
   * @example Usage
   * ```ts
   * import { ConcurrencyLimiter } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const limiter = new ConcurrencyLimiter(1);
   * await assert.rejects(limiter.run(() => Promise.reject(new Error("sandbox timeout"))));
   * assert.equal(await limiter.run(() => 7), 7); // the failed task freed its slot
   * ```
   */
  async run<R>(task: () => R | Promise<R>): Promise<R> {
    if (this.#active >= this.limit) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
      // the slot was handed over by the finishing task (#active unchanged)
    } else {
      this.#active++;
    }
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next !== undefined) next();
      else {
        this.#active--;
        if (this.#active === 0) { for (const r of this.#idle.splice(0)) r(); }
      }
    }
  }

  /**
   * Applies `fn` to every item with bounded concurrency; results keep the input order. Rejects
   * with the first error after every started task has settled.
   *
   * @param items The inputs.
   * @param fn The async work per item.
   * @returns The results, in input order.
   *
   * @example Usage
   * ```ts
   * import { ConcurrencyLimiter } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const out = await new ConcurrencyLimiter(3).map(["a", "bb"], async (s, i) => `${i}:${s.length}`);
   * assert.deepEqual(out, ["0:1", "1:2"]);
   * ```
   */
  async map<I, R>(
    items: Iterable<I>,
    fn: (item: I, index: number) => R | Promise<R>,
  ): Promise<R[]> {
    const settled = await Promise.allSettled(
      [...items].map((item, i) => this.run(() => fn(item, i))),
    );
    const failed = settled.find((s) => s.status === "rejected");
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    return settled.map((s) => (s as PromiseFulfilledResult<R>).value);
  }

  /**
   * Resolves when no task is running or waiting (e.g. before a checkpoint).
   *
   * @example Usage
   * ```ts
   * import { ConcurrencyLimiter } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const limiter = new ConcurrencyLimiter(2);
   * let done = 0;
   * for (let i = 0; i < 4; i++) limiter.run(async () => void done++);
   * await limiter.idle();
   * assert.equal(done, 4);
   * ```
   */
  idle(): Promise<void> {
    if (this.#active === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }
}
