/**
 * Loading the policy a config names: `builtin:tiny` is the checkpoint shipped in
 * `apps/train/checkpoints/tiny/` (written by `deno task pretrain`), anything else a Hugging
 * Face checkpoint folder with its tokenizer.
 *
 * Design decisions: the built-in name resolves relative to this module, not the working
 * directory, so `deno task train` works from any directory of a fresh clone; when this package
 * is imported by URL (`https:`), the built-in folders are URLs whose files are fetched as the
 * loaders ask for them (`policyFromSource` of `policy_files.ts` builds the policy from a folder,
 * a URL or files in memory alike). Generation stops on
 * every end-of-sequence id the folder names (the tokenizer's `eos_token`, `config.json`'s and
 * `generation_config.json`'s `eos_token_id`), as `transformers`' `generate` does with a
 * generation config: an instruct model such as Qwen2.5-Instruct ends a turn with `<|im_end|>`
 * (its tokenizer's EOS) but lists `<|endoftext|>` in `generation_config.json` too. Tensors go to
 * the default backend, which the training run sets to its device first.
 *
 * @module
 */

import { loadCheckpoint, loadTokenizer } from "@rlvr/policy/fs";
import {
  type CausalLM,
  type ModelConfig,
  parameterCount,
  type Tokenizer,
  type VisionLanguageModel,
} from "@rlvr/policy";
import type { Qwen2VLOptions } from "@rlvr/image";
import type { Tensor } from "@rlvr/tensor";
import { assetLocation, isRemote } from "../_assets.ts";
import {
  policyFromSource,
  type PolicySource,
  policyStopIds,
  urlPolicySource,
} from "./policy_files.ts";

/**
 * The folder of the shipped tiny checkpoint: a path, or a URL ending in `/` when this module was
 * imported by URL.
 */
export const TINY_CHECKPOINT_DIR: string = assetLocation(
  new URL("../checkpoints/tiny/", import.meta.url),
);

/**
 * The folder of the shipped tool-using tiny checkpoint (`builtin:tiny-agent`, written by
 * `deno task pretrain:agent`): a path, or a URL ending in `/` when this module was imported by
 * URL.
 */
export const TINY_AGENT_CHECKPOINT_DIR: string = assetLocation(
  new URL("../checkpoints/tiny-agent/", import.meta.url),
);

/**
 * The folder of the shipped code-writing tiny checkpoint (`builtin:tiny-code`, written by
 * `deno task pretrain:code`): a path, or a URL ending in `/` when this module was imported by
 * URL.
 */
export const TINY_CODE_CHECKPOINT_DIR: string = assetLocation(
  new URL("../checkpoints/tiny-code/", import.meta.url),
);

/**
 * The folder of the shipped chain-of-thought checkpoint (`builtin:tiny-cot`, written by
 * `deno task pretrain:cot`): a path, or a URL ending in `/` when this module was imported by
 * URL.
 */
export const TINY_COT_CHECKPOINT_DIR: string = assetLocation(
  new URL("../checkpoints/tiny-cot/", import.meta.url),
);

/**
 * The folder of the shipped vision-language checkpoint (`builtin:tiny-vl`, a Qwen2-VL written by
 * `deno task pretrain:vl`): a path, or a URL ending in `/` when this module was imported by URL.
 */
export const TINY_VL_CHECKPOINT_DIR: string = assetLocation(
  new URL("../checkpoints/tiny-vl/", import.meta.url),
);

/** A loaded policy. */
export interface LoadedPolicy {
  /** The model. */
  model: CausalLM;
  /** Its tokenizer. */
  tokenizer: Tokenizer;
  /** The folder it was read from (a URL for a checkpoint fetched by URL). */
  dir: string;
  /** Non-parameter tensors found beside the weights (e.g. a value head). */
  extra: Map<string, Tensor>;
  /** The parsed `generation_config.json`, or null when the folder has none. */
  generationConfig: Record<string, unknown> | null;
  /** Ids that end a generation: see {@link stopTokenIds}. */
  eosTokenIds: number[];
  /**
   * For a vision-language checkpoint (`config.json` with `model_type` `qwen2_vl` or
   * `qwen2_5_vl`): the model, whose decoder is {@link LoadedPolicy.model} (`vision.model.lm`,
   * the tower riding on it as its `vision` extension), and the image processor options of its
   * `preprocessor_config.json` (defaults when the folder has none). Null for a text model.
   */
  vision: PolicyVision | null;
}

/** The vision side of a {@link LoadedPolicy}. */
export interface PolicyVision {
  /** The vision-language model (its `lm` is the policy's decoder). */
  model: VisionLanguageModel;
  /** The image processor options of the checkpoint. */
  processor: Qwen2VLOptions;
  /** Its `preprocessor_config.json` as read (written again with training checkpoints), or null. */
  preprocessorConfig: Record<string, unknown> | null;
}

/**
 * The ids that end a generation: the tokenizer's EOS, then the model config's `eos_token_id`,
 * then `generation_config.json`'s `eos_token_id` (a number or a list), without repeats, in that
 * order.
 *
 * @example Usage
 * ```ts
 * import { tinyTokenizer } from "../demo/format.ts";
 * import { stopTokenIds } from "./policy.ts";
 * import { modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const config = modelConfig({
 *   vocabSize: 103, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
 *   eosTokenIds: [2],
 * });
 * assert.deepEqual(stopTokenIds(tinyTokenizer(), config, { eos_token_id: [2, 9] }), [2, 9]);
 * ```
 */
export function stopTokenIds(
  tokenizer: Tokenizer,
  config: ModelConfig,
  generationConfig: Record<string, unknown> | null,
): number[] {
  // One rule for folders and fetched bytes: policy_files.ts holds it (no file system there).
  return policyStopIds(tokenizer, config, generationConfig);
}

/**
 * The folder of `model.checkpoint`: {@link TINY_CHECKPOINT_DIR} for `builtin:tiny`,
 * {@link TINY_AGENT_CHECKPOINT_DIR} for `builtin:tiny-agent`, {@link TINY_CODE_CHECKPOINT_DIR}
 * for `builtin:tiny-code`, {@link TINY_COT_CHECKPOINT_DIR} for `builtin:tiny-cot`,
 * {@link TINY_VL_CHECKPOINT_DIR} for `builtin:tiny-vl`, else the path itself.
 *
 * @example Usage
 * ```ts
 * import { checkpointDir, TINY_CHECKPOINT_DIR } from "./policy.ts";
 * import assert from "node:assert/strict";
 * assert.equal(checkpointDir("builtin:tiny"), TINY_CHECKPOINT_DIR);
 * assert.equal(checkpointDir("models/x"), "models/x");
 * ```
 */
export function checkpointDir(checkpoint: string): string {
  if (checkpoint === "builtin:tiny") return TINY_CHECKPOINT_DIR;
  if (checkpoint === "builtin:tiny-agent") return TINY_AGENT_CHECKPOINT_DIR;
  if (checkpoint === "builtin:tiny-code") return TINY_CODE_CHECKPOINT_DIR;
  if (checkpoint === "builtin:tiny-cot") return TINY_COT_CHECKPOINT_DIR;
  if (checkpoint === "builtin:tiny-vl") return TINY_VL_CHECKPOINT_DIR;
  return checkpoint;
}

/**
 * Loads the model and tokenizer of `checkpoint` (`v_head.*` tensors are returned in `extra`),
 * with its generation config and stop ids; for a vision-language checkpoint, its tower and image
 * processor options too (`vision`). A folder given as an `https:`/`http:` URL (as the built-in
 * ones are when this package is imported by URL) is read over HTTP file by file, shards one at a
 * time, with net permission on its host.
 *
 * @example Usage
 * ```ts
 * import { loadPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const p = await loadPolicy("builtin:tiny");
 * assert.equal(p.model.config.vocabSize, p.tokenizer.vocabSize);
 * assert.deepEqual(p.eosTokenIds, [2]); // <eos>, named by all three files
 * p.model.dispose();
 * ```
 */
export async function loadPolicy(checkpoint: string): Promise<LoadedPolicy> {
  const dir = checkpointDir(checkpoint);
  return await policyFromSource(isRemote(dir) ? urlPolicySource(dir) : folderPolicySource(dir));
}

/** The {@link PolicySource} of a checkpoint folder on disk (the loaders of `@rlvr/policy/fs`). */
function folderPolicySource(dir: string): PolicySource {
  const path = (file: string) => `${dir}/${file}`;
  return {
    name: dir,
    path,
    checkpoint: (options) => loadCheckpoint(dir, options),
    tokenizer: () => loadTokenizer(dir),
    text: async (file) => {
      try {
        return await Deno.readTextFile(path(file));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      }
    },
  };
}

/**
 * Why a run's sequences do not fit the model's context window (`max_position_embeddings`), or
 * null when they do: `maxNewTokens` new tokens after a prompt of `longestPrompt` tokens (at least
 * one, the BOS) need that many positions. A model run past its positions does not fail, it
 * computes positions it was never trained on (RoPE extrapolates), which is why this is checked
 * before step 1. The message names `field` (the setting to change), its value, the model's
 * limit and the largest value that fits.
 *
 * @example Usage
 * ```ts
 * import { contextWindowProblem, loadPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny"); // 256 positions
 * const at = { checkpoint: "builtin:tiny", field: "rollout.maxNewTokens" };
 * assert.equal(contextWindowProblem(model.config, { ...at, maxNewTokens: 8, longestPrompt: 7 }), null);
 * assert.match(
 *   contextWindowProblem(model.config, { ...at, maxNewTokens: 380, longestPrompt: 7 })!,
 *   /^rollout\.maxNewTokens: 380 new tokens after .* need 387 positions, but builtin:tiny has 256 .*set rollout\.maxNewTokens to 249 or less/,
 * );
 * model.dispose();
 * ```
 */
export function contextWindowProblem(
  config: Pick<ModelConfig, "maxPositions">,
  needs: {
    /** `model.checkpoint`, for the message. */
    checkpoint: string;
    /** The setting that gives `maxNewTokens` (`rollout.maxNewTokens`, `--max-new-tokens`). */
    field: string;
    /** Its value. */
    maxNewTokens: number;
    /** Tokens of the longest prompt (default 1: a BOS or one token at least). */
    longestPrompt?: number;
    /** What that prompt is, for the message (default "a prompt"). */
    promptWhat?: string;
  },
): string | null {
  const limit = config.maxPositions;
  const prompt = Math.max(1, needs.longestPrompt ?? 1);
  const total = needs.maxNewTokens + prompt;
  if (total <= limit) return null;
  const what = needs.promptWhat ?? "a prompt";
  const fits = limit - prompt;
  const fix = fits >= 1
    ? `set ${needs.field} to ${fits} or less, or use a model with a longer context`
    : `the prompt alone fills the window: use shorter prompts or a model with a longer context`;
  return `${needs.field}: ${needs.maxNewTokens} new tokens after ${what} (${prompt} tokens) need ${total} positions, but ${needs.checkpoint} has ${limit} (max_position_embeddings in its config.json), and past them the model computes positions it was never trained on; ${fix}`;
}

/** One term of a {@link MemoryEstimate}. */
export interface MemoryPart {
  /** What it holds. */
  name: string;
  /** Its size in bytes. */
  bytes: number;
  /** How it was computed (the sizes multiplied). */
  formula: string;
  /** The config key that scales it (what to lower). */
  field: string;
}

/** A lower bound of the memory a training run needs at its peak: {@link estimateTrainingMemory}. */
export interface MemoryEstimate {
  /** The bound in bytes: the weights, plus the larger of the rollout and the update. */
  bytes: number;
  /** The terms, the weights first. */
  parts: MemoryPart[];
  /** The term of the peak phase (rollout or update), which the fix names. */
  peak: MemoryPart;
}

/**
 * A lower bound of the bytes a training run holds at its peak (f32 everywhere): the weights
 * (the policy, the reference when one is held, and for each trained parameter its gradient and
 * AdamW's two moments), plus the larger of
 * - the rollout: the KV cache of `batchSize` sequences of `positions` tokens (every response of
 *   a step is generated in one batch), and of the held-out evaluation's batch;
 * - the update: per micro-batch of `microBatchSize` sequences, the logits and their gradient
 *   (`micro × positions × vocab`), the attention scores every layer keeps for the backward pass
 *   (`micro × heads × positions²`) and the inputs of each layer's projections.
 * Only what must exist is counted (no allocator overhead, no temporaries), so a run refused by
 * this bound cannot run; one under it may still need more.
 *
 * @example Usage
 * ```ts
 * import { estimateTrainingMemory, loadPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * const small = estimateTrainingMemory(model.config, {
 *   batchSize: 64, microBatchSize: 64, positions: 16, evalSequences: 256,
 *   trainableParameters: 120_000, reference: false,
 * });
 * assert.ok(small.bytes < 50e6);
 * const huge = estimateTrainingMemory(model.config, {
 *   batchSize: 65536, microBatchSize: 64, positions: 256, evalSequences: 256,
 *   trainableParameters: 120_000, reference: false,
 * });
 * assert.equal(huge.peak.field, "rollout.batchSize");
 * assert.ok(huge.bytes > 10e9);
 * model.dispose();
 * ```
 */
export function estimateTrainingMemory(
  config: ModelConfig,
  run: {
    /** Responses per step (`rollout.batchSize`). */
    batchSize: number;
    /** Responses per forward/backward pass (`algorithm.microBatchSize`, capped at the batch). */
    microBatchSize: number;
    /** Positions of the longest sequence: prompt + `rollout.maxNewTokens`. */
    positions: number;
    /** Sequences of one held-out evaluation batch (the evaluator generates up to 256 at once). */
    evalSequences: number;
    /** Parameters trained (all of them, or the adapters with LoRA). */
    trainableParameters: number;
    /** Whether a frozen reference copy of the policy is held. */
    reference: boolean;
  },
): MemoryEstimate {
  const f32 = 4;
  const params = parameterCount(config);
  const T = run.positions;
  const V = config.vocabSize;
  const L = config.numLayers;
  const weights: MemoryPart = {
    name: "weights",
    bytes: f32 * (params * (run.reference ? 2 : 1) + 3 * run.trainableParameters),
    formula: `${params} parameters${
      run.reference ? " x 2 (policy and reference)" : ""
    } + ${run.trainableParameters} trained x 3 (gradient, AdamW moments), x 4 bytes`,
    field: "model.checkpoint",
  };
  const kvPerSequence = L * 2 * config.numKvHeads * config.headDim * T * f32;
  const rollout: MemoryPart = {
    name: "rollout KV cache",
    bytes: run.batchSize * kvPerSequence,
    formula:
      `${run.batchSize} sequences x ${L} layers x 2 x ${config.numKvHeads} KV heads x ${config.headDim} dims x ${T} positions x 4 bytes`,
    field: "rollout.batchSize",
  };
  const evaluation: MemoryPart = {
    name: "evaluation KV cache",
    bytes: run.evalSequences * kvPerSequence,
    formula:
      `${run.evalSequences} sequences x ${L} layers x 2 x ${config.numKvHeads} KV heads x ${config.headDim} dims x ${T} positions x 4 bytes`,
    field: "trainer.evalSamples",
  };
  const m = run.microBatchSize;
  const logits = 2 * m * T * V * f32;
  const scores = m * config.numHeads * T * T * L * f32;
  const inputs = m * T * L * (4 * config.hiddenSize + 3 * config.intermediateSize) * f32;
  const update: MemoryPart = {
    name: "update activations",
    bytes: logits + scores + inputs,
    formula:
      `${m} sequences x ${T} positions x (2 x ${V} vocab logits and gradient + ${L} layers x (${config.numHeads} heads x ${T} attention scores + ${
        4 * config.hiddenSize + 3 * config.intermediateSize
      } projection inputs)) x 4 bytes`,
    field: "algorithm.microBatchSize",
  };
  const peak = [rollout, evaluation, update].reduce((a, b) => (b.bytes > a.bytes ? b : a));
  return { bytes: weights.bytes + peak.bytes, parts: [weights, rollout, evaluation, update], peak };
}

/**
 * Bytes as text with a binary unit: `1.5 GiB`.
 *
 * @example Usage
 * ```ts
 * import { formatBytes } from "./policy.ts";
 * import assert from "node:assert/strict";
 * assert.equal(formatBytes(1536 * 1024 ** 2), "1.5 GiB");
 * assert.equal(formatBytes(512), "512 B");
 * ```
 */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let x = bytes;
  let u = 0;
  while (x >= 1024 && u < units.length - 1) {
    x /= 1024;
    u++;
  }
  return u === 0 ? `${x} B` : `${x.toFixed(1)} ${units[u]}`;
}

/**
 * Why a run whose {@link MemoryEstimate} is `estimate` cannot run on a machine with
 * `availableBytes` of memory, or null when it may: the message names the setting that scales the
 * peak term, its value, the estimate and its formula, the limit (`limitWhat`, default "this
 * machine has") and the fix.
 *
 * @example Usage
 * ```ts
 * import { memoryProblem } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const part = { name: "rollout KV cache", bytes: 64 * 2 ** 30, formula: "...", field: "rollout.batchSize" };
 * const estimate = { bytes: 65 * 2 ** 30, parts: [part], peak: part };
 * assert.equal(memoryProblem(estimate, 128 * 2 ** 30, { "rollout.batchSize": 4096 }), null);
 * assert.match(
 *   memoryProblem(estimate, 16 * 2 ** 30, { "rollout.batchSize": 4096 })!,
 *   /^rollout\.batchSize: 4096 needs at least 65\.0 GiB .* this machine has 16\.0 GiB; lower rollout\.batchSize/,
 * );
 * ```
 */
export function memoryProblem(
  estimate: MemoryEstimate,
  availableBytes: number,
  values: Readonly<Record<string, number>>,
  limitWhat = "this machine has",
): string | null {
  if (estimate.bytes <= availableBytes) return null;
  const { peak } = estimate;
  const value = values[peak.field];
  const others = estimate.parts.filter((p) => p !== peak && p.bytes > 0)
    .map((p) => `${p.name} ${formatBytes(p.bytes)}`).join(", ");
  return `${peak.field}: ${value ?? "the setting"} needs at least ${
    formatBytes(estimate.bytes)
  } of memory (${peak.name} ${
    formatBytes(peak.bytes)
  }: ${peak.formula}; besides: ${others}), but ${limitWhat} ${
    formatBytes(availableBytes)
  }; lower ${peak.field}${
    peak.field === "algorithm.microBatchSize" || peak.field === "rollout.batchSize"
      ? " (or rollout.maxNewTokens, or the prompts' length)"
      : ""
  }`;
}
