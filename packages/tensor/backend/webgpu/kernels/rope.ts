/**
 * WGSL kernel for rotary position embeddings in the rotate-half layout (Hugging Face Llama and
 * Qwen2): feature j of the first half of the rotated block pairs with feature j + rot/2.
 *
 * Design: one invocation per output element, 64 per workgroup; features past `rot` are copied.
 * As in the CPU oracle, `inverse` negates `sin`, which is the exact transpose of the rotation
 * for any table values, so the same kernel is the backward pass.
 *
 * @module
 */

import { bind, type GpuKernel, groupsFor, memo, Params, shader } from "./_wgsl.ts";

const WG = 64;

// Params: total, heads, t, d, rot, tableBatch, sign(f32).
const ropeShader = memo(() =>
  shader(
    "rope",
    [
      bind("X", "read", "f32"),
      bind("CS", "read", "f32"),
      bind("SN", "read", "f32"),
      bind("Y", "read_write", "f32"),
    ],
    WG,
    `  let at = wid * WG + li;
  if (at >= pu(0)) { return; }
  let heads = pu(1);
  let t = pu(2);
  let d = pu(3);
  let rot = pu(4);
  let half = rot / 2u;
  let j = at % d;
  let row = at / d;
  let base = row * d;
  if (j >= rot) {
    Y[at] = X[at];
    return;
  }
  let ti = row % t;
  let b = row / (t * heads);
  let tb = select(b, 0u, pu(5) == 1u);
  let jj = select(j - half, j, j < half);
  let tab = (tb * t + ti) * half + jj;
  let c = CS[tab];
  let s = pf(6) * SN[tab];
  let x1 = X[base + jj];
  let x2 = X[base + half + jj];
  if (j < half) {
    Y[at] = x1 * c - x2 * s;
  } else {
    Y[at] = x2 * c + x1 * s;
  }`,
  )
);

/** `rope`: rotates the first `rot` features of every `[batch, heads, t]` row. */
export const rope: GpuKernel<"rope"> = ([x, cos, sin], [y], p) => {
  const total = p.batch * p.heads * p.t * p.d;
  const params = new Params().u32(total).u32(p.heads).u32(p.t).u32(p.d).u32(p.rot)
    .u32(p.tableBatch).f32(p.inverse ? -1 : 1).finish();
  return [{
    shader: ropeShader(),
    bindings: [x!, cos!, sin!, y!],
    params,
    groups: groupsFor(total, WG),
  }];
};
