import assert from "node:assert/strict";
import fc from "fast-check";
import {
  majorityVoteReward,
  negativeEntropyReward,
  selfCertainty,
  selfCertaintyReward,
  tokenEntropy,
} from "./unsupervised.ts";
import { scoreRewards } from "./runner.ts";

const answer = (prompt: string, a: string | null) => ({
  prompt,
  completion: a === null ? "I am not sure" : `<think>...</think><answer>${a}</answer>`,
  row: {},
});

Deno.test("majorityVoteReward: TTRL pseudo-labels per prompt group", async () => {
  const r = await scoreRewards([majorityVoteReward()], [
    answer("q1", "42"),
    answer("q1", " 42. "),
    answer("q1", "41"),
    answer("q1", null),
    answer("q2", "7"),
    answer("q2", "8"),
    answer("q2", "8"),
  ]);
  assert.deepEqual(r.totals, [1, 1, 0, 0, 0, 1, 1]);
});

Deno.test("majorityVoteReward: ties go to the answer seen first; nobody answering scores 0", async () => {
  const r = await scoreRewards([majorityVoteReward()], [
    answer("q", "b"),
    answer("q", "a"),
    answer("q", "a"),
    answer("q", "b"),
    answer("z", null),
  ]);
  assert.deepEqual(r.totals, [1, 0, 0, 1, 0]);
});

Deno.test("majorityVoteReward: frequency mode (EMPO-style), custom groupBy and normalize", async () => {
  const freq = majorityVoteReward({
    mode: "frequency",
    groupBy: (x) => String(x.row.g),
    normalize: (a) => String(Number(a)),
    name: "freq",
  });
  const mk = (g: number, a: string | null) => ({ ...answer("same prompt", a), row: { g } });
  const r = await scoreRewards([freq], [
    mk(1, "1.0"),
    mk(1, "1"),
    mk(1, "2"),
    mk(1, null),
    mk(2, "5"),
  ]);
  assert.deepEqual(r.totals, [0.5, 0.5, 0.25, 0, 1]);
});

Deno.test("majorityVoteReward: property: exactly the holders of the plurality answer score 1", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.constantFrom("a", "b", "c", null), { minLength: 1, maxLength: 16 }),
      async (answers) => {
        const r = await scoreRewards([majorityVoteReward()], answers.map((a) => answer("q", a)));
        const counts = new Map<string, number>();
        for (const a of answers) if (a !== null) counts.set(a, (counts.get(a) ?? 0) + 1);
        const max = Math.max(0, ...counts.values());
        r.totals.forEach((t, i) => {
          const a = answers[i];
          if (a === null || a === undefined) assert.equal(t, 0);
          else if (counts.get(a)! < max) assert.equal(t, 0);
        });
        // exactly one answer value wins
        const winners = new Set(answers.filter((_, i) => r.totals[i] === 1));
        assert.ok(winners.size <= 1);
        if (max > 0) assert.equal(counts.get([...winners][0]!), max);
      },
    ),
    { numRuns: 60 },
  );
});

const logs = (ps: number[]) => ps.map(Math.log);

Deno.test("selfCertainty: matches KL(U‖p) computed directly from full distributions", () => {
  const rows = [logs([0.7, 0.2, 0.1]), logs([1 / 3, 1 / 3, 1 / 3])];
  const kl = (ps: number[]) =>
    ps.reduce((s, p) => s + (1 / ps.length) * Math.log((1 / ps.length) / p), 0);
  const want = (kl([0.7, 0.2, 0.1]) + kl([1 / 3, 1 / 3, 1 / 3])) / 2;
  assert.ok(Math.abs(selfCertainty(rows) - want) < 1e-12);
  assert.equal(selfCertainty([]), 0);
});

Deno.test("selfCertainty / tokenEntropy: property: top-k is a lower / upper bound of the full value", () => {
  const dist = (V: number) =>
    fc.array(fc.double({ min: 0.01, max: 1, noNaN: true }), { minLength: V, maxLength: V }).map(
      (w) => {
        const s = w.reduce((a, b) => a + b, 0);
        return w.map((x) => x / s).sort((a, b) => b - a);
      },
    );
  const arb = fc.integer({ min: 2, max: 10 }).chain((V) =>
    fc.tuple(
      fc.constant(V),
      fc.array(dist(V), { minLength: 1, maxLength: 5 }),
      fc.integer({ min: 1, max: V }),
    )
  );
  fc.assert(fc.property(arb, ([V, ds, k]) => {
    const full = ds.map(logs);
    const top = ds.map((d) => logs(d.slice(0, k)));
    assert.ok(selfCertainty(top, { vocabSize: V }) <= selfCertainty(full) + 1e-9);
    assert.ok(tokenEntropy(top, { vocabSize: V }) >= tokenEntropy(full) - 1e-9);
    if (k === V) {
      // top-V is the full distribution
      assert.ok(Math.abs(selfCertainty(top, { vocabSize: V }) - selfCertainty(full)) < 1e-9);
    }
  }));
});

Deno.test("tokenEntropy: golden values and validation", () => {
  assert.ok(Math.abs(tokenEntropy([logs([0.5, 0.5]), logs([1])]) - Math.log(2) / 2) < 1e-12);
  assert.throws(
    () => tokenEntropy([[0.5]]),
    /tokenEntropy: logprobs\[0\]\[0\] is 0.5; log-probabilities must be numbers <= 0/,
  );
  assert.throws(
    () => selfCertainty([[-1, -1]], { vocabSize: 1 }),
    /has 2 entries but vocabSize is 1/,
  );
  assert.throws(
    () => selfCertainty("x" as never),
    /logprobs must be an array with one array of log-probs per token/,
  );
});

Deno.test("selfCertaintyReward / negativeEntropyReward: read input.logprobs or a custom accessor", async () => {
  const inputs = [
    { prompt: "", completion: "a", row: { lp: [logs([0.9, 0.1])] }, logprobs: [logs([0.9, 0.1])] },
    { prompt: "", completion: "b", row: { lp: [logs([0.5, 0.5])] }, logprobs: [logs([0.5, 0.5])] },
    { prompt: "", completion: "c", row: {} },
  ];
  const r = await scoreRewards([
    selfCertaintyReward(),
    negativeEntropyReward({ logprobs: (x) => x.row.lp as number[][] }),
  ], inputs);
  assert.ok(r.outcomes.self_certainty![0]!.value! > r.outcomes.self_certainty![1]!.value!);
  assert.ok(Math.abs(r.outcomes.self_certainty![1]!.value!) < 1e-12);
  assert.ok(Math.abs(r.outcomes.neg_entropy![1]!.value! + Math.log(2)) < 1e-12);
  assert.match(
    r.outcomes.self_certainty![2]!.reason!,
    /input.logprobs is missing; attach the per-token log-probs/,
  );
  assert.equal(r.outcomes.neg_entropy![2]!.status, "error");
});
