import fc from "fast-check";
import assert from "node:assert/strict";
import { isPlainObject, mergeLayers } from "./merge.ts";

Deno.test("mergeLayers: mappings merge, scalars/lists/null replace, later layers win", () => {
  const a = { x: { y: 1, z: [1, 2], w: { v: 1 } }, keep: true };
  const b = { x: { z: [3], w: null } };
  const { value, provenance } = mergeLayers([
    { source: "a", data: a },
    { source: "b", data: b },
  ]);
  assert.deepEqual(value, { x: { y: 1, z: [3], w: null }, keep: true });
  assert.equal(provenance.get("x.y"), "a");
  assert.equal(provenance.get("x.z"), "b");
  assert.equal(provenance.get("x.w"), "b");
  assert.equal(provenance.has("x.w.v"), false); // replaced, so its old child is forgotten
  assert.deepEqual(a.x.z, [1, 2], "layers are not modified");
});

Deno.test("mergeLayers: a new task, estimator or loss drops the previous one's options", () => {
  const base = {
    task: { name: "countdown", options: { count: 3 }, formatWeight: 0 },
    algorithm: {
      estimator: "grpo",
      estimatorOptions: { epsilon: 0 },
      loss: "vanilla",
      lossOptions: { tauPos: 1 },
    },
  };
  const m = mergeLayers([
    { source: "base", data: base },
    { source: "top", data: { task: { name: "arithmetic" }, algorithm: { loss: "sapo" } } },
  ]);
  assert.deepEqual(m.value.task, { name: "arithmetic", formatWeight: 0 });
  assert.deepEqual(m.value.algorithm, {
    estimator: "grpo",
    estimatorOptions: { epsilon: 0 },
    loss: "sapo",
    lossOptions: {},
  });
  assert.equal(m.provenance.get("algorithm.lossOptions"), "top");
  // the same name again keeps the options; with a new name only the new layer's options apply
  const same = mergeLayers([
    { source: "base", data: base },
    {
      source: "top",
      data: {
        task: { name: "countdown" },
        algorithm: { estimator: "rloo", estimatorOptions: { x: 1 } },
      },
    },
  ]);
  assert.deepEqual((same.value.task as Record<string, unknown>).options, { count: 3 });
  assert.deepEqual((same.value.algorithm as Record<string, unknown>).estimatorOptions, { x: 1 });
  // switching to a dataset drops the built-in task's name and options, and back again
  const data = { path: "d.jsonl", format: "jsonl", promptField: "q", answerField: "a" };
  const toData = mergeLayers([{ source: "base", data: base }, {
    source: "d",
    data: { task: { data } },
  }]);
  assert.deepEqual(toData.value.task, { formatWeight: 0, data });
  const back = mergeLayers([
    { source: "d", data: { task: { data } } },
    { source: "n", data: { task: { name: "sudoku4" } } },
  ]);
  assert.deepEqual(back.value.task, { name: "sudoku4" });
});

const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
    tie("object"),
  ),
  object: fc.dictionary(fc.constantFrom("a", "b", "c"), tie("value"), {
    maxKeys: 3,
    noNullPrototype: true,
  }),
})).object as fc.Arbitrary<Record<string, unknown>>;

Deno.test("mergeLayers: properties (one layer is a copy; merging with {} is identity; last scalar wins)", () => {
  fc.assert(
    fc.property(json, json, (a, b) => {
      assert.deepEqual(mergeLayers([{ source: "a", data: a }]).value, a);
      assert.deepEqual(mergeLayers([{ source: "a", data: a }, { source: "e", data: {} }]).value, a);
      const m = mergeLayers([{ source: "a", data: a }, { source: "b", data: b }]).value;
      for (const [k, v] of Object.entries(b)) {
        if (!isPlainObject(v)) assert.deepEqual(m[k], v);
      }
      for (const [k, v] of Object.entries(a)) if (!(k in b)) assert.deepEqual(m[k], v);
    }),
    { numRuns: 200 },
  );
});
