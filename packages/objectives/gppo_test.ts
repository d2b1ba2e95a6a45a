import assert from "node:assert/strict";
import { gradcheck } from "@rlvr/tensor/testing";
import { gppoLoss } from "./gppo.ts";
import { vanillaLoss } from "./ppo_clip.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { type Case, inputsOf, type Mat, mat, near, randomCase, t } from "./_test_utils.ts";

/** Plain-loop reference of Klear-Reasoner `compute_gppo_loss`: per-token loss and ∂ℓ/∂log π. */
function gppoRef(c: Case, low: number, high: number, dual: number) {
  const grad: Mat = [];
  let total = 0;
  let n = 0;
  c.logp.forEach((row, i) => {
    grad.push([]);
    row.forEach((lp, j) => {
      const a = c.adv[i]![j]!;
      const r = Math.exp(lp - c.old[i]![j]!);
      const pg1 = -a * r;
      const clippedR = Math.min(Math.max(r, 1 - low), 1 + high);
      const pg2 = -a * clippedR;
      // gradient of the active branch: pg1 → −A·r; pg2 clipped → −A·(1 ∓ ε); inside → −A·r
      let l = Math.max(pg1, pg2);
      let g = pg2 > pg1 ? -a * clippedR : -a * r;
      if (a < 0 && -a * dual < l) {
        l = -a * dual;
        g = 0;
      }
      grad[i]!.push(g);
      if (c.mask[i]![j]) {
        total += l;
        n++;
      }
    });
  });
  return { loss: total / n, grad, n };
}

Deno.test("gppo: golden case by hand", async () => {
  // ε = 0.2, c = 3.
  // token 0: r = 1.5, A = 1 → value max(−1.5, −1.2) = −1.2; gradient −A·(1 + ε) = −1.2
  // token 1: r = 0.5, A = −1 → value max(0.5, 0.8) = 0.8; gradient −A·(1 − ε) = 0.8
  // token 2: r = 5, A = −1 → dual clip: min(5, 3) = 3; gradient 0
  const logp = t([[0, 0, 0]], true);
  const { loss, metrics } = gppoLoss({
    logProbs: logp,
    oldLogProbs: t([[-Math.log(1.5), -Math.log(0.5), -Math.log(5)]]),
    advantages: t([[1, -1, -1]]),
    responseMask: t([[1, 1, 1]]),
  });
  near(await loss.item(), (-1.2 + 0.8 + 3) / 3, 1e-12);
  const m = await readMetrics(metrics, { dispose: true });
  near(m.clipfrac_high!, 1 / 3);
  near(m.clipfrac_low!, 1 / 3);
  near(m.clipfrac_dual!, 1 / 3);
  loss.backward();
  const g = (await mat(logp.grad!))[0]!;
  near(g[0]!, -1.2 / 3, 1e-12);
  near(g[1]!, 0.8 / 3, 1e-12);
  assert.equal(g[2], 0);
});

Deno.test("gppo: same value as vanilla PPO, reference gradient on clipped tokens", async () => {
  const c = randomCase(55, 6, 8, { spread: 0.8 });
  const ref = gppoRef(c, 0.2, 0.28, 3);
  const inputs = inputsOf(c);
  const { loss, metrics } = gppoLoss(inputs, { clipRatioLow: 0.2, clipRatioHigh: 0.28 });
  disposeMetrics(metrics);
  const v = vanillaLoss(inputsOf(c), { clipRatioLow: 0.2, clipRatioHigh: 0.28 });
  disposeMetrics(v.metrics);
  near(await loss.item(), ref.loss, 1e-12);
  near(await loss.item(), await v.loss.item(), 1e-12);
  loss.backward();
  const g = await mat(inputs.logProbs.grad!);
  g.forEach((row, i) =>
    row.forEach((x, j) => near(x, c.mask[i]![j] ? ref.grad[i]![j]! / ref.n : 0, 1e-12))
  );
});

Deno.test("gppo: gradcheck where no token is clipped", async () => {
  // On clipped tokens GPPO's gradient −A·(1 ± ε)·∇log π is by design not the derivative of its
  // (constant) value; it is checked against the reference above. Elsewhere it is PPO's.
  const c = randomCase(13, 3, 4, { spread: 0.05 });
  const rest = inputsOf(c);
  await gradcheck((x) => {
    const { loss, metrics } = gppoLoss({ ...rest, logProbs: x }, { clipRatio: 0.5 });
    disposeMetrics(metrics);
    return loss;
  }, [t(c.logp, true)]);
});
