import assert from "node:assert/strict";
import fc from "fast-check";
import { gradcheck } from "@rlvr/tensor/testing";
import { gspoSeqLoss, gspoTokenLoss } from "./gspo.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import {
  aggRef,
  type Case,
  inputsOf,
  maskedMeanRef,
  type Mat,
  mat,
  near,
  randomCase,
  t,
} from "./_test_utils.ts";

/** Plain-loop reference of veRL `compute_policy_loss_gspo` (GSPO-token, seq-mean-token-mean). */
function gspoTokenRef(c: Case, low: number, high: number) {
  const loss: Mat = [];
  const clipped: Mat = [];
  c.logp.forEach((row, i) => {
    let s = 0;
    let n = 0;
    row.forEach((lp, j) => {
      if (c.mask[i]![j]) {
        s += lp - c.old[i]![j]!;
        n++;
      }
    });
    const logS = Math.min(s / Math.max(n, 1), 10);
    const ratio = Math.exp(logS);
    loss.push(row.map((_, j) => {
      const a = c.adv[i]![j]!;
      return Math.max(-a * ratio, -a * Math.min(Math.max(ratio, 1 - low), 1 + high));
    }));
    clipped.push(row.map((_, j) => {
      const a = c.adv[i]![j]!;
      return -a * Math.min(Math.max(ratio, 1 - low), 1 + high) > -a * ratio ? 1 : 0;
    }));
  });
  return {
    loss: aggRef(loss, c.mask, "seq-mean-token-mean"),
    clipfrac: maskedMeanRef(c.mask, (i, j) => clipped[i]![j]!),
  };
}

Deno.test("gspo_seq: golden case by hand", async () => {
  // Row 0: log-ratios 0.2 and −0.1 → s = exp(0.05) = 1.05127; A = 1; ε = (0.2, 0.04)
  //   → max(−1.05127, −1.04) = −1.04 (clipped high, no gradient)
  // Row 1: log-ratio −0.05 on its single valid token → s = e^{−0.05} = 0.951229; A = −2
  //   → max(1.902459, 2·0.96 = 1.92) = 1.92 (clipped low)
  // Row 2: log-ratio 0.01 → s = 1.01005; A = 1 → −1.01005 (inside)
  // seq-mean-token-mean = (−1.04 + 1.92 − 1.0100502)/3
  const logp = t([[-1, -1], [-1, -1], [-1, -1]], true);
  const old = t([[-1.2, -0.9], [-0.95, -7], [-1.01, -7]]);
  const { loss, metrics } = gspoSeqLoss({
    logProbs: logp,
    oldLogProbs: old,
    advantages: t([[1, 1], [-2, -2], [1, 1]]),
    responseMask: t([[1, 1], [1, 0], [1, 0]]),
  }, { clipRatioLow: 0.04, clipRatioHigh: 0.04 });
  near(await loss.item(), (-1.04 + 1.92 - Math.exp(0.01)) / 3, 1e-12);
  const m = await readMetrics(metrics, { dispose: true });
  near(m.clipfrac_high!, 2 / 4); // both valid tokens of row 0
  near(m.clipfrac_low!, 1 / 4); // row 1
  near(m.seq_ratio_mean!, (Math.exp(0.05) + Math.exp(-0.05) + Math.exp(0.01)) / 3, 1e-12);
  loss.backward();
  // only row 2 is unclipped: ∂ℓ_2/∂log π_{2,0} = −A·s/1 token, then /3 sequences
  const g = await mat(logp.grad!);
  assert.deepEqual(g[0], [0, 0]);
  assert.deepEqual(g[1], [0, 0]);
  near(g[2]![0]!, -Math.exp(0.01) / 3, 1e-12);
});

/** Plain-loop reference of the sequence-level GSPO objective (mean advantage per sequence). */
function gspoSeqRef(c: Case, low: number, high: number): number {
  let total = 0;
  let rows = 0;
  c.logp.forEach((row, i) => {
    let s = 0;
    let a = 0;
    let n = 0;
    row.forEach((lp, j) => {
      if (!c.mask[i]![j]) return;
      s += lp - c.old[i]![j]!;
      a += c.adv[i]![j]!;
      n++;
    });
    if (n === 0) return;
    const ratio = Math.exp(Math.min(s / n, 10));
    const adv = a / n;
    total += Math.max(-adv * ratio, -adv * Math.min(Math.max(ratio, 1 - low), 1 + high));
    rows++;
  });
  return total / rows;
}

Deno.test("gspo_token: golden case by hand", async () => {
  // One sequence, log-ratios 0.3 and −0.1 → s = e^{0.1} = 1.10517 for both tokens.
  // ε = 0.05: token 0 (A = 1): max(−1.10517, −1.05) = −1.05 (clipped, no gradient);
  // token 1 (A = −1): max(1.10517, 1.05) = 1.10517 (inside: gradient −A·s = s).
  // seq-mean-token-mean = (−1.05 + 1.10517)/2
  const logp = t([[-1, -1]], true);
  const { loss, metrics } = gspoTokenLoss({
    logProbs: logp,
    oldLogProbs: t([[-1.3, -0.9]]),
    advantages: t([[1, -1]]),
    responseMask: t([[1, 1]]),
  }, { clipRatio: 0.05 });
  near(await loss.item(), (-1.05 + Math.exp(0.1)) / 2, 1e-12);
  const m = await readMetrics(metrics, { dispose: true });
  near(m.clipfrac_high!, 0.5);
  assert.equal(m.clipfrac_low, 0);
  loss.backward();
  const g = (await mat(logp.grad!))[0]!;
  assert.equal(g[0], 0);
  near(g[1]!, Math.exp(0.1) / 2, 1e-12);
});

Deno.test("gspo_seq: random case (per-token advantages) against the plain-loop reference", async () => {
  const c = randomCase(32, 8, 12, { spread: 0.3, emptyRow: true });
  for (const [low, high] of [[3e-4, 4e-4], [0.05, 0.1]] as const) {
    const { loss, metrics } = gspoSeqLoss(inputsOf(c), { clipRatioLow: low, clipRatioHigh: high });
    near(await loss.item(), gspoSeqRef(c, low, high), 1e-12);
    disposeMetrics(metrics);
  }
});

Deno.test("gspo_token: random case against the plain-loop veRL reference", async () => {
  const c = randomCase(31, 8, 12, { spread: 0.3 });
  for (const [low, high] of [[3e-4, 4e-4], [0.2, 0.28]] as const) {
    const ref = gspoTokenRef(c, low, high);
    const { loss, metrics } = gspoTokenLoss(inputsOf(c), {
      clipRatioLow: low,
      clipRatioHigh: high,
    });
    near(await loss.item(), ref.loss, 1e-12);
    near((await readMetrics(metrics, { dispose: true })).pg_clipfrac!, ref.clipfrac, 1e-12);
  }
});

Deno.test("gspo_seq and gspo_token agree in value and gradient with sequence advantages (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 0, max: 10_000 }),
      fc.constantFrom(0.05, 0.2),
      async (b, tLen, seed, eps) => {
        const c = randomCase(seed, b, tLen, { seqAdv: true, spread: 0.3 });
        const a = inputsOf(c);
        const bIn = inputsOf(c);
        const seqOut = gspoSeqLoss(a, { clipRatio: eps });
        const tokOut = gspoTokenLoss(bIn, { clipRatio: eps });
        near(await seqOut.loss.item(), await tokOut.loss.item(), 1e-12);
        seqOut.loss.backward();
        tokOut.loss.backward();
        const ga = await mat(a.logProbs.grad!);
        const gb = await mat(bIn.logProbs.grad!);
        ga.forEach((row, i) => row.forEach((v, j) => near(v, gb[i]![j]!, 1e-12)));
        disposeMetrics(seqOut.metrics);
        disposeMetrics(tokOut.metrics);
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("gspo_seq / gspo_token: gradcheck away from the clip boundaries", async () => {
  // GSPO-token's stop-gradients make its gradient differ from the derivative of its value unless
  // the advantages are constant per sequence; then both equal GSPO's, which has no stop-gradient.
  const c = randomCase(8, 3, 4, { spread: 0.3, seqAdv: true });
  for (const fn of [gspoSeqLoss, gspoTokenLoss]) {
    const rest = inputsOf(c);
    await gradcheck((x) => {
      const { loss, metrics } = fn({ ...rest, logProbs: x }, { clipRatio: 0.5 });
      disposeMetrics(metrics);
      return loss;
    }, [t(c.logp, true)]);
  }
});

Deno.test("gspo_seq: defaults are the paper's clip range and seq-mean-token-mean", async () => {
  const c = randomCase(4, 4, 5, { spread: 0.001, seqAdv: true });
  const ref = gspoTokenRef(c, 3e-4, 4e-4);
  near(await gspoSeqLoss(inputsOf(c)).loss.item(), ref.loss, 1e-12);
  // caller's clipRatio overrides the loss defaults
  const wide = gspoTokenRef(c, 0.2, 0.2);
  near(await gspoSeqLoss(inputsOf(c), { clipRatio: 0.2 }).loss.item(), wide.loss, 1e-12);
});
