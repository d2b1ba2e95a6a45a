import { gradcheck } from "@rlvr/tensor/testing";
import { gmpoLoss } from "./gmpo.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { type Case, inputsOf, maskedMeanRef, mat, near, randomCase, t } from "./_test_utils.ts";

/** Plain-loop reference of veRL `compute_policy_loss_geo_mean` (mean over non-empty rows). */
function gmpoRef(c: Case, low: number, high: number) {
  let total = 0;
  let rows = 0;
  c.logp.forEach((row, i) => {
    let sumLr = 0;
    let sumA = 0;
    let n = 0;
    row.forEach((lp, j) => {
      if (!c.mask[i]![j]) return;
      const a = c.adv[i]![j]!;
      const d = lp - c.old[i]![j]!;
      const dc = Math.min(Math.max(d, -low), high);
      const sg = Math.sign(a);
      sumLr += sg * Math.min(sg * d, sg * dc);
      sumA += a;
      n++;
    });
    if (n === 0) return;
    total += -(sumA / (n + 1e-8)) * Math.exp(sumLr / (n + 1e-8));
    rows++;
  });
  const clippedWith = (sign: number) =>
    maskedMeanRef(c.mask, (i, j) => {
      const d = c.logp[i]![j]! - c.old[i]![j]!;
      const a = c.adv[i]![j]!;
      return d !== Math.min(Math.max(d, -low), high) && Math.sign(a) === sign ? 1 : 0;
    });
  return { loss: total / rows, high: clippedWith(1), low: clippedWith(-1) };
}

Deno.test("gmpo: golden case by hand", async () => {
  // ε = 0.4 (log space). Row 0, A = 1: log-ratios 0.6 → clamp 0.4 (min(0.6, 0.4) = 0.4),
  // and −0.2 (inside) → ρ = exp((0.4 − 0.2)/2) = e^{0.1}; ℓ_0 = −e^{0.1}
  // Row 1, A = −1: log-ratio −0.6 → sgn·δ = 0.6, sgn·clamp = 0.4, min 0.4 → δ̃ = −0.4; ρ = e^{−0.4};
  // ℓ_1 = +e^{−0.4}. Mean over 2 rows.
  const { loss, metrics } = gmpoLoss({
    logProbs: t([[0, 0], [0, 0]], true),
    oldLogProbs: t([[-0.6, 0.2], [0.6, 0]]),
    advantages: t([[1, 1], [-1, -1]]),
    responseMask: t([[1, 1], [1, 0]]),
  });
  const len = 2 + 1e-8;
  near(
    await loss.item(),
    (-(2 / len) * Math.exp(0.2 / len) + (1 / (1 + 1e-8)) * Math.exp(-0.4 / (1 + 1e-8))) / 2,
    1e-12,
  );
  const m = await readMetrics(metrics, { dispose: true });
  near(m.clipfrac_high!, 1 / 3);
  near(m.clipfrac_low!, 1 / 3);
});

Deno.test("gmpo: random case against the plain-loop veRL reference", async () => {
  const c = randomCase(123, 8, 10, { spread: 0.5, seqAdv: true });
  for (const eps of [0.2, 0.4]) {
    const ref = gmpoRef(c, eps, eps);
    const { loss, metrics } = gmpoLoss(inputsOf(c), { clipRatio: eps });
    near(await loss.item(), ref.loss, 1e-12);
    const m = await readMetrics(metrics, { dispose: true });
    near(m.clipfrac_high!, ref.high, 1e-12);
    near(m.clipfrac_low!, ref.low, 1e-12);
  }
});

Deno.test("gmpo: gradcheck away from the clip boundaries", async () => {
  const c = randomCase(14, 3, 4, { spread: 0.6 });
  const rest = inputsOf(c);
  await gradcheck((x) => {
    const { loss, metrics } = gmpoLoss({ ...rest, logProbs: x });
    disposeMetrics(metrics);
    return loss;
  }, [t(c.logp, true)]);
  await mat(t([[0]]));
});
