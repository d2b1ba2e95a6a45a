import assert from "node:assert/strict";
import fc from "fast-check";
import {
  DynamicBatch,
  dynamicSample,
  filterByAccuracy,
  filterGroups,
  hasRewardVariance,
} from "./dynamic.ts";
import { Prng } from "./_prng.ts";

interface G {
  uid: number;
  rewards: number[];
}

/** Rewards of prompt k: per-prompt success probability, kind of reward, seeded noise. */
function rewardsOf(
  k: number,
  groupSize: number,
  p: number,
  kind: "binary" | "pm1" | "graded",
  seed: number,
): number[] {
  const rng = Prng.fromSeed(seed, k);
  return Array.from({ length: groupSize }, () => {
    const u = rng.float();
    if (kind === "binary") return u < p ? 1 : 0;
    if (kind === "pm1") return u < p ? 1 : -1;
    return u < p ? 1 : (rng.float() < 0.5 ? 0 : 0.5);
  });
}

Deno.test("dynamicSample: never returns a zero-variance group, fills when possible, says why when not (property vs. an oracle)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        groupSize: fc.integer({ min: 2, max: 5 }),
        batchGroups: fc.integer({ min: 1, max: 6 }),
        maxRounds: fc.integer({ min: 1, max: 5 }),
        promptsPerRound: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
        nPrompts: fc.integer({ min: 0, max: 40 }),
        probs: fc.array(fc.constantFrom(0, 1, 0, 1, 0.1, 0.5, 0.9), {
          minLength: 40,
          maxLength: 40,
        }),
        kind: fc.constantFrom("binary" as const, "pm1" as const, "graded" as const),
        seed: fc.integer({ min: 0, max: 2 ** 31 }),
      }),
      async (cfg) => {
        const all = Array.from(
          { length: cfg.nPrompts },
          (_, k) => rewardsOf(k, cfg.groupSize, cfg.probs[k]!, cfg.kind, cfg.seed),
        );
        const source = [...all.keys()][Symbol.iterator]();
        const result = await dynamicSample<number, G>({
          prompts: source,
          groupSize: cfg.groupSize,
          batchGroups: cfg.batchGroups,
          maxRounds: cfg.maxRounds,
          ...(cfg.promptsPerRound === undefined ? {} : { promptsPerRound: cfg.promptsPerRound }),
          generate: (prompts) =>
            Promise.resolve(prompts.map((k) => ({ uid: k, rewards: all[k]! }))),
        });
        // 1. never a zero-variance group
        for (const g of result.groups) assert.ok(hasRewardVariance(g.rewards), `group ${g.uid}`);
        for (const g of result.surplus) assert.ok(hasRewardVariance(g.rewards));
        for (const g of result.dropped) assert.ok(!hasRewardVariance(g.rewards));
        // 2. the oracle: walk rounds of `per` prompts until full / cap / exhausted
        const per = cfg.promptsPerRound ?? cfg.batchGroups;
        let used = 0;
        let rounds = 0;
        let sawEnd = false; // the driver asked the source for a prompt it did not have
        const informative: number[] = [];
        while (informative.length < cfg.batchGroups && rounds < cfg.maxRounds) {
          if (used >= cfg.nPrompts) {
            sawEnd = true;
            break;
          }
          let end = used + per;
          if (end > cfg.nPrompts) {
            sawEnd = true;
            end = cfg.nPrompts;
          }
          for (let k = used; k < end; k++) if (hasRewardVariance(all[k]!)) informative.push(k);
          used = end;
          rounds++;
        }
        const full = informative.length >= cfg.batchGroups;
        assert.equal(result.complete, full);
        assert.equal(result.reason, full ? "full" : sawEnd ? "prompts_exhausted" : "max_rounds");
        assert.equal(result.groups.length, Math.min(cfg.batchGroups, informative.length));
        assert.deepEqual(result.groups.map((g) => g.uid), informative.slice(0, cfg.batchGroups));
        assert.deepEqual(result.surplus.map((g) => g.uid), informative.slice(cfg.batchGroups));
        assert.equal(result.stats.rounds, rounds);
        assert.ok(rounds <= cfg.maxRounds);
        assert.equal(result.stats.promptsConsumed, used);
        assert.equal(result.stats.groupsGenerated, used);
        assert.equal(result.stats.samplesGenerated, used * cfg.groupSize);
        assert.equal(result.stats.groupsDropped, used - informative.length);
        assert.equal(
          result.stats.filteredFraction,
          used === 0 ? 0 : (used - informative.length) / used,
        );
        // 3. no read-ahead: the source continues right after the last prompt used
        const next = source.next();
        assert.deepEqual(
          next,
          used < cfg.nPrompts ? { done: false, value: used } : { done: true, value: undefined },
        );
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("dynamicSample: an all-solved stream ends incomplete with reason max_rounds, not an error", async () => {
  let calls = 0;
  const r = await dynamicSample({
    prompts: (function* () {
      for (let i = 0;; i++) yield i; // infinite
    })(),
    groupSize: 4,
    batchGroups: 8,
    maxRounds: 3,
    generate: (ps) => {
      calls++;
      return Promise.resolve(ps.map(() => ({ rewards: [1, 1, 1, 1] })));
    },
  });
  assert.equal(calls, 3);
  assert.deepEqual(
    { complete: r.complete, reason: r.reason, groups: r.groups.length },
    { complete: false, reason: "max_rounds", groups: 0 },
  );
  assert.equal(r.stats.filteredFraction, 1);
  assert.equal(r.stats.groupsDropped, 24);
});

Deno.test("dynamicSample: async sources, adaptive promptsPerRound, metric and tolerance", async () => {
  async function* prompts() {
    for (let i = 0; i < 100; i++) yield i;
  }
  const asked: number[] = [];
  const r = await dynamicSample({
    prompts: prompts(),
    groupSize: 2,
    batchGroups: 10,
    maxRounds: 10,
    promptsPerRound: ({ needed, keepRate }) => Math.ceil(needed / Math.max(keepRate ?? 1, 0.25)),
    // every 4th prompt informative; the metric reads `acc`, rewards are shaped
    generate: (ps) => {
      asked.push(ps.length);
      return Promise.resolve(ps.map((i) => ({
        rewards: [0.1, 0.1],
        acc: i % 4 === 0 ? [1, 0] : [0, 0.0001],
      })));
    },
    metric: (g) => g.acc,
    tolerance: 0.001,
  });
  assert.equal(r.complete, true);
  // round 0: 10 prompts, 3 kept (0, 4, 8); round 1: ceil(7 / 0.3) = 24 prompts, 6 kept;
  // round 2: ceil(1 / (9 / 34)) = 4 prompts, 1 kept (36)
  assert.deepEqual(asked, [10, 24, 4]);
  assert.ok(r.groups.every((g) => g.acc[0] === 1));
});

Deno.test("dynamicSample: prompts_exhausted, bad generate output and bad options are errors that name the fix", async () => {
  const short = await dynamicSample({
    prompts: [1, 2, 3],
    groupSize: 2,
    batchGroups: 5,
    maxRounds: Infinity,
    generate: (ps) => Promise.resolve(ps.map((i) => ({ rewards: [i % 2, 0] }))),
  });
  assert.deepEqual([short.complete, short.reason, short.groups.length], [
    false,
    "prompts_exhausted",
    2,
  ]);
  const base = { prompts: [1, 2], batchGroups: 1, maxRounds: 1 };
  await assert.rejects(
    dynamicSample({ ...base, groupSize: 2, generate: () => Promise.resolve([]) }),
    /generate returned 0 groups for 1 prompts in round 0; return one group per prompt/,
  );
  await assert.rejects(
    dynamicSample({
      ...base,
      groupSize: 2,
      generate: (ps) => Promise.resolve(ps.map(() => ({ rewards: [1] }))),
    }),
    /group 0 of round 0 has 1 rewards; each group needs groupSize = 2 rewards/,
  );
  await assert.rejects(
    dynamicSample({
      ...base,
      groupSize: 2,
      generate: (ps) => Promise.resolve(ps.map(() => ({ rewards: [1, NaN] }))),
    }),
    /groups\[0\] metric\[1\] must be a finite number, got NaN/,
  );
  await assert.rejects(
    dynamicSample({ ...base, groupSize: 1, generate: () => Promise.resolve([]) }),
    /groupSize must be an integer >= 2, got 1/,
  );
  await assert.rejects(
    dynamicSample({ ...base, maxRounds: 0, groupSize: 2, generate: () => Promise.resolve([]) }),
    /maxRounds must be an integer >= 1 \(or Infinity\), got 0/,
  );
  await assert.rejects(
    dynamicSample({
      ...base,
      groupSize: 2,
      generate: () => Promise.reject(new Error("vLLM died")),
    }),
    /vLLM died/,
  );
});

Deno.test("DynamicBatch: refuses rounds once done", () => {
  const b = new DynamicBatch({ batchGroups: 1, maxRounds: 5 });
  b.addRound([{ rewards: [0, 1] }]);
  assert.equal(b.done, true);
  assert.throws(() => b.addRound([{ rewards: [0, 1] }]), /already done \(full\)/);
});

Deno.test("filterGroups, hasRewardVariance and filterByAccuracy", () => {
  assert.equal(hasRewardVariance([]), false);
  assert.equal(hasRewardVariance([3]), false);
  assert.equal(hasRewardVariance(new Float64Array([1, 1, 1.5])), true);
  const f = filterGroups([{ rewards: [1, 1] }, { rewards: [-1, -1] }, { rewards: [1, -1] }]);
  assert.deepEqual([f.kept.length, f.dropped.length, f.filteredFraction], [1, 2, 2 / 3]);
  const groups = [0, 1, 2, 3, 4].map((c) => ({
    c,
    rewards: [0, 1, 2, 3, 4].map((j) => (j < c ? 1 : 0)),
  }));
  assert.deepEqual(
    filterByAccuracy(groups, { low: 0.2, high: 0.8 }).map((g) => g.c),
    [1, 2, 3, 4].filter((c) => c / 5 <= 0.8),
  );
  assert.throws(
    () => filterByAccuracy(groups, { low: 0.9, high: 0.1 }),
    /low \(0\.9\) must be <= high \(0\.1\)/,
  );
});
