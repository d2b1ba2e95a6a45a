import fc from "fast-check";
import assert from "node:assert/strict";
import { z } from "zod";
import { closest, describeIssues, dottedPath, editDistance } from "./issues.ts";

Deno.test("editDistance: identity, symmetry, bounds, one edit per change", () => {
  const s = fc.string({ maxLength: 8 });
  fc.assert(
    fc.property(s, s, fc.nat(), (a, b, at) => {
      assert.equal(editDistance(a, a), 0);
      assert.equal(editDistance(a, b), editDistance(b, a));
      assert.ok(editDistance(a, b) <= Math.max(a.length, b.length));
      assert.ok(editDistance(a, b) >= Math.abs(a.length - b.length));
      assert.equal(editDistance(a, b) === 0, a === b);
      // one insertion, one deletion, one adjacent swap of distinct characters: distance 1
      const i = a.length === 0 ? 0 : at % a.length;
      assert.equal(editDistance(a, a.slice(0, i) + "\u0000" + a.slice(i)), 1);
      if (a.length > 0) assert.equal(editDistance(a, a.slice(0, i) + a.slice(i + 1)), 1);
      if (i + 1 < a.length && a[i] !== a[i + 1]) {
        assert.equal(editDistance(a, a.slice(0, i) + a[i + 1] + a[i] + a.slice(i + 2)), 1);
      }
    }),
    { numRuns: 300 },
  );
  assert.equal(editDistance("kitten", "sitting"), 3);
});

Deno.test("closest: suggests only near spellings, case-insensitively", () => {
  assert.equal(closest("batchsize", ["batchSize", "groupSize"]), "batchSize");
  assert.equal(closest("stpes", ["steps", "seed"]), "steps");
  assert.equal(closest("lr", ["steps", "seed"]), undefined);
  assert.equal(closest("x", []), undefined);
});

Deno.test("dottedPath: keys dotted, indices bracketed", () => {
  assert.equal(dottedPath(["model", "lora", "targetModules", 0]), "model.lora.targetModules[0]");
});

Deno.test("describeIssues: each zod issue kind gets the value and what is allowed", () => {
  const schema = z.strictObject({
    n: z.int().min(1),
    x: z.number().max(1),
    e: z.enum(["a", "b"]),
    b: z.boolean(),
    l: z.array(z.number()).max(1),
    s: z.string().min(1),
    u: z.union([z.int(), z.tuple([z.int(), z.int()])], { error: "use an integer or a range" }),
    req: z.number(),
    c: z.number().refine((v) => v !== 3, { message: "3 is unlucky; use 4" }),
  });
  const r = schema.safeParse(
    { n: 0, x: 2, e: "c", b: "yes", l: [1, 2], s: "", u: "r", c: 3, typo: 1 },
    { reportInput: true },
  );
  const byPath = Object.fromEntries(
    describeIssues(r.error!.issues, { knownKeys: () => ["n", "x"] }).map((
      p,
    ) => [p.path, p.message]),
  );
  assert.equal(byPath.n, "0 is not allowed; use a number >= 1");
  assert.equal(byPath.x, "2 is not allowed; use a number <= 1");
  assert.equal(byPath.e, '"c" is not allowed; use one of a, b');
  assert.equal(byPath.b, '"yes" is not allowed; use true or false');
  assert.equal(byPath.l, "[1,2] is not allowed; use a list of at most 1 items");
  assert.equal(byPath.s, '"" is not allowed; use a non-empty string');
  assert.equal(byPath.u, '"r" is not allowed; use an integer or a range');
  assert.equal(byPath.req, "missing; set it to a number");
  assert.equal(byPath.c, "3 is unlucky; use 4");
  assert.equal(byPath.typo, "unknown key (value 1); keys of the config: n, x");
});

Deno.test("describeIssues: unknown keys suggest the same key in another section", () => {
  const r = z.strictObject({ trainer: z.strictObject({ steps: z.int() }) }).safeParse(
    { trainer: { steps: 1, lr: 0.1 } },
    { reportInput: true },
  );
  const [p] = describeIssues(r.error!.issues, {
    knownKeys: () => ["steps"],
    allKeys: ["trainer", "trainer.steps", "optimizer", "optimizer.lr"],
    provenance: new Map([["trainer.lr", "--set trainer.lr=0.1"]]),
  });
  assert.deepEqual(p, {
    path: "trainer.lr",
    message: "unknown key (value 0.1); did you mean optimizer.lr? keys of trainer: steps",
    source: "--set trainer.lr=0.1",
  });
});
