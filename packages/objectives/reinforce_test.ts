import assert from "node:assert/strict";
import { gradcheck } from "@rlvr/tensor/testing";
import { nsrLoss, psrLoss, reinforceLoss, wReinforceLoss } from "./reinforce.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { aggRef, type Case, inputsOf, mapMat, mat, near, randomCase, t } from "./_test_utils.ts";

/** Plain-loop reference: −w·A·log π, w by the advantage's sign. */
function pgRef(c: Case, pos: number, neg: number, mode = "token-mean"): number {
  const loss = mapMat(c.logp, (i, j) => {
    const a = c.adv[i]![j]!;
    const w = a > 0 ? pos : a < 0 ? neg : 1;
    return -w * a * c.logp[i]![j]!;
  });
  return aggRef(loss, c.mask, mode);
}

Deno.test("reinforce family: golden case by hand", async () => {
  // log π = [−1, −2, −0.5], A = [1, −1, 0], rewards-as-advantages
  // reinforce: −A·log π = [1, −2, 0] → mean −1/3
  // nsr: only A < 0 → [0, −2, 0] → −2/3 (minimising it lowers log π of the negative token)
  // psr: only A > 0 → [1, 0, 0] → 1/3; w_reinforce: 0.1·1 − 2 → −1.9/3
  const inputs = () => ({
    logProbs: t([[-1, -2, -0.5]], true),
    advantages: t([[1, -1, 0]]),
    responseMask: t([[1, 1, 1]]),
  });
  near(await reinforceLoss(inputs()).loss.item(), -1 / 3, 1e-12);
  near(await nsrLoss(inputs()).loss.item(), -2 / 3, 1e-12);
  near(await psrLoss(inputs()).loss.item(), 1 / 3, 1e-12);
  near(await wReinforceLoss(inputs()).loss.item(), -1.9 / 3, 1e-12);
  const x = inputs();
  const { loss, metrics } = nsrLoss(x);
  loss.backward();
  // gradient −w·A/3: only the negative token, +1/3 (descent lowers its log-probability)
  const g = await mat(x.logProbs.grad!);
  near(g[0]![1]!, 1 / 3, 1e-12);
  assert.equal(g[0]![0], 0);
  // without oldLogProbs the ratio metrics describe an on-policy step
  const m = await readMetrics(metrics, { dispose: true });
  assert.equal(m.ratio_mean, 1);
  assert.equal(m.ppo_kl, 0);
});

Deno.test("reinforce family: random case against the plain-loop reference, gradcheck", async () => {
  const c = randomCase(61, 6, 7);
  for (
    const [fn, pos, neg] of [[reinforceLoss, 1, 1], [nsrLoss, 0, 1], [psrLoss, 1, 0], [
      wReinforceLoss,
      0.1,
      1,
    ]] as const
  ) {
    for (const mode of ["token-mean", "seq-mean-token-sum"]) {
      const { loss, metrics } = fn(inputsOf(c), { aggregation: mode });
      near(await loss.item(), pgRef(c, pos, neg, mode), 1e-12);
      disposeMetrics(metrics);
    }
    const rest = inputsOf(c);
    await gradcheck((x) => {
      const { loss, metrics } = fn({ ...rest, logProbs: x });
      disposeMetrics(metrics);
      return loss;
    }, [t(c.logp, true)]);
  }
  // custom weights on plain reinforce
  const { loss } = reinforceLoss(inputsOf(c), { positiveWeight: 0.3, negativeWeight: 2 });
  near(await loss.item(), pgRef(c, 0.3, 2), 1e-12);
  assert.throws(
    () => reinforceLoss(inputsOf(c), { negativeWeight: -1 }),
    /reinforce: negativeWeight must be a finite number >= 0, got -1/,
  );
});
