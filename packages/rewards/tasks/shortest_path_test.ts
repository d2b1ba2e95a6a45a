import assert from "node:assert/strict";
import fc from "fast-check";
import { type ShortestPathRow, shortestPathTask } from "./shortest_path.ts";
import { checkTaskProperties } from "./_test_utils.ts";

const perturb = (row: ShortestPathRow) => {
  const d = Number(row.answer);
  return [String(d + 1), String(d - 1), `${d}.5`, "A-B-C"];
};

/** Independent all-pairs distances (Floyd–Warshall). */
function floyd(row: ShortestPathRow): number {
  const n = row.nodes.length;
  const at = (x: string) => row.nodes.indexOf(x);
  const d = Array.from(
    { length: n },
    (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 0 : Infinity)),
  );
  for (const [a, b, w] of row.edges) {
    d[at(a)]![at(b)] = Math.min(d[at(a)]![at(b)]!, w);
    d[at(b)]![at(a)] = Math.min(d[at(b)]![at(a)]!, w);
  }
  for (let k = 0; k < n; k++) {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) d[i]![j] = Math.min(d[i]![j]!, d[i]![k]! + d[k]![j]!);
    }
  }
  return d[at(row.source)]![at(row.target)]!;
}

Deno.test("shortestPathTask: properties (own answer accepted, perturbed rejected, deterministic)", async () => {
  await checkTaskProperties(shortestPathTask(), perturb);
  await checkTaskProperties(
    shortestPathTask({ nodes: [4, 12], density: 0.3, maxWeight: 50 }),
    perturb,
  );
});

Deno.test("shortestPathTask: the answer equals an independent Floyd–Warshall; source and target are not adjacent", () => {
  fc.assert(
    fc.property(fc.integer(), fc.integer({ min: 3, max: 15 }), (seed, nodes) => {
      const row = shortestPathTask({ nodes }).row(seed, 0);
      assert.equal(Number(row.answer), floyd(row));
      assert.ok(
        !row.edges.some(([a, b]) =>
          (a === row.source && b === row.target) || (a === row.target && b === row.source)
        ),
      );
      assert.ok(row.difficulty >= nodes + 2, "at least two hops");
    }),
    { numRuns: 80 },
  );
});

Deno.test("shortestPathTask: knobs are validated", () => {
  assert.throws(
    () => shortestPathTask({ density: 0 }),
    /options.density must be a finite number in \(0, 1\], got 0/,
  );
  assert.throws(
    () => shortestPathTask({ nodes: 2 }),
    /options.nodes must be an integer in \[3, 26\], got 2/,
  );
});
