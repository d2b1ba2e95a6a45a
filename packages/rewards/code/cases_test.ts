import assert from "node:assert/strict";
import fc from "fast-check";
import { isAssertCase, normalizeOutput, outputsMatch, parseTests } from "./mod.ts";

Deno.test("parseTests: every supported shape", () => {
  assert.deepEqual(parseTests("assert f() == 1"), [{ assert: "assert f() == 1" }]);
  assert.deepEqual(parseTests(["assert a()", "assert b()"]), [
    { assert: "assert a()" },
    { assert: "assert b()" },
  ]);
  assert.deepEqual(parseTests([{ input: "1", output: "2" }, { assert: "x" }, { output: 3 }]), [
    { input: "1", output: "2" },
    { assert: "x" },
    { input: "", output: "3" },
  ]);
  assert.deepEqual(parseTests({ input: "a", output: "b" }), [{ input: "a", output: "b" }]);
  assert.deepEqual(parseTests({ inputs: ["1", "2"], outputs: ["3", "4"] }), [
    { input: "1", output: "3" },
    { input: "2", output: "4" },
  ]);
  // APPS stores input_output as a JSON string; lines given as arrays are joined.
  assert.deepEqual(parseTests(JSON.stringify({ inputs: [["1", "2"]], outputs: [["3"]] })), [
    { input: "1\n2", output: "3" },
  ]);
  assert.deepEqual(parseTests({ outputs: ["x"] }), [{ input: "", output: "x" }]);
});

Deno.test("parseTests: absent or empty is null; malformed throws", () => {
  for (const v of [undefined, null, "", "  ", [], { inputs: [], outputs: [] }]) {
    assert.equal(parseTests(v), null, JSON.stringify(v));
  }
  assert.throws(() => parseTests(42), TypeError);
  assert.throws(() => parseTests([{ nope: 1 }]), /tests\[0\]/);
  assert.throws(() => parseTests({ inputs: ["1"], outputs: ["1", "2"] }), /same length/);
  assert.throws(() => parseTests([{ input: {}, output: "1" }]), /input must be a string/);
});

Deno.test("isAssertCase", () => {
  assert.equal(isAssertCase({ assert: "" }), true);
  assert.equal(isAssertCase({ input: "", output: "" }), false);
});

Deno.test("normalizeOutput / outputsMatch: trailing whitespace and line endings only", () => {
  assert.equal(normalizeOutput("a \t\r\nb\r\n\r\n"), "a\nb");
  assert.equal(normalizeOutput("\n\na"), "\n\na");
  assert.ok(outputsMatch("1 2 \n", "1 2"));
  assert.ok(!outputsMatch("1  2", "1 2"));
  assert.ok(!outputsMatch(" 1", "1"));
});

Deno.test("normalizeOutput is idempotent; outputsMatch is an equivalence (property)", () => {
  const text = fc.string({ unit: fc.constantFrom("a", "b", " ", "\t", "\n", "\r") });
  fc.assert(fc.property(text, (s) => normalizeOutput(normalizeOutput(s)) === normalizeOutput(s)));
  fc.assert(fc.property(text, text, (a, b) => outputsMatch(a, b) === outputsMatch(b, a)));
  fc.assert(fc.property(text, (a) => outputsMatch(a, a) && outputsMatch(a, a + " \n\n")));
});
