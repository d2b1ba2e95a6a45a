import assert from "node:assert/strict";
import fc from "fast-check";
import { gradcheck } from "@rlvr/tensor/testing";
import { decoupledPpoLoss, vanillaLoss } from "./ppo_clip.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import {
  aggRef,
  type Case,
  f64,
  inputsOf,
  mapMat,
  maskedMeanRef,
  type Mat,
  mat,
  near,
  randomCase,
  t,
} from "./_test_utils.ts";

/**
 * Independent reference of veRL `compute_policy_loss_vanilla`, token by token in plain JS:
 * the per-token loss, the veRL clip indicators, and d(per-token loss)/d(log π).
 */
function vanillaRef(
  c: Case,
  o: { low: number; high: number; dual: number; mode?: string; weights?: Mat },
) {
  const loss: Mat = [];
  const grad: Mat = [];
  const ind = { low: [] as Mat, high: [] as Mat, dual: [] as Mat };
  c.logp.forEach((row, i) => {
    loss.push([]);
    grad.push([]);
    ind.low.push([]);
    ind.high.push([]);
    ind.dual.push([]);
    row.forEach((lp, j) => {
      const a = c.adv[i]![j]!;
      const lr = Math.min(Math.max(lp - c.old[i]![j]!, -20), 20);
      const r = Math.exp(lr);
      const pg1 = -a * r;
      const pg2 = -a * Math.min(Math.max(r, 1 - o.low), 1 + o.high);
      const clip1 = Math.max(pg1, pg2);
      const pg3 = -a * o.dual;
      let l = clip1;
      let active = pg2 > pg1;
      let dualActive = false;
      if (a < 0 && pg3 < clip1) {
        l = pg3;
        dualActive = true;
        active = true;
      }
      const w = o.weights === undefined ? 1 : o.weights[i]![j]!;
      loss[i]!.push(l * w);
      grad[i]!.push(active ? 0 : -a * r * w);
      ind.low[i]!.push(pg2 > pg1 && a < 0 ? 1 : 0);
      ind.high[i]!.push(pg2 > pg1 && a > 0 ? 1 : 0);
      ind.dual[i]!.push(dualActive ? 1 : 0);
    });
  });
  const mode = o.mode ?? "token-mean";
  const frac = (m: Mat) => maskedMeanRef(c.mask, (i, j) => m[i]![j]!);
  return {
    loss: aggRef(loss, c.mask, mode),
    perToken: loss,
    grad,
    clipfracLow: frac(ind.low),
    clipfracHigh: frac(ind.high),
    clipfracDual: frac(ind.dual),
    ppoKl: maskedMeanRef(c.mask, (i, j) => c.old[i]![j]! - c.logp[i]![j]!),
    ratioMean: maskedMeanRef(c.mask, (i, j) => Math.exp(c.logp[i]![j]! - c.old[i]![j]!)),
  };
}

Deno.test("vanilla: golden case by hand (clip-higher, dual-clip, masking, metrics)", async () => {
  // ε_low = 0.2, ε_high = 0.28, c = 3. Ratios r = π/π_old chosen through log π_old = log π − log r.
  // token (0,0): r = 1.5, A = +1 → max(−1.5, −1.28) = −1.28  (clipped high)
  // token (0,1): r = 1.1, A = +2 → max(−2.2, −2.2) = −2.2   (inside)
  // token (0,2): r = 0.5, A = −1 → max(0.5, 0.8) = 0.8       (clipped low)
  // token (1,0): r = 4.0, A = −1 → max(4, 1.28) = 4 → min(4, 3) = 3 (dual clip)
  // token (1,1): masked (NaN advantage must not leak)
  // token-mean over 4 valid tokens: (−1.28 − 2.2 + 0.8 + 3)/4 = 0.08
  const logp = t([[-1, -1, -1], [-1, -1, -1]], true);
  const old = t([[-1 - Math.log(1.5), -1 - Math.log(1.1), -1 - Math.log(0.5)], [
    -1 - Math.log(4),
    -1,
    -1,
  ]]);
  const { loss, metrics } = vanillaLoss({
    logProbs: logp,
    oldLogProbs: old,
    advantages: t([[1, 2, -1], [-1, NaN, 0]]),
    responseMask: t([[1, 1, 1], [1, 0, 0]]),
  }, { clipRatioLow: 0.2, clipRatioHigh: 0.28, clipRatioC: 3 });
  near(await loss.item(), 0.08, 1e-12);
  const m = await readMetrics(metrics, { dispose: true });
  near(m.clipfrac_high!, 0.25); // (0,0)
  near(m.clipfrac_low!, 0.25); // (0,2)
  near(m.clipfrac_dual!, 0.25); // (1,0)
  near(m.pg_clipfrac!, 0.5);
  // ppo_kl = mean(log π_old − log π) = −mean(log r) = −(ln 1.5 + ln 1.1 + ln 0.5 + ln 4)/4
  near(m.ppo_kl!, -(Math.log(1.5) + Math.log(1.1) + Math.log(0.5) + Math.log(4)) / 4, 1e-12);
  near(m.ratio_mean!, (1.5 + 1.1 + 0.5 + 4) / 4, 1e-12);
  near(m.ratio_min!, 0.5, 1e-12);
  near(m.ratio_max!, 4, 1e-12);
  near(m.masked_frac!, 2 / 6, 1e-12);
  near(m.pg_loss!, 0.08, 1e-12);
  loss.backward();
  // only (0,1) is unclipped: ∂/∂log π = −A·r/4 = −2·1.1/4 = −0.55
  const g = await mat(logp.grad!);
  near(g[0]![1]!, -0.55, 1e-12);
  for (const [i, j] of [[0, 0], [0, 2], [1, 0], [1, 1], [1, 2]] as const) assert.equal(g[i]![j], 0);
});

Deno.test("vanilla: equals agg(−A·ratio) when no clipping is active (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 0, max: 10_000 }),
      fc.constantFrom("token-mean", "seq-mean-token-mean", "seq-mean-token-sum"),
      async (b, tLen, seed, mode) => {
        // |log r| ≤ ~0.3 and ε = 0.5: r ∈ [0.74, 1.35] ⊂ [0.5, 1.5], so no clip is active.
        const c = randomCase(seed, b, tLen, { spread: 0.1 });
        c.old = mapMat(c.old, (i, j) => {
          const d = c.logp[i]![j]! - c.old[i]![j]!;
          return c.logp[i]![j]! - Math.max(-0.3, Math.min(0.3, d));
        });
        const inputs = inputsOf(c);
        const { loss, metrics } = vanillaLoss(inputs, { clipRatio: 0.5, aggregation: mode });
        const perToken = mapMat(
          c.logp,
          (i, j) => -c.adv[i]![j]! * Math.exp(c.logp[i]![j]! - c.old[i]![j]!),
        );
        near(await loss.item(), aggRef(perToken, c.mask, mode), 1e-12);
        const m = await readMetrics(metrics, { dispose: true });
        assert.equal(m.pg_clipfrac, 0);
        assert.equal(m.clipfrac_dual, 0);
        loss.dispose();
      },
    ),
    { numRuns: 50 },
  );
});

Deno.test("vanilla: gradient is zero exactly where clipping is active (property, autograd)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 0, max: 10_000 }),
      fc.constantFrom(2, 3, 10),
      async (b, tLen, seed, dual) => {
        const c = randomCase(seed, b, tLen, { spread: 1.0 });
        const inputs = inputsOf(c);
        const { loss, metrics } = vanillaLoss(inputs, {
          clipRatioLow: 0.2,
          clipRatioHigh: 0.28,
          clipRatioC: dual,
        });
        disposeMetrics(metrics);
        loss.backward();
        const g = await mat(inputs.logProbs.grad!);
        const ref = vanillaRef(c, { low: 0.2, high: 0.28, dual });
        const n = c.mask.flat().reduce((a, v) => a + v, 0);
        g.forEach((row, i) =>
          row.forEach((v, j) => {
            const want = c.mask[i]![j] ? ref.grad[i]![j]! / n : 0;
            if (want === 0) assert.equal(v, 0, `grad[${i},${j}] should be exactly 0`);
            else near(v, want, 1e-12, `grad[${i},${j}]`);
          })
        );
        loss.dispose();
      },
    ),
    { numRuns: 50 },
  );
});

Deno.test("vanilla: random case against the plain-loop veRL reference (loss and metrics)", async () => {
  const c = randomCase(2024, 8, 16, { spread: 0.6, emptyRow: true });
  for (
    const mode of [
      "token-mean",
      "seq-mean-token-mean",
      "seq-mean-token-sum",
      "seq-mean-token-sum-norm",
    ]
  ) {
    const ref = vanillaRef(c, { low: 0.2, high: 0.28, dual: 3, mode });
    const { loss, metrics } = vanillaLoss(inputsOf(c), {
      clipRatioLow: 0.2,
      clipRatioHigh: 0.28,
      aggregation: mode,
    });
    near(await loss.item(), ref.loss, 1e-12, mode);
    const m = await readMetrics(metrics, { dispose: true });
    near(m.clipfrac_low!, ref.clipfracLow, 1e-12);
    near(m.clipfrac_high!, ref.clipfracHigh, 1e-12);
    near(m.clipfrac_dual!, ref.clipfracDual, 1e-12);
    near(m.ppo_kl!, ref.ppoKl, 1e-12);
    near(m.ratio_mean!, ref.ratioMean, 1e-12);
    loss.dispose();
  }
  // The symmetric default (ε = 0.2, c = 3) and TRL's form with the dual clip off.
  const ref = vanillaRef(c, { low: 0.2, high: 0.2, dual: Infinity });
  const { loss } = vanillaLoss(inputsOf(c), { clipRatioC: Infinity });
  near(await loss.item(), ref.loss, 1e-12);
});

Deno.test("vanilla: gradcheck away from the clip boundaries", async () => {
  const c = randomCase(5, 3, 4, { spread: 0.05 });
  const rest = inputsOf(c);
  await gradcheck((x) => {
    const { loss, metrics } = vanillaLoss({ ...rest, logProbs: x }, { clipRatio: 0.2 });
    disposeMetrics(metrics);
    return loss;
  }, [t(c.logp, true)]);
  // with tokens clipped well inside the clipped region (spread 1 → |log r| ≫ 1e-6 from bounds)
  const d = randomCase(6, 3, 4, { spread: 1 });
  const restD = inputsOf(d);
  await gradcheck((x) => {
    const { loss, metrics } = vanillaLoss({ ...restD, logProbs: x }, { clipRatio: 0.2 });
    disposeMetrics(metrics);
    return loss;
  }, [t(d.logp, true)]);
});

Deno.test("decoupled_ppo: behaviour weights exp(old − rollout), capped (AReaL)", async () => {
  // one token per row; r = π/π_prox = 1 (inside), A = 1 → ℓ = −w with w = π_prox/π_behav
  // row 0: w = e^{0.5}; row 1: w = e^{2} = 7.39 > cap 5 → 0; mean over 2 tokens
  const { loss, metrics } = decoupledPpoLoss({
    logProbs: t([[-1], [-1]], true),
    oldLogProbs: t([[-1], [-1]]),
    rolloutLogProbs: t([[-1.5], [-3]]),
    advantages: t([[1], [1]]),
    responseMask: t([[1], [1]]),
  }, { offPolicy: { decoupled: { cap: 5 } } });
  near(await loss.item(), -Math.exp(0.5) / 2, 1e-12);
  const m = await readMetrics(metrics, { dispose: true });
  near(m.behav_capped_frac!, 0.5);
  near(m.behav_weight_max!, Math.exp(2), 1e-12);

  const c = randomCase(77, 5, 6, { spread: 0.4 });
  const weights = mapMat(c.old, (i, j) => {
    const w = Math.exp(c.old[i]![j]! - c.rollout[i]![j]!);
    return w > 1.5 ? 0 : w;
  });
  const ref = vanillaRef(c, { low: 0.2, high: 0.2, dual: 3, weights });
  const out = decoupledPpoLoss(inputsOf(c, { rolloutLogProbs: t(c.rollout) }), {
    offPolicy: { decoupled: { cap: 1.5 } },
  });
  near(await out.loss.item(), ref.loss, 1e-12);
  assert.throws(
    () => decoupledPpoLoss(inputsOf(c)),
    /decoupled_ppo: offPolicy.decoupled needs rolloutLogProbs/,
  );
});

Deno.test("vanilla: invalid inputs and options name the argument and the value", () => {
  const c = randomCase(1, 2, 3);
  const ok = inputsOf(c);
  assert.throws(
    () => vanillaLoss(ok, { clipRatioLow: 1.5 }),
    /vanilla: clipRatioLow must be a finite number >= 0 and <= 1, got 1.5/,
  );
  assert.throws(
    () => vanillaLoss(ok, { clipRatioHigh: -0.1 }),
    /clipRatioHigh must be a finite number >= 0, got -0.1/,
  );
  assert.throws(
    () => vanillaLoss(ok, { clipRatio: NaN }),
    /clipRatio must be a finite number >= 0, got NaN/,
  );
  assert.throws(() => vanillaLoss(ok, { clipRatioC: 1 }), /clipRatioC must be a number > 1, got 1/);
  assert.throws(
    () => vanillaLoss(ok, { aggregation: "mean" }),
    /unknown aggregation mode "mean"; valid keys: token-mean/,
  );
  assert.throws(
    () => vanillaLoss(ok, { clipratio: 0.1 } as never),
    /vanilla: unknown option "clipratio"; valid options: aggregation, globalTokens/,
  );
  assert.throws(
    () => vanillaLoss({ ...ok, advantages: t([[1, 2]]) }),
    /vanilla: advantages shape \[1,2\] must equal logProbs shape \[2,3\]/,
  );
  assert.throws(
    () => vanillaLoss({ ...ok, logProbs: t([1, 2, 3]) }),
    /vanilla: logProbs must be a 2-D \[B, T\] tensor, got shape \[3\]/,
  );
  const { oldLogProbs: _o, ...noOld } = ok;
  assert.throws(() => vanillaLoss(noOld), /vanilla: oldLogProbs is required by this loss/);
  assert.throws(() => vanillaLoss(ok, { klCoef: 0.1 }), /vanilla: klCoef = 0.1 needs refLogProbs/);
  assert.throws(
    () => vanillaLoss({ ...ok, refLogProbs: t(c.ref) }, { klCoef: 0.1, klType: "k9" as never }),
    /^RangeError: vanilla: klType: unknown KL estimator "k9"; valid keys: k1/,
  );
  assert.throws(
    () => vanillaLoss(ok, { entropyCoef: 0.01 }),
    /entropyCoef = 0.01 needs entropy or logits/,
  );
  assert.throws(
    () =>
      vanillaLoss({ ...ok, rolloutLogProbs: t(c.rollout) }, {
        offPolicy: { tis: {}, decoupled: {} },
      }),
    /offPolicy.tis and offPolicy.decoupled/,
  );
  assert.equal(f64.memory().liveBuffers >= 0, true);
});

Deno.test("vanilla: returns only the loss and metrics (no leaked tensors)", async () => {
  const c = randomCase(9, 3, 5);
  const inputs = inputsOf(c, {
    refLogProbs: t(c.ref),
    entropy: t(c.adv),
    rolloutLogProbs: t(c.rollout),
  });
  const before = f64.memory().liveBuffers;
  const { loss, metrics } = vanillaLoss(inputs, {
    klCoef: 0.1,
    entropyCoef: 0.01,
    topEntropyFraction: 0.5,
    offPolicy: {
      tis: { level: "sequence", cap: 2 },
      rejection: { upper: 5 },
      sequenceMaskThreshold: 1,
    },
  });
  loss.backward();
  loss.dispose();
  const values = await readMetrics(metrics, { dispose: true });
  assert.ok(Object.values(values).every(Number.isFinite));
  inputs.logProbs.grad!.dispose();
  inputs.logProbs.grad = null;
  assert.equal(f64.memory().liveBuffers, before);
});
