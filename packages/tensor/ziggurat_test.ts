import assert from "node:assert/strict";
import fc from "fast-check";
import { Xoshiro128ss } from "@rlvr/common";
import { Rng, seedXoshiro } from "./random.ts";
import {
  NORMAL_METHODS,
  normalFill,
  normalSource,
  xoshiroJump,
  ZigguratNormal,
  zigguratTables,
} from "./ziggurat.ts";

const R = 3.6541528853610088;
const V = 0.004928673233974655;

/** Standard normal CDF (Marsaglia 2004, "Evaluating the Normal Distribution"; error < 1e-15). */
function phi(x: number): number {
  if (x < -8) return 0;
  if (x > 8) return 1;
  let s = x, t = 0, b = x, i = 1;
  const q = x * x;
  while (s !== t) s = (t = s) + (b *= q / (i += 2));
  return 0.5 + s * Math.exp(-0.5 * q - 0.91893853320467274178);
}

/**
 * A plain reference ziggurat: each draw's first word from `Rng(seed).nextUint32()`, the slow
 * path's words from `@rlvr/common`'s `Xoshiro128ss` at the jumped state, the same tables.
 */
function referenceStream(seed: number): () => number {
  const rng = new Rng(seed);
  const second = new Xoshiro128ss([...xoshiroJump(seedXoshiro(seed).state())]);
  const { x, f, k } = zigguratTables();
  const open01 = () => (second.next() + 0.5) / 2 ** 32;
  return () => {
    for (let u = rng.nextUint32();; u = second.next()) {
      const layer = u % 256;
      const sign = Math.floor(u / 256) % 2 === 1 ? -1 : 1;
      const m = Math.floor(u / 512);
      const v = (m + 0.5) * (x[layer]! / 2 ** 23);
      if (m < k[layer]!) return sign * v; // v < x[layer + 1]: under the curve or in the base strip
      if (layer === 0) {
        for (;;) {
          const a = -Math.log(open01()) / R, b = -Math.log(open01());
          if (b + b >= a * a) return sign * (R + a);
        }
      }
      if (f[layer]! + open01() * (f[layer + 1]! - f[layer]!) < Math.exp(-0.5 * v * v)) {
        return sign * v;
      }
    }
  };
}

Deno.test("xoshiroJump: Blackman & Vigna's jump, 2^64 words ahead (vector checked against the 2^64th power of the GF(2) step matrix)", () => {
  assert.deepEqual([...xoshiroJump([1, 2, 3, 4])].map((w) => w >>> 0), [
    2843103750,
    2038079848,
    1533207345,
    44816753,
  ]);
});

Deno.test("ZigguratNormal: the stream is pinned for two seeds", () => {
  const a = new ZigguratNormal(0);
  assert.deepEqual(Array.from({ length: 6 }, () => a.normal()), [
    1.6162688229119218,
    0.20657827156013292,
    -0.017228350907690586,
    1.170862212873907,
    -0.09412301567817569,
    -1.23682330122028,
  ]);
  const b = new ZigguratNormal(-12345);
  assert.deepEqual(Array.from({ length: 6 }, () => b.normal()), [
    -0.37047119432529335,
    -0.7881694447873752,
    0.9593323317642367,
    -0.21812379117698358,
    1.0103364248193147,
    2.1267800241714787,
  ]);
  // Draw 28 is seed 0's first to miss the fast path (a wedge), 7402 its first beyond R (the tail
  // algorithm); by a million, wedges and tails have been drawn thousands of times.
  const c = new ZigguratNormal(0).fillNormal(new Float64Array(1_000_000));
  assert.equal(c[28], 1.9294630699096036);
  assert.equal(c[7402], 3.839786627934615);
  assert.equal(c[123_456], 0.3419193791797157);
  assert.equal(c[999_999], 0.5613271145631278);
});

Deno.test("ZigguratNormal: the default Box–Muller stream is unchanged (Rng.normal, fillNormal, normalSource, normalFill)", () => {
  const r = new Rng(0);
  assert.deepEqual(Array.from({ length: 4 }, () => r.normal()), [
    -0.18286387008766009,
    2.0795943129488723,
    -0.07349540968979319,
    -0.1403756930471074,
  ]);
  fc.assert(
    fc.property(fc.integer(), fc.integer({ min: 1, max: 40 }), (seed, n) => {
      const ref = new Rng(seed);
      const want = Array.from({ length: n }, () => Math.fround(ref.normal() * 0.02));
      assert.deepEqual([...new Rng(seed).fillNormal(new Float32Array(n), 0.02)], want);
      assert.deepEqual([...normalSource(seed).fillNormal(new Float32Array(n), 0.02)], want);
      assert.deepEqual(
        [...normalFill(new Float32Array(n), { seed, std: 0.02, method: "box-muller" })],
        want,
      );
    }),
    { numRuns: 50 },
  );
});

Deno.test("ZigguratNormal: per seed deterministic; fillNormal is normal() * std in order; first words from Rng's seeded xoshiro128**, the rest from its jump", () => {
  fc.assert(
    fc.property(fc.integer(), fc.double({ min: 0, max: 10, noNaN: true }), (seed, std) => {
      const n = 10_000; // ~150 slow-path draws (wedges, tail), across chunks of the fill
      const ref = referenceStream(seed);
      const want = Array.from({ length: n }, () => ref());
      const z = new ZigguratNormal(seed);
      assert.deepEqual(Array.from({ length: n }, () => z.normal()), want);
      const filled = new ZigguratNormal(seed).fillNormal(new Float64Array(n), std);
      assert.deepEqual([...filled], want.map((v) => v * std));
      // Split fills continue the one stream; f32 holds the f64 values rounded.
      const g = new ZigguratNormal(seed);
      const f32 = [
        ...g.fillNormal(new Float32Array(5000), std),
        ...g.fillNormal(new Float32Array(n - 5000), std),
      ];
      assert.deepEqual(f32, want.map((v) => Math.fround(v * std)));
      assert.deepEqual(
        [...normalFill(new Float64Array(n), { seed, std, method: "ziggurat" })],
        want.map((v) => v * std),
      );
    }),
    { numRuns: 20 },
  );
});

Deno.test("ziggurat tables: 256 layers of equal area V, the base strip plus the tail is V, the recursion closes at 0", () => {
  const { x, f, k } = zigguratTables();
  const fn = (t: number) => Math.exp(-0.5 * t * t);
  assert.equal(x[1], R);
  assert.equal(x[256], 0);
  for (let i = 1; i < 256; i++) {
    assert.ok(x[i + 1]! < x[i]!, `layer ${i} is not narrower above`);
    const area = x[i]! * (fn(x[i + 1]!) - fn(x[i]!));
    // The top layer (i = 255) is where rounding of R and V accumulates: still within 1e-9.
    assert.ok(Math.abs(area / V - 1) < (i === 255 ? 1e-9 : 1e-12), `layer ${i}: area ${area}`);
    assert.equal(f[i], fn(x[i]!));
  }
  // Tail ∫_R^∞ exp(-t²/2) dt by Simpson's rule on [R, R + 12] (the rest is < e^-100).
  const steps = 20_000, h = 12 / steps;
  let tail = fn(R) + fn(R + 12);
  for (let j = 1; j < steps; j++) tail += (j % 2 === 1 ? 4 : 2) * fn(R + j * h);
  tail *= h / 3;
  assert.ok(Math.abs((R * fn(R) + tail) / V - 1) < 1e-12);
  assert.ok(Math.abs(x[0]! * fn(R) / V - 1) < 1e-15);
  for (let i = 0; i < 256; i++) {
    // Position m < k[i] iff its value (m + 0.5) x[i] / 2^23 is below x[i + 1].
    const ratio = x[i + 1]! / x[i]! * 2 ** 23;
    assert.ok(k[i]! - 0.5 < ratio && ratio <= k[i]! + 0.5, `k[${i}] = ${k[i]}`);
  }
});

/**
 * Distribution checks on N draws; every bound holds for every seed except with a probability
 * below ~1e-8 per check: moments within 6 standard errors of a normal sample's (mean 1/√N,
 * variance √(2/N), skewness √(6/N), excess kurtosis √(24/N)), tail counts within 6 binomial
 * standard deviations, and the Kolmogorov–Smirnov distance below 4/√N (the Dvoretzky–Kiefer–
 * Wolfowitz inequality with Massart's constant: P(D > λ/√N) ≤ 2e^{-2λ²} = 2.5e-14 for λ = 4).
 */
function checkNormal(xs: Float64Array): void {
  const n = xs.length;
  let s1 = 0;
  for (const v of xs) s1 += v;
  const mean = s1 / n;
  let m2 = 0, m3 = 0, m4 = 0;
  for (const v of xs) {
    const d = v - mean, d2 = d * d;
    m2 += d2;
    m3 += d2 * d;
    m4 += d2 * d2;
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  const skew = m3 / m2 ** 1.5, kurt = m4 / (m2 * m2) - 3;
  const se = (k: number) => 6 * Math.sqrt(k / n);
  assert.ok(Math.abs(mean) < se(1), `mean ${mean}`);
  assert.ok(Math.abs(m2 - 1) < se(2), `variance ${m2}`);
  assert.ok(Math.abs(skew) < se(6), `skewness ${skew}`);
  assert.ok(Math.abs(kurt) < se(24), `excess kurtosis ${kurt}`);
  // Two-sided tails: beyond 3.5 (mostly wedges and the base strip), beyond R (only the tail
  // algorithm) and beyond 4.
  for (const c of [3.5, R, 4]) {
    let count = 0;
    for (const v of xs) if (Math.abs(v) > c) count++;
    const p = 2 * phi(-c);
    const sd = Math.sqrt(n * p * (1 - p));
    assert.ok(Math.abs(count - n * p) < 6 * sd, `P(|x| > ${c}): ${count} of ${n}, want ${n * p}`);
  }
  // The tail's conditional mean E[|x| | |x| > R] = λ = φ(R) / (1 − Φ(R)), sd √(1 + Rλ − λ²).
  let tailSum = 0, tailN = 0;
  for (const v of xs) {
    if (Math.abs(v) > R) {
      tailSum += Math.abs(v);
      tailN++;
    }
  }
  const tailMean = Math.exp(-0.5 * R * R) / Math.sqrt(2 * Math.PI) / phi(-R);
  const tailSd = Math.sqrt(1 + R * tailMean - tailMean * tailMean);
  assert.ok(
    Math.abs(tailSum / tailN - tailMean) < 6 * tailSd / Math.sqrt(tailN),
    `tail mean ${tailSum / tailN}, want ${tailMean}`,
  );
  const sorted = xs.slice().sort();
  let d = 0;
  for (let i = 0; i < n; i++) {
    const c = phi(sorted[i]!);
    d = Math.max(d, c - i / n, (i + 1) / n - c);
  }
  assert.ok(d < 4 / Math.sqrt(n), `Kolmogorov–Smirnov distance ${d}`);
}

Deno.test("ZigguratNormal: 2^22 draws have the normal's moments, tails and CDF (bounds from the sample size; any seed)", () => {
  fc.assert(
    fc.property(fc.integer(), (seed) => {
      checkNormal(new ZigguratNormal(seed).fillNormal(new Float64Array(1 << 22)));
    }),
    { numRuns: 3 },
  );
});

Deno.test("ZigguratNormal: the tail beyond R = 3.654 is the normal's (2^25 draws, ~8700 in the tail; any seed)", () => {
  // Only the tail algorithm makes |x| > R: its draws, pooled over both signs, must follow the
  // normal truncated to (R, ∞). Conditional mean within 6 standard errors; Kolmogorov–Smirnov
  // distance to (Φ(x) − Φ(R)) / (1 − Φ(R)) below 4/√n (DKW–Massart, as above).
  const q = phi(-R);
  const lambda = Math.exp(-0.5 * R * R) / Math.sqrt(2 * Math.PI) / q;
  const sd = Math.sqrt(1 + R * lambda - lambda * lambda);
  fc.assert(
    fc.property(fc.integer(), (seed) => {
      const z = new ZigguratNormal(seed);
      const chunk = new Float64Array(1 << 20);
      const tail: number[] = [];
      let pos = 0, neg = 0;
      for (let c = 0; c < 32; c++) {
        for (const v of z.fillNormal(chunk)) {
          if (v > R) pos++, tail.push(v);
          else if (v < -R) neg++, tail.push(-v);
        }
      }
      const n = tail.length, total = 32 * chunk.length;
      const p = 2 * q, sdCount = Math.sqrt(total * p * (1 - p));
      assert.ok(Math.abs(n - total * p) < 6 * sdCount, `tail count ${n}, want ${total * p}`);
      assert.ok(Math.abs(pos - neg) < 6 * Math.sqrt(n), `signs: ${pos} positive, ${neg} negative`);
      const mean = tail.reduce((s, v) => s + v, 0) / n;
      assert.ok(
        Math.abs(mean - lambda) < 6 * sd / Math.sqrt(n),
        `tail mean ${mean}, want ${lambda}`,
      );
      tail.sort((a, b) => a - b);
      let d = 0;
      for (let i = 0; i < n; i++) {
        const c = (q - phi(-tail[i]!)) / q;
        d = Math.max(d, c - i / n, (i + 1) / n - c);
      }
      assert.ok(d < 4 / Math.sqrt(n), `tail Kolmogorov–Smirnov distance ${d}`);
    }),
    { numRuns: 2 },
  );
});

Deno.test("ZigguratNormal: the f32 fill with std 0.02 scales the same draws", () => {
  const seed = 11, std = 0.02;
  const xs = new ZigguratNormal(seed).fillNormal(new Float32Array(1 << 20), std);
  checkNormal(Float64Array.from(xs, (v) => v / std));
});

Deno.test("normalSource / normalFill / ZigguratNormal: invalid input is named", () => {
  assert.deepEqual(NORMAL_METHODS, ["box-muller", "ziggurat"]);
  assert.throws(
    () => normalSource(1, "polar" as never),
    /normalSource: method must be one of box-muller, ziggurat, got "polar"/,
  );
  assert.throws(() => new ZigguratNormal(NaN), /ZigguratNormal: seed must be a finite number/);
  assert.throws(
    () => normalFill(new Float32Array(1), { std: Infinity }),
    /normalFill: std must be a finite number, got Infinity/,
  );
});
