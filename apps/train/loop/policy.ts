/**
 * Loading the policy a config names: `builtin:tiny` is the checkpoint shipped in
 * `apps/train/checkpoints/tiny/` (written by `deno task pretrain`), anything else a Hugging
 * Face checkpoint folder with its tokenizer.
 *
 * Design decisions: the built-in name resolves relative to this module, not the working
 * directory, so `deno task train` works from any directory of a fresh clone; when this package
 * is imported by URL (`https:`), the built-in folders are URLs and their files are fetched into
 * a temporary folder that is removed once loaded. Generation stops on
 * every end-of-sequence id the folder names (the tokenizer's `eos_token`, `config.json`'s and
 * `generation_config.json`'s `eos_token_id`), as `transformers`' `generate` does with a
 * generation config: an instruct model such as Qwen2.5-Instruct ends a turn with `<|im_end|>`
 * (its tokenizer's EOS) but lists `<|endoftext|>` in `generation_config.json` too. Tensors go to
 * the default backend, which the training run sets to its device first.
 *
 * @module
 */

import {
  CausalLM,
  loadCheckpoint,
  loadTokenizer,
  type ModelConfig,
  type Tokenizer,
} from "@rlvr/policy";
import type { Tensor } from "@rlvr/tensor";
import { assetLocation, fetchBytes, isRemote } from "../_assets.ts";

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
 * The files {@link loadPolicy} fetches from a checkpoint folder given by URL (a URL has no
 * listing), `true` for those that must exist. A sharded checkpoint (no `model.safetensors`)
 * brings `model.safetensors.index.json` and the shards it names instead.
 */
const URL_CHECKPOINT_FILES: readonly (readonly [string, boolean])[] = [
  ["config.json", true],
  ["generation_config.json", false],
  ["tokenizer.json", false],
  ["tokenizer_config.json", false],
  ["chat_template.jinja", false],
];

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
}

/**
 * The ids that end a generation: the tokenizer's EOS, then the model config's `eos_token_id`,
 * then `generation_config.json`'s `eos_token_id` (a number or a list), without repeats, in that
 * order.
 *
 * @example Usage
 * ```ts
 * import { stopTokenIds, tinyTokenizer } from "@rlvr/train";
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
  const fromGeneration = generationConfig?.eos_token_id;
  const listed = Array.isArray(fromGeneration)
    ? fromGeneration
    : fromGeneration == null
    ? []
    : [fromGeneration];
  listed.forEach((id, i) => {
    if (!Number.isInteger(id) || (id as number) < 0 || (id as number) >= config.vocabSize) {
      throw new RangeError(
        `loadPolicy: generation_config.json eos_token_id${
          Array.isArray(fromGeneration) ? `[${i}]` : ""
        } is ${JSON.stringify(id)}; use a token id in [0, ${config.vocabSize}) or remove it`,
      );
    }
  });
  return [
    ...new Set([...tokenizer.eosTokenIds, ...config.eosTokenIds, ...(listed as number[])]),
  ];
}

/**
 * The folder of `model.checkpoint`: {@link TINY_CHECKPOINT_DIR} for `builtin:tiny`,
 * {@link TINY_AGENT_CHECKPOINT_DIR} for `builtin:tiny-agent`, {@link TINY_CODE_CHECKPOINT_DIR}
 * for `builtin:tiny-code`, else the path itself.
 *
 * @example Usage
 * ```ts
 * import { checkpointDir, TINY_CHECKPOINT_DIR } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * assert.equal(checkpointDir("builtin:tiny"), TINY_CHECKPOINT_DIR);
 * assert.equal(checkpointDir("models/x"), "models/x");
 * ```
 */
export function checkpointDir(checkpoint: string): string {
  if (checkpoint === "builtin:tiny") return TINY_CHECKPOINT_DIR;
  if (checkpoint === "builtin:tiny-agent") return TINY_AGENT_CHECKPOINT_DIR;
  if (checkpoint === "builtin:tiny-code") return TINY_CODE_CHECKPOINT_DIR;
  return checkpoint;
}

/**
 * Loads the model and tokenizer of `checkpoint` (`v_head.*` tensors are returned in `extra`),
 * with its generation config and stop ids. A folder given as an `https:`/`http:` URL (as the
 * built-in ones are when this package is imported by URL) is fetched into a temporary folder
 * first (`config.json`, the weights, the tokenizer and generation files), removed once loaded;
 * that needs net permission on its host and write permission on the temporary directory.
 *
 * @example Usage
 * ```ts
 * import { loadPolicy } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const p = await loadPolicy("builtin:tiny");
 * assert.equal(p.model.config.vocabSize, p.tokenizer.vocabSize);
 * assert.deepEqual(p.eosTokenIds, [2]); // <eos>, named by all three files
 * p.model.dispose();
 * ```
 */
export async function loadPolicy(checkpoint: string): Promise<LoadedPolicy> {
  const dir = checkpointDir(checkpoint);
  if (!isRemote(dir)) return await loadPolicyFolder(dir);
  const local = await fetchCheckpoint(dir);
  try {
    return { ...(await loadPolicyFolder(local)), dir };
  } finally {
    await Deno.remove(local, { recursive: true });
  }
}

/** Fetches the files of a checkpoint folder URL into a new temporary folder; returns its path. */
async function fetchCheckpoint(url: string): Promise<string> {
  const base = url.replace(/\/*$/, "/");
  const local = await Deno.makeTempDir({ prefix: "rlvr-checkpoint-" });
  try {
    const get = async (name: string, required: boolean): Promise<boolean> => {
      const bytes = await fetchBytes(new URL(name, base).href, "loadPolicy");
      if (bytes === null && required) {
        throw new Error(
          `loadPolicy: ${new URL(name, base).href} does not exist (HTTP 404); a checkpoint ` +
            `folder given by URL needs config.json and model.safetensors (or ` +
            `model.safetensors.index.json with its shards)`,
        );
      }
      if (bytes !== null) await Deno.writeFile(`${local}/${name}`, bytes);
      return bytes !== null;
    };
    await Promise.all(URL_CHECKPOINT_FILES.map(([name, required]) => get(name, required)));
    if (!(await get("model.safetensors", false))) {
      await get("model.safetensors.index.json", true);
      let index: { weight_map?: Record<string, unknown> } | null;
      try {
        index = JSON.parse(await Deno.readTextFile(`${local}/model.safetensors.index.json`));
      } catch (e) {
        throw new Error(
          `loadPolicy: ${base}model.safetensors.index.json is not JSON: ${(e as Error).message}`,
        );
      }
      for (const shard of new Set(Object.values(index?.weight_map ?? {}))) {
        if (typeof shard !== "string" || !/^[^/\\]+$/.test(shard)) {
          throw new Error(
            `loadPolicy: ${base}model.safetensors.index.json names the shard ${
              JSON.stringify(shard)
            }; use file names of the same folder`,
          );
        }
        await get(shard, true);
      }
    }
    return local;
  } catch (e) {
    await Deno.remove(local, { recursive: true });
    throw e;
  }
}

async function loadPolicyFolder(dir: string): Promise<LoadedPolicy> {
  const ckpt = await loadCheckpoint(dir, { allowExtra: ["v_head.*"] });
  let tokenizer: Tokenizer;
  let eosTokenIds: number[];
  try {
    tokenizer = await loadTokenizer(dir);
    eosTokenIds = stopTokenIds(tokenizer, ckpt.config, ckpt.generationConfig);
  } catch (e) {
    for (const t of [...ckpt.params.values(), ...ckpt.extra.values()]) t.dispose();
    throw e;
  }
  const model = CausalLM.fromParams(ckpt.config, ckpt.params);
  return {
    model,
    tokenizer,
    dir,
    extra: ckpt.extra,
    generationConfig: ckpt.generationConfig,
    eosTokenIds,
  };
}
