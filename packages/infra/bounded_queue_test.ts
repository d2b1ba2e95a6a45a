import assert from "node:assert/strict";
import fc from "fast-check";
import { BoundedQueue, QueueClosedError } from "./bounded_queue.ts";

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("BoundedQueue: FIFO order across blocking producers and consumers", async () => {
  const q = new BoundedQueue<number>(3);
  const producers = [0, 1, 2].map(async (p) => {
    for (let i = 0; i < 20; i++) await q.push(p * 100 + i);
  });
  const got: number[] = [];
  const consumer = (async () => {
    for (let i = 0; i < 60; i++) got.push((await q.pop())!);
  })();
  await Promise.all([...producers, consumer]);
  // each producer's items come out in its own order, none lost or duplicated
  for (const p of [0, 1, 2]) {
    assert.deepEqual(
      got.filter((x) => Math.floor(x / 100) === p),
      Array.from({ length: 20 }, (_, i) => p * 100 + i),
    );
  }
  assert.equal(got.length, 60);
  assert.equal(q.size, 0);
});

Deno.test("BoundedQueue: backpressure holds producers at capacity, served in arrival order", async () => {
  const q = new BoundedQueue<string>(2);
  await q.push("a");
  await q.push("b");
  const done: string[] = [];
  const c = q.push("c").then(() => done.push("c"));
  const d = q.push("d").then(() => done.push("d"));
  await tick();
  assert.deepEqual(done, []); // both wait: the queue is full
  assert.equal(q.size, 2);
  assert.equal(q.waitingProducers, 2);
  assert.equal(q.tryPush("x"), false); // does not overtake the waiting producers
  assert.equal(await q.pop(), "a");
  await tick();
  assert.deepEqual(done, ["c"]); // one slot freed: the first waiter goes in, not the second
  assert.equal(q.size, 2);
  assert.deepEqual(q.toArray(), ["b", "c"]);
  assert.equal(await q.pop(), "b");
  await Promise.all([c, d]);
  assert.deepEqual(q.toArray(), ["c", "d"]);
});

Deno.test("BoundedQueue: never holds more than capacity (property over random ops)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.array(fc.oneof(fc.constant("push" as const), fc.constant("pop" as const)), {
        maxLength: 60,
      }),
      async (capacity, ops) => {
        const q = new BoundedQueue<number>(capacity);
        const pushed: number[] = [];
        const popped: number[] = [];
        const pending: Promise<unknown>[] = [];
        let n = 0;
        for (const op of ops) {
          if (op === "push") {
            const x = n++;
            pending.push(q.push(x).then(() => pushed.push(x)));
          } else {
            pending.push(q.pop().then((x) => x !== undefined && popped.push(x)));
          }
          await tick();
          assert.ok(q.size <= capacity, `size ${q.size} > capacity ${capacity}`);
        }
        q.close();
        const rest: number[] = [];
        for await (const x of q) rest.push(x);
        await Promise.allSettled(pending);
        // everything accepted is popped exactly once, in push order
        assert.deepEqual([...popped, ...rest], [...pushed].sort((a, b) => a - b));
      },
    ),
    { numRuns: 100 },
  );
});

Deno.test("BoundedQueue: close() semantics", async () => {
  const q = new BoundedQueue<number>(1);
  await q.push(1);
  const blocked = q.push(2);
  q.close();
  q.close(); // idempotent
  await assert.rejects(blocked, QueueClosedError); // its item was not queued
  await assert.rejects(q.push(3), /push after close\(\); the item was not queued/);
  assert.throws(() => q.tryPush(4), QueueClosedError);
  assert.equal(await q.pop(), 1); // queued items drain
  assert.equal(await q.pop(), undefined);
  assert.equal(q.tryPop(), undefined);

  const empty = new BoundedQueue<number>(2);
  const waiters = [empty.pop(), empty.pop()];
  assert.equal(empty.waitingConsumers, 2);
  empty.close();
  assert.deepEqual(await Promise.all(waiters), [undefined, undefined]);
});

Deno.test("BoundedQueue: a waiting consumer receives the item directly", async () => {
  const q = new BoundedQueue<number>(1);
  const p = q.pop();
  await q.push(9);
  assert.equal(q.size, 0);
  assert.equal(await p, 9);
  // long runs compact the internal array without losing items
  const big = new BoundedQueue<number>(1000);
  for (let i = 0; i < 1000; i++) big.tryPush(i);
  for (let i = 0; i < 700; i++) assert.equal(big.tryPop(), i);
  for (let i = 1000; i < 1500; i++) big.tryPush(i);
  assert.deepEqual(big.toArray(), Array.from({ length: 800 }, (_, i) => i + 700));
});

Deno.test("BoundedQueue: capacity is validated", () => {
  assert.throws(() => new BoundedQueue(0), /capacity must be an integer >= 1, got 0/);
  assert.throws(() => new BoundedQueue(1.5), /got 1.5/);
});
