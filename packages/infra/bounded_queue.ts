/**
 * An in-process async FIFO queue with a capacity: producers wait while it is full (backpressure),
 * consumers wait while it is empty, and `close()` ends it.
 *
 * Design decisions:
 * - Backpressure by awaiting, not by dropping: a rollout worker that gets ahead of the trainer
 *   (or a trainer that gets ahead of reward workers) simply waits in `push`, so memory stays
 *   bounded and nothing is lost. Waiting producers are served in arrival order.
 * - `close()` is for shutdown: items already queued can still be popped (the consumer drains
 *   them), waiting and later `push` calls reject with {@link QueueClosedError} (their items were
 *   not queued, and the caller knows it), and `pop` returns `undefined` once the queue is closed
 *   and empty, which also ends `for await` loops.
 * - A `pop` on an empty queue with a waiting consumer hands the item over directly, so the queue
 *   never holds more than `capacity` items.
 *
 * @module
 */

import { checkInt } from "./_util.ts";

/**
 * Thrown (as a rejection) by {@link BoundedQueue.push} once the queue is closed.
 *
 * @example Usage
 * ```ts
 * import { BoundedQueue, QueueClosedError } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const q = new BoundedQueue<number>(1);
 * q.close();
 * await assert.rejects(q.push(1), QueueClosedError);
 * ```
 */
export class QueueClosedError extends Error {
  /**
   * Builds the error message.
   *
   * @param what What was refused, quoted in the message.
   */
  constructor(what = "push") {
    super(
      `BoundedQueue: ${what} after close(); the item was not queued (the queue is shutting ` +
        `down; stop producing, or create a new queue)`,
    );
    this.name = "QueueClosedError";
  }
}

interface WaitingProducer<T> {
  item: T;
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * Async bounded FIFO queue with backpressure.
 *
 * @example Usage
 * ```ts
 * import { BoundedQueue } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const q = new BoundedQueue<string>(2);
 * const producer = (async () => {
 *   for (const s of ["a", "b", "c", "d"]) await q.push(s); // waits while 2 are queued
 *   q.close();
 * })();
 * const got: string[] = [];
 * for await (const s of q) got.push(s);
 * await producer;
 * assert.deepEqual(got, ["a", "b", "c", "d"]);
 * ```
 */
export class BoundedQueue<T> implements AsyncIterable<T> {
  /** Most items held at once. */
  readonly capacity: number;
  #items: T[] = [];
  #head = 0;
  #producers: WaitingProducer<T>[] = [];
  #consumers: ((item: T | undefined) => void)[] = [];
  #closed = false;

  /**
   * An empty, open queue.
   *
   * @param capacity Most items held at once (an integer >= 1).
   */
  constructor(capacity: number) {
    this.capacity = checkInt(
      capacity,
      "BoundedQueue: capacity",
      1,
      "pass how many items may wait between producer and consumer (e.g. one batch)",
    );
  }

  /**
   * Number of items queued (not counting producers still waiting to add theirs).
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(3);
   * await q.push(1);
   * assert.equal(q.size, 1);
   * ```
   */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /**
   * Whether {@link BoundedQueue.close} was called.
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(1);
   * q.close();
   * assert.equal(q.closed, true);
   * ```
   */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Producers waiting for room (the backpressure depth).
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(1);
   * await q.push(1);
   * const blocked = q.push(2);
   * assert.equal(q.waitingProducers, 1);
   * await q.pop();
   * await blocked;
   * ```
   */
  get waitingProducers(): number {
    return this.#producers.length;
  }

  /**
   * Consumers waiting for an item.
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(1);
   * const waiting = q.pop();
   * assert.equal(q.waitingConsumers, 1);
   * await q.push(5);
   * assert.equal(await waiting, 5);
   * ```
   */
  get waitingConsumers(): number {
    return this.#consumers.length;
  }

  /**
   * Adds `item`, waiting while the queue is full.
   *
   * @param item The item.
   * @returns Resolves once the item is queued (or handed to a waiting consumer).
   * @throws {QueueClosedError} (rejection) when the queue is closed, or closes while waiting.
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(1);
   * await q.push(1);
   * let done = false;
   * const p = q.push(2).then(() => done = true);
   * await new Promise((r) => setTimeout(r, 10));
   * assert.equal(done, false); // full: the producer waits
   * assert.equal(await q.pop(), 1);
   * await p;
   * assert.equal(done, true);
   * ```
   */
  push(item: T): Promise<void> {
    if (this.#closed) return Promise.reject(new QueueClosedError());
    if (this.#offer(item)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#producers.push({ item, resolve, reject });
    });
  }

  /**
   * Adds `item` only if there is room now.
   *
   * @param item The item.
   * @returns Whether it was queued; false when full.
   * @throws {QueueClosedError} when the queue is closed.
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(1);
   * assert.equal(q.tryPush(1), true);
   * assert.equal(q.tryPush(2), false);
   * ```
   */
  tryPush(item: T): boolean {
    if (this.#closed) throw new QueueClosedError("tryPush");
    // Waiting producers go first: a tryPush must not overtake them.
    if (this.#producers.length > 0) return false;
    return this.#offer(item);
  }

  /** Hands `item` to a waiting consumer or queues it if there is room. */
  #offer(item: T): boolean {
    const consumer = this.#consumers.shift();
    if (consumer !== undefined) {
      consumer(item);
      return true;
    }
    if (this.size < this.capacity) {
      this.#items.push(item);
      return true;
    }
    return false;
  }

  /**
   * Takes the oldest item, waiting while the queue is empty.
   *
   * @returns The item, or `undefined` once the queue is closed and empty.
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(2);
   * await q.push(1);
   * q.close();
   * assert.equal(await q.pop(), 1); // queued items survive close()
   * assert.equal(await q.pop(), undefined);
   * ```
   */
  pop(): Promise<T | undefined> {
    if (this.size > 0) return Promise.resolve(this.#take());
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#consumers.push(resolve));
  }

  /**
   * Takes the oldest item if there is one now.
   *
   * @returns The item, or `undefined` when empty.
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(1);
   * assert.equal(q.tryPop(), undefined);
   * q.tryPush(3);
   * assert.equal(q.tryPop(), 3);
   * ```
   */
  tryPop(): T | undefined {
    return this.size > 0 ? this.#take() : undefined;
  }

  #take(): T {
    const item = this.#items[this.#head] as T;
    this.#items[this.#head] = undefined as T; // let the item be collected
    this.#head++;
    if (this.#head > 64 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    // Room was made: admit the longest-waiting producer.
    const p = this.#producers.shift();
    if (p !== undefined) {
      this.#items.push(p.item);
      p.resolve();
    }
    return item;
  }

  /**
   * The queued items, oldest first, without removing them (for a checkpoint of the queue).
   *
   * @returns A copy.
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(3);
   * await q.push(1);
   * await q.push(2);
   * assert.deepEqual(q.toArray(), [1, 2]);
   * ```
   */
  toArray(): T[] {
    return this.#items.slice(this.#head);
  }

  /**
   * Closes the queue: waiting producers reject with {@link QueueClosedError}, waiting consumers
   * get `undefined`, queued items can still be popped. Idempotent.
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue, QueueClosedError } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(1);
   * await q.push(1);
   * const blocked = q.push(2);
   * q.close();
   * await assert.rejects(blocked, QueueClosedError);
   * assert.deepEqual(q.toArray(), [1]);
   * ```
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of this.#producers.splice(0)) p.reject(new QueueClosedError());
    for (const c of this.#consumers.splice(0)) c(undefined);
  }

  /**
   * Pops until the queue is closed and empty.
   *
   * @returns An async iterator over the items.
   *
   * @example Usage
   * ```ts
   * import { BoundedQueue } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const q = new BoundedQueue<number>(3);
   * await q.push(1);
   * await q.push(2);
   * q.close();
   * const got: number[] = [];
   * for await (const x of q) got.push(x);
   * assert.deepEqual(got, [1, 2]);
   * ```
   */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      // `undefined` is the end marker, so a queue of a type that includes undefined ends early;
      // use null or a wrapper for such items.
      const item = await this.pop();
      if (item === undefined) return;
      yield item;
    }
  }
}
