/**
 * The files of LoRA (`model.lora`) checkpoints: the adapters as a PEFT folder
 * (`saveLoraCheckpoint`, `loadLoraCheckpoint`, `isLoraCheckpoint`) and the final checkpoint's
 * `merged/` model (`saveMergedModel`); see `lora.ts` for the design.
 *
 * Design decision: apart from `lora.ts` (the adapters in memory) so that the training session
 * (`session.ts`), which runs in a browser too, imports no file-system code.
 *
 * @module
 */

import { join } from "node:path";
import { type CausalLM, LoraAdapters, type Tokenizer } from "@rlvr/policy";
import type { Tensor } from "@rlvr/tensor";
import { loadSafetensors, saveSafetensors } from "@rlvr/tensor/fs";
import { LORA_FILES, withMergedParams } from "./lora.ts";
import { saveModelFolder, type VisionCheckpoint } from "./model_folder.ts";
import { writeFileAtomic } from "../run/atomic.ts";

/** What {@link loadLoraCheckpoint} reads. */
export interface LoraCheckpoint {
  /** `r`. */
  rank: number;
  /** `lora_alpha`. */
  alpha: number;
  /** `target_modules`. */
  targetModules: string[];
  /** Adapter tensors by PEFT name. */
  weights: Map<string, Tensor>;
  /** Value head tensors (`v_head.*`), empty when none was saved. */
  valueHead: Map<string, Tensor>;
  /** A trained vision tower's tensors (`visual.*`), empty when none was saved. */
  tower: Map<string, Tensor>;
}

/**
 * Whether `dir` holds a LoRA checkpoint (an `adapter_config.json`).
 *
 * @example Usage
 * ```ts
 * import { isLoraCheckpoint } from "./lora_files.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await isLoraCheckpoint("/nonexistent"), false);
 * ```
 */
export async function isLoraCheckpoint(dir: string): Promise<boolean> {
  try {
    return (await Deno.stat(join(dir, LORA_FILES.config))).isFile;
  } catch {
    return false;
  }
}

/**
 * Writes the adapters as a PEFT folder (`adapter_model.safetensors`, `adapter_config.json`), the
 * value head, if any, as `value_head.safetensors`, and `tower` (a vision-language policy's tower
 * trained beside the adapters, `visual.*` tensors), if given, as `vision_tower.safetensors` into
 * `dir` (which must exist).
 *
 * @example Usage
 * ```ts
 * import { attachRunLora } from "./lora.ts";
 * import { loadLoraCheckpoint, saveLoraCheckpoint } from "./lora_files.ts";
 * import { loadPolicy } from "./policy.ts";
 * import { LoraAdapters } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * const lora = attachRunLora(model, { rank: 2, alpha: 4, targetModules: ["v_proj"] }, { seed: 0 });
 * const dir = await Deno.makeTempDir();
 * await saveLoraCheckpoint(dir, model, "builtin:tiny");
 * const back = await loadLoraCheckpoint(dir);
 * assert.equal(back.rank, 2);
 * assert.deepEqual([...back.weights.keys()].sort(), [...lora.params.keys()].sort());
 * back.weights.forEach((t) => t.dispose());
 * model.dispose();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function saveLoraCheckpoint(
  dir: string,
  model: CausalLM,
  baseModel: string,
  tower?: ReadonlyMap<string, Tensor>,
): Promise<void> {
  const lora = model.extension("lora");
  if (!(lora instanceof LoraAdapters)) {
    throw new Error("saveLoraCheckpoint: the model has no LoRA adapters; use saveCheckpoint");
  }
  await saveSafetensors(join(dir, LORA_FILES.adapters), Object.fromEntries(lora.params), {
    metadata: { format: "pt" },
  });
  const head = model.extension("valueHead");
  if (head !== undefined) {
    await saveSafetensors(
      join(dir, LORA_FILES.valueHead),
      Object.fromEntries(head.namedParameters()),
      { metadata: { format: "pt" } },
    );
  }
  if (tower !== undefined) {
    await saveSafetensors(join(dir, LORA_FILES.tower), Object.fromEntries(tower), {
      metadata: { format: "pt" },
    });
  }
  const config = {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    base_model_name_or_path: baseModel,
    r: lora.rank,
    lora_alpha: lora.alpha,
    lora_dropout: 0,
    target_modules: [...lora.targetModules],
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    modules_to_save: null,
    use_rslora: false,
    use_dora: false,
  };
  await writeFileAtomic(join(dir, LORA_FILES.config), JSON.stringify(config, null, 2) + "\n");
}

/**
 * Reads a LoRA checkpoint written by {@link saveLoraCheckpoint} (or a PEFT LoRA folder without
 * biases): the settings, the adapter tensors, the value head and a trained vision tower.
 *
 * @example Usage
 * ```ts
 * import { loadLoraCheckpoint } from "./lora_files.ts";
 * import assert from "node:assert/strict";
 * await assert.rejects(loadLoraCheckpoint("/nonexistent"), /adapter_config\.json/);
 * ```
 */
export async function loadLoraCheckpoint(dir: string): Promise<LoraCheckpoint> {
  const where = join(dir, LORA_FILES.config);
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(await Deno.readTextFile(where));
  } catch (e) {
    throw new Error(
      `loadLoraCheckpoint: cannot read ${where} (${(e as Error).message}); pass a LoRA ` +
        `checkpoint folder written by a run with model.lora`,
      { cause: e },
    );
  }
  const { r, lora_alpha: alpha, target_modules: targets } = config;
  if (!Number.isInteger(r) || typeof alpha !== "number" || !Array.isArray(targets)) {
    throw new Error(
      `loadLoraCheckpoint: ${where} needs an integer "r", a number "lora_alpha" and a list ` +
        `"target_modules", got ${
          JSON.stringify({ r, lora_alpha: alpha, target_modules: targets })
        }`,
    );
  }
  const weights = await loadSafetensors(join(dir, LORA_FILES.adapters));
  const loaded = [weights];
  // An optional file: absent is empty, present but unreadable is an error.
  const optional = async (file: string) => {
    try {
      const m = await loadSafetensors(join(dir, file));
      loaded.push(m);
      return m;
    } catch (e) {
      if (!(await Deno.stat(join(dir, file)).then(() => true, () => false))) return new Map();
      for (const m of loaded) m.forEach((t) => t.dispose());
      throw e;
    }
  };
  const valueHead = await optional(LORA_FILES.valueHead);
  const tower = await optional(LORA_FILES.tower);
  return {
    rank: r as number,
    alpha,
    targetModules: targets as string[],
    weights,
    valueHead,
    tower,
  };
}

/**
 * Writes the policy with its adapters folded in (`W + (alpha / r)·B·A`, computed into new
 * tensors; the model is not changed) as a Hugging Face folder: `config.json`,
 * `model.safetensors` (with the value head's `v_head.*` tensors when there is one), the
 * generation config and the tokenizer; for a vision-language policy (`vision`) also its tower
 * (`visual.*`), a Qwen2-VL `config.json` and `preprocessor_config.json`.
 *
 * @example Usage
 * ```ts
 * import { attachRunLora } from "./lora.ts";
 * import { saveMergedModel } from "./lora_files.ts";
 * import { loadPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * attachRunLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj"] }, { seed: 0 });
 * const dir = await Deno.makeTempDir();
 * await saveMergedModel(`${dir}/merged`, model, tokenizer, null);
 * const merged = await loadPolicy(`${dir}/merged`);
 * assert.equal(merged.model.extension("lora"), undefined);
 * merged.model.dispose();
 * model.dispose();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function saveMergedModel(
  dir: string,
  model: CausalLM,
  tokenizer: Tokenizer,
  generationConfig: Record<string, unknown> | null,
  vision?: VisionCheckpoint,
): Promise<void> {
  if (!(model.extension("lora") instanceof LoraAdapters)) {
    throw new Error("saveMergedModel: the model has no LoRA adapters; use saveCheckpoint");
  }
  await withMergedParams(model, async (params) => {
    const head = model.extension("valueHead");
    // A vision-language policy keeps its (frozen) tower: the merged folder loads as one.
    await saveModelFolder(dir, {
      config: model.config,
      params,
      extra: head === undefined ? new Map() : head.namedParameters(),
      ...(generationConfig !== null ? { generationConfig } : {}),
    }, vision);
    await tokenizer.save(dir);
  });
}
