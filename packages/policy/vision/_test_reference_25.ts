/**
 * Test-only float64 reference of the Qwen2.5-VL vision tower (transformers'
 * `Qwen2_5_VisionTransformerPretrainedModel` as loops over host arrays), written from the
 * description of the model, not from the tensor implementation: its own window index (a padded
 * grid with -100 sentinels cut into windows, as `get_window_index` builds it), the rows reordered
 * by it, attention over `cu_window_seqlens` / per-image segments, and the merger's rows put
 * back. Not published.
 *
 * One convention is shared with the Qwen2-VL reference of `_test_reference.ts` rather than with
 * transformers: a full-attention block attends over the whole image, all its frames together
 * (transformers cuts `cu_seqlens` per frame; the images here have t = 1, where the two agree).
 *
 * @module
 */

import type { GridThw, VisionConfig } from "@rlvr/policy";
import {
  type HostParams,
  refAct,
  refLinear,
  refMerge,
  refPatchPositions,
  refSegmentAttention,
} from "./_test_reference.ts";

/** `window_index` and `cu_window_seqlens` (in patches, empty windows dropped), as transformers. */
export function refWindowIndex(
  grid: readonly GridThw[],
  v: Pick<VisionConfig, "spatialMergeSize" | "patchSize" | "windowSize">,
): { windowIndex: number[]; cuWindowSeqlens: number[] } {
  const m = v.spatialMergeSize;
  const ws = Math.floor(Math.floor(v.windowSize / m) / v.patchSize);
  const windowIndex: number[] = [];
  const cu: number[] = [0];
  let idOffset = 0;
  for (const [t, h, w] of grid) {
    const H = h / m;
    const W = w / m;
    const padH = ws - (H % ws);
    const padW = ws - (W % ws);
    const PH = H + padH;
    const PW = W + padW;
    const nH = PH / ws;
    const nW = PW / ws;
    // index = arange(t·H·W).reshape(t, H, W), padded with -100 at the bottom and right.
    const padded: number[] = new Array(t * PH * PW).fill(-100);
    for (let f = 0; f < t; f++) {
      for (let r = 0; r < H; r++) {
        for (let c = 0; c < W; c++) padded[(f * PH + r) * PW + c] = (f * H + r) * W + c;
      }
    }
    // reshape (t, nH, ws, nW, ws) → permute (0, 1, 3, 2, 4) → (t, nH·nW, ws, ws).
    const seqlens: number[] = [];
    const flat: number[] = [];
    for (let f = 0; f < t; f++) {
      for (let a = 0; a < nH; a++) {
        for (let b = 0; b < nW; b++) {
          let count = 0;
          for (let i = 0; i < ws; i++) {
            for (let j = 0; j < ws; j++) {
              const val = padded[(f * PH + a * ws + i) * PW + b * ws + j]!;
              flat.push(val);
              if (val !== -100) count++;
            }
          }
          seqlens.push(count);
        }
      }
    }
    for (const val of flat) if (val !== -100) windowIndex.push(val + idOffset);
    let acc = cu[cu.length - 1]!;
    for (const s of seqlens) {
      acc += s * m * m;
      cu.push(acc);
    }
    idOffset += t * H * W;
  }
  // torch.unique_consecutive: empty windows repeat the previous boundary.
  const cuWindowSeqlens = cu.filter((x, i) => i === 0 || x !== cu[i - 1]);
  return { windowIndex, cuWindowSeqlens };
}

/** The Qwen2.5-VL tower's output `[patches / m², outHiddenSize]`, rows in the processor's order. */
export function refTower25(
  v: VisionConfig,
  P: HostParams,
  pixels: number[][],
  grid: readonly GridThw[],
): number[][] {
  const get = (n: string) => P.get(n)!;
  const linear = refLinear(P);
  const rms = (x: number[], name: string): number[] => {
    const ms = x.reduce((a, b) => a + b * b, 0) / x.length;
    const w = get(`${name}.weight`);
    return x.map((t, i) => (t / Math.sqrt(ms + 1e-6)) * w[i]!);
  };
  const e = v.embedDim;
  const m = v.spatialMergeSize;
  const mm = m * m;
  const { rowCol: rowColIn, imageLengths } = refPatchPositions(grid, m);
  const pw = get("visual.patch_embed.proj.weight");
  const embedded = pixels.map((p) =>
    Array.from({ length: e }, (_, o) => p.reduce((s, val, j) => s + pw[o * p.length + j]! * val, 0))
  );
  // Reorder patch rows (and their positions) by merged token into window order.
  const { windowIndex, cuWindowSeqlens } = refWindowIndex(grid, v);
  let xs: number[][] = [];
  const rowCol: [number, number][] = [];
  for (const merged of windowIndex) {
    for (let k = 0; k < mm; k++) {
      xs.push(embedded[merged * mm + k]!);
      rowCol.push(rowColIn[merged * mm + k]!);
    }
  }
  const windowSegments = cuWindowSeqlens.slice(1).map((c, i) => c - cuWindowSeqlens[i]!);
  const act = refAct(v.hiddenAct);
  for (let l = 0; l < v.depth; l++) {
    const p = `visual.blocks.${l}`;
    const segments = v.fullattBlockIndexes.includes(l) ? imageLengths : windowSegments;
    const qkv = xs.map((x) => linear(rms(x, `${p}.norm1`), `${p}.attn.qkv`));
    const attn = refSegmentAttention(qkv, rowCol, segments, v.numHeads, e / v.numHeads);
    xs = xs.map((x, n) => {
      const x1 = linear(attn[n]!, `${p}.attn.proj`).map((a, i) => a + x[i]!);
      const h2 = rms(x1, `${p}.norm2`);
      const gate = linear(h2, `${p}.mlp.gate_proj`).map(act);
      const up = linear(h2, `${p}.mlp.up_proj`);
      const f = linear(gate.map((g, i) => g * up[i]!), `${p}.mlp.down_proj`);
      return f.map((a, i) => a + x1[i]!);
    });
  }
  const merged = refMerge(xs.map((x) => rms(x, "visual.merger.ln_q")), m, linear);
  // reverse_indices = argsort(window_index): output row window_index[j] is merged row j.
  const out: number[][] = new Array(merged.length);
  windowIndex.forEach((orig, j) => out[orig] = merged[j]!);
  return out;
}
