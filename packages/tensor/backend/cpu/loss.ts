/**
 * CPU kernels for the per-token quantities of policy-gradient losses: the log-probability of a
 * chosen token and the entropy of the next-token distribution, both straight from logits.
 *
 * Neither forward pass materialises the `[rows, vocab]` softmax: with vocabularies of 150k, that
 * tensor would dominate memory. Each saves the row log-sum-exp instead, and the backward passes
 * rebuild `p = exp(z − lse)` element by element. Token ids are checked here, the one place that
 * sees their values, so a bad id fails with its row and the vocabulary size instead of reading
 * past the row.
 *
 * @module
 */

import type { HostArray, KernelParams } from "../types.ts";
import { lseRow } from "./reduce.ts";

function tokenAt(T: HostArray, r: number, vocab: number): number {
  const t = T[r]!;
  if (!(t >= 0 && t < vocab)) {
    const last = vocab - 1;
    throw new RangeError(
      `token ${t} at row ${r} is out of range for a vocabulary of V=${vocab} (valid ids 0..${last})`,
    );
  }
  return t;
}

/** `logprobs`: `logprob[r] = logits[r, tokens[r]] − lse[r]`. */
export function logprobs(
  [logits, tokens]: HostArray[],
  [lp, lse]: HostArray[],
  p: KernelParams["logprobs"],
): void {
  const Z = logits!;
  const T = tokens!;
  const { rows, vocab } = p;
  // Validate every id before writing anything, so a failing call leaves no half-written output.
  for (let r = 0; r < rows; r++) tokenAt(T, r, vocab);
  for (let r = 0; r < rows; r++) {
    const base = r * vocab;
    const l = lseRow(Z, base, vocab);
    lse![r] = l;
    lp![r] = Z[base + T[r]!]! - l;
  }
}

/** `logprobs_backward`: `dlogits[r, j] = dlp[r] · ([j = tokens[r]] − exp(logits[r, j] − lse[r]))`. */
export function logprobsBackward(
  [logits, tokens, lse, dlp]: HostArray[],
  [dlogits]: HostArray[],
  p: KernelParams["logprobs_backward"],
): void {
  const Z = logits!;
  const DZ = dlogits!;
  const { rows, vocab } = p;
  for (let r = 0; r < rows; r++) {
    const base = r * vocab;
    const g = dlp![r]!;
    const l = lse![r]!;
    const t = tokenAt(tokens!, r, vocab);
    for (let j = 0; j < vocab; j++) DZ[base + j] = -g * Math.exp(Z[base + j]! - l);
    DZ[base + t] = DZ[base + t]! + g;
  }
}

/**
 * `entropy`: `H[r] = Σ p · (lse − z)`, the same value as `lse − Σ p·z` but summed from
 * non-negative terms, so it cannot come out slightly negative. Entries with `p = 0` (logits of
 * −Infinity, a masked vocabulary) contribute nothing instead of `0 · ∞ = NaN`.
 */
export function entropy(
  [logits]: HostArray[],
  [ent, lse]: HostArray[],
  p: KernelParams["entropy"],
): void {
  const Z = logits!;
  const { rows, vocab } = p;
  for (let r = 0; r < rows; r++) {
    const base = r * vocab;
    const l = lseRow(Z, base, vocab);
    let h = 0;
    for (let j = 0; j < vocab; j++) {
      const lp = Z[base + j]! - l;
      const pr = Math.exp(lp);
      if (pr !== 0) h -= pr * lp;
    }
    lse![r] = l;
    ent![r] = h;
  }
}

/** `entropy_backward`: `dlogits = −dH · p · (log p + H)`, zero where `p = 0`. */
export function entropyBackward(
  [logits, lse, ent, dH]: HostArray[],
  [dlogits]: HostArray[],
  p: KernelParams["entropy_backward"],
): void {
  const Z = logits!;
  const DZ = dlogits!;
  const { rows, vocab } = p;
  for (let r = 0; r < rows; r++) {
    const base = r * vocab;
    const l = lse![r]!;
    const h = ent![r]!;
    const g = dH![r]!;
    for (let j = 0; j < vocab; j++) {
      const lp = Z[base + j]! - l;
      const pr = Math.exp(lp);
      DZ[base + j] = pr === 0 ? 0 : -g * pr * (lp + h);
    }
  }
}
