import assert from "node:assert/strict";
import { compareValues, describeTolerance, type Tolerance } from "./compare.ts";

const SUMS: Tolerance = { kind: "close", rtol: 1e-4, atol: 1e-4, source: "t" };
const EXACT: Tolerance = { kind: "close", rtol: 0, atol: 0, source: "t" };
const BOUND: Tolerance = { kind: "bound", formula: "f", source: "t" };

Deno.test("compareValues: figures and decision under a close tolerance (assertClose's)", () => {
  const c = compareValues([1, 2, 1e-9], [1, 2.0001, 0], SUMS);
  assert.equal(c.pass, true);
  assert.ok(Math.abs(c.maxAbs! - 1e-4) < 1e-12);
  assert.ok(Math.abs(c.maxRel! - 1e-4 / 2.0001) < 1e-12, "1e-9 vs 0 is left out of maxRel");
  assert.ok(Math.abs(c.ratio! - 1e-4 / (1e-4 + 1e-4 * 2.0001)) < 1e-9); // |Δ| / (atol + rtol·|e|)
  const bad = compareValues([1, 2.5], [1, 2], SUMS, undefined, "softmax webgpu out");
  assert.equal(bad.pass, false);
  assert.match(bad.detail, /softmax webgpu out: assertClose: 1 of 2 elements differ/);
  assert.ok(bad.ratio! > 1);
});

Deno.test("compareValues: exact tolerance, NaN and infinities, length mismatch", () => {
  assert.equal(compareValues([1, NaN, Infinity], [1, NaN, Infinity], EXACT).pass, true);
  assert.equal(compareValues([1, NaN, Infinity], [1, NaN, Infinity], EXACT).ratio, 0);
  const nan = compareValues([NaN], [1], EXACT);
  assert.equal(nan.pass, false);
  assert.equal(nan.maxAbs, null, "Infinity is reported as null (JSON)");
  assert.equal(compareValues([1 + 2 ** -23], [1], EXACT).pass, false);
  const len = compareValues([1, 2], [1], SUMS, undefined, "x");
  assert.equal(len.pass, false);
  assert.match(len.detail, /x: 2 elements, the oracle has 1/);
});

Deno.test("compareValues: per-element bound", () => {
  const ok = compareValues([1.1, 2], [1, 2], BOUND, [0.2, 0]);
  assert.equal(ok.pass, true);
  assert.ok(Math.abs(ok.ratio! - 0.5) < 1e-9);
  const bad = compareValues([1.1, 2.1], [1, 2], BOUND, [0.2, 0.05], "mm");
  assert.equal(bad.pass, false);
  assert.match(bad.detail, /mm: 1 of 2 elements exceed f; worst at flat index 1/);
  assert.throws(() => compareValues([1], [1], BOUND), /needs one limit per element/);
});

Deno.test("describeTolerance: words and source", () => {
  assert.equal(describeTolerance(SUMS), "rtol 1e-4, atol 1e-4 (t)");
  assert.equal(describeTolerance(EXACT), "exact (t)");
  assert.equal(describeTolerance(BOUND), "f (t)");
});
