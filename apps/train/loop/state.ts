/**
 * What a training checkpoint (`checkpoints/step-N/`) holds besides the model, and how it is
 * written and read: the optimizer state (`optimizer.json` + `optimizer.bin`), the random state
 * (`rng.json`) and the data iterator (`data.json`); the model itself is a Hugging Face folder
 * (`config.json`, `model.safetensors`, the value head as extra `v_head.*` tensors, the
 * tokenizer files, `generation_config.json`) written by `saveCheckpoint`, so a checkpoint also
 * loads as a policy. With LoRA the model part is the adapters alone, as a PEFT folder
 * (`adapter_model.safetensors`, `adapter_config.json`, see `lora.ts`), since the base weights do
 * not change and are read from `model.checkpoint` again on resume.
 *
 * Design decisions: the optimizer's buffers are stored as raw little-endian bytes of their own
 * typed arrays (no conversion), so a resumed run continues with bit-identical moments; the
 * random state is the sampler seed alone, because every draw is keyed by
 * `(seed, step, sequence, position)` and nothing random is carried from step to step; the data
 * iterator's state is the raw index of the next row of the task's stream.
 *
 * @module
 */

import { readTextOrNull } from "@rlvr/common/fs";
import { join } from "node:path";
import { loadCheckpoint } from "@rlvr/policy/fs";
import {
  type CausalLM,
  LoraAdapters,
  type ModelConfig,
  type Tokenizer,
  ValueHead,
} from "@rlvr/policy";
import type { AdamWHyperparams, OptimizerState, Tensor } from "@rlvr/tensor";
import { writeFileAtomic } from "../run/atomic.ts";
import {
  isLoraCheckpoint,
  loadLoraCheckpoint,
  type LoraCheckpoint,
  saveLoraCheckpoint,
} from "./lora_files.ts";
import type { SchedulerState } from "./scheduler.ts";
import type { PromptSourceState } from "./prompt_source.ts";
import { saveModelFolder, type VisionCheckpoint } from "./model_folder.ts";

/** The non-model state of a checkpoint. */
export interface TrainState {
  /** Training steps completed. */
  step: number;
  /** The sampler seed (the whole random state, see the module doc). */
  seed: number;
  /** The data iterator's position (raw row index of the training stream). */
  dataPosition: number;
}

/** File names inside `checkpoints/step-N/`. */
export const STATE_FILES: Readonly<
  { optimizer: string; optimizerBin: string; rng: string; data: string }
> = Object.freeze({
  optimizer: "optimizer.json",
  optimizerBin: "optimizer.bin",
  rng: "rng.json",
  data: "data.json",
});

interface BufferRef {
  dtype: "f32" | "f64";
  offset: number;
  length: number;
}

/** Options of {@link saveTrainState}. */
export interface SaveTrainStateOptions {
  /** Written as `generation_config.json` (full fine-tuning only; default: none). */
  generationConfig?: Record<string, unknown> | null;
  /** `model.checkpoint`, recorded as a LoRA checkpoint's `base_model_name_or_path`. */
  baseModel?: string;
  /**
   * A vision-language policy. Full fine-tuning: its tower is written as the `visual.*` tensors
   * with a Qwen2-VL `config.json`, and `preprocessorConfig` (when given) as
   * `preprocessor_config.json`, so the checkpoint loads as a vision-language policy. LoRA: the
   * tower, when it trains, as `vision_tower.safetensors` beside the adapters.
   */
  vision?: VisionCheckpoint;
}

/**
 * Writes the model (with its value head, if any; only the adapters when it has LoRA adapters),
 * tokenizer, optimizer, RNG and data state into `dir` (which must exist).
 *
 * @example Usage
 * ```ts
 * import { loadPolicy } from "./policy.ts";
 * import { loadTrainState, saveTrainState } from "./state.ts";
 * import { AdamW } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * const opt = new AdamW(model.parameters(), { lr: 1e-3 });
 * const dir = await Deno.makeTempDir();
 * await saveTrainState(dir, model, tokenizer, opt, { step: 3, seed: 1, dataPosition: 48 });
 * const back = await loadTrainState(dir);
 * assert.deepEqual(back.state, { step: 3, seed: 1, dataPosition: 48 });
 * back.params.forEach((t) => t.dispose());
 * opt.dispose();
 * model.dispose();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function saveTrainState(
  dir: string,
  model: CausalLM,
  tokenizer: Tokenizer,
  optimizer: { state(): Promise<OptimizerState> },
  state: TrainState,
  options: SaveTrainStateOptions = {},
): Promise<void> {
  if (model.extension("lora") instanceof LoraAdapters) {
    // A tower that trains beside the adapters is saved with them (a frozen one is the base's).
    const vlm = options.vision?.model;
    await saveLoraCheckpoint(
      dir,
      model,
      options.baseModel ?? "",
      vlm?.towerTrainable ? vlm.tower.params : undefined,
    );
  } else {
    const extra = new Map<string, Tensor>();
    const head = model.extension("valueHead");
    if (head instanceof ValueHead) {
      for (const [n, t] of head.namedParameters()) extra.set(n, t);
    }
    const generationConfig = options.generationConfig ?? null;
    await saveModelFolder(dir, {
      config: model.config,
      params: model.params,
      extra,
      ...(generationConfig !== null ? { generationConfig } : {}),
    }, options.vision);
  }
  if ("save" in tokenizer && typeof tokenizer.save === "function") {
    await (tokenizer.save as (d: string) => Promise<void>)(dir);
  }
  const opt = await optimizer.state();
  const chunks: Uint8Array[] = [];
  let offset = 0;
  const params = opt.params.map((p) => {
    if (p === null) return null;
    const buffers: Record<string, BufferRef> = {};
    for (const [name, values] of Object.entries(p.buffers)) {
      const typed = values instanceof Float64Array ? values : Float32Array.from(values);
      const bytes = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength).slice();
      buffers[name] = {
        dtype: typed instanceof Float64Array ? "f64" : "f32",
        offset,
        length: typed.length,
      };
      chunks.push(bytes);
      offset += bytes.length;
    }
    return { step: p.step, buffers };
  });
  const bin = new Uint8Array(offset);
  let at = 0;
  for (const c of chunks) {
    bin.set(c, at);
    at += c.length;
  }
  await writeFileAtomic(join(dir, STATE_FILES.optimizerBin), bin);
  await writeFileAtomic(
    join(dir, STATE_FILES.optimizer),
    JSON.stringify({ kind: opt.kind, stepCount: opt.stepCount, groups: opt.groups, params }) +
      "\n",
  );
  await writeFileAtomic(join(dir, STATE_FILES.rng), JSON.stringify({ seed: state.seed }) + "\n");
  await writeFileAtomic(
    join(dir, STATE_FILES.data),
    JSON.stringify({ step: state.step, position: state.dataPosition }) + "\n",
  );
}

/** What {@link loadTrainState} returns. */
export interface LoadedTrainState {
  /** Step, seed and data position. */
  state: TrainState;
  /** The model config (null for a LoRA checkpoint: its base is `model.checkpoint`). */
  config: ModelConfig | null;
  /** The model parameters (Hugging Face names); empty for a LoRA checkpoint. */
  params: Map<string, Tensor>;
  /** The value head tensors, when saved. */
  extra: Map<string, Tensor>;
  /** The adapters and their settings, for a LoRA checkpoint; else null. */
  lora: Omit<LoraCheckpoint, "valueHead"> | null;
  /** The optimizer state, for `optimizer.loadState` of an AdamW. */
  optimizer: OptimizerState<AdamWHyperparams>;
}

/**
 * Reads a checkpoint written by {@link saveTrainState}.
 *
 * @example Usage
 * ```ts
 * import { loadTrainState } from "./state.ts";
 * import assert from "node:assert/strict";
 * await assert.rejects(loadTrainState("/nonexistent"), /no checkpoint folder/);
 * ```
 */
export async function loadTrainState(dir: string): Promise<LoadedTrainState> {
  let model: Pick<LoadedTrainState, "config" | "params" | "extra" | "lora">;
  if (await isLoraCheckpoint(dir)) {
    const { valueHead, ...lora } = await loadLoraCheckpoint(dir);
    model = { config: null, params: new Map(), extra: valueHead, lora };
  } else {
    // visual.*: a vision-language policy's tower, beside the decoder.
    const ckpt = await loadCheckpoint(dir, { allowExtra: /^(v_head\.|visual\.)/ });
    model = { config: ckpt.config, params: ckpt.params, extra: ckpt.extra, lora: null };
  }
  const meta = JSON.parse(await Deno.readTextFile(join(dir, STATE_FILES.optimizer)));
  const bin = await Deno.readFile(join(dir, STATE_FILES.optimizerBin));
  const params = (meta.params as ({ step: number; buffers: Record<string, BufferRef> } | null)[])
    .map((p) => {
      if (p === null) return null;
      const buffers: Record<string, Float32Array | Float64Array> = {};
      for (const [name, ref] of Object.entries(p.buffers)) {
        const bytes = bin.slice(
          ref.offset,
          ref.offset + ref.length * (ref.dtype === "f64" ? 8 : 4),
        );
        buffers[name] = ref.dtype === "f64"
          ? new Float64Array(bytes.buffer)
          : new Float32Array(bytes.buffer);
      }
      return { step: p.step, buffers };
    });
  const rng = JSON.parse(await Deno.readTextFile(join(dir, STATE_FILES.rng)));
  const data = JSON.parse(await Deno.readTextFile(join(dir, STATE_FILES.data)));
  return {
    state: { step: data.step, seed: rng.seed, dataPosition: data.position },
    ...model,
    optimizer: { kind: meta.kind, stepCount: meta.stepCount, groups: meta.groups, params },
  };
}

/** The file of a checkpoint that holds the rollout scheduler's state (asynchronous modes). */
export const SCHEDULER_FILE = "rollouts.json";

/**
 * Writes the rollout scheduler's state (outstanding batches with their versions, jobs to
 * regenerate, the staleness gate) into a checkpoint folder, atomically.
 *
 * @example Usage
 * ```ts
 * import { loadSchedulerState, saveSchedulerState } from "./state.ts";
 * import { StalenessGate } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const state = { nextKey: 3, ready: [], retry: [], gate: new StalenessGate({ maxStaleness: 1 }).toJSON() };
 * await saveSchedulerState(dir, state);
 * assert.deepEqual(await loadSchedulerState(dir), state);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function saveSchedulerState(dir: string, state: SchedulerState): Promise<void> {
  await writeFileAtomic(join(dir, SCHEDULER_FILE), JSON.stringify(state));
}

/**
 * Reads the rollout scheduler's state of a checkpoint folder, or null when it has none (a sync
 * run's checkpoint).
 *
 * @example Usage
 * ```ts
 * import { loadSchedulerState } from "./state.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * assert.equal(await loadSchedulerState(dir), null);
 * await Deno.remove(dir);
 * ```
 */
export function loadSchedulerState(dir: string): Promise<SchedulerState | null> {
  return readOptionalJson<SchedulerState>(join(dir, SCHEDULER_FILE));
}

/** The parsed JSON of `path`, or null when the file does not exist. */
async function readOptionalJson<T>(path: string): Promise<T | null> {
  const text = await readTextOrNull(path);
  return text === null ? null : JSON.parse(text) as T;
}

/** The checkpoint file of the sampling strategies and the adaptive KL coefficient. */
export const SAMPLING_FILE = "sampling.json";

/** What a checkpoint keeps of the sampling strategies and the KL controller. */
export interface SamplingCheckpoint {
  /** The prompt source (take count, pass rates, GRESO, replay store). */
  prompts: PromptSourceState;
  /** The adaptive KL coefficient β for the next step, or null (fixed β). */
  klCoef: number | null;
}

/**
 * Writes the sampling state of a checkpoint folder.
 *
 * @example Usage
 * ```ts
 * import { loadSamplingState, saveSamplingState } from "./state.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const state = { prompts: { version: 1 as const, position: 3, tracker: null, greso: null, replay: {} }, klCoef: 0.02 };
 * await saveSamplingState(dir, state);
 * assert.deepEqual(await loadSamplingState(dir), state);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function saveSamplingState(dir: string, state: SamplingCheckpoint): Promise<void> {
  await writeFileAtomic(join(dir, SAMPLING_FILE), JSON.stringify(state));
}

/**
 * Reads the sampling state of a checkpoint folder, or null when it has none (a run without
 * sampling strategies or adaptive KL).
 *
 * @example Usage
 * ```ts
 * import { loadSamplingState } from "./state.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * assert.equal(await loadSamplingState(dir), null);
 * await Deno.remove(dir);
 * ```
 */
export function loadSamplingState(dir: string): Promise<SamplingCheckpoint | null> {
  return readOptionalJson<SamplingCheckpoint>(join(dir, SAMPLING_FILE));
}
