/**
 * LoRA adapters (Hu et al., 2021) for {@link CausalLM}, with PEFT's conventions: adapter tensors
 * named `base_model.model.<module>.lora_A.weight` `[rank, in]` and `...lora_B.weight`
 * `[out, rank]`, `A` drawn like `kaiming_uniform_(a=√5)` (uniform in `±1/√in`), `B` zero, and
 * the update `y += (x·Aᵀ·Bᵀ) · alpha/rank`, so a fresh adapter leaves the model's output exactly
 * unchanged and a PEFT checkpoint loads by name.
 *
 * Design: the adapters are a model extension (`ModelExtension`): the model's linear layers offer
 * every `(module, x, y)` to them and they add their term to the targeted ones, so the model knows
 * nothing about LoRA. While attached they freeze the base (`requiresGrad = false` on every base
 * parameter), so a backward pass computes no base gradient at all and `model.parameters()` is the
 * adapter tensors alone. `merge()` folds `scale·B·A` into the base weights in place (same tensor
 * objects, so whatever holds them sees the merged values; for fast inference or weight sync) and
 * the forward pass then skips the adapters; `unmerge()` subtracts it again, which restores the
 * base up to f32 rounding. Dropout on the adapter input is not implemented (RL fine-tuning
 * recipes use none).
 *
 * @module
 */

import { fmtShape, keep, noGrad, Rng, type Tensor, tensor, tidy } from "@rlvr/tensor";
import type { CausalLM, ModelExtension } from "./model.ts";

/** Linear layers LoRA can adapt (PEFT `target_modules` names). */
export const LORA_TARGETS = [
  "q_proj",
  "k_proj",
  "v_proj",
  "o_proj",
  "gate_proj",
  "up_proj",
  "down_proj",
] as const;

/** One of {@link LORA_TARGETS}. */
export type LoraTarget = typeof LORA_TARGETS[number];

/** Options of {@link attachLora}. */
export interface LoraOptions {
  /** Rank `r` of the update (PEFT `r`). */
  rank: number;
  /** `lora_alpha`; the update is scaled by `alpha / rank`. */
  alpha: number;
  /** Which linear layers of every decoder layer to adapt. */
  targetModules: readonly LoraTarget[] | readonly string[];
  /** Seed of the `A` initialisation (default 0). */
  seed?: number;
  /**
   * Adapter tensors to use instead of a fresh initialisation (e.g. read from a PEFT
   * `adapter_model.safetensors`), by PEFT name; the adapters take ownership.
   */
  weights?: Map<string, Tensor>;
}

const PREFIX = "base_model.model.";

function modulePath(layer: number, target: LoraTarget): string {
  const block = ["gate_proj", "up_proj", "down_proj"].includes(target) ? "mlp" : "self_attn";
  return `model.layers.${layer}.${block}.${target}`;
}

/**
 * The LoRA adapters attached to a model by {@link attachLora}.
 *
 * @example Usage
 * ```ts
 * import { attachLora, CausalLM, modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const model = CausalLM.random(modelConfig({
 *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
 * }));
 * const lora = attachLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj", "v_proj"] });
 * assert.equal(lora.scale, 2);
 * assert.deepEqual(
 *   lora.params.get("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight")!.shape,
 *   [2, 4],
 * );
 * model.dispose();
 * ```
 */
export class LoraAdapters implements ModelExtension {
  /** Extension kind. */
  readonly kind = "lora";
  /** LoRA freezes the base parameters while attached. */
  readonly freezesBase = true;
  /** Rank `r`. */
  readonly rank: number;
  /** `lora_alpha`. */
  readonly alpha: number;
  /** `alpha / rank`. */
  readonly scale: number;
  /** The adapted module kinds. */
  readonly targetModules: readonly LoraTarget[];
  /** Adapter tensors by PEFT name (`...lora_A.weight`, `...lora_B.weight`). */
  readonly params: Map<string, Tensor>;
  #model: CausalLM | null;
  #merged = false;
  /** Module path (`model.layers.0.self_attn.q_proj`) → its A and B. */
  #byModule = new Map<string, { a: Tensor; b: Tensor }>();

  /** Use {@link attachLora}. */
  constructor(
    model: CausalLM,
    rank: number,
    alpha: number,
    targets: readonly LoraTarget[],
    params: Map<string, Tensor>,
  ) {
    this.#model = model;
    this.rank = rank;
    this.alpha = alpha;
    this.scale = alpha / rank;
    this.targetModules = Object.freeze([...targets]);
    this.params = params;
    for (const [name, t] of params) {
      t.requiresGrad = true;
      const m = /^base_model\.model\.(.+)\.lora_([AB])\.weight$/.exec(name)!;
      const entry = this.#byModule.get(m[1]!) ?? { a: t, b: t };
      if (m[2] === "A") entry.a = t;
      else entry.b = t;
      this.#byModule.set(m[1]!, entry);
    }
  }

  /** True between {@link LoraAdapters.merge} and {@link LoraAdapters.unmerge}. */
  get merged(): boolean {
    return this.#merged;
  }

  /** {@link LoraAdapters.params}, for the model's `namedParameters()`. */
  namedParameters(): Map<string, Tensor> {
    return new Map(this.params);
  }

  /** Adds `(x·Aᵀ·Bᵀ)·scale` to `y` for adapted modules (nothing while merged). */
  adaptLinear(module: string, x: Tensor, y: Tensor): Tensor {
    const ab = this.#byModule.get(module);
    if (ab === undefined || this.#merged) return y;
    return tidy(() =>
      y.add(x.matmul(ab.a, { transB: true }).matmul(ab.b, { transB: true }).mul(this.scale))
    );
  }

  /**
   * The adapted weights with the adapters folded in, as new tensors: `W + scale·B·A` under each
   * adapted module's weight name (`model.layers.0.self_attn.q_proj.weight`, ...), without
   * changing the model; empty while {@link LoraAdapters.merge}d (the weights hold them then).
   * For a path that reads weights directly (the device decode loop). The caller disposes them.
   *
   * @returns Merged weights by parameter name.
   *
   * @example Usage
   * ```ts
   * import { attachLora, CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * const lora = attachLora(model, { rank: 2, alpha: 4, targetModules: ["up_proj"] });
   * const merged = lora.mergedWeights();
   * assert.deepEqual([...merged.keys()], ["model.layers.0.mlp.up_proj.weight"]);
   * merged.forEach((t) => t.dispose());
   * model.dispose();
   * ```
   */
  mergedWeights(): Map<string, Tensor> {
    const model = this.#requireModel("mergedWeights");
    const out = new Map<string, Tensor>();
    if (this.#merged) return out;
    noGrad(() => {
      for (const [module, { a, b }] of this.#byModule) {
        const name = `${module}.weight`;
        const w = model.params.get(name)!;
        out.set(name, tidy(() => w.add(b.matmul(a).mul(this.scale))));
      }
    });
    return out;
  }

  /**
   * Folds the adapters into the base weights in place, `W += scale·B·A`; the forward pass then
   * skips the adapter term (same output, one matmul per layer less). Train only unmerged: while
   * merged the adapter tensors receive no gradient.
   *
   * @example Usage
   * ```ts
   * import { attachLora, CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * const lora = attachLora(model, { rank: 2, alpha: 4, targetModules: ["up_proj"] });
   * lora.merge();
   * assert.equal(lora.merged, true);
   * lora.unmerge();
   * model.dispose();
   * ```
   */
  merge(): void {
    if (this.#merged) {
      throw new Error("LoraAdapters.merge: already merged; call unmerge() first");
    }
    this.#fold(1);
    this.#merged = true;
  }

  /**
   * Subtracts `scale·B·A` from the base weights again (restores them up to f32 rounding).
   *
   * @example Usage
   * ```ts
   * import { attachLora, CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * const lora = attachLora(model, { rank: 2, alpha: 4, targetModules: ["up_proj"] });
   * assert.throws(() => lora.unmerge(), /not merged/);
   * model.dispose();
   * ```
   */
  unmerge(): void {
    if (!this.#merged) {
      throw new Error("LoraAdapters.unmerge: the adapters are not merged; call merge() first");
    }
    this.#fold(-1);
    this.#merged = false;
  }

  #fold(sign: 1 | -1): void {
    const model = this.#requireModel(sign > 0 ? "merge" : "unmerge");
    noGrad(() => {
      for (const [module, { a, b }] of this.#byModule) {
        const w = model.params.get(`${module}.weight`)!;
        tidy(() => {
          const updated = w.add(b.matmul(a).mul(this.scale * sign));
          // In place, as optimizers update parameters: holders of `w` see the new values.
          w.backend.run("copy", [updated.buffer], [w.buffer], {
            shape: [w.size],
            inStrides: [1],
            inOffset: 0,
            outStrides: [1],
            outOffset: 0,
          });
        });
      }
    });
  }

  /**
   * Removes the adapters from the model (unmerging first if merged); the base parameters train
   * again. The adapter tensors stay alive for saving; dispose them with
   * {@link LoraAdapters.dispose}.
   *
   * @example Usage
   * ```ts
   * import { attachLora, CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * const lora = attachLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj"] });
   * lora.detach();
   * assert.equal(model.extension("lora"), undefined);
   * lora.dispose();
   * model.dispose();
   * ```
   */
  detach(): void {
    const model = this.#requireModel("detach");
    if (this.#merged) this.unmerge();
    model.detach(this);
    this.#model = null;
  }

  /** Frees the adapter tensors (the model disposes attached adapters itself). */
  dispose(): void {
    for (const t of this.params.values()) t.dispose();
  }

  #requireModel(op: string): CausalLM {
    if (this.#model === null) {
      throw new Error(`LoraAdapters.${op}: the adapters were detached from their model`);
    }
    return this.#model;
  }
}

/**
 * Attaches fresh (or given) LoRA adapters to every decoder layer's `targetModules` and freezes
 * the base parameters.
 *
 * @param model The model.
 * @param opts Rank, alpha, target modules, seed, or existing adapter weights.
 * @returns The adapters (also reachable as `model.extension("lora")`).
 *
 * @example Usage
 * ```ts
 * import { attachLora, CausalLM, modelConfig } from "@rlvr/policy";
 * import { noGrad, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const model = CausalLM.random(modelConfig({
 *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 2, numHeads: 2,
 * }));
 * const ids = tensor([[1, 2, 3]], { dtype: "i32" });
 * const before = await noGrad(() => model.forward(ids)).data();
 * attachLora(model, { rank: 4, alpha: 8, targetModules: ["q_proj", "v_proj"], seed: 1 });
 * // B starts at zero: the output is unchanged, and only the adapters train.
 * assert.deepEqual(await noGrad(() => model.forward(ids)).data(), before);
 * assert.equal(model.parameters().length, 2 * 2 * 2);
 * model.dispose();
 * ```
 */
export function attachLora(model: CausalLM, opts: LoraOptions): LoraAdapters {
  const op = "attachLora";
  const { rank, alpha } = opts;
  if (!Number.isInteger(rank) || rank < 1) {
    throw new RangeError(`${op}: rank must be an integer >= 1, got ${rank}`);
  }
  if (!(Number.isFinite(alpha) && alpha > 0)) {
    throw new RangeError(`${op}: alpha must be a finite number > 0, got ${alpha}`);
  }
  const targets = opts.targetModules;
  if (!Array.isArray(targets) || targets.length === 0) {
    throw new RangeError(
      `${op}: targetModules must list at least one of ${LORA_TARGETS.join(", ")}, got ${
        JSON.stringify(targets)
      }`,
    );
  }
  targets.forEach((t, i) => {
    if (!(LORA_TARGETS as readonly string[]).includes(t)) {
      throw new RangeError(
        `${op}: targetModules[${i}] must be one of ${LORA_TARGETS.join(", ")}, got ${
          JSON.stringify(t)
        }`,
      );
    }
    if (targets.indexOf(t) !== i) {
      throw new RangeError(`${op}: targetModules lists ${JSON.stringify(t)} twice`);
    }
  });
  const seed = opts.seed ?? 0;
  if (!Number.isFinite(seed)) {
    throw new RangeError(`${op}: seed must be a finite number, got ${seed}`);
  }
  if (model.extension("lora") !== undefined) {
    throw new Error(`${op}: the model already has LoRA adapters; detach them first`);
  }
  const ordered = LORA_TARGETS.filter((t) => (targets as readonly string[]).includes(t));
  const want = new Map<string, readonly number[]>();
  for (let layer = 0; layer < model.config.numLayers; layer++) {
    for (const target of ordered) {
      const path = modulePath(layer, target);
      const w = model.params.get(`${path}.weight`);
      if (w === undefined) throw new Error(`${op}: the model has no ${path}.weight`);
      const [out, inp] = w.shape as [number, number];
      want.set(`${PREFIX}${path}.lora_A.weight`, [rank, inp]);
      want.set(`${PREFIX}${path}.lora_B.weight`, [out, rank]);
    }
  }
  const backend = model.params.get("model.embed_tokens.weight")!.backend;
  let params: Map<string, Tensor>;
  if (opts.weights !== undefined) {
    params = checkWeights(opts.weights, want);
  } else {
    const rng = new Rng(seed);
    params = new Map();
    for (const [name, shape] of want) {
      const size = shape[0]! * shape[1]!;
      const values = new Float32Array(size);
      if (name.endsWith("lora_A.weight")) {
        // kaiming_uniform_(a=√5) on [r, in]: gain √(2/6), bound = gain·√(3/in) = 1/√in.
        const bound = 1 / Math.sqrt(shape[1]!);
        for (let i = 0; i < size; i++) values[i] = (2 * rng.uniform() - 1) * bound;
      }
      params.set(name, tensor(values, { shape, backend }));
    }
  }
  const lora = new LoraAdapters(model, rank, alpha, ordered, keep(params));
  model.attach(lora);
  return lora;
}

function checkWeights(
  weights: Map<string, Tensor>,
  want: Map<string, readonly number[]>,
): Map<string, Tensor> {
  const missing = [...want.keys()].filter((n) => !weights.has(n));
  const unexpected = [...weights.keys()].filter((n) => !want.has(n));
  const wrong: string[] = [];
  for (const [name, t] of weights) {
    const shape = want.get(name);
    if (shape !== undefined && (t.shape.length !== 2 || t.shape.some((n, i) => n !== shape[i]))) {
      wrong.push(`${name} is ${fmtShape(t.shape)}, want ${fmtShape(shape)}`);
    }
  }
  if (missing.length + unexpected.length + wrong.length > 0) {
    const parts = [
      missing.length > 0 ? `missing: ${missing.join(", ")}` : "",
      unexpected.length > 0 ? `unexpected: ${unexpected.join(", ")}` : "",
      wrong.length > 0 ? `mis-shaped: ${wrong.join("; ")}` : "",
    ].filter((s) => s !== "");
    throw new RangeError(
      `attachLora: weights do not fit rank and targetModules; ${parts.join(" | ")}`,
    );
  }
  return new Map(weights);
}
