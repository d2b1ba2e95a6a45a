/**
 * Hugging Face checkpoint folders: `config.json`, `model.safetensors` (or the sharded
 * `model.safetensors.index.json` + `model-00001-of-0000N.safetensors`) and an optional
 * `generation_config.json`, read into and written from `{ config, params }`.
 *
 * Design decisions:
 * - **Plain data, no model class.** A checkpoint is a {@link ModelConfig} plus a map from the
 *   Hugging Face parameter name to an f32 tensor, exactly the names and shapes of
 *   `parameterShapes(config)`. The model builds itself from that map, so this file needs nothing
 *   from it and names never go through a mapping table.
 * - **Validate everything, fail once.** Loading compares every stored tensor with
 *   `parameterShapes(config)` and collects all problems (missing, unexpected, wrong shape, non-float
 *   storage, an untied-looking LM head) into one {@link CheckpointError}, because a wrong config or a
 *   foreign checkpoint shows up as dozens of related problems, and seeing them together is what
 *   tells which one it is. The single-file layout is validated from the header before any tensor is
 *   allocated; the sharded one shard by shard, and everything made so far is disposed on failure.
 * - **Halves are storage only.** BF16/F16 (and F64) weights are widened to f32 on load, exactly;
 *   `saveCheckpoint(..., { dtype: "bf16" })` narrows with round-to-nearest-even.
 * - **What transformers writes.** Safetensors files carry `__metadata__: {"format": "pt"}`, shards
 *   are cut greedily in parameter order like `huggingface_hub` (a tensor larger than the limit gets
 *   a shard of its own) and named `model-00001-of-00003.safetensors`, the index is
 *   `{metadata: {total_size}, weight_map}`, and JSON files are indented with sorted keys. When
 *   both `model.safetensors` and an index exist, the single file wins, as in transformers.
 * - **Atomic files.** Every file is written to a temporary name in the same directory, flushed,
 *   then renamed, so a crash never leaves a partial file under a final name. A save is not atomic
 *   across files: an interrupted save can mix old and new files (loading then fails validation if
 *   the architecture changed). Save into a fresh directory and rename it for an all-or-nothing
 *   swap. Weight files of an earlier save that the new layout does not use are removed, so that
 *   they cannot be loaded instead of the new ones, and so are temporaries left by a killed save;
 *   other files (tokenizer, README) are left alone. Two saves into one folder at the same time are
 *   not supported.
 *
 * @module
 */

import { join } from "node:path";
import {
  type Backend,
  parseSafetensors,
  readSafetensorsIndex,
  type SafetensorsDType,
  type SafetensorsFile,
  saveSafetensors,
  setStorageFormat,
  STORAGE_FORMATS,
  type StorageFormat,
  Tensor,
} from "@rlvr/tensor";
import { configFromHf, configToHf, type ModelConfig, parameterShapes } from "./config.ts";
import { originalVlName, vlConfigFromHf } from "./vision/config.ts";

/** File names of a Hugging Face checkpoint folder. */
const CONFIG_FILE = "config.json";
const WEIGHTS_FILE = "model.safetensors";
const INDEX_FILE = "model.safetensors.index.json";
const GENERATION_FILE = "generation_config.json";
const SHARD_NAME = /^model-\d{5}-of-\d{5}\.safetensors$/;
/** Temporary files of this module's (and `saveSafetensors`') atomic writes. */
const OWN_TEMPORARY =
  /^(config\.json|generation_config\.json|model\.safetensors(\.index\.json)?|model-\d{5}-of-\d{5}\.safetensors)\.tmp-[0-9a-f]{12}$/;

/** Default shard limit: `max_shard_size="5GB"` of transformers' `save_pretrained`. */
const DEFAULT_MAX_SHARD_BYTES = 5_000_000_000;

/** Stored dtypes that load as f32 parameters without loss. */
const FLOAT_STORAGE: readonly SafetensorsDType[] = ["F32", "BF16", "F16", "F64"];

/** Bytes per element of the dtypes a save writes. */
const SAVE_WIDTH = { f32: 4, bf16: 2 } as const;

/**
 * A checkpoint in memory: the config and the parameters it implies, plus any extra tensors.
 *
 * @example Usage
 * ```ts
 * import { type Checkpoint, modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const ckpt: Checkpoint = {
 *   config: modelConfig({ vocabSize: 4, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2 }),
 *   params: new Map(),
 *   extra: new Map(),
 *   generationConfig: null,
 *   dir: "ckpt",
 * };
 * assert.equal(ckpt.config.headDim, 2);
 * ```
 */
export interface Checkpoint {
  /** The model configuration read from `config.json`. */
  readonly config: ModelConfig;
  /** Every name of `parameterShapes(config)`, in that order, as f32 tensors of that shape. */
  readonly params: Map<string, Tensor>;
  /** Tensors accepted by `allowExtra` (e.g. a value head), in file order. */
  readonly extra: Map<string, Tensor>;
  /** The parsed `generation_config.json`, or null when the folder has none. */
  readonly generationConfig: Record<string, unknown> | null;
  /** The folder the checkpoint was read from. */
  readonly dir: string;
}

/**
 * What {@link saveCheckpoint} writes: a config, its parameters and optional extras.
 *
 * @example Usage
 * ```ts
 * import { type CheckpointData, modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const data: CheckpointData = {
 *   config: modelConfig({ vocabSize: 4, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2 }),
 *   params: new Map(),
 *   generationConfig: { eos_token_id: 2 },
 * };
 * assert.equal(data.extra, undefined);
 * ```
 */
export interface CheckpointData {
  /** The model configuration, written as `config.json`. */
  readonly config: ModelConfig;
  /** Exactly the tensors of `parameterShapes(config)` (f32, those shapes). */
  readonly params: ReadonlyMap<string, Tensor>;
  /** Other tensors stored beside the parameters (e.g. `v_head.summary.weight`). */
  readonly extra?: ReadonlyMap<string, Tensor>;
  /** Written as `generation_config.json` when given (an existing one is left alone otherwise). */
  readonly generationConfig?: Readonly<Record<string, unknown>> | null;
  /**
   * The `config.json` object to write instead of `configToHf(config)` (a vision-language model
   * writes its own, `vlConfigToHf`); `torch_dtype` is set from the save options.
   */
  readonly hfConfig?: Readonly<Record<string, unknown>>;
}

/**
 * Options of {@link loadCheckpoint}.
 *
 * @example Usage
 * ```ts
 * import type { LoadCheckpointOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const opts: LoadCheckpointOptions = { allowExtra: ["v_head.*"] };
 * assert.ok(Array.isArray(opts.allowExtra));
 * ```
 */
export interface LoadCheckpointOptions {
  /**
   * Tensors that are not parameters but are expected, returned in `extra` instead of being an
   * error: a RegExp tested against the name, or a list of names where `*` matches any run of
   * characters (`"v_head.*"`, `"base_model.*"`).
   */
  allowExtra?: readonly string[] | RegExp;
  /** Backend the tensors are allocated on (default: the current backend). */
  backend?: Backend;
  /**
   * How the parameters are held: `"f32"` (default) or `"bf16"` (half the memory; values rounded
   * to bfloat16 once, exact for a bf16 checkpoint; ops still compute in f32). See
   * `setStorageFormat` in `@rlvr/tensor`; meant for frozen weights (a LoRA base, a reference).
   */
  storage?: StorageFormat;
}

/**
 * Options of {@link saveCheckpoint}.
 *
 * @example Usage
 * ```ts
 * import type { SaveCheckpointOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const opts: SaveCheckpointOptions = { dtype: "bf16", maxShardBytes: 2_000_000_000 };
 * assert.equal(opts.dtype, "bf16");
 * ```
 */
export interface SaveCheckpointOptions {
  /**
   * Storage dtype of float tensors (`"bf16"` halves the size and rounds to nearest even; the
   * config's `torch_dtype` says `"bfloat16"` then). Default `"f32"`, which round-trips exactly.
   */
  dtype?: "f32" | "bf16";
  /**
   * Largest shard in bytes of tensor data (default 5e9, transformers' `"5GB"`). When everything
   * fits, one `model.safetensors` is written; otherwise shards and an index.
   */
  maxShardBytes?: number;
}

/**
 * One problem found when checking tensors against `parameterShapes(config)`.
 *
 * @example Usage
 * ```ts
 * import type { CheckpointProblem } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const p: CheckpointProblem = { kind: "missing", name: "model.norm.weight", expected: [8] };
 * assert.equal(p.kind, "missing");
 * ```
 */
export interface CheckpointProblem {
  /**
   * `missing`: a parameter is absent; `unexpected`: a tensor is not a parameter and not allowed as
   * an extra; `shape`: wrong shape; `dtype`: stored as a non-float; `tied`: an `lm_head.weight`
   * that differs from the embedding in a checkpoint whose config ties them; `duplicate`: a name
   * given both as a parameter and as an extra.
   */
  readonly kind: "missing" | "unexpected" | "shape" | "dtype" | "tied" | "duplicate";
  /** The tensor name. */
  readonly name: string;
  /** The shape `parameterShapes(config)` gives, when the name is a parameter. */
  readonly expected?: readonly number[];
  /** The shape found, when the tensor exists. */
  readonly found?: readonly number[];
  /** The stored dtype, for `dtype` problems. */
  readonly dtype?: string;
  /** The file holding the tensor, when loading. */
  readonly file?: string;
}

/**
 * Tensors that do not match the config: every problem of one load or save, in one error. The
 * message lists each problem (name, expected and found shape, file) and ends with the fix.
 *
 * @example Usage
 * ```ts
 * import { CheckpointError, modelConfig, saveCheckpoint } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const config = modelConfig({ vocabSize: 4, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2 });
 * const dir = await Deno.makeTempDir();
 * await assert.rejects(
 *   saveCheckpoint(dir, { config, params: new Map() }),
 *   (e: unknown) => e instanceof CheckpointError && e.problems.every((p) => p.kind === "missing"),
 * );
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class CheckpointError extends Error {
  /** The checkpoint folder. */
  readonly dir: string;
  /** Every problem found, missing parameters first. */
  readonly problems: readonly CheckpointProblem[];

  /**
   * Builds the message from the problems.
   *
   * @param where Function and folder, e.g. `loadCheckpoint(/ckpt)`.
   * @param dir The checkpoint folder.
   * @param summary What the tensors were checked against.
   * @param problems The problems (at least one).
   * @param fix How to fix them.
   */
  constructor(
    where: string,
    dir: string,
    summary: string,
    problems: readonly CheckpointProblem[],
    fix: string,
  ) {
    const lines = problems.map(describeProblem);
    super(
      `${where}: ${problems.length} problem(s) with the tensors (${summary}):\n` +
        lines.map((l) => `  - ${l}`).join("\n") + `\nFix: ${fix}`,
    );
    this.name = "CheckpointError";
    this.dir = dir;
    this.problems = Object.freeze([...problems]);
  }
}

function shapeText(shape: readonly number[] | undefined): string {
  return shape === undefined ? "?" : `[${shape.join(", ")}]`;
}

function describeProblem(p: CheckpointProblem): string {
  const at = p.file === undefined ? "" : ` in ${p.file}`;
  const n = JSON.stringify(p.name);
  switch (p.kind) {
    case "missing":
      return `missing: ${n} (expected shape ${shapeText(p.expected)})`;
    case "unexpected":
      return `unexpected: ${n} (shape ${shapeText(p.found)})${at}`;
    case "shape":
      return `wrong shape: ${n} expected ${shapeText(p.expected)}, found ${
        shapeText(p.found)
      }${at}`;
    case "dtype":
      return `wrong dtype: ${n} is stored as ${p.dtype}${at}; parameters must be F32, BF16, F16 or F64`;
    case "tied":
      return `tied: ${n}${at} differs from "model.embed_tokens.weight", but the config ties them ` +
        `(tie_word_embeddings: true)`;
    case "duplicate":
      return `duplicate: ${n} is given both in params and in extra`;
  }
}

function configSummary(c: ModelConfig): string {
  return `${c.modelType}, ${c.numLayers} layer(s), hidden ${c.hiddenSize}, intermediate ` +
    `${c.intermediateSize}, ${c.numHeads} heads / ${c.numKvHeads} kv heads of ${c.headDim}, ` +
    `vocab ${c.vocabSize}, tie_word_embeddings ${c.tieWordEmbeddings}`;
}

/** A prefix that, stripped from unexpected names, turns them into missing ones (e.g. PEFT's). */
function commonPrefixHint(problems: readonly CheckpointProblem[]): string {
  const missing = new Set(problems.filter((p) => p.kind === "missing").map((p) => p.name));
  const counts = new Map<string, number>();
  for (const p of problems) {
    if (p.kind !== "unexpected") continue;
    for (const m of missing) {
      if (p.name.length > m.length && p.name.endsWith(m)) {
        const prefix = p.name.slice(0, p.name.length - m.length);
        counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
        break;
      }
    }
  }
  const best = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
  return best === undefined
    ? ""
    : ` The stored names carry the prefix ${JSON.stringify(best[0])} (${
      best[1]
    } tensor(s)); strip it when converting the checkpoint.`;
}

function loadFix(problems: readonly CheckpointProblem[]): string {
  const kinds = new Set(problems.map((p) => p.kind));
  const parts: string[] = [];
  if (kinds.has("missing") || kinds.has("shape")) {
    parts.push(
      "Check that config.json describes these weights (model_type, hidden_size, " +
        "intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, " +
        "vocab_size, tie_word_embeddings) or use the weights that belong to this config.",
    );
  }
  if (kinds.has("unexpected")) {
    parts.push(
      "Pass loadCheckpoint(dir, { allowExtra: [...] }) with names or `*` patterns (e.g. " +
        `"v_head.*") for tensors that are expected extras; they are returned in \`extra\`.`,
    );
  }
  if (kinds.has("dtype")) parts.push("Store parameters as a float dtype.");
  if (kinds.has("tied")) {
    parts.push(
      "Set tie_word_embeddings to false in config.json if the LM head is a separate matrix, " +
        "or remove lm_head.weight from the weights.",
    );
  }
  return parts.join(" ") + commonPrefixHint(problems);
}

/** Matcher of `allowExtra`, validating it. */
function extraMatcher(allow: readonly string[] | RegExp | undefined): (name: string) => boolean {
  if (allow === undefined) return () => false;
  if (allow instanceof RegExp) {
    // A global or sticky RegExp keeps state between `test` calls; use a stateless copy.
    const re = new RegExp(allow.source, allow.flags.replace(/[gy]/g, ""));
    return (name) => re.test(name);
  }
  if (!Array.isArray(allow) || allow.some((p) => typeof p !== "string")) {
    throw new TypeError(
      `loadCheckpoint: options.allowExtra must be a RegExp or a list of names/\`*\` patterns, got ${
        String(allow)
      }`,
    );
  }
  const res = (allow as readonly string[]).map((p) =>
    new RegExp(
      `^${p.split("*").map((s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`,
    )
  );
  return (name) => res.some((re) => re.test(name));
}

async function readJson(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error(`loadCheckpoint: ${path} not found; expected ${what} there`);
    }
    throw new Error(`loadCheckpoint: cannot read ${path} (${what}): ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new SyntaxError(
      `${path}: not valid JSON (${(e as Error).message}); expected ${what}`,
    );
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

async function readWeightsFile(path: string, what: string): Promise<SafetensorsFile> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error(`loadCheckpoint: ${path} not found; expected ${what} there`);
    }
    throw new Error(`loadCheckpoint: cannot read ${path} (${what}): ${(e as Error).message}`);
  }
  return parseSafetensors(bytes, { source: path });
}

/** Lists the folder's files for the "no weights" error, pointing out other weight formats. */
async function noWeightsError(dir: string): Promise<Error> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.isFile) names.push(e.name);
  names.sort();
  const other = names.filter((n) => /\.(bin|pt|pth|ckpt|gguf|safetensors)$/.test(n));
  const hint = other.length > 0
    ? ` It holds ${
      other.join(", ")
    }: only model.safetensors(.index.json) is read (convert other formats with ` +
      `transformers' save_pretrained(..., safe_serialization=True); adapters need their base model).`
    : "";
  return new Error(
    `loadCheckpoint: no weights in ${dir}: expected ${WEIGHTS_FILE}, or ${INDEX_FILE} with the ` +
      `shard files it names.${hint}`,
  );
}

/** Whether two f32 arrays hold the same bits. */
function sameBits(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * Loads a Hugging Face checkpoint folder: `config.json` (Llama / Qwen2 / Qwen3, see
 * `configFromHf`), the weights from `model.safetensors` or from `model.safetensors.index.json`
 * and its shards (BF16/F16/F64 widened to f32), and `generation_config.json` if present.
 *
 * Every tensor is checked against `parameterShapes(config)`; all missing, unexpected, mis-shaped
 * and non-float tensors are reported together in one {@link CheckpointError}. In a checkpoint with
 * tied embeddings, an `lm_head.weight` (which transformers sometimes writes) is accepted only if it
 * is bitwise equal to `model.embed_tokens.weight`, and is then dropped. Needs `--allow-read`.
 *
 * @param dir The checkpoint folder.
 * @param options Allowed extra tensors and the backend.
 * @returns The config, the parameters in `parameterShapes` order, the extras and the generation
 * config.
 * @throws {CheckpointError} when the tensors do not match the config; `Error` naming the path and
 * what is expected there when a file is missing; the config's `RangeError` prefixed with its path.
 *
 * @example Usage
 * ```ts
 * import { loadCheckpoint, modelConfig, parameterShapes, saveCheckpoint } from "@rlvr/policy";
 * import { zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = modelConfig({
 *   modelType: "qwen2", vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2,
 * });
 * const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, zeros(s)]));
 * const dir = await Deno.makeTempDir();
 * await saveCheckpoint(dir, { config, params });
 * const ckpt = await loadCheckpoint(dir);
 * assert.deepEqual(ckpt.config, config);
 * assert.deepEqual([...ckpt.params.keys()], [...params.keys()]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadCheckpoint(
  dir: string,
  options: LoadCheckpointOptions = {},
): Promise<Checkpoint> {
  const where = `loadCheckpoint(${dir})`;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error(
        `loadCheckpoint: no checkpoint folder at ${dir}; expected a directory with ${CONFIG_FILE} ` +
          `and ${WEIGHTS_FILE} (or ${INDEX_FILE} with its shards)`,
      );
    }
    throw e;
  }
  if (!info.isDirectory) {
    throw new Error(
      `loadCheckpoint: ${dir} is a file; pass the checkpoint folder that holds ${CONFIG_FILE} ` +
        `and the weights`,
    );
  }
  const isExtra = extraMatcher(options.allowExtra);
  const configPath = join(dir, CONFIG_FILE);
  const hf = await readJson(configPath, "the model's Hugging Face config (model_type, sizes, ...)");
  // A Qwen2-VL folder: its decoder is checked here, under the original names (newer
  // transformers write `model.language_model.*` and `model.visual.*`); the tower's `visual.*`
  // tensors are extras for loadVisionLanguageModel.
  const vl = (hf as Record<string, unknown> | null)?.model_type === "qwen2_vl";
  const config = vl ? vlConfigFromHf(hf, configPath).text : configFromHf(hf, configPath);
  const keyOf = vl ? originalVlName : (name: string) => name;
  const generationPath = join(dir, GENERATION_FILE);
  let generationConfig: Record<string, unknown> | null = null;
  if (await exists(generationPath)) {
    const g = await readJson(generationPath, "the generation config, a JSON object");
    if (typeof g !== "object" || g === null || Array.isArray(g)) {
      throw new TypeError(`${generationPath}: must be a JSON object, got ${JSON.stringify(g)}`);
    }
    generationConfig = g as Record<string, unknown>;
  }

  // The table of contents: which file holds which tensor, in file order.
  const weightsPath = join(dir, WEIGHTS_FILE);
  const indexPath = join(dir, INDEX_FILE);
  let parts: { path: string; names: string[] | null; what: string }[];
  if (await exists(weightsPath)) {
    parts = [{ path: weightsPath, names: null, what: "the model weights" }];
  } else if (await exists(indexPath)) {
    const index = await readSafetensorsIndex(indexPath);
    const byShard = new Map<string, string[]>();
    for (const [name, shard] of index.weightMap) {
      const list = byShard.get(shard);
      if (list === undefined) byShard.set(shard, [name]);
      else list.push(name);
    }
    parts = [...byShard].map(([shard, names]) => ({
      path: index.dir + shard,
      names,
      what: `the shard ${INDEX_FILE} assigns ${names.length} tensor(s) to (e.g. ${
        JSON.stringify(names[0])
      })`,
    }));
  } else {
    throw await noWeightsError(dir);
  }

  const shapes = parameterShapes(config);
  const problems: CheckpointProblem[] = [];
  const found = new Map<string, Tensor>();
  const extra = new Map<string, Tensor>();
  const seen = new Set<string>();
  let lmHead: { values: Float32Array; shape: readonly number[]; file: string } | null = null;
  const tensorOpts = options.backend === undefined ? {} : { backend: options.backend };
  const storage = options.storage ?? "f32";
  if (!STORAGE_FORMATS.includes(storage)) {
    throw new RangeError(
      `loadCheckpoint: options.storage must be one of ${STORAGE_FORMATS.join(", ")}, got ${
        JSON.stringify(storage)
      }`,
    );
  }
  try {
    for (const part of parts) {
      const file = await readWeightsFile(part.path, part.what);
      const names = part.names ?? file.names();
      // Classify from the header first, so that a mismatched file allocates nothing.
      const take: { name: string; key: string; to: Map<string, Tensor> }[] = [];
      for (const name of names) {
        if (!file.has(name)) {
          throw new Error(
            `loadCheckpoint: ${indexPath} assigns ${JSON.stringify(name)} to ${part.path}, but ` +
              `that file has no such tensor; the index and the shards are out of sync (re-save ` +
              `the checkpoint or restore the missing shard)`,
          );
        }
        const key = keyOf(name);
        seen.add(key);
        const e = file.entry(name);
        const expected = shapes.get(key);
        if (expected !== undefined) {
          if (!sameShape(e.shape, expected)) {
            problems.push({ kind: "shape", name: key, expected, found: e.shape, file: part.path });
          } else if (!FLOAT_STORAGE.includes(e.dtype)) {
            problems.push({ kind: "dtype", name: key, dtype: e.dtype, file: part.path });
          } else take.push({ name, key, to: found });
        } else if (key === "lm_head.weight" && config.tieWordEmbeddings) {
          const want = [config.vocabSize, config.hiddenSize];
          if (!sameShape(e.shape, want)) {
            problems.push({
              kind: "shape",
              name: key,
              expected: want,
              found: e.shape,
              file: part.path,
            });
          } else if (!FLOAT_STORAGE.includes(e.dtype)) {
            problems.push({ kind: "dtype", name: key, dtype: e.dtype, file: part.path });
          } else if (problems.length === 0) {
            lmHead = { values: file.array(name) as Float32Array, shape: e.shape, file: part.path };
          }
        } else if (isExtra(key)) {
          take.push({ name, key, to: extra });
        } else {
          problems.push({ kind: "unexpected", name: key, found: e.shape, file: part.path });
        }
      }
      // Once something is wrong the load fails; stop allocating.
      if (problems.length === 0) {
        for (const { name, key, to } of take) {
          const t = file.tensor(name, tensorOpts);
          to.set(key, t);
          // One tensor at a time, so the f32 copy of only one is held at once.
          if (storage === "bf16" && to === found && t.dtype === "f32") setStorageFormat(t, "bf16");
        }
      }
    }
    const missing: CheckpointProblem[] = [];
    for (const [name, expected] of shapes) {
      if (!seen.has(name)) missing.push({ kind: "missing", name, expected });
    }
    problems.unshift(...missing);
    if (problems.length === 0 && lmHead !== null) {
      const embed = found.get("model.embed_tokens.weight")!;
      const data = await embed.data();
      // An f64 CPU backend hands back a Float64Array; its values are still f32 values.
      const values = data instanceof Float32Array ? data : Float32Array.from(data);
      if (!sameBits(values, lmHead.values)) {
        problems.push({ kind: "tied", name: "lm_head.weight", file: lmHead.file });
      }
    }
    if (problems.length > 0) {
      throw new CheckpointError(
        where,
        dir,
        `checked against ${configPath}: ${configSummary(config)}`,
        problems,
        loadFix(problems),
      );
    }
  } catch (e) {
    for (const t of found.values()) t.dispose();
    for (const t of extra.values()) t.dispose();
    throw e;
  }
  const params = new Map<string, Tensor>();
  for (const name of shapes.keys()) params.set(name, found.get(name)!);
  return { config, params, extra, generationConfig, dir };
}

function randomSuffix(): string {
  const b = crypto.getRandomValues(new Uint8Array(6));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** Writes text atomically: a temporary file in the same folder, fsync, rename. */
async function writeTextAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${randomSuffix()}`;
  const bytes = new TextEncoder().encode(text);
  try {
    const f = await Deno.open(tmp, { write: true, createNew: true });
    try {
      let at = 0;
      while (at < bytes.length) at += await f.write(bytes.subarray(at));
      await f.sync();
    } finally {
      f.close();
    }
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw new Error(
      `saveCheckpoint: could not write ${path} (the previous file, if any, is unchanged): ${
        (e as Error).message
      }`,
    );
  }
}

/** JSON as Python's `json.dumps(obj, indent=2, sort_keys=True)` lays it out, plus a newline. */
function hfJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (typeof v === "object" && v !== null) {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(Object.keys(o).sort().map((k) => [k, sort(o[k])]));
    }
    return v;
  };
  return JSON.stringify(sort(value), null, 2) + "\n";
}

/**
 * Saves a checkpoint as a Hugging Face folder that transformers and {@link loadCheckpoint} read:
 * `config.json`, `model.safetensors` (or `model-0000i-of-0000n.safetensors` shards and
 * `model.safetensors.index.json` when the tensors exceed `maxShardBytes`) and
 * `generation_config.json` when given. The folder is created if missing. `params` must be exactly
 * `parameterShapes(config)` in f32; everything is checked before the first byte is written.
 * Each file is replaced atomically (see the module doc). Needs `--allow-read --allow-write`.
 *
 * @param dir Destination folder.
 * @param data Config, parameters, extras and generation config.
 * @param options Storage dtype and shard size.
 * @throws {CheckpointError} listing every missing, unexpected or mis-shaped parameter.
 *
 * @example Usage
 * ```ts
 * import { modelConfig, parameterShapes, saveCheckpoint } from "@rlvr/policy";
 * import { ones } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = modelConfig({ vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 2, numHeads: 2 });
 * const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, ones(s)]));
 * const dir = await Deno.makeTempDir();
 * await saveCheckpoint(`${dir}/ckpt`, { config, params }, { dtype: "bf16", maxShardBytes: 256 });
 * const index = JSON.parse(await Deno.readTextFile(`${dir}/ckpt/model.safetensors.index.json`));
 * assert.equal(index.weight_map["model.norm.weight"].endsWith(".safetensors"), true);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function saveCheckpoint(
  dir: string,
  data: CheckpointData,
  options: SaveCheckpointOptions = {},
): Promise<void> {
  const dtype = options.dtype ?? "f32";
  if (dtype !== "f32" && dtype !== "bf16") {
    throw new RangeError(`saveCheckpoint: options.dtype must be "f32" or "bf16", got ${dtype}`);
  }
  const maxShardBytes = options.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES;
  if (!Number.isSafeInteger(maxShardBytes) || maxShardBytes < 1) {
    throw new RangeError(
      `saveCheckpoint: options.maxShardBytes must be an integer >= 1, got ${maxShardBytes}`,
    );
  }
  const { config, params } = data;
  const extra = data.extra ?? new Map<string, Tensor>();
  const hfConfig = data.hfConfig === undefined ? configToHf(config) : { ...data.hfConfig };
  hfConfig.torch_dtype = dtype === "bf16" ? "bfloat16" : "float32";

  const shapes = parameterShapes(config);
  const problems: CheckpointProblem[] = [];
  for (const [name, expected] of shapes) {
    if (!params.has(name)) problems.push({ kind: "missing", name, expected });
  }
  for (const [name, t] of params) {
    const expected = shapes.get(name);
    if (!(t instanceof Tensor)) {
      throw new TypeError(`saveCheckpoint: params.get(${JSON.stringify(name)}) is not a Tensor`);
    }
    if (expected === undefined) problems.push({ kind: "unexpected", name, found: t.shape });
    else if (!sameShape(t.shape, expected)) {
      problems.push({ kind: "shape", name, expected, found: t.shape });
    } else if (t.dtype !== "f32") problems.push({ kind: "dtype", name, dtype: t.dtype });
    if (extra.has(name)) problems.push({ kind: "duplicate", name });
  }
  if (problems.length > 0) {
    throw new CheckpointError(
      `saveCheckpoint(${dir})`,
      dir,
      configSummary(config),
      problems,
      "params must hold exactly the tensors of parameterShapes(config), f32 with those shapes; " +
        "put any other tensor in `extra`.",
    );
  }
  const all: [string, Tensor][] = [...shapes.keys()].map((n) => [n, params.get(n)!]);
  for (const [name, t] of extra) {
    if (!(t instanceof Tensor)) {
      throw new TypeError(`saveCheckpoint: extra.get(${JSON.stringify(name)}) is not a Tensor`);
    }
    all.push([name, t]);
  }
  for (const [name, t] of all) {
    if (t.isDisposed) {
      throw new Error(
        `saveCheckpoint: tensor ${JSON.stringify(name)} was disposed before saving; save first`,
      );
    }
  }

  // Greedy sharding in parameter order, as huggingface_hub's split_state_dict_into_shards.
  const bytesOf = (t: Tensor) => t.size * (t.dtype === "f32" ? SAVE_WIDTH[dtype] : 4);
  const shards: [string, Tensor][][] = [];
  let current: [string, Tensor][] = [];
  let currentBytes = 0;
  let totalSize = 0;
  for (const item of all) {
    const size = bytesOf(item[1]);
    totalSize += size;
    if (size > maxShardBytes) {
      shards.push([item]);
      continue;
    }
    if (currentBytes + size > maxShardBytes && current.length > 0) {
      shards.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(item);
    currentBytes += size;
  }
  if (current.length > 0 || shards.length === 0) shards.push(current);

  await Deno.mkdir(dir, { recursive: true });
  // Bool tensors cannot be narrowed: name the f32 ones only.
  const dtypeFor = (items: [string, Tensor][]) =>
    Object.fromEntries(items.filter(([, t]) => t.dtype === "f32").map(([n]) => [n, dtype]));
  const save = (path: string, items: [string, Tensor][]) =>
    saveSafetensors(path, new Map(items), { metadata: { format: "pt" }, dtype: dtypeFor(items) });
  const written = new Set<string>();
  if (shards.length === 1) {
    await save(join(dir, WEIGHTS_FILE), shards[0]!);
    written.add(WEIGHTS_FILE);
  } else {
    const n = String(shards.length).padStart(5, "0");
    const weightMap: Record<string, string> = {};
    for (let i = 0; i < shards.length; i++) {
      const name = `model-${String(i + 1).padStart(5, "0")}-of-${n}.safetensors`;
      await save(join(dir, name), shards[i]!);
      written.add(name);
      for (const [tensorName] of shards[i]!) weightMap[tensorName] = name;
    }
    // The index goes last: it is what makes the shards a checkpoint.
    await writeTextAtomic(
      join(dir, INDEX_FILE),
      hfJson({ metadata: { total_size: totalSize }, weight_map: weightMap }),
    );
    written.add(INDEX_FILE);
  }
  await writeTextAtomic(join(dir, CONFIG_FILE), hfJson(hfConfig));
  if (data.generationConfig !== undefined && data.generationConfig !== null) {
    await writeTextAtomic(join(dir, GENERATION_FILE), hfJson(data.generationConfig));
  }
  // Weight files of an earlier save in another layout would shadow or confuse the new one, and
  // temporaries of a save that was killed would pile up, each as large as a shard.
  for await (const e of Deno.readDir(dir)) {
    const stale = e.isFile && !written.has(e.name) &&
      (e.name === WEIGHTS_FILE || e.name === INDEX_FILE || SHARD_NAME.test(e.name) ||
        OWN_TEMPORARY.test(e.name));
    if (stale) await Deno.remove(join(dir, e.name));
  }
}
