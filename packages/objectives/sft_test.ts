import assert from "node:assert/strict";
import { gradcheck } from "@rlvr/tensor/testing";
import { sftLoss } from "./sft.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { aggRef, mapMat, near, randomCase, t } from "./_test_utils.ts";

Deno.test("sftLoss: golden case, reference, gradcheck", async () => {
  // −log π on valid tokens [1, 3, 2] → token-mean 2; seq-mean-token-mean (2 + 2)/2 = 2; sum-norm (4 + 2)/2/2
  const inputs = { logProbs: t([[-1, -3], [-2, -9]], true), responseMask: t([[1, 1], [1, 0]]) };
  near(await sftLoss(inputs).loss.item(), 2);
  near(await sftLoss(inputs, { aggregation: "seq-mean-token-sum-norm" }).loss.item(), 1.5);
  const { metrics } = sftLoss(inputs);
  near((await readMetrics(metrics, { dispose: true })).ppl!, Math.exp(2), 1e-12);
  const c = randomCase(5, 5, 6);
  const nll = mapMat(c.logp, (i, j) => -c.logp[i]![j]!);
  near(
    await sftLoss({ logProbs: t(c.logp), responseMask: t(c.mask) }).loss.item(),
    aggRef(nll, c.mask, "token-mean"),
    1e-12,
  );
  const mask = t(c.mask);
  await gradcheck((x) => {
    const out = sftLoss({ logProbs: x, responseMask: mask });
    disposeMetrics(out.metrics);
    return out.loss;
  }, [t(c.logp, true)]);
  assert.throws(
    () => sftLoss({ logProbs: t([[1]]), responseMask: t([[1, 1]]) }),
    /sftLoss: responseMask shape \[1,2\] must equal logProbs shape \[1,1\]/,
  );
});
