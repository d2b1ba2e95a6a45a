/**
 * Which problems the loop trains on and which it evaluates on.
 *
 * Design decisions: the held-out set is the first `count` distinct problems of a fixed stream
 * ({@link HELD_OUT_SEED}), independent of `trainer.seed`, so runs with different seeds are
 * evaluated on the same problems. The training stream is the task's row stream of
 * `trainer.seed` with every held-out problem skipped (by the task's canonical key), so no
 * held-out problem is ever trained on. The stream is addressed by a raw row index, which is all
 * the data iterator's state: a resumed run continues from the saved index.
 *
 * @module
 */

import type { Task, TaskRow } from "@rlvr/rewards";

/** Seed of the held-out stream (a constant, so every run evaluates on the same problems). */
export const HELD_OUT_SEED = 1_000_003;

/**
 * The held-out problems: the first `count` distinct problems of the {@link HELD_OUT_SEED}
 * stream.
 *
 * @example Usage
 * ```ts
 * import { heldOutProblems } from "./problems.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const rows = heldOutProblems(task, 16);
 * assert.equal(new Set(rows.map((r) => task.key(r))).size, 16);
 * ```
 */
export function heldOutProblems<R extends TaskRow>(task: Task<R>, count: number): R[] {
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`heldOutProblems: count must be an integer >= 1, got ${count}`);
  }
  const seen = new Set<string>();
  const rows: R[] = [];
  for (let i = 0; rows.length < count; i++) {
    if (i > 50 * count + 1000) {
      throw new RangeError(
        `heldOutProblems: task "${task.name}" has only ${rows.length} distinct problems, ` +
          `fewer than trainer.evalProblems ${count}; lower trainer.evalProblems`,
      );
    }
    const row = task.row(HELD_OUT_SEED, i);
    const key = task.key(row);
    if (seen.has(key)) continue;
    seen.add(key);
    rows.push(row);
  }
  return rows;
}

/**
 * The training problem stream: rows of the task's stream of `seed`, skipping held-out problems;
 * with `limit` (1-shot RLVR) it cycles over the first `limit` training problems.
 *
 * @example Usage
 * ```ts
 * import { heldOutProblems, TrainStream } from "./problems.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const held = heldOutProblems(task, 8);
 * const a = new TrainStream(task, 0, held);
 * const first = a.take(4);
 * const b = new TrainStream(task, 0, held, null, a.position - 0);
 * assert.deepEqual(b.take(2), a.take(2)); // same position, same rows
 * assert.ok(first.every((r) => !held.some((h) => task.key(h) === task.key(r))));
 * ```
 */
export class TrainStream<R extends TaskRow = TaskRow> {
  readonly #task: Task<R>;
  readonly #seed: number;
  readonly #heldOut: Set<string>;
  readonly #limit: number | null;
  #position: number;
  #cycle: R[] | null = null;

  /**
   * A stream over `task`'s rows of `seed` minus `heldOut`, starting at raw index `position`
   * (for `limit`, the count of rows taken so far).
   */
  constructor(
    task: Task<R>,
    seed: number,
    heldOut: readonly R[],
    limit: number | null = null,
    position = 0,
  ) {
    if (!Number.isInteger(position) || position < 0) {
      throw new RangeError(`TrainStream: position must be an integer >= 0, got ${position}`);
    }
    this.#task = task;
    this.#seed = seed;
    this.#heldOut = new Set(heldOut.map((r) => task.key(r)));
    this.#limit = limit;
    this.#position = position;
  }

  /** The data iterator's state: save it, pass it back to the constructor to continue. */
  get position(): number {
    return this.#position;
  }

  /** The next `count` training problems. */
  take(count: number): R[] {
    const out: R[] = [];
    if (this.#limit !== null) {
      const cycle = this.#cycle ??= this.#firstDistinct(this.#limit);
      for (let i = 0; i < count; i++) out.push(cycle[(this.#position++) % cycle.length]!);
      return out;
    }
    while (out.length < count) {
      const row = this.#task.row(this.#seed, this.#position++);
      if (!this.#heldOut.has(this.#task.key(row))) out.push(row);
    }
    return out;
  }

  /**
   * The first `n` distinct training problems of the stream (fewer when the task has fewer), the
   * pool that 1-shot RLVR cycles over and that `sampling.pool` selects from.
   */
  distinct(n: number): R[] {
    return this.#firstDistinct(n);
  }

  #firstDistinct(n: number): R[] {
    const rows: R[] = [];
    const seen = new Set<string>();
    for (let i = 0; rows.length < n && i < 50 * n + 1000; i++) {
      const row = this.#task.row(this.#seed, i);
      const key = this.#task.key(row);
      if (this.#heldOut.has(key) || seen.has(key)) continue;
      seen.add(key);
      rows.push(row);
    }
    if (rows.length === 0) {
      throw new RangeError(`TrainStream: no training problem outside the held-out set`);
    }
    return rows;
  }
}
