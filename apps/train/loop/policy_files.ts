/**
 * Building a policy from a checkpoint folder wherever its files are: {@link policyFromSource}
 * builds the {@link LoadedPolicy} from a {@link PolicySource} (a folder on disk, `policy.ts`;
 * files in memory, {@link filesPolicySource}, what a browser tab fetched with
 * {@link fetchPolicyFiles} or a user picked; a base URL, {@link urlPolicySource}), so
 * `loadPolicy` and a tab build the same policy and `learnerFromPolicy` (`policy_learner.ts`) the
 * same learner.
 *
 * Design decisions:
 * - **One builder, three places**: the sources are the loaders of `@rlvr/policy` for each
 *   place (which share their parsing, checks and errors); the model, stop ids and the
 *   vision-language branch are built here once.
 * - **No file system here**: `policy.ts` resolves `builtin:` names and gives the folder source
 *   (Deno); this file imports only browser-safe modules.
 * - **Same stop ids**: {@link policyStopIds} (the tokenizer's EOS, `config.json`'s, then
 *   `generation_config.json`'s `eos_token_id`) is the one rule; `stopTokenIds` of `policy.ts`
 *   calls it.
 *
 * @module
 */

import {
  CausalLM,
  type Checkpoint,
  type FileContents,
  loadCheckpointFromFiles,
  loadCheckpointFromUrl,
  type LoadCheckpointOptions,
  loadTokenizerFromFiles,
  loadTokenizerFromUrl,
  type ModelConfig,
  type Tokenizer,
  VISION_LANGUAGE_MODEL_TYPES,
  VisionLanguageModel,
  vlConfigFromHf,
} from "@rlvr/policy";
import { qwen2VLOptionsFromConfig } from "@rlvr/image";
import type { Tensor } from "@rlvr/tensor";
import type { LoadedPolicy } from "./policy.ts";
import { fetchOrNull, pageHref } from "./fetch_policy_files.ts";

/** `model_type`s of `config.json` loaded as a `VisionLanguageModel` (Qwen2-VL, Qwen2.5-VL). */
const VISION_MODEL_TYPES: readonly string[] = VISION_LANGUAGE_MODEL_TYPES;

const decoder = new TextDecoder();

/**
 * The ids that end a generation: the tokenizer's EOS, then the model config's `eos_token_id`,
 * then `generation_config.json`'s (a number or a list), without repeats, in that order; the
 * same list as `stopTokenIds` of `policy.ts`.
 *
 * @param tokenizer The checkpoint's tokenizer.
 * @param config Its model config.
 * @param generationConfig Its parsed `generation_config.json`, or null.
 * @returns The stop ids.
 * @throws {RangeError} naming the entry of `generation_config.json` that is not a token id.
 *
 * @example Usage
 * ```ts
 * import { CharTokenizer, modelConfig } from "@rlvr/policy";
 * import { policyStopIds } from "./policy_files.ts";
 * import assert from "node:assert/strict";
 * const tok = CharTokenizer.fromCorpus(["0123456789"]);
 * const config = modelConfig({
 *   vocabSize: tok.vocabSize, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
 * });
 * assert.deepEqual(policyStopIds(tok, config, { eos_token_id: [9] }), [...tok.eosTokenIds, 9]);
 * ```
 */
export function policyStopIds(
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

function fileText(files: FileContents, name: string): string | null {
  const value = files instanceof Map
    ? (files as ReadonlyMap<string, Uint8Array | ArrayBuffer | string>).get(name)
    : (files as Readonly<Record<string, Uint8Array | ArrayBuffer | string>>)[name];
  if (value === undefined) return null;
  if (typeof value === "string") return value;
  return decoder.decode(value instanceof ArrayBuffer ? new Uint8Array(value) : value);
}

/**
 * Where {@link policyFromSource} reads a checkpoint folder: the loaders of `@rlvr/policy` for one
 * place (a folder on disk, files in memory, a base URL), so every place gives the same policy
 * through the same parsing, checks and errors.
 */
export interface PolicySource {
  /** The policy's `dir`: the folder, the URL or the name of the files. */
  readonly name: string;
  /** How messages name file `file` of the folder. */
  path(file: string): string;
  /** The checkpoint (`loadCheckpoint`, `loadCheckpointFromFiles` or `...FromUrl`). */
  checkpoint(options: LoadCheckpointOptions): Promise<Checkpoint>;
  /** The tokenizer (`loadTokenizer`, `loadTokenizerFromFiles` or `...FromUrl`). */
  tokenizer(): Promise<Tokenizer>;
  /** The text of an optional file (`config.json`, `preprocessor_config.json`), null if absent. */
  text(file: string): Promise<string | null>;
}

/**
 * A {@link PolicySource} over a checkpoint folder's files in memory.
 *
 * @param files The files by name.
 * @param name What messages and the policy's `dir` call them.
 * @returns The source.
 *
 * @example Usage
 * ```ts
 * import { filesPolicySource } from "./policy_files.ts";
 * import assert from "node:assert/strict";
 * const src = filesPolicySource({ "config.json": "{}" }, "mem");
 * assert.equal(await src.text("config.json"), "{}");
 * assert.equal(await src.text("preprocessor_config.json"), null);
 * ```
 */
export function filesPolicySource(files: FileContents, name: string): PolicySource {
  return {
    name,
    path: (file) => `${name}/${file}`,
    checkpoint: (options) => loadCheckpointFromFiles(files, { ...options, name }),
    tokenizer: () => loadTokenizerFromFiles(files, { name }),
    text: (file) => Promise.resolve(fileText(files, file)),
  };
}

/**
 * A {@link PolicySource} over a checkpoint folder's base URL: files are fetched as the loaders
 * ask for them (shards one at a time); a 404 is a missing file.
 *
 * @param baseUrl The folder's URL (a trailing `/` is added when missing; a relative one
 *   resolves against the page).
 * @param fetchFn The fetch to use (default: the global one).
 * @returns The source.
 *
 * @example Usage
 * ```ts
 * import { urlPolicySource } from "./policy_files.ts";
 * import assert from "node:assert/strict";
 * const fake = (url: string | URL | Request) =>
 *   Promise.resolve(String(url).endsWith("/config.json") ? new Response("{}") : new Response("", { status: 404 }));
 * const src = urlPolicySource("https://x.test/m", fake as typeof fetch);
 * assert.equal(src.name, "https://x.test/m/");
 * assert.equal(await src.text("config.json"), "{}");
 * assert.equal(await src.text("preprocessor_config.json"), null);
 * ```
 */
export function urlPolicySource(
  baseUrl: string | URL,
  fetchFn: typeof fetch = fetch,
): PolicySource {
  const href = String(baseUrl);
  const base = new URL(href.endsWith("/") ? href : `${href}/`, pageHref());
  return {
    name: base.href,
    path: (file) => new URL(file, base).href,
    checkpoint: (options) => loadCheckpointFromUrl(base, { ...options, fetch: fetchFn }),
    tokenizer: () => loadTokenizerFromUrl(base, { fetch: fetchFn }),
    text: async (file) => {
      const bytes = await fetchOrNull(fetchFn, new URL(file, base), "loadPolicy");
      return bytes === null ? null : decoder.decode(bytes);
    },
  };
}

/** A JSON object file of `src`, or null when absent; a broken one names the file. */
async function jsonObjectOrNull(
  src: PolicySource,
  file: string,
): Promise<Record<string, unknown> | null> {
  const text = await src.text(file);
  if (text === null) return null;
  try {
    const v = JSON.parse(text);
    if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error("not an object");
    return v as Record<string, unknown>;
  } catch (e) {
    throw new Error(`loadPolicy: ${src.path(file)} is not a JSON object: ${(e as Error).message}`);
  }
}

/**
 * Loads the policy of a checkpoint folder from `src`: model, tokenizer, generation config, stop
 * ids, `v_head.*` tensors in `extra`; for a vision-language checkpoint (`model_type`
 * `qwen2_vl` or `qwen2_5_vl`) the model with its vision tower and the image processor options of
 * `preprocessor_config.json`. Tensors go to the default backend. Runs anywhere the source does.
 *
 * @param src Where the folder's files are.
 * @returns The policy; dispose its model when done.
 * @throws Error naming the file when one is missing or broken.
 *
 * @example Usage
 * ```ts
 * import { filesPolicySource, policyFromSource } from "./policy_files.ts";
 * import assert from "node:assert/strict";
 * const dir = new URL("../checkpoints/tiny/", import.meta.url);
 * const files: Record<string, Uint8Array> = {};
 * for (const name of ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]) {
 *   files[name] = await Deno.readFile(new URL(name, dir));
 * }
 * const p = await policyFromSource(filesPolicySource(files, "tiny"));
 * assert.equal(p.dir, "tiny");
 * assert.equal(p.vision, null);
 * p.model.dispose();
 * ```
 */
export async function policyFromSource(src: PolicySource): Promise<LoadedPolicy> {
  // Read once: the model type decides what the checkpoint loader accepts, and a vision-language
  // model's config is built from it below.
  let hf: { model_type?: unknown } | null = null;
  try {
    hf = JSON.parse((await src.text("config.json")) ?? "null");
  } catch {
    hf = null; // the checkpoint loader names the broken file
  }
  const modelType = hf?.model_type;
  const isVision = typeof modelType === "string" && VISION_MODEL_TYPES.includes(modelType);
  // A vision-language checkpoint keeps its tower under visual.*: the decoder's loader takes
  // those as extra tensors, which become the tower's parameters.
  const ckpt = await src.checkpoint({
    allowExtra: isVision ? /^(v_head\.|visual\.|model\.visual\.)/ : ["v_head.*"],
  });
  try {
    const tokenizer = await src.tokenizer();
    const eosTokenIds = policyStopIds(tokenizer, ckpt.config, ckpt.generationConfig);
    const common = {
      tokenizer,
      dir: src.name,
      generationConfig: ckpt.generationConfig,
      eosTokenIds,
    };
    if (!isVision) {
      return {
        ...common,
        model: CausalLM.fromParams(ckpt.config, ckpt.params),
        extra: ckpt.extra,
        vision: null,
      };
    }
    const config = vlConfigFromHf(hf, src.path("config.json"));
    const pre = await jsonObjectOrNull(src, "preprocessor_config.json");
    const processor = pre === null ? {} : qwen2VLOptionsFromConfig(pre);
    const params = new Map(ckpt.params);
    const extra = new Map<string, Tensor>();
    for (const [name, t] of ckpt.extra) {
      if (name.startsWith("v_head.")) extra.set(name, t);
      else params.set(name, t);
    }
    const model = VisionLanguageModel.fromParams(config, params);
    return {
      ...common,
      model: model.lm,
      extra,
      vision: { model, processor, preprocessorConfig: pre },
    };
  } catch (e) {
    for (const t of [...ckpt.params.values(), ...ckpt.extra.values()]) t.dispose();
    throw e;
  }
}

/**
 * Loads a policy from a checkpoint folder's files in memory, as `loadPolicy` does from the
 * folder ({@link policyFromSource} over {@link filesPolicySource}). Runs anywhere, browsers
 * included.
 *
 * @param files The folder's files by name (`config.json`, `model.safetensors`, the tokenizer
 *   files, optionally `generation_config.json` and, for a vision-language model,
 *   `preprocessor_config.json`).
 * @param name What messages and the policy's `dir` call them (e.g. `builtin:tiny`).
 * @returns The policy; dispose its model when done.
 * @throws Error naming the file when one is missing or broken.
 *
 * @example Usage
 * ```ts
 * import { policyFromFiles } from "./policy_files.ts";
 * import assert from "node:assert/strict";
 * const dir = new URL("../checkpoints/tiny/", import.meta.url);
 * const files: Record<string, Uint8Array> = {};
 * for (const name of ["config.json", "generation_config.json", "model.safetensors",
 *   "tokenizer.json", "tokenizer_config.json"]) {
 *   files[name] = await Deno.readFile(new URL(name, dir));
 * }
 * const p = await policyFromFiles(files, "builtin:tiny");
 * assert.equal(p.model.config.vocabSize, p.tokenizer.vocabSize);
 * assert.deepEqual(p.eosTokenIds, [2]);
 * p.model.dispose();
 * ```
 */
export function policyFromFiles(files: FileContents, name: string): Promise<LoadedPolicy> {
  return policyFromSource(filesPolicySource(files, name));
}
