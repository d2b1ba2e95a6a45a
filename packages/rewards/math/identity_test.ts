import assert from "node:assert/strict";
import fc from "fast-check";
import { exactIdentity } from "./identity.ts";

const x1 = ["Add", "x", 1];

Deno.test("exactIdentity: high degree, where floating point overflows", () => {
  const a = ["Add", ["Power", x1, 1000], ["Negate", ["Multiply", ["Power", x1, 999], x1]]];
  const v = exactIdentity(a, 0, ["x"])!;
  assert.equal(v.equal, true);
  assert.match(v.reason, /numerator degree ≤ 1000; chance of a coincidence ≤ \d\.\de-\d+/);
  const b = ["Add", ["Power", x1, 10000], ["Negate", ["Multiply", ["Power", x1, 9999], "x"]]];
  const w = exactIdentity(b, 0, ["x"])!;
  assert.equal(w.equal, false);
  assert.match(w.reason, /exact values differ at x=\d+ \(computed modulo the prime \d+\)/);
});

Deno.test("exactIdentity: rational functions, several variables, tiny differences", () => {
  const yes: [unknown, unknown, string[]][] = [
    [["Power", ["Add", "x", "y"], 2], ["Add", ["Power", "x", 2], ["Multiply", 2, "x", "y"], [
      "Power",
      "y",
      2,
    ]], ["x", "y"]],
    [["Divide", ["Subtract", ["Power", "x", 2], 1], ["Subtract", "x", 1]], x1, ["x"]],
    [["Multiply", ["Rational", 1, 2], "x"], ["Multiply", 0.5, "x"], ["x"]],
    [["Power", "x", -2], ["Divide", 1, ["Square", "x"]], ["x"]],
    [["Delimiter", x1], ["Add", 1, "x"], ["x"]],
  ];
  for (const [a, b, vars] of yes) {
    assert.equal(exactIdentity(a, b, vars)?.equal, true, JSON.stringify([a, b]));
  }
  const no: [unknown, unknown, string[]][] = [
    [["Power", "x", 2], ["Add", ["Power", "x", 2], ["Power", 10, -15]], ["x"]],
    [["Add", "x", "y"], ["Add", "x", "y", ["Multiply", { num: "1e-300" }, "y"]], ["x", "y"]],
    [["Power", x1, 3], ["Add", ["Power", "x", 3], 1], ["x"]],
  ];
  for (const [a, b, vars] of no) {
    assert.equal(exactIdentity(a, b, vars)?.equal, false, JSON.stringify([a, b]));
  }
});

Deno.test("exactIdentity: null outside rational functions; time limit; determinism", () => {
  assert.equal(exactIdentity(["Sqrt", "x"], "x", ["x"]), null);
  assert.equal(exactIdentity(["Multiply", "Pi", "x"], "x", ["x"]), null);
  assert.equal(exactIdentity(["Power", "x", "y"], "x", ["x", "y"]), null);
  assert.equal(exactIdentity(["Power", "x", 10001], "x", ["x"]), null); // beyond maxExponent
  assert.equal(exactIdentity(["Divide", 1, ["Subtract", "x", "x"]], 0, ["x"]), null); // never defined
  const late = exactIdentity(["Power", x1, 5], ["Power", x1, 5], ["x"], { deadline: 0 })!;
  assert.deepEqual(late, { equal: false, reason: "time limit reached" });
  const a = ["Power", x1, 7];
  const b = ["Add", ["Power", x1, 7], "x"];
  assert.deepEqual(exactIdentity(a, b, ["x"]), exactIdentity(a, b, ["x"]));
  assert.deepEqual(exactIdentity(a, b, ["x"]), exactIdentity(b, a, ["x"]));
  assert.notDeepEqual(exactIdentity(a, b, ["x"]), exactIdentity(a, b, ["x"], { seed: 7 }));
});

/** MathJSON of `Σ c_k x^k`, as a sum of powers or in Horner form. */
function polynomial(coefs: readonly number[], horner: boolean): unknown {
  if (!horner) return ["Add", ...coefs.map((c, k) => ["Multiply", c, ["Power", "x", k]])];
  let acc: unknown = coefs.at(-1)!;
  for (let k = coefs.length - 2; k >= 0; k--) acc = ["Add", coefs[k]!, ["Multiply", "x", acc]];
  return acc;
}

Deno.test("exactIdentity: property: a polynomial equals its Horner form and differs from any change", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: -1e6, max: 1e6 }), { minLength: 1, maxLength: 40 }),
      fc.nat(),
      fc.integer({ min: 1, max: 1e6 }),
      fc.integer(),
      (coefs, at, delta, seed) => {
        const p = polynomial(coefs, false);
        assert.equal(exactIdentity(p, polynomial(coefs, true), ["x"], { seed })?.equal, true);
        const changed = coefs.slice();
        changed[at % coefs.length]! += delta;
        // "Different" is certain, so this holds for every seed, not just with high probability.
        assert.equal(exactIdentity(p, polynomial(changed, true), ["x"], { seed })?.equal, false);
      },
    ),
    { numRuns: 150 },
  );
});
