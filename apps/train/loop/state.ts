/**
 * What a training checkpoint (`checkpoints/step-N/`) holds besides the model, and how it is
 * written and read: the optimizer state (`optimizer.json` + `optimizer.bin`), the random state
 * (`rng.json`) and the data iterator (`data.json`); the model itself is a Hugging Face folder
 * (`config.json`, `model.safetensors`, the value head as extra `v_head.*` tensors, the
 * tokenizer files) written by `saveCheckpoint`, so a checkpoint also loads as a policy.
 *
 * Design decisions: the optimizer's buffers are stored as raw little-endian bytes of their own
 * typed arrays (no conversion), so a resumed run continues with bit-identical moments; the
 * random state is the sampler seed alone, because every draw is keyed by
 * `(seed, step, sequence, position)` and nothing random is carried from step to step; the data
 * iterator's state is the raw index of the next row of the task's stream.
 *
 * @module
 */

import { join } from "node:path";
import {
  type CausalLM,
  loadCheckpoint,
  type ModelConfig,
  saveCheckpoint,
  type Tokenizer,
  ValueHead,
} from "@rlvr/policy";
import type { AdamWHyperparams, OptimizerState, Tensor } from "@rlvr/tensor";
import { writeFileAtomic } from "../run/atomic.ts";

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

/**
 * Writes the model (with its value head, if any), tokenizer, optimizer, RNG and data state into
 * `dir` (which must exist).
 *
 * @example Usage
 * ```ts
 * import { loadPolicy, loadTrainState, saveTrainState } from "@rlvr/train";
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
): Promise<void> {
  const extra = new Map<string, Tensor>();
  const head = model.extension("valueHead");
  if (head instanceof ValueHead) {
    for (const [n, t] of head.namedParameters()) extra.set(n, t);
  }
  await saveCheckpoint(dir, { config: model.config, params: model.params, extra });
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
  /** The model config. */
  config: ModelConfig;
  /** The model parameters (Hugging Face names). */
  params: Map<string, Tensor>;
  /** The value head tensors, when saved. */
  extra: Map<string, Tensor>;
  /** The optimizer state, for `optimizer.loadState` of an AdamW. */
  optimizer: OptimizerState<AdamWHyperparams>;
}

/**
 * Reads a checkpoint written by {@link saveTrainState}.
 *
 * @example Usage
 * ```ts
 * import { loadTrainState } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * await assert.rejects(loadTrainState("/nonexistent"), /no checkpoint folder/);
 * ```
 */
export async function loadTrainState(dir: string): Promise<LoadedTrainState> {
  const ckpt = await loadCheckpoint(dir, { allowExtra: ["v_head.*"] });
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
    config: ckpt.config,
    params: ckpt.params,
    extra: ckpt.extra,
    optimizer: { kind: meta.kind, stepCount: meta.stepCount, groups: meta.groups, params },
  };
}
