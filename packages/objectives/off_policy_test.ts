import assert from "node:assert/strict";
import {
  decoupledImportanceWeights,
  offPolicySequenceMask,
  rejectionMask,
  truncatedImportanceWeights,
} from "./off_policy.ts";
import { vanillaLoss } from "./ppo_clip.ts";
import { reinforceLoss } from "./reinforce.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { aggRef, inputsOf, mapMat, mat, near, randomCase, t } from "./_test_utils.ts";

Deno.test("truncatedImportanceWeights: token and sequence TIS by hand", async () => {
  // log π_old − log π_rollout: row 0 = [ln 3, ln 0.5], row 1 = [0.1, (masked)]
  const old = t([[0, 0], [0, 0]]);
  const rollout = t([[-Math.log(3), -Math.log(0.5)], [-0.1, 5]]);
  const mask = t([[1, 1], [1, 0]]);
  // token: min(ratio, 2) → [2, 0.5], [e^{0.1}, 0 (masked)]
  const tok = truncatedImportanceWeights(old, rollout, mask, { cap: 2 });
  const w = await mat(tok.weights);
  assert.equal(w[0]![0], 2);
  near(w[0]![1]!, 0.5, 1e-12);
  near(w[1]![0]!, Math.exp(0.1), 1e-12);
  assert.equal(w[1]![1], 0);
  const m = await readMetrics(tok.metrics, { dispose: true });
  near(m.tis_truncated_frac!, 1 / 3);
  near(m.tis_max!, 3, 1e-12);
  // sequence: row 0 product 3·0.5 = 1.5 (below the cap), row 1 e^{0.1}; broadcast, 0 on masked
  const seq = truncatedImportanceWeights(old, rollout, mask, { level: "sequence", cap: 2 });
  const ws = await mat(seq.weights);
  near(ws[0]![0]!, 1.5, 1e-12);
  near(ws[0]![1]!, 1.5, 1e-12);
  near(ws[1]![0]!, Math.exp(0.1), 1e-12);
  assert.equal(ws[1]![1], 0);
  disposeMetrics(seq.metrics);
  assert.throws(
    () => truncatedImportanceWeights(old, rollout, mask, { level: "seq" as never }),
    /level must be one of token, sequence, got "seq"/,
  );
  assert.throws(
    () => truncatedImportanceWeights(old, rollout, mask, { cap: 0 }),
    /cap must be a finite number > 0, got 0/,
  );
});

Deno.test("TIS inside a loss equals the per-token loss times min(π_old/π_rollout, C)", async () => {
  const c = randomCase(88, 6, 8, { spread: 0.3 });
  for (const level of ["token", "sequence"] as const) {
    const weights = level === "token"
      ? mapMat(c.old, (i, j) => Math.min(Math.exp(c.old[i]![j]! - c.rollout[i]![j]!), 2))
      : mapMat(c.old, (i) => {
        let s = 0;
        c.old[i]!.forEach((v, j) => c.mask[i]![j] && (s += v - c.rollout[i]![j]!));
        return Math.min(Math.exp(Math.min(Math.max(s, -20), 20)), 2);
      });
    const loss = mapMat(c.logp, (i, j) => -c.adv[i]![j]! * c.logp[i]![j]! * weights[i]![j]!);
    const out = reinforceLoss(inputsOf(c, { rolloutLogProbs: t(c.rollout) }), {
      offPolicy: { tis: { level, cap: 2 } },
    });
    near(await out.loss.item(), aggRef(loss, c.mask, "token-mean"), 1e-12, level);
    disposeMetrics(out.metrics);
  }
  // precomputed isWeights are applied the same way
  const w = mapMat(c.old, (i, j) => 0.5 + ((i + j) % 3) / 4);
  const loss = mapMat(c.logp, (i, j) => -c.adv[i]![j]! * c.logp[i]![j]! * w[i]![j]!);
  const out = reinforceLoss(inputsOf(c, { isWeights: t(w) }));
  near(await out.loss.item(), aggRef(loss, c.mask, "token-mean"), 1e-12);
});

Deno.test("decoupledImportanceWeights: exp(prox − behav), zeroed above the cap", async () => {
  const { weights, metrics } = decoupledImportanceWeights(
    t([[0, 0, 0]]),
    t([[0, -Math.log(4), Math.log(2)]]),
    t([[1, 1, 1]]),
    { cap: 3 },
  );
  const w = (await mat(weights))[0]!;
  assert.equal(w[0], 1);
  assert.equal(w[1], 0); // 4 > 3
  near(w[2]!, 0.5, 1e-12);
  near((await readMetrics(metrics, { dispose: true })).behav_capped_frac!, 1 / 3);
});

Deno.test("rejectionMask: token, sequence and geometric levels by hand (veRL rollout_rs)", async () => {
  // log ratios (old − rollout): row 0 = [0.5, 0.5], row 1 = [1.0, −0.9], row 2 = [2, masked]
  const old = t([[0, 0], [0, 0], [0, 0]]);
  const rollout = t([[-0.5, -0.5], [-1, 0.9], [-2, 0]]);
  const mask = t([[1, 1], [1, 1], [1, 0]]);
  // token, upper 2 (lower 1/2): e^{0.5} ok, e^{1} > 2 rejected, e^{−0.9} = 0.41 < 0.5 rejected, e^{2} rejected
  const tok = await mat(rejectionMask(old, rollout, mask, { upper: 2 }).mask);
  assert.deepEqual(tok, [[1, 1], [0, 0], [0, 0]]);
  // sequence: products e^{1}, e^{0.1}, e^{2} → only row 1 kept
  const seq = rejectionMask(old, rollout, mask, { level: "sequence", upper: 2 });
  assert.deepEqual(await mat(seq.mask), [[0, 0], [1, 1], [0, 0]]);
  const m = await readMetrics(seq.metrics, { dispose: true });
  near(m.rejected_frac!, 3 / 5); // 3 of 5 valid tokens
  near(m.rejected_seq_frac!, 2 / 3);
  // geometric: means 0.5, 0.05, 2 → e^{0.5} = 1.65, 1.05 kept; e^{2} rejected
  const geo = await mat(rejectionMask(old, rollout, mask, { level: "geometric", upper: 2 }).mask);
  assert.deepEqual(geo, [[1, 1], [1, 1], [0, 0]]);
  assert.throws(
    () => rejectionMask(old, rollout, mask, { upper: 2, lower: 3 }),
    /lower must be a finite number >= 0 and <= 2, got 3/,
  );
});

Deno.test("rejection inside a loss removes tokens from the mask and the denominators", async () => {
  const c = randomCase(90, 6, 8, { spread: 0.2 });
  const keep = mapMat(c.old, (i, j) => {
    const r = Math.exp(c.old[i]![j]! - c.rollout[i]![j]!);
    return c.mask[i]![j] && r >= 1 / 1.2 && r <= 1.2 ? 1 : 0;
  });
  const loss = mapMat(c.logp, (i, j) => -c.adv[i]![j]! * c.logp[i]![j]!);
  const out = reinforceLoss(inputsOf(c, { rolloutLogProbs: t(c.rollout), oldLogProbs: t(c.old) }), {
    offPolicy: { rejection: { upper: 1.2 } },
  });
  near(await out.loss.item(), aggRef(loss, keep, "token-mean"), 1e-12);
  const m = await readMetrics(out.metrics, { dispose: true });
  const total = c.mask.flat().length;
  near(m.masked_frac!, 1 - keep.flat().reduce((a, v) => a + v, 0) / total, 1e-12);
});

Deno.test("offPolicySequenceMask: OPSM by hand, and inside a loss (TRL off_policy_mask_threshold)", async () => {
  // seq 0: mean(rollout − logp) = 1 > 0.5 and A < 0 → dropped; seq 1: same gap but A > 0 → kept;
  // seq 2: A < 0 but gap 0.2 ≤ 0.5 → kept
  const logp = t([[-2, -2], [-2, -2], [-1, -1]], true);
  const rollout = t([[-1, -1], [-1, -1], [-0.8, -0.8]]);
  const adv = t([[-1, -1], [1, 1], [-1, -1]]);
  const mask = t([[1, 1], [1, 1], [1, 1]]);
  const { mask: m, metrics } = offPolicySequenceMask(logp, rollout, adv, mask, { threshold: 0.5 });
  assert.deepEqual(await mat(m), [[0, 0], [1, 1], [1, 1]]);
  near((await readMetrics(metrics, { dispose: true })).opsm_masked_frac!, 2 / 6);
  // in a loss, the zeroed tokens still count in the denominator: (0 + 0 + 2 + 2 − 1 − 1)/6
  const out = reinforceLoss({
    logProbs: logp,
    rolloutLogProbs: rollout,
    advantages: adv,
    responseMask: mask,
  }, {
    offPolicy: { sequenceMaskThreshold: 0.5 },
  });
  near(await out.loss.item(), (2 + 2 - 1 - 1) / 6, 1e-12);
  disposeMetrics(out.metrics);
  assert.throws(
    () =>
      vanillaLoss({ logProbs: logp, oldLogProbs: logp, advantages: adv, responseMask: mask }, {
        offPolicy: { tis: {} },
      }),
    /vanilla: offPolicy.tis needs rolloutLogProbs/,
  );
  assert.throws(
    () =>
      vanillaLoss({
        logProbs: logp,
        oldLogProbs: logp,
        rolloutLogProbs: rollout,
        advantages: adv,
        responseMask: mask,
      }, { offPolicy: { tiss: {} } as never }),
    /unknown option "tiss"; valid options: tis, decoupled, rejection, sequenceMaskThreshold/,
  );
});
