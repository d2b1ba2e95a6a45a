import assert from "node:assert/strict";
import fc from "fast-check";
import { chiSquareTest } from "../metrics.ts";
import { TOKEN_DOMAIN, uniformAt } from "../rng.ts";
import { referenceLogSoftmax, referenceProbs, type RefParams } from "./_reference_test_utils.ts";
import {
  logprobOf,
  normalizer,
  samplingLogprobs,
  type SamplingParams,
  temperatureInPlace,
  tokenLogprobs,
} from "./logits.ts";
import { greedy, type SamplerConfig, sampleToken, TokenSampler } from "./sampler.ts";

/** Twelve tokens with a spread of probabilities (and a tie between 4 and 5). */
const ROW = [2.1, 1.7, 1.2, 0.9, 0.6, 0.6, 0.1, -0.4, -0.9, -1.5, -2.2, -3.0];

function refParams(p: SamplingParams): RefParams {
  const r: RefParams = {
    temperature: p.temperature ?? 1,
    topK: p.topK ?? 0,
    topP: p.topP ?? 1,
    minP: p.minP ?? 0,
    order: p.order ?? "hf",
  };
  if (p.vocabSize !== undefined) r.vocabSize = p.vocabSize;
  return r;
}

const DRAWS = 20_000;
const ALPHA = 0.001;

/**
 * Draws DRAWS tokens (sequence i, position i mod 7, step 1) and tests the counts against the
 * reference distribution; checks every reported log-prob against log of the target
 * probability to 1e-9 and never-sampled impossible tokens.
 */
function goodnessOfFit(name: string, logits: ArrayLike<number>, config: SamplerConfig): void {
  const target = referenceProbs(logits, refParams(config));
  const sampler = new TokenSampler(config);
  const counts = new Array(logits.length).fill(0);
  for (let i = 0; i < DRAWS; i++) {
    const s = sampler.sample(logits, { step: 1, sequence: i, position: i % 7 });
    counts[s.token]++;
    assert.ok(target[s.token]! > 0, `${name}: drew impossible token ${s.token}`);
    assert.ok(
      Math.abs(s.logprob - Math.log(target[s.token]!)) < 1e-9,
      `${name}: logprob ${s.logprob} vs log ${target[s.token]}`,
    );
  }
  const r = chiSquareTest(counts, target);
  const support = target.filter((p) => p > 0).length;
  console.log(
    `${name}: support ${support}/${logits.length}, χ² = ${
      r.statistic.toFixed(3)
    }, df = ${r.df}, p = ${r.pValue.toFixed(4)} (min expected count ${r.minExpected.toFixed(1)})`,
  );
  assert.ok(r.minExpected >= 5, `${name}: expected counts too small for the test`);
  assert.ok(r.pValue > ALPHA, `${name}: chi-square p = ${r.pValue} ≤ ${ALPHA}`);
}

Deno.test("sampler: empirical frequencies match the target distribution (chi-square, 20k draws, p > 0.001)", () => {
  goodnessOfFit("softmax (T = 1)", ROW, { seed: 1 });
  goodnessOfFit("temperature 0.7", ROW, { seed: 2, temperature: 0.7 });
  goodnessOfFit("temperature 1.6", new Float32Array(ROW), { seed: 3, temperature: 1.6 });
  goodnessOfFit("top-k 5 (tie at the threshold keeps 6), T 1.3", ROW, {
    seed: 4,
    topK: 5,
    temperature: 1.3,
  });
  goodnessOfFit("top-k 3", ROW, { seed: 5, topK: 3 });
  goodnessOfFit("top-p 0.8, T 0.9", ROW, { seed: 6, topP: 0.8, temperature: 0.9 });
  goodnessOfFit("top-p 0.5", ROW, { seed: 7, topP: 0.5 });
  goodnessOfFit("min-p 0.1", ROW, { seed: 8, minP: 0.1 });
  goodnessOfFit("min-p 0.25, T 1.2", ROW, { seed: 9, minP: 0.25, temperature: 1.2 });
  goodnessOfFit("T 0.8 → top-k 9 → top-p 0.9 → min-p 0.05 (hf)", ROW, {
    seed: 10,
    temperature: 0.8,
    topK: 9,
    topP: 0.9,
    minP: 0.05,
  });
  goodnessOfFit("T 0.8 → min-p 0.05 → top-k 9 → top-p 0.9 (vllm)", ROW, {
    seed: 11,
    temperature: 0.8,
    topK: 9,
    topP: 0.9,
    minP: 0.05,
    order: "vllm",
  });
  goodnessOfFit("padded row (vocabSize 10 of 14, padding logits 50)", [
    ...ROW.slice(0, 10),
    50,
    50,
    50,
    50,
  ], {
    seed: 12,
    vocabSize: 10,
    topP: 0.95,
  });
});

Deno.test("sampler: hf and vllm orders differ only when top-p and min-p are both on", () => {
  const params = { temperature: 1, topP: 0.6, minP: 0.3 };
  const hf = referenceProbs(ROW, refParams(params));
  const vllm = referenceProbs(ROW, refParams({ ...params, order: "vllm" }));
  assert.notDeepEqual(hf.map((p) => p > 0), vllm.map((p) => p > 0));
  const lpHf = samplingLogprobs(ROW, params);
  const lpVllm = samplingLogprobs(ROW, { ...params, order: "vllm" });
  assert.deepEqual([...lpHf].map(Number.isFinite), hf.map((p) => p > 0));
  assert.deepEqual([...lpVllm].map(Number.isFinite), vllm.map((p) => p > 0));
  for (const p of [{ topK: 4, minP: 0.2 }, { topK: 6, topP: 0.7 }, { topP: 0.7 }]) {
    assert.deepEqual(samplingLogprobs(ROW, p), samplingLogprobs(ROW, { ...p, order: "vllm" }));
  }
});

Deno.test("sampler: fixed seed → identical outputs across runs (golden tokens)", () => {
  const config = { seed: 1234, temperature: 0.9, topP: 0.95 };
  const run = () =>
    Array.from(
      { length: 12 },
      (_, pos) => sampleToken(ROW, config, { step: 5, sequence: 2, position: pos }).token,
    );
  const first = run();
  assert.deepEqual(run(), first);
  assert.deepEqual(first, GOLDEN_TOKENS);
  // a different seed or step gives a different sequence
  assert.notDeepEqual(
    Array.from(
      { length: 12 },
      (_, pos) =>
        sampleToken(ROW, { ...config, seed: 1235 }, { step: 5, sequence: 2, position: pos }).token,
    ),
    first,
  );
});

// pinned once; Philox4x32-10 itself is pinned by the Random123 vectors in rng_test.ts
const GOLDEN_TOKENS = [1, 3, 4, 1, 2, 5, 1, 3, 4, 2, 0, 2];

Deno.test("sampler: the token is the inverse CDF of uniformAt(seed, [step, sequence, position, 0]) in index order", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 2 ** 53 - 1 }),
      fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      (seed, step, sequence, position) => {
        const params = { temperature: 0.8, topK: 8, topP: 0.9 };
        const q = referenceProbs(ROW, refParams(params));
        const u = uniformAt(seed, [step, sequence, position, 0]);
        let cum = 0;
        let expected = -1;
        for (let i = 0; i < q.length; i++) {
          cum += q[i]!;
          if (u < cum) {
            expected = i;
            break;
          }
        }
        const got = sampleToken(ROW, { seed, ...params }, { step, sequence, position }).token;
        // a boundary within rounding of u could go either way; there is none at these odds
        assert.equal(got, expected);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("sampler: a draw does not depend on batch composition or order", () => {
  const rows = Array.from({ length: 6 }, (_, b) => ROW.map((v, i) => v + Math.sin(b * 7 + i)));
  const sampler = new TokenSampler({ seed: 77, temperature: 1.1, topP: 0.9, minP: 0.02 });
  // sequence 3 alone, or after sequences 0..2, or inside a batch: the same draw
  const alone = new TokenSampler({ seed: 77, temperature: 1.1, topP: 0.9, minP: 0.02 }).sample(
    rows[3]!,
    {
      step: 9,
      sequence: 3,
      position: 4,
    },
    { rawLogprob: true, scaledLogprob: true },
  );
  for (let s = 0; s < 3; s++) sampler.sample(rows[s]!, { step: 9, sequence: s, position: 4 });
  assert.deepEqual(
    sampler.sample(rows[3]!, { step: 9, sequence: 3, position: 4 }, {
      rawLogprob: true,
      scaledLogprob: true,
    }),
    alone,
  );
  const batch = sampler.sampleBatch(rows, { step: 9, positions: 4 }, {
    rawLogprob: true,
    scaledLogprob: true,
  });
  assert.deepEqual(batch[3], alone);
  // any permutation of the batch (rows moved with their sequence ids) permutes the draws
  fc.assert(
    fc.property(fc.shuffledSubarray([0, 1, 2, 3, 4, 5], { minLength: 1 }), (perm) => {
      const out = sampler.sampleBatch(perm.map((b) => rows[b]!), {
        step: 9,
        positions: perm.map(() => 4),
        sequences: perm,
      }, { rawLogprob: true, scaledLogprob: true });
      perm.forEach((b, j) => assert.deepEqual(out[j], batch[b]));
    }),
  );
});

Deno.test("sampler: reported log-probs (sampling, raw, scaled) against the reference, to 1e-9", () => {
  const configs: SamplerConfig[] = [
    { seed: 1, temperature: 0.6 },
    { seed: 2, temperature: 1.4, topK: 4 },
    { seed: 3, topP: 0.7, minP: 0.1 },
    { seed: 4, temperature: 0.5, topK: 7, topP: 0.8, minP: 0.02, order: "vllm" },
    { seed: 5, temperature: 2, vocabSize: 9 },
  ];
  for (const config of configs) {
    const T = config.temperature ?? 1;
    const V = config.vocabSize ?? ROW.length;
    const q = referenceProbs(ROW, refParams(config));
    const raw = referenceLogSoftmax(ROW, 1, V);
    const scaled = referenceLogSoftmax(ROW, T, V);
    const lp = samplingLogprobs(ROW, config);
    for (let pos = 0; pos < 200; pos++) {
      const s = sampleToken(ROW, config, { step: 0, sequence: 0, position: pos }, {
        rawLogprob: true,
        scaledLogprob: true,
      });
      assert.ok(Math.abs(s.logprob - Math.log(q[s.token]!)) < 1e-9);
      assert.ok(Math.abs(s.rawLogprob! - raw[s.token]!) < 1e-9);
      assert.ok(Math.abs(s.scaledLogprob! - scaled[s.token]!) < 1e-9);
      // bit-identical to the trainer-side recomputation and to the full-row log-probs
      const t = tokenLogprobs(ROW, s.token, config);
      assert.deepEqual(t, {
        logprob: s.logprob,
        rawLogprob: s.rawLogprob!,
        scaledLogprob: s.scaledLogprob!,
      });
      assert.equal(lp[s.token], s.logprob);
    }
    // log q = scaled − log S, S the scaled mass that survives the filters (TRL #6789)
    let S = 0;
    for (let i = 0; i < V; i++) if (q[i]! > 0) S += Math.exp(scaled[i]!);
    for (let i = 0; i < V; i++) {
      if (q[i]! > 0) assert.ok(Math.abs(lp[i]! - (scaled[i]! - Math.log(S))) < 1e-12);
      else assert.equal(lp[i], -Infinity);
    }
  }
});

Deno.test("sampler: padding beyond vocabSize is never sampled, even with the largest logits", () => {
  const row = new Float32Array(16);
  for (let i = 0; i < 16; i++) row[i] = i < 11 ? Math.cos(i) : 1e6; // padding dominates
  row[13] = NaN; // padding is never read
  const sampler = new TokenSampler({ seed: 5, vocabSize: 11, temperature: 1.5 });
  for (let i = 0; i < 5000; i++) {
    const s = sampler.sample(row, { step: 0, sequence: i, position: 0 }, { rawLogprob: true });
    assert.ok(s.token < 11, `padding token ${s.token} sampled`);
    assert.ok(Number.isFinite(s.rawLogprob));
  }
  assert.equal(greedy(row, { vocabSize: 11 }).token, 0); // cos(0) = 1 is the max
  assert.equal(samplingLogprobs(row, { vocabSize: 11 })[12], -Infinity);
});

Deno.test("sampler: greedy and temperature 0 take the lowest index among ties, logprob 0", () => {
  const row = [0.5, 3, -1, 3, 2];
  assert.deepEqual(greedy(row), { token: 1, logprob: 0 });
  const s = sampleToken(row, { seed: 0, temperature: 0, topK: 2 }, {
    step: 0,
    sequence: 0,
    position: 0,
  }, {
    rawLogprob: true,
    scaledLogprob: true,
  });
  assert.equal(s.token, 1);
  assert.equal(s.logprob, 0);
  assert.ok(Math.abs(s.rawLogprob! - referenceLogSoftmax(row, 1)[1]!) < 1e-12);
  assert.equal(s.scaledLogprob, s.rawLogprob);
  // same token for every key
  for (let k = 0; k < 50; k++) {
    assert.equal(
      sampleToken(row, { seed: k, temperature: 0 }, { step: k, sequence: k, position: k }).token,
      1,
    );
  }
  // top-k ties keep every tied token: [3, 3] both possible with topK 1
  const lp = samplingLogprobs(row, { topK: 1 });
  assert.ok(Math.abs(lp[1]! - Math.log(0.5)) < 1e-15 && Math.abs(lp[3]! - Math.log(0.5)) < 1e-15);
});

Deno.test("sampler: numerically stable for huge, tiny and -Infinity logits and tiny temperatures", () => {
  const row = [1e300, 1e300 - 1e285, -Infinity, -1e300];
  const s = sampleToken(row, { seed: 1 }, { step: 0, sequence: 0, position: 0 }, {
    rawLogprob: true,
  });
  assert.ok(Number.isFinite(s.logprob) && Number.isFinite(s.rawLogprob));
  const t = sampleToken([1, 0.999999, 0], { seed: 1, temperature: 1e-300 }, {
    step: 0,
    sequence: 0,
    position: 0,
  }, {
    scaledLogprob: true,
  });
  assert.equal(t.token, 0);
  assert.equal(t.logprob, 0);
  // -Infinity tokens are impossible but allowed
  for (let i = 0; i < 200; i++) {
    assert.notEqual(
      sampleToken([0, -Infinity, 0], { seed: 3 }, { step: 0, sequence: i, position: 0 }).token,
      1,
    );
  }
  // Float32Array, Float64Array and number[] give the same draws
  const f32 = new Float32Array(ROW);
  const asNumbers = Array.from(f32);
  for (let i = 0; i < 50; i++) {
    const key = { step: 2, sequence: i, position: 0 };
    const cfg = { seed: 8, temperature: 0.7, topP: 0.9 };
    assert.deepEqual(sampleToken(f32, cfg, key), sampleToken(asNumbers, cfg, key));
    assert.deepEqual(
      sampleToken(new Float64Array(asNumbers), cfg, key),
      sampleToken(asNumbers, cfg, key),
    );
  }
});

Deno.test("sampler: errors name the row, the index, the field and the fix", () => {
  const sampler = new TokenSampler({ seed: 0 });
  const rows = [[0, 1], [1, 0], [0, 0, 0, 0, 0, NaN]];
  assert.throws(
    () => sampler.sampleBatch(rows, { step: 0, positions: [0, 0, 7] }),
    /TokenSampler\.sampleBatch: logits row 2 \(sequence 2, position 7\) index 5 is NaN; logits must be finite numbers or -Infinity/,
  );
  assert.throws(
    () => sampleToken([0, Infinity], { seed: 0 }, { step: 1, sequence: 4, position: 2 }),
    /sampleToken: logits \(step 1, sequence 4, position 2\) index 1 is Infinity/,
  );
  assert.throws(
    () =>
      sampleToken([-Infinity, -Infinity, 3], { seed: 0, vocabSize: 2 }, {
        step: 0,
        sequence: 0,
        position: 0,
      }),
    /has no finite logit among its first 2 entries/,
  );
  assert.throws(
    () => sampleToken([0, 1], { seed: 0, vocabSize: 3 }, { step: 0, sequence: 0, position: 0 }),
    /vocabSize is 3 but logits .* has only 2 entries/,
  );
  assert.throws(
    () => new TokenSampler({ seed: 0, topP: 0 }),
    /TokenSampler: topP must be a finite number in \(0, 1\], got 0/,
  );
  assert.throws(
    () => new TokenSampler({ seed: 0, minP: 2 }),
    /minP must be a finite number in \[0, 1\], got 2/,
  );
  assert.throws(
    () => new TokenSampler({ seed: 0, temperature: -1 }),
    /temperature must be a finite number >= 0, got -1/,
  );
  assert.throws(
    () => new TokenSampler({ seed: 0, topK: 2.5 }),
    /topK must be an integer >= -1, got 2.5/,
  );
  assert.throws(
    () => new TokenSampler({ seed: 0, order: "sglang" as never }),
    /order must be one of "hf", "vllm", got "sglang"/,
  );
  assert.throws(
    () => new TokenSampler({ seed: 0, top_p: 0.9 } as never),
    /unknown field "top_p" in params; valid fields are temperature, topK, topP, minP, vocabSize, order, seed/,
  );
  assert.throws(
    () => new TokenSampler({ seed: -3 }),
    /config\.seed must be an integer in \[0, 2\^53\)/,
  );
  assert.throws(
    () => sampler.sample([0, 1], { step: 0, sequence: -1, position: 0 }),
    /key\.sequence must be an integer in \[0, 2\^32\), got -1/,
  );
  assert.throws(
    () => sampler.sampleBatch(rows, { step: 0, positions: [0, 0] }),
    /key\.positions has 2 entries but there are 3 rows/,
  );
  assert.throws(
    () => tokenLogprobs([0, 1, 2], 3, { vocabSize: 3 }),
    /token must be an integer in \[0, 2\], got 3/,
  );
});

Deno.test("sampler: topK -1 and 0 are off; topK ≥ support is a no-op; topP 1 and minP 0 are off", () => {
  const base = samplingLogprobs(ROW);
  assert.deepEqual(samplingLogprobs(ROW, { topK: -1 }), base);
  assert.deepEqual(samplingLogprobs(ROW, { topK: 0 }), base);
  assert.deepEqual(samplingLogprobs(ROW, { topK: 12 }), base);
  assert.deepEqual(samplingLogprobs(ROW, { topP: 1, minP: 0 }), base);
});

Deno.test("scaledLogprob without filters: the sampling normaliser reused, the same bits as a separate pass", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          fc.double({ min: -30, max: 30, noNaN: true }),
          fc.constant(-Infinity),
        ),
        { minLength: 1, maxLength: 40 },
      ).filter((row) => row.some((v) => v !== -Infinity)),
      fc.constantFrom(1, 0.7, 1.3, 1e-300),
      fc.nat(1000),
      (row, temperature, step) => {
        const s = new TokenSampler({ seed: 3, temperature }).sample(
          Float32Array.from(row),
          { step, sequence: 0, position: 0 },
          { scaledLogprob: true },
        );
        // The slow path: a separate normaliser over the scaled row, as with top-k/top-p/min-p.
        const f32 = Float32Array.from(row);
        const x = Float64Array.from(f32);
        const shift = temperatureInPlace(x, x.length, temperature);
        const v = temperature === 1 ? f32[s.token]! : (f32[s.token]! - shift) / temperature;
        assert.ok(Object.is(s.scaledLogprob, logprobOf(v, normalizer(x, x.length))));
      },
    ),
  );
});

Deno.test("temperature 1 without filters: token and log-probs bit-identical to the float64 reference draw", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(fc.double({ min: -40, max: 40, noNaN: true }), fc.constant(-Infinity)),
        { minLength: 1, maxLength: 60 },
      ).filter((row) => row.some((v) => v !== -Infinity)),
      fc.nat(10_000),
      fc.nat(50),
      (values, step, sequence) => {
        const row = Float32Array.from(values);
        const s = new TokenSampler({ seed: 11 }).sample(
          row,
          { step, sequence, position: 3 },
          { rawLogprob: true, scaledLogprob: true },
        );
        // The reference: copy to float64, max, exp and sum in index order, inverse CDF.
        const x = Float64Array.from(row);
        let mx = -Infinity;
        for (const v of x) if (v > mx) mx = v;
        const w = x.map((v) => (v === -Infinity ? 0 : Math.exp(v - mx)));
        let Z = 0;
        let last = -1;
        w.forEach((e, i) => {
          Z += e;
          if (e > 0) last = i;
        });
        const target = uniformAt(11, [step, sequence, 3, TOKEN_DOMAIN]) * Z;
        let token = last;
        let cum = 0;
        for (let i = 0; i <= last; i++) {
          cum += w[i]!;
          if (target < cum) {
            token = i;
            break;
          }
        }
        const logprob = (x[token]! - mx) - Math.log(Z);
        assert.equal(s.token, token);
        assert.ok(Object.is(s.logprob, logprob));
        assert.ok(Object.is(s.rawLogprob, logprob) && Object.is(s.scaledLogprob, logprob));
      },
    ),
  );
});
