import assert from "node:assert/strict";
import { gradcheck } from "@rlvr/tensor/testing";
import { clipCovLoss, klCovLoss } from "./cov.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import {
  aggRef,
  type Case,
  inputsOf,
  mapMat,
  type Mat,
  mat,
  near,
  randomCase,
  t,
} from "./_test_utils.ts";

/** Centred covariance over valid tokens, in plain JS. */
function covRef(c: Case): Mat {
  let sa = 0;
  let sl = 0;
  let n = 0;
  c.mask.forEach((row, i) =>
    row.forEach((m, j) => {
      if (m) {
        sa += c.adv[i]![j]!;
        sl += c.logp[i]![j]!;
        n++;
      }
    })
  );
  return mapMat(c.logp, (i, j) => (c.adv[i]![j]! - sa / n) * (c.logp[i]![j]! - sl / n));
}

/** Plain-loop reference of veRL `compute_policy_loss_kl_cov` (k = max(1, ⌊ratio·N⌋) by sorting). */
function klCovRef(c: Case, ratio: number, coef: number, mode = "token-mean") {
  const cov = covRef(c);
  const valid: [number, number, number][] = [];
  c.mask.forEach((row, i) => row.forEach((m, j) => m && valid.push([cov[i]![j]!, i, j])));
  valid.sort((a, b) => b[0] - a[0]);
  const k = Math.max(1, Math.floor(valid.length * ratio));
  const selected = new Set(valid.slice(0, k).map(([, i, j]) => `${i},${j}`));
  const loss = mapMat(c.logp, (i, j) => {
    const d = c.logp[i]![j]! - c.old[i]![j]!;
    const pg = -c.adv[i]![j]! * Math.exp(d);
    return selected.has(`${i},${j}`) ? pg + coef * Math.abs(d) : pg;
  });
  return { loss: aggRef(loss, c.mask, mode), k };
}

Deno.test("kl_cov: golden case by hand", async () => {
  // log π = [−0.5, −1, −3], A = [2, 0, −1] (all valid): mean log π = −1.5, mean A = 1/3.
  // cov = (A − 1/3)(log π + 1.5) = [5/3·1, −1/3·0.5, −4/3·(−1.5)] = [1.6667, −0.1667, 2]
  // covRatio 0.34 → k = max(1, ⌊0.34·3⌋) = 1 → token 2 (cov 2) gets + |log r|.
  // log r = log π − log π_old = [0.1, 0, −0.2]
  // ℓ = [−2e^{0.1}, 0, +e^{−0.2} + 0.2], token-mean
  const { loss, metrics } = klCovLoss({
    logProbs: t([[-0.5, -1, -3]], true),
    oldLogProbs: t([[-0.6, -1, -2.8]]),
    advantages: t([[2, 0, -1]]),
    responseMask: t([[1, 1, 1]]),
  }, { covRatio: 0.34 });
  near(await loss.item(), (-2 * Math.exp(0.1) + Math.exp(-0.2) + 0.2) / 3, 1e-12);
  const m = await readMetrics(metrics, { dispose: true });
  near(m.cov_selected_frac!, 1 / 3);
  near(m.ppo_kl_abs!, (0.1 + 0 + 0.2) / 3, 1e-12);
});

Deno.test("kl_cov: random case against the plain-loop veRL reference", async () => {
  const c = randomCase(41, 10, 12, { spread: 0.4 });
  for (const ratio of [2e-4, 0.05, 0.3]) {
    const ref = klCovRef(c, ratio, 1);
    const { loss, metrics } = klCovLoss(inputsOf(c), { covRatio: ratio });
    near(await loss.item(), ref.loss, 1e-12, `ratio ${ratio}`);
    const n = c.mask.flat().reduce((a, v) => a + v, 0);
    near((await readMetrics(metrics, { dispose: true })).cov_selected_frac!, ref.k / n, 1e-12);
  }
});

Deno.test("clip_cov: golden case with a single candidate", async () => {
  // log π = [−0.1, −3, −1, −1], A = [2, −2, 0, 0]: mean log π = −1.275, mean A = 0
  // cov = [2·1.175, −2·(−1.725), 0, 0] = [2.35, 3.45, 0, 0]; bounds (1, 3) → only token 0.
  // covRatio 0.5 → clip_num = ⌊0.5·4⌋ = 2, k = min(2, 1 candidate) = 1 → token 0 detached.
  // All ratios are 1 (on-policy): ℓ = −A·r·corr = [0, 2, 0, 0] → token-mean 0.5
  const logp = t([[-0.1, -3, -1, -1]], true);
  const { loss, metrics } = clipCovLoss({
    logProbs: logp,
    oldLogProbs: t([[-0.1, -3, -1, -1]]),
    advantages: t([[2, -2, 0, 0]]),
    responseMask: t([[1, 1, 1, 1]]),
  }, { covRatio: 0.5, covLowerBound: 1, covUpperBound: 3, seed: 0 });
  near(await loss.item(), 0.5, 1e-12);
  near((await readMetrics(metrics, { dispose: true })).cov_selected_frac!, 0.25);
  loss.backward();
  // token 0 detached → 0; token 1: −A·r/4 = 0.5
  assert.deepEqual(await mat(logp.grad!), [[0, 0.5, 0, 0]]);
});

Deno.test("clip_cov: random case: selects min(⌊ratio·N⌋∨1, #candidates) candidates, seeded", async () => {
  const c = randomCase(42, 10, 12, { spread: 0.05 });
  const cov = covRef(c);
  const lb = 0.2;
  const ub = 3;
  const candidates = mapMat(
    cov,
    (i, j) => (c.mask[i]![j] && cov[i]![j]! > lb && cov[i]![j]! < ub ? 1 : 0),
  );
  const nCand = candidates.flat().reduce((a, v) => a + v, 0);
  const n = c.mask.flat().reduce((a, v) => a + v, 0);
  const ratio = 0.1;
  const k = Math.min(Math.max(1, Math.floor(ratio * n)), nCand);
  const run = async (seed: number) => {
    const inputs = inputsOf(c);
    const { loss, metrics } = clipCovLoss(inputs, {
      covRatio: ratio,
      covLowerBound: lb,
      covUpperBound: ub,
      seed,
      clipRatio: 0.5,
    });
    const m = await readMetrics(metrics, { dispose: true });
    near(m.cov_selected_frac!, k / n, 1e-12);
    loss.backward();
    const g = await mat(inputs.logProbs.grad!);
    // spread 0.05 and ε = 0.5: nothing is PPO-clipped, so a zero gradient on a valid token with
    // A ≠ 0 means "selected"; every selected token must be a candidate.
    const selected = mapMat(g, (i, j) => (c.mask[i]![j] && g[i]![j] === 0 ? 1 : 0));
    assert.equal(selected.flat().reduce((a, v) => a + v, 0), k);
    selected.forEach((row, i) => row.forEach((s, j) => s && assert.equal(candidates[i]![j], 1)));
    // the loss is PPO's with the selected tokens zeroed
    const perToken = mapMat(
      c.logp,
      (i, j) => selected[i]![j] ? 0 : -c.adv[i]![j]! * Math.exp(c.logp[i]![j]! - c.old[i]![j]!),
    );
    near(await loss.item(), aggRef(perToken, c.mask, "token-mean"), 1e-12);
    return JSON.stringify(selected);
  };
  assert.equal(await run(1), await run(1));
  assert.ok(
    k > 1 && nCand > k,
    `the case must leave room for randomness (k = ${k}, candidates ${nCand})`,
  );
});

Deno.test("clip_cov / kl_cov: gradcheck away from the clip boundaries, and option errors", async () => {
  const c = randomCase(16, 3, 4, { spread: 0.05 });
  const rest = inputsOf(c);
  for (
    const [fn, opts] of [[clipCovLoss, { seed: 3, covRatio: 0.2, covLowerBound: 0.1 }], [
      klCovLoss,
      { covRatio: 0.2 },
    ]] as const
  ) {
    await gradcheck((x) => {
      const { loss, metrics } = fn({ ...rest, logProbs: x }, opts);
      disposeMetrics(metrics);
      return loss;
    }, [t(c.logp, true)]);
  }
  assert.throws(
    () => clipCovLoss(rest, { covRatio: 0 }),
    /clip_cov: covRatio must be a finite number > 0 and <= 1, got 0/,
  );
  assert.throws(
    () => clipCovLoss(rest, { covLowerBound: 5, covUpperBound: 1 }),
    /clip_cov: covLowerBound \(5\) must be below covUpperBound \(1\)/,
  );
  assert.throws(
    () => klCovLoss(rest, { klCovCoef: -1 }),
    /kl_cov: klCovCoef must be a finite number >= 0, got -1/,
  );
});
