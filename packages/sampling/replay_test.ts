import assert from "node:assert/strict";
import fc from "fast-check";
import { chiSquareTest } from "./metrics.ts";
import { groupHasSuccess, ReplayBuffer, type ReplayMode } from "./replay.ts";

Deno.test("replay fifo: capacity evicts the oldest; uniform sampling; counters", () => {
  const buf = new ReplayBuffer<number>({ capacity: 3, seed: 1 });
  for (let i = 0; i < 5; i++) assert.equal(buf.add(i * 10, { version: i }), i);
  assert.equal(buf.size, 3);
  assert.deepEqual(buf.entries().map((e) => e.item), [20, 30, 40]);
  assert.deepEqual(buf.counts, { added: 5, rejected: 0, evicted: 2, stale: 0, removed: 0 });
  const s = buf.sample(6);
  assert.equal(s.length, 6);
  for (const x of s) {
    assert.ok([20, 30, 40].includes(x.item));
    assert.equal(x.weight, 1);
    assert.equal(x.probability, 1 / 3);
  }
  const distinct = buf.sample(3, { replace: false }).map((x) => x.id).sort();
  assert.deepEqual(distinct, [2, 3, 4]);
  assert.equal(buf.remove([3, 99]), 1);
  assert.deepEqual(buf.entries().map((e) => e.id), [2, 4]);
  assert.deepEqual(buf.sample(0), []);
});

Deno.test("replay: staleness tags and evictOlderThan(version)", () => {
  const buf = new ReplayBuffer<string>({ capacity: 10 });
  ["a", "b", "c", "d", "e"].forEach((x, i) => buf.add(x, { version: [3, 1, 4, 1, 5][i]! }));
  assert.equal(buf.evictOlderThan(3), 2); // the two version-1 entries
  assert.deepEqual(buf.entries().map((e) => [e.item, e.version]), [["a", 3], ["c", 4], ["e", 5]]);
  assert.equal(buf.evictOlderThan(0), 0);
  assert.equal(buf.counts.stale, 2);
});

Deno.test("replay success mode keeps only groups with a success", () => {
  const buf = new ReplayBuffer<{ prompt: string; rewards: number[] }>({
    capacity: 4,
    mode: "success",
  });
  const groups = [
    { prompt: "p1", rewards: [0, 0, 0, 0] },
    { prompt: "p2", rewards: [0, 1, 0, 0] },
    { prompt: "p3", rewards: [1, 1, 1, 1] },
    { prompt: "p4", rewards: [0, 0, 0, 0] },
  ];
  const ids = groups.map((g) => buf.add(g, { version: 0, success: groupHasSuccess(g.rewards) }));
  assert.deepEqual(ids, [null, 0, 1, null]);
  assert.deepEqual(buf.entries().map((e) => e.item.prompt), ["p2", "p3"]);
  assert.equal(buf.counts.rejected, 2);
  assert.throws(
    () => buf.add(groups[0]!, { version: 0 }),
    /meta\.success is required in success mode/,
  );
  assert.ok(buf.sample(10).every((s) => s.item.prompt === "p2" || s.item.prompt === "p3"));
  assert.equal(groupHasSuccess([0.2, 0.9], 0.9), true);
  assert.throws(() => groupHasSuccess([0, NaN]), /rewards\[1\] is NaN/);
});

Deno.test("replay prioritized: P ∝ p^α, importance weights (N·P)^−β / max, chi-square on frequencies", () => {
  const buf = new ReplayBuffer<string>({
    capacity: 4,
    mode: "prioritized",
    alpha: 0.5,
    beta: 1,
    seed: 9,
  });
  const priorities = [1, 4, 9, 16]; // p^0.5 = 1, 2, 3, 4 → P = 0.1, 0.2, 0.3, 0.4
  priorities.forEach((p, i) => buf.add(`x${i}`, { version: 0, priority: p }));
  const P = buf.probabilities();
  [0.1, 0.2, 0.3, 0.4].forEach((p, i) => assert.ok(Math.abs(P[i]! - p) < 1e-15));
  const draws = buf.sample(20_000);
  const counts = [0, 0, 0, 0];
  for (const d of draws) {
    const i = Number(d.item.slice(1));
    counts[i] = counts[i]! + 1;
    // w = (4·P)^−1 / (4·0.1)^−1 = 0.1 / P
    assert.ok(Math.abs(d.weight - 0.1 / [0.1, 0.2, 0.3, 0.4][i]!) < 1e-12);
    assert.ok(Math.abs(d.probability - [0.1, 0.2, 0.3, 0.4][i]!) < 1e-15);
  }
  const r = chiSquareTest(counts, [0.1, 0.2, 0.3, 0.4]);
  console.log(
    `prioritized replay frequencies: χ² = ${r.statistic.toFixed(3)}, df = ${r.df}, p = ${
      r.pValue.toFixed(4)
    }`,
  );
  assert.ok(r.pValue > 0.001);
  // new entries default to the largest priority seen; updates change P
  buf.add("new", { version: 1 });
  assert.equal(buf.entries().at(-1)!.priority, 16);
  const id1 = buf.entries()[0]!.id;
  buf.updatePriorities([id1], [0]);
  assert.equal(buf.probabilities()[0], 0);
  assert.ok(buf.sample(500).every((s) => s.id !== id1));
  // without replacement: distinct ids; zero-priority entries are never drawn
  const noRep = buf.sample(3, { replace: false });
  assert.equal(new Set(noRep.map((s) => s.id)).size, 3);
  assert.throws(() => buf.sample(4, { replace: false }), /only 3 entries have priority > 0/);
  assert.throws(() => buf.updatePriorities([12345], [1]), /ids\[0\] = 12345 is not in the buffer/);
  const zero = new ReplayBuffer<string>({ capacity: 2, mode: "prioritized" });
  zero.add("z", { version: 0, priority: 0 });
  assert.throws(() => zero.sample(1), /every priority is 0, so nothing can be drawn/);
  assert.throws(
    () => new ReplayBuffer({ capacity: 2 }).updatePriorities([0], [1]),
    /only a "prioritized" buffer has priorities/,
  );
});

Deno.test("replay: same seed → same samples; errors name fields and fixes", () => {
  const make = (seed: number) => {
    const b = new ReplayBuffer<number>({ capacity: 50, mode: "prioritized", seed });
    for (let i = 0; i < 50; i++) b.add(i, { version: i, priority: 1 + (i % 7) });
    return b;
  };
  assert.deepEqual(make(3).sample(20), make(3).sample(20));
  assert.notDeepEqual(make(3).sample(20), make(4).sample(20));
  assert.throws(
    () => new ReplayBuffer({ capacity: 0 }),
    /ReplayBuffer: capacity must be an integer >= 1, got 0/,
  );
  assert.throws(
    () => new ReplayBuffer({ capacity: 2, mode: "lifo" as never }),
    /mode must be one of "fifo", "prioritized", "success", got "lifo"/,
  );
  assert.throws(
    () => new ReplayBuffer({ capacity: 2, size: 3 } as never),
    /unknown field "size" in options/,
  );
  const b = new ReplayBuffer<number>({ capacity: 2 });
  assert.throws(() => b.sample(1), /the buffer is empty; add entries before sampling 1/);
  b.add(1, { version: 0 });
  assert.throws(
    () => b.sample(2, { replace: false }),
    /cannot draw 2 entries without replacement from 1/,
  );
  assert.throws(() => b.add(2, { version: -1 }), /meta\.version must be an integer >= 0, got -1/);
  assert.throws(
    () => ReplayBuffer.fromJSON({ ...b.toJSON(), format: "v0" as never }),
    /format must be "rlvr.replay\/1", got "v0"/,
  );
  const json = b.toJSON();
  assert.throws(
    () => ReplayBuffer.fromJSON({ ...json, rng: { ...json.rng, seed: 5 } }),
    /rng \{seed 5, stream 0\} does not match options \{seed 0, stream 0\}/,
  );
});

type Op =
  | { kind: "add"; version: number; priority: number | undefined; success: boolean }
  | { kind: "sample"; n: number; replace: boolean }
  | { kind: "update"; pick: number; priority: number }
  | { kind: "evict"; version: number }
  | { kind: "remove"; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("add" as const),
      version: fc.integer({ min: 0, max: 20 }),
      priority: fc.option(fc.double({ min: 0.01, max: 10, noNaN: true }), { nil: undefined }),
      success: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("sample" as const),
      n: fc.integer({ min: 0, max: 6 }),
      replace: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("update" as const),
      pick: fc.nat(),
      priority: fc.double({ min: 0.01, max: 10, noNaN: true }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("evict" as const),
      version: fc.integer({ min: 0, max: 10 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }) },
);

/** Applies one op; returns what it produced (samples or nothing). */
function apply(buf: ReplayBuffer<{ tag: string }>, op: Op): unknown {
  const mode = buf.options.mode;
  switch (op.kind) {
    case "add": {
      const meta: { version: number; priority?: number; success?: boolean } = {
        version: op.version,
      };
      if (mode === "prioritized" && op.priority !== undefined) meta.priority = op.priority;
      if (mode === "success") meta.success = op.success;
      return buf.add({ tag: `v${op.version}` }, meta);
    }
    case "sample": {
      if (buf.size === 0) return null;
      return buf.sample(op.replace ? op.n : Math.min(op.n, buf.size), { replace: op.replace });
    }
    case "update": {
      if (mode !== "prioritized" || buf.size === 0) return null;
      const e = buf.entries()[op.pick % buf.size]!;
      buf.updatePriorities([e.id], [op.priority]);
      return e.id;
    }
    case "evict":
      return buf.evictOlderThan(op.version);
    case "remove": {
      if (buf.size === 0) return null;
      return buf.remove([buf.entries()[op.pick % buf.size]!.id]);
    }
  }
}

Deno.test("replay property: save → JSON → restore → continue yields the same samples as never stopping", () => {
  fc.assert(
    fc.property(
      fc.constantFrom<ReplayMode>("fifo", "prioritized", "success"),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 0, max: 2 ** 53 - 1 }),
      fc.array(opArb, { maxLength: 40 }),
      fc.array(opArb, { maxLength: 40 }),
      (mode, capacity, seed, before, after) => {
        const opts = { capacity, mode, seed, alpha: 0.7, beta: 0.5 };
        const straight = new ReplayBuffer<{ tag: string }>(opts);
        const stopped = new ReplayBuffer<{ tag: string }>(opts);
        for (const op of before) assert.deepEqual(apply(stopped, op), apply(straight, op));
        const resumed = ReplayBuffer.fromJSON<{ tag: string }>(
          JSON.parse(JSON.stringify(stopped.toJSON())),
        );
        for (const op of after) assert.deepEqual(apply(resumed, op), apply(straight, op));
        assert.deepEqual(resumed.toJSON(), straight.toJSON());
      },
    ),
    { numRuns: 300 },
  );
});
