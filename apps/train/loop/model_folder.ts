/**
 * A policy as a checkpoint folder holds it: `saveModelFolder` writes the decoder (`config.json`,
 * `model.safetensors`, the generation config) and, for a vision-language policy, its tower, a
 * Qwen2-VL `config.json` and `preprocessor_config.json`, so the folder loads as one
 * (`loadPolicy`). What training checkpoints (`state.ts`) and LoRA's merged model
 * (`lora_files.ts`) write.
 *
 * Design decision: a file of its own, apart from the in-memory image handling of `vision.ts`, so
 * the training session (`session.ts`), which runs in a browser too, imports no file-system code.
 *
 * @module
 */

import { type CheckpointData, type VisionLanguageModel, vlConfigToHf } from "@rlvr/policy";
import { saveCheckpoint } from "@rlvr/policy/fs";
import { join } from "node:path";
import { writeFileAtomic } from "../run/atomic.ts";

/** A vision-language policy as a checkpoint folder holds it besides the decoder. */
export interface VisionCheckpoint {
  /** The model: its tower is written as the `visual.*` tensors, its config as Qwen2-VL's. */
  model: VisionLanguageModel;
  /** Written as `preprocessor_config.json` when not null. */
  preprocessorConfig: Record<string, unknown> | null;
}

/**
 * `saveCheckpoint(dir, data)`, and for a vision-language policy (`vision`) also its tower beside
 * `data.extra`, a Qwen2-VL `config.json` and `preprocessor_config.json` (atomically), so the
 * folder loads as one (`loadPolicy`): what training checkpoints and LoRA's merged model write.
 *
 * @example Usage
 * ```ts
 * import { loadPolicy } from "./policy.ts";
 * import { saveModelFolder } from "./model_folder.ts";
 * import assert from "node:assert/strict";
 * const p = await loadPolicy("builtin:tiny-vl");
 * const dir = await Deno.makeTempDir();
 * await saveModelFolder(dir, { config: p.model.config, params: p.model.params }, {
 *   model: p.vision!.model,
 *   preprocessorConfig: p.vision!.preprocessorConfig,
 * });
 * await p.tokenizer.save(dir);
 * const again = await loadPolicy(dir);
 * assert.deepEqual(again.vision!.processor, p.vision!.processor);
 * again.model.dispose();
 * p.model.dispose();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function saveModelFolder(
  dir: string,
  data: CheckpointData,
  vision?: VisionCheckpoint,
): Promise<void> {
  if (vision === undefined) return await saveCheckpoint(dir, data);
  await saveCheckpoint(dir, {
    ...data,
    extra: new Map([...(data.extra ?? []), ...vision.model.tower.params]),
    hfConfig: vlConfigToHf(vision.model.config),
  });
  if (vision.preprocessorConfig !== null) {
    await writeFileAtomic(
      join(dir, "preprocessor_config.json"),
      JSON.stringify(vision.preprocessorConfig, null, 2) + "\n",
    );
  }
}
