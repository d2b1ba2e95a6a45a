import assert from "node:assert/strict";
import fc from "fast-check";
import { defineBatchReward, defineReward } from "./define.ts";
import { flattenMetrics, scoreRewards } from "./runner.ts";
import { weightedSum } from "./compose.ts";
import type { Reward, RewardInput } from "./types.ts";

const input = (completion: string, row: Record<string, unknown> = {}): RewardInput => ({
  prompt: "p",
  completion,
  row,
});

Deno.test("scoreRewards: a throwing reward scores 0, records the error, and the batch completes", async () => {
  const ok = defineReward("ok", ({ completion }) => completion.length);
  const flaky = defineReward("flaky", ({ completion }) => {
    if (completion === "bad") throw new Error("cannot parse 'bad'");
    return 1;
  });
  const r = await scoreRewards([ok, flaky], [input("a"), input("bad"), input("ccc")]);
  assert.deepEqual(r.outcomes.flaky!.map((o) => o.value), [1, 0, 1]);
  assert.deepEqual(r.outcomes.flaky!.map((o) => o.status), ["ok", "error", "ok"]);
  assert.equal(r.outcomes.flaky![1]!.reason, "cannot parse 'bad'");
  assert.deepEqual(r.totals, [2, 3, 4]);
  assert.deepEqual(r.failures, [
    { reward: "flaky", index: 1, status: "error", reason: "cannot parse 'bad'" },
  ]);
  assert.equal(r.metrics.flaky!.errors, 1);
  assert.equal(r.metrics.flaky!.ok, 2);
});

Deno.test("scoreRewards: a synchronous throw and an async rejection are both recorded", async () => {
  const sync = defineReward("sync", () => {
    throw new TypeError("sync boom");
  });
  const asyncR = defineReward("async", () => Promise.reject(new Error("async boom")));
  const r = await scoreRewards([sync, asyncR], [input("x")]);
  assert.equal(r.outcomes.sync![0]!.reason, "sync boom");
  assert.equal(r.outcomes.async![0]!.reason, "async boom");
  assert.deepEqual(r.totals, [0]);
});

Deno.test("scoreRewards: a hanging async reward times out with a recorded reason and an aborted signal", async () => {
  let sawAbort = false;
  const hangs = defineReward("hangs", (_, { signal }) =>
    new Promise<number>(() => {
      signal.addEventListener("abort", () => (sawAbort = true));
    }));
  const fast = defineReward("fast", () => 1);
  const start = performance.now();
  const r = await scoreRewards([hangs, fast], [input("a"), input("b")], { timeoutMs: 30 });
  assert.ok(performance.now() - start < 2000);
  assert.deepEqual(r.outcomes.hangs!.map((o) => o.status), ["timeout", "timeout"]);
  assert.equal(r.outcomes.hangs![0]!.reason, "timed out after 30 ms");
  assert.equal(r.outcomes.hangs![0]!.value, 0);
  assert.ok(sawAbort, "the reward's signal fires at the timeout");
  assert.deepEqual(r.totals, [1, 1]);
  assert.equal(r.metrics.hangs!.timeouts, 2);
});

Deno.test("scoreRewards: a reward that rejects on abort is still recorded as a timeout", async () => {
  const polite = defineReward("polite", (_, { signal }) =>
    new Promise<number>((_, reject) => {
      signal.addEventListener("abort", () => reject(new Error("I was aborted")));
    }), { timeoutMs: 20 });
  const r = await scoreRewards([polite], [input("a")]);
  assert.equal(r.outcomes.polite![0]!.status, "timeout");
});

Deno.test("scoreRewards: a reward's own timeoutMs wins over the runner's", async () => {
  const slow = defineReward("slow", (_, { signal }) =>
    new Promise<number>((resolve) => {
      const t = setTimeout(() => resolve(1), 60);
      signal.addEventListener("abort", () => clearTimeout(t));
    }), { timeoutMs: 5_000 });
  const r = await scoreRewards([slow], [input("a")], { timeoutMs: 10 });
  assert.equal(r.outcomes.slow![0]!.status, "ok");
  assert.equal(r.outcomes.slow![0]!.value, 1);
});

Deno.test("scoreRewards: non-finite and non-number values are errors with the fallback", async () => {
  const values: unknown[] = [NaN, Infinity, -Infinity, "1", undefined, 0.5, null];
  const weird = defineReward("weird", ({ row }) => row.v as number);
  const r = await scoreRewards([weird], values.map((v) => input("", { v })), { onError: -1 });
  assert.deepEqual(r.outcomes.weird!.map((o) => o.status), [
    "error",
    "error",
    "error",
    "error",
    "error",
    "ok",
    "null",
  ]);
  assert.deepEqual(r.outcomes.weird!.map((o) => o.value), [-1, -1, -1, -1, -1, 0.5, null]);
  assert.match(
    r.outcomes.weird![0]!.reason!,
    /returned NaN; a reward must return a finite number or null/,
  );
  assert.deepEqual(r.totals, [-1, -1, -1, -1, -1, 0.5, 0]);
  assert.equal(r.metrics.weird!.nulls, 1);
});

Deno.test("scoreRewards: onError null makes failures 'not applicable'", async () => {
  const broken = defineReward("broken", () => {
    throw new Error("x");
  });
  const r = await scoreRewards([broken], [input("a")], { onError: null });
  assert.equal(r.outcomes.broken![0]!.value, null);
  assert.equal(r.outcomes.broken![0]!.status, "error");
  assert.equal(r.metrics.broken!.mean, null);
});

Deno.test("scoreRewards: batched rewards get the whole batch once; failures hit every sample", async () => {
  let calls = 0;
  const batch = defineBatchReward("batch", (xs) => {
    calls++;
    return xs.map((_, i) => i);
  });
  const wrongLength = defineBatchReward("wrong", () => [1]);
  const throws = defineBatchReward("throws", () => {
    throw new Error("pool down");
  });
  const r = await scoreRewards([batch, wrongLength, throws], [input("a"), input("b"), input("c")]);
  assert.equal(calls, 1);
  assert.deepEqual(r.outcomes.batch!.map((o) => o.value), [0, 1, 2]);
  assert.ok(r.outcomes.wrong!.every((o) => o.status === "error"));
  assert.match(r.outcomes.wrong![0]!.reason!, /returned 1 values for 3 inputs/);
  assert.ok(r.outcomes.throws!.every((o) => o.reason === "pool down"));
  assert.deepEqual(r.totals, [0, 1, 2]);
});

Deno.test("scoreRewards: a reward with both score and scoreBatch is called batched", async () => {
  const both: Reward = {
    name: "both",
    score: () => 1,
    scoreBatch: (xs) => xs.map(() => 2),
  };
  const r = await scoreRewards([both], [input("a")]);
  assert.deepEqual(r.totals, [2]);
});

Deno.test("scoreRewards: concurrency bounds the calls in flight", async () => {
  let active = 0, peak = 0;
  const slow = defineReward("slow", async () => {
    active++;
    peak = Math.max(peak, active);
    await new Promise((r) => setTimeout(r, 5));
    active--;
    return 1;
  });
  const inputs = Array.from({ length: 20 }, (_, i) => input(String(i)));
  const r = await scoreRewards([slow], inputs, { concurrency: 3 });
  assert.equal(peak, 3);
  assert.deepEqual(r.totals, inputs.map(() => 1));
});

Deno.test("scoreRewards: an aborted outer signal records errors and still returns", async () => {
  const ctrl = new AbortController();
  const hangs = defineReward("hangs", () => new Promise<number>(() => {}));
  const pending = scoreRewards([hangs], [input("a")], { signal: ctrl.signal, timeoutMs: Infinity });
  ctrl.abort(new Error("shutting down"));
  const r = await pending;
  assert.equal(r.outcomes.hangs![0]!.status, "error");
  assert.match(r.outcomes.hangs![0]!.reason!, /aborted: shutting down/);
});

Deno.test("scoreRewards: a reward object shared by two composites is scored once", async () => {
  let calls = 0;
  const acc = defineReward("acc", () => {
    calls++;
    return 1;
  });
  const fmt = defineReward("fmt", () => 0.5);
  const a = weightedSum([{ reward: acc, weight: 1 }, { reward: fmt, weight: 1 }], { name: "a" });
  const b = weightedSum([{ reward: acc, weight: 2 }], { name: "b" });
  const r = await scoreRewards([a, b], [input("x"), input("y")]);
  assert.equal(calls, 2); // once per sample, not twice
  assert.deepEqual(r.totals, [3.5, 3.5]);
  assert.deepEqual(Object.keys(r.outcomes).sort(), ["a", "a/acc", "a/fmt", "b", "b/acc"]);
});

Deno.test("scoreRewards: totals treat null as absent and metrics summarise", async () => {
  const maybe = defineReward("maybe", ({ row }) => (row.kind === "math" ? 1 : null));
  const always = defineReward("always", () => 0.25);
  const r = await scoreRewards([maybe, always], [
    input("", { kind: "math" }),
    input("", { kind: "code" }),
  ]);
  assert.deepEqual(r.totals, [1.25, 0.25]);
  assert.deepEqual(
    { mean: r.metrics.maybe!.mean, nulls: r.metrics.maybe!.nulls, count: r.metrics.maybe!.count },
    { mean: 1, nulls: 1, count: 2 },
  );
  assert.equal(r.metrics.total!.mean, 0.75);
  const flat = flattenMetrics(r, "train/reward");
  assert.equal(flat["train/reward/always/mean"], 0.25);
  assert.equal(flat["train/reward/maybe/nulls"], 1);
});

Deno.test("scoreRewards: an empty batch scores nothing and calls nothing", async () => {
  let calls = 0;
  const r = await scoreRewards([defineBatchReward("b", () => {
    calls++;
    return [];
  })], []);
  assert.equal(calls, 0);
  assert.deepEqual(r.totals, []);
  assert.equal(r.metrics.b!.mean, null);
});

Deno.test("scoreRewards: malformed arguments throw naming the field and the fix", async () => {
  const one = defineReward("one", () => 1);
  await assert.rejects(() => scoreRewards([one, one], []), /name "one" is used twice/);
  await assert.rejects(
    () => scoreRewards([{ name: "x" } as Reward], []),
    /rewards\[0\] \("x"\) has neither score nor scoreBatch; build it with defineReward/,
  );
  await assert.rejects(() => scoreRewards([defineReward("total", () => 1)], []), /reserved/);
  await assert.rejects(
    () => scoreRewards([one], [], { timeoutMs: 0 }),
    /options.timeoutMs must be a finite number > 0 \(or Infinity\), got 0/,
  );
  await assert.rejects(
    () => scoreRewards([one], [], { concurrency: 1.5 }),
    /options.concurrency must be an integer >= 1/,
  );
  await assert.rejects(() => scoreRewards([one], {} as RewardInput[]), /inputs must be an array/);
});

Deno.test("scoreRewards: property: totals equal the sum of the top-level values, errors or not", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.oneof(
          fc.double({ min: -5, max: 5, noNaN: true }),
          fc.constant(null),
          fc.constant("throw"),
        ),
        {
          maxLength: 12,
        },
      ),
      fc.double({ min: -2, max: 2, noNaN: true }),
      async (values, onError) => {
        const r1 = defineReward("r1", ({ row }) => {
          if (row.v === "throw") throw new Error("thrown");
          return row.v as number | null;
        });
        const r2 = defineReward("r2", () => 1);
        const inputs = values.map((v) => input("", { v }));
        const r = await scoreRewards([r1, r2], inputs, { onError });
        values.forEach((v, i) => {
          const expected = (v === "throw" ? onError : v ?? 0) + 1;
          assert.ok(Math.abs(r.totals[i]! - expected) < 1e-12);
        });
        assert.equal(r.metrics.r1!.errors, values.filter((v) => v === "throw").length);
      },
    ),
    { numRuns: 50 },
  );
});
