import assert from "node:assert/strict";
import fc from "fast-check";
import { FieldError, getPath, lookupPath, mapExample, promptUid } from "./fields.ts";

Deno.test("lookupPath: dotted paths through objects and arrays; exact dotted keys win", () => {
  const row = { "a.b": 1, a: { b: 2, list: [{ x: "y" }] }, z: null, u: undefined };
  assert.deepEqual(lookupPath(row, "a.b"), { found: true, value: 1 });
  assert.deepEqual(lookupPath(row, "a.list.0.x"), { found: true, value: "y" });
  assert.deepEqual(lookupPath(row, "z"), { found: true, value: null });
  assert.equal(lookupPath(row, "u").found, false);
  assert.deepEqual(lookupPath(row, "a.list.3"), {
    found: false,
    missing: "a.list.3",
    available: ["0..0"],
  });
  assert.deepEqual(lookupPath(row, "a.b.c"), { found: false, missing: "a.b.c", available: [] });
});

Deno.test("getPath finds what was put there (property)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.stringMatching(/^[a-z]{1,5}$/), { minLength: 1, maxLength: 4 }),
      fc.jsonValue(),
      (parts, value) => {
        fc.pre(value !== null);
        let row: unknown = value;
        for (const p of [...parts].reverse()) row = { [p]: row };
        assert.deepEqual(getPath(row, parts.join(".")), value);
      },
    ),
  );
});

Deno.test("mapExample: uid from a field or a prompt hash; errors are FieldErrors", () => {
  const ex = mapExample(
    { prompt: [{ role: "user", content: "x" }], answer: 0 },
    { prompt: "prompt", answer: "answer" },
    3,
    "s",
  );
  assert.equal(ex.uid, promptUid([{ role: "user", content: "x" }]));
  assert.equal(ex.answer, 0);
  assert.throws(
    () => mapExample({ prompt: "p", id: {} }, { prompt: "prompt", uid: "id" }, 0, "s"),
    FieldError,
  );
  assert.throws(
    () => mapExample("str", { prompt: "prompt" }, 0, "f:1"),
    /f:1: a row must be a JSON object/,
  );
});
