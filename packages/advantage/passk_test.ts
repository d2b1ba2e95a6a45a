import assert from "node:assert/strict";
import fc from "fast-check";
import { assertClose, randomBatch, rng } from "./_test_utils.ts";
import { grpo } from "./grpo.ts";
import { fromRows } from "./layout.ts";
import { grpoPassk, passAtK, passkAnalytic } from "./passk.ts";

const ones = (n: number) => fromRows(Array.from({ length: n }, () => [1]));

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

Deno.test("passAtK golden and the closed form incl. c = 0 and c = n", () => {
  assert.equal(passAtK(5, 2, 3), 0.9); // 1 − C(3,3)/C(5,3) = 1 − 1/10
  assert.equal(passAtK(4, 0, 2), 0);
  assert.equal(passAtK(4, 4, 2), 1);
  assert.equal(passAtK(4, 3, 2), 1); // n − c = 1 < k: every pair holds a correct one
  assert.ok(Math.abs(passAtK(10, 3, 1) - 0.3) < 1e-15); // pass@1 = c/n
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 60 }).chain((n) =>
        fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }), fc.integer({ min: 1, max: n }))
      ),
      ([n, c, k]) => {
        assert.ok(Math.abs(passAtK(n, c, k) - exactPassAtK(n, c, k)) < 1e-13, `${n} ${c} ${k}`);
      },
    ),
  );
  // stable for large n, where the binomials themselves overflow float64
  assert.ok(Math.abs(passAtK(2000, 7, 300) - exactPassAtK(2000, 7, 300)) < 1e-13);
  assert.ok(Math.abs(passAtK(2000, 1500, 1000) - 1) < 1e-15);
});

Deno.test("grpoPassk golden: only the best response gets its margin over the runner-up", () => {
  const out = grpoPassk({
    rewards: [0.2, 0.9, 0.5, 1, 1],
    responseMask: ones(5),
    index: [0, 0, 0, 1, 1],
  });
  // group 0 [0.2, 0.9, 0.5]: mean 1.6/3; deviations −1/3, 11/30, −1/30
  // squares 100/900 + 121/900 + 1/900 = 222/900; unbiased var 111/900; std sqrt(111)/30 = 0.351188...
  // best = #1, margin 0.9 − 0.5 = 0.4 → 0.4/(std + 1e-6); group 1 tied at the max: margin 0
  const a = 0.4 / (Math.sqrt(111) / 30 + 1e-6);
  assertClose(out.advantages, [0, a, 0, 0, 0], { rtol: 1e-13, atol: 1e-15 });
});

/** Brute force: average the group-normalised max-reward over every size-k subset. */
function bruteForcePassk(rewards: number[], k: number): number[] {
  const n = rewards.length;
  const subsets: number[][] = [];
  const walk = (start: number, chosen: number[]) => {
    if (chosen.length === k) return void subsets.push([...chosen]);
    for (let i = start; i < n; i++) walk(i + 1, [...chosen, i]);
  };
  walk(0, []);
  const R = subsets.map((s) => Math.max(...s.map((i) => rewards[i]!)));
  const mean = R.reduce((a, b) => a + b) / R.length;
  const sd = Math.sqrt(R.reduce((a, b) => a + (b - mean) ** 2, 0) / R.length);
  return rewards.map((_, i) => {
    if (sd === 0) return 0;
    const mine = subsets.map((s, j) => (s.includes(i) ? (R[j]! - mean) / sd : NaN)).filter((x) =>
      !isNaN(x)
    );
    return mine.reduce((a, b) => a + b) / mine.length;
  });
}

Deno.test("passkAnalytic golden: n = 5, c = 2, k = 3", () => {
  const out = passkAnalytic({
    rewards: [1, 0, 1, 0, 0],
    responseMask: ones(5),
    index: [0, 0, 0, 0, 0],
    k: 3,
  });
  // ρ = 1 − C(3,3)/C(5,3) = 0.9, σ = sqrt(0.9·0.1) = 0.3, A_pos = 0.1/0.3 = 1/3
  // q = C(2,2)/C(4,2) = 1/6, A_neg = (0.1 − 1/6)/0.3 = −2/9
  assertClose(out.advantages, [1 / 3, -2 / 9, 1 / 3, -2 / 9, -2 / 9], { atol: 1e-14 });
  // all-correct and all-wrong groups get 0
  const flat = passkAnalytic({
    rewards: [1, 1, 0, 0],
    responseMask: ones(4),
    index: [0, 0, 1, 1],
    k: 2,
  });
  assert.deepEqual([...flat.advantages], [0, 0, 0, 0]);
});

Deno.test("passkAnalytic property: equals brute-force subset enumeration; k = 1 is GRPO (population std, ε = 0)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(0, 1), { minLength: 1, maxLength: 8 }).chain((r) =>
        fc.tuple(fc.constant(r), fc.integer({ min: 1, max: r.length }))
      ),
      ([rewards, k]) => {
        const n = rewards.length;
        const out = passkAnalytic({
          rewards,
          responseMask: ones(n),
          index: rewards.map(() => "g"),
          k,
        });
        assertClose(out.advantages, bruteForcePassk(rewards, k), { atol: 1e-12 });
        if (k === 1 && n > 1) {
          // GRPO with population std: veRL's unbiased std is sqrt(n/(n−1)) times larger
          const g = grpo({
            rewards,
            responseMask: ones(n),
            index: rewards.map(() => 0),
            epsilon: 0,
          });
          assertClose(out.advantages, [...g.advantages].map((a) => a * Math.sqrt(n / (n - 1))), {
            atol: 1e-12,
          });
        }
      },
    ),
  );
});

Deno.test("passkAnalytic and grpoPassk: larger random batches vs independent references", () => {
  const b = randomBatch(9, 160, 6, { binary: true, minGroup: 4 });
  const k = 3;
  const groups = [...new Set(b.index)];
  const scalar = new Float64Array(160);
  for (const g of groups) {
    const members = b.index.map((x, i) => (x === g ? i : -1)).filter((i) => i >= 0);
    const bf = bruteForcePassk(members.map((i) => b.rewards[i]!), k);
    members.forEach((i, j) => (scalar[i] = bf[j]!));
  }
  const out = passkAnalytic({ rewards: b.rewards, responseMask: b.mask, index: b.index, k });
  assertClose(
    out.advantages,
    Array.from(b.mask.data, (m, t) => (m ? scalar[Math.floor(t / 6)]! : 0)),
    {
      atol: 1e-12,
    },
  );

  // grpoPassk vs a sort-based reference on continuous rewards
  const r = rng(10);
  const rewards = Array.from({ length: 160 }, () => Math.round(r() * 20) / 4);
  const ref = new Float64Array(160);
  for (const g of groups) {
    const members = b.index.map((x, i) => (x === g ? i : -1)).filter((i) => i >= 0);
    const sorted = [...members].sort((x, y) => rewards[y]! - rewards[x]! || x - y);
    const vals = members.map((i) => rewards[i]!);
    const mean = vals.reduce((x, y) => x + y) / vals.length;
    const sd = Math.sqrt(vals.reduce((x, y) => x + (y - mean) ** 2, 0) / (vals.length - 1));
    ref[sorted[0]!] = (rewards[sorted[0]!]! - rewards[sorted[1]!]!) / (sd + 1e-6);
  }
  const gp = grpoPassk({ rewards, responseMask: b.mask, index: b.index });
  assertClose(gp.advantages, Array.from(b.mask.data, (m, t) => (m ? ref[Math.floor(t / 6)]! : 0)), {
    rtol: 1e-11,
    atol: 1e-12,
  });
});

Deno.test("pass@k: invalid inputs name the argument and the value", () => {
  assert.throws(() => passAtK(5, 6, 2), /passAtK: c must be an integer in \[0, 5\], got 6/);
  assert.throws(() => passAtK(5, 2, 0), /passAtK: k must be an integer in \[1, 5\], got 0/);
  assert.throws(
    () => passkAnalytic({ rewards: [1, 0.5], responseMask: ones(2), index: [0, 0], k: 1 }),
    /passkAnalytic: rewards\[1\] is 0.5; pass@k advantages need binary rewards/,
  );
  assert.throws(
    () => passkAnalytic({ rewards: [1, 0, 1], responseMask: ones(3), index: [0, 0, 1], k: 2 }),
    /passkAnalytic: k = 2 exceeds the size 1 of group 1/,
  );
  assert.throws(
    () => grpoPassk({ rewards: [1, 0, 1], responseMask: ones(3), index: ["a", "a", "b"] }),
    /grpoPassk: group "b" has 1 response; pass@k advantages need at least 2 per group/,
  );
});
