/**
 * Hugging Face checkpoints: `config.json`, `model.safetensors` (or the sharded
 * `model.safetensors.index.json` + `model-00001-of-0000N.safetensors`) and an optional
 * `generation_config.json`, read into and written from `{ config, params }`. This module reads
 * them from bytes in memory ({@link loadCheckpointFromFiles}), from a base URL
 * ({@link loadCheckpointFromUrl}) and writes them to bytes ({@link checkpointFiles}), which works
 * on the web platform too; the folder loader and saver (`loadCheckpoint`, `saveCheckpoint` of
 * `@rlvr/policy/fs`, in `checkpoint_fs.ts`) read and write the same files through the same code.
 *
 * Design decisions:
 * - **Plain data, no model class.** A checkpoint is a {@link ModelConfig} plus a map from the
 *   Hugging Face parameter name to an f32 tensor, exactly the names and shapes of
 *   `parameterShapes(config)`. The model builds itself from that map, so this file needs nothing
 *   from it and names never go through a mapping table.
 * - **One loader, three places.** Every load goes through one function over a `FileSource`
 *   (`file_source.ts`): a folder, in-memory files or a URL, read one file at a time, so the
 *   checks and the errors below are the same whichever it is.
 * - **Validate everything, fail once.** Loading compares every stored tensor with
 *   `parameterShapes(config)` and collects all problems (missing, unexpected, wrong shape, non-float
 *   storage, an untied-looking LM head) into one {@link CheckpointError}, because a wrong config or a
 *   foreign checkpoint shows up as dozens of related problems, and seeing them together is what
 *   tells which one it is. The single-file layout is validated from the header before any tensor is
 *   allocated; the sharded one shard by shard, and everything made so far is disposed on failure.
 * - **Halves are storage only.** BF16/F16 (and F64) weights are widened to f32 on load, exactly;
 *   a save with `{ dtype: "bf16" }` narrows with round-to-nearest-even.
 * - **What transformers writes.** Safetensors files carry `__metadata__: {"format": "pt"}`, shards
 *   are cut greedily in parameter order like `huggingface_hub` (a tensor larger than the limit gets
 *   a shard of its own) and named `model-00001-of-00003.safetensors`, the index is
 *   `{metadata: {total_size}, weight_map}`, and JSON files are indented with sorted keys. When
 *   both `model.safetensors` and an index exist, the single file wins, as in transformers.
 *
 * @module
 */

import {
  type Backend,
  parseSafetensors,
  parseSafetensorsIndex,
  type SafetensorsDType,
  type SerializeOptions,
  serializeSafetensors,
  setStorageFormat,
  STORAGE_FORMATS,
  type StorageFormat,
  Tensor,
} from "@rlvr/tensor";
import { configFromHf, configToHf, type ModelConfig, parameterShapes } from "./config.ts";
import { type FileContents, type FileSource, filesSource, urlSource } from "./file_source.ts";
import { originalVlName, VISION_LANGUAGE_MODEL_TYPES, vlConfigFromHf } from "./vision/config.ts";

/** File names of a Hugging Face checkpoint folder. */
export const CONFIG_FILE = "config.json";
/** The weights of a single-file checkpoint. */
export const WEIGHTS_FILE = "model.safetensors";
/** The index of a sharded checkpoint. */
export const INDEX_FILE = "model.safetensors.index.json";
/** The optional generation config. */
export const GENERATION_FILE = "generation_config.json";

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
  /** The folder the checkpoint was read from (the base URL, or the name of in-memory files). */
  readonly dir: string;
}

/**
 * What a save writes (`saveCheckpoint` of `@rlvr/policy/fs`, {@link checkpointFiles}): a config,
 * its parameters and optional extras.
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
 * Options of the checkpoint loaders (`loadCheckpoint` of `@rlvr/policy/fs`,
 * {@link loadCheckpointFromFiles}, {@link loadCheckpointFromUrl}).
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
 * Options of a save (`saveCheckpoint` of `@rlvr/policy/fs`, {@link checkpointFiles}).
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
 * import { CheckpointError, checkpointFiles, modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const config = modelConfig({ vocabSize: 4, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2 });
 * await assert.rejects(
 *   checkpointFiles({ config, params: new Map() }),
 *   (e: unknown) => e instanceof CheckpointError && e.problems.every((p) => p.kind === "missing"),
 * );
 * ```
 */
export class CheckpointError extends Error {
  /** The checkpoint folder (or URL, or name of the in-memory files). */
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

/** How a load names itself in messages: the function and what its first argument is called. */
interface LoadCall {
  /** `loadCheckpoint`, `loadCheckpointFromFiles` or `loadCheckpointFromUrl`. */
  readonly fn: string;
  /** `dir`, `files` or `url`. */
  readonly arg: string;
}

function loadFix(problems: readonly CheckpointProblem[], call: LoadCall): string {
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
      `Pass ${call.fn}(${call.arg}, { allowExtra: [...] }) with names or \`*\` patterns (e.g. ` +
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
function extraMatcher(
  allow: readonly string[] | RegExp | undefined,
  fn: string,
): (name: string) => boolean {
  if (allow === undefined) return () => false;
  if (allow instanceof RegExp) {
    // A global or sticky RegExp keeps state between `test` calls; use a stateless copy.
    const re = new RegExp(allow.source, allow.flags.replace(/[gy]/g, ""));
    return (name) => re.test(name);
  }
  if (!Array.isArray(allow) || allow.some((p) => typeof p !== "string")) {
    throw new TypeError(
      `${fn}: options.allowExtra must be a RegExp or a list of names/\`*\` patterns, got ${
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

const decoder = new TextDecoder();

/**
 * The one checkpoint loader (see the module doc): reads `config.json`, `generation_config.json`
 * if present and the weights from `src`, checks every tensor against the config and returns the
 * checkpoint with `dir` set to `src.where`. Internal: `loadCheckpoint` (a folder),
 * {@link loadCheckpointFromFiles} and {@link loadCheckpointFromUrl} call it.
 *
 * @param src Where the files are.
 * @param call How messages name the caller.
 * @param options Allowed extras, backend and storage.
 * @returns The checkpoint.
 *
 * @example Usage
 * ```ts
 * import { checkpointFiles, loadCheckpointFrom } from "./checkpoint.ts";
 * import { filesSource } from "./file_source.ts";
 * import { modelConfig, parameterShapes } from "./config.ts";
 * import { zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = modelConfig({ vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2 });
 * const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, zeros(s)]));
 * const src = filesSource(await checkpointFiles({ config, params }), "mem");
 * const ckpt = await loadCheckpointFrom(src, { fn: "load", arg: "files" });
 * assert.equal(ckpt.dir, "mem");
 * ```
 */
export async function loadCheckpointFrom(
  src: FileSource,
  call: LoadCall,
  options: LoadCheckpointOptions = {},
): Promise<Checkpoint> {
  const { fn } = call;
  const dir = src.where;
  const where = `${fn}(${dir})`;
  const isExtra = extraMatcher(options.allowExtra, fn);
  const read = async (name: string, what: string): Promise<Uint8Array | null> => {
    try {
      return await src.read(name);
    } catch (e) {
      throw new Error(`${fn}: cannot read ${src.path(name)} (${what}): ${(e as Error).message}`);
    }
  };
  const readRequired = async (name: string, what: string): Promise<Uint8Array> => {
    const bytes = await read(name, what);
    if (bytes === null) {
      throw new Error(`${fn}: ${src.path(name)} not found; expected ${what} there`);
    }
    return bytes;
  };
  const parseJson = (name: string, bytes: Uint8Array, what: string): unknown => {
    try {
      return JSON.parse(decoder.decode(bytes));
    } catch (e) {
      throw new SyntaxError(
        `${src.path(name)}: not valid JSON (${(e as Error).message}); expected ${what}`,
      );
    }
  };

  const configPath = src.path(CONFIG_FILE);
  const configWhat = "the model's Hugging Face config (model_type, sizes, ...)";
  const hf = parseJson(CONFIG_FILE, await readRequired(CONFIG_FILE, configWhat), configWhat);
  // A Qwen2-VL or Qwen2.5-VL folder: its decoder is checked here, under the original names
  // (newer transformers write `model.language_model.*` and `model.visual.*`); the tower's
  // `visual.*` tensors are extras for loadVisionLanguageModel.
  const modelType = (hf as Record<string, unknown> | null)?.model_type;
  const vl = (VISION_LANGUAGE_MODEL_TYPES as readonly unknown[]).includes(modelType);
  const config = vl ? vlConfigFromHf(hf, configPath).text : configFromHf(hf, configPath);
  const keyOf = vl ? originalVlName : (name: string) => name;
  let generationConfig: Record<string, unknown> | null = null;
  const generationWhat = "the generation config, a JSON object";
  const generationBytes = await read(GENERATION_FILE, generationWhat);
  if (generationBytes !== null) {
    const g = parseJson(GENERATION_FILE, generationBytes, generationWhat);
    if (typeof g !== "object" || g === null || Array.isArray(g)) {
      throw new TypeError(
        `${src.path(GENERATION_FILE)}: must be a JSON object, got ${JSON.stringify(g)}`,
      );
    }
    generationConfig = g as Record<string, unknown>;
  }

  // The table of contents: which file holds which tensor, in file order. The single file is
  // read here (it is needed anyway); shards are read one at a time below.
  const indexPath = src.path(INDEX_FILE);
  const single = await read(WEIGHTS_FILE, "the model weights");
  let parts: { file: string; names: string[] | null; what: string; bytes: Uint8Array | null }[];
  if (single !== null) {
    parts = [{ file: WEIGHTS_FILE, names: null, what: "the model weights", bytes: single }];
  } else {
    const indexBytes = await read(INDEX_FILE, "the shard index");
    if (indexBytes === null) throw await noWeightsError(src, fn);
    const index = parseSafetensorsIndex(indexBytes, indexPath);
    const byShard = new Map<string, string[]>();
    for (const [name, shard] of index.weightMap) {
      const list = byShard.get(shard);
      if (list === undefined) byShard.set(shard, [name]);
      else list.push(name);
    }
    parts = [...byShard].map(([shard, names]) => ({
      file: shard,
      names,
      what: `the shard ${INDEX_FILE} assigns ${names.length} tensor(s) to (e.g. ${
        JSON.stringify(names[0])
      })`,
      bytes: null,
    }));
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
      `${fn}: options.storage must be one of ${STORAGE_FORMATS.join(", ")}, got ${
        JSON.stringify(storage)
      }`,
    );
  }
  try {
    for (const part of parts) {
      const path = src.path(part.file);
      const bytes = part.bytes ?? await readRequired(part.file, part.what);
      part.bytes = null; // the file's bytes are dropped with `file` once its tensors are made
      const file = parseSafetensors(bytes, { source: path });
      const names = part.names ?? file.names();
      // Classify from the header first, so that a mismatched file allocates nothing.
      const take: { name: string; key: string; to: Map<string, Tensor> }[] = [];
      for (const name of names) {
        if (!file.has(name)) {
          throw new Error(
            `${fn}: ${indexPath} assigns ${JSON.stringify(name)} to ${path}, but ` +
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
            problems.push({ kind: "shape", name: key, expected, found: e.shape, file: path });
          } else if (!FLOAT_STORAGE.includes(e.dtype)) {
            problems.push({ kind: "dtype", name: key, dtype: e.dtype, file: path });
          } else take.push({ name, key, to: found });
        } else if (key === "lm_head.weight" && config.tieWordEmbeddings) {
          const want = [config.vocabSize, config.hiddenSize];
          if (!sameShape(e.shape, want)) {
            problems.push({ kind: "shape", name: key, expected: want, found: e.shape, file: path });
          } else if (!FLOAT_STORAGE.includes(e.dtype)) {
            problems.push({ kind: "dtype", name: key, dtype: e.dtype, file: path });
          } else if (problems.length === 0) {
            lmHead = { values: file.array(name) as Float32Array, shape: e.shape, file: path };
          }
        } else if (isExtra(key)) {
          take.push({ name, key, to: extra });
        } else {
          problems.push({ kind: "unexpected", name: key, found: e.shape, file: path });
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
        loadFix(problems, call),
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

/** Lists the source's files for the "no weights" error, pointing out other weight formats. */
async function noWeightsError(src: FileSource, fn: string): Promise<Error> {
  const names = (await src.list()) ?? [];
  const other = names.filter((n) => /\.(bin|pt|pth|ckpt|gguf|safetensors)$/.test(n));
  const hint = other.length > 0
    ? ` It holds ${
      other.join(", ")
    }: only model.safetensors(.index.json) is read (convert other formats with ` +
      `transformers' save_pretrained(..., safe_serialization=True); adapters need their base model).`
    : "";
  return new Error(
    `${fn}: no weights in ${src.where}: expected ${WEIGHTS_FILE}, or ${INDEX_FILE} with the ` +
      `shard files it names.${hint}`,
  );
}

/**
 * Options of {@link loadCheckpointFromFiles}.
 *
 * @example Usage
 * ```ts
 * import type { LoadCheckpointFromFilesOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const opts: LoadCheckpointFromFilesOptions = { name: "tiny", allowExtra: ["v_head.*"] };
 * assert.equal(opts.name, "tiny");
 * ```
 */
export interface LoadCheckpointFromFilesOptions extends LoadCheckpointOptions {
  /** What messages and the checkpoint's `dir` call the files (default `"<files>"`). */
  name?: string;
}

/**
 * Loads a Hugging Face checkpoint from its files in memory (`config.json`, `model.safetensors`
 * or `model.safetensors.index.json` and its shards, optional `generation_config.json`, keyed by
 * file name; other files are ignored), with the same checks and errors as the folder loader
 * `loadCheckpoint` of `@rlvr/policy/fs`, which reads the folder's files and loads them through
 * the same code. Runs anywhere, browsers included (e.g. on `File`s a user picked).
 *
 * @param files The files by name: bytes, or text for the JSON files.
 * @param options Allowed extra tensors, backend, storage and the name used in messages.
 * @returns The checkpoint; its `dir` is `options.name`.
 * @throws {CheckpointError} when the tensors do not match the config; `Error` naming the file and
 * what is expected there when a file is missing.
 *
 * @example Usage
 * ```ts
 * import { checkpointFiles, loadCheckpointFromFiles, modelConfig, parameterShapes } from "@rlvr/policy";
 * import { ones } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = modelConfig({ vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2 });
 * const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, ones(s)]));
 * const files = await checkpointFiles({ config, params });
 * assert.deepEqual(Object.keys(files), ["model.safetensors", "config.json"]);
 * const ckpt = await loadCheckpointFromFiles(files, { name: "tiny" });
 * assert.deepEqual(ckpt.config, config);
 * assert.deepEqual(await ckpt.params.get("model.norm.weight")!.toArray(), [1, 1, 1, 1]);
 * await assert.rejects(
 *   loadCheckpointFromFiles({ "config.json": files["config.json"]! }, { name: "tiny" }),
 *   /no weights in tiny: expected model\.safetensors/,
 * );
 * ```
 */
export function loadCheckpointFromFiles(
  files: FileContents,
  options: LoadCheckpointFromFilesOptions = {},
): Promise<Checkpoint> {
  const fn = "loadCheckpointFromFiles";
  return Promise.resolve().then(() =>
    loadCheckpointFrom(filesSource(files, options.name ?? "<files>"), { fn, arg: "files" }, options)
  );
}

/**
 * Options of {@link loadCheckpointFromUrl}.
 *
 * @example Usage
 * ```ts
 * import type { LoadCheckpointFromUrlOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const opts: LoadCheckpointFromUrlOptions = { storage: "bf16" };
 * assert.equal(opts.fetch, undefined);
 * ```
 */
export interface LoadCheckpointFromUrlOptions extends LoadCheckpointOptions {
  /** The fetch to use (default: the global `fetch`), e.g. one that adds headers or caches. */
  fetch?: typeof fetch;
}

/**
 * Loads a Hugging Face checkpoint from the files under a base URL (a static server, a CDN, the
 * Hugging Face Hub's `resolve/main/`), fetching `config.json`, `generation_config.json` (a 404
 * means none), `model.safetensors` or else `model.safetensors.index.json` and its shards one at a
 * time. Same checks and errors as `loadCheckpoint` of `@rlvr/policy/fs`; runs anywhere `fetch`
 * does.
 *
 * @param baseUrl The folder's URL (a trailing `/` is added when missing).
 * @param options Allowed extra tensors, backend, storage and the fetch to use.
 * @returns The checkpoint; its `dir` is the base URL.
 * @throws {CheckpointError} when the tensors do not match the config; `Error` naming the URL on a
 * missing file or an HTTP error.
 *
 * @example Usage
 * ```ts
 * import { checkpointFiles, loadCheckpointFromUrl, modelConfig, parameterShapes } from "@rlvr/policy";
 * import { zeros } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = modelConfig({ vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 2 });
 * const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, zeros(s)]));
 * const files = await checkpointFiles({ config, params });
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
 *   const body = files[new URL(req.url).pathname.replace("/tiny/", "")];
 *   return body === undefined ? new Response("", { status: 404 }) : new Response(body as Uint8Array<ArrayBuffer>);
 * });
 * const ckpt = await loadCheckpointFromUrl(`http://127.0.0.1:${server.addr.port}/tiny`);
 * assert.deepEqual(ckpt.config, config);
 * assert.equal(ckpt.dir, `http://127.0.0.1:${server.addr.port}/tiny/`);
 * await server.shutdown();
 * ```
 */
export function loadCheckpointFromUrl(
  baseUrl: string | URL,
  options: LoadCheckpointFromUrlOptions = {},
): Promise<Checkpoint> {
  const fn = "loadCheckpointFromUrl";
  return Promise.resolve().then(() =>
    loadCheckpointFrom(urlSource(baseUrl, options.fetch), { fn, arg: "url" }, options)
  );
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
 * The files of a save, validated and laid out but not yet serialized: the weight files (one
 * `model.safetensors`, or shards) in write order, then the JSON files (the index last among the
 * weights, then `config.json`, then `generation_config.json` when given). Internal: `saveCheckpoint`
 * writes it to a folder, {@link checkpointFiles} to bytes.
 */
export interface CheckpointPlan {
  /** Weight files: name, tensors and how to serialize them. */
  readonly weights: readonly {
    name: string;
    tensors: Map<string, Tensor>;
    options: SerializeOptions;
  }[];
  /** JSON files: name and text. */
  readonly json: readonly { name: string; text: string }[];
}

/**
 * Checks `data` against `parameterShapes(config)` and lays out the files of a save (see
 * {@link CheckpointPlan}). Everything is checked before anything is serialized.
 *
 * @param fn The caller, for messages (`saveCheckpoint`, `checkpointFiles`).
 * @param dir The destination, for messages and {@link CheckpointError.dir}.
 * @param data Config, parameters, extras and generation config.
 * @param options Storage dtype and shard size.
 * @returns The plan.
 * @throws {CheckpointError} listing every missing, unexpected or mis-shaped parameter.
 *
 * @example Usage
 * ```ts
 * import { planCheckpoint } from "./checkpoint.ts";
 * import { modelConfig, parameterShapes } from "./config.ts";
 * import { ones } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = modelConfig({ vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 2, numHeads: 2 });
 * const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, ones(s)]));
 * const plan = planCheckpoint("save", "out", { config, params }, { maxShardBytes: 256 });
 * assert.ok(plan.weights.length > 1);
 * assert.deepEqual(plan.json.map((f) => f.name), ["model.safetensors.index.json", "config.json"]);
 * ```
 */
export function planCheckpoint(
  fn: string,
  dir: string,
  data: CheckpointData,
  options: SaveCheckpointOptions = {},
): CheckpointPlan {
  const dtype = options.dtype ?? "f32";
  if (dtype !== "f32" && dtype !== "bf16") {
    throw new RangeError(`${fn}: options.dtype must be "f32" or "bf16", got ${dtype}`);
  }
  const maxShardBytes = options.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES;
  if (!Number.isSafeInteger(maxShardBytes) || maxShardBytes < 1) {
    throw new RangeError(
      `${fn}: options.maxShardBytes must be an integer >= 1, got ${maxShardBytes}`,
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
      throw new TypeError(`${fn}: params.get(${JSON.stringify(name)}) is not a Tensor`);
    }
    if (expected === undefined) problems.push({ kind: "unexpected", name, found: t.shape });
    else if (!sameShape(t.shape, expected)) {
      problems.push({ kind: "shape", name, expected, found: t.shape });
    } else if (t.dtype !== "f32") problems.push({ kind: "dtype", name, dtype: t.dtype });
    if (extra.has(name)) problems.push({ kind: "duplicate", name });
  }
  if (problems.length > 0) {
    throw new CheckpointError(
      `${fn}(${dir})`,
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
      throw new TypeError(`${fn}: extra.get(${JSON.stringify(name)}) is not a Tensor`);
    }
    all.push([name, t]);
  }
  for (const [name, t] of all) {
    if (t.isDisposed) {
      throw new Error(
        `${fn}: tensor ${JSON.stringify(name)} was disposed before saving; save first`,
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

  // Bool tensors cannot be narrowed: name the f32 ones only.
  const serializeOptions = (items: [string, Tensor][]): SerializeOptions => ({
    metadata: { format: "pt" },
    dtype: Object.fromEntries(items.filter(([, t]) => t.dtype === "f32").map(([n]) => [n, dtype])),
  });
  const weights: { name: string; tensors: Map<string, Tensor>; options: SerializeOptions }[] = [];
  const json: { name: string; text: string }[] = [];
  if (shards.length === 1) {
    const items = shards[0]!;
    weights.push({ name: WEIGHTS_FILE, tensors: new Map(items), options: serializeOptions(items) });
  } else {
    const n = String(shards.length).padStart(5, "0");
    const weightMap: Record<string, string> = {};
    for (let i = 0; i < shards.length; i++) {
      const name = `model-${String(i + 1).padStart(5, "0")}-of-${n}.safetensors`;
      const items = shards[i]!;
      weights.push({ name, tensors: new Map(items), options: serializeOptions(items) });
      for (const [tensorName] of items) weightMap[tensorName] = name;
    }
    // The index goes last: it is what makes the shards a checkpoint.
    json.push({
      name: INDEX_FILE,
      text: hfJson({ metadata: { total_size: totalSize }, weight_map: weightMap }),
    });
  }
  json.push({ name: CONFIG_FILE, text: hfJson(hfConfig) });
  if (data.generationConfig !== undefined && data.generationConfig !== null) {
    json.push({ name: GENERATION_FILE, text: hfJson(data.generationConfig) });
  }
  return { weights, json };
}

/**
 * The files of a checkpoint as bytes, by name, in the order a save writes them: exactly what
 * `saveCheckpoint` of `@rlvr/policy/fs` writes to a folder (`model.safetensors`, or shards and
 * `model.safetensors.index.json` when the tensors exceed `maxShardBytes`; `config.json`;
 * `generation_config.json` when given), and what {@link loadCheckpointFromFiles} reads back.
 * Runs anywhere, browsers included (e.g. to offer a trained model for download). `params` must be
 * exactly `parameterShapes(config)` in f32; everything is checked before anything is serialized.
 *
 * @param data Config, parameters, extras and generation config.
 * @param options Storage dtype and shard size.
 * @returns File name → bytes.
 * @throws {CheckpointError} listing every missing, unexpected or mis-shaped parameter.
 *
 * @example Usage
 * ```ts
 * import { checkpointFiles, modelConfig, parameterShapes } from "@rlvr/policy";
 * import { ones } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const config = modelConfig({ vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 2, numHeads: 2 });
 * const params = new Map([...parameterShapes(config)].map(([n, s]) => [n, ones(s)]));
 * const files = await checkpointFiles({ config, params, generationConfig: { eos_token_id: 2 } }, {
 *   dtype: "bf16",
 *   maxShardBytes: 256,
 * });
 * const index = JSON.parse(new TextDecoder().decode(files["model.safetensors.index.json"]));
 * assert.ok(index.weight_map["model.norm.weight"] in files);
 * assert.equal(Object.keys(files).at(-1), "generation_config.json");
 * ```
 */
export async function checkpointFiles(
  data: CheckpointData,
  options: SaveCheckpointOptions = {},
): Promise<Record<string, Uint8Array>> {
  const plan = planCheckpoint("checkpointFiles", "<files>", data, options);
  const out: Record<string, Uint8Array> = {};
  for (const w of plan.weights) out[w.name] = await serializeSafetensors(w.tensors, w.options);
  const encoder = new TextEncoder();
  for (const f of plan.json) out[f.name] = encoder.encode(f.text);
  return out;
}
