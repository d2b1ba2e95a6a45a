import assert from "node:assert/strict";
import fc from "fast-check";
import { arbBatch, assertClose, rng } from "./_test_utils.ts";
import type { GigpoInput, GigpoMode, GigpoTurn } from "./gigpo.ts";
import { gigpo } from "./gigpo.ts";
import { drGrpo, grpo } from "./grpo.ts";
import { fromRows } from "./layout.ts";
import { getEstimator } from "./registry.ts";
import type { TokenMatrix } from "./types.ts";

/** A mask with 1 on every turn span and 0 elsewhere (observations between turns, padding). */
function maskOf(turns: readonly (readonly GigpoTurn[])[], length: number): TokenMatrix {
  const data = new Float64Array(turns.length * length);
  turns.forEach((list, i) => {
    for (const { start, end } of list) data.fill(1, i * length + start, i * length + end);
  });
  return { data, batch: turns.length, length };
}

/** Expected token advantages from one scalar per turn: the turn's value on its span, 0 elsewhere. */
function spread(
  turns: readonly (readonly GigpoTurn[])[],
  perTurn: readonly (readonly number[])[],
  mask: TokenMatrix,
): Float64Array {
  const out = new Float64Array(mask.batch * mask.length);
  turns.forEach((list, i) =>
    list.forEach(({ start, end }, t) => {
      for (let c = start; c < end; c++) {
        if (mask.data[i * mask.length + c] === 1) out[i * mask.length + c] = perTurn[i]![t]!;
      }
    })
  );
  return out;
}

const turn = (state: string, start: number, end: number, reward?: number): GigpoTurn =>
  reward === undefined ? { state, start, end } : { state, start, end, reward };

// ---------------------------------------------------------------------------------------------
// The fixed example: two prompt groups, interleaved in the batch, ragged turn counts and spans.
//
//   response  group  R    turns (state: span, reward)                       turn rewards used
//   e0        a      1    s0:[0,2)  s1:[3,5)  s2:[6,8)                       0, 0, 1 (sparse)
//   e3        b      0    s0:[0,1)  s1:[2,4)                                 0, 0
//   e1        a      0    s0:[0,2)  s3:[3,5)                                 0, 0
//   e4        b      1    s0:[0,3)                                           1
//   e2        a      1    s0:[0,2)  s1:[3,4) r=0.5  s4:[5,7)                 0, 0.5, 1 − 0.5
//   e5        b      0.5  s5:[0,2)  s5:[3,5)  (the episode revisits s5)      0, 0.5
// ---------------------------------------------------------------------------------------------
const LENGTH = 8;
const FIXED_TURNS: GigpoTurn[][] = [
  [turn("s0", 0, 2), turn("s1", 3, 5), turn("s2", 6, 8)],
  [turn("s0", 0, 1), turn("s1", 2, 4)],
  [turn("s0", 0, 2), turn("s3", 3, 5)],
  [turn("s0", 0, 3)],
  [turn("s0", 0, 2), turn("s1", 3, 4, 0.5), turn("s4", 5, 7)],
  [turn("s5", 0, 2), turn("s5", 3, 5)],
];
const FIXED_MASK = maskOf(FIXED_TURNS, LENGTH);
const FIXED: GigpoInput = {
  rewards: [1, 0, 0, 1, 1, 0.5],
  responseMask: FIXED_MASK,
  index: ["a", "b", "a", "b", "a", "b"],
  turns: FIXED_TURNS,
};

Deno.test("gigpo golden (hand-computed): the fixed example, defaults γ = 0.95, ω = 1, mean_norm", () => {
  // Episode level, verl-agent weighting (every turn row counts):
  //   group a rows: e0 ×3 (R 1), e1 ×2 (R 0), e2 ×3 (R 1): mean 6/8 = 0.75
  //     → A_E(e0) = 0.25, A_E(e1) = −0.75, A_E(e2) = 0.25
  //   group b rows: e3 ×2 (0), e4 ×1 (1), e5 ×2 (0.5): mean 2/5 = 0.4
  //     → A_E(e3) = −0.4, A_E(e4) = 0.6, A_E(e5) = 0.1
  // Turn returns G_t = r_t + 0.95·G_{t+1}:
  //   e0 [0.9025, 0.95, 1]; e1 [0, 0]; e2 [0.92625, 0.975, 0.5]; e3 [0, 0]; e4 [1]; e5 [0.475, 0.5]
  // Step groups (group, state):
  //   (a, s0) = {0.9025, 0, 0.92625}, mean 0.6095833…: e0 +0.2929167, e1 −0.6095833, e2 +0.3166667
  //   (a, s1) = {0.95, 0.975}, mean 0.9625: e0 −0.0125, e2 +0.0125
  //   (b, s0) = {0 (e3), 1 (e4)}, mean 0.5: ∓0.5 ((b, s0) is not (a, s0): grouping is per prompt)
  //   (b, s5) = {0.475, 0.5} from one episode's two visits, mean 0.4875: ∓0.0125
  //   (a, s2), (a, s3), (a, s4), (b, s1): singletons → 0
  const s0a = (0.9025 + 0 + 0.92625) / 3;
  const perTurn = [
    [0.25 + (0.9025 - s0a), 0.25 - 0.0125, 0.25],
    [-0.4 - 0.5, -0.4],
    [-0.75 - s0a, -0.75],
    [0.6 + 0.5],
    [0.25 + (0.92625 - s0a), 0.25 + 0.0125, 0.25],
    [0.1 - 0.0125, 0.1 + 0.0125],
  ];
  const out = gigpo(FIXED);
  assertClose(out.advantages, spread(FIXED_TURNS, perTurn, FIXED_MASK), {
    rtol: 1e-13,
    atol: 1e-15,
  });
  assert.deepEqual(out.returns, out.advantages);
  // observation columns and padding are 0: e0 column 2, e1 (e3 here) padding 4..7
  assert.equal(out.advantages[2], 0);
  assert.deepEqual([...out.advantages.slice(LENGTH + 4, 2 * LENGTH)], [0, 0, 0, 0]);
});

Deno.test("gigpo reference: verl-agent formulas on the fixed example, both modes and weightings", () => {
  // Expected values: an independent NumPy re-implementation of verl-agent gigpo/core_gigpo.py
  // (compute_step_discounted_returns → G; episode_norm_reward with
  // compute_mean_std_cross_steps = True ("turn") or False ("episode"); build_step_group on
  // (uid, anchor_obs); step_norm_reward; scores = episode + step_advantage_w · step), run in
  // the reference's row-per-step layout in float64, γ = 0.95, ω = 1, ε = 1e-6, torch.std
  // unbiased. In float32, as verl-agent computes, the same script differs by < 2e-6.
  // Values per turn row in episode order e0 e1 e2 e3 e4 e5 (the batch interleaves them).
  const byEpisode: Record<string, number[]> = {
    "mean_norm/turn": [
      0.5429166666666667,
      0.23750000000000004,
      0.25,
      -1.3595833333333331,
      -0.75,
      0.5666666666666667,
      0.26250000000000007,
      0.25,
      -0.9,
      -0.4,
      1.1,
      0.08749999999999997,
      0.11249999999999999,
    ],
    "mean_norm/episode": [
      0.6262500000000001,
      0.3208333333333334,
      0.33333333333333337,
      -1.2762499999999999,
      -0.6666666666666666,
      0.65,
      0.34583333333333344,
      0.33333333333333337,
      -1.0,
      -0.5,
      1.0,
      -0.012500000000000011,
      0.012500000000000011,
    ],
    "mean_std_norm/turn": [
      1.0947752886777045,
      -0.16700622524598263,
      0.5400605582031753,
      -2.7745880055970593,
      -1.6201816746095261,
      1.1397521587161799,
      1.2471273416523396,
      0.5400605582031753,
      -1.6632863829466549,
      -0.9561806017586932,
      2.1413766838260013,
      -0.46802163300948796,
      0.9461119338888344,
    ],
    "mean_std_norm/episode": [
      1.132063999665887,
      -0.1297175142578002,
      0.5773492691913578,
      -2.3091048693702487,
      -1.1546985383827153,
      1.1770408697043622,
      1.284416052640522,
      0.5773492691913578,
      -1.7071037811919616,
      -0.999998000004,
      1.7071037811919616,
      -0.7070667834491612,
      0.7070667834491612,
    ],
  };
  const turnCounts = [3, 2, 3, 2, 1, 2]; // e0..e5
  const batchOrder = [0, 3, 1, 4, 2, 5]; // batch row k holds episode batchOrder[k]
  for (const [key, flat] of Object.entries(byEpisode)) {
    const [mode, weighting] = key.split("/") as [GigpoMode, "turn" | "episode"];
    const perEpisode: number[][] = [];
    let k = 0;
    for (const n of turnCounts) perEpisode.push(flat.slice(k, k += n));
    const perTurn = batchOrder.map((e) => perEpisode[e]!);
    const out = gigpo({ ...FIXED, mode, episodeWeighting: weighting });
    assertClose(out.advantages, spread(FIXED_TURNS, perTurn, FIXED_MASK), {
      rtol: 1e-12,
      atol: 1e-14,
      msg: key,
    });
  }
});

Deno.test("gigpo golden (hand-computed): mean_std_norm with a singleton episode group", () => {
  // group q: two episodes sharing s0, then diverging; group z: a single one-turn episode.
  const turns = [
    [turn("s0", 0, 1), turn("x", 2, 3)],
    [turn("s0", 0, 1), turn("y", 2, 3)],
    [turn("s0", 0, 2)],
  ];
  const mask = maskOf(turns, 3);
  const out = gigpo({
    rewards: [2, 0, 3],
    responseMask: mask,
    index: ["q", "q", "z"],
    turns,
    gamma: 1,
    mode: "mean_std_norm",
    epsilon: 0,
  });
  // q rows R = [2, 2, 0, 0]: mean 1, unbiased std sqrt(4/3) → A_E = ±sqrt(3)/2
  // step (q, s0): G = {2, 0}: mean 1, std sqrt(2) → ±1/sqrt(2); x, y singletons → 0
  // z: a single row → μ = 0, σ = 1 (veRL's singleton rule): A_E = 3; (z, s0) singleton → 0
  const e = Math.sqrt(3) / 2;
  const s = Math.SQRT1_2;
  assertClose(out.advantages, [e + s, 0, e, -e - s, 0, -e, 3, 3, 0], { rtol: 1e-14 });
});

Deno.test("gigpo: a singleton anchor group's step advantage is exactly 0, shared states are not", () => {
  const turns = [
    [turn("start", 0, 1), turn("only-here", 1, 2)],
    [turn("start", 0, 1), turn("elsewhere", 1, 2)],
  ];
  const mask = maskOf(turns, 2);
  const common = { rewards: [1, 0], responseMask: mask, index: [7, 7], turns };
  const withStep = gigpo({ ...common, gamma: 0.9 });
  const episodeOnly = gigpo({ ...common, gamma: 0.9, omega: 0 });
  // second turns (singleton groups): identical with and without the step term
  assert.equal(withStep.advantages[1], episodeOnly.advantages[1]);
  assert.equal(withStep.advantages[3], episodeOnly.advantages[3]);
  // first turns share "start": G = 0.9 vs 0 → ±0.45 on top of A_E = ±0.5
  assertClose([withStep.advantages[0]!, withStep.advantages[2]!], [0.95, -0.95]);
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

interface Episodes {
  input: GigpoInput;
  /** Turns per response. */
  counts: number[];
}

/** Random multi-turn episodes: ragged turns and spans, observation gaps, holes, padding. */
function arbEpisodes(): fc.Arbitrary<Episodes> {
  const arbTurn = fc.record({
    state: fc.constantFrom("a", "b", "c"),
    len: fc.integer({ min: 0, max: 3 }),
    gap: fc.integer({ min: 0, max: 2 }),
    hole: fc.boolean(),
    reward: fc.option(fc.constantFrom(-1, 0, 0.25, 1), { nil: undefined }),
  });
  return fc.record({
    rows: fc.array(
      fc.record({
        group: fc.constantFrom("p", "q", 3),
        reward: fc.constantFrom(0, 0.5, 1, 2),
        turns: fc.array(arbTurn, { minLength: 1, maxLength: 4 }),
      }),
      { minLength: 1, maxLength: 9 },
    ),
    pad: fc.integer({ min: 0, max: 2 }),
  }).map(({ rows, pad }) => {
    const turns: GigpoTurn[][] = rows.map((row) => {
      let c = 0;
      return row.turns.map((t) => {
        const start = c + t.gap;
        c = start + t.len;
        return turn(t.state, start, c, t.reward);
      });
    });
    const length = Math.max(...turns.map((l) => l[l.length - 1]!.end)) + pad;
    const mask = maskOf(turns, length);
    const data = mask.data as Float64Array;
    rows.forEach((row, i) =>
      row.turns.forEach((t, k) => {
        const { start, end } = turns[i]![k]!;
        if (t.hole && end - start >= 2) data[i * length + start] = 0; // a masked token inside a turn
      })
    );
    return {
      input: {
        rewards: rows.map((r) => r.reward),
        responseMask: mask,
        index: rows.map((r) => r.group),
        turns,
      },
      counts: turns.map((l) => l.length),
    };
  });
}

const arbOptions = fc.record({
  gamma: fc.constantFrom(0, 0.5, 0.95, 1),
  omega: fc.constantFrom(0, 0.5, 1, 2),
  mode: fc.constantFrom<GigpoMode>("mean_norm", "mean_std_norm"),
  episodeWeighting: fc.constantFrom<"turn" | "episode">("turn", "episode"),
});

Deno.test("gigpo property: single-turn episodes with distinct states are GRPO / Dr. GRPO", () => {
  fc.assert(
    fc.property(
      arbBatch(),
      fc.constantFrom(0, 1e-6, 1e-4),
      fc.constantFrom(0.5, 1),
      ({ mask, rewards, index }, epsilon, gamma) => {
        const turns = rewards.map((_, i) => [turn(`state-${i}`, 0, mask.length)]);
        const base = { rewards, responseMask: mask, index };
        // Equal as numbers: a reward of −0 may leave −0 in one and +0 in the other (`x + 0`
        // maps −0 to +0 and leaves every other value as it is).
        const unsigned = (a: Float64Array) => Array.from(a, (x) => x + 0);
        const std = gigpo({ ...base, turns, epsilon, gamma, mode: "mean_std_norm" });
        assert.deepEqual(unsigned(std.advantages), unsigned(grpo({ ...base, epsilon }).advantages));
        const mean = gigpo({ ...base, turns, gamma });
        assert.deepEqual(unsigned(mean.advantages), unsigned(drGrpo(base).advantages));
      },
    ),
  );
});

Deno.test("gigpo property: 0 wherever the mask is 0, finite elsewhere, returns = advantages", () => {
  fc.assert(
    fc.property(arbEpisodes(), arbOptions, ({ input }, options) => {
      const out = gigpo({ ...input, ...options });
      const m = input.responseMask.data;
      for (let k = 0; k < m.length; k++) {
        if (m[k] === 0) assert.equal(out.advantages[k], 0, `position ${k}`);
        else assert.ok(Number.isFinite(out.advantages[k]), `position ${k}`);
      }
      assert.deepEqual(out.returns, out.advantages);
    }),
  );
});

Deno.test("gigpo property: ω = 0 gives the episode advantage on every turn token", () => {
  fc.assert(
    fc.property(arbEpisodes(), arbOptions, ({ input, counts }, options) => {
      const out = gigpo({ ...input, ...options, omega: 0 });
      const normByStd = options.mode === "mean_std_norm";
      const { batch, length } = input.responseMask;
      // "episode": GRPO over the episodes; "turn": GRPO over the rows repeated once per turn
      const rep = (i: number) => options.episodeWeighting === "turn" ? counts[i]! : 1;
      const rows: number[] = [];
      const ids: (string | number)[] = [];
      const first: number[] = [];
      for (let i = 0; i < batch; i++) {
        first.push(rows.length);
        for (let k = 0; k < rep(i); k++) {
          rows.push(input.rewards[i]!);
          ids.push(input.index[i]!);
        }
      }
      const ones = fromRows(rows.map(() => [1]));
      const g = grpo({ rewards: rows, responseMask: ones, index: ids, normByStd });
      for (let i = 0; i < batch; i++) {
        for (let c = 0; c < length; c++) {
          const k = i * length + c;
          if (input.responseMask.data[k] === 1) {
            assert.equal(out.advantages[k], g.advantages[first[i]!]);
          }
        }
      }
    }),
  );
});

Deno.test("gigpo property: reordering the responses reorders the advantages", () => {
  fc.assert(
    fc.property(arbEpisodes(), arbOptions, fc.integer(), ({ input }, options, seed) => {
      const { batch, length } = input.responseMask;
      const perm = Array.from({ length: batch }, (_, i) => i);
      const r = rng(seed);
      for (let i = batch - 1; i > 0; i--) {
        const j = Math.floor(r() * (i + 1));
        [perm[i], perm[j]] = [perm[j]!, perm[i]!];
      }
      const data = new Float64Array(batch * length);
      perm.forEach((p, i) =>
        data.set(
          (input.responseMask.data as Float64Array).subarray(p * length, (p + 1) * length),
          i * length,
        )
      );
      const permuted: GigpoInput = {
        rewards: perm.map((p) => input.rewards[p]!),
        responseMask: { data, batch, length },
        index: perm.map((p) => input.index[p]!),
        turns: perm.map((p) => input.turns[p]!),
      };
      const a = gigpo({ ...input, ...options });
      const b = gigpo({ ...permuted, ...options });
      const expected = new Float64Array(batch * length);
      perm.forEach((p, i) =>
        expected.set(a.advantages.subarray(p * length, (p + 1) * length), i * length)
      );
      assertClose(b.advantages, expected, { rtol: 1e-9, atol: 1e-12 });
    }),
  );
});

Deno.test("gigpo property: step advantages sum to 0 over each anchor group (mean_norm)", () => {
  fc.assert(
    fc.property(arbEpisodes(), ({ input }) => {
      // A − A(ω = 0) = A_S on a valid token of each turn; sum per (group, state)
      const a = gigpo({ ...input, omega: 1 });
      const e = gigpo({ ...input, omega: 0 });
      const { length } = input.responseMask;
      const sums = new Map<string, { sum: number; scale: number }>();
      input.turns.forEach((list, i) =>
        list.forEach(({ state, start, end }) => {
          const key = JSON.stringify([input.index[i], state]);
          const s = sums.get(key) ?? { sum: 0, scale: 1 };
          let c = start;
          while (c < end && input.responseMask.data[i * length + c] !== 1) c++;
          if (c === end) {
            sums.set(key, { sum: NaN, scale: 1 }); // a turn without valid tokens: not observable
            return;
          }
          const d = a.advantages[i * length + c]! - e.advantages[i * length + c]!;
          sums.set(key, { sum: s.sum + d, scale: s.scale + Math.abs(d) });
        })
      );
      for (const { sum, scale } of sums.values()) {
        if (!Number.isNaN(sum)) assert.ok(Math.abs(sum) <= 1e-12 * scale, `sum ${sum}`);
      }
    }),
  );
});

// ---------------------------------------------------------------------------------------------
// Registry and errors
// ---------------------------------------------------------------------------------------------

Deno.test("gigpo: the registry key gives the named export's numbers", () => {
  const viaKey = getEstimator("gigpo")({
    ...FIXED,
    gamma: 0.5,
    omega: 2,
    gigpoMode: "mean_std_norm",
    episodeWeighting: "episode",
    epsilon: 1e-4,
  });
  const direct = gigpo({
    ...FIXED,
    gamma: 0.5,
    omega: 2,
    mode: "mean_std_norm",
    episodeWeighting: "episode",
    epsilon: 1e-4,
  });
  assert.deepEqual(viaKey.advantages, direct.advantages);
  assert.deepEqual(getEstimator("gigpo")(FIXED).advantages, gigpo(FIXED).advantages);
  // groupSize works too (contiguous groups)
  assert.deepEqual(
    getEstimator("gigpo")({
      rewards: FIXED.rewards,
      responseMask: FIXED_MASK,
      turns: FIXED_TURNS,
      groupSize: 3,
    }).advantages,
    gigpo({ ...FIXED, index: [0, 0, 0, 1, 1, 1] }).advantages,
  );
  assert.throws(
    () =>
      getEstimator("gigpo")({
        rewards: FIXED.rewards,
        responseMask: FIXED_MASK,
        index: FIXED.index,
      }),
    /gigpo: turns is required \(each response's turns \{state, reward\?, start, end\}\[\]\), got undefined/,
  );
});

Deno.test("gigpo: errors name the field and the value", () => {
  const turns = [[turn("s", 0, 2)], [turn("s", 0, 1), turn("t", 2, 4)]];
  const ok: GigpoInput = {
    rewards: [1, 0],
    responseMask: fromRows([[1, 1, 0, 0], [1, 0, 1, 1]]),
    index: ["g", "g"],
    turns,
  };
  gigpo(ok); // valid
  const bad = (patch: Partial<GigpoInput>, re: RegExp) =>
    assert.throws(() => gigpo({ ...ok, ...patch }), re);
  const withTurn = (t: unknown) => ({ turns: [[t as GigpoTurn], turns[1]!] });
  bad(
    { turns: [turns[0]!] },
    /gigpo: turns has 1 entries but responseMask has batch 2; they must match/,
  );
  bad({ turns: "x" as never }, /gigpo: turns must be an array of 2 turn lists/);
  bad(
    { turns: [[], turns[1]!] },
    /gigpo: turns\[0\] must be a non-empty array of turns \{state, reward\?, start, end\}, got \[\]/,
  );
  bad(
    withTurn(null),
    /gigpo: turns\[0\]\[0\] must be a turn \{state, reward\?, start, end\}, got null/,
  );
  bad(
    withTurn({ state: 3, start: 0, end: 2 }),
    /gigpo: turns\[0\]\[0\]\.state must be a string .*got 3/,
  );
  bad(
    withTurn(turn("s", 0, 5)),
    /gigpo: turns\[0\]\[0\]\.end must be an integer in \[0, 4\], got 5/,
  );
  bad(
    withTurn(turn("s", -1, 2)),
    /gigpo: turns\[0\]\[0\]\.start must be an integer in \[0, 4\], got -1/,
  );
  bad(
    withTurn(turn("s", 0.5, 2)),
    /gigpo: turns\[0\]\[0\]\.start must be an integer in \[0, 4\], got 0.5/,
  );
  bad(
    withTurn(turn("s", 2, 1)),
    /gigpo: turns\[0\]\[0\] has end 1 < start 2; a turn span \[start, end\) needs start <= end/,
  );
  bad(
    withTurn(turn("s", 0, 2, NaN)),
    /gigpo: turns\[0\]\[0\]\.reward must be a finite number, got NaN/,
  );
  bad(
    { turns: [turns[0]!, [turn("s", 0, 3), turn("t", 2, 4)]] },
    /gigpo: turns\[1\]\[1\] starts at 2, before turns\[1\]\[0\] ends \(3\); turn spans must be in order and must not overlap/,
  );
  bad(
    { turns: [turns[0]!, [turn("t", 2, 4), turn("s", 0, 1)]] },
    /gigpo: turns\[1\]\[1\] starts at 0, before turns\[1\]\[0\] ends \(4\)/,
  );
  bad(
    { turns: [[turn("s", 0, 1)], turns[1]!] },
    /gigpo: responseMask\[0, 1\] is 1 but no turn of turns\[0\] covers column 1; mask observation tokens out/,
  );
  bad(
    { rewards: [1] },
    /gigpo: rewards has 1 entries but responseMask has batch 2; they must match/,
  );
  bad({ index: ["g"] }, /gigpo: index has 1 entries but the batch is 2; they must match/);
  bad(
    { mode: "std_norm" as never },
    /gigpo: mode must be one of "mean_norm", "mean_std_norm", got "std_norm"/,
  );
  bad(
    { episodeWeighting: "step" as never },
    /gigpo: episodeWeighting must be one of "turn", "episode", got "step"/,
  );
  bad({ gamma: 1.5 }, /gigpo: gamma must be a finite number in \[0, 1\], got 1.5/);
  bad({ omega: -1 }, /gigpo: omega must be a finite number >= 0, got -1/);
  bad({ epsilon: NaN }, /gigpo: epsilon must be a finite number >= 0, got NaN/);
  // an empty span is a valid turn (a step with no surviving tokens)
  gigpo({ ...ok, turns: [[turn("s", 0, 2), turn("u", 2, 2)], turns[1]!] });
});
