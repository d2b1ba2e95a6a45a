import assert from "node:assert/strict";
import { gradcheck } from "@rlvr/tensor/testing";
import { cispoLoss } from "./cispo.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { aggRef, type Case, inputsOf, type Mat, mat, near, randomCase, t } from "./_test_utils.ts";

/** Plain-loop reference of veRL `compute_policy_loss_cispo`: loss and ∂ℓ_t/∂log π_t. */
function cispoRef(c: Case, low: number, high: number, mode = "token-mean") {
  const loss: Mat = [];
  const grad: Mat = [];
  let clipped = 0;
  let n = 0;
  c.logp.forEach((row, i) => {
    loss.push([]);
    grad.push([]);
    row.forEach((lp, j) => {
      const r = Math.exp(Math.min(Math.max(lp - c.old[i]![j]!, -20), 20));
      const w = Math.min(Math.max(r, 1 - low), 1 + high);
      loss[i]!.push(-w * c.adv[i]![j]! * lp);
      grad[i]!.push(-w * c.adv[i]![j]!);
      if (c.mask[i]![j]) {
        n++;
        if (w !== r) clipped++;
      }
    });
  });
  return { loss: aggRef(loss, c.mask, mode), grad, clipfrac: clipped / n, n };
}

Deno.test("cispo: golden case by hand", async () => {
  // ε_low = 1 (no lower bound), ε_high = 0.2.
  // token 0: r = 2 → weight 1.2; A = 1; log π = ln 0.6 → ℓ = −1.2·ln 0.6
  // token 1: r = 0.25 → weight 0.25 (no lower bound); A = −1; log π = ln 0.1 → ℓ = 0.25·ln 0.1
  // token-mean over 2 tokens
  const logp = t([[Math.log(0.6), Math.log(0.1)]], true);
  const { loss, metrics } = cispoLoss({
    logProbs: logp,
    oldLogProbs: t([[Math.log(0.3), Math.log(0.4)]]),
    advantages: t([[1, -1]]),
    responseMask: t([[1, 1]]),
  });
  near(await loss.item(), (-1.2 * Math.log(0.6) + 0.25 * Math.log(0.1)) / 2, 1e-12);
  const m = await readMetrics(metrics, { dispose: true });
  near(m.clipfrac_high!, 0.5);
  assert.equal(m.clipfrac_low, 0);
  loss.backward();
  // every token keeps a gradient: −w·A/2
  const g = (await mat(logp.grad!))[0]!;
  near(g[0]!, -0.6, 1e-12);
  near(g[1]!, 0.125, 1e-12);
});

Deno.test("cispo: random case against the plain-loop veRL reference, loss and gradient", async () => {
  const c = randomCase(99, 6, 10, { spread: 0.8 });
  for (const [low, high] of [[0.2, 0.28], [1, 4]] as const) {
    const ref = cispoRef(c, low, high);
    const inputs = inputsOf(c);
    const { loss, metrics } = cispoLoss(inputs, { clipRatioLow: low, clipRatioHigh: high });
    near(await loss.item(), ref.loss, 1e-12);
    near((await readMetrics(metrics, { dispose: true })).pg_clipfrac!, ref.clipfrac, 1e-12);
    loss.backward();
    const g = await mat(inputs.logProbs.grad!);
    g.forEach((row, i) =>
      row.forEach((v, j) => near(v, c.mask[i]![j] ? ref.grad[i]![j]! / ref.n : 0, 1e-12))
    );
  }
});

Deno.test("cispo: gradcheck of the stop-gradient surrogate", async () => {
  // CISPO's gradient is −sg(w)·A·∇log π by design, not the derivative of its value (w depends on
  // log π too). Moving log π_old together with log π freezes r, and thus w, at its base value,
  // so the finite-difference derivative of that function is exactly the intended gradient.
  const c = randomCase(12, 3, 4, { spread: 0.8 });
  const base = t(c.logp);
  const old = t(c.old);
  const rest = inputsOf(c);
  await gradcheck((x) => {
    const { loss, metrics } = cispoLoss({
      ...rest,
      logProbs: x,
      oldLogProbs: old.add(x.sub(base)),
    });
    disposeMetrics(metrics);
    return loss;
  }, [t(c.logp, true)]);
});
