/**
 * WGSL kernels for scaled dot-product attention (grouped-query heads, causal mask with a KV
 * prefix, optional key-padding mask), forward and backward.
 *
 * Design (a plain first version; a tiled flash kernel is later work):
 * - **Forward**: one workgroup of 64 invocations per query row. Keys are processed in blocks of
 *   64, one score per invocation, with an online softmax (running max and denominator, the
 *   FlashAttention recurrence); the output row itself is the accumulator, each invocation
 *   owning a strided set of its columns, so any head dimension works without shared-memory
 *   limits. Only `o` and the row log-sum-exp are written, never the `[tq, tk]` probabilities;
 *   a row that sees no key gets `lse = −Infinity` and a zero output, as in the CPU oracle.
 * - **Backward**: two race-free dispatches that recompute `p = exp(s − lse)`: `dq` with one
 *   workgroup per query row (blocks of keys), and `dk`/`dv` with one workgroup per key row,
 *   walking the query heads that share it and the query rows that see it (blocks of queries).
 *   Every output row has exactly one writer, so no atomics are needed and results are
 *   deterministic.
 * Scores and sums are f32 (the CPU oracle uses float64 accumulators), so results differ by
 * rounding.
 *
 * @module
 */

import type { KernelParams } from "../../types.ts";
import {
  bind,
  type BindingDecl,
  type GpuBinding,
  type GpuKernel,
  memo,
  Params,
  shader,
  wgReduce,
} from "./_wgsl.ts";

const WG = 64;

// Params: rows, heads, kvHeads, tq, tk, d, scale(f32), causal.
const QROW = `  let row = wid;
  if (row >= pu(0)) { return; }
  let heads = pu(1);
  let kvHeads = pu(2);
  let tq = pu(3);
  let tk = pu(4);
  let d = pu(5);
  let scale = pf(6);
  let i = row % tq;
  let bh = row / tq;
  let h = bh % heads;
  let b = bh / heads;
  let group = heads / kvHeads;
  let kvBase = (b * kvHeads + h / group) * tk * d;
  let qBase = row * d;
  var n = tk;
  if (pu(7) != 0u) { n = u32(clamp(i32(tk) - i32(tq) + i32(i) + 1, 0, i32(tk))); }
`;

function params(p: KernelParams["attention"], rows: number): Uint32Array<ArrayBuffer> {
  return new Params().u32(rows).u32(p.heads).u32(p.kvHeads).u32(p.tq).u32(p.tk).u32(p.d)
    .f32(p.scale).u32(p.causal ? 1 : 0).finish();
}

const forwardShader = memo((hasMask: boolean) => {
  const bindings: BindingDecl[] = [
    bind("Q", "read", "f32"),
    bind("K", "read", "f32"),
    bind("V", "read", "f32"),
    ...(hasMask ? [bind("MK", "read", "u32")] : []),
    bind("O", "read_write", "f32"),
    bind("L", "read_write", "f32"),
  ];
  const visible = hasMask ? "j < n && MK[b * tk + j] != 0u" : "j < n";
  return shader(
    `attention${hasMask ? "_mask" : ""}`,
    bindings,
    WG,
    QROW + `  for (var c = li; c < d; c += WG) { O[qBase + c] = 0.0; }
  var m = neg_inf_f();
  var l = 0.0;
  for (var j0 = 0u; j0 < n; j0 += WG) {
    let j = j0 + li;
    var s = neg_inf_f();
    if (${visible}) {
      var dot = 0.0;
      for (var c = 0u; c < d; c++) { dot += Q[qBase + c] * K[kvBase + j * d + c]; }
      s = dot * scale;
    }
    sc[li] = s;
    workgroupBarrier();
    let cnt = min(WG, n - j0);
    var bm = neg_inf_f();
    for (var t = 0u; t < cnt; t++) { bm = max_nan(bm, sc[t]); }
    let mNew = max_nan(m, bm);
    var pr = 0.0;
    if (li < cnt && !is_neg_inf(sc[li])) { pr = exp(sc[li] - mNew); }
    pw[li] = pr;
    workgroupBarrier();
    let alpha = select(exp(m - mNew), 1.0, is_neg_inf(m));
    var bsum = 0.0;
    for (var t = 0u; t < cnt; t++) { bsum += pw[t]; }
    l = l * alpha + bsum;
    for (var c = li; c < d; c += WG) {
      var acc = O[qBase + c] * alpha;
      for (var t = 0u; t < cnt; t++) {
        let p = pw[t];
        if (!is_zero(p)) { acc += p * V[kvBase + (j0 + t) * d + c]; }
      }
      O[qBase + c] = acc;
    }
    m = mNew;
    workgroupBarrier();
  }
  if (is_neg_inf(m)) {
    if (li == 0u) { L[row] = m; }
  } else {
    if (li == 0u) { L[row] = m + log(l); }
    for (var c = li; c < d; c += WG) { O[qBase + c] = O[qBase + c] / l; }
  }`,
    `var<workgroup> sc: array<f32, WG>;
var<workgroup> pw: array<f32, WG>;`,
  );
});

/** `attention`: `o = softmax(scale · q·kᵀ + masks) · v` and the row log-sum-exp. */
export const attention: GpuKernel<"attention"> = ([q, k, v, mask], [o, lse], p) => {
  const rows = p.batch * p.heads * p.tq;
  const bindings = [q!, k!, v!, ...(p.hasMask ? [mask!] : []), o!, lse!];
  return [{ shader: forwardShader(p.hasMask), bindings, params: params(p, rows), groups: rows }];
};

const BACKWARD_IN = (hasMask: boolean): BindingDecl[] => [
  bind("Q", "read", "f32"),
  bind("K", "read", "f32"),
  bind("V", "read", "f32"),
  bind("O", "read", "f32"),
  bind("L", "read", "f32"),
  bind("DO", "read", "f32"),
  ...(hasMask ? [bind("MK", "read", "u32")] : []),
];

const dqShader = memo((hasMask: boolean) => {
  const visible = hasMask ? "j < n && MK[b * tk + j] != 0u" : "j < n";
  return shader(
    `attention_backward_dq${hasMask ? "_mask" : ""}`,
    [...BACKWARD_IN(hasMask), bind("DQ", "read_write", "f32")],
    WG,
    QROW + `  if (li == 0u) { wl = L[row]; }
  let lr = workgroupUniformLoad(&wl);
  if (is_neg_inf(lr)) { n = 0u; }
  var dd = 0.0;
  for (var c = li; c < d; c += WG) {
    dd += DO[qBase + c] * O[qBase + c];
    DQ[qBase + c] = 0.0;
  }
  let D = wg_sum(dd, li);
  for (var j0 = 0u; j0 < n; j0 += WG) {
    let j = j0 + li;
    var ds = 0.0;
    if (${visible}) {
      var s = 0.0;
      var dp = 0.0;
      for (var c = 0u; c < d; c++) {
        s += Q[qBase + c] * K[kvBase + j * d + c];
        dp += DO[qBase + c] * V[kvBase + j * d + c];
      }
      let pr = exp(s * scale - lr);
      if (!is_zero(pr)) { ds = pr * (dp - D); }
    }
    dsw[li] = ds;
    workgroupBarrier();
    let cnt = min(WG, n - j0);
    for (var c = li; c < d; c += WG) {
      var acc = DQ[qBase + c];
      for (var t = 0u; t < cnt; t++) { acc += dsw[t] * K[kvBase + (j0 + t) * d + c]; }
      DQ[qBase + c] = acc;
    }
    workgroupBarrier();
  }
  for (var c = li; c < d; c += WG) { DQ[qBase + c] = scale * DQ[qBase + c]; }`,
    `var<workgroup> wl: f32;
var<workgroup> dsw: array<f32, WG>;
${wgReduce("sum", "a + b")}`,
  );
});

// Params as QROW, but word 0 is batch·kvHeads·tk (one workgroup per key row).
const dkdvShader = memo((hasMask: boolean) =>
  shader(
    `attention_backward_dkdv${hasMask ? "_mask" : ""}`,
    [...BACKWARD_IN(hasMask), bind("DK", "read_write", "f32"), bind("DV", "read_write", "f32")],
    WG,
    `  let kr = wid;
  if (kr >= pu(0)) { return; }
  let heads = pu(1);
  let kvHeads = pu(2);
  let tq = pu(3);
  let tk = pu(4);
  let d = pu(5);
  let scale = pf(6);
  let j = kr % tk;
  let bk = kr / tk;
  let kvh = bk % kvHeads;
  let b = bk / kvHeads;
  let kBase = kr * d;
  for (var c = li; c < d; c += WG) {
    DK[kBase + c] = 0.0;
    DV[kBase + c] = 0.0;
  }
${
      hasMask
        ? `  if (li == 0u) { wm = MK[b * tk + j]; }
  if (workgroupUniformLoad(&wm) == 0u) { return; }
`
        : ""
    }  let group = heads / kvHeads;
  var i0 = 0u;
  if (pu(7) != 0u) { i0 = u32(max(0, i32(j) + i32(tq) - i32(tk))); }
  for (var hh = 0u; hh < group; hh++) {
    let rowBase = (b * heads + kvh * group + hh) * tq;
    for (var ib = i0; ib < tq; ib += WG) {
      let i = ib + li;
      var pr = 0.0;
      var ds = 0.0;
      if (i < tq) {
        let row = rowBase + i;
        let lr = L[row];
        if (!is_neg_inf(lr)) {
          let qB = row * d;
          var s = 0.0;
          var dp = 0.0;
          var dd = 0.0;
          for (var c = 0u; c < d; c++) {
            s += Q[qB + c] * K[kBase + c];
            dp += DO[qB + c] * V[kBase + c];
            dd += DO[qB + c] * O[qB + c];
          }
          let p = exp(s * scale - lr);
          if (!is_zero(p)) {
            pr = p;
            ds = p * (dp - dd);
          }
        }
      }
      pw[li] = pr;
      dsw[li] = ds;
      workgroupBarrier();
      let cnt = min(WG, tq - ib);
      for (var c = li; c < d; c += WG) {
        var ak = DK[kBase + c];
        var av = DV[kBase + c];
        for (var t = 0u; t < cnt; t++) {
          let qr = (rowBase + ib + t) * d + c;
          ak += scale * dsw[t] * Q[qr];
          av += pw[t] * DO[qr];
        }
        DK[kBase + c] = ak;
        DV[kBase + c] = av;
      }
      workgroupBarrier();
    }
  }`,
    `var<workgroup> wm: u32;
var<workgroup> pw: array<f32, WG>;
var<workgroup> dsw: array<f32, WG>;`,
  )
);

/** `attention_backward`: `dq` per query row, then `dk`/`dv` per key row. */
export const attentionBackward: GpuKernel<"attention_backward"> = (inputs, [dq, dk, dv], p) => {
  const ins: GpuBinding[] = inputs.slice(0, p.hasMask ? 7 : 6).map((b) => b!);
  const qRows = p.batch * p.heads * p.tq;
  const kRows = p.batch * p.kvHeads * p.tk;
  return [
    {
      shader: dqShader(p.hasMask),
      bindings: [...ins, dq!],
      params: params(p, qRows),
      groups: qRows,
    },
    {
      shader: dkdvShader(p.hasMask),
      bindings: [...ins, dk!, dv!],
      params: params(p, kRows),
      groups: kRows,
    },
  ];
};
