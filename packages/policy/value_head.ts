/**
 * A scalar value head on the final hidden states, for PPO critics: `v = h · wᵀ + b` per token,
 * named as TRL's `AutoModelForCausalLMWithValueHead` saves it (`v_head.summary.weight` `[1, H]`,
 * `v_head.summary.bias` `[1]`).
 *
 * Design: the head is a model extension, so `model.parameters()` includes it and an optimizer
 * over the model trains policy (or LoRA adapters) and critic together; it reads the same
 * final-normed hidden states as the LM head (TRL takes `hidden_states[-1]`, which is after the
 * final norm), so PPO can run one trunk pass and apply both heads: `h = model.hidden(ids)`,
 * `model.lmHead(h)`, `head.values(h)`. The weight is drawn from `N(0, std²)` (TRL's "normal"
 * strategy, std 0.2) and the bias starts at 0. TRL's dropout before the head is not implemented.
 *
 * @module
 */

import { fmtShape, keep, Rng, type Tensor, tensor, tidy } from "@rlvr/tensor";
import type { CausalLM, ForwardOptions, ModelExtension } from "./model.ts";

const WEIGHT = "v_head.summary.weight";
const BIAS = "v_head.summary.bias";

/** Options of {@link attachValueHead}. */
export interface ValueHeadOptions {
  /** Seed of the weight (default 0). */
  seed?: number;
  /** Standard deviation of the weight (default 0.2, TRL's `v_head_initializer_range`). */
  std?: number;
  /** Existing tensors by TRL name (`v_head.summary.weight` `[1, H]`, `v_head.summary.bias` `[1]`). */
  weights?: Map<string, Tensor>;
}

/**
 * A value head attached to a model by {@link attachValueHead}.
 *
 * @example Usage
 * ```ts
 * import { attachValueHead, CausalLM, modelConfig } from "@rlvr/policy";
 * import { noGrad, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const model = CausalLM.random(modelConfig({
 *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
 * }));
 * const head = attachValueHead(model, { seed: 1 });
 * // One trunk pass for both heads.
 * const v = noGrad(() => {
 *   const h = model.hidden(tensor([[1, 2, 3]], { dtype: "i32" }));
 *   return head.values(h);
 * });
 * assert.deepEqual(v.shape, [1, 3]);
 * model.dispose();
 * ```
 */
export class ValueHead implements ModelExtension {
  /** Extension kind. */
  readonly kind = "valueHead";
  /** The head trains alongside the base (or its LoRA adapters). */
  readonly freezesBase = false;
  /** `v_head.summary.weight` `[1, hiddenSize]`. */
  readonly weight: Tensor;
  /** `v_head.summary.bias` `[1]`. */
  readonly bias: Tensor;
  #model: CausalLM | null;

  /** Use {@link attachValueHead}. */
  constructor(model: CausalLM, weight: Tensor, bias: Tensor) {
    this.#model = model;
    this.weight = weight;
    this.bias = bias;
    weight.requiresGrad = true;
    bias.requiresGrad = true;
  }

  /** The head's tensors by TRL name. */
  namedParameters(): Map<string, Tensor> {
    return new Map([[WEIGHT, this.weight], [BIAS, this.bias]]);
  }

  /**
   * Values of hidden states: `[..., H]` → `[...]`.
   *
   * @param hidden Final-normed hidden states, e.g. from `model.hidden`.
   * @returns One value per position.
   */
  values(hidden: Tensor): Tensor {
    const h = this.weight.shape[1]!;
    if (hidden.ndim < 1 || hidden.shape[hidden.ndim - 1] !== h) {
      throw new RangeError(
        `ValueHead.values: hidden must be [..., hiddenSize=${h}], got ${fmtShape(hidden.shape)}`,
      );
    }
    return tidy(() => {
      const lead = hidden.shape.slice(0, -1);
      const rows = lead.reduce((a, b) => a * b, 1);
      return hidden.reshape(rows, h).matmul(this.weight, { transB: true }).add(this.bias)
        .reshape(...lead);
    });
  }

  /**
   * Removes the head from its model (the tensors stay alive; dispose them when done).
   *
   * @example Usage
   * ```ts
   * import { attachValueHead, CausalLM, modelConfig } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const model = CausalLM.random(modelConfig({
   *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
   * }));
   * const head = attachValueHead(model);
   * head.detach();
   * assert.equal(model.namedParameters().has("v_head.summary.weight"), false);
   * head.dispose();
   * model.dispose();
   * ```
   */
  detach(): void {
    if (this.#model === null) {
      throw new Error("ValueHead.detach: the head is not attached to a model");
    }
    this.#model.detach(this);
    this.#model = null;
  }

  /** Frees the head's tensors (a model disposes its attached head itself). */
  dispose(): void {
    this.weight.dispose();
    this.bias.dispose();
  }
}

/**
 * Attaches a value head to a model (a fresh seeded one, or given TRL tensors).
 *
 * @param model The model.
 * @param opts Seed and std of the weight, or existing tensors.
 * @returns The head (also `model.extension("valueHead")`).
 *
 * @example Usage
 * ```ts
 * import { attachValueHead, CausalLM, modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const model = CausalLM.random(modelConfig({
 *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
 * }));
 * const head = attachValueHead(model, { seed: 2 });
 * assert.deepEqual(head.weight.shape, [1, 4]);
 * assert.deepEqual(await head.bias.toArray(), [0]);
 * assert.ok(model.namedParameters().has("v_head.summary.bias"));
 * model.dispose();
 * ```
 */
export function attachValueHead(model: CausalLM, opts: ValueHeadOptions = {}): ValueHead {
  const op = "attachValueHead";
  const h = model.config.hiddenSize;
  if (model.extension("valueHead") !== undefined) {
    throw new Error(`${op}: the model already has a value head; detach it first`);
  }
  const backend = model.params.get("model.embed_tokens.weight")!.backend;
  let weight: Tensor;
  let bias: Tensor;
  if (opts.weights !== undefined) {
    const w = opts.weights.get(WEIGHT);
    const b = opts.weights.get(BIAS);
    const extra = [...opts.weights.keys()].filter((n) => n !== WEIGHT && n !== BIAS);
    const problems = [
      w === undefined ? `missing ${WEIGHT}` : "",
      b === undefined ? `missing ${BIAS}` : "",
      w !== undefined && (w.ndim !== 2 || w.shape[0] !== 1 || w.shape[1] !== h)
        ? `${WEIGHT} is ${fmtShape(w.shape)}, want [1,${h}]`
        : "",
      b !== undefined && (b.ndim !== 1 || b.shape[0] !== 1)
        ? `${BIAS} is ${fmtShape(b.shape)}, want [1]`
        : "",
      extra.length > 0 ? `unexpected: ${extra.join(", ")}` : "",
    ].filter((s) => s !== "");
    if (problems.length > 0) {
      throw new RangeError(`${op}: weights do not fit hiddenSize ${h}; ${problems.join("; ")}`);
    }
    weight = w!;
    bias = b!;
  } else {
    const seed = opts.seed ?? 0;
    const std = opts.std ?? 0.2;
    if (!Number.isFinite(seed)) {
      throw new RangeError(`${op}: seed must be a finite number, got ${seed}`);
    }
    if (!(Number.isFinite(std) && std >= 0)) {
      throw new RangeError(`${op}: std must be a finite number >= 0, got ${std}`);
    }
    const rng = new Rng(seed);
    weight = tensor(Array.from({ length: h }, () => rng.normal() * std), {
      shape: [1, h],
      backend,
    });
    bias = tensor([0], { backend });
  }
  const head = new ValueHead(model, keep(weight), keep(bias));
  model.attach(head);
  return head;
}

/**
 * Values of every position of `ids` from the model's attached value head: `[batch, t]`.
 *
 * @param model A model with a value head (see {@link attachValueHead}).
 * @param ids Token ids, i32 `[batch, t]`.
 * @param opts Forward options (cache, positions, attention mask).
 * @returns Values `[batch, t]`.
 *
 * @example Usage
 * ```ts
 * import { attachValueHead, CausalLM, modelConfig, values } from "@rlvr/policy";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const model = CausalLM.random(modelConfig({
 *   vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
 * }));
 * const head = attachValueHead(model);
 * const v = values(model, tensor([[1, 2], [3, 4]], { dtype: "i32" }));
 * v.sum().backward();
 * assert.deepEqual(v.shape, [2, 2]);
 * assert.ok(head.weight.grad !== null);
 * model.dispose();
 * ```
 */
export function values(model: CausalLM, ids: Tensor, opts: ForwardOptions = {}): Tensor {
  const head = model.extension("valueHead");
  if (!(head instanceof ValueHead)) {
    throw new Error("values: the model has no value head; call attachValueHead(model) first");
  }
  return tidy(() => head.values(model.hidden(ids, opts)));
}
