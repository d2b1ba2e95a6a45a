import assert from "node:assert/strict";
import { assertClose, randomBatch } from "./_test_utils.ts";
import { entropyShapedAdvantages } from "./entropy_adv.ts";
import { gae } from "./gae.ts";
import { gpg } from "./gpg.ts";
import { drGrpo, grpo, grpoBatchStd } from "./grpo.ts";
import { klShapedRewards } from "./kl_reward.ts";
import { placeOutcome } from "./_layout.ts";
import { fromRows } from "./layout.ts";
import { opo } from "./opo.ts";
import { grpoPassk, passkAnalytic } from "./passk.ts";
import { prime } from "./prime.ts";
import { psrNsr } from "./psr_nsr.ts";
import { estimatorNames, getEstimator, registerEstimator } from "./registry.ts";
import { reinforcePlusPlus, reinforcePlusPlusBaseline } from "./reinforce_pp.ts";
import { remax } from "./remax.ts";
import { rloo } from "./rloo.ts";

const BUILTIN = [
  "dr_grpo",
  "entropy_adv",
  "gae",
  "gigpo",
  "gpg",
  "grpo",
  "grpo_batch_std",
  "grpo_passk",
  "opo",
  "passk_analytic",
  "prime",
  "psr_nsr",
  "reinforce_plus_plus",
  "reinforce_plus_plus_baseline",
  "remax",
  "rloo",
];

Deno.test("registry: every built-in key is registered (veRL names where veRL has the estimator)", () => {
  for (const key of BUILTIN) assert.ok(estimatorNames().includes(key), key);
  const names = estimatorNames();
  assert.deepEqual(names, [...names].sort());
});

Deno.test("registry: each key gives the named export's numbers on a random batch", () => {
  const b = randomBatch(21, 60, 9, { binary: true, minGroup: 3 });
  const mask = b.mask;
  const common = { rewards: b.rewards, responseMask: mask, index: b.index };
  const tokenRewards = placeOutcome(b.rewards, mask);
  const values = b.other;
  const same = (
    key: string,
    got: { advantages: Float64Array; returns: Float64Array },
    want: typeof got,
  ) => {
    assertClose(got.advantages, want.advantages, { atol: 0, rtol: 0, msg: `${key} advantages` });
    assertClose(got.returns, want.returns, { atol: 0, rtol: 0, msg: `${key} returns` });
  };
  same("grpo", getEstimator("grpo")(common), grpo(common));
  same("dr_grpo", getEstimator("dr_grpo")(common), drGrpo(common));
  same("grpo_batch_std", getEstimator("grpo_batch_std")(common), grpoBatchStd(common));
  same("rloo", getEstimator("rloo")(common), rloo(common));
  same("opo", getEstimator("opo")(common), opo(common));
  same("gpg", getEstimator("gpg")({ ...common, fNorm: 2 }), gpg({ ...common, fNorm: 2 }));
  same("grpo_passk", getEstimator("grpo_passk")(common), grpoPassk(common));
  same(
    "passk_analytic",
    getEstimator("passk_analytic")({ ...common, k: 2 }),
    passkAnalytic({ ...common, k: 2 }),
  );
  same(
    "psr_nsr",
    getEstimator("psr_nsr")(common),
    psrNsr({ rewards: b.rewards, responseMask: mask }),
  );
  same(
    "reinforce_plus_plus_baseline",
    getEstimator("reinforce_plus_plus_baseline")(common),
    reinforcePlusPlusBaseline(common),
  );
  same(
    "reinforce_plus_plus",
    getEstimator("reinforce_plus_plus")({ ...common, gamma: 0.9 }),
    reinforcePlusPlus({ tokenRewards, responseMask: mask, gamma: 0.9 }),
  );
  same(
    "remax",
    getEstimator("remax")({
      rewards: b.rewards,
      responseMask: mask,
      baselineRewards: b.rewards.map(() => 0.5),
    }),
    remax({ tokenRewards, responseMask: mask, baselineRewards: b.rewards.map(() => 0.5) }),
  );
  same(
    "gae",
    getEstimator("gae")({ rewards: b.rewards, responseMask: mask, values, gamma: 0.99, lam: 0.95 }),
    gae({ tokenRewards, values, responseMask: mask, gamma: 0.99, lam: 0.95 }),
  );
  same(
    "prime",
    getEstimator("prime")({ ...common, processRewards: b.tokenRewards, primeBaseline: "paper" }),
    prime({ ...common, processRewards: b.tokenRewards, baseline: "paper" }),
  );
  const entropy = { ...b.other, data: Array.from(b.other.data, Math.abs) };
  const base = rloo(common);
  same(
    "entropy_adv",
    getEstimator("entropy_adv")({
      ...common,
      baseEstimator: "rloo",
      entropy,
      entropyAlpha: 0.4,
      entropyKappa: 2,
    }),
    {
      advantages: entropyShapedAdvantages({
        advantages: { data: base.advantages, batch: 60, length: 9 },
        entropy,
        responseMask: mask,
        alpha: 0.4,
        kappa: 2,
      }),
      returns: base.returns,
    },
  );
});

Deno.test("registry: tokenRewards and rewards agree; groupSize builds contiguous groups; masked rewards count, masked NaN is an error", () => {
  const mask = fromRows([[1, 1, 0], [1, 0, 0], [1, 1, 1], [1, 1, 0]]);
  const rewards = [1, 0, 0.5, 0.5];
  const tokens = fromRows([[0, 1, 0], [0, 0, 0], [0.25, 0, 0.25], [0, 0.5, 0]]);
  const a = getEstimator("grpo")({ rewards, responseMask: mask, groupSize: 2 });
  const b = getEstimator("grpo")({
    tokenRewards: tokens,
    responseMask: mask,
    index: ["x", "x", "y", "y"],
  });
  assert.deepEqual(a.advantages, b.advantages);
  assert.ok(a.advantages.every(Number.isFinite));
  // veRL sums token_level_rewards over every position: a reward under a 0 of the mask counts
  const shifted = fromRows([[0, 1, 0], [0, 0, 2], [0.25, 0, 0.25], [0, 0.5, 0]]);
  const c = getEstimator("grpo")({ tokenRewards: shifted, responseMask: mask, groupSize: 2 });
  const d = getEstimator("grpo")({ rewards: [1, 2, 0.5, 0.5], responseMask: mask, groupSize: 2 });
  assert.deepEqual(c.advantages, d.advantages);
  assert.throws(
    () =>
      getEstimator("grpo")({
        tokenRewards: fromRows([[0, 1, NaN], [0, 0, 0], [0.25, 0, 0.25], [0, 0.5, 0]]),
        responseMask: mask,
        groupSize: 2,
      }),
    /grpo: tokenRewards\[0, 2\] is NaN; veRL's outcome estimators sum the token rewards over every position/,
  );
});

Deno.test("registry: klInReward shapes the rewards before any estimator (veRL use_kl_in_reward)", () => {
  const b = randomBatch(22, 30, 7);
  const kl = { logProbs: b.tokenRewards, refLogProbs: b.other, coef: 0.1, penalty: "k3" as const };
  const shaped = klShapedRewards({ rewards: b.rewards, responseMask: b.mask, ...kl });
  const viaRegistry = getEstimator("reinforce_plus_plus")({
    rewards: b.rewards,
    responseMask: b.mask,
    klInReward: kl,
  });
  const direct = reinforcePlusPlus({ tokenRewards: shaped.tokenRewards, responseMask: b.mask });
  assertClose(viaRegistry.advantages, direct.advantages, { atol: 0, rtol: 0 });
  // outcome estimators then score Σ_t r_t, KL included, as veRL's token_level_rewards.sum(-1)
  const g = getEstimator("dr_grpo")({
    rewards: b.rewards,
    responseMask: b.mask,
    index: b.index,
    klInReward: kl,
  });
  const sums = Array.from({ length: 30 }, (_, i) => {
    let s = 0;
    for (let t = 0; t < 7; t++) {
      if (b.mask.data[i * 7 + t]) s += shaped.tokenRewards.data[i * 7 + t]!;
    }
    return s;
  });
  assertClose(
    g.advantages,
    drGrpo({ rewards: sums, responseMask: b.mask, index: b.index }).advantages,
    {
      atol: 1e-15,
    },
  );
});

Deno.test("registerEstimator: custom keys, duplicates, override, key format", () => {
  registerEstimator("test_zero", (x) => {
    const n = x.responseMask.batch * x.responseMask.length;
    return { advantages: new Float64Array(n), returns: new Float64Array(n) };
  });
  assert.ok(estimatorNames().includes("test_zero"));
  const out = getEstimator("test_zero")({ rewards: [1], responseMask: fromRows([[1, 1]]) });
  assert.deepEqual([...out.advantages], [0, 0]);
  assert.throws(
    () =>
      registerEstimator(
        "test_zero",
        () => ({ advantages: new Float64Array(), returns: new Float64Array() }),
      ),
    /^RangeError: estimator "test_zero" is already registered; pass \{ override: true \} to replace it$/,
  );
  registerEstimator("test_zero", (x) => ({
    advantages: new Float64Array(x.responseMask.data.length).fill(7),
    returns: new Float64Array(x.responseMask.data.length),
  }), { override: true });
  assert.equal(
    getEstimator("test_zero")({ rewards: [1], responseMask: fromRows([[1]]) }).advantages[0],
    7,
  );
  assert.throws(
    () =>
      registerEstimator(
        "Bad-Key",
        () => ({ advantages: new Float64Array(), returns: new Float64Array() }),
      ),
    /^TypeError: invalid estimator key "Bad-Key": a lowercase letter, then lowercase letters/,
  );
  assert.throws(
    () => registerEstimator("test_fn", 3 as never),
    /^TypeError: estimator "test_fn" must be a function, got 3$/,
  );
});

Deno.test("registry: invalid inputs name the argument and the value", () => {
  const mask = fromRows([[1], [1], [1]]);
  // every registered key is listed (in registration order); a likely typo gets a "did you mean"
  assert.throws(() => getEstimator("grpo_v2"), (e: Error) => {
    assert.ok(e instanceof RangeError);
    const head = 'unknown estimator "grpo_v2"; valid keys: ';
    assert.ok(e.message.startsWith(head), e.message);
    assert.deepEqual([...e.message.slice(head.length).split(", ")].sort(), estimatorNames());
    return true;
  });
  assert.throws(
    () => getEstimator("gpro"),
    /^RangeError: unknown estimator "gpro"; valid keys: .* \(did you mean "grpo"\?\)$/,
  );
  assert.throws(
    () =>
      getEstimator("grpo")(
        {
          rewards: [1, 0, 1],
          responseMask: mask,
          index: [0, 0, 0],
          norm_adv_by_std: false,
        } as never,
      ),
    /grpo: unknown field "norm_adv_by_std" in the estimator input; known fields: tokenRewards, rewards/,
  );
  assert.throws(
    () => getEstimator("grpo")({ rewards: [1, 0, 1], responseMask: mask }),
    /grpo: index is required \(group ids per response, or groupSize for fixed-size groups\), got undefined/,
  );
  assert.throws(
    () => getEstimator("grpo")({ rewards: [1, 0, 1], responseMask: mask, groupSize: 2 }),
    /grpo: batch 3 is not divisible by groupSize 2/,
  );
  assert.throws(
    () =>
      getEstimator("grpo")({
        rewards: [1, 0, 1],
        responseMask: mask,
        groupSize: 3,
        index: [0, 0, 0],
      }),
    /grpo: give index \(group ids\) or groupSize, not both/,
  );
  assert.throws(
    () =>
      getEstimator("rloo")({
        rewards: [1, 0, 1],
        tokenRewards: mask,
        responseMask: mask,
        index: [0, 0, 0],
      }),
    /rloo: give tokenRewards \(token-level\) or rewards \(sequence-level\), not both/,
  );
  assert.throws(
    () => getEstimator("rloo")({ responseMask: mask, index: [0, 0, 0] }),
    /rloo: tokenRewards or rewards is required/,
  );
  assert.throws(
    () => getEstimator("gae")({ rewards: [1, 0, 1], responseMask: mask }),
    /gae: values is required \(critic values \[batch, length\]\), got undefined/,
  );
  assert.throws(
    () => getEstimator("grpo")({ rewards: [1, NaN, 1], responseMask: mask, index: [0, 0, 0] }),
    /grpo: rewards\[1\] is NaN; rewards must be finite numbers/,
  );
  assert.throws(
    () =>
      getEstimator("reinforce_plus_plus")({
        rewards: [1, 0, 1],
        responseMask: mask,
        klInReward: { logProbs: mask, refLogProbs: mask, coef: -0.1 },
      }),
    /reinforce_plus_plus: klInReward.coef must be a finite number >= 0, got -0.1/,
  );
  assert.throws(
    () =>
      getEstimator("entropy_adv")({
        rewards: [1, 0, 1],
        responseMask: mask,
        index: [0, 0, 0],
        baseEstimator: "nope",
      }),
    /entropy_adv: baseEstimator: unknown estimator "nope"; valid keys:/,
  );
});
