import assert from "node:assert/strict";
import { gradcheck } from "@rlvr/tensor/testing";
import { definePolicyLoss } from "./policy_loss.ts";
import { vanillaLoss } from "./ppo_clip.ts";
import { klPenalty } from "./kl.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { aggRef, inputsOf, mapMat, mat, near, randomCase, t } from "./_test_utils.ts";

Deno.test("policy loss frame: KL-in-loss adds β·agg(k3) (GRPO), with its gradient", async () => {
  const c = randomCase(31, 4, 5, { spread: 0.05 });
  const pg = mapMat(c.logp, (i, j) => -c.adv[i]![j]! * Math.exp(c.logp[i]![j]! - c.old[i]![j]!));
  const k3 = mapMat(c.logp, (i, j) => {
    const lr = c.ref[i]![j]! - c.logp[i]![j]!;
    return Math.exp(lr) - lr - 1;
  });
  for (const mode of ["token-mean", "seq-mean-token-mean"]) {
    const out = vanillaLoss(inputsOf(c, { refLogProbs: t(c.ref) }), {
      klCoef: 0.04,
      aggregation: mode,
    });
    near(await out.loss.item(), aggRef(pg, c.mask, mode) + 0.04 * aggRef(k3, c.mask, mode), 1e-12);
    const m = await readMetrics(out.metrics, { dispose: true });
    near(m.kl_loss!, aggRef(k3, c.mask, mode), 1e-12);
    near(m.pg_loss!, aggRef(pg, c.mask, mode), 1e-12);
  }
  const rest = inputsOf(c, { refLogProbs: t(c.ref) });
  await gradcheck((x) => {
    const out = vanillaLoss({ ...rest, logProbs: x }, { klCoef: 0.5, klType: "k2" });
    disposeMetrics(out.metrics);
    return out.loss;
  }, [t(c.logp, true)]);
  assert.deepEqual(await mat(klPenalty(t([[0]]), t([[0]]))), [[0]]);
});

Deno.test("policy loss frame: NaN/inf padding never reaches the loss or the gradient", async () => {
  const c = randomCase(32, 3, 5);
  const poison = (m: number[][], v: number) =>
    m.map((r, i) => r.map((x, j) => (c.mask[i]![j] ? x : v)));
  const clean = inputsOf(c);
  const dirty = inputsOf({
    ...c,
    adv: poison(c.adv, NaN),
    old: poison(c.old, -Infinity),
    logp: poison(c.logp, NaN),
  });
  const a = vanillaLoss(clean);
  const b = vanillaLoss(dirty);
  near(await b.loss.item(), await a.loss.item(), 1e-14);
  a.loss.backward();
  b.loss.backward();
  const ga = await mat(clean.logProbs.grad!);
  const gb = await mat(dirty.logProbs.grad!);
  assert.deepEqual(gb, ga);
  const mb = await readMetrics(b.metrics, { dispose: true });
  assert.ok(Object.values(mb).every(Number.isFinite));
  disposeMetrics(a.metrics);
});

Deno.test("policy loss frame: global token normalisation sums micro-batches to the full batch", async () => {
  const c = randomCase(33, 6, 5, { spread: 0.5 });
  const full = vanillaLoss(inputsOf(c), { aggregation: "token-mean" });
  const n = c.mask.flat().reduce((a, v) => a + v, 0);
  let sum = 0;
  for (const [s, e] of [[0, 2], [2, 5], [5, 6]]) {
    const rows = (m: number[][]) => m.slice(s, e);
    const part = vanillaLoss(
      inputsOf({
        ...c,
        logp: rows(c.logp),
        old: rows(c.old),
        adv: rows(c.adv),
        mask: rows(c.mask),
      }),
      { globalTokens: n },
    );
    sum += await part.loss.item();
    disposeMetrics(part.metrics);
  }
  near(sum, await full.loss.item(), 1e-12);
});

Deno.test("definePolicyLoss: custom cores get defaults, validation and metrics", async () => {
  const halved = definePolicyLoss(
    "test_half",
    (ctx) => ({ perToken: ctx.advantages.mul(ctx.logProbs).mul(-ctx.options.clipRatioHigh) }),
    {
      defaults: { clipRatioHigh: 0.5, aggregation: "seq-mean-token-sum" },
      requiresOld: false,
      validate: (o) => {
        if (o.clipRatioHigh > 0.9) {
          throw new RangeError(`test_half: clipRatioHigh too large, got ${o.clipRatioHigh}`);
        }
      },
    },
  );
  const inputs = {
    logProbs: t([[-1, -2]], true),
    advantages: t([[1, 1]]),
    responseMask: t([[1, 1]]),
  };
  const { loss, metrics } = halved(inputs);
  near(await loss.item(), 0.5 * 3); // seq-mean-token-sum of 0.5·[1, 2]
  const m = await readMetrics(metrics, { dispose: true });
  assert.equal(m.pg_clipfrac, 0);
  assert.throws(
    () => halved(inputs, { clipRatioHigh: 2 }),
    /test_half: clipRatioHigh too large, got 2/,
  );
  assert.throws(() => halved(null as never), /test_half: inputs must be an object/);
  assert.throws(
    () => halved({ ...inputs, advantages: undefined as never }),
    /test_half: advantages is required/,
  );
});
