/**
 * The vision tower of Qwen2-VL (transformers' `Qwen2VisionTransformerPretrainedModel`): a
 * patch embedding (the Conv3d over `[C, T, P, P]` patches as one matmul over the processor's
 * flattened rows), `depth` pre-LayerNorm ViT blocks with full bidirectional attention inside each
 * image (2-D RoPE on queries and keys, no attention across images) and a quick-GELU MLP, then
 * the patch merger: LayerNorm, the `mergeSize²` patches of each window concatenated, and a
 * two-layer GELU MLP into the decoder's width. One output row per image token.
 *
 * Parameters are a `Map` keyed by Hugging Face's names (`visual.*`), as `CausalLM`'s.
 *
 * @module
 */

import {
  concat,
  keep,
  layerNorm,
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

/**
 * The Qwen2-VL vision tower.
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
   * `N(0, std²)`, LayerNorm weights 1, biases 0, drawn on the host in
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
    return tidy(() => {
      const tables = visionRopeTables(gridThw, {
        headDim: d,
        mergeSize: merge,
        backend: pixelValues.backend,
      });
      const w = this.#param("visual.patch_embed.proj.weight").reshape(v.embedDim, patchDim);
      let x = pixelValues.matmul(w, { transB: true });
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
      return this.#linear(`${p}.mlp.2`, geluErf(this.#linear(`${p}.mlp.0`, normed)));
    });
  }

  #block(
    layer: number,
    x: Tensor,
    tables: { cos: Tensor; sin: Tensor },
    lengths: number[],
  ): Tensor {
    const v = this.config;
    const p = `visual.blocks.${layer}`;
    const n = x.shape[0]!;
    const heads = v.numHeads;
    const d = v.embedDim / heads;
    const h = layerNorm(
      x,
      this.#param(`${p}.norm1.weight`),
      this.#param(`${p}.norm1.bias`),
      LN_EPS,
    );
    // qkv rows are [q | k | v], each [heads, d]: → [3, heads, n, d] with a batch axis of 1.
    const qkv = this.#linear(`${p}.attn.qkv`, h).reshape(n, 3, heads, d).permute(1, 2, 0, 3);
    const part = (i: number) => qkv.narrow(0, i, 1);
    const q = rope(part(0), tables.cos, tables.sin);
    const k = rope(part(1), tables.cos, tables.sin);
    const val = part(2);
    const outs: Tensor[] = [];
    let start = 0;
    for (const len of lengths) {
      const seg = (t: Tensor) => t.narrow(2, start, len);
      outs.push(
        scaledDotProductAttention(seg(q), seg(k), seg(val), { causal: false, scale: d ** -0.5 }),
      );
      start += len;
    }
    const attn = (outs.length === 1 ? outs[0]! : concat(outs, 2)).permute(0, 2, 1, 3)
      .reshape(n, v.embedDim);
    const x1 = x.add(this.#linear(`${p}.attn.proj`, attn));
    const h2 = layerNorm(
      x1,
      this.#param(`${p}.norm2.weight`),
      this.#param(`${p}.norm2.bias`),
      LN_EPS,
    );
    const act = v.hiddenAct === "quick_gelu" ? quickGelu : geluErf;
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
