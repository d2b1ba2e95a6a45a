/**
 * Golden tests of the veRL keys of issue 21 against an independent float64 reference of veRL's
 * `verl/trainer/ppo/core_algos.py` (commit 1dda039b9c6311889a9c9a26040677e1254814f9), written as
 * plain loops over arrays from the formulas, never by calling this package. Inputs are generated
 * by seeded random cases with ragged masks and fully masked rows.
 *
 * Tolerance: every comparison is `|actual − expected| ≤ TOL·(1 + |expected|)` with
 * `TOL = 1e-7`: the f64 backend computes in float64, and veRL adds 1e-8 to some denominators
 * (`Σm + 1e-8`) where we divide by the exact count, a relative difference of at most 1e-8.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { Rng, type Tensor } from "@rlvr/tensor";
import { gradcheck } from "@rlvr/tensor/testing";
import { aggregate } from "./aggregate.ts";
import { bypassModeLoss } from "./bypass.ts";
import { cispoLoss } from "./cispo.ts";
import { clipCovLoss, klCovLoss } from "./cov.ts";
import { reinforceLoss } from "./reinforce.ts";
import { dppoKlLoss, dppoTvLoss } from "./dppo.ts";
import { droLoss } from "./dro.ts";
import { entropyLoss } from "./entropy.ts";
import { geoMeanLoss, gmpoLoss } from "./gmpo.ts";
import { gspoLoss, gspoTokenLoss } from "./gspo.ts";
import { klPenalty } from "./kl.ts";
import { maskedMean, maskedSum } from "./masked.ts";
import { disposeMetrics, readMetrics } from "./metrics.ts";
import { vanillaLoss } from "./ppo_clip.ts";
import { sapoAggLoss, sapoLoss } from "./sapo.ts";
import { valueLoss } from "./value_loss.ts";
import type { BypassOptions, KlEstimator, PolicyLossOptions } from "./types.ts";
import { type Case, inputsOf, type Mat, mat, near, randomCase, t } from "./_test_utils.ts";

/** Relative tolerance of every comparison (see the module doc). */
const TOL = 1e-7;

// ---------------------------------------------------------------------------------------------
// The reference: veRL's formulas as plain float64 loops.

type Row = number[];

const clip = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), hi);
const rows = (m: Mat) => m.length;
const cols = (m: Mat) => m[0]!.length;
const rowLen = (mask: Mat, i: number) => mask[i]!.reduce((s, v) => s + v, 0);
const zerosLike = (m: Mat): Mat => m.map((r) => r.map(() => 0));

/** veRL `agg_loss` with `dp_size = 1`. */
function aggVerl(
  loss: Mat,
  mask: Mat,
  mode: string,
  opts: { globalTokens?: number; globalSequences?: number; lossScaleFactor?: number } = {},
): number {
  let total = 0;
  let tokens = 0;
  const seqSums: number[] = [];
  const seqMeans: number[] = [];
  const seqMask: number[] = [];
  for (let i = 0; i < rows(loss); i++) {
    let s = 0;
    let n = 0;
    for (let j = 0; j < cols(loss); j++) {
      s += loss[i]![j]! * mask[i]![j]!;
      n += mask[i]![j]!;
    }
    total += s;
    tokens += n;
    seqSums.push(s);
    seqMeans.push(s / (n + 1e-8));
    seqMask.push(n > 0 ? 1 : 0);
  }
  const nSeq = opts.globalSequences ?? seqMask.reduce((a, b) => a + b, 0);
  const masked = (v: number[]) => v.reduce((a, x, i) => a + x * seqMask[i]!, 0);
  switch (mode) {
    case "token-mean":
      return total / (opts.globalTokens ?? tokens);
    case "token-sum":
      return total;
    case "seq-mean-token-sum":
      return masked(seqSums) / nSeq;
    case "seq-mean-token-sum-norm":
      return masked(seqSums) / nSeq / (opts.lossScaleFactor ?? cols(loss));
    case "seq-mean-token-mean":
      return masked(seqMeans) / nSeq;
  }
  throw new Error(mode);
}

/** `∂ agg / ∂ loss[i][j]` of `aggVerl` (the weight each token gets). */
function aggWeights(mask: Mat, mode: string, opts: { globalSequences?: number } = {}): Mat {
  const tokens = mask.flat().reduce((a, b) => a + b, 0);
  const nonEmpty = mask.filter((r) => r.some((v) => v > 0)).length;
  const nSeq = opts.globalSequences ?? nonEmpty;
  return mask.map((r, i) =>
    r.map((m) => {
      if (m === 0) return 0;
      if (mode === "token-mean") return 1 / tokens;
      if (mode === "token-sum") return 1;
      if (mode === "seq-mean-token-mean") return 1 / (rowLen(mask, i) + 1e-8) / nSeq;
      throw new Error(mode);
    })
  );
}

/** veRL `compute_policy_loss_vanilla` per token (before aggregation). */
function vanillaTokens(
  logp: Mat,
  old: Mat,
  adv: Mat,
  low: number,
  high: number,
  c = 3,
): Mat {
  return logp.map((r, i) =>
    r.map((lp, j) => {
      const a = adv[i]![j]!;
      const ratio = Math.exp(clip(lp - old[i]![j]!, -20, 20));
      const l1 = Math.max(-a * ratio, -a * clip(ratio, 1 - low, 1 + high));
      return a < 0 ? Math.min(-a * c, l1) : l1;
    })
  );
}

/** veRL `compute_policy_loss_gspo` per token, with its gradient w.r.t. log π per token. */
function gspoTokens(c: Case, low: number, high: number): { loss: Mat; grad: Mat } {
  const loss: Mat = [];
  const grad: Mat = [];
  c.logp.forEach((r, i) => {
    let s = 0;
    for (let j = 0; j < r.length; j++) s += (r[j]! - c.old[i]![j]!) * c.mask[i]![j]!;
    const logS = s / Math.max(rowLen(c.mask, i), 1);
    const ratio = Math.exp(Math.min(logS, 10));
    const dRatio = logS < 10 ? ratio : 0; // d s_{i,t} / d log π_t
    loss.push(r.map((_, j) => {
      const a = c.adv[i]![j]!;
      return Math.max(-a * ratio, -a * clip(ratio, 1 - low, 1 + high));
    }));
    grad.push(r.map((_, j) => {
      const a = c.adv[i]![j]!;
      const pg1 = -a * ratio;
      const pg2 = -a * clip(ratio, 1 - low, 1 + high);
      if (pg2 > pg1) return ratio > 1 - low && ratio < 1 + high ? -a * dRatio : 0;
      return -a * dRatio;
    }));
  });
  return { loss, grad };
}

/** veRL `compute_policy_loss_sapo` per token. */
function sapoTokens(c: Case, tauPos: number, tauNeg: number): Mat {
  return c.logp.map((r, i) =>
    r.map((lp, j) => {
      const a = c.adv[i]![j]!;
      const ratio = Math.exp(clip(lp - c.old[i]![j]!, -20, 20));
      const tau = a > 0 ? tauPos : tauNeg;
      const gate = (1 / (1 + Math.exp(-tau * (ratio - 1)))) * (4 / tau);
      return -gate * a;
    })
  );
}

/** veRL `compute_policy_loss_geo_mean`: `torch.mean` over all rows of the sequence losses. */
function geoMeanRef(c: Case, low: number, high: number, isWeights?: Mat): number {
  let total = 0;
  c.logp.forEach((r, i) => {
    const len = rowLen(c.mask, i);
    let lr = 0;
    let adv = 0;
    let logW = 0;
    r.forEach((lp, j) => {
      const m = c.mask[i]![j]!;
      const a = c.adv[i]![j]!;
      const d = lp - c.old[i]![j]!;
      const sg = Math.sign(a);
      const chosen = sg * Math.min(sg * d, sg * clip(d, -low, high));
      lr += chosen * m;
      adv += a * m;
      if (isWeights) logW += Math.log(isWeights[i]![j]! + 1e-10) * m;
    });
    let loss = -(adv / (len + 1e-8)) * Math.exp(lr / (len + 1e-8));
    if (isWeights) loss *= Math.exp(logW / (len + 1e-8));
    total += loss;
  });
  return total / rows(c.logp);
}

/** veRL `kl_penalty_forward`, and the gradient of `kl_penalty` w.r.t. log π. */
function klRef(d: number, key: string): { value: number; grad: number } {
  const base = key.endsWith("+") ? key.slice(0, -1) : key;
  let value: number;
  let grad: number;
  switch (base) {
    case "kl":
    case "k1":
      [value, grad] = [d, 1];
      break;
    case "abs":
      [value, grad] = [Math.abs(d), Math.sign(d)];
      break;
    case "mse":
    case "k2":
      [value, grad] = [0.5 * d * d, d];
      break;
    case "low_var_kl":
    case "k3": {
      const kl = clip(-d, -20, 20);
      const raw = Math.exp(kl) - kl - 1;
      value = clip(raw, -10, 10);
      grad = Math.abs(raw) < 10 && Math.abs(d) < 20 ? 1 - Math.exp(-d) : 0;
      break;
    }
    default:
      throw new Error(key);
  }
  // straight-through: the value of the estimator, the gradient of k2
  return key.endsWith("+") ? { value, grad: d } : { value, grad };
}

/** veRL DPPO per token: loss, keep mask and d loss / d log π. */
function dppoTokens(c: Case, kind: "tv" | "kl", low: number, high: number, cap: number) {
  const loss = zerosLike(c.logp);
  const grad = zerosLike(c.logp);
  const keep = zerosLike(c.logp);
  const truncatedFlag = zerosLike(c.logp);
  c.logp.forEach((r, i) =>
    r.forEach((lp, j) => {
      const a = c.adv[i]![j]!;
      const o = c.old[i]![j]!;
      const ratio = Math.exp(clip(lp - o, -20, 20));
      const w = Math.min(ratio, cap);
      const p = Math.exp(lp);
      const q = Math.exp(o);
      let k: boolean;
      if (kind === "tv") k = a > 0 ? p - q <= high : p - q >= -low;
      else {
        const d = q * (o - lp) + (1 - q) * Math.log((1 - q + 1e-8) / (1 - p + 1e-8));
        k = a > 0 ? d <= high || p <= q : d <= low || p >= q;
      }
      keep[i]![j] = k ? 1 : 0;
      loss[i]![j] = -a * w * lp * keep[i]![j]!;
      grad[i]![j] = -a * w * keep[i]![j]!;
      truncatedFlag[i]![j] = ratio > cap && k ? 1 : 0;
    })
  );
  return { loss, grad, keep, truncatedFlag };
}

/** veRL `compute_rollout_correction_weights` (`log_ratio = log π_θ − log π_rollout`). */
function isWeightsRef(lr: Mat, mask: Mat, level: string, thr: number | string, norm: boolean): Mat {
  let upper: number;
  let lower: number | null = null;
  if (typeof thr === "string" && thr.includes("_")) {
    [lower, upper] = thr.split("_").map(Number) as [number, number];
  } else upper = Number(thr);
  const raw = lr.map((r, i) => {
    if (level === "token") return r.map((x, j) => Math.exp(clip(x, -20, 20)) * mask[i]![j]!);
    const s = r.reduce((acc, x, j) => acc + x * mask[i]![j]!, 0);
    return r.map((_, j) => Math.exp(clip(s, -20, 20)) * mask[i]![j]!);
  });
  const w = raw.map((r) =>
    r.map((x) => (lower === null ? Math.min(x, upper) : x >= lower && x <= upper ? x : 0))
  );
  if (!norm) return w;
  let mean: number;
  if (level === "token") {
    let s = 0;
    let n = 0;
    w.forEach((r, i) => r.forEach((x, j) => ((s += x * mask[i]![j]!), (n += mask[i]![j]!))));
    mean = s / (n + 1e-8);
  } else {
    let s = 0;
    let n = 0;
    w.forEach((r, i) => {
      const len = rowLen(mask, i);
      const rowMean = r.reduce((acc, x, j) => acc + x * mask[i]![j]!, 0) / (len + 1e-8);
      if (len > 0) {
        s += rowMean;
        n += 1;
      }
    });
    mean = s / Math.max(n, 1e-8);
  }
  return mean > 1e-8 ? w.map((r) => r.map((x) => x / mean)) : w;
}

/** veRL `compute_rollout_rejection_mask`: the mask after rejection. */
function rejectionRef(lr: Mat, mask: Mat, rs: string, thr: string | number): Mat {
  const options = [...new Set(rs.split(",").map((s) => s.trim()))];
  let specs = String(thr).split(",").map((s) => s.trim());
  if (specs.length === 1) specs = options.map(() => specs[0]!);
  const keep = mask.map((r) => r.map(() => 1));
  options.forEach((opt, o) => {
    const spec = specs[o]!;
    const stat = (x: number) => {
      const l = clip(x, -20, 20);
      return opt.endsWith("k1") ? -l : opt.endsWith("k2") ? 0.5 * l * l : Math.exp(l) - 1 - l;
    };
    let lo = -Infinity;
    let hi: number;
    if (opt.endsWith("k1")) {
      const [a, b] = spec.includes("_")
        ? spec.split("_").map(Number)
        : [1 / Number(spec), Number(spec)];
      lo = Math.log(a!);
      hi = Math.log(b!);
    } else hi = Number(spec);
    const pass = (x: number) => x >= lo && x <= hi;
    lr.forEach((r, i) => {
      if (opt.startsWith("token")) {
        r.forEach((x, j) => {
          if (!pass(stat(x))) keep[i]![j] = 0;
        });
        return;
      }
      const vals = r.filter((_, j) => mask[i]![j]! > 0).map(stat);
      const len = rowLen(mask, i);
      const s = opt.startsWith("seq_sum")
        ? vals.reduce((a, b) => a + b, 0)
        : opt.startsWith("seq_mean")
        ? vals.reduce((a, b) => a + b, 0) / (len + 1e-8)
        : vals.length === 0
        ? 0
        : Math.max(...vals);
      if (!pass(s)) keep[i]!.fill(0);
    });
  });
  return mask.map((r, i) => r.map((m, j) => m * keep[i]![j]!));
}

// ---------------------------------------------------------------------------------------------
// Helpers.

async function lossOf(out: { loss: Tensor; metrics: Record<string, Tensor> }): Promise<number> {
  const v = await out.loss.item();
  out.loss.dispose();
  disposeMetrics(out.metrics);
  return v;
}

function nearMat(actual: Mat, expected: Mat, msg: string): void {
  expected.forEach((r, i) =>
    r.forEach((v, j) => near(actual[i]![j]!, v, TOL, `${msg}[${i}][${j}]`))
  );
}

/** A random `[b, T]` matrix in `(lo, hi)`. */
function randMat(rng: Rng, b: number, tLen: number, lo: number, hi: number): Mat {
  return Array.from(
    { length: b },
    () => Array.from({ length: tLen }, () => lo + (hi - lo) * rng.uniform()),
  );
}

/** A case with ragged masks, a fully masked last row and a fully valid first row. */
function raggedCase(seed: number, b = 6, tLen = 7, spread = 0.3): Case {
  const c = randomCase(seed, b, tLen, { spread, emptyRow: true });
  c.mask[0] = c.mask[0]!.map(() => 1);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Aggregation `token-sum`.

Deno.test("verl parity: token-sum aggregation of the policy, value and entropy losses", async () => {
  const c = raggedCase(101);
  const rng = new Rng(7);
  const loss = randMat(rng, 6, 7, -2, 2);
  near(
    await aggregate(t(loss), t(c.mask), "token-sum").item(),
    aggVerl(loss, c.mask, "token-sum"),
    TOL,
  );
  // veRL's token-sum ignores batch_num_tokens / global_batch_size
  near(
    await aggregate(t(loss), t(c.mask), "token-sum", { globalTokens: 1000, globalSequences: 9 })
      .item(),
    aggVerl(loss, c.mask, "token-sum"),
    TOL,
  );
  // policy loss (vanilla)
  const pg = vanillaTokens(c.logp, c.old, c.adv, 0.2, 0.28);
  near(
    await lossOf(
      vanillaLoss(inputsOf(c), {
        aggregation: "token-sum",
        clipRatioHigh: 0.28,
        clipRatioLow: 0.2,
      }),
    ),
    aggVerl(pg, c.mask, "token-sum"),
    TOL,
    "vanilla",
  );
  // value loss: 0.5 · agg(max((v − R)², (clip(v, v_old ± ε) − R)²))
  const values = randMat(rng, 6, 7, -1, 1);
  const oldValues = randMat(rng, 6, 7, -1, 1);
  const returns = randMat(rng, 6, 7, -1, 1);
  const vf = values.map((r, i) =>
    r.map((v, j) => {
      const vc = clip(v, oldValues[i]![j]! - 0.2, oldValues[i]![j]! + 0.2);
      return Math.max((v - returns[i]![j]!) ** 2, (vc - returns[i]![j]!) ** 2);
    })
  );
  const v = valueLoss(
    {
      values: t(values, true),
      oldValues: t(oldValues),
      returns: t(returns),
      responseMask: t(c.mask),
    },
    { clipRange: 0.2, aggregation: "token-sum" },
  );
  near(await lossOf(v), 0.5 * aggVerl(vf, c.mask, "token-sum"), TOL, "value");
  // entropy loss
  const h = randMat(rng, 6, 7, 0, 3);
  near(
    await entropyLoss(t(h), t(c.mask), "token-sum").item(),
    aggVerl(h, c.mask, "token-sum"),
    TOL,
  );
});

// ---------------------------------------------------------------------------------------------
// Forced aggregations: gspo and sapo (seq-mean-token-mean), geo_mean (mean over all rows).

Deno.test("verl parity: gspo is the token form with forced seq-mean-token-mean", async () => {
  for (const seed of [201, 202, 203]) {
    const c = raggedCase(seed, 6, 7, 0.2);
    for (const [low, high] of [[0.2, 0.2], [3e-4, 4e-4], [0.05, 0.1]] as const) {
      const ref = gspoTokens(c, low, high);
      for (const aggregation of [undefined, "token-mean", "token-sum", "seq-mean-token-sum-norm"]) {
        const options: PolicyLossOptions = { clipRatioLow: low, clipRatioHigh: high };
        if (aggregation !== undefined) options.aggregation = aggregation;
        const inputs = inputsOf(c);
        const out = gspoLoss(inputs, options);
        near(
          await out.loss.item(),
          aggVerl(ref.loss, c.mask, "seq-mean-token-mean"),
          TOL,
          `${aggregation}`,
        );
        out.loss.backward();
        const w = aggWeights(c.mask, "seq-mean-token-mean");
        nearMat(
          await mat(inputs.logProbs.grad!),
          ref.grad.map((r, i) => r.map((g, j) => g * w[i]![j]!)),
          "grad",
        );
        disposeMetrics(out.metrics);
      }
      // the global batch info still applies (veRL passes **global_batch_info)
      near(
        await lossOf(
          gspoLoss(inputsOf(c), { clipRatioLow: low, clipRatioHigh: high, globalSequences: 11 }),
        ),
        aggVerl(ref.loss, c.mask, "seq-mean-token-mean", { globalSequences: 11 }),
        TOL,
      );
    }
    // defaults: veRL's clip_ratio 0.2, not the paper's range of gspo_token / gspo_seq
    near(
      await lossOf(gspoLoss(inputsOf(c))),
      aggVerl(gspoTokens(c, 0.2, 0.2).loss, c.mask, "seq-mean-token-mean"),
      TOL,
    );
    // ours follows the aggregation
    near(
      await lossOf(gspoTokenLoss(inputsOf(c), { aggregation: "token-mean", clipRatio: 0.2 })),
      aggVerl(gspoTokens(c, 0.2, 0.2).loss, c.mask, "token-mean"),
      TOL,
    );
  }
});

Deno.test("verl parity: sapo forces seq-mean-token-mean, sapo_agg follows the aggregation", async () => {
  const c = raggedCase(301, 6, 7, 0.6);
  for (const [tp, tn] of [[1, 1.05], [2, 4]] as const) {
    const ref = sapoTokens(c, tp, tn);
    for (const aggregation of ["token-mean", "token-sum", "seq-mean-token-sum"]) {
      near(
        await lossOf(sapoLoss(inputsOf(c), { tauPos: tp, tauNeg: tn, aggregation })),
        aggVerl(ref, c.mask, "seq-mean-token-mean"),
        TOL,
        aggregation,
      );
      near(
        await lossOf(sapoAggLoss(inputsOf(c), { tauPos: tp, tauNeg: tn, aggregation })),
        aggVerl(ref, c.mask, aggregation),
        TOL,
        `sapo_agg ${aggregation}`,
      );
    }
    near(
      await lossOf(sapoLoss(inputsOf(c), { tauPos: tp, tauNeg: tn, globalSequences: 13 })),
      aggVerl(ref, c.mask, "seq-mean-token-mean", { globalSequences: 13 }),
      TOL,
    );
  }
});

Deno.test("verl parity: geo_mean averages over all rows (empty ones too) and weights by geometric mean", async () => {
  for (const seed of [401, 402]) {
    const c = raggedCase(seed, 5, 6, 0.4);
    c.mask[2] = c.mask[2]!.map(() => 0); // a second fully masked row
    const rng = new Rng(seed);
    const w = randMat(rng, 5, 6, 0.3, 2.5);
    for (const [low, high] of [[0.2, 0.2], [0.1, 0.3]] as const) {
      const ref = geoMeanRef(c, low, high);
      for (
        const extra of [{}, { aggregation: "token-mean" }, {
          globalSequences: 17,
          globalTokens: 40,
        }]
      ) {
        near(
          await lossOf(
            geoMeanLoss(inputsOf(c), { clipRatioLow: low, clipRatioHigh: high, ...extra }),
          ),
          ref,
          TOL,
        );
      }
      near(
        await lossOf(
          geoMeanLoss(inputsOf(c, { isWeights: t(w) }), { clipRatioLow: low, clipRatioHigh: high }),
        ),
        geoMeanRef(c, low, high, w),
        TOL,
        "isWeights",
      );
    }
    // default clip: veRL's clip_ratio 0.2
    near(await lossOf(geoMeanLoss(inputsOf(c))), geoMeanRef(c, 0.2, 0.2), TOL);
    // ours (gmpo) averages over the non-empty rows only: a different number whenever a row is empty
    const ours = await lossOf(gmpoLoss(inputsOf(c), { clipRatio: 0.2 }));
    near(ours, geoMeanRef(c, 0.2, 0.2) * 5 / 3, TOL, "gmpo over 3 non-empty rows");
  }
  const g = raggedCase(403, 3, 4, 0.05);
  const rest = inputsOf(g);
  await gradcheck((x) => {
    const out = geoMeanLoss({ ...rest, logProbs: x }, { clipRatio: 0.5 });
    disposeMetrics(out.metrics);
    return out.loss;
  }, [t(g.logp, true)]);
});

// ---------------------------------------------------------------------------------------------
// KL penalties with a straight-through gradient.

Deno.test("verl parity: kl+, k1+, abs+, mse+, k2+, k3+, low_var_kl+ keep the value and take k2's gradient", async () => {
  const rng = new Rng(501);
  const logp = randMat(rng, 3, 5, -4, -0.05);
  const ref = logp.map((r) => r.map((v) => v - 1.5 + 3 * rng.uniform()));
  ref[0]![0] = logp[0]![0]! + 25; // k3's clamps active
  for (const key of ["kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3"]) {
    for (const k of [key, `${key}+`]) {
      const x = t(logp, true);
      const kl = klPenalty(x, t(ref), k as KlEstimator);
      const expected = logp.map((r, i) => r.map((v, j) => klRef(v - ref[i]![j]!, k)));
      nearMat(await mat(kl), expected.map((r) => r.map((e) => e.value)), `${k} value`);
      kl.sum().backward();
      nearMat(await mat(x.grad!), expected.map((r) => r.map((e) => e.grad)), `${k} grad`);
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Policy losses veRL has and we lacked: dppo_tv, dppo_kl, dro, bypass_mode.

Deno.test("verl parity: dppo_tv and dppo_kl (values, gradients, metrics)", async () => {
  for (const seed of [601, 602]) {
    const c = raggedCase(seed, 6, 7, 0.5);
    c.logp = c.logp.map((r) => r.map((v) => Math.max(v, -1.5))); // probabilities that move
    for (const kind of ["tv", "kl"] as const) {
      for (
        const [low, high, cap] of [[0.2, 0.2, 3], [0.05, 0.1, 1.2], [0.1, 0.3, Infinity]] as const
      ) {
        const ref = dppoTokens(c, kind, low, high, cap);
        const fn = kind === "tv" ? dppoTvLoss : dppoKlLoss;
        const inputs = inputsOf(c);
        const out = fn(inputs, { clipRatioLow: low, clipRatioHigh: high, clipRatioC: cap });
        near(await out.loss.item(), aggVerl(ref.loss, c.mask, "token-mean"), TOL, `${kind} loss`);
        out.loss.backward();
        const wts = aggWeights(c.mask, "token-mean");
        nearMat(
          await mat(inputs.logProbs.grad!),
          ref.grad.map((r, i) => r.map((g, j) => g * wts[i]![j]!)),
          kind,
        );
        const m = await readMetrics(out.metrics, { dispose: true });
        near(
          m.pg_clipfrac!,
          aggVerl(ref.keep.map((r) => r.map((k) => 1 - k)), c.mask, "token-mean"),
          TOL,
        );
        near(m.clipfrac_dual!, aggVerl(ref.truncatedFlag, c.mask, "token-mean"), TOL);
      }
    }
  }
});

Deno.test("verl parity: dro (value, gradient, beta required)", async () => {
  const c = raggedCase(701, 6, 7, 0.5);
  for (const beta of [0.05, 1]) {
    for (const aggregation of ["token-mean", "seq-mean-token-mean", "token-sum"]) {
      const per = c.logp.map((r, i) =>
        r.map((lp, j) => -(lp * c.adv[i]![j]! - 0.5 * beta * (lp - c.old[i]![j]!) ** 2))
      );
      const grad = c.logp.map((r, i) =>
        r.map((lp, j) => -(c.adv[i]![j]! - beta * (lp - c.old[i]![j]!)))
      );
      const inputs = inputsOf(c);
      const out = droLoss(inputs, { droBeta: beta, aggregation });
      near(await out.loss.item(), aggVerl(per, c.mask, aggregation), TOL, aggregation);
      out.loss.backward();
      const w = aggWeights(c.mask, aggregation);
      nearMat(
        await mat(inputs.logProbs.grad!),
        grad.map((r, i) => r.map((g, j) => g * w[i]![j]!)),
        "grad",
      );
      disposeMetrics(out.metrics);
    }
  }
  assert.throws(() => droLoss(inputsOf(c)), /dro: droBeta must be a finite number > 0/);
  assert.throws(() => droLoss(inputsOf(c), { droBeta: 0 }), /droBeta/);
});

Deno.test("verl parity: bypass_mode (ppo_clip / reinforce, IS weights, rejection sampling)", async () => {
  const c = raggedCase(801, 6, 7, 0.3);
  const lr = c.logp.map((r, i) => r.map((v, j) => (v - c.old[i]![j]!) * c.mask[i]![j]!));
  const cases: BypassOptions[] = [
    {},
    { rs: "token_k1,seq_mean_k3", rsThreshold: "0.7_1.5,0.02" },
    { rs: "seq_max_k2", rsThreshold: 0.08 },
    { lossType: "reinforce", is: "token", isThreshold: 1.5 },
    { lossType: "reinforce", is: "token", isThreshold: "0.8_1.3", isBatchNormalize: true },
    { lossType: "reinforce", is: "sequence", isThreshold: 2 },
    { lossType: "reinforce", is: "sequence", isThreshold: "0.5_3", isBatchNormalize: true },
    { lossType: "reinforce", is: null, rs: "seq_sum_k2,token_k3", rsThreshold: "0.3,0.05" },
    { lossType: "reinforce", is: "token", rs: "seq_mean_k1", rsThreshold: 1.1 },
    {
      lossType: "reinforce",
      is: "sequence",
      rs: "token_k2,seq_sum_k1",
      rsThreshold: "0.04,0.6_1.8",
    },
  ];
  let distinct = 0;
  for (const b of cases) {
    const mask = b.rs ? rejectionRef(lr, c.mask, b.rs, b.rsThreshold!) : c.mask;
    let per: Mat;
    let grad: Mat;
    if ((b.lossType ?? "ppo_clip") === "ppo_clip") {
      per = vanillaTokens(c.logp, c.old, c.adv, 0.2, 0.2);
      grad = zerosLike(per); // checked by value only
    } else {
      const level = b.is === undefined ? "sequence" : b.is;
      const w = level === null
        ? c.mask.map((r) => r.map(() => 1))
        : isWeightsRef(lr, c.mask, level, b.isThreshold ?? 2, b.isBatchNormalize ?? false);
      per = c.logp.map((r, i) => r.map((lp, j) => -c.adv[i]![j]! * lp * w[i]![j]!));
      grad = c.logp.map((r, i) => r.map((_, j) => -c.adv[i]![j]! * w[i]![j]!));
    }
    const inputs = inputsOf(c);
    const out = bypassModeLoss(inputs, { bypass: b });
    const expected = aggVerl(per, mask, "token-mean");
    near(await out.loss.item(), expected, TOL, JSON.stringify(b));
    if (Math.abs(expected - aggVerl(per, c.mask, "token-mean")) > 1e-3) distinct++;
    out.loss.backward();
    if (b.lossType === "reinforce") {
      const wts = aggWeights(mask, "token-mean");
      nearMat(
        await mat(inputs.logProbs.grad!),
        grad.map((r, i) => r.map((g, j) => g * wts[i]![j]!)),
        JSON.stringify(b),
      );
    }
    disposeMetrics(out.metrics);
  }
  assert.ok(
    distinct >= 4,
    `the rejection criteria must reject something in this case (${distinct})`,
  );
  // ppo_clip without rejection is vanilla on π_θ/π_rollout
  near(
    await lossOf(bypassModeLoss(inputsOf(c), { aggregation: "seq-mean-token-mean" })),
    aggVerl(vanillaTokens(c.logp, c.old, c.adv, 0.2, 0.2), c.mask, "seq-mean-token-mean"),
    TOL,
  );
  assert.throws(
    () => bypassModeLoss(inputsOf(c), { bypass: { rs: "token_k4", rsThreshold: 1 } }),
    /token_k4/,
  );
  assert.throws(
    () => bypassModeLoss(inputsOf(c), { bypass: { rs: "token_k2" } }),
    /rsThreshold must be given/,
  );
  assert.throws(
    () => bypassModeLoss(inputsOf(c), { bypass: { rs: "token_k2", rsThreshold: "0.1_0.2" } }),
    /takes one upper bound/,
  );
  assert.throws(
    () => bypassModeLoss(inputsOf(c), { bypass: { isThreshold: "3_2" } }),
    /lower bound/,
  );
});

// ---------------------------------------------------------------------------------------------
// clip_cov with veRL's permutation.

/** veRL `compute_policy_loss_clip_cov` with a given `torch.randperm` result. */
function clipCovRef(
  c: Case,
  o: { ratio: number; lb: number; ub: number; low: number; high: number },
  perm?: number[],
) {
  const mean = (f: (i: number, j: number) => number) => {
    let s = 0;
    let n = 0;
    c.mask.forEach((r, i) => r.forEach((m, j) => ((s += f(i, j) * m), (n += m))));
    return s / (n + 1e-8);
  };
  const aMean = mean((i, j) => c.adv[i]![j]!);
  const lMean = mean((i, j) => c.logp[i]![j]!);
  const candidates: [number, number][] = [];
  let n = 0;
  const pg1 = zerosLike(c.logp);
  const pg2 = zerosLike(c.logp);
  c.logp.forEach((r, i) =>
    r.forEach((lp, j) => {
      const a = c.adv[i]![j]!;
      const ratio = Math.exp(lp - c.old[i]![j]!);
      pg1[i]![j] = -a * ratio;
      pg2[i]![j] = -a * clip(ratio, 1 - o.low, 1 + o.high);
      const m = c.mask[i]![j]!;
      n += m;
      const byOrigin = pg2[i]![j]! > pg1[i]![j]! && m > 0;
      const cov = m === 0 || byOrigin ? -Infinity : (a - aMean) * (lp - lMean);
      if (cov < o.ub && cov > o.lb && m > 0) candidates.push([i, j]);
    })
  );
  const clipNum = Math.max(Math.trunc(o.ratio * n), 1);
  const chosen = perm === undefined ? [] : perm.slice(0, Math.min(clipNum, candidates.length));
  const corr = c.logp.map((r) => r.map(() => 1));
  for (const p of chosen) corr[candidates[p]![0]]![candidates[p]![1]] = 0;
  const per = pg1.map((r, i) => r.map((v, j) => Math.max(v, pg2[i]![j]!) * corr[i]![j]!));
  return {
    candidates: candidates.length,
    loss: aggVerl(per, c.mask, "token-mean"),
    selected: chosen.length,
  };
}

function permutation(rng: Rng, n: number): number[] {
  const p = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.uniform() * (i + 1));
    [p[i], p[j]] = [p[j]!, p[i]!];
  }
  return p;
}

Deno.test("verl parity: clip_cov reproduces veRL's choice from an injected permutation (every seed)", async () => {
  const o = { ratio: 0.15, lb: -0.5, ub: 0.8, low: 0.2, high: 0.2 };
  const options = { covRatio: o.ratio, covLowerBound: o.lb, covUpperBound: o.ub, clipRatio: 0.2 };
  let sawDifference = false;
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 1_000_000 }), async (seed) => {
      const c = raggedCase(seed, 5, 8, 0.3);
      const rng = new Rng(seed + 1);
      const n = clipCovRef(c, o).candidates;
      const perm = permutation(rng, n);
      const ref = clipCovRef(c, o, perm);
      const out = clipCovLoss(inputsOf(c), { ...options, covPermutation: perm });
      near(await out.loss.item(), ref.loss, TOL, `seed ${seed}`);
      const m = await readMetrics(out.metrics, { dispose: true });
      near(m.cov_selected_frac!, ref.selected / c.mask.flat().reduce((a, b) => a + b, 0), TOL);
      out.loss.dispose();
      // another permutation selects other tokens, so the loss can tell them apart
      const other = clipCovRef(c, o, [...perm].reverse());
      if (Math.abs(other.loss - ref.loss) > 1e-9) sawDifference = true;
    }),
    { numRuns: 40 },
  );
  assert.ok(sawDifference, "the permutation must matter in some case");
  assert.throws(
    () => clipCovLoss(inputsOf(raggedCase(1)), { covPermutation: [0, 0, 1] }),
    /covPermutation must be a permutation of 0..2/,
  );
});

// ---------------------------------------------------------------------------------------------
// maskedSum / maskedMean.

Deno.test("verl parity: maskedSum and per-row maskedMean (empty rows, NaN padding)", async () => {
  const c = raggedCase(901, 5, 6);
  const rng = new Rng(9);
  const x = randMat(rng, 5, 6, -3, 3);
  const padded = x.map((r, i) => r.map((v, j) => (c.mask[i]![j] ? v : NaN)));
  const rowSum = (i: number) => x[i]!.reduce((s, v, j) => s + v * c.mask[i]![j]!, 0);
  const total = x.reduce((s, _, i) => s + rowSum(i), 0);
  const n = c.mask.flat().reduce((a, b) => a + b, 0);
  near(await maskedSum(t(padded), t(c.mask)).item(), total, TOL);
  near(await maskedMean(t(padded), t(c.mask)).item(), total / (n + 1e-8), TOL);
  const sums = (await maskedSum(t(padded), t(c.mask), { axis: 1 }).toArray()) as number[];
  const means = (await maskedMean(t(padded), t(c.mask), { axis: -1 }).toArray()) as number[];
  x.forEach((_, i) => {
    near(sums[i]!, rowSum(i), TOL);
    near(means[i]!, rowSum(i) / (rowLen(c.mask, i) + 1e-8), TOL, `row ${i}`);
  });
  assert.equal(means[4], 0); // the fully masked row
  const cols0 = (await maskedMean(t(x), t(c.mask), { axis: 0 }).toArray()) as number[];
  cols0.forEach((v, j) => {
    const m = c.mask.map((r) => r[j]!);
    const s = x.reduce((acc, r, i) => acc + r[j]! * m[i]!, 0);
    const k = m.reduce((a, b) => a + b, 0);
    near(v, s / (k + 1e-8), TOL, `column ${j}`);
  });
});

// ---------------------------------------------------------------------------------------------
// The other veRL keys the README calls "same": vanilla, gpg, cispo, kl_cov.

Deno.test("verl parity: vanilla, gpg, cispo and kl_cov (values and gradients)", async () => {
  const c = raggedCase(1001, 6, 9, 0.5);
  for (
    const aggregation of [
      "token-mean",
      "seq-mean-token-mean",
      "seq-mean-token-sum-norm",
      "token-sum",
    ]
  ) {
    // vanilla: clip-higher and dual clip
    const v = vanillaTokens(c.logp, c.old, c.adv, 0.2, 0.28, 3);
    near(
      await lossOf(
        vanillaLoss(inputsOf(c), { aggregation, clipRatioLow: 0.2, clipRatioHigh: 0.28 }),
      ),
      aggVerl(v, c.mask, aggregation),
      TOL,
      `vanilla ${aggregation}`,
    );
    // gpg: −A·log π
    near(
      await lossOf(reinforceLoss(inputsOf(c), { aggregation })),
      aggVerl(c.logp.map((r, i) => r.map((lp, j) => -lp * c.adv[i]![j]!)), c.mask, aggregation),
      TOL,
      `gpg ${aggregation}`,
    );
  }
  // cispo: −sg(clip(r))·A·log π; gradient −clip(r)·A
  const clipped = c.logp.map((r, i) =>
    r.map((lp, j) => clip(Math.exp(clip(lp - c.old[i]![j]!, -20, 20)), 0.8, 1.2))
  );
  const inputs = inputsOf(c);
  const out = cispoLoss(inputs, { clipRatioLow: 0.2, clipRatioHigh: 0.2 });
  near(
    await out.loss.item(),
    aggVerl(
      c.logp.map((r, i) => r.map((lp, j) => -clipped[i]![j]! * c.adv[i]![j]! * lp)),
      c.mask,
      "token-mean",
    ),
    TOL,
    "cispo",
  );
  out.loss.backward();
  const w = aggWeights(c.mask, "token-mean");
  nearMat(
    await mat(inputs.logProbs.grad!),
    clipped.map((r, i) => r.map((x, j) => -x * c.adv[i]![j]! * w[i]![j]!)),
    "cispo grad",
  );
  disposeMetrics(out.metrics);
  // kl_cov: the top max(1, ⌊ρN⌋) covariances get + coef·|log r| (no ties in random data)
  for (const [ratio, coef] of [[0.1, 1], [0.25, 0.1]] as const) {
    const valid: [number, number][] = [];
    c.mask.forEach((r, i) => r.forEach((m, j) => m && valid.push([i, j])));
    const aMean = valid.reduce((s, [i, j]) => s + c.adv[i]![j]!, 0) / valid.length;
    const lMean = valid.reduce((s, [i, j]) => s + c.logp[i]![j]!, 0) / valid.length;
    const k = Math.max(1, Math.trunc(valid.length * ratio));
    const top = valid
      .map(([i, j]) => ({ i, j, cov: (c.adv[i]![j]! - aMean) * (c.logp[i]![j]! - lMean) }))
      .sort((a, b) => b.cov - a.cov)
      .slice(0, k);
    const per = c.logp.map((r, i) =>
      r.map((lp, j) => -c.adv[i]![j]! * Math.exp(lp - c.old[i]![j]!))
    );
    for (const { i, j } of top) {
      per[i]![j] = per[i]![j]! + coef * Math.abs(c.logp[i]![j]! - c.old[i]![j]!);
    }
    near(
      await lossOf(klCovLoss(inputsOf(c), { covRatio: ratio, klCovCoef: coef })),
      aggVerl(per, c.mask, "token-mean"),
      TOL,
      `kl_cov ${ratio}`,
    );
  }
});
