/**
 * Test-only float64 reference of the Qwen2-VL vision tower (transformers'
 * `Qwen2VisionTransformerPretrainedModel` as loops over host arrays), with random host
 * parameters. Not published.
 *
 * @module
 */

import {
  type Backend,
  getBackend,
  Rng,
  type Tensor,
  tensor,
  tidy,
  withBackend,
} from "@rlvr/tensor";
import { gradcheck } from "@rlvr/tensor/testing";
import {
  type GridThw,
  mropePositions,
  type VisionConfig,
  type VisionLanguageConfig,
  type VisionLanguageModel,
  visionParameterShapes,
  VisionTower,
  vlConfigToHf,
} from "@rlvr/policy";
import { saveSafetensors } from "@rlvr/tensor/fs";
import { refLogits } from "../_test_reference.ts";

// ---------------------------------------------------------------------------------------------
// The independent reference: transformers' Qwen2VisionTransformerPretrainedModel written as
// float64 loops over host arrays, one patch and one head at a time.

export type HostParams = Map<string, Float64Array>;

export function visionHostParams(v: VisionConfig, seed: number): HostParams {
  const rng = new Rng(seed);
  const out: HostParams = new Map();
  for (const [name, shape] of visionParameterShapes(v)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const a = new Float64Array(size);
    for (let i = 0; i < size; i++) {
      const z = rng.normal();
      a[i] = Math.fround(
        /(norm1|norm2|ln_q)\.weight$/.test(name)
          ? 1 + 0.2 * z
          : name.endsWith(".bias")
          ? 0.2 * z
          : 0.3 * z,
      );
    }
    out.set(name, a);
  }
  return out;
}

export function towerOf(
  v: VisionConfig,
  host: HostParams,
  backend: Backend = getBackend(),
): VisionTower {
  const shapes = visionParameterShapes(v);
  const params = new Map<string, Tensor>();
  for (const [name, a] of host) params.set(name, tensor(a, { shape: shapes.get(name)!, backend }));
  return VisionTower.fromParams(v, params);
}

/** erf to ~1e-15: its Taylor series below 2, the continued fraction of erfc above. */
export function erf(x: number): number {
  const z = Math.abs(x);
  let r: number;
  if (z < 2) {
    let term = z;
    let sum = z;
    for (let n = 1; n < 80; n++) {
      term *= (-z * z) / n;
      sum += term / (2 * n + 1);
    }
    r = (2 / Math.sqrt(Math.PI)) * sum;
  } else {
    // erfc(z) = exp(−z²)/√π · 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + …)))), evaluated bottom-up.
    let f = z;
    for (let n = 120; n >= 1; n--) f = z + n / 2 / f;
    r = 1 - Math.exp(-z * z) / Math.sqrt(Math.PI) / f;
  }
  return x < 0 ? -r : r;
}

/** `x W^T + b` over host arrays (`b` absent: no bias). */
export function refLinear(P: HostParams): (x: number[], name: string) => number[] {
  return (x, name) => {
    const w = P.get(`${name}.weight`)!;
    const b = P.get(`${name}.bias`);
    const out = w.length / x.length;
    return Array.from({ length: out }, (_, o) => {
      let s = b ? b[o]! : 0;
      for (let i = 0; i < x.length; i++) s += w[o * x.length + i]! * x[i]!;
      return s;
    });
  };
}

/** The MLP activation by `hidden_act`. */
export function refAct(name: VisionConfig["hiddenAct"]): (t: number) => number {
  return name === "quick_gelu"
    ? (t) => t / (1 + Math.exp(-1.702 * t))
    : name === "gelu"
    ? (t) => 0.5 * t * (1 + erf(t / Math.SQRT2))
    : (t) => t / (1 + Math.exp(-t));
}

/**
 * (row, column) of each patch in the processor's order and each image's patch count: patch k of
 * a frame of an h×w grid is in merge unit ⌊k/m²⌋ (row-major over the (h/m)×(w/m) units), then
 * row-major inside the unit.
 */
export function refPatchPositions(
  grid: readonly GridThw[],
  m: number,
): { rowCol: [number, number][]; imageLengths: number[] } {
  const rowCol: [number, number][] = [];
  const imageLengths: number[] = [];
  for (const [t, h, w] of grid) {
    imageLengths.push(t * h * w);
    for (let k = 0; k < t * h * w; k++) {
      const inFrame = k % (h * w);
      const unit = Math.floor(inFrame / (m * m));
      const inner = inFrame % (m * m);
      const bh = Math.floor(unit / (w / m));
      const bw = unit % (w / m);
      rowCol.push([bh * m + Math.floor(inner / m), bw * m + (inner % m)]);
    }
  }
  return { rowCol, imageLengths };
}

/**
 * Multi-head attention of the tower's blocks over rows of `qkv` (`[q | k | v]`, each `heads · d`):
 * 2-D RoPE (angles `[row·inv, col·inv]` repeated, rotate_half over the head) on queries and keys
 * at `rowCol`, bidirectional inside each segment of consecutive rows.
 */
export function refSegmentAttention(
  qkv: number[][],
  rowCol: readonly [number, number][],
  segments: readonly number[],
  heads: number,
  d: number,
): number[][] {
  const e = heads * d;
  const inv = Array.from({ length: d / 4 }, (_, j) => 1 / 10000 ** ((2 * j) / (d / 2)));
  const rotate = (x: number[], n: number): number[] => {
    const [r, c] = rowCol[n]!;
    const ang = [...inv.map((f) => r * f), ...inv.map((f) => c * f)];
    const half = d / 2;
    const y = x.slice();
    for (let i = 0; i < half; i++) {
      y[i] = x[i]! * Math.cos(ang[i]!) - x[i + half]! * Math.sin(ang[i]!);
      y[i + half] = x[i + half]! * Math.cos(ang[i]!) + x[i]! * Math.sin(ang[i]!);
    }
    return y;
  };
  const head = (n: number, which: number, hh: number) =>
    qkv[n]!.slice(which * e + hh * d, which * e + (hh + 1) * d);
  const attn = qkv.map(() => new Array<number>(e).fill(0));
  let start = 0;
  for (const len of segments) {
    for (let hh = 0; hh < heads; hh++) {
      const keys = Array.from({ length: len }, (_, j) => rotate(head(start + j, 1, hh), start + j));
      for (let i = start; i < start + len; i++) {
        const q = rotate(head(i, 0, hh), i);
        const scores = keys.map((k) => q.reduce((s, a, c) => s + a * k[c]!, 0) / Math.sqrt(d));
        const mx = Math.max(...scores);
        const ex = scores.map((s) => Math.exp(s - mx));
        const z = ex.reduce((a, b) => a + b, 0);
        for (let j = 0; j < len; j++) {
          const val = head(start + j, 2, hh);
          for (let c = 0; c < d; c++) attn[i]![hh * d + c]! += (ex[j]! / z) * val[c]!;
        }
      }
    }
    start += len;
  }
  return attn;
}

/** The patch merger's MLP over normed rows: each m² consecutive rows concatenated, GELU (erf). */
export function refMerge(
  normed: number[][],
  m: number,
  linear: (x: number[], name: string) => number[],
): number[][] {
  const out: number[][] = [];
  for (let g = 0; g < normed.length; g += m * m) {
    const cat = normed.slice(g, g + m * m).flat();
    const h1 = linear(cat, "visual.merger.mlp.0").map((t) => 0.5 * t * (1 + erf(t / Math.SQRT2)));
    out.push(linear(h1, "visual.merger.mlp.2"));
  }
  return out;
}

export function refTower(
  v: VisionConfig,
  P: HostParams,
  pixels: number[][],
  grid: GridThw[],
): number[][] {
  const get = (n: string) => P.get(n)!;
  const linear = refLinear(P);
  const ln = (x: number[], name: string): number[] => {
    const mean = x.reduce((a, b) => a + b, 0) / x.length;
    const vr = x.reduce((a, b) => a + (b - mean) ** 2, 0) / x.length;
    const w = get(`${name}.weight`);
    const b = get(`${name}.bias`);
    return x.map((t, i) => ((t - mean) / Math.sqrt(vr + 1e-6)) * w[i]! + b[i]!);
  };
  const e = v.embedDim;
  const m = v.spatialMergeSize;
  const { rowCol, imageLengths } = refPatchPositions(grid, m);
  const pw = get("visual.patch_embed.proj.weight");
  let xs = pixels.map((p) =>
    Array.from({ length: e }, (_, o) => p.reduce((s, val, j) => s + pw[o * p.length + j]! * val, 0))
  );
  const act = refAct(v.hiddenAct);
  for (let l = 0; l < v.depth; l++) {
    const p = `visual.blocks.${l}`;
    const qkv = xs.map((x) => linear(ln(x, `${p}.norm1`), `${p}.attn.qkv`));
    const attn = refSegmentAttention(qkv, rowCol, imageLengths, v.numHeads, e / v.numHeads);
    xs = xs.map((x, n) => {
      const x1 = linear(attn[n]!, `${p}.attn.proj`).map((a, i) => a + x[i]!);
      const f = linear(linear(ln(x1, `${p}.norm2`), `${p}.mlp.fc1`).map(act), `${p}.mlp.fc2`);
      return f.map((a, i) => a + x1[i]!);
    });
  }
  return refMerge(xs.map((x) => ln(x, "visual.merger.ln_q")), m, linear);
}

export function randomPixels(rng: Rng, rows: number, dim: number): number[][] {
  return Array.from(
    { length: rows },
    () => Array.from({ length: dim }, () => Math.fround(rng.normal())),
  );
}

/**
 * Checks the gradient of the tower's output with respect to each named parameter against
 * central finite differences of the same forward on `backend` (f64: rtol 1e-5, atol 1e-7).
 */
export async function gradcheckTowerParams(
  tower: VisionTower,
  pixels: Tensor,
  grid: GridThw[],
  names: readonly string[],
  backend: Backend,
): Promise<void> {
  for (const name of names) {
    const original = tower.params.get(name)!;
    await withBackend(backend, () =>
      gradcheck(
        (w) => {
          tower.params.set(name, w);
          try {
            return tidy(() => tower.forward(pixels, grid));
          } finally {
            tower.params.set(name, original);
          }
        },
        [original],
        { rtol: 1e-5, atol: 1e-7, msg: name },
      ));
  }
}

/**
 * The vision-language model's logits from the float64 references: the decoder's reference over
 * token embeddings whose image tokens (`imageTokenId`, unmasked) are replaced, in order, by
 * `features` (a reference tower's rows), at the M-RoPE positions of `grid`.
 */
export function refVlLogits(
  c: VisionLanguageConfig,
  lm: HostParams,
  inputs: { ids: number[][]; mask: number[][]; grid: GridThw[]; features: number[][] },
): number[][][] {
  const { ids, mask, grid, features } = inputs;
  const width = c.text.hiddenSize;
  const embed = lm.get("model.embed_tokens.weight")!;
  let used = 0;
  const embeds = ids.map((row, b) =>
    row.map((id, i) =>
      id === c.imageTokenId && mask[b]![i] === 1
        ? features[used++]!
        : Array.from(embed.subarray(id * width, (id + 1) * width))
    )
  );
  const { positions } = mropePositions(ids, grid, {
    imageTokenId: c.imageTokenId,
    visionStartTokenId: c.visionStartTokenId,
    mergeSize: c.vision.spatialMergeSize,
  }, mask);
  return refLogits(c.text, lm, {
    ids,
    mask,
    positions: [],
    embeds,
    mrope: { positions, section: [c.mropeSection[0], c.mropeSection[1], c.mropeSection[2]] },
  });
}

/**
 * Writes `model` to `dir` in the newer transformers layout: `model.visual.*` and
 * `model.language_model.*` names in one `model.safetensors`, and a `config.json` whose decoder
 * keys are in `text_config` (with `textModelType` as its `model_type` when given) and whose
 * `vision_config` gets `visionExtra`.
 */
export async function saveNewerLayout(
  dir: string,
  model: VisionLanguageModel,
  opts: { textModelType?: string; visionExtra?: Record<string, unknown> } = {},
): Promise<void> {
  const renamed = new Map<string, Tensor>();
  for (const [n, t] of model.params) {
    renamed.set(
      n.startsWith("visual.") ? `model.${n}` : n.replace(/^model\./, "model.language_model."),
      t,
    );
  }
  const {
    model_type,
    architectures,
    vision_config,
    image_token_id,
    vision_start_token_id,
    vision_end_token_id,
    rope_scaling,
    ...text
  } = vlConfigToHf(model.config);
  await Deno.mkdir(dir);
  await saveSafetensors(`${dir}/model.safetensors`, renamed);
  await Deno.writeTextFile(
    `${dir}/config.json`,
    JSON.stringify({
      model_type,
      architectures,
      text_config: {
        ...text,
        ...(opts.textModelType === undefined ? {} : { model_type: opts.textModelType }),
        rope_scaling,
      },
      vision_config: { ...(vision_config as Record<string, unknown>), ...opts.visionExtra },
      image_token_id,
      vision_start_token_id,
      vision_end_token_id,
    }),
  );
}
