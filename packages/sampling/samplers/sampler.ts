/**
 * Token samplers: greedy, temperature, top-k, top-p and min-p, composed in a fixed named order
 * (see `SAMPLING_ORDERS`), drawing with a counter-based RNG keyed by `(seed; step, sequence,
 * position)`.
 *
 * Design: a draw is a pure function of the logits row, the params and the key. The uniform is
 * `uniformAt(seed, [step, sequence, position, 0])` (Philox4x32-10) and the token is its inverse
 * CDF over the sampling distribution in token-index order: the first token whose cumulative
 * probability exceeds `u`. So the token of sequence 3 at position 17 of step 7 does not depend on
 * which other sequences were sampled, in which batch, in which order, or whether some were
 * re-generated; a resumed run re-draws exactly what it drew before. One uniform per token (not
 * one per vocabulary entry, as Gumbel-max needs) keeps a draw `O(V)` apart from top-p's sort of
 * the candidate tokens.
 *
 * Every sample reports `logprob`, the log-probability under the distribution it was drawn from
 * (vLLM `processed_logprobs`: temperature-scaled, filtered, renormalised; 0 for greedy), and on
 * request `rawLogprob` (vLLM `raw_logprobs`, `log softmax(logits)`) and `scaledLogprob`
 * (`log softmax(logits / T)`, what TRL/veRL trainers recompute). `tokenLogprobs` recomputes all
 * three for a given token, so a trainer can reproduce the rollout's numbers bit for bit.
 *
 * @module
 */

import { checkBoolean, checkKnownFields, isArrayLike, show } from "../_args.ts";
import { checkSeed, TOKEN_DOMAIN, uniformUnchecked } from "../rng.ts";
import {
  argmaxOf,
  checkedMax,
  checkRow,
  loadRow,
  type LogitsRow,
  logprobOf,
  normalizer,
  processInPlace,
  type ResolvedSamplingParams,
  resolveSamplingParams,
  type SamplingParams,
  temperatureInPlace,
} from "./logits.ts";

/** Where a token is drawn: the counter of its random draw. */
export interface DrawKey {
  /** The training step (or any epoch-like counter), an integer in [0, 2^32). */
  step: number;
  /** The sequence's id within the step (e.g. prompt index · n + sample index), in [0, 2^32). */
  sequence: number;
  /** The token position within the sequence (e.g. the number of tokens generated so far). */
  position: number;
}

/** Which log-probabilities besides `logprob` a sample reports. */
export interface SampleOptions {
  /** Also report `rawLogprob = log softmax(logits)[token]` (default false). */
  rawLogprob?: boolean;
  /** Also report `scaledLogprob = log softmax(logits / T)[token]` (default false). */
  scaledLogprob?: boolean;
}

/** One sampled token. */
export interface TokenSample {
  /** The token index, in [0, vocabSize). */
  token: number;
  /** `log q(token)` under the sampling distribution (vLLM `processed_logprobs`); greedy: 0. */
  logprob: number;
  /** `log softmax(logits)[token]` (vLLM `raw_logprobs`), when requested. */
  rawLogprob?: number;
  /** `log softmax(logits / T)[token]`, no filters, when requested (greedy: the raw one). */
  scaledLogprob?: number;
}

/** {@link SamplingParams} plus the RNG seed. */
export interface SamplerConfig extends SamplingParams {
  /** The RNG key, an integer in [0, 2^53). */
  seed: number;
}

const TWO32 = 4294967296;

function checkKeyPart(owner: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value >= TWO32) {
    throw new RangeError(`${owner}: ${field} must be an integer in [0, 2^32), got ${show(value)}`);
  }
  return value;
}

function checkKey(owner: string, key: unknown): DrawKey {
  if (typeof key !== "object" || key === null) {
    throw new TypeError(
      `${owner}: key must be {step, sequence, position} (integers in [0, 2^32)), got ${show(key)}`,
    );
  }
  const k = key as DrawKey;
  checkKeyPart(owner, "key.step", k.step);
  checkKeyPart(owner, "key.sequence", k.sequence);
  checkKeyPart(owner, "key.position", k.position);
  return k;
}

interface Wants {
  raw: boolean;
  scaled: boolean;
}

function checkOptions(owner: string, options: unknown): Wants {
  if (options === undefined) return { raw: false, scaled: false };
  if (typeof options !== "object" || options === null) {
    throw new TypeError(
      `${owner}: options must be {rawLogprob?, scaledLogprob?}, got ${show(options)}`,
    );
  }
  checkKnownFields(owner, "options", options, ["rawLogprob", "scaledLogprob"]);
  const o = options as SampleOptions;
  return {
    raw: checkBoolean(owner, "options.rawLogprob", o.rawLogprob ?? false),
    scaled: checkBoolean(owner, "options.scaledLogprob", o.scaledLogprob ?? false),
  };
}

/** Reusable buffers for one row length. */
class Workspace {
  x = new Float64Array(0);
  w = new Float64Array(0);
  ensure(n: number): void {
    if (this.x.length !== n) {
      this.x = new Float64Array(n);
      this.w = new Float64Array(n);
    }
  }
}

/**
 * The keyed inverse-CDF draw from `softmax(values[0, V))` given its max `mx`: the weights
 * `exp(v − mx)` in index order into `w`, their sum `Z`, then the first index whose running sum
 * passes `u · Z` (the last positive weight when rounding leaves the target beyond the sum).
 */
function inverseCdf(
  values: ArrayLike<number>,
  V: number,
  mx: number,
  w: Float64Array,
  seed: number,
  key: DrawKey,
): { token: number; Z: number } {
  let Z = 0;
  let last = -1;
  for (let i = 0; i < V; i++) {
    const xi = values[i]!;
    if (xi === -Infinity) {
      w[i] = 0;
      continue;
    }
    const e = Math.exp(xi - mx);
    w[i] = e;
    Z += e;
    if (e > 0) last = i;
  }
  const u = uniformUnchecked(seed, key.step, key.sequence, key.position, TOKEN_DOMAIN);
  const target = u * Z;
  let token = last;
  let cum = 0;
  for (let i = 0; i <= last; i++) {
    cum += w[i]!;
    if (target < cum) {
      token = i;
      break;
    }
  }
  return { token, Z };
}

/**
 * Plain softmax sampling (temperature 1, no top-k/top-p/min-p) straight from the row: the
 * general path's arithmetic in the same order (the same max, the same sum, the same search), so
 * the same token and the same bits, with two passes over the vocabulary fewer (no float64 copy,
 * no separate max). The raw, scaled and sampling distributions are then one distribution, so
 * all three log-probs are `logprob`.
 */
function drawPlain(
  owner: string,
  row: LogitsRow,
  V: number,
  seed: number,
  key: DrawKey,
  wants: Wants,
  where: string,
  w: Float64Array,
): TokenSample {
  const mx = checkedMax(owner, row, V, where);
  const { token, Z } = inverseCdf(row, V, mx, w, seed, key);
  const out: TokenSample = { token, logprob: (row[token]! - mx) - Math.log(Z) };
  if (wants.raw) out.rawLogprob = out.logprob;
  if (wants.scaled) out.scaledLogprob = out.logprob;
  return out;
}

/** The draw itself, on checked params and key. */
function draw(
  owner: string,
  logits: unknown,
  p: ResolvedSamplingParams,
  seed: number,
  key: DrawKey,
  wants: Wants,
  where: string,
  ws: Workspace,
): TokenSample {
  const V = checkRow(owner, logits, p.vocabSize, where);
  const row = logits as LogitsRow;
  ws.ensure(row.length);
  const filtered = p.topK > 0 || p.topP < 1 || p.minP > 0;
  if (p.temperature === 1 && !filtered) {
    return drawPlain(owner, row, V, seed, key, wants, where, ws.w);
  }
  const x = ws.x;
  loadRow(owner, row, V, where, x);
  const rawZ = wants.raw || (wants.scaled && p.temperature === 0) ? normalizer(x, V) : null;
  if (p.temperature === 0) {
    const token = argmaxOf(x, V);
    const out: TokenSample = { token, logprob: 0 };
    if (rawZ && wants.raw) out.rawLogprob = logprobOf(x[token]!, rawZ);
    if (rawZ && wants.scaled) out.scaledLogprob = logprobOf(x[token]!, rawZ);
    return out;
  }
  const T = p.temperature;
  const shift = temperatureInPlace(x, V, T);
  // Without top-k/top-p/min-p the sampling distribution is the scaled one, and inverseCdf
  // computes its normaliser with the same max and the same sum in the same order: one pass over
  // the vocabulary saved, the same bits (checked by a test).
  const scaledZ = wants.scaled && filtered ? normalizer(x, V) : null;
  processInPlace(x, V, { ...p, temperature: 1 });

  let mx = -Infinity;
  for (let i = 0; i < V; i++) if (x[i]! > mx) mx = x[i]!;
  const { token, Z } = inverseCdf(x, V, mx, ws.w, seed, key);
  const out: TokenSample = { token, logprob: (x[token]! - mx) - Math.log(Z) };
  if (rawZ) out.rawLogprob = logprobOf(row[token]!, rawZ);
  if (scaledZ) {
    out.scaledLogprob = logprobOf(T === 1 ? row[token]! : (row[token]! - shift) / T, scaledZ);
  } else if (wants.scaled) {
    out.scaledLogprob = out.logprob;
  }
  return out;
}

/**
 * Greedy decoding: the index of the largest logit (the lowest index among ties), with
 * `logprob` 0 (the sampling distribution is a point mass) and, on request, its raw log-prob.
 * Padding beyond `vocabSize` is never chosen. Same as `sampleToken` with temperature 0.
 *
 * @example Usage
 * ```ts
 * import { greedy } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.deepEqual(greedy([1, 5, 5, 2]), { token: 1, logprob: 0 }); // tie: lowest index
 * assert.equal(greedy([1, 2, 9], { vocabSize: 2 }).token, 1); // index 2 is padding
 * const { rawLogprob } = greedy([0, 0], { rawLogprob: true });
 * assert.ok(Math.abs(rawLogprob! - Math.log(0.5)) < 1e-15);
 * ```
 */
export function greedy(
  logits: LogitsRow,
  options: { vocabSize?: number; rawLogprob?: boolean } = {},
): TokenSample {
  const owner = "greedy";
  if (typeof options !== "object" || options === null) {
    throw new TypeError(
      `${owner}: options must be {vocabSize?, rawLogprob?}, got ${show(options)}`,
    );
  }
  checkKnownFields(owner, "options", options, ["vocabSize", "rawLogprob"]);
  const p = resolveSamplingParams(
    options.vocabSize === undefined
      ? { temperature: 0 }
      : { temperature: 0, vocabSize: options.vocabSize },
    owner,
  );
  const wants = {
    raw: checkBoolean(owner, "rawLogprob", options.rawLogprob ?? false),
    scaled: false,
  };
  return draw(
    owner,
    logits,
    p,
    0,
    { step: 0, sequence: 0, position: 0 },
    wants,
    "logits",
    new Workspace(),
  );
}

/**
 * Samples one token from a logits row under `config` (seed and {@link SamplingParams}) at
 * `key`: temperature → top-k → top-p → min-p (or vLLM's order with `order: "vllm"`), then the
 * inverse CDF of `uniformAt(seed, [step, sequence, position, 0])`. Temperature 0 is greedy.
 * Returns the token and its log-probability under the sampling distribution.
 *
 * @example Usage
 * ```ts
 * import { sampleToken } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const logits = new Float32Array([2.0, 1.5, 0.3, -1.0, 9.9]); // index 4 is vocab padding
 * const config = { seed: 42, temperature: 0.7, topP: 0.9, vocabSize: 4 };
 * const s = sampleToken(logits, config, { step: 0, sequence: 3, position: 0 }, {
 *   rawLogprob: true,
 * });
 * assert.ok(s.token < 4);
 * assert.ok(s.logprob <= 0 && s.rawLogprob! <= 0);
 * // the same key gives the same draw, whatever was sampled before
 * assert.deepEqual(sampleToken(logits, config, { step: 0, sequence: 3, position: 0 }, {
 *   rawLogprob: true,
 * }), s);
 * ```
 */
export function sampleToken(
  logits: LogitsRow,
  config: SamplerConfig,
  key: DrawKey,
  options?: SampleOptions,
): TokenSample {
  const owner = "sampleToken";
  const p = resolveSamplingParams(config, owner, ["seed"]);
  const seed = checkSeed(owner, config.seed, "config.seed");
  const k = checkKey(owner, key);
  const wants = checkOptions(owner, options);
  return draw(
    owner,
    logits,
    p,
    seed,
    k,
    wants,
    `logits (step ${k.step}, sequence ${k.sequence}, position ${k.position})`,
    new Workspace(),
  );
}

/** The keys of a batch of draws at one step. */
export interface BatchKey {
  /** The step, shared by the batch. */
  step: number;
  /** One position per row, or one position for every row. */
  positions: number | readonly number[];
  /** One sequence id per row (default: the row index `0, 1, …`). */
  sequences?: readonly number[];
}

/**
 * A token sampler with fixed params and seed: `sample(row, key)` for one row and
 * `sampleBatch(rows, { step, positions, sequences })` for a batch. Draws are keyed per row by
 * `(step, sequence, position)`, so a row's token does not depend on the batch it is in.
 * Reuses scratch buffers between calls (not safe to share across concurrent workers; make one
 * per worker, they agree).
 *
 * @example Usage
 * ```ts
 * import { TokenSampler } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const sampler = new TokenSampler({ seed: 7, temperature: 1, topK: 2 });
 * const rows = [[3, 2, 1], [0, 0, 5], [1, 1, 1]];
 * const batch = sampler.sampleBatch(rows, { step: 4, positions: 0, sequences: [10, 11, 12] });
 * // row 2 alone, with its own key, draws the same token
 * assert.deepEqual(sampler.sample(rows[2]!, { step: 4, sequence: 12, position: 0 }), batch[2]);
 * assert.ok(batch.every((s) => s.logprob <= 0));
 * ```
 */
export class TokenSampler {
  /** The validated params with defaults filled in. */
  readonly params: ResolvedSamplingParams;
  /** The RNG seed. */
  readonly seed: number;
  #ws = new Workspace();

  /** A sampler for `config` (seed plus {@link SamplingParams}); throws on invalid params. */
  constructor(config: SamplerConfig) {
    this.params = resolveSamplingParams(config, "TokenSampler", ["seed"]);
    this.seed = checkSeed("TokenSampler", config.seed, "config.seed");
  }

  /** Samples one row at `key` (see {@link sampleToken}). */
  sample(logits: LogitsRow, key: DrawKey, options?: SampleOptions): TokenSample {
    const owner = "TokenSampler.sample";
    const k = checkKey(owner, key);
    const wants = checkOptions(owner, options);
    return draw(
      owner,
      logits,
      this.params,
      this.seed,
      k,
      wants,
      `logits (step ${k.step}, sequence ${k.sequence}, position ${k.position})`,
      this.#ws,
    );
  }

  /**
   * Samples every row of a batch; row `b` is keyed by `(step, sequences[b], positions[b])`.
   * Errors name the row, e.g. `logits row 2 (sequence 12, position 0) index 5 is NaN`.
   */
  sampleBatch(
    rows: readonly LogitsRow[],
    key: BatchKey,
    options?: SampleOptions,
  ): TokenSample[] {
    const owner = "TokenSampler.sampleBatch";
    if (!Array.isArray(rows)) {
      throw new TypeError(`${owner}: rows must be an array of logits rows, got ${show(rows)}`);
    }
    if (typeof key !== "object" || key === null) {
      throw new TypeError(
        `${owner}: key must be {step, positions, sequences?}, got ${show(key)}`,
      );
    }
    const B = rows.length;
    const step = checkKeyPart(owner, "key.step", key.step);
    const positions = key.positions;
    if (isArrayLike(positions) && positions.length !== B) {
      throw new RangeError(
        `${owner}: key.positions has ${positions.length} entries but there are ${B} rows; give one per row or a single number`,
      );
    }
    const sequences = key.sequences;
    if (sequences !== undefined && (!isArrayLike(sequences) || sequences.length !== B)) {
      throw new RangeError(
        `${owner}: key.sequences must have one id per row (${B}), got ${show(sequences)}`,
      );
    }
    const wants = checkOptions(owner, options);
    const out: TokenSample[] = [];
    for (let b = 0; b < B; b++) {
      const sequence = checkKeyPart(owner, `key.sequences[${b}]`, sequences ? sequences[b] : b);
      const position = checkKeyPart(
        owner,
        typeof positions === "number" ? "key.positions" : `key.positions[${b}]`,
        typeof positions === "number" ? positions : (positions as readonly number[])[b],
      );
      out.push(
        draw(
          owner,
          rows[b],
          this.params,
          this.seed,
          { step, sequence, position },
          wants,
          `logits row ${b} (sequence ${sequence}, position ${position})`,
          this.#ws,
        ),
      );
    }
    return out;
  }
}
