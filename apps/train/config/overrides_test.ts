import fc from "fast-check";
import assert from "node:assert/strict";
import { ConfigError } from "./errors.ts";
import { nest, overrideLayers, parseOverride, parseScalar } from "./overrides.ts";

Deno.test("parseScalar: numbers written by String() come back exactly", () => {
  fc.assert(
    fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
      fc.pre(!Object.is(x, -0));
      assert.equal(parseScalar(String(x)), x);
    }),
    { numRuns: 300 },
  );
  assert.equal(parseScalar(".inf"), Infinity);
});

Deno.test("parseScalar: YAML meanings, templates kept as text, empty text is an empty string", () => {
  assert.equal(parseScalar("null"), null);
  assert.equal(parseScalar("~"), null);
  assert.equal(parseScalar(""), "");
  assert.equal(parseScalar("false"), false);
  assert.equal(parseScalar("yes"), "yes"); // YAML 1.2: not a boolean
  assert.equal(parseScalar("cosine"), "cosine");
  assert.deepEqual(parseScalar("{count: 3}"), { count: 3 });
  assert.equal(parseScalar("Q: {{question}}"), "Q: {{question}}");
  assert.equal(parseScalar("[1, 2"), "[1, 2"); // invalid YAML on its own
});

Deno.test("parseOverride: key=value with a dotted key; the value may contain '='", () => {
  assert.deepEqual(parseOverride("task.data.template=a=b"), {
    path: ["task", "data", "template"],
    value: "a=b",
    text: "task.data.template=a=b",
  });
  for (const bad of ["", "=1", "a..b=1", "a.b", "1a=2", "a b=1"]) {
    assert.throws(
      () => parseOverride(bad),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message ===
          `config: override ${
            JSON.stringify(bad)
          }: expected key=value with a dotted key of letters, digits and _, e.g. optimizer.lr=1e-4 (bare or after --set)`,
      bad,
    );
  }
});

Deno.test("overrideLayers / nest: one layer per expression, in order", () => {
  assert.deepEqual(nest([], 1), 1 as unknown as Record<string, unknown>);
  const layers = overrideLayers(["a.b=1", "a.b=2"]);
  assert.deepEqual(layers.map((l) => l.source), ["--set a.b=1", "--set a.b=2"]);
  assert.deepEqual(layers[1]!.data, { a: { b: 2 } });
});
