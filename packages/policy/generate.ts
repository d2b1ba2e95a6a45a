/**
 * Batched, KV-cached autoregressive generation for a {@link CausalLM}: one prefill of every
 * prompt, then one decode step per new token, sampling with `@rlvr/sampling`'s
 * {@link TokenSampler}.
 *
 * Design decisions:
 * - **Left padding**, as Hugging Face batches prompts: every row ends at the same column, so
 *   each step appends one column to one shared {@link KVCache}. Positions count real tokens only
 *   (`attention_mask.cumsum(-1) - 1`) and the attention mask hides the padding, so a padded row
 *   computes what it would compute alone (bit for bit on the CPU backend).
 * - **Keyed draws**: token `i` of sequence `s` at training step `step` is drawn with the key
 *   `(step, sequenceIds[s], i)`, so a draw depends neither on the other rows of the batch nor on
 *   the prompt's padding; a row generated alone equals the same row in any batch.
 * - **Interruptible**: `interrupt` ends the running rows between two steps; generating again
 *   from prompt + tokens so far with `positionOffsets` draws the same keys a single call would,
 *   and the prefill of those tokens computes the logits their decode steps computed (bit for
 *   bit on the CPU backend), so under the same weights the continued row is the same row.
 * - **Finished rows stop costing compute**: a row that hit EOS, a stop string or
 *   `maxNewTokens` is dropped from the cache (`cache.selectRows`) before the next step, so the
 *   decode batch shrinks; `timing.rowsPerStep` records the batch of every forward pass.
 * - **One logits row per sequence per step** is computed and read back: the LM head runs on the
 *   last position only (also during prefill), so the host copy is `[rows, vocab]` floats.
 * - Everything runs under `noGrad` in `tidy` scopes; the cache is freed on return or on error,
 *   so a call leaves the backend's live-buffer count where it found it.
 *
 * Log-probabilities: every token reports the sampler's two numbers. `logprobs` is the
 * processed-distribution log-prob (temperature, top-k, top-p, min-p, renormalised: what the
 * token was really drawn from; 0 for greedy). `scaledLogprobs` is `log softmax(logits / T)` with
 * no filters (the raw `log softmax(logits)` for greedy): the distribution the learner recomputes
 * with `scoreTokens` (the TRL / veRL convention), which is the one to compare with it.
 *
 * @module
 */

import { type SamplerConfig, TOKEN_DOMAIN, TokenSampler, uniformAt } from "@rlvr/sampling";
import { noGrad, type Tensor, tensor, tidy } from "@rlvr/tensor";
import { type DeviceChunk, deviceDecodeProblem, DeviceDecoder } from "./device_decode/decoder.ts";
import { KVCache } from "./kv_cache.ts";
import type { CausalLM, ForwardHook } from "./model.ts";
import type { Tokenizer } from "./tokenizer/tokenizer.ts";

// Re-exported so that `GenerateOptions.sampler` is documented with this package (the same
// types as `@rlvr/sampling`'s).
export type { SamplerConfig, SamplingOrder, SamplingParams } from "@rlvr/sampling";

/**
 * Why a sequence ended: an EOS token, a stop string, `maxNewTokens`, or
 * {@link GenerateOptions.interrupt} (the row was still running; continue it by generating again
 * from the prompt plus its tokens, with {@link GenerateOptions.positionOffsets}).
 */
export type FinishReason = "eos" | "stop" | "length" | "interrupted";

/**
 * Options of {@link generate}.
 *
 * @example Usage
 * ```ts
 * import type { GenerateOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const opts: GenerateOptions = {
 *   maxNewTokens: 16,
 *   sampler: { seed: 1, temperature: 0.7, topP: 0.9 },
 *   step: 3,
 *   sequenceIds: [0, 1],
 * };
 * assert.equal(opts.sampler.temperature, 0.7);
 * ```
 */
export interface GenerateOptions {
  /** Most tokens to generate per sequence, an integer >= 1. */
  maxNewTokens: number;
  /**
   * Seed and sampling params (temperature, top-k, top-p, min-p, vocabSize, order) of
   * `@rlvr/sampling`. Temperature 0 is greedy decoding.
   */
  sampler: SamplerConfig;
  /** The `step` part of every draw key (e.g. the training step), default 0. */
  step?: number;
  /**
   * The `sequence` part of each row's draw keys, one distinct integer in [0, 2^32) per prompt
   * (e.g. `promptIndex · groupSize + sample`). Default: the row index.
   */
  sequenceIds?: readonly number[];
  /**
   * Token ids that end a sequence (the EOS token is kept as its last token). Default: the
   * tokenizer's `eosTokenIds` when a tokenizer is given, else `model.config.eosTokenIds`; `[]`
   * turns EOS off.
   */
  eosTokenIds?: readonly number[];
  /**
   * Strings that end a sequence as soon as the decoded completion contains one; needs
   * `tokenizer`. The tokens are kept up to and including the token that completed the string;
   * `text` is cut just before the string's first occurrence (vLLM's default,
   * `include_stop_str_in_output = false`).
   */
  stopStrings?: readonly string[];
  /** Decodes completions into `text` and checks `stopStrings`. */
  tokenizer?: Tokenizer;
  /**
   * Whether `text` (and the stop-string check) drops special tokens, default true (vLLM's
   * `skip_special_tokens`).
   */
  skipSpecialTokens?: boolean;
  /**
   * Id written into the padding slots of shorter prompts; they are masked, so any valid id
   * works. Default: `model.config.padTokenId`, else the tokenizer's, else 0.
   */
  padTokenId?: number;
  /**
   * Also return the logits row each token was drawn from (`GeneratedSequence.logits`), e.g. to
   * check the cache against a full recomputation. Default false (it holds `vocab` floats per
   * token).
   */
  returnLogits?: boolean;
  /**
   * Called after every sampling step (the prefill's, then each decode step's) with the tokens
   * just drawn, e.g. to stream them: see {@link GenerateStep}. When it returns a promise,
   * generation waits for it before the next forward pass (so a server can yield to its event
   * loop, or apply backpressure); when it throws (or its promise rejects), generation stops and
   * {@link generate} rejects with that error, leaking nothing. Default: none.
   */
  onTokens?: (event: GenerateStep) => void | Promise<void>;
  /**
   * Checked after every sampling step (after `onTokens`): when it returns true, every row still
   * running ends with finishReason `"interrupted"` and generation returns (partial rollouts: the
   * caller loads newer weights and continues the rows from prompt + tokens so far). Default:
   * never.
   */
  interrupt?: () => boolean;
  /**
   * Adds input embeddings and RoPE tables to each decoder call (a vision-language model's
   * `forwardHook(imagesOf)`: image features at the prompt's image tokens, M-RoPE positions);
   * `rows` are prompt indices. Default none.
   */
  forwardHook?: ForwardHook;
  /**
   * Per prompt, added to the `position` part of its draw keys (default 0 each): a row continued
   * after an interruption passes the number of tokens it already has, so token `i` of the whole
   * completion is always drawn with key `(step, sequence, i)`, interrupted or not.
   */
  positionOffsets?: readonly number[];
  /**
   * Where the decode steps run (default `"host"`). `"host"`: every step's logits are read back
   * and sampled on the host, as described above. `"device"` (WebGPU): after the prefill and its
   * draw, steps run as fixed GPU programs that sample on the GPU and feed each token to the next
   * step there, `deviceChunk` steps per host round trip (`DeviceDecoder`). The draws use the
   * same keyed uniforms, but the logits and the inverse CDF are f32 on the GPU, so a token can
   * differ from the host loop's where two candidates lie within rounding; `onTokens` is called
   * per token once its chunk is read, with `logits` null; a row that ends keeps decoding (its
   * tokens dropped) until its chunk is read. Needs f32 weights (LoRA adapters are folded into
   * copies of the adapted weights for the decode steps), no `returnLogits`, and a `forwardHook`
   * only with `decodeShift` (a vision-language model's: the prefill runs through the hook on the
   * host, the decode steps at its M-RoPE deltas on the GPU); anything else is refused with the
   * reason. Top-k / top-p / min-p run on the GPU too (f32 sums: a token at a filter's boundary
   * can differ within rounding).
   */
  decodeLoop?: "host" | "device";
  /** With `decodeLoop: "device"`: decode steps per host round trip, an integer >= 1 (default 16). */
  deviceChunk?: number;
}

/**
 * What {@link GenerateOptions.onTokens} receives after each sampling step. Every array has one
 * entry per prompt, in prompt order; a row that had finished before this step has `null`
 * everywhere.
 *
 * @example Usage
 * ```ts
 * import { CausalLM, generate, type GenerateStep, modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const model = CausalLM.random(modelConfig({
 *   vocabSize: 32, hiddenSize: 16, intermediateSize: 32, numLayers: 2, numHeads: 4,
 * }), { seed: 1, std: 0.5 });
 * const streamed: number[][] = [[], []];
 * const { sequences } = await generate(model, [[1, 2, 3], [4]], {
 *   maxNewTokens: 4,
 *   sampler: { seed: 7, temperature: 0.8 },
 *   eosTokenIds: [],
 *   onTokens: (e: GenerateStep) => {
 *     e.tokens.forEach((t, i) => t !== null && streamed[i]!.push(t));
 *   },
 * });
 * assert.deepEqual(streamed, sequences.map((s) => s.tokens));
 * model.dispose();
 * ```
 */
export interface GenerateStep {
  /** The token index drawn at this step: 0 for the prefill's draw, then 1, 2, ... */
  step: number;
  /** Per prompt: the token drawn at this step, or null for a row that had already finished. */
  tokens: readonly (number | null)[];
  /** Per prompt: its {@link GeneratedSequence.logprobs} entry for this token, or null. */
  logprobs: readonly (number | null)[];
  /** Per prompt: its {@link GeneratedSequence.scaledLogprobs} entry for this token, or null. */
  scaledLogprobs: readonly (number | null)[];
  /**
   * Per prompt: the logits row the token was drawn from, or null. A view into a buffer that is
   * reused once the callback returns: read it (e.g. a top-k) during the call, or copy it.
   */
  logits: readonly (Float32Array | null)[];
  /** Per prompt: why the row ended if this token ended it, else null (still running, or done). */
  finishReasons: readonly (FinishReason | null)[];
}

/**
 * One generated sequence.
 *
 * @example Usage
 * ```ts
 * import type { GeneratedSequence } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const s: GeneratedSequence = {
 *   sequenceId: 0, promptIds: [1, 2], tokens: [3], logprobs: [0], scaledLogprobs: [-0.1],
 *   finishReason: "length",
 * };
 * assert.equal(s.tokens.length, s.logprobs.length);
 * ```
 */
export interface GeneratedSequence {
  /** The sequence id its draws were keyed with. */
  sequenceId: number;
  /** The prompt, unpadded. */
  promptIds: number[];
  /** Generated tokens, including the EOS or stop-completing token that ended the sequence. */
  tokens: number[];
  /** Per token: log-prob under the processed sampling distribution (greedy: 0). */
  logprobs: number[];
  /** Per token: `log softmax(logits / T)` without filters (greedy: `log softmax(logits)`). */
  scaledLogprobs: number[];
  /** The decoded completion (cut before a stop string), when a tokenizer was given. */
  text?: string;
  /** Why the sequence ended. */
  finishReason: FinishReason;
  /** With `returnLogits`: the logits row each token was drawn from. */
  logits?: Float32Array[];
}

/**
 * Timing and work counters of one {@link generate} call.
 *
 * @example Usage
 * ```ts
 * import type { GenerationTiming } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const t: GenerationTiming = {
 *   prefillS: 0.5, decodeS: 1.5, totalS: 2, promptTokens: 64, generatedTokens: 100,
 *   tokensPerS: 50, decodeTokensPerS: 60, decodeSteps: 15, rowsPerStep: [8, 8, 7],
 *   breakdown: { recordS: 0.9, readS: 0.6, sampleS: 0.4 },
 * };
 * assert.equal(t.generatedTokens / t.totalS, t.tokensPerS);
 * ```
 */
export interface GenerationTiming {
  /** Seconds of the prefill forward pass, including reading its logits back. */
  prefillS: number;
  /** Seconds of everything after the prefill: sampling and the decode steps. */
  decodeS: number;
  /** `prefillS + decodeS`. */
  totalS: number;
  /** Real (unpadded) prompt tokens. */
  promptTokens: number;
  /** Tokens generated over all sequences. */
  generatedTokens: number;
  /** `generatedTokens / totalS`. */
  tokensPerS: number;
  /** Tokens sampled after the prefill's, per second of `decodeS` (0 when there were none). */
  decodeTokensPerS: number;
  /** Decode forward passes (the prefill not counted). */
  decodeSteps: number;
  /**
   * Rows (cache batch) of every forward pass, the prefill first: it shrinks as sequences
   * finish and their rows are dropped from the cache.
   */
  rowsPerStep: number[];
  /**
   * Where the time went, summed over all forward passes and samples: `recordS` is the host time
   * spent building the forward passes (on WebGPU: encoding and submitting the dispatches),
   * `readS` the wait for the logits (on WebGPU: the GPU finishing, then the copy back), and
   * `sampleS` the token sampler on the host.
   */
  breakdown: { recordS: number; readS: number; sampleS: number };
}

/**
 * What {@link generate} returns.
 *
 * @example Usage
 * ```ts
 * import type { GenerateResult } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const r: GenerateResult = {
 *   sequences: [],
 *   timing: {
 *     prefillS: 0, decodeS: 0, totalS: 0, promptTokens: 0, generatedTokens: 0,
 *     tokensPerS: 0, decodeTokensPerS: 0, decodeSteps: 0, rowsPerStep: [],
 *     breakdown: { recordS: 0, readS: 0, sampleS: 0 },
 *   },
 * };
 * assert.equal(r.sequences.length, 0);
 * ```
 */
export interface GenerateResult {
  /** One entry per prompt, in prompt order. */
  sequences: GeneratedSequence[];
  /** Timing and work counters. */
  timing: GenerationTiming;
}

/** `Array.isArray` without its `any[]` type guard, which would erase readonly element types. */
function isArray(v: unknown): boolean {
  return Array.isArray(v);
}

function show(v: unknown): string {
  try {
    return JSON.stringify(v)?.slice(0, 120) ?? String(v);
  } catch {
    return String(v);
  }
}

function checkIds(field: string, ids: unknown, vocab: number, min: number): readonly number[] {
  if (!Array.isArray(ids) || ids.length < min) {
    throw new RangeError(
      `generate: ${field} must be an array of ${min > 0 ? "at least one " : ""}token id${
        min > 0 ? "" : "s"
      }, got ${show(ids)}`,
    );
  }
  ids.forEach((id, i) => {
    if (!Number.isInteger(id) || id < 0 || id >= vocab) {
      throw new RangeError(
        `generate: ${field}[${i}] must be a token id, an integer in [0, ${vocab}) ` +
          `(the model's vocabSize), got ${show(id)}`,
      );
    }
  });
  return ids as readonly number[];
}

interface Row {
  index: number;
  pad: number;
  out: GeneratedSequence;
}

/** The {@link GenerateStep} of step `t`: `rows` are the active rows, `running` their positions that go on. */
function stepEvent(
  t: number,
  B: number,
  rows: readonly Row[],
  rowLogits: readonly (Float32Array | null)[],
  running: ReadonlySet<number>,
): GenerateStep {
  const tokens = Array<number | null>(B).fill(null);
  const logprobs = Array<number | null>(B).fill(null);
  const scaledLogprobs = Array<number | null>(B).fill(null);
  const logits = Array<Float32Array | null>(B).fill(null);
  const finishReasons = Array<FinishReason | null>(B).fill(null);
  rows.forEach((r, i) => {
    tokens[r.index] = r.out.tokens[t]!;
    logprobs[r.index] = r.out.logprobs[t]!;
    scaledLogprobs[r.index] = r.out.scaledLogprobs[t]!;
    logits[r.index] = rowLogits[i]!;
    if (!running.has(i)) finishReasons[r.index] = r.out.finishReason;
  });
  return { step: t, tokens, logprobs, scaledLogprobs, logits, finishReasons };
}

/**
 * Generates a completion for every prompt with one KV-cached batch: left-padded prefill, then
 * one decode step per token, sampling with a {@link TokenSampler} keyed by
 * `(step, sequenceIds[row], positionOffsets[row] + tokenIndex)`. A sequence ends at an EOS token
 * (`"eos"`), when its decoded text contains a stop string (`"stop"`), after `maxNewTokens` tokens
 * (`"length"`), or when `interrupt()` returns true while it runs (`"interrupted"`); finished rows
 * leave the cache. Runs without gradients and leaks no backend memory.
 *
 * @param model The policy (its parameters' backend runs the forward passes).
 * @param prompts Token ids per prompt (ragged, each non-empty).
 * @param opts Length limit, sampler, draw keys, stop conditions.
 * @returns Per prompt: tokens, both log-probs, text, finish reason; plus timing.
 *
 * @example Usage
 * ```ts
 * import { CausalLM, generate, modelConfig } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const model = CausalLM.random(modelConfig({
 *   vocabSize: 32, hiddenSize: 16, intermediateSize: 32, numLayers: 2, numHeads: 4,
 * }), { seed: 1, std: 0.5 });
 * const { sequences, timing } = await generate(model, [[1, 2, 3], [4]], {
 *   maxNewTokens: 5,
 *   sampler: { seed: 7, temperature: 0.8, topK: 10 },
 *   eosTokenIds: [],
 * });
 * assert.equal(sequences.length, 2);
 * assert.equal(sequences[1]!.tokens.length, 5);
 * assert.equal(sequences[1]!.finishReason, "length");
 * assert.ok(sequences[0]!.logprobs.every((lp) => lp <= 0));
 * assert.equal(timing.generatedTokens, 10);
 * model.dispose();
 * ```
 */
export async function generate(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  opts: GenerateOptions,
): Promise<GenerateResult> {
  const cfg = model.config;
  const vocab = cfg.vocabSize;
  if (typeof opts !== "object" || opts === null) {
    throw new TypeError(
      `generate: opts must be an object with maxNewTokens and sampler, got ${show(opts)}`,
    );
  }
  const { maxNewTokens } = opts;
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1) {
    throw new RangeError(
      `generate: maxNewTokens must be an integer >= 1, got ${show(maxNewTokens)}`,
    );
  }
  if (!isArray(prompts) || prompts.length === 0) {
    throw new RangeError(
      `generate: prompts must be a non-empty array of token-id arrays, got ${show(prompts)}`,
    );
  }
  prompts.forEach((p, i) => checkIds(`prompts[${i}]`, p, vocab, 1));
  const sampler = new TokenSampler(opts.sampler);
  const step = opts.step ?? 0;
  const B = prompts.length;
  const sequenceIds = opts.sequenceIds ?? prompts.map((_, i) => i);
  if (!isArray(sequenceIds) || sequenceIds.length !== B) {
    throw new RangeError(
      `generate: sequenceIds must list one id per prompt (${B}), got ${show(sequenceIds)}`,
    );
  }
  // Checked here, not at the first draw, so that a bad key fails before the prefill runs.
  const keyPart = (field: string, v: unknown): void => {
    if (!Number.isInteger(v) || (v as number) < 0 || (v as number) >= 2 ** 32) {
      throw new RangeError(
        `generate: ${field} must be an integer in [0, 2^32) (a draw key), got ${show(v)}`,
      );
    }
  };
  keyPart("step", step);
  const seen = new Set<number>();
  for (const [i, id] of sequenceIds.entries()) {
    keyPart(`sequenceIds[${i}]`, id);
    if (seen.has(id)) {
      throw new RangeError(
        `generate: sequenceIds must be distinct, got ${id} twice; two rows with one id draw ` +
          `identical tokens from identical prompts (use e.g. promptIndex * groupSize + sample)`,
      );
    }
    seen.add(id);
  }
  const offsets = opts.positionOffsets ?? null;
  if (offsets !== null) {
    if (!isArray(offsets) || offsets.length !== B) {
      throw new RangeError(
        `generate: positionOffsets must list one offset per prompt (${B}), got ${show(offsets)}`,
      );
    }
    offsets.forEach((o, i) => keyPart(`positionOffsets[${i}]`, o));
  }
  const interrupt = opts.interrupt;
  if (interrupt !== undefined && typeof interrupt !== "function") {
    throw new TypeError(
      `generate: interrupt must be a function returning a boolean, got ${show(interrupt)}`,
    );
  }
  const tokenizer = opts.tokenizer;
  const eosIds = new Set(
    checkIds(
      "eosTokenIds",
      opts.eosTokenIds ?? tokenizer?.eosTokenIds ?? cfg.eosTokenIds,
      vocab,
      0,
    ),
  );
  const stopStrings = opts.stopStrings ?? [];
  if (!isArray(stopStrings) || stopStrings.some((s) => typeof s !== "string" || s === "")) {
    throw new RangeError(
      `generate: stopStrings must be an array of non-empty strings, got ${show(stopStrings)}`,
    );
  }
  if (stopStrings.length > 0 && tokenizer === undefined) {
    throw new RangeError(
      `generate: stopStrings ${show(stopStrings)} need a tokenizer to decode the completions; ` +
        `pass opts.tokenizer`,
    );
  }
  const skipSpecialTokens = opts.skipSpecialTokens ?? true;
  const padId = opts.padTokenId ?? cfg.padTokenId ?? tokenizer?.padTokenId ?? 0;
  checkIds("padTokenId", [padId], vocab, 1);
  const returnLogits = opts.returnLogits ?? false;
  const device = deviceLoopOf(model, opts, returnLogits);
  const embed = model.params.get("model.embed_tokens.weight");
  if (embed === undefined) {
    throw new Error("generate: the model has no model.embed_tokens.weight; was it disposed?");
  }
  const backend = embed.backend;

  // A loop, not `Math.max(...lengths)`: spreading one argument per prompt overflows the call
  // stack past ~10^5 prompts (a server request of 1000 prompts × n = 128).
  let maxLen = 0;
  for (const p of prompts) maxLen = Math.max(maxLen, p.length);
  let rows: Row[] = prompts.map((p, index) => {
    const out: GeneratedSequence = {
      sequenceId: sequenceIds[index]!,
      promptIds: [...p],
      tokens: [],
      logprobs: [],
      scaledLogprobs: [],
      finishReason: "length",
    };
    if (returnLogits) out.logits = [];
    return { index, pad: maxLen - p.length, out };
  });
  const all = rows.map((r) => r.out);
  const rowsPerStep: number[] = [];
  let cacheLength = 0;
  // The key-padding mask of the active rows over every cached column plus `extra` new ones.
  const maskFor = (extra: number): Tensor => {
    const width = cacheLength + extra;
    const m = new Int32Array(rows.length * width);
    rows.forEach((r, i) => m.fill(1, i * width + r.pad, (i + 1) * width));
    return tensor(m, { shape: [rows.length, width], dtype: "i32", backend });
  };
  // One forward pass of `ids` for the active rows; returns the last position's logits, [rows, V].
  const lastLogits = async (
    ids: number[][],
    positions: number[][],
    cache: KVCache,
  ): Promise<Float32Array> => {
    rowsPerStep.push(rows.length);
    const t0 = performance.now();
    const t = ids[0]!.length;
    const logits = noGrad(() =>
      tidy(() => {
        // Without padding (equal prompt lengths) the causal mask alone is exact; skip the mask.
        const padded = rows.some((r) => r.pad > 0);
        const extra = opts.forwardHook?.({
          ids,
          rows: rows.map((r) => r.index),
          cacheLength,
          mask: padded
            ? rows.map((r) =>
              Array.from({ length: cacheLength + t }, (_, j) => (j < r.pad ? 0 : 1))
            )
            : null,
        }) ?? {};
        const hidden = model.hidden(tensor(ids, { dtype: "i32", backend }), {
          cache,
          positions,
          ...(padded ? { attentionMask: maskFor(t) } : {}),
          ...extra,
        });
        return model.lmHead(hidden.narrow(1, t - 1, 1));
      })
    );
    cacheLength += t;
    const t1 = performance.now();
    breakdown.recordS += (t1 - t0) / 1e3;
    try {
      return (await logits.data()) as Float32Array;
    } finally {
      logits.dispose();
      breakdown.readS += (performance.now() - t1) / 1e3;
    }
  };

  const breakdown = { recordS: 0, readS: 0, sampleS: 0 };
  const started = performance.now();
  let prefillS = 0;
  let decodeSteps = 0;
  let sampledAfterPrefill = 0;
  const cache = new KVCache(cfg, B);
  try {
    let logits = await lastLogits(
      rows.map((r) => [...Array<number>(r.pad).fill(padId), ...prompts[r.index]!]),
      rows.map((r) => Array.from({ length: maxLen }, (_, j) => Math.max(0, j - r.pad))),
      cache,
    );
    prefillS = (performance.now() - started) / 1e3;
    for (let t = 0;; t++) {
      const rowLogits = rows.map((_, i) => logits.subarray(i * vocab, (i + 1) * vocab));
      const ts = performance.now();
      const samples = sampler.sampleBatch(rowLogits, {
        step,
        positions: offsets === null ? t : rows.map((r) => offsets[r.index]! + t),
        sequences: rows.map((r) => r.out.sequenceId),
      }, { scaledLogprob: true });
      breakdown.sampleS += (performance.now() - ts) / 1e3;
      if (t > 0) sampledAfterPrefill += rows.length;
      const running: number[] = [];
      rows.forEach((r, i) => {
        const s = samples[i]!;
        const out = r.out;
        out.tokens.push(s.token);
        out.logprobs.push(s.logprob);
        out.scaledLogprobs.push(s.scaledLogprob!);
        out.logits?.push(rowLogits[i]!.slice());
        if (!finishOf(out, s.token)) running.push(i);
      });
      if (opts.onTokens !== undefined) {
        const event = stepEvent(t, B, rows, rowLogits, new Set(running));
        const pending = opts.onTokens(event);
        if (pending instanceof Promise) await pending;
      }
      if (running.length === 0) break;
      if (interrupt?.() === true) {
        for (const i of running) rows[i]!.out.finishReason = "interrupted";
        break;
      }
      if (running.length < rows.length) {
        cache.selectRows(running);
        rows = running.map((i) => rows[i]!);
      }
      if (device !== null) {
        const done = await decodeOnDevice(model, cache, rows, t, {
          maxNewTokens,
          chunk: device.chunk,
          sampler,
          step,
          offsets,
          B,
          breakdown,
          finishes: finishOf,
          ...(opts.forwardHook?.decodeShift === undefined
            ? {}
            : { shiftOf: opts.forwardHook.decodeShift }),
          ...(opts.onTokens === undefined ? {} : { onTokens: opts.onTokens }),
          ...(interrupt === undefined ? {} : { interrupt }),
        });
        decodeSteps += done.steps;
        sampledAfterPrefill += done.sampled;
        for (let i = 0; i < done.steps; i++) rowsPerStep.push(rows.length);
        break;
      }
      logits = await lastLogits(
        rows.map((r) => [r.out.tokens[t]!]),
        rows.map((r) => [prompts[r.index]!.length + t]),
        cache,
      );
      decodeSteps++;
    }
  } finally {
    cache.dispose();
  }
  const totalS = (performance.now() - started) / 1e3;

  /** Sets `out.finishReason` and returns true when `token` (just pushed) ends the sequence. */
  function finishOf(out: GeneratedSequence, token: number): boolean {
    if (eosIds.has(token)) {
      out.finishReason = "eos";
    } else if (stopStrings.length > 0 && stopIndex(decodeOf(out)) >= 0) {
      out.finishReason = "stop";
    } else if (out.tokens.length >= maxNewTokens) {
      out.finishReason = "length";
    } else {
      return false;
    }
    return true;
  }
  function decodeOf(out: GeneratedSequence): string {
    return tokenizer!.decode(out.tokens, { skipSpecialTokens });
  }
  function stopIndex(text: string): number {
    let first = -1;
    for (const s of stopStrings) {
      const at = text.indexOf(s);
      if (at >= 0 && (first < 0 || at < first)) first = at;
    }
    return first;
  }

  let generatedTokens = 0;
  for (const s of all) {
    generatedTokens += s.tokens.length;
    if (tokenizer !== undefined) {
      const text = decodeOf(s);
      const at = s.finishReason === "stop" ? stopIndex(text) : -1;
      s.text = at >= 0 ? text.slice(0, at) : text;
    }
  }
  const decodeS = totalS - prefillS;
  return {
    sequences: all,
    timing: {
      prefillS,
      decodeS,
      totalS,
      promptTokens: prompts.reduce((n, p) => n + p.length, 0),
      generatedTokens,
      tokensPerS: totalS > 0 ? generatedTokens / totalS : 0,
      decodeTokensPerS: decodeS > 0 ? sampledAfterPrefill / decodeS : 0,
      decodeSteps,
      rowsPerStep,
      breakdown,
    },
  };
}

/** `decodeLoop: "device"` settings, or null for the host loop; refuses what it cannot run. */
function deviceLoopOf(
  model: CausalLM,
  opts: GenerateOptions,
  returnLogits: boolean,
): { chunk: number } | null {
  const loop = opts.decodeLoop ?? "host";
  if (loop !== "host" && loop !== "device") {
    throw new RangeError(`generate: decodeLoop must be "host" or "device", got ${show(loop)}`);
  }
  const chunk = opts.deviceChunk ?? 16;
  if (!Number.isInteger(chunk) || chunk < 1) {
    throw new RangeError(`generate: deviceChunk must be an integer >= 1, got ${show(chunk)}`);
  }
  if (loop === "host") return null;
  const why = deviceDecodeProblem(model) ??
    (returnLogits
      ? "returnLogits needs every logits row on the host"
      : opts.forwardHook !== undefined && opts.forwardHook.decodeShift === undefined
      ? "a forwardHook without decodeShift (its decode calls are not plain RoPE) runs on the " +
        "host only"
      : null);
  if (why !== null) {
    throw new RangeError(`generate: decodeLoop "device" cannot run: ${why}; use decodeLoop "host"`);
  }
  return { chunk };
}

/** What {@link decodeOnDevice} needs from `generate`. */
interface DeviceLoopContext {
  maxNewTokens: number;
  chunk: number;
  sampler: TokenSampler;
  step: number;
  offsets: readonly number[] | null;
  B: number;
  breakdown: { recordS: number; readS: number; sampleS: number };
  finishes: (out: GeneratedSequence, token: number) => boolean;
  onTokens?: (event: GenerateStep) => void | Promise<void>;
  interrupt?: () => boolean;
  /** A forward hook's `decodeShift` (a multimodal model's M-RoPE deltas), by sequence index. */
  shiftOf?: (row: number) => number;
}

/**
 * The decode steps after token `t` of the running `rows` on the device ({@link DeviceDecoder}):
 * two chunks in flight, tokens recorded in order until every row has finished.
 */
async function decodeOnDevice(
  model: CausalLM,
  cache: KVCache,
  rows: readonly Row[],
  t: number,
  ctx: DeviceLoopContext,
): Promise<{ steps: number; sampled: number }> {
  const n = rows.length;
  const last = ctx.maxNewTokens;
  const { temperature } = ctx.sampler.params;
  const uniforms = new Float32Array(last * n);
  if (temperature > 0) {
    for (let i = t + 1; i < last; i++) {
      rows.forEach((r, j) => {
        const position = (ctx.offsets?.[r.index] ?? 0) + i;
        uniforms[i * n + j] = uniformAt(ctx.sampler.seed, [
          ctx.step,
          r.out.sequenceId,
          position,
          TOKEN_DOMAIN,
        ]);
      });
    }
  }
  const p = ctx.sampler.params;
  const shifts = ctx.shiftOf === undefined ? undefined : rows.map((r) => ctx.shiftOf!(r.index));
  const maxLen = cache.length + last - t;
  const dec = new DeviceDecoder(model, {
    rows: n,
    maxLen,
    maxSteps: last,
    temperature,
    filters: { topK: p.topK, topP: p.topP, minP: p.minP, order: p.order },
    ropePositions: maxLen + Math.max(0, ...(shifts ?? [])),
  });
  const built = dec.checked();
  const inflight: Promise<DeviceChunk>[] = [];
  let steps = 0;
  let sampled = 0;
  try {
    dec.start(cache, {
      pads: rows.map((r) => r.pad),
      tokens: rows.map((r) => r.out.tokens[t]!),
      step: t + 1,
      ...(shifts === undefined ? {} : { positionShifts: shifts }),
    }, uniforms);
    let next = t + 1;
    const submit = () => {
      const k = Math.min(ctx.chunk, last - next);
      const t0 = performance.now();
      inflight.push(dec.run(next, k));
      ctx.breakdown.recordS += (performance.now() - t0) / 1e3;
      next += k;
    };
    submit();
    if (next < last) submit();
    await built;
    const running = new Set(rows.map((_, i) => i));
    while (inflight.length > 0 && running.size > 0) {
      const t0 = performance.now();
      const chunk = await inflight.shift()!;
      ctx.breakdown.readS += (performance.now() - t0) / 1e3;
      for (let s = 0; s < chunk.steps && running.size > 0; s++) {
        const ti = chunk.from + s;
        const active = [...running];
        steps++;
        sampled += active.length;
        for (const i of active) {
          const at = s * n + i;
          const out = rows[i]!.out;
          out.tokens.push(chunk.tokens[at]!);
          out.logprobs.push(chunk.logprobs[at]!);
          out.scaledLogprobs.push(chunk.scaledLogprobs[at]!);
          if (ctx.finishes(out, chunk.tokens[at]!)) running.delete(i);
        }
        if (ctx.onTokens !== undefined) {
          const shown = active.map((i) => rows[i]!);
          const still = new Set(active.flatMap((i, k) => (running.has(i) ? [k] : [])));
          const pending = ctx.onTokens(
            stepEvent(ti, ctx.B, shown, shown.map(() => null), still),
          );
          if (pending instanceof Promise) await pending;
        }
        if (running.size > 0 && ctx.interrupt?.() === true) {
          for (const i of running) rows[i]!.out.finishReason = "interrupted";
          running.clear();
        }
      }
      if (running.size > 0 && next < last) submit();
    }
  } finally {
    // Chunks still in flight map buffers that dispose() destroys: let them land first.
    await Promise.allSettled([built, ...inflight]);
    dec.dispose();
  }
  return { steps, sampled };
}
