/**
 * Test-only helpers: a float64 CPU backend, tensor shorthands, seeded random cases of
 * policy-loss inputs as plain arrays, and a plain-loop reference of the aggregation modes that
 * the per-loss reference implementations share. Private to the package's tests.
 *
 * @module
 */

import { createCpuBackend, Rng, type Tensor, tensor } from "@rlvr/tensor";
import type { Backend } from "@rlvr/tensor";
import type { PolicyLossInputs } from "./types.ts";

/** A float64 CPU backend: every numeric test runs on it. */
export const f64: Backend = createCpuBackend({ precision: "f64" });

/** Matrix of numbers. */
export type Mat = number[][];

/** A tensor on the f64 backend. */
export function t(data: Mat | number[] | number, requiresGrad = false): Tensor {
  return tensor(data, { backend: f64, requiresGrad });
}

/** Reads a 2-D tensor (−0 read as 0, so that deep equality compares values). */
export async function mat(x: Tensor): Promise<Mat> {
  return ((await x.toArray()) as Mat).map((row) => row.map((v) => (v === 0 ? 0 : v)));
}

/** A random policy-loss case as arrays. */
export interface Case {
  logp: Mat;
  old: Mat;
  adv: Mat;
  mask: Mat;
  ref: Mat;
  rollout: Mat;
}

/** Options of {@link randomCase}. */
export interface CaseOptions {
  /** Spread of `logp − old` (default 0.3). */
  spread?: number;
  /** Whether the advantage is constant over each sequence (default false). */
  seqAdv?: boolean;
  /** Whether one row may be fully masked (default false). */
  emptyRow?: boolean;
  /** Whether every position is valid (default false). */
  full?: boolean;
}

/** A seeded random case: log-probs in (−4, −0.05), advantages ~ N(0, 1), ragged masks. */
export function randomCase(seed: number, b: number, tLen: number, options: CaseOptions = {}): Case {
  const rng = new Rng(seed);
  const spread = options.spread ?? 0.3;
  const c: Case = { logp: [], old: [], adv: [], mask: [], ref: [], rollout: [] };
  for (let i = 0; i < b; i++) {
    const len = options.full
      ? tLen
      : options.emptyRow && i === b - 1
      ? 0
      : 1 + Math.floor(rng.uniform() * tLen);
    const seqA = rng.normal();
    const row = (f: (j: number) => number) => Array.from({ length: tLen }, (_, j) => f(j));
    const logp = row(() => -0.05 - 3.95 * rng.uniform());
    c.logp.push(logp);
    c.old.push(logp.map((v) => Math.min(v - spread * rng.normal(), -1e-3)));
    c.ref.push(logp.map((v) => Math.min(v - 0.5 * rng.normal(), -1e-3)));
    c.rollout.push(c.old[i]!.map((v) => Math.min(v - 0.2 * rng.normal(), -1e-3)));
    c.adv.push(row(() => (options.seqAdv ? seqA : rng.normal())));
    c.mask.push(row((j) => (j < len ? 1 : 0)));
  }
  return c;
}

/** Policy-loss inputs on the f64 backend from a case (logProbs requires grad). */
export function inputsOf(c: Case, extra: Partial<PolicyLossInputs> = {}): PolicyLossInputs {
  return {
    logProbs: t(c.logp, true),
    oldLogProbs: t(c.old),
    advantages: t(c.adv),
    responseMask: t(c.mask),
    ...extra,
  };
}

/** Plain-loop reference of the aggregation modes (current veRL `agg_loss` semantics). */
export function aggRef(
  loss: Mat,
  mask: Mat,
  mode: string,
  options: { globalTokens?: number; globalSequences?: number; lossScaleFactor?: number } = {},
): number {
  let total = 0;
  let tokens = 0;
  let seqs = 0;
  let seqSum = 0;
  let seqMean = 0;
  for (let i = 0; i < loss.length; i++) {
    let s = 0;
    let n = 0;
    for (let j = 0; j < loss[i]!.length; j++) {
      if (mask[i]![j] === 0) continue;
      s += loss[i]![j]!;
      n += 1;
    }
    total += s;
    tokens += n;
    if (n > 0) {
      seqs += 1;
      seqSum += s;
      seqMean += s / n;
    }
  }
  const nTok = options.globalTokens ?? Math.max(tokens, 1);
  const nSeq = options.globalSequences ?? Math.max(seqs, 1);
  switch (mode) {
    case "token-mean":
      return total / nTok;
    case "seq-mean-token-sum":
      return seqSum / nSeq;
    case "seq-mean-token-mean":
      return seqMean / nSeq;
    case "seq-mean-token-sum-norm":
      return seqSum / nSeq / (options.lossScaleFactor ?? loss[0]!.length);
    default:
      throw new Error(`aggRef: ${mode}`);
  }
}

/** Masked mean over valid positions of a per-token function. */
export function maskedMeanRef(mask: Mat, f: (i: number, j: number) => number): number {
  let s = 0;
  let n = 0;
  mask.forEach((row, i) =>
    row.forEach((m, j) => {
      if (m !== 0) {
        s += f(i, j);
        n++;
      }
    })
  );
  return s / Math.max(n, 1);
}

/** Maps every position of a matrix. */
export function mapMat(m: Mat, f: (i: number, j: number) => number): Mat {
  return m.map((row, i) => row.map((_, j) => f(i, j)));
}

/** Asserts |a − b| ≤ atol + rtol·|b| with a readable message. */
export function near(actual: number, expected: number, tol = 1e-10, msg = ""): void {
  if (!(Math.abs(actual - expected) <= tol * (1 + Math.abs(expected)))) {
    throw new Error(`${msg ? msg + ": " : ""}expected ${expected}, got ${actual}`);
  }
}
