/**
 * The vision tower of Qwen2-VL (transformers' `Qwen2VisionTransformerPretrainedModel`): a
 * patch embedding (the Conv3d over `[C, T, P, P]` patches as one matmul over the processor's
 * flattened rows), `depth` pre-LayerNorm ViT blocks with full bidirectional attention inside each
 * image (2-D RoPE on queries and keys, no attention across images) and a quick-GELU MLP, then
 * the patch merger: LayerNorm, the `mergeSize²` patches of each window concatenated, and a
 * two-layer GELU MLP into the decoder's width. One output row per image token.
 *
 * With `kind: "qwen2_5_vl"` it is Qwen2.5-VL's tower (`Qwen2_5_VisionTransformerPretrainedModel`):
 * RMSNorm in place of LayerNorm (blocks and merger), a gated MLP
 * `down(act(gate(x)) · up(x))`, and window attention: the rows (and their rotary angles) are
 * reordered merged token by merged token into window order ({@link visionWindowIndex}), blocks
 * outside `fullattBlockIndexes` attend inside each window only, and the merger's rows are put
 * back into the processor's order at the end. The windows run as one batched attention, padded
 * to the longest window with a key-padding mask.
 *
 * Parameters are a `Map` keyed by Hugging Face's names (`visual.*`), as `CausalLM`'s.
 *
 * @module
 */

import {
  type Backend,
  concat,
  indexSelect,
  keep,
  layerNorm,
  rmsNorm,
  Rng,
  rope,
  scaledDotProductAttention,
  sign,
  type Tensor,
  tensor,
  tidy,
} from "@rlvr/tensor";
import { describeProblems, paramProblems } from "../_check.ts";
import { type VisionConfig, visionParameterShapes } from "./config.ts";
import { type GridThw, visionRopeTables } from "./rope.ts";
import { visionWindowIndex } from "./window.ts";

const LN_EPS = 1e-6;

/**
 * GELU with the exact (erf) form, `0.5·x·(1 + erf(x/√2))` (PyTorch's `nn.GELU()`), from
 * elementwise ops: erfc by Numerical Recipes' Chebyshev fit (relative error < 1.2e-7), so it runs
 * and differentiates on every backend.
 */
function geluErf(x: Tensor): Tensor {
  return tidy(() => {
    const z = x.abs().mul(Math.SQRT1_2);
    const t = z.mul(0.5).add(1).pow(-1);
    const c = [
      -1.26551223,
      1.00002368,
      0.37409196,
      0.09678418,
      -0.18628806,
      0.27886807,
      -1.13520398,
      1.48851587,
      -0.82215223,
      0.17087277,
    ];
    let poly = t.mul(c[9]!).add(c[8]!);
    for (let i = 7; i >= 1; i--) poly = poly.mul(t).add(c[i]!);
    const erfc = t.mul(z.square().neg().add(c[0]!).add(poly.mul(t)).exp());
    // 1 + erf(x/√2) is 2 − erfc(|z|) for x ≥ 0 and erfc(|z|) for x < 0.
    const onePlusErf = sign(x).mul(erfc.neg().add(1)).add(1);
    return x.mul(onePlusErf).mul(0.5);
  });
}

function quickGelu(x: Tensor): Tensor {
  return tidy(() => x.mul(x.mul(1.702).sigmoid()));
}

function activation(name: VisionConfig["hiddenAct"]): (x: Tensor) => Tensor {
  return name === "quick_gelu" ? quickGelu : name === "gelu" ? geluErf : (x) => x.silu();
}

/**
 * The index tensors of Qwen2.5-VL's window attention for one forward (host-computed, i32).
 * `order` moves patch rows into window order, `restore` moves merged rows back; the windows are
 * `windows` rows of `span` slots: `slots` gathers the window-ordered rows into them (padding
 * slots repeat a row of their window and are masked by `mask`), `unslot` gathers them back.
 */
interface WindowPlan {
  order: Tensor;
  restore: Tensor;
  windows: number;
  span: number;
  slots: Tensor;
  unslot: Tensor;
  mask: Tensor | null;
}

/**
 * The Qwen2-VL or Qwen2.5-VL vision tower (by `config.kind`).
 *
 * @example Usage
 * ```ts
 * import { VisionTower, visionConfig } from "@rlvr/policy";
 * import { noGrad, zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 24 });
 * const tower = VisionTower.random(config, { seed: 1 });
 * // One 28×28 image: a 2×2 grid of 14-pixel patches, each 3·2·14·14 = 1176 values.
 * const out = noGrad(() => tower.forward(zeros([4, 1176]), [[1, 2, 2]]));
 * assert.deepEqual(out.shape, [1, 24]); // 2×2 patches merge into one token
 * out.dispose();
 * tower.dispose();
 * ```
 */
export class VisionTower {
  /** The configuration. */
  readonly config: VisionConfig;
  /** Parameters by Hugging Face name (`visual.*`), f32. */
  readonly params: Map<string, Tensor>;

  private constructor(config: VisionConfig, params: Map<string, Tensor>) {
    this.config = config;
    this.params = params;
    for (const p of params.values()) p.requiresGrad = true;
  }

  /**
   * A tower with seeded random weights as Hugging Face initialises it: linear and patch weights
   * `N(0, std²)`, norm weights (LayerNorm or RMSNorm) 1, biases 0, drawn on the host in
   * `visionParameterShapes` order.
   *
   * @example Usage
   * ```ts
   * import { VisionTower, visionConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const tower = VisionTower.random(
   *   visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 24 }),
   * );
   * assert.deepEqual(await tower.params.get("visual.blocks.0.norm1.weight")!.toArray(),
   *   new Array(16).fill(1));
   * tower.dispose();
   * ```
   */
  static random(config: VisionConfig, opts: { seed?: number; std?: number } = {}): VisionTower {
    const rng = new Rng(opts.seed ?? 0);
    const std = opts.std ?? 0.02;
    if (!(Number.isFinite(std) && std >= 0)) {
      throw new RangeError(`VisionTower.random: std must be a finite number >= 0, got ${std}`);
    }
    const params = new Map<string, Tensor>();
    for (const [name, shape] of visionParameterShapes(config)) {
      const size = shape.reduce((a, b) => a * b, 1);
      const isNorm = /\.(norm1|norm2|ln_q)\.weight$/.test(name);
      const values = new Float32Array(size);
      if (isNorm) values.fill(1);
      else if (!name.endsWith(".bias")) {
        for (let i = 0; i < size; i++) values[i] = rng.normal() * std;
      }
      params.set(name, keep(tensor(values, { shape })));
    }
    return new VisionTower(config, params);
  }

  /**
   * A tower over existing tensors, which it takes ownership of; every name of
   * `visionParameterShapes(config)` must be present with its shape (one error lists every
   * problem).
   *
   * @example Usage
   * ```ts
   * import { VisionTower, visionConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const config = visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 24 });
   * assert.throws(() => VisionTower.fromParams(config, new Map()), /missing: visual\.patch_embed/);
   * ```
   */
  static fromParams(config: VisionConfig, params: Map<string, Tensor>): VisionTower {
    const problems = paramProblems(visionParameterShapes(config), params);
    if (problems.missing.length + problems.unexpected.length + problems.wrong.length > 0) {
      throw new RangeError(
        `VisionTower.fromParams: the tensors do not fit the vision config; ` +
          `${describeProblems(problems)}. Names and shapes come from visionParameterShapes(config)`,
      );
    }
    return new VisionTower(config, keep(new Map(params)));
  }

  #param(name: string): Tensor {
    const t = this.params.get(name);
    if (t === undefined) throw new Error(`VisionTower: parameter ${name} is missing`);
    return t;
  }

  #linear(name: string, x: Tensor): Tensor {
    return x.matmul(this.#param(`${name}.weight`), { transB: true }).add(
      this.#param(`${name}.bias`),
    );
  }

  /** Values per patch row: `inChannels · temporalPatchSize · patchSize²`. */
  get patchDim(): number {
    const v = this.config;
    return v.inChannels * v.temporalPatchSize * v.patchSize * v.patchSize;
  }

  /**
   * Image features: one row of width `outHiddenSize` per merged window, images in order.
   *
   * @param pixelValues The processor's patches, f32 `[patches, patchDim]` (rows of all images).
   * @param gridThw `[t, h, w]` of each image, in patches; `Σ t·h·w` must equal `patches`.
   * @returns f32 `[patches / mergeSize², outHiddenSize]`.
   *
   * @example Usage
   * ```ts
   * import { VisionTower, visionConfig } from "@rlvr/policy";
   * import { noGrad, zeros } from "@rlvr/tensor";
   * import assert from "node:assert/strict";
   * const tower = VisionTower.random(
   *   visionConfig({ depth: 1, embedDim: 16, numHeads: 2, outHiddenSize: 24, patchSize: 2 }),
   * );
   * // Two images, 2×2 and 2×4 patches of 3·2·2·2 = 24 values: 1 + 2 tokens.
   * const out = noGrad(() => tower.forward(zeros([12, 24]), [[1, 2, 2], [1, 2, 4]]));
   * assert.deepEqual(out.shape, [3, 24]);
   * tower.dispose();
   * ```
   */
  forward(pixelValues: Tensor, gridThw: readonly GridThw[]): Tensor {
    const v = this.config;
    const patchDim = this.patchDim;
    const merge = v.spatialMergeSize;
    const lengths = gridThw.map((g) => g[0] * g[1] * g[2]);
    const total = lengths.reduce((a, b) => a + b, 0);
    if (
      pixelValues.dtype !== "f32" || pixelValues.ndim !== 2 || pixelValues.shape[0] !== total ||
      pixelValues.shape[1] !== patchDim
    ) {
      throw new RangeError(
        `VisionTower.forward: pixelValues must be f32 [Σ t·h·w, patchDim] = [${total}, ${patchDim}] ` +
          `for gridThw ${
            JSON.stringify(gridThw)
          }, got ${pixelValues.dtype} [${pixelValues.shape}]; ` +
          `make both with processQwen2VLImages`,
      );
    }
    const heads = v.numHeads;
    const d = v.embedDim / heads;
    if (v.kind === "qwen2_5_vl") return this.#forward25(pixelValues, gridThw, lengths, total);
    return tidy(() => {
      const tables = visionRopeTables(gridThw, {
        headDim: d,
        mergeSize: merge,
        backend: pixelValues.backend,
      });
      let x = this.#embedPatches(pixelValues);
      for (let layer = 0; layer < v.depth; layer++) {
        const prev = x;
        x = tidy(() => this.#block(layer, prev, tables, lengths));
        prev.dispose();
      }
      const p = "visual.merger";
      const normed = layerNorm(
        x,
        this.#param(`${p}.ln_q.weight`),
        this.#param(`${p}.ln_q.bias`),
        LN_EPS,
      )
        .reshape(total / merge ** 2, v.embedDim * merge ** 2);
      return this.#mergerMlp(normed);
    });
  }

  /** The patch embedding: the Conv3d over each patch row as one matmul. */
  #embedPatches(pixelValues: Tensor): Tensor {
    const w = this.#param("visual.patch_embed.proj.weight")
      .reshape(this.config.embedDim, this.patchDim);
    return pixelValues.matmul(w, { transB: true });
  }

  /** The merger's two-layer GELU (erf) MLP over the normed, concatenated merge units. */
  #mergerMlp(normed: Tensor): Tensor {
    const p = "visual.merger";
    return this.#linear(`${p}.mlp.2`, geluErf(this.#linear(`${p}.mlp.0`, normed)));
  }

  /** Qwen2.5-VL's forward: window order, window and full attention blocks, RMSNorm merger. */
  #forward25(
    pixelValues: Tensor,
    gridThw: readonly GridThw[],
    lengths: number[],
    total: number,
  ): Tensor {
    const v = this.config;
    const merge = v.spatialMergeSize;
    const d = v.embedDim / v.numHeads;
    const backend = pixelValues.backend;
    return tidy(() => {
      const tables = visionRopeTables(gridThw, { headDim: d, mergeSize: merge, backend });
      const plan = this.#windowPlan(gridThw, total, backend);
      const ordered = {
        cos: indexSelect(tables.cos, 0, plan.order),
        sin: indexSelect(tables.sin, 0, plan.order),
      };
      let x = indexSelect(this.#embedPatches(pixelValues), 0, plan.order);
      const full = new Set(v.fullattBlockIndexes);
      for (let layer = 0; layer < v.depth; layer++) {
        const prev = x;
        x = tidy(() => this.#block25(layer, prev, ordered, full.has(layer) ? lengths : plan));
        prev.dispose();
      }
      const p = "visual.merger";
      const normed = rmsNorm(x, this.#param(`${p}.ln_q.weight`), LN_EPS)
        .reshape(total / merge ** 2, v.embedDim * merge ** 2);
      return indexSelect(this.#mergerMlp(normed), 0, plan.restore);
    });
  }

  /** The window order and the padded window batch of `gridThw` (see {@link WindowPlan}). */
  #windowPlan(gridThw: readonly GridThw[], total: number, backend: Backend): WindowPlan {
    const v = this.config;
    const mm = v.spatialMergeSize ** 2;
    const { index, lengths } = visionWindowIndex(gridThw, {
      mergeSize: v.spatialMergeSize,
      patchSize: v.patchSize,
      windowSize: v.windowSize,
    });
    const order = new Int32Array(total);
    for (let j = 0; j < index.length; j++) {
      for (let k = 0; k < mm; k++) order[j * mm + k] = index[j]! * mm + k;
    }
    const restore = new Int32Array(index.length);
    index.forEach((merged, j) => restore[merged] = j);
    const windows = lengths.length;
    const span = lengths.reduce((a, b) => Math.max(a, b), 0);
    const slots = new Int32Array(windows * span);
    const unslot = new Int32Array(total);
    const mask = new Int32Array(windows * span);
    let start = 0;
    lengths.forEach((len, w) => {
      for (let s = 0; s < span; s++) {
        slots[w * span + s] = start + (s < len ? s : 0);
        mask[w * span + s] = s < len ? 1 : 0;
        if (s < len) unslot[start + s] = w * span + s;
      }
      start += len;
    });
    const i32 = (a: Int32Array, shape: number[]) => tensor(a, { shape, dtype: "i32", backend });
    return {
      order: i32(order, [total]),
      restore: i32(restore, [index.length]),
      windows,
      span,
      slots: i32(slots, [windows * span]),
      unslot: i32(unslot, [total]),
      mask: lengths.every((len) => len === span) ? null : i32(mask, [windows, span]),
    };
  }

  /**
   * A block's attention over the normed rows `h` (`[n, embedDim]` → `[n, embedDim]`, before
   * the output projection): 2-D RoPE on queries and keys, bidirectional, inside each segment of
   * `segments` (patch counts of consecutive rows: the images, or Qwen2.5-VL's full-attention
   * blocks) or inside each window of a {@link WindowPlan} (one batched attention).
   */
  #attention(
    p: string,
    h: Tensor,
    tables: { cos: Tensor; sin: Tensor },
    segments: number[] | WindowPlan,
  ): Tensor {
    const n = h.shape[0]!;
    const heads = this.config.numHeads;
    const d = this.config.embedDim / heads;
    // qkv rows are [q | k | v], each [heads, d]: → [3, heads, n, d] with a batch axis of 1.
    const qkv = this.#linear(`${p}.attn.qkv`, h).reshape(n, 3, heads, d).permute(1, 2, 0, 3);
    const part = (i: number) => qkv.narrow(0, i, 1);
    const q = rope(part(0), tables.cos, tables.sin);
    const k = rope(part(1), tables.cos, tables.sin);
    const val = part(2);
    const opts = { causal: false, scale: d ** -0.5 };
    let attn: Tensor;
    if (Array.isArray(segments)) {
      const outs: Tensor[] = [];
      let start = 0;
      for (const len of segments) {
        const seg = (t: Tensor) => t.narrow(2, start, len);
        outs.push(scaledDotProductAttention(seg(q), seg(k), seg(val), opts));
        start += len;
      }
      attn = outs.length === 1 ? outs[0]! : concat(outs, 2);
    } else {
      // [1, heads, n, d] → the windows as a batch [windows, heads, span, d].
      const { windows, span, slots, unslot, mask } = segments;
      const batch = (t: Tensor) =>
        indexSelect(t, 2, slots).reshape(heads, windows, span, d).permute(1, 0, 2, 3);
      const o = scaledDotProductAttention(
        batch(q),
        batch(k),
        batch(val),
        mask === null ? opts : { ...opts, mask },
      );
      attn = indexSelect(o.permute(1, 0, 2, 3).reshape(1, heads, windows * span, d), 2, unslot);
    }
    return attn.permute(0, 2, 1, 3).reshape(n, this.config.embedDim);
  }

  /**
   * One Qwen2.5-VL block over window-ordered rows: attention inside each image (`segments`, the
   * images' patch counts) or inside each window (`segments`, a {@link WindowPlan}).
   */
  #block25(
    layer: number,
    x: Tensor,
    tables: { cos: Tensor; sin: Tensor },
    segments: number[] | WindowPlan,
  ): Tensor {
    const v = this.config;
    const p = `visual.blocks.${layer}`;
    const h = rmsNorm(x, this.#param(`${p}.norm1.weight`), LN_EPS);
    const x1 = x.add(this.#linear(`${p}.attn.proj`, this.#attention(p, h, tables, segments)));
    const h2 = rmsNorm(x1, this.#param(`${p}.norm2.weight`), LN_EPS);
    const act = activation(v.hiddenAct);
    const gated = act(this.#linear(`${p}.mlp.gate_proj`, h2)).mul(
      this.#linear(`${p}.mlp.up_proj`, h2),
    );
    return x1.add(this.#linear(`${p}.mlp.down_proj`, gated));
  }

  #block(
    layer: number,
    x: Tensor,
    tables: { cos: Tensor; sin: Tensor },
    lengths: number[],
  ): Tensor {
    const v = this.config;
    const p = `visual.blocks.${layer}`;
    const h = layerNorm(
      x,
      this.#param(`${p}.norm1.weight`),
      this.#param(`${p}.norm1.bias`),
      LN_EPS,
    );
    const x1 = x.add(this.#linear(`${p}.attn.proj`, this.#attention(p, h, tables, lengths)));
    const h2 = layerNorm(
      x1,
      this.#param(`${p}.norm2.weight`),
      this.#param(`${p}.norm2.bias`),
      LN_EPS,
    );
    const act = activation(v.hiddenAct);
    return x1.add(this.#linear(`${p}.mlp.fc2`, act(this.#linear(`${p}.mlp.fc1`, h2))));
  }

  /** Every parameter, for an optimizer (an empty list is never returned). */
  parameters(): Tensor[] {
    return [...this.params.values()];
  }

  /** Frees the parameters. */
  dispose(): void {
    for (const t of this.params.values()) t.dispose();
  }
}
