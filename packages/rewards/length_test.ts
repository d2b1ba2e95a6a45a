import assert from "node:assert/strict";
import fc from "fast-check";
import {
  charCount,
  dapoOverlongPenalty,
  dapoOverlongReward,
  kimiLengthLambdas,
  kimiLengthReward,
  l1LengthReward,
  wordCount,
} from "./length.ts";
import { defineReward } from "./define.ts";
import { scoreRewards } from "./runner.ts";

Deno.test("dapoOverlongPenalty: golden values at the boundaries (L_max = 20480, L_cache = 4096)", () => {
  const limits = { maxLength: 20480, cacheLength: 4096 };
  const cases: [number, number][] = [
    [0, 0],
    [16384, 0], // L_max − L_cache: last length without penalty
    [16385, -1 / 4096],
    [18432, -0.5], // middle of the buffer
    [20479, -4095 / 4096],
    [20480, -1], // L_max
    [20481, -1], // beyond
    [1e9, -1],
  ];
  for (const [len, want] of cases) {
    assert.ok(Math.abs(dapoOverlongPenalty(len, limits) - want) < 1e-15, `length ${len}`);
  }
  assert.equal(dapoOverlongPenalty(16384, limits), 0);
  assert.equal(dapoOverlongPenalty(20480, limits), -1);
});

Deno.test("dapoOverlongPenalty: L_cache = 0 is a hard step at L_max", () => {
  const limits = { maxLength: 10, cacheLength: 0 };
  assert.equal(dapoOverlongPenalty(10, limits), 0);
  assert.equal(dapoOverlongPenalty(11, limits), -1);
});

Deno.test("dapoOverlongPenalty: property: in [−1, 0] and non-increasing in the length", () => {
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 10_000 }),
    fc.double({ min: 0, max: 1, noNaN: true }),
    fc.integer({ min: 0, max: 20_000 }),
    fc.integer({ min: 0, max: 20_000 }),
    (maxLength, frac, a, b) => {
      const limits = { maxLength, cacheLength: frac * maxLength };
      const [lo, hi] = a <= b ? [a, b] : [b, a];
      const pl = dapoOverlongPenalty(lo, limits), ph = dapoOverlongPenalty(hi, limits);
      assert.ok(pl <= 0 && pl >= -1 && ph <= 0 && ph >= -1);
      assert.ok(ph <= pl);
    },
  ));
});

Deno.test("dapoOverlongPenalty: errors name the field, the value and the range", () => {
  assert.throws(
    () => dapoOverlongPenalty(5, { maxLength: 10, cacheLength: 20 }),
    /dapoOverlongPenalty: cacheLength must be a finite number in \[0, 10\], got 20/,
  );
  assert.throws(
    () => dapoOverlongPenalty(-1, { maxLength: 10, cacheLength: 2 }),
    /length must be a finite number >= 0, got -1/,
  );
});

Deno.test("dapoOverlongReward: counts tokens with the supplied counter (or words by default)", async () => {
  const limits = { maxLength: 10, cacheLength: 4 };
  const words = (n: number) => Array.from({ length: n }, () => "w").join(" ");
  const inputs = [6, 8, 10, 12].map((n) => ({ prompt: "", completion: words(n), row: {} }));
  const r = await scoreRewards([dapoOverlongReward(limits)], inputs);
  assert.deepEqual(r.totals, [0, -0.5, -1, -1]);
  // a counter that reads attached token ids
  const byIds = dapoOverlongReward({
    ...limits,
    name: "by_ids",
    countTokens: (_, input) => (input.row.ids as number[]).length,
  });
  const r2 = await scoreRewards([byIds], [{
    prompt: "",
    completion: "x",
    row: { ids: new Array(9).fill(0) },
  }]);
  assert.deepEqual(r2.totals, [-0.75]);
  const bad = dapoOverlongReward({ ...limits, name: "bad", countTokens: () => NaN });
  const r3 = await scoreRewards([bad], [{ prompt: "", completion: "x", row: {} }]);
  assert.match(
    r3.outcomes.bad![0]!.reason!,
    /countTokens returned NaN; a token counter must return a finite number >= 0/,
  );
});

Deno.test("token counters", () => {
  assert.equal(wordCount("a  b\tc\nd"), 4);
  assert.equal(wordCount("   "), 0);
  assert.equal(charCount("héllo"), 5);
});

Deno.test("kimiLengthLambdas: golden values", () => {
  assert.deepEqual(kimiLengthLambdas([100, 200, 300, 500]), [0.5, 0.25, 0, -0.5]);
  assert.deepEqual(kimiLengthLambdas([3]), [0]);
  assert.deepEqual(kimiLengthLambdas([]), []);
});

Deno.test("kimiLengthReward: correct get λ, incorrect min(0, λ), per group, null correctness → null", async () => {
  const correct = defineReward("correct", ({ row }) => row.ok as number | null);
  const kimi = kimiLengthReward({ correct, countTokens: charCount });
  const mk = (prompt: string, len: number, ok: number | null) => ({
    prompt,
    completion: "x".repeat(len),
    row: { ok },
  });
  const r = await scoreRewards([kimi], [
    mk("q1", 10, 1), // λ 0.5
    mk("q1", 20, 0), // λ 0   → 0
    mk("q1", 30, 1), // λ −0.5
    mk("q1", 15, 0), // λ 0.25 → min(0, 0.25) = 0
    mk("q2", 50, 0), // own group: λ 0.5 → 0
    mk("q2", 90, 0), // λ −0.5
    mk("q2", 70, null), // null
  ]);
  assert.deepEqual(r.outcomes.kimi_length!.map((o) => o.value), [0.5, 0, -0.5, 0, 0, -0.5, null]);
});

Deno.test("kimiLengthReward: a throwing predicate counts as incorrect", async () => {
  const kimi = kimiLengthReward({
    correct: ({ completion }) => {
      if (completion === "xx") throw new Error("x");
      return true;
    },
    countTokens: charCount,
  });
  const r = await scoreRewards(
    [kimi],
    ["x", "xx", "xxx"].map((c) => ({ prompt: "q", completion: c, row: {} })),
  );
  assert.deepEqual(r.totals, [0.5, 0, -0.5]);
});

Deno.test("l1LengthReward: −α·|n_gold − n_y| from the row; missing target is an error naming the field", async () => {
  const l1 = l1LengthReward({ alpha: 0.01, countTokens: charCount });
  const r = await scoreRewards([l1], [
    { prompt: "", completion: "x".repeat(100), row: { targetLength: 100 } },
    { prompt: "", completion: "x".repeat(50), row: { targetLength: 100 } },
    { prompt: "", completion: "x".repeat(150), row: { targetLength: 100 } },
    { prompt: "", completion: "x", row: {} },
  ]);
  assert.deepEqual(r.outcomes.l1_length!.map((o) => o.value), [0, -0.5, -0.5, 0]);
  assert.equal(r.outcomes.l1_length![3]!.status, "error");
  assert.match(
    r.outcomes.l1_length![3]!.reason!,
    /row.targetLength is undefined; the target length must be a finite number >= 0 \(set row.targetLength or pass options.target\)/,
  );
  const fromPrompt = l1LengthReward({
    alpha: 1,
    name: "l1p",
    target: ({ prompt }) => Number(/Think for (\d+) tokens/.exec(prompt)![1]),
  });
  const r2 = await scoreRewards([fromPrompt], [{
    prompt: "Think for 3 tokens.",
    completion: "a b",
    row: {},
  }]);
  assert.deepEqual(r2.totals, [-1]);
});
