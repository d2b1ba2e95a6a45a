import assert from "node:assert/strict";
import fc from "fast-check";
import { gradcheck } from "@rlvr/tensor/testing";
import { entropyLoss, highEntropyMask, tokenEntropy } from "./entropy.ts";
import { vanillaLoss } from "./ppo_clip.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { aggRef, f64, inputsOf, mapMat, mat, near, randomCase, t } from "./_test_utils.ts";
import { tensor } from "@rlvr/tensor";

/** torch.quantile (linear interpolation) and TRL get_high_entropy_mask, in plain JS. */
function highEntropyRef(h: number[][], mask: number[][], topFraction: number): number[][] {
  const vals = h.flat().filter((_, k) => mask.flat()[k]).sort((a, b) => a - b);
  if (vals.length === 0) return mapMat(h, () => 0);
  const pos = (1 - topFraction) * (vals.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, vals.length - 1);
  const q = vals[lo]! + (pos - lo) * (vals[hi]! - vals[lo]!);
  return mapMat(h, (i, j) => (mask[i]![j] && h[i]![j]! >= q ? 1 : 0));
}

Deno.test("highEntropyMask: golden case and TRL's quantile semantics (property)", async () => {
  // entropies [0.1, 2, 0.5, 3, 1, (masked 9)], top 40%: quantile_0.6 at position 0.6·4 = 2.4
  // of [0.1, 0.5, 1, 2, 3] → 1 + 0.4·(2 − 1) = 1.4 → keep 2 and 3
  const h = t([[0.1, 2, 0.5], [3, 1, 9]]);
  const mask = t([[1, 1, 1], [1, 1, 0]]);
  assert.deepEqual(await mat(highEntropyMask(h, mask, { topFraction: 0.4 })), [[0, 1, 0], [
    1,
    0,
    0,
  ]]);
  assert.deepEqual(await mat(highEntropyMask(h, mask, { topFraction: 1 })), [[1, 1, 1], [1, 1, 0]]);
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 0, max: 10_000 }),
      fc.constantFrom(0.05, 0.2, 0.5, 0.8, 1),
      fc.boolean(),
      async (b, tLen, seed, q, ties) => {
        const c = randomCase(seed, b, tLen, { emptyRow: b > 1 });
        const ent = ties
          ? mapMat(c.adv, (i, j) => Math.round(Math.abs(c.adv[i]![j]!) * 2) / 2)
          : mapMat(c.adv, (i, j) => Math.abs(c.adv[i]![j]!));
        const got = await mat(highEntropyMask(t(ent), t(c.mask), { topFraction: q }));
        assert.deepEqual(got, highEntropyRef(ent, c.mask, q));
      },
    ),
    { numRuns: 80 },
  );
  assert.throws(
    () => highEntropyMask(h, mask, { topFraction: 0 }),
    /topFraction must be a finite number > 0 and <= 1, got 0/,
  );
});

Deno.test("entropy: tokenEntropy, entropyLoss by hand, gradients", async () => {
  // uniform over 4 → ln 4; one-hot-ish logits [0, −1e9] → ~0
  const logits = tensor([[[0, 0, 0, 0], [0, -1e9, -1e9, -1e9]]], { backend: f64 });
  const h = (await mat(tokenEntropy(logits)))[0]!;
  near(h[0]!, Math.log(4), 1e-12);
  near(h[1]!, 0, 1e-12);
  assert.throws(() => tokenEntropy(t([[1, 2]])), /logits must be \[B, T, V\]/);
  near(
    await entropyLoss(t([[1, 3], [2, 7]]), t([[1, 1], [1, 0]]), "seq-mean-token-mean").item(),
    (2 + 2) / 2,
  );
  const c = randomCase(3, 3, 4);
  const mask = t(c.mask);
  await gradcheck((x) => entropyLoss(x, mask), [t(c.adv, true)]);
});

Deno.test("entropy in a policy loss: bonus −α·agg(H), metric, top-entropy mask", async () => {
  const c = randomCase(17, 4, 6, { spread: 0.05 });
  const ent = mapMat(c.adv, (i, j) => Math.abs(c.adv[i]![j]!) + 0.01 * j);
  const pg = mapMat(c.logp, (i, j) => -c.adv[i]![j]! * Math.exp(c.logp[i]![j]! - c.old[i]![j]!));
  const hRef = aggRef(ent, c.mask, "token-mean");
  const out = vanillaLoss(inputsOf(c, { entropy: t(ent) }), { entropyCoef: 0.01 });
  near(await out.loss.item(), aggRef(pg, c.mask, "token-mean") - 0.01 * hRef, 1e-12);
  near((await readMetrics(out.metrics, { dispose: true })).entropy!, hRef, 1e-12);
  // the 80/20 mask: the policy-gradient loss only on the top 20% entropy tokens
  const keep = highEntropyRef(ent, c.mask, 0.2);
  const masked = mapMat(pg, (i, j) => pg[i]![j]! * keep[i]![j]!);
  const top = vanillaLoss(inputsOf(c, { entropy: t(ent) }), { topEntropyFraction: 0.2 });
  near(await top.loss.item(), aggRef(masked, c.mask, "token-mean"), 1e-12);
  disposeMetrics(top.metrics);
  // entropy from logits, with the bonus back-propagating into the logits
  const logits = tensor(Array.from({ length: 4 * 6 * 3 }, (_, k) => Math.sin(k)), {
    shape: [4, 6, 3],
    backend: f64,
    requiresGrad: true,
  });
  const withLogits = vanillaLoss(inputsOf(c, { logits }), { entropyCoef: 0.1 });
  withLogits.loss.backward();
  assert.ok(logits.grad !== null);
  disposeMetrics(withLogits.metrics);
  assert.throws(
    () => vanillaLoss(inputsOf(c, { logits: t([[1]]) })),
    /vanilla: logits shape \[1, 1\] must be \[B, T, V\] with \[B, T\] = \[4, 6\] of logProbs/,
  );
});
