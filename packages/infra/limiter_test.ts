import assert from "node:assert/strict";
import { ConcurrencyLimiter } from "./limiter.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("ConcurrencyLimiter: never more than limit in flight; FIFO start order", async () => {
  const limiter = new ConcurrencyLimiter(3);
  let running = 0;
  let peak = 0;
  const started: number[] = [];
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      limiter.run(async () => {
        started.push(i);
        peak = Math.max(peak, ++running);
        await sleep(2 + (i % 3));
        running--;
        return i;
      })),
  );
  assert.equal(peak, 3);
  assert.deepEqual(results, Array.from({ length: 12 }, (_, i) => i));
  assert.deepEqual(started, Array.from({ length: 12 }, (_, i) => i));
  assert.equal(limiter.active, 0);
  assert.equal(limiter.pending, 0);
});

Deno.test("ConcurrencyLimiter: errors free the slot and reach only their caller", async () => {
  const limiter = new ConcurrencyLimiter(1);
  const a = limiter.run(async () => {
    await sleep(1);
    throw new Error("verifier crashed");
  });
  const b = limiter.run(() => "ok");
  await assert.rejects(a, /verifier crashed/);
  assert.equal(await b, "ok");
  await assert.rejects(
    limiter.map([1, 2, 3], (x) => {
      if (x === 2) throw new Error("bad item 2");
      return x;
    }),
    /bad item 2/,
  );
  assert.equal(limiter.active, 0);
});

Deno.test("ConcurrencyLimiter: idle() waits for running and queued tasks", async () => {
  const limiter = new ConcurrencyLimiter(2);
  const finished: number[] = [];
  for (let i = 0; i < 5; i++) {
    limiter.run(async () => {
      await sleep(3);
      finished.push(i);
    });
  }
  assert.equal(limiter.active, 2);
  assert.equal(limiter.pending, 3);
  await limiter.idle();
  assert.equal(finished.length, 5);
  await limiter.idle(); // already idle: resolves at once
});

Deno.test("ConcurrencyLimiter: limit is validated", () => {
  assert.throws(() => new ConcurrencyLimiter(0), /limit must be an integer >= 1, got 0/);
});
