import assert from "node:assert/strict";
import { gradcheck } from "@rlvr/tensor/testing";
import { dpoLoss, sequenceLogProbs } from "./dpo.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { near, t } from "./_test_utils.ts";

/** TRL's sigmoid DPO loss in plain JS: −(1−ε)·log σ(βh) − ε·log σ(−βh), averaged. */
function dpoRef(
  c: number[],
  r: number[],
  rc: number[],
  rr: number[],
  beta: number,
  eps: number,
): number {
  const logSig = (x: number) => -Math.log1p(Math.exp(-x));
  let s = 0;
  c.forEach((_, i) => {
    const h = (c[i]! - rc[i]!) - (r[i]! - rr[i]!);
    s += -(1 - eps) * logSig(beta * h) - eps * logSig(-beta * h);
  });
  return s / c.length;
}

Deno.test("dpoLoss: golden case by hand", async () => {
  // h = (−10 + 11) − (−12 + 11) = 2, β = 0.5 → ℓ = −log σ(1) = log(1 + e^{−1}) = 0.3132616875
  const { loss, metrics } = dpoLoss({
    chosenLogProbs: t([-10], true),
    rejectedLogProbs: t([-12], true),
    refChosenLogProbs: t([-11]),
    refRejectedLogProbs: t([-11]),
  }, { beta: 0.5 });
  near(await loss.item(), 0.31326168751822286, 1e-12);
  const m = await readMetrics(metrics, { dispose: true });
  near(m.rewards_chosen!, 0.5);
  near(m.rewards_rejected!, -0.5);
  near(m.rewards_margin!, 1);
  assert.equal(m.rewards_accuracy, 1);
});

Deno.test("dpoLoss: random pairs against the plain-loop TRL reference, label smoothing, gradcheck", async () => {
  const c = [-10, -20, -5, -7.5, -300];
  const r = [-12, -18, -5, -9, -100];
  const rc = [-11, -19, -6, -7, -310];
  const rr = [-11, -19, -4, -8, -90];
  for (const [beta, eps] of [[0.1, 0], [0.5, 0.1], [2, 0.3]] as const) {
    const { loss, metrics } = dpoLoss({
      chosenLogProbs: t(c),
      rejectedLogProbs: t(r),
      refChosenLogProbs: t(rc),
      refRejectedLogProbs: t(rr),
    }, { beta, labelSmoothing: eps });
    near(await loss.item(), dpoRef(c, r, rc, rr, beta, eps), 1e-12);
    disposeMetrics(metrics);
  }
  const refC = t(rc);
  const refR = t(rr);
  await gradcheck((x, y) => {
    const out = dpoLoss({
      chosenLogProbs: x,
      rejectedLogProbs: y,
      refChosenLogProbs: refC,
      refRejectedLogProbs: refR,
    }, {
      beta: 0.3,
      labelSmoothing: 0.1,
    });
    disposeMetrics(out.metrics);
    return out.loss;
  }, [t(c, true), t(r, true)]);
  near(await sequenceLogProbs(t([[-1, -2, -4]]), t([[1, 1, 0]])).sum().item(), -3);
  assert.throws(
    () =>
      dpoLoss({
        chosenLogProbs: t([[1]]),
        rejectedLogProbs: t([[1]]),
        refChosenLogProbs: t([[1]]),
        refRejectedLogProbs: t([[1]]),
      }),
    /chosenLogProbs must be a 1-D \[B\] tensor, got shape \[1,1\]/,
  );
  assert.throws(
    () =>
      dpoLoss({
        chosenLogProbs: t(c),
        rejectedLogProbs: t(r),
        refChosenLogProbs: t(rc),
        refRejectedLogProbs: t(rr),
      }, { labelSmoothing: 0.7 }),
    /labelSmoothing must be a finite number >= 0 and <= 0.5, got 0.7/,
  );
});
