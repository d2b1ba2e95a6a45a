import assert from "node:assert/strict";
import { gradcheck } from "@rlvr/tensor/testing";
import { valueLoss } from "./value_loss.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { aggRef, mapMat, maskedMeanRef, mat, near, randomCase, t } from "./_test_utils.ts";

Deno.test("valueLoss: golden case by hand (veRL compute_value_loss)", async () => {
  // ε_v = 0.2, old values 0, returns 1.
  // v = 2:   (2 − 1)² = 1,     clipped v̂ = 0.2 → (0.2 − 1)² = 0.64 → max 1
  // v = 0.5: (0.5 − 1)² = 0.25, v̂ = 0.2 → 0.64 → max 0.64 (clipped term wins: no gradient)
  // v = 0.1: (0.1 − 1)² = 0.81, v̂ = 0.1 → 0.81 → tie
  // loss = 0.5·mean(1, 0.64, 0.81)
  const values = t([[2, 0.5, 0.1]], true);
  const { loss, metrics } = valueLoss({
    values,
    oldValues: t([[0, 0, 0]]),
    returns: t([[1, 1, 1]]),
    responseMask: t([[1, 1, 1]]),
  }, { clipRange: 0.2 });
  near(await loss.item(), 0.5 * (1 + 0.64 + 0.81) / 3, 1e-12);
  const m = await readMetrics(metrics, { dispose: true });
  near(m.vf_clipfrac!, 1 / 3);
  near(m.vpred_mean!, 2.6 / 3, 1e-12);
  loss.backward();
  // ∂/∂v: v = 2 → 0.5·2·(2 − 1)/3 = 1/3; v = 0.5 → 0 (the clipped branch is constant);
  // v = 0.1 → tie of two branches with the same slope: 0.5·2·(0.1 − 1)/3 = −0.3
  const g = (await mat(values.grad!))[0]!;
  near(g[0]!, 1 / 3, 1e-12);
  assert.equal(g[1], 0);
  near(g[2]!, -0.3, 1e-12);
});

Deno.test("valueLoss: random case against the plain-loop reference, gradcheck, errors", async () => {
  const c = randomCase(73, 6, 9);
  const v = mapMat(c.adv, (i, j) => c.adv[i]![j]! + 0.3 * Math.cos(i + j));
  const per = mapMat(v, (i, j) => {
    const vv = v[i]![j]!;
    const old = c.adv[i]![j]!;
    const ret = c.logp[i]![j]!;
    const clipped = Math.max(Math.min(vv, old + 0.2), old - 0.2);
    return Math.max((vv - ret) ** 2, (clipped - ret) ** 2);
  });
  for (const mode of ["token-mean", "seq-mean-token-mean"]) {
    const { loss, metrics } = valueLoss({
      values: t(v),
      oldValues: t(c.adv),
      returns: t(c.logp),
      responseMask: t(c.mask),
    }, { clipRange: 0.2, aggregation: mode });
    near(await loss.item(), 0.5 * aggRef(per, c.mask, mode), 1e-12);
    const clipFrac = maskedMeanRef(c.mask, (i, j) => {
      const vv = v[i]![j]!;
      const clipped = Math.max(Math.min(vv, c.adv[i]![j]! + 0.2), c.adv[i]![j]! - 0.2);
      return (clipped - c.logp[i]![j]!) ** 2 > (vv - c.logp[i]![j]!) ** 2 ? 1 : 0;
    });
    near((await readMetrics(metrics, { dispose: true })).vf_clipfrac!, clipFrac, 1e-12);
  }
  const rest = { oldValues: t(c.adv), returns: t(c.logp), responseMask: t(c.mask) };
  await gradcheck((x) => {
    const { loss, metrics } = valueLoss({ ...rest, values: x }, { clipRange: 0.2 });
    disposeMetrics(metrics);
    return loss;
  }, [t(v, true)]);
  assert.throws(
    () => valueLoss({ ...rest, values: t(v) }, { clipRange: -1 }),
    /valueLoss: clipRange must be a finite number >= 0, got -1/,
  );
  assert.throws(
    () => valueLoss({ ...rest, values: t([[1]]) }),
    /valueLoss: oldValues shape \[6,9\] must equal values shape \[1,1\]/,
  );
});
