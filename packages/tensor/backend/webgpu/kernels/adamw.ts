/**
 * WGSL kernel for one AdamW step over a flat parameter buffer, in place on param, m and v.
 *
 * Design: one invocation per element, 256 per workgroup, reading the gradient and updating the
 * three state buffers in place (each element has one writer). `1 − β1` and `1 − β2` are
 * computed on the host in float64 and passed as f32: computing them in f32 from β2 = 0.999
 * would carry a 1e-5 relative error into every second-moment update.
 *
 * @module
 */

import { bind, type GpuKernel, groupsFor, memo, Params, shader } from "./_wgsl.ts";

const WG = 256;

// Params: n, lr, beta1, 1-beta1, beta2, 1-beta2, eps, weightDecay, bc1, bc2.
const adamwShader = memo(() =>
  shader(
    "adamw",
    [
      bind("G", "read", "f32"),
      bind("Pm", "read_write", "f32"),
      bind("M", "read_write", "f32"),
      bind("V", "read_write", "f32"),
    ],
    WG,
    `  let i = wid * WG + li;
  if (i >= pu(0)) { return; }
  let g = G[i];
  let mi = pf(2) * M[i] + pf(3) * g;
  let vi = pf(4) * V[i] + pf(5) * g * g;
  M[i] = mi;
  V[i] = vi;
  let update = (mi / pf(8)) / (sqrt(vi / pf(9)) + pf(6));
  let p = Pm[i];
  Pm[i] = p - pf(1) * (update + pf(7) * p);`,
  )
);

/** `adamw`: one AdamW step with decoupled weight decay. */
export const adamw: GpuKernel<"adamw"> = ([g], [param, m, v], p) => {
  const n = param!.size;
  const params = new Params().u32(n).f32(p.lr).f32(p.beta1).f32(1 - p.beta1).f32(p.beta2)
    .f32(1 - p.beta2).f32(p.eps).f32(p.weightDecay).f32(p.bc1).f32(p.bc2).finish();
  return [{
    shader: adamwShader(),
    bindings: [g!, param!, m!, v!],
    params,
    groups: groupsFor(n, WG),
  }];
};
