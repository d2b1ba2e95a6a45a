/**
 * A policy from a checkpoint folder's files in memory: {@link policyFromFiles} builds the
 * {@link LoadedPolicy} that `loadPolicy` (`policy.ts`) reads from a folder, from bytes a browser
 * tab fetched ({@link fetchPolicyFiles}) or a user picked, so `learnerFromPolicy`
 * (`policy_learner.ts`) gives a tab the learner `deno task train` builds.
 *
 * Design decisions:
 * - **No file system**: `policy.ts` resolves `builtin:` names to folders and reads them (Deno);
 *   this file imports only the browser-safe loaders of `@rlvr/policy`
 *   (`loadCheckpointFromFiles`, `loadTokenizerFromFiles`), which run the same parsing and checks.
 * - **Same stop ids**: {@link policyStopIds} is `stopTokenIds` of `policy.ts` (the tokenizer's
 *   EOS, `config.json`'s, then `generation_config.json`'s `eos_token_id`), repeated here because
 *   `policy.ts` imports the file system; `policy_files_test.ts` checks that the two agree.
 * - **Text models only**: a vision-language checkpoint (`model_type` `qwen2_vl`) is refused with
 *   a message naming it; `loadPolicy` loads those.
 *
 * @module
 */

import {
  CausalLM,
  type FileContents,
  loadCheckpointFromFiles,
  loadTokenizerFromFiles,
  type ModelConfig,
  type Tokenizer,
} from "@rlvr/policy";
import type { LoadedPolicy } from "./policy.ts";

/**
 * The files {@link fetchPolicyFiles} asks a checkpoint folder URL for besides the weights,
 * `true` for those that must exist.
 */
export const POLICY_FILE_NAMES: readonly (readonly [string, boolean])[] = Object.freeze([
  ["config.json", true],
  ["generation_config.json", false],
  ["tokenizer.json", false],
  ["tokenizer_config.json", false],
  ["chat_template.jinja", false],
]);

/** `model_type`s of `config.json` that are vision-language models (refused here). */
const VISION_MODEL_TYPES: readonly string[] = ["qwen2_vl"];

const decoder = new TextDecoder();

/** The page's address in a browser; undefined in Deno (whose `location` may throw). */
function pageHref(): string | undefined {
  try {
    return (globalThis as { location?: { href: string } }).location?.href;
  } catch {
    return undefined;
  }
}

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
 * Loads a text policy (model, tokenizer, generation config, stop ids; `v_head.*` tensors in
 * `extra`) from a checkpoint folder's files in memory, as `loadPolicy` does from the folder.
 * Tensors go to the default backend. Runs anywhere, browsers included.
 *
 * @param files The folder's files by name (`config.json`, `model.safetensors`, the tokenizer
 *   files, optionally `generation_config.json`).
 * @param name What messages and the policy's `dir` call them (e.g. `builtin:tiny`).
 * @returns The policy; dispose its model when done.
 * @throws Error naming the file when one is missing or broken, or when the checkpoint is a
 *   vision-language model.
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
export async function policyFromFiles(files: FileContents, name: string): Promise<LoadedPolicy> {
  const configText = fileText(files, "config.json");
  if (configText !== null) {
    let modelType: unknown;
    try {
      modelType = (JSON.parse(configText) as { model_type?: unknown })?.model_type;
    } catch {
      modelType = undefined; // the checkpoint loader names the broken file
    }
    if (typeof modelType === "string" && VISION_MODEL_TYPES.includes(modelType)) {
      throw new Error(
        `policyFromFiles: ${name}/config.json is a ${modelType} vision-language model; ` +
          `only text policies load from files here (load it with loadPolicy in Deno)`,
      );
    }
  }
  const ckpt = await loadCheckpointFromFiles(files, { name, allowExtra: ["v_head.*"] });
  let tokenizer: Tokenizer;
  let eosTokenIds: number[];
  try {
    tokenizer = await loadTokenizerFromFiles(files, { name });
    eosTokenIds = policyStopIds(tokenizer, ckpt.config, ckpt.generationConfig);
  } catch (e) {
    for (const t of [...ckpt.params.values(), ...ckpt.extra.values()]) t.dispose();
    throw e;
  }
  return {
    model: CausalLM.fromParams(ckpt.config, ckpt.params),
    tokenizer,
    dir: name,
    extra: ckpt.extra,
    generationConfig: ckpt.generationConfig,
    eosTokenIds,
    vision: null,
  };
}

/** Options of {@link fetchPolicyFiles}. */
export interface FetchPolicyFilesOptions {
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * The folder's file names, when known (a manifest): exactly these are fetched, each required,
   * so no request is made for a file the folder lacks (a browser logs every 404 as an error).
   */
  names?: readonly string[];
}

/**
 * Fetches the files of a checkpoint folder URL into memory: `names` when given, else
 * `config.json` (required), the generation and tokenizer files when present (a 404 means
 * absent), and `model.safetensors`, else `model.safetensors.index.json` and the shards it
 * names. What {@link policyFromFiles} loads.
 *
 * @param baseUrl The folder's URL (a trailing `/` is added when missing; a relative one resolves
 *   against the page).
 * @param options The fetch to use and the file names.
 * @returns The files by name.
 * @throws Error naming the URL on a missing required file or an HTTP error.
 *
 * @example Usage
 * ```ts
 * import { fetchPolicyFiles } from "./policy_files.ts";
 * import assert from "node:assert/strict";
 * const files: Record<string, string> = { "config.json": "{}", "model.safetensors": "x" };
 * const fake = (url: string | URL | Request) => {
 *   const body = files[String(url).replace("https://x.test/m/", "")];
 *   return Promise.resolve(new Response(body ?? "", { status: body === undefined ? 404 : 200 }));
 * };
 * const got = await fetchPolicyFiles("https://x.test/m", { fetch: fake as typeof fetch });
 * assert.deepEqual([...got.keys()].sort(), ["config.json", "model.safetensors"]);
 * await assert.rejects(
 *   fetchPolicyFiles("https://x.test/m", { fetch: fake as typeof fetch, names: ["tokenizer.json"] }),
 *   /tokenizer\.json does not exist/,
 * );
 * ```
 */
export async function fetchPolicyFiles(
  baseUrl: string | URL,
  options: FetchPolicyFilesOptions = {},
): Promise<Map<string, Uint8Array>> {
  const fetchFn = options.fetch ?? fetch;
  const href = String(baseUrl);
  // A relative URL (a page's `model/`) resolves against the page.
  const base = new URL(href.endsWith("/") ? href : `${href}/`, pageHref());
  const out = new Map<string, Uint8Array>();
  const get = async (name: string, required: boolean): Promise<boolean> => {
    const url = new URL(name, base);
    let res: Response;
    try {
      res = await fetchFn(url);
    } catch (e) {
      throw new Error(`fetchPolicyFiles: cannot fetch ${url.href}: ${(e as Error).message}`);
    }
    if (res.status === 404) {
      await res.body?.cancel();
      if (required) {
        throw new Error(
          `fetchPolicyFiles: ${url.href} does not exist (HTTP 404); a checkpoint folder needs ` +
            `config.json and model.safetensors (or model.safetensors.index.json with its ` +
            `shards), and every file its manifest names`,
        );
      }
      return false;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`fetchPolicyFiles: ${url.href}: HTTP ${res.status} ${res.statusText}`);
    }
    out.set(name, new Uint8Array(await res.arrayBuffer()));
    return true;
  };
  if (options.names !== undefined) {
    await Promise.all(options.names.map((name) => get(name, true)));
    return out;
  }
  await Promise.all(POLICY_FILE_NAMES.map(([name, required]) => get(name, required)));
  if (!(await get("model.safetensors", false))) {
    await get("model.safetensors.index.json", true);
    let index: { weight_map?: Record<string, unknown> } | null;
    try {
      index = JSON.parse(decoder.decode(out.get("model.safetensors.index.json")!));
    } catch (e) {
      throw new Error(
        `fetchPolicyFiles: ${base.href}model.safetensors.index.json is not JSON: ${
          (e as Error).message
        }`,
      );
    }
    for (const shard of new Set(Object.values(index?.weight_map ?? {}))) {
      if (typeof shard !== "string" || !/^[^/\\]+$/.test(shard)) {
        throw new Error(
          `fetchPolicyFiles: ${base.href}model.safetensors.index.json names the shard ${
            JSON.stringify(shard)
          }; use file names of the same folder`,
        );
      }
      await get(shard, true);
    }
  }
  return out;
}
