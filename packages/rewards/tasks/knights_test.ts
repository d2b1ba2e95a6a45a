import assert from "node:assert/strict";
import fc from "fast-check";
import { knightsKnavesTask, type KnightsRow, parseKnightsAnswer } from "./knights.ts";
import { checkTaskProperties } from "./_test_utils.ts";

/** Every assignment other than the solution, written as an answer. */
function otherAssignments(row: KnightsRow): string[] {
  const n = row.names.length;
  const out: string[] = [];
  for (let mask = 0; mask < 1 << n; mask++) {
    const world = row.names.map((_, i) => ((mask >> i) & 1) === 1);
    if (world.every((k, i) => k === row.knights[i])) continue;
    out.push(row.names.map((who, i) => `${who} is a ${world[i] ? "knight" : "knave"}`).join(", "));
  }
  return out;
}

Deno.test("knightsKnavesTask: properties (own answer accepted, every other assignment rejected)", async () => {
  await checkTaskProperties(knightsKnavesTask(), otherAssignments, 30);
  await checkTaskProperties(
    knightsKnavesTask({ people: [2, 5], compound: 0.8 }),
    otherAssignments,
    30,
  );
});

/** An independent reading of the rendered statements, then brute force. */
function solveFromText(row: KnightsRow): boolean[][] {
  const n = row.names.length;
  const idx = (name: string) => row.names.indexOf(name);
  const atom = (s: string, world: boolean[]): boolean => {
    const m = /^(\w+) is a (knight|knave)$/.exec(s)!;
    return world[idx(m[1]!)] === (m[2] === "knight");
  };
  const holds = (s: string, speaker: number, world: boolean[]): boolean => {
    let m = /^(\w+) and I are the same kind$/.exec(s);
    if (m) return world[idx(m[1]!)] === world[speaker];
    m = /^(\w+) and I are different kinds$/.exec(s);
    if (m) return world[idx(m[1]!)] !== world[speaker];
    if (s.includes(" and ")) return s.split(" and ").every((p) => atom(p, world));
    if (s.includes(" or ")) return s.split(" or ").some((p) => atom(p, world));
    return atom(s, world);
  };
  const sols: boolean[][] = [];
  for (let mask = 0; mask < 1 << n; mask++) {
    const world = row.names.map((_, i) => ((mask >> i) & 1) === 1);
    if (row.statements.every((s, i) => holds(s, i, world) === world[i])) sols.push(world);
  }
  return sols;
}

Deno.test("knightsKnavesTask: every puzzle has exactly one solution (independent solver on the text)", () => {
  fc.assert(
    fc.property(fc.integer(), fc.integer({ min: 2, max: 7 }), (seed, people) => {
      const row = knightsKnavesTask({ people }).row(seed, 0);
      assert.deepEqual(solveFromText(row), [row.knights]);
      for (const [i, who] of row.names.entries()) {
        assert.ok(row.prompt.includes(`${who} says: "${row.statements[i]}."`));
      }
    }),
    { numRuns: 60 },
  );
});

Deno.test("parseKnightsAnswer: free-form answers", () => {
  const names = ["Alice", "Bob", "Carol"];
  assert.deepEqual(parseKnightsAnswer("Alice: knight; Bob: knave; Carol: knight", names), [
    true,
    false,
    true,
  ]);
  assert.deepEqual(parseKnightsAnswer("alice and carol are knights, bob is a knave", names), [
    true,
    false,
    true,
  ]);
  assert.equal(
    parseKnightsAnswer("Alice is a knight, Alice is a knave, Bob and Carol are knaves", names),
    null,
  );
  assert.equal(parseKnightsAnswer("Alice and Bob are knights", names), null, "Carol missing");
});

Deno.test("knightsKnavesTask: two inhabitants without compound statements cannot be unique", () => {
  assert.throws(
    () => knightsKnavesTask({ people: 2, compound: 0 }).row(0, 0),
    /raise options.compound/,
  );
  assert.throws(
    () => knightsKnavesTask({ people: 9 }),
    /options.people must be an integer in \[2, 8\], got 9/,
  );
});
