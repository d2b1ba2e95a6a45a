import assert from "node:assert/strict";
import { gradcheck } from "@rlvr/tensor/testing";
import { sapoAggLoss, sapoLoss } from "./sapo.ts";
import { disposeMetrics } from "./metrics.ts";
import { aggRef, type Case, inputsOf, mapMat, near, randomCase, t } from "./_test_utils.ts";

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** Plain-loop reference of veRL `compute_policy_loss_sapo`. */
function sapoRef(c: Case, tauPos: number, tauNeg: number, mode = "seq-mean-token-mean"): number {
  const loss = mapMat(c.logp, (i, j) => {
    const a = c.adv[i]![j]!;
    const r = Math.exp(Math.min(Math.max(c.logp[i]![j]! - c.old[i]![j]!, -20), 20));
    const tau = a > 0 ? tauPos : tauNeg;
    return -sigmoid(tau * (r - 1)) * (4 / tau) * a;
  });
  return aggRef(loss, c.mask, mode);
}

Deno.test("sapo: golden case by hand", async () => {
  // token 0: r = 1.5, A = 1, τ = 1 → gate σ(0.5)·4 = 2.4491866; ℓ = −2.4491866
  // token 1: r = 0.5, A = −2, τ = 1.05 → gate σ(−0.525)·4/1.05 = 1.4113; ℓ = +2·1.4113
  // one sequence, seq-mean-token-mean = mean of the two
  const { loss, metrics } = sapoLoss({
    logProbs: t([[0, 0]], true),
    oldLogProbs: t([[-Math.log(1.5), -Math.log(0.5)]]),
    advantages: t([[1, -2]]),
    responseMask: t([[1, 1]]),
  });
  const g0 = sigmoid(0.5) * 4;
  const g1 = sigmoid(1.05 * -0.5) * 4 / 1.05;
  near(await loss.item(), (-g0 + 2 * g1) / 2, 1e-12);
  disposeMetrics(metrics);
});

Deno.test("sapo: random case against the plain-loop veRL reference", async () => {
  const c = randomCase(321, 7, 9, { spread: 0.7 });
  for (const [tp, tn] of [[1, 1.05], [2, 5]] as const) {
    const { loss, metrics } = sapoLoss(inputsOf(c), { tauPos: tp, tauNeg: tn });
    near(await loss.item(), sapoRef(c, tp, tn), 1e-12);
    disposeMetrics(metrics);
  }
  // veRL's sapo ignores the aggregation; sapo_agg (ours) follows it
  const forced = sapoLoss(inputsOf(c), { aggregation: "token-mean" });
  near(await forced.loss.item(), sapoRef(c, 1, 1.05), 1e-12);
  disposeMetrics(forced.metrics);
  const { loss } = sapoAggLoss(inputsOf(c), { aggregation: "token-mean" });
  near(await loss.item(), sapoRef(c, 1, 1.05, "token-mean"), 1e-12);
});

Deno.test("sapo: gradcheck, and temperatures must be positive", async () => {
  const c = randomCase(15, 3, 4, { spread: 0.7 });
  const rest = inputsOf(c);
  await gradcheck((x) => {
    const { loss, metrics } = sapoLoss({ ...rest, logProbs: x });
    disposeMetrics(metrics);
    return loss;
  }, [t(c.logp, true)]);
  assert.throws(
    () => sapoLoss(rest, { tauNeg: 0 }),
    /sapo: tauNeg must be a finite number > 0, got 0/,
  );
});
