/**
 * WGSL kernels for the per-token log-probability of a chosen token and the entropy of the
 * next-token distribution, straight from logits, with their backward passes.
 *
 * Design: as in the CPU oracle, neither forward pass materialises the `[rows, vocab]` softmax;
 * one workgroup of 64 invocations per row computes the row log-sum-exp (max, then a shifted sum,
 * both shared-memory tree reductions) and saves it, and the backward passes rebuild
 * `p = exp(z − lse)` per element (one invocation each). A token id outside `[0, vocab)` cannot
 * throw on the GPU: its log-prob is written as NaN (so a bad id is visible rather than silently
 * clamped) and its row's gradient is zero. Validate ids on the host when they may be bad.
 *
 * @module
 */

import {
  bind,
  type GpuKernel,
  groupsFor,
  LSE_REDUCTIONS,
  memo,
  Params,
  ROW_LSE,
  shader,
} from "./_wgsl.ts";

const WG = 64;
const ROW = "  let row = wid;\n  if (row >= pu(0)) { return; }\n  let vocab = pu(1);\n" +
  "  let base = row * vocab;\n";

// Params: rows, vocab.
const logprobsShader = memo(() =>
  shader(
    "logprobs",
    [
      bind("X", "read", "f32"),
      bind("T", "read", "i32"),
      bind("LP", "read_write", "f32"),
      bind("L", "read_write", "f32"),
    ],
    WG,
    ROW + `  let lse = row_lse(base, vocab, li);
  if (li == 0u) {
    L[row] = lse;
    let t = T[row];
    if (t >= 0 && u32(t) < vocab) { LP[row] = X[base + u32(t)] - lse; } else { LP[row] = nan_f(); }
  }`,
    LSE_REDUCTIONS + ROW_LSE,
  )
);

/** `logprobs`: `logprob[r] = logits[r, tokens[r]] − lse[r]` (NaN for an out-of-range token). */
export const logprobs: GpuKernel<"logprobs"> = ([logits, tokens], [lp, lse], p) => [{
  shader: logprobsShader(),
  bindings: [logits!, tokens!, lp!, lse!],
  params: new Params().u32(p.rows).u32(p.vocab).finish(),
  groups: p.rows,
}];

// Params: total, vocab.
const logprobsBackwardShader = memo(() =>
  shader(
    "logprobs_backward",
    [
      bind("X", "read", "f32"),
      bind("T", "read", "i32"),
      bind("L", "read", "f32"),
      bind("G", "read", "f32"),
      bind("DX", "read_write", "f32"),
    ],
    WG,
    `  let at = wid * WG + li;
  if (at >= pu(0)) { return; }
  let vocab = pu(1);
  let r = at / vocab;
  let j = at % vocab;
  let t = T[r];
  if (!(t >= 0 && u32(t) < vocab)) { DX[at] = 0.0; return; }
  let g = G[r];
  var v = -g * exp(X[at] - L[r]);
  if (u32(t) == j) { v = v + g; }
  DX[at] = v;`,
  )
);

/** `logprobs_backward`: `dlogits = dlp · (onehot − softmax)` (zero for an out-of-range token). */
export const logprobsBackward: GpuKernel<"logprobs_backward"> = (
  [logits, tokens, lse, dlp],
  [dlogits],
  p,
) => {
  const total = p.rows * p.vocab;
  return [{
    shader: logprobsBackwardShader(),
    bindings: [logits!, tokens!, lse!, dlp!, dlogits!],
    params: new Params().u32(total).u32(p.vocab).finish(),
    groups: groupsFor(total, WG),
  }];
};

// Params: rows, vocab.
const entropyShader = memo(() =>
  shader(
    "entropy",
    [bind("X", "read", "f32"), bind("H", "read_write", "f32"), bind("L", "read_write", "f32")],
    WG,
    ROW + `  let lse = row_lse(base, vocab, li);
  var h = 0.0;
  for (var j = li; j < vocab; j += WG) {
    let lp = X[base + j] - lse;
    let pr = exp(lp);
    if (!is_zero(pr)) { h -= pr * lp; }
  }
  h = wg_sum(h, li);
  if (li == 0u) { L[row] = lse; H[row] = h; }`,
    LSE_REDUCTIONS + ROW_LSE,
  )
);

/** `entropy`: `H[r] = Σ p · (lse − z)`, skipping entries with `p = 0`. */
export const entropy: GpuKernel<"entropy"> = ([logits], [ent, lse], p) => [{
  shader: entropyShader(),
  bindings: [logits!, ent!, lse!],
  params: new Params().u32(p.rows).u32(p.vocab).finish(),
  groups: p.rows,
}];

// Params: total, vocab.
const entropyBackwardShader = memo(() =>
  shader(
    "entropy_backward",
    [
      bind("X", "read", "f32"),
      bind("L", "read", "f32"),
      bind("H", "read", "f32"),
      bind("G", "read", "f32"),
      bind("DX", "read_write", "f32"),
    ],
    WG,
    `  let at = wid * WG + li;
  if (at >= pu(0)) { return; }
  let r = at / pu(1);
  let lp = X[at] - L[r];
  let pr = exp(lp);
  DX[at] = select(-G[r] * pr * (lp + H[r]), 0.0, pr == 0.0);`,
  )
);

/** `entropy_backward`: `dlogits = −dH · p · (log p + H)`, zero where `p = 0`. */
export const entropyBackward: GpuKernel<"entropy_backward"> = (
  [logits, lse, ent, dH],
  [dlogits],
  p,
) => {
  const total = p.rows * p.vocab;
  return [{
    shader: entropyBackwardShader(),
    bindings: [logits!, lse!, ent!, dH!, dlogits!],
    params: new Params().u32(total).u32(p.vocab).finish(),
    groups: groupsFor(total, WG),
  }];
};
