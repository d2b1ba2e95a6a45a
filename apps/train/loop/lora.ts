/**
 * LoRA in the training loop (`model.lora`): attaching `@rlvr/policy`'s adapters to the policy,
 * the reference policy as the same model with its adapters switched off, and the files a LoRA
 * checkpoint holds (their names; `lora_files.ts` writes and reads them, apart from this file so
 * that the training session, which runs in a browser too, imports no file-system code).
 *
 * Design decisions:
 * - **Only the adapters train**: `attachLora` freezes the base, so `model.parameters()` (what the
 *   optimizer is built over) is the adapter tensors (and a value head, if any); the base weights
 *   are never written.
 * - **The reference is the base, not a copy**: with `algorithm.kl.beta > 0` the reference
 *   log-probs are computed by the policy itself with its adapters detached for that one
 *   (synchronous, gradient-free) scoring call and attached again right after, so a LoRA run holds
 *   one set of base weights. Since the adapters only add a term, the policy without them is
 *   exactly the frozen base. Extensions are re-attached in their original order (LoRA, then the
 *   value head) so `model.parameters()` keeps its order, which the optimizer state relies on.
 * - **A LoRA checkpoint is a PEFT adapter folder**: `adapter_model.safetensors` (PEFT names) and
 *   `adapter_config.json` (`r`, `lora_alpha`, `target_modules`, `base_model_name_or_path`), plus
 *   a value head in `value_head.safetensors`; not the base weights, which resume reads from
 *   `model.checkpoint` again (they never change). Loaded adapters are put back in the order a
 *   fresh `attachLora` creates them (layer, then module in `LORA_TARGETS` order, A before B), not
 *   the file's order, so the optimizer's moments go to the right tensors.
 * - **The final checkpoint also gets `merged/`**, a plain Hugging Face model folder with
 *   `W + (alpha / r)·B·A` in every adapted weight, computed into new tensors (the live base is
 *   not touched), which `transformers`' `AutoModelForCausalLM.from_pretrained` and `loadPolicy`
 *   read.
 * - **Rollout workers get merged weights too** (`policySnapshot` in `scheduled_rollouts.ts`,
 *   from {@link withMergedParams}), not base + adapters: a worker stays a plain model of
 *   `model.checkpoint` whatever the run trains, the snapshot format, checksum and transports
 *   (Web Workers, NATS) are the full fine-tuning ones unchanged, and a merged forward pass costs
 *   no adapter matmuls. The price is full-size snapshots per version
 *   (what full fine-tuning sends anyway), and log-probs that equal the adapted model's to f32
 *   rounding (`x·(W + s·B·A)ᵀ` against `x·Wᵀ + s·(x·Aᵀ)·Bᵀ`), not bit for bit.
 *
 * @module
 */

import { attachLora, type CausalLM, LORA_TARGETS, LoraAdapters } from "@rlvr/policy";
import type { Tensor } from "@rlvr/tensor";
import type { LoraConfig } from "../config/types.ts";

/** File names of a LoRA checkpoint (inside `checkpoints/step-N/`). */
export const LORA_FILES: Readonly<
  { adapters: string; config: string; valueHead: string; tower: string; merged: string }
> = Object.freeze({
  adapters: "adapter_model.safetensors",
  config: "adapter_config.json",
  valueHead: "value_head.safetensors",
  tower: "vision_tower.safetensors",
  merged: "merged",
});

const PREFIX = "base_model.model.";

/**
 * The PEFT names of the adapter tensors of a model with `numLayers` layers, in the order
 * `attachLora` creates them: layer by layer, modules in `LORA_TARGETS` order, A before B.
 *
 * @example Usage
 * ```ts
 * import { loraParamNames } from "./lora.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(loraParamNames(1, ["v_proj", "q_proj"]), [
 *   "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight",
 *   "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight",
 *   "base_model.model.model.layers.0.self_attn.v_proj.lora_A.weight",
 *   "base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight",
 * ]);
 * ```
 */
export function loraParamNames(numLayers: number, targetModules: readonly string[]): string[] {
  const ordered = LORA_TARGETS.filter((t) => targetModules.includes(t));
  const names: string[] = [];
  for (let layer = 0; layer < numLayers; layer++) {
    for (const target of ordered) {
      const block = ["gate_proj", "up_proj", "down_proj"].includes(target) ? "mlp" : "self_attn";
      const path = `${PREFIX}model.layers.${layer}.${block}.${target}`;
      names.push(`${path}.lora_A.weight`, `${path}.lora_B.weight`);
    }
  }
  return names;
}

/**
 * The adapters {@link attachRunLora} attached: `@rlvr/policy`'s `LoraAdapters`, seen through
 * what the training loop uses.
 *
 * @example Usage
 * ```ts
 * import { type AttachedLora, attachRunLora } from "./lora.ts";
 * import { loadPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * const lora: AttachedLora = attachRunLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj"] }, { seed: 0 });
 * assert.equal(lora.scale, 2);
 * model.dispose();
 * ```
 */
export interface AttachedLora {
  /** Adapter tensors by PEFT name (`...lora_A.weight`, `...lora_B.weight`), in creation order. */
  readonly params: Map<string, Tensor>;
  /** `r`. */
  readonly rank: number;
  /** `lora_alpha`. */
  readonly alpha: number;
  /** `alpha / r`. */
  readonly scale: number;
  /** Whether the adapters are folded into the base weights (never, in the training loop). */
  readonly merged: boolean;
}

/**
 * Attaches `model.lora`'s adapters: fresh ones (A seeded by `seed`, B zero) or `weights` read
 * from a checkpoint (any order; see the module doc).
 *
 * @example Usage
 * ```ts
 * import { attachRunLora } from "./lora.ts";
 * import { loadPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * const lora = attachRunLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj", "v_proj"] }, { seed: 0 });
 * assert.deepEqual(model.parameters(), [...lora.params.values()]); // the base is frozen
 * model.dispose();
 * ```
 */
export function attachRunLora(
  model: CausalLM,
  lora: LoraConfig,
  opts: { seed: number; weights?: Map<string, Tensor> },
): AttachedLora {
  const base = { rank: lora.rank, alpha: lora.alpha, targetModules: lora.targetModules };
  if (opts.weights === undefined) return attachLora(model, { ...base, seed: opts.seed });
  const names = loraParamNames(model.config.numLayers, lora.targetModules);
  const weights = opts.weights;
  const missing = names.filter((n) => !weights.has(n));
  const unexpected = [...weights.keys()].filter((n) => !names.includes(n));
  if (missing.length + unexpected.length > 0) {
    throw new Error(
      `train: the checkpoint's adapters do not fit model.lora (rank ${lora.rank}, targetModules ${
        lora.targetModules.join(", ")
      }): ${missing.length} missing (${missing.slice(0, 3).join(", ")}${
        missing.length > 3 ? ", ..." : ""
      }), ${unexpected.length} unexpected (${unexpected.slice(0, 3).join(", ")}${
        unexpected.length > 3 ? ", ..." : ""
      }); resume with the model.lora the run was started with`,
    );
  }
  return attachLora(model, {
    ...base,
    weights: new Map(names.map((n) => [n, weights.get(n)!])),
  });
}

/**
 * Runs `fn` on the model with its LoRA adapters detached (the frozen base; see the module doc),
 * then attaches them again in the original order. Without adapters it just runs `fn`. `fn` must
 * be synchronous, so nothing else can see the model in between.
 *
 * @example Usage
 * ```ts
 * import { attachRunLora, withoutAdapters } from "./lora.ts";
 * import { loadPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * attachRunLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj"] }, { seed: 0 });
 * assert.equal(withoutAdapters(model, () => model.extension("lora")), undefined);
 * assert.ok(model.extension("lora") !== undefined);
 * model.dispose();
 * ```
 */
export function withoutAdapters<T>(model: CausalLM, fn: () => T): T {
  const lora = model.extension("lora");
  if (lora === undefined) return fn();
  // Detach everything attached after LoRA too, so re-attaching restores the order.
  const head = model.extension("valueHead");
  if (head !== undefined) model.detach(head);
  model.detach(lora);
  try {
    const out = fn();
    if (out instanceof Promise) {
      throw new Error("withoutAdapters: fn must be synchronous (the model is shared)");
    }
    return out;
  } finally {
    model.attach(lora);
    if (head !== undefined) model.attach(head);
  }
}

/**
 * Runs `fn` with the policy's base parameters as a plain model has them, with the LoRA adapters
 * folded in: `W + (alpha / r)·B·A` for every adapted weight, in new tensors freed when `fn`
 * settles (the model is not changed); the other entries are the model's own tensors. Without
 * adapters (or with adapters merged in place), `fn` gets `model.params` itself.
 *
 * @example Usage
 * ```ts
 * import { attachRunLora, withMergedParams } from "./lora.ts";
 * import { loadPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * attachRunLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj"] }, { seed: 0 });
 * const names = await withMergedParams(model, (params) => Promise.resolve([...params.keys()]));
 * assert.deepEqual(names, [...model.params.keys()]); // the plain model's names
 * model.dispose();
 * ```
 */
export async function withMergedParams<T>(
  model: CausalLM,
  fn: (params: ReadonlyMap<string, Tensor>) => Promise<T>,
): Promise<T> {
  const lora = model.extension("lora");
  // Adapters merged in place (`merge()`) are in model.params already.
  if (!(lora instanceof LoraAdapters) || lora.merged) return await fn(model.params);
  const folded = lora.mergedWeights();
  try {
    return await fn(new Map([...model.params, ...folded]));
  } finally {
    for (const t of folded.values()) t.dispose();
  }
}
