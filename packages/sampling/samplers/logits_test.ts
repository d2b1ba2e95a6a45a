import assert from "node:assert/strict";
import fc from "fast-check";
import { CounterRng } from "../rng.ts";
import { referenceLogSoftmax, referenceProbs, type RefParams } from "./_reference_test_utils.ts";
import {
  applyMinP,
  applyTemperature,
  applyTopK,
  applyTopP,
  logitsEntropy,
  logSoftmax,
  resolveSamplingParams,
  SAMPLING_ORDERS,
  samplingLogprobs,
  tokenLogprobs,
} from "./logits.ts";

const logitArb = fc.oneof(
  { weight: 8, arbitrary: fc.double({ min: -20, max: 20, noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.constantFrom(-Infinity, 0, 1) }, // masked tokens and exact ties
);
const rowArb = fc.array(logitArb, { minLength: 1, maxLength: 40 }).filter((r) =>
  r.some(Number.isFinite)
);
const paramsArb = fc.record({
  temperature: fc.oneof(fc.constant(1), fc.double({ min: 0.05, max: 3, noNaN: true })),
  topK: fc.integer({ min: -1, max: 12 }),
  // top-p strictly inside (0, 1) stays 1e-9 away from 1: the tail mass left under a near-one
  // threshold is below float64 resolution, so which side of the cut a token lands on is
  // rounding, not semantics (a seed once drew topP = 1 - 1.9e-15 with a 2.1e-15 tail)
  topP: fc.oneof(fc.constant(1), fc.double({ min: 0.05, max: 1 - 1e-9, noNaN: true })),
  minP: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 0.9, noNaN: true })),
  order: fc.constantFrom("hf" as const, "vllm" as const),
});

Deno.test("samplingLogprobs equals the naive reference (support and values to 1e-9), any row and params", () => {
  fc.assert(
    fc.property(rowArb, paramsArb, (row, params) => {
      const ref = referenceProbs(row, params as RefParams);
      const lp = samplingLogprobs(row, params);
      for (let i = 0; i < row.length; i++) {
        if (ref[i] === 0) {
          // off the support, or a probability that underflows float64 in the reference
          assert.ok(lp[i] === -Infinity || lp[i]! < -744, `token ${i} should be off the support`);
        } else {
          // the reference's log of a subnormal probability keeps fewer bits: relative tolerance
          const tol = ref[i]! > 1e-300 ? 1e-9 : 1e-9 * Math.abs(Math.log(ref[i]!));
          assert.ok(
            Math.abs(lp[i]! - Math.log(ref[i]!)) < tol,
            `token ${i}: ${lp[i]} vs ${Math.log(ref[i]!)}`,
          );
        }
      }
      let total = 0;
      for (const v of lp) total += Math.exp(v);
      assert.ok(Math.abs(total - 1) < 1e-12);
      // tokenLogprobs agrees bit for bit with the full row
      const t = Math.max(0, ref.findIndex((p) => p > 0));
      assert.equal(tokenLogprobs(row, t, params).logprob, lp[t]);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("top-p candidate pruning and top-k quickselect agree with full sorts on large vocabularies", () => {
  const rng = new CounterRng(5);
  for (let trial = 0; trial < 12; trial++) {
    const V = 3000 + trial * 500;
    // LLM-like: a few large logits, a long Gaussian-ish tail, some exact duplicates
    const row = Array.from(
      { length: V },
      (_, i) => i % 97 === 0 ? 8 - rng.next() : (rng.next() + rng.next() + rng.next() - 1.5) * 4,
    );
    for (let i = 0; i < 50; i++) row[rng.nextInt(V)] = row[rng.nextInt(V)]!;
    const params: RefParams = {
      temperature: 0.6 + trial * 0.1,
      topK: trial % 3 === 0 ? 0 : 40 * trial,
      topP: [0.5, 0.9, 0.95, 0.99][trial % 4]!,
      minP: trial % 2 ? 0.01 : 0,
      order: trial % 5 ? "hf" : "vllm",
    };
    const ref = referenceProbs(row, params);
    const lp = samplingLogprobs(row, params);
    for (let i = 0; i < V; i++) {
      assert.equal(Number.isFinite(lp[i]), ref[i]! > 0, `trial ${trial} token ${i}`);
      if (ref[i]! > 0) assert.ok(Math.abs(lp[i]! - Math.log(ref[i]!)) < 1e-9);
    }
  }
});

Deno.test("stage functions: temperature, top-k (ties kept), top-p (ties by index), min-p", () => {
  assert.deepEqual([...applyTemperature([3, -1, -Infinity], 2)], [1.5, -0.5, -Infinity]);
  assert.deepEqual([...applyTopK([5, 1, 5, 3, 5], 2)], [5, -Infinity, 5, -Infinity, 5]);
  assert.deepEqual([...applyTopK([5, 1, 4, 3], 0)], [5, 1, 4, 3]);
  // equal probabilities 0.25 each, p = 0.5: the two lowest indices
  assert.deepEqual([...applyTopP([0, 0, 0, 0], 0.5)].map(Number.isFinite), [
    true,
    true,
    false,
    false,
  ]);
  // p just above the first token's mass: the second is needed
  const lg = [0.6, 0.3, 0.1].map(Math.log);
  assert.deepEqual([...applyTopP(lg, 0.61)].map(Number.isFinite), [true, true, false]);
  assert.deepEqual([...applyTopP(lg, 0.59)].map(Number.isFinite), [true, false, false]);
  // min-p: the threshold is relative to the top token
  assert.deepEqual([...applyMinP(lg, 0.49)].map(Number.isFinite), [true, true, false]);
  assert.deepEqual([...applyMinP(lg, 0.51)].map(Number.isFinite), [true, false, false]);
  // composing the stages by hand in the hf order gives samplingLogprobs
  const row = [1.3, 0.2, -0.7, 2.2, 0.9, -1.1, 0.4];
  const p = { temperature: 0.8, topK: 5, topP: 0.85, minP: 0.1 };
  const manual = applyMinP(
    applyTopP(applyTopK(applyTemperature(row, p.temperature), p.topK), p.topP),
    p.minP,
  );
  const lp = logSoftmax(manual.map((v) => v)); // renormalise over the survivors
  const direct = samplingLogprobs(row, p);
  for (let i = 0; i < row.length; i++) {
    if (direct[i] === -Infinity) assert.equal(lp[i], -Infinity);
    else assert.ok(Math.abs(lp[i]! - direct[i]!) < 1e-12);
  }
  assert.deepEqual(SAMPLING_ORDERS.hf, ["temperature", "topK", "topP", "minP"]);
  assert.throws(
    () => applyTemperature([1], 0),
    /applyTemperature: temperature must be a finite number > 0, got 0/,
  );
  assert.throws(() => applyTopP([1, NaN], 0.5), /applyTopP: logits index 1 is NaN/);
});

Deno.test("logSoftmax (raw and scaled), logitsEntropy and the greedy point mass", () => {
  fc.assert(
    fc.property(rowArb, fc.double({ min: 0.1, max: 4, noNaN: true }), (row, T) => {
      const lp = logSoftmax(row, { temperature: T });
      const ref = referenceLogSoftmax(row, T);
      for (let i = 0; i < row.length; i++) {
        if (row[i] === -Infinity) assert.equal(lp[i], -Infinity);
        else assert.ok(Math.abs(lp[i]! - ref[i]!) < 1e-9);
      }
    }),
  );
  const big = logSoftmax([1e4, 1e4 - Math.log(3)]);
  assert.ok(
    Math.abs(big[0]! - Math.log(0.75)) < 1e-12 && Math.abs(big[1]! - Math.log(0.25)) < 1e-12,
  );
  assert.ok(Math.abs(logitsEntropy([0, 0, 0, -Infinity]) - Math.log(3)) < 1e-15);
  assert.equal(logitsEntropy([0, 0, 50], { vocabSize: 2 }), Math.log(2));
  assert.deepEqual([...samplingLogprobs([1, 4, 4], { temperature: 0 })], [-Infinity, 0, -Infinity]);
  assert.deepEqual(tokenLogprobs([1, 4, 4], 2, { temperature: 0 }).logprob, -Infinity);
});

Deno.test("resolveSamplingParams: defaults and validation", () => {
  assert.deepEqual(resolveSamplingParams(), {
    temperature: 1,
    topK: 0,
    topP: 1,
    minP: 0,
    vocabSize: undefined,
    order: "hf",
  });
  assert.equal(resolveSamplingParams({ topK: -1 }).topK, 0);
  assert.throws(
    () => resolveSamplingParams({ vocabSize: 0 }),
    /vocabSize must be an integer >= 1, got 0/,
  );
  assert.throws(() => resolveSamplingParams(null as never), /params must be an object/);
  assert.throws(
    () => resolveSamplingParams({ temperature: NaN }),
    /temperature must be a finite number >= 0, got NaN/,
  );
});
