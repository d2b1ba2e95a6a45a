import assert from "node:assert/strict";
import fc from "fast-check";
import {
  avgAtK,
  bootstrapCI,
  chiSquareCdf,
  chiSquareSurvival,
  chiSquareTest,
  lnGamma,
  majAtK,
  majorityVote,
  passAtK,
  regularizedGammaP,
  regularizedGammaQ,
} from "./metrics.ts";
import { CounterRng } from "./rng.ts";

function binom(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 0; i < k; i++) r = (r * BigInt(n - i)) / BigInt(i + 1);
  return r;
}

/** Exact 1 − C(n−c,k)/C(n,k) with BigInt, rounded to float64 at the end. */
function exactPassAtK(n: number, c: number, k: number): number {
  const scale = 10n ** 40n;
  return 1 - Number((binom(n - c, k) * scale) / binom(n, k)) / 1e40;
}

Deno.test("passAtK: golden values and the BigInt closed form incl. c = 0 and c = n", () => {
  assert.equal(passAtK(5, 2, 3), 0.9);
  assert.equal(passAtK(4, 0, 2), 0);
  assert.equal(passAtK(4, 4, 2), 1);
  assert.equal(passAtK(4, 3, 2), 1); // n − c = 1 < k
  assert.ok(Math.abs(passAtK(10, 3, 1) - 0.3) < 1e-15);
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 80 }).chain((n) =>
        fc.tuple(
          fc.constant(n),
          fc.oneof(fc.constant(0), fc.constant(n), fc.integer({ min: 0, max: n })),
          fc.integer({ min: 1, max: n }),
        )
      ),
      ([n, c, k]) => {
        const got = passAtK(n, c, k);
        assert.ok(Math.abs(got - exactPassAtK(n, c, k)) < 1e-13, `n=${n} c=${c} k=${k}: ${got}`);
        if (c === 0) assert.equal(got, 0);
        if (c === n || n - c < k) assert.equal(got, 1);
      },
    ),
    { numRuns: 1000 },
  );
  // stable where the binomials themselves overflow float64
  assert.ok(Math.abs(passAtK(2000, 7, 300) - exactPassAtK(2000, 7, 300)) < 1e-13);
  assert.ok(Math.abs(passAtK(2000, 1500, 1000) - 1) < 1e-15);
});

Deno.test("passAtK errors name the argument and the accepted range", () => {
  assert.throws(() => passAtK(0, 0, 1), /passAtK: n must be an integer >= 1, got 0/);
  assert.throws(() => passAtK(5, 6, 1), /passAtK: c must be an integer in \[0, 5\], got 6/);
  assert.throws(() => passAtK(5, 2, 6), /passAtK: k must be an integer in \[1, 5\], got 6/);
  assert.throws(() => passAtK(5, 2.5, 1), /c must be an integer/);
});

Deno.test("avgAtK: the mean of all n scores, k checked", () => {
  assert.equal(avgAtK([1, 0, 0, 1, 1, 1, 0, 0]), 0.5);
  assert.equal(avgAtK(new Float64Array([0.5, 1]), 1), 0.75);
  // avg@1 from 0/1 scores equals pass@1
  assert.equal(avgAtK([1, 0, 1, 1, 0]), passAtK(5, 3, 1));
  assert.throws(() => avgAtK([1, 0], 3), /avgAtK: k must be an integer in \[1, 2\], got 3/);
  assert.throws(() => avgAtK([]), /scores has 0 entries; it needs at least 1/);
  assert.throws(() => avgAtK([1, NaN]), /scores\[1\] is NaN/);
});

Deno.test("majorityVote / majAtK: earliest first occurrence wins ties; null abstains", () => {
  assert.deepEqual(majorityVote(["a", "b", "b", "a"]), { answer: "a", votes: 2, index: 0 });
  assert.deepEqual(majorityVote(["b", "a", "a", "b"]), { answer: "b", votes: 2, index: 0 });
  assert.deepEqual(majorityVote([null, "x", 3, 3, "x", "x"]), { answer: "x", votes: 3, index: 1 });
  assert.deepEqual(majorityVote(["1", 1, 1]), { answer: 1, votes: 2, index: 1 }); // 1 ≠ "1"
  assert.deepEqual(majorityVote([null, undefined]), { answer: null, votes: 0, index: -1 });
  assert.deepEqual(majorityVote(["a", "b", "b"], 1), { answer: "a", votes: 1, index: 0 });
  assert.equal(majAtK([null, null], [false, false]), 0);
  assert.equal(majAtK(["5", "7", "7"], [true, false, false]), 0);
  assert.equal(majAtK(["5", "7", "7"], [true, false, false], 1), 1);
  assert.equal(majAtK(["5", "7", "7", "5"], [true, false, false, true]), 1); // tie → "5" first
  assert.throws(() => majAtK(["a"], [true, false]), /correct must be an array of 1 booleans/);
  assert.throws(() => majorityVote([NaN]), /answers\[0\] is NaN/);
  // Python's Counter(answers).most_common(1) rule, as a property
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom("a", "b", "c", null), { minLength: 1, maxLength: 20 }),
      (answers) => {
        const counts = new Map<string, number>();
        for (const a of answers) if (a !== null) counts.set(a, (counts.get(a) ?? 0) + 1);
        const ranked = [...counts].sort((x, y) => y[1] - x[1]); // stable: insertion order on ties
        const v = majorityVote(answers);
        assert.equal(v.answer, ranked[0]?.[0] ?? null);
        assert.equal(v.votes, ranked[0]?.[1] ?? 0);
        assert.equal(
          v.index,
          v.answer === null ? -1 : (answers as (string | null)[]).indexOf(v.answer as string),
        );
      },
    ),
  );
});

/** erf by its Taylor series (accurate to ~1e-14 for |x| ≤ 3). */
function erf(x: number): number {
  let term = x;
  let sum = x;
  for (let n = 1; n < 200; n++) {
    term *= (-x * x) / n;
    sum += term / (2 * n + 1);
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}

Deno.test("regularized gamma and the chi-square CDF against closed forms and table values", () => {
  // lnGamma at integers and half-integers
  for (let n = 1; n <= 30; n++) {
    let f = 0;
    for (let i = 2; i < n; i++) f += Math.log(i);
    assert.ok(Math.abs(lnGamma(n) - f) < 1e-12 * Math.max(1, f), `lnGamma(${n})`);
  }
  assert.ok(Math.abs(lnGamma(1.5) - Math.log(Math.sqrt(Math.PI) / 2)) < 1e-14);
  // closed forms: df 2, 4 (exponential), 1, 3 (erf)
  for (const x of [0.01, 0.5, 1, 2.5, 5, 10, 20, 30]) {
    const e = Math.exp(-x / 2);
    assert.ok(Math.abs(chiSquareCdf(x, 2) - (1 - e)) < 1e-14, `df 2, x ${x}`);
    assert.ok(Math.abs(chiSquareCdf(x, 4) - (1 - e * (1 + x / 2))) < 1e-14, `df 4, x ${x}`);
    if (x <= 16) {
      const r = erf(Math.sqrt(x / 2));
      assert.ok(Math.abs(chiSquareCdf(x, 1) - r) < 1e-13, `df 1, x ${x}`);
      const df3 = r - Math.sqrt((2 * x) / Math.PI) * e;
      assert.ok(Math.abs(chiSquareCdf(x, 3) - df3) < 1e-13, `df 3, x ${x}`);
    }
  }
  // critical values (SciPy chi2.ppf), to 1e-9 in probability
  const table: [number, number, number][] = [
    [1, 0.95, 3.841458820694124],
    [1, 0.99, 6.634896601021214],
    [1, 0.999, 10.827566170662733],
    [2, 0.95, 5.991464547107979],
    [3, 0.95, 7.814727903251178],
    [5, 0.95, 11.070497693516351],
    [5, 0.99, 15.08627246938899],
    [10, 0.95, 18.307038053275146],
    [10, 0.99, 23.209251158954356],
    [20, 0.95, 31.410432844230918],
    [30, 0.95, 43.77297182574219],
    [100, 0.95, 124.34211340400407],
  ];
  for (const [df, p, x] of table) {
    assert.ok(
      Math.abs(chiSquareCdf(x, df) - p) < 1e-9,
      `df ${df}: cdf(${x}) = ${chiSquareCdf(x, df)}`,
    );
    assert.ok(Math.abs(chiSquareSurvival(x, df) - (1 - p)) < 1e-9);
  }
  // the printed 3-decimal tables (e.g. Abramowitz & Stegun 26.8), to their rounding
  const printed: [number, number, number][] = [
    [4, 0.99, 13.277],
    [6, 0.95, 12.592],
    [15, 0.999, 37.697],
    [50, 0.95, 67.505],
    [100, 0.999, 149.449],
  ];
  for (const [df, p, x] of printed) {
    assert.ok(
      Math.abs(chiSquareCdf(x, df) - p) < 5e-5,
      `df ${df}: cdf(${x}) = ${chiSquareCdf(x, df)}`,
    );
  }
  // P + Q = 1 and monotone in x
  fc.assert(
    fc.property(
      fc.double({ min: 0.05, max: 200, noNaN: true }),
      fc.double({ min: 0, max: 400, noNaN: true }),
      (a, x) => {
        const P = regularizedGammaP(a, x);
        const Q = regularizedGammaQ(a, x);
        assert.ok(
          P >= -1e-15 && P <= 1 + 1e-15 && Math.abs(P + Q - 1) < 1e-12,
          `a ${a} x ${x}: ${P} ${Q}`,
        );
        assert.ok(regularizedGammaP(a, x * 1.01 + 1e-9) >= P - 1e-14);
      },
    ),
  );
  assert.equal(regularizedGammaP(3, 0), 0);
  assert.equal(regularizedGammaQ(3, Infinity), 0);
  assert.throws(() => regularizedGammaP(0, 1), /a must be a finite number > 0, got 0/);
});

Deno.test("chiSquareTest: Pearson statistic, df, impossible bins", () => {
  const r = chiSquareTest([10, 20, 30, 40], [0.1, 0.2, 0.3, 0.4]);
  assert.equal(r.statistic, 0);
  assert.equal(r.pValue, 1);
  assert.equal(r.df, 3);
  const z = chiSquareTest([5, 5, 0], [1, 1, 0]); // a zero-probability bin never seen: left out
  assert.equal(z.df, 1);
  assert.equal(chiSquareTest([5, 5, 1], [1, 1, 0]).pValue, 0); // seen: impossible
  assert.equal(chiSquareTest([30, 10, 10], [1, 1, 1], { ddof: 1 }).df, 1);
  assert.throws(() => chiSquareTest([1, 2], [1, 2, 3]), /expected has 3 bins but observed has 2/);
});

Deno.test("bootstrapCI: seeded, percentile method, degenerate data, custom statistic", () => {
  const values = [0.1, 0.9, 0.5, 0.3, 0.8, 0.2, 0.4];
  const a = bootstrapCI(values, { resamples: 500, seed: 3 });
  assert.deepEqual(bootstrapCI(values, { resamples: 500, seed: 3 }), a);
  assert.notDeepEqual(bootstrapCI(values, { resamples: 500, seed: 4 }), a);
  assert.ok(Math.abs(a.estimate - 3.2 / 7) < 1e-15);
  assert.ok(a.lower < a.estimate && a.estimate < a.upper);
  assert.equal(a.level, 0.95);
  // a wider level gives a wider interval from the same resamples
  const b = bootstrapCI(values, { resamples: 500, seed: 3, level: 0.99 });
  assert.ok(b.lower <= a.lower && b.upper >= a.upper);
  // constant data: a zero-width interval
  const c = bootstrapCI([0.25, 0.25, 0.25], { resamples: 50 });
  assert.deepEqual([c.lower, c.estimate, c.upper, c.standardError], [0.25, 0.25, 0.25, 0]);
  // the standard error of the mean is close to s/sqrt(n)
  const rng = new CounterRng(11);
  const big = Array.from({ length: 400 }, () => rng.next());
  const se = bootstrapCI(big, { resamples: 4000, seed: 1 }).standardError;
  const mean = big.reduce((s, x) => s + x, 0) / big.length;
  const sd = Math.sqrt(big.reduce((s, x) => s + (x - mean) ** 2, 0) / big.length);
  assert.ok(Math.abs(se / (sd / Math.sqrt(big.length)) - 1) < 0.05, `se ${se}`);
  // a custom statistic: the median
  const med = bootstrapCI([1, 2, 3, 4, 100], {
    resamples: 200,
    statistic: (v) => v.sort()[v.length >> 1]!,
  });
  assert.equal(med.estimate, 3);
  assert.throws(
    () => bootstrapCI([1, 2], { level: 1 }),
    /level must be a finite number in \(0, 1\), got 1/,
  );
  assert.throws(() => bootstrapCI([1, 2], { resamples: 1 }), /resamples must be an integer >= 2/);
  assert.throws(
    () => bootstrapCI([1, 2], { statistic: () => NaN }),
    /statistic returned NaN on the data/,
  );
});

Deno.test("bootstrapCI covers the true mean at about the nominal rate (seeded simulation)", () => {
  // 400 simulated evaluations of 100 problems each; per-problem scores are pass@4 estimates from
  // n = 8 Bernoulli(θ_i) samples with θ_i ~ U(0, 1)² (skewed toward hard problems). The true
  // mean of the per-problem score is E[1 − (1 − θ)^4] with θ = U²: 1 − ∫₀¹ (1 − u²)^4 du
  // = 1 − 128/315.
  const truth = 1 - 128 / 315;
  const rng = new CounterRng(20240601);
  const trials = 400;
  const problems = 100;
  let covered95 = 0;
  let covered80 = 0;
  for (let t = 0; t < trials; t++) {
    const scores = new Float64Array(problems);
    for (let i = 0; i < problems; i++) {
      const theta = rng.next() ** 2;
      let c = 0;
      for (let j = 0; j < 8; j++) if (rng.next() < theta) c++;
      scores[i] = passAtK(8, c, 4);
    }
    const ci95 = bootstrapCI(scores, { resamples: 1000, level: 0.95, seed: t });
    const ci80 = bootstrapCI(scores, { resamples: 1000, level: 0.8, seed: t });
    if (ci95.lower <= truth && truth <= ci95.upper) covered95++;
    if (ci80.lower <= truth && truth <= ci80.upper) covered80++;
  }
  const r95 = covered95 / trials;
  const r80 = covered80 / trials;
  console.log(
    `bootstrap coverage over ${trials} seeded trials of ${problems} problems: 95% CI → ${
      (100 * r95).toFixed(1)
    }%, 80% CI → ${(100 * r80).toFixed(1)}%`,
  );
  // binomial sd of a coverage rate over 400 trials: ≈ 1.1 points at 95%, 2 points at 80%
  assert.ok(r95 >= 0.91 && r95 <= 0.985, `95% coverage ${r95}`);
  assert.ok(r80 >= 0.73 && r80 <= 0.87, `80% coverage ${r80}`);
});
