/**
 * Logits processing for the token samplers: temperature, top-k, top-p (nucleus) and min-p over
 * one row of logits (one entry per vocabulary token), vocabulary-padding masks, and the
 * log-probabilities a trainer needs to agree with the sampler.
 *
 * Design: every stage maps logits to logits, writing `-Infinity` for the tokens it removes, and
 * the sampling distribution is `softmax` of the final row, i.e. renormalised over the tokens that
 * survive every stage. The stages run in one fixed, named order ({@link SAMPLING_ORDERS}):
 *
 * - `"hf"` (default): temperature → top-k → top-p → min-p, the order of Hugging Face
 *   `generate` (its `TemperatureLogitsWarper`, `TopKLogitsWarper`, `TopPLogitsWarper`,
 *   `MinPLogitsWarper`).
 * - `"vllm"`: temperature → min-p → top-k → top-p, the order of vLLM's V1 sampler (min-p runs
 *   as an argmax-invariant logits processor before its fused top-k/top-p).
 *
 * The two orders give the same distribution unless both top-p and min-p are active: top-k and
 * min-p keep "every token whose logit is at least a threshold" and commute with each other and
 * with renormalisation, but top-p measures mass after renormalisation, so it sees a different
 * distribution depending on whether min-p ran first.
 *
 * Three log-probabilities of a token `t` are defined (vLLM's `logprobs_mode` names in
 * parentheses):
 *
 * - **sampling** (`processed_logprobs`): `log q(t)` under the distribution the token was drawn
 *   from: temperature-scaled, filtered and renormalised over the surviving tokens; `-Infinity`
 *   off the support. With temperature 0 (greedy) `q` is a point mass and the argmax gets 0.
 * - **raw** (`raw_logprobs`): `log softmax(logits)[t]`: unscaled, unfiltered.
 * - **scaled**: `log softmax(logits / T)[t]`: temperature only, unfiltered. This is what TRL's
 *   GRPO trainer and veRL's actor recompute, so it is the one to compare against them; the
 *   sampling log-prob differs from it by exactly `−log S`, `S` the scaled mass that survived the
 *   filters (huggingface/trl#6789).
 *
 * Vocabulary padding: with `vocabSize < row length` the entries from `vocabSize` on are the
 * embedding's padding rows; they are treated as `-Infinity` in every one of the three (vLLM
 * likewise trims logits to the tokenizer's vocabulary before softmax), they are never read
 * (so they may hold anything, NaN included), and they are never sampled.
 *
 * Arithmetic is float64 throughout (rows may be `Float32Array`, `Float64Array` or `number[]`);
 * every softmax is shifted by the row maximum, so logits of any magnitude are safe. A NaN or
 * `+Infinity` logit inside the vocabulary is an error naming the row and the index; `-Infinity`
 * marks a token as impossible.
 *
 * @module
 */

import { checkChoice, checkKnownFields, checkNumber, isArrayLike, show } from "../_args.ts";

/** One row of logits: one entry per vocabulary token (plus optional padding). */
export type LogitsRow = ArrayLike<number>;

/** The name of a processing stage. */
export type SamplingStage = "temperature" | "topK" | "topP" | "minP";

/** The order in which the stages run: `"hf"` (default) or `"vllm"`. */
export type SamplingOrder = "hf" | "vllm";

/**
 * The stage order of each {@link SamplingOrder}: `hf` is Hugging Face `generate`'s,
 * `vllm` is vLLM V1's. Only the relative order of top-p and min-p changes the result.
 *
 * @example Usage
 * ```ts
 * import { SAMPLING_ORDERS } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.deepEqual(SAMPLING_ORDERS.hf, ["temperature", "topK", "topP", "minP"]);
 * assert.deepEqual(SAMPLING_ORDERS.vllm, ["temperature", "minP", "topK", "topP"]);
 * ```
 */
export const SAMPLING_ORDERS: Readonly<Record<SamplingOrder, readonly SamplingStage[]>> = Object
  .freeze({
    hf: Object.freeze(["temperature", "topK", "topP", "minP"] as const),
    vllm: Object.freeze(["temperature", "minP", "topK", "topP"] as const),
  });

/** Sampling parameters (every field optional; the defaults sample from `softmax(logits)`). */
export interface SamplingParams {
  /**
   * Divides the logits (default 1). `0` means greedy: the argmax (lowest index on ties), whose
   * sampling log-prob is 0. Must be ≥ 0 and finite. (vLLM also treats `T < 1e-5` as greedy; here
   * every positive temperature is applied exactly.)
   */
  temperature?: number;
  /**
   * Keeps the tokens whose logit is at least the k-th largest (ties at the threshold are all
   * kept, as in HF and vLLM). `0` or `-1` (default 0) turns it off, as do values ≥ the number
   * of possible tokens.
   */
  topK?: number;
  /**
   * Nucleus: ranks the tokens by logit (lower index first on ties) and keeps each token
   * whose higher-ranked tokens hold less than `topP` of the mass, i.e. the smallest prefix
   * reaching `topP` (HF/vLLM: drop where the ascending cumulative sum is ≤ 1 − p; the top token
   * always stays). In (0, 1]; default 1 (off).
   */
  topP?: number;
  /**
   * Keeps the tokens with `p_i ≥ minP · p_max` (HF `MinPLogitsWarper`, vLLM `min_p`). In
   * [0, 1]; default 0 (off).
   */
  minP?: number;
  /**
   * The tokenizer's vocabulary size when the row is longer (padded embedding): entries from
   * `vocabSize` on are never read and never sampled. Default: the row length.
   */
  vocabSize?: number;
  /** The stage order (default `"hf"`); see {@link SAMPLING_ORDERS}. */
  order?: SamplingOrder;
}

/** {@link SamplingParams} with every default filled in. */
export interface ResolvedSamplingParams {
  /** ≥ 0; 0 is greedy. */
  temperature: number;
  /** 0 when off. */
  topK: number;
  /** 1 when off. */
  topP: number;
  /** 0 when off. */
  minP: number;
  /** `undefined`: the row length. */
  vocabSize: number | undefined;
  /** The stage order. */
  order: SamplingOrder;
}

const PARAM_FIELDS = ["temperature", "topK", "topP", "minP", "vocabSize", "order"] as const;

/**
 * Validates {@link SamplingParams} and fills in the defaults. `extraFields` are other fields
 * the caller's config may carry (e.g. `seed`).
 *
 * @example Usage
 * ```ts
 * import { resolveSamplingParams } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.deepEqual(resolveSamplingParams({ topP: 0.9 }), {
 *   temperature: 1, topK: 0, topP: 0.9, minP: 0, vocabSize: undefined, order: "hf",
 * });
 * assert.throws(() => resolveSamplingParams({ topP: 1.5 }), /topP must be/);
 * ```
 */
export function resolveSamplingParams(
  params: SamplingParams = {},
  owner = "resolveSamplingParams",
  extraFields: readonly string[] = [],
): ResolvedSamplingParams {
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    throw new TypeError(
      `${owner}: params must be an object {temperature?, topK?, topP?, minP?, vocabSize?, order?}, got ${
        show(params)
      }`,
    );
  }
  checkKnownFields(owner, "params", params, [...PARAM_FIELDS, ...extraFields]);
  const temperature = checkNumber(owner, "temperature", params.temperature ?? 1, { min: 0 });
  let topK = checkNumber(owner, "topK", params.topK ?? 0, { min: -1, integer: true });
  if (topK === -1) topK = 0;
  const topP = checkNumber(owner, "topP", params.topP ?? 1, {
    min: 0,
    minExclusive: true,
    max: 1,
  });
  const minP = checkNumber(owner, "minP", params.minP ?? 0, { min: 0, max: 1 });
  const vocabSize = params.vocabSize === undefined
    ? undefined
    : checkNumber(owner, "vocabSize", params.vocabSize, { min: 1, integer: true });
  const order = checkChoice(owner, "order", params.order ?? "hf", ["hf", "vllm"] as const);
  return { temperature, topK, topP, minP, vocabSize, order };
}

/**
 * Reads a row into float64, checking it: returns the vocabulary size `V` in use. Entries ≥ V
 * are never read. `where` names the row in errors, e.g. `logits row 3 (sequence 3, position 0)`.
 */
export function checkRow(
  owner: string,
  logits: unknown,
  vocabSize: number | undefined,
  where: string,
): number {
  if (!isArrayLike(logits)) {
    throw new TypeError(
      `${owner}: ${where} must be a Float32Array, Float64Array or number[] of logits, got ${
        show(logits)
      }`,
    );
  }
  if (logits.length === 0) {
    throw new RangeError(`${owner}: ${where} is empty; a row needs one logit per vocabulary token`);
  }
  const V = vocabSize ?? logits.length;
  if (V > logits.length) {
    throw new RangeError(
      `${owner}: vocabSize is ${V} but ${where} has only ${logits.length} entries; vocabSize must be at most the row length`,
    );
  }
  return V;
}

function badLogit(owner: string, where: string, i: number, v: unknown): RangeError {
  return new RangeError(
    `${owner}: ${where} index ${i} is ${
      show(v)
    }; logits must be finite numbers or -Infinity (an impossible token)`,
  );
}

function noFiniteLogit(owner: string, where: string, V: number): RangeError {
  return new RangeError(
    `${owner}: ${where} has no finite logit among its first ${V} entries (the vocabulary); at least one token must be possible`,
  );
}

/** Copies `logits[0, V)` into `out` (length = row length, padding −∞), checking each value. */
export function loadRow(
  owner: string,
  logits: LogitsRow,
  V: number,
  where: string,
  out: Float64Array,
): number {
  let finite = 0;
  for (let i = 0; i < V; i++) {
    const v = logits[i];
    if (typeof v !== "number" || v !== v || v === Infinity) throw badLogit(owner, where, i, v);
    out[i] = v;
    if (v !== -Infinity) finite++;
  }
  out.fill(-Infinity, V);
  if (finite === 0) throw noFiniteLogit(owner, where, V);
  return finite;
}

/**
 * The largest of `logits[0, V)`, checking each value as {@link loadRow} does (same errors),
 * without copying the row: the sampler's fast path for plain softmax sampling.
 */
export function checkedMax(owner: string, logits: LogitsRow, V: number, where: string): number {
  let m = -Infinity;
  let finite = false;
  for (let i = 0; i < V; i++) {
    const v = logits[i];
    if (typeof v !== "number" || v !== v || v === Infinity) throw badLogit(owner, where, i, v);
    if (v > m) m = v;
    if (v !== -Infinity) finite = true;
  }
  if (!finite) throw noFiniteLogit(owner, where, V);
  return m;
}

/** Index of the largest entry of `x[0, V)`, lowest index on ties (x has a finite entry). */
export function argmaxOf(x: ArrayLike<number>, V: number): number {
  let best = -1;
  let bestValue = -Infinity;
  for (let i = 0; i < V; i++) {
    const v = x[i]!;
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  }
  return best;
}

/** Max of the entries of `x[0, V)` (−∞ if none is finite). */
function maxOf(x: ArrayLike<number>, V: number): number {
  let m = -Infinity;
  for (let i = 0; i < V; i++) if (x[i]! > m) m = x[i]!;
  return m;
}

/** The value at ascending rank `kth` of `a` (reorders `a`; Hoare quickselect). */
function selectAscending(a: Float64Array, kth: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >>> 1;
    const x = a[lo]!, y = a[mid]!, z = a[hi]!;
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (kth <= j) hi = j;
    else if (kth >= i) lo = i;
    else return a[kth]!;
  }
  return a[lo]!;
}

/**
 * Temperature in place: `x / T` exactly as HF and vLLM divide (in float64). Only if that would
 * overflow (a tiny T with large logits) is the row shifted by its max first, `(x − max) / T`,
 * which softmax cannot tell apart. Returns the shift used (0, or the max).
 */
export function temperatureInPlace(x: Float64Array, V: number, T: number): number {
  if (T === 1) return 0;
  const m = maxOf(x, V);
  const shift = Number.isFinite(m / T) ? 0 : m;
  for (let i = 0; i < V; i++) x[i] = (x[i]! - shift) / T;
  return shift;
}

/** Top-k in place: keeps x ≥ the k-th largest finite value. */
function topKInPlace(x: Float64Array, V: number, k: number): void {
  if (k <= 0) return;
  let n = 0;
  for (let i = 0; i < V; i++) if (x[i]! !== -Infinity) n++;
  if (k >= n) return;
  const vals = new Float64Array(n);
  let j = 0;
  for (let i = 0; i < V; i++) if (x[i]! !== -Infinity) vals[j++] = x[i]!;
  const threshold = selectAscending(vals, n - k);
  for (let i = 0; i < V; i++) if (x[i]! < threshold) x[i] = -Infinity;
}

/** Top-p in place (see {@link SamplingParams.topP}). */
function topPInPlace(x: Float64Array, V: number, p: number): void {
  if (p >= 1) return;
  const m = maxOf(x, V);
  const w = new Float64Array(V);
  let Z = 0;
  let n = 0;
  for (let i = 0; i < V; i++) {
    if (x[i]! === -Infinity) continue;
    const e = Math.exp(x[i]! - m);
    w[i] = e;
    Z += e;
    n++;
  }
  // A token with probability below (1 − p)/n is always dropped: it and every token ranked after
  // it hold less than n·(1 − p)/n = 1 − p. Only the others need sorting (with a safety margin).
  const cut = 1 - p >= 1e-6 ? ((1 - p) * Z / n) * (1 - 1e-6) : 0;
  const candidates: number[] = [];
  for (let i = 0; i < V; i++) {
    if (x[i]! !== -Infinity && w[i]! >= cut) candidates.push(i);
  }
  candidates.sort((a, b) => x[b]! - x[a]! || a - b);
  const keep = new Uint8Array(V);
  const target = p * Z;
  let before = 0;
  for (const i of candidates) {
    if (before >= target) break;
    keep[i] = 1;
    before += w[i]!;
  }
  for (let i = 0; i < V; i++) if (!keep[i]) x[i] = -Infinity;
}

/** Min-p in place: drops `exp(x − max) < minP`. */
function minPInPlace(x: Float64Array, V: number, minP: number): void {
  if (minP <= 0) return;
  const m = maxOf(x, V);
  for (let i = 0; i < V; i++) {
    if (x[i]! !== -Infinity && Math.exp(x[i]! - m) < minP) x[i] = -Infinity;
  }
}

/**
 * Runs the non-greedy stages on a loaded row, in place, in the params' order. The result is the
 * sampling distribution's logits up to an additive constant (`-Infinity` off the support).
 */
export function processInPlace(x: Float64Array, V: number, p: ResolvedSamplingParams): void {
  for (const stage of SAMPLING_ORDERS[p.order]) {
    if (stage === "temperature") temperatureInPlace(x, V, p.temperature);
    else if (stage === "topK") topKInPlace(x, V, p.topK);
    else if (stage === "topP") topPInPlace(x, V, p.topP);
    else minPInPlace(x, V, p.minP);
  }
}

/** The softmax normaliser of `x[0, V)`: its max and `log Σ exp(x − max)` (x has a finite entry). */
export interface Normalizer {
  /** The largest entry. */
  max: number;
  /** `log Σ exp(x_i − max)`, in [0, log V]. */
  logSum: number;
}

/** The max-shifted normaliser of `x[0, V)`; `(x_i − max) − logSum` is `log softmax(x)_i`. */
export function normalizer(x: ArrayLike<number>, V: number): Normalizer {
  const m = maxOf(x, V);
  let s = 0;
  for (let i = 0; i < V; i++) if (x[i]! !== -Infinity) s += Math.exp(x[i]! - m);
  return { max: m, logSum: Math.log(s) };
}

/** `log softmax(x)_i` for a value `v = x_i` under a {@link Normalizer}. */
export function logprobOf(v: number, z: Normalizer): number {
  return v === -Infinity ? -Infinity : (v - z.max) - z.logSum;
}

function stageInput(owner: string, logits: unknown): Float64Array {
  const V = checkRow(owner, logits, undefined, "logits");
  const x = new Float64Array(V);
  loadRow(owner, logits as LogitsRow, V, "logits", x);
  return x;
}

/**
 * The temperature stage alone: `logits / T` for `T > 0` (a new `Float64Array`; `-Infinity`
 * stays). Temperature changes the distribution but never the argmax.
 *
 * @example Usage
 * ```ts
 * import { applyTemperature } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.deepEqual([...applyTemperature([2, 1, -Infinity], 0.5)], [4, 2, -Infinity]);
 * ```
 */
export function applyTemperature(logits: LogitsRow, temperature: number): Float64Array {
  const owner = "applyTemperature";
  checkNumber(owner, "temperature", temperature, { min: 0, minExclusive: true });
  const x = stageInput(owner, logits);
  for (let i = 0; i < x.length; i++) x[i] = x[i]! / temperature;
  return x;
}

/**
 * The top-k stage alone: `-Infinity` for every token whose logit is below the k-th largest
 * (ties at the threshold are kept, so more than `k` tokens may survive). `k ≤ 0` keeps all.
 *
 * @example Usage
 * ```ts
 * import { applyTopK } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.deepEqual([...applyTopK([1, 3, 2, 3], 2)], [-Infinity, 3, -Infinity, 3]);
 * assert.deepEqual([...applyTopK([1, 3, 2, 2], 2)], [-Infinity, 3, 2, 2]); // tie at the threshold
 * ```
 */
export function applyTopK(logits: LogitsRow, k: number): Float64Array {
  const owner = "applyTopK";
  checkNumber(owner, "k", k, { min: -1, integer: true });
  const x = stageInput(owner, logits);
  topKInPlace(x, x.length, k);
  return x;
}

/**
 * The top-p (nucleus) stage alone: keeps the smallest set of most probable tokens whose
 * probability under `softmax(logits)` reaches `p` (ranked by logit, as HF and vLLM sort;
 * lower index first among equal logits) and
 * writes `-Infinity` elsewhere; the survivors' logits are unchanged, so `softmax` of the result
 * is the renormalised nucleus.
 *
 * @example Usage
 * ```ts
 * import { applyTopP } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const logits = [0.5, 0.3, 0.2].map(Math.log);
 * // 0.5 < 0.75, 0.5 + 0.3 ≥ 0.75: the first two survive
 * assert.deepEqual([...applyTopP(logits, 0.75)].map(Number.isFinite), [true, true, false]);
 * ```
 */
export function applyTopP(logits: LogitsRow, p: number): Float64Array {
  const owner = "applyTopP";
  checkNumber(owner, "p", p, { min: 0, minExclusive: true, max: 1 });
  const x = stageInput(owner, logits);
  topPInPlace(x, x.length, p);
  return x;
}

/**
 * The min-p stage alone: `-Infinity` for every token with `p_i < minP · p_max` (equivalently
 * `logit_i < logit_max + log minP`).
 *
 * @example Usage
 * ```ts
 * import { applyMinP } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const logits = [0.6, 0.3, 0.1].map(Math.log); // minP 0.2: threshold 0.12
 * assert.deepEqual([...applyMinP(logits, 0.2)].map(Number.isFinite), [true, true, false]);
 * ```
 */
export function applyMinP(logits: LogitsRow, minP: number): Float64Array {
  const owner = "applyMinP";
  checkNumber(owner, "minP", minP, { min: 0, max: 1 });
  const x = stageInput(owner, logits);
  minPInPlace(x, x.length, minP);
  return x;
}

/** Options of {@link logSoftmax}. */
export interface LogSoftmaxOptions {
  /** Divides the logits first (default 1); must be > 0. */
  temperature?: number;
  /** Entries from here on are padding: `-Infinity` in the output. Default: the row length. */
  vocabSize?: number;
}

/**
 * `log softmax(logits / T)` over the vocabulary, as a new `Float64Array` of the row's length
 * (padding entries `-Infinity`). With `temperature` 1 this is vLLM's `raw_logprobs`; with the
 * sampling temperature it is the full-vocabulary log-prob that TRL and veRL trainers recompute.
 *
 * @example Usage
 * ```ts
 * import { logSoftmax } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const lp = logSoftmax([1000, 1000, 7], { vocabSize: 2 }); // max-shifted: no overflow
 * assert.ok(Math.abs(lp[0]! - Math.log(0.5)) < 1e-15);
 * assert.equal(lp[2], -Infinity); // padding
 * ```
 */
export function logSoftmax(logits: LogitsRow, options: LogSoftmaxOptions = {}): Float64Array {
  const owner = "logSoftmax";
  checkKnownFields(owner, "options", options, ["temperature", "vocabSize"]);
  const T = checkNumber(owner, "temperature", options.temperature ?? 1, {
    min: 0,
    minExclusive: true,
  });
  const vocabSize = options.vocabSize === undefined
    ? undefined
    : checkNumber(owner, "vocabSize", options.vocabSize, { min: 1, integer: true });
  const V = checkRow(owner, logits, vocabSize, "logits");
  const x = new Float64Array(logits.length);
  loadRow(owner, logits, V, "logits", x);
  temperatureInPlace(x, V, T);
  const z = normalizer(x, V);
  for (let i = 0; i < V; i++) x[i] = logprobOf(x[i]!, z);
  return x;
}

/**
 * The sampling distribution's log-probabilities over the whole row (vLLM's
 * `processed_logprobs`): temperature, top-k, top-p and min-p in the params' order, renormalised
 * over the survivors; `-Infinity` off the support and on padding. With temperature 0 it is the
 * greedy point mass: 0 at the argmax (lowest index on ties), `-Infinity` elsewhere.
 * `Math.exp` of it sums to 1 and is exactly what `sampleToken` draws from. A sampler config's
 * `seed` field is accepted and ignored, so the rollout's config can be passed as is.
 *
 * @example Usage
 * ```ts
 * import { samplingLogprobs } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const lp = samplingLogprobs([0.5, 0.3, 0.2].map(Math.log), { topP: 0.75 });
 * assert.ok(Math.abs(lp[0]! - Math.log(0.5 / 0.8)) < 1e-12); // renormalised over {0, 1}
 * assert.equal(lp[2], -Infinity);
 * ```
 */
export function samplingLogprobs(logits: LogitsRow, params: SamplingParams = {}): Float64Array {
  const owner = "samplingLogprobs";
  const p = resolveSamplingParams(params, owner, ["seed"]);
  const V = checkRow(owner, logits, p.vocabSize, "logits");
  const x = new Float64Array(logits.length);
  loadRow(owner, logits, V, "logits", x);
  if (p.temperature === 0) {
    const t = argmaxOf(x, V);
    x.fill(-Infinity);
    x[t] = 0;
    return x;
  }
  processInPlace(x, V, p);
  const z = normalizer(x, V);
  for (let i = 0; i < V; i++) x[i] = logprobOf(x[i]!, z);
  return x;
}

/** The three log-probabilities of one token (see the module documentation). */
export interface TokenLogprobs {
  /** `log q(token)` under the sampling distribution (vLLM `processed_logprobs`). */
  logprob: number;
  /** `log softmax(logits)[token]` (vLLM `raw_logprobs`). */
  rawLogprob: number;
  /** `log softmax(logits / T)[token]`, no filters (the trainer's usual recomputation). */
  scaledLogprob: number;
}

/**
 * All three log-probabilities of a given token under the params: what a trainer computes to
 * check or reproduce the rollout's log-probs. A token outside the support gets `logprob`
 * `-Infinity` (not an error); a token index outside `[0, vocabSize)` is an error. With
 * temperature 0, `scaledLogprob` equals `rawLogprob` and `logprob` is 0 for the argmax. The
 * numbers are bit-identical to those `sampleToken` reports; a `seed` field is ignored.
 *
 * @example Usage
 * ```ts
 * import { tokenLogprobs } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const logits = [2, 1, 0];
 * const lp = tokenLogprobs(logits, 1, { temperature: 0.5, topK: 2 });
 * // scaled: [4, 2, 0]; top-2 keeps {0, 1}: q(1) = e^2 / (e^4 + e^2)
 * assert.ok(Math.abs(lp.logprob - (2 - Math.log(Math.exp(4) + Math.exp(2)))) < 1e-12);
 * assert.ok(Math.abs(lp.scaledLogprob - (2 - Math.log(Math.exp(4) + Math.exp(2) + 1))) < 1e-12);
 * assert.ok(lp.logprob > lp.scaledLogprob); // filtering renormalises: log q = scaled − log S
 * ```
 */
export function tokenLogprobs(
  logits: LogitsRow,
  token: number,
  params: SamplingParams = {},
): TokenLogprobs {
  const owner = "tokenLogprobs";
  const p = resolveSamplingParams(params, owner, ["seed"]);
  const V = checkRow(owner, logits, p.vocabSize, "logits");
  checkNumber(owner, "token", token, { min: 0, max: V - 1, integer: true });
  const x = new Float64Array(logits.length);
  loadRow(owner, logits, V, "logits", x);
  const rawLogprob = logprobOf(x[token]!, normalizer(x, V));
  if (p.temperature === 0) {
    return {
      logprob: argmaxOf(x, V) === token ? 0 : -Infinity,
      rawLogprob,
      scaledLogprob: rawLogprob,
    };
  }
  temperatureInPlace(x, V, p.temperature);
  const scaledLogprob = logprobOf(x[token]!, normalizer(x, V));
  processInPlace(x, V, { ...p, temperature: 1 });
  const logprob = logprobOf(x[token]!, normalizer(x, V));
  return { logprob, rawLogprob, scaledLogprob };
}

/**
 * The entropy (nats) of `softmax(logits / T)` over the vocabulary, e.g. the per-token policy
 * entropy fed to an `EntropyTemperatureController`. Zero-probability tokens contribute 0.
 *
 * @example Usage
 * ```ts
 * import { logitsEntropy } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.ok(Math.abs(logitsEntropy([0, 0, 0, 0]) - Math.log(4)) < 1e-15);
 * assert.ok(logitsEntropy([3, 1, 0], { temperature: 0.5 }) < logitsEntropy([3, 1, 0]));
 * ```
 */
export function logitsEntropy(logits: LogitsRow, options: LogSoftmaxOptions = {}): number {
  const lp = logSoftmax(logits, options);
  let h = 0;
  for (let i = 0; i < lp.length; i++) {
    const l = lp[i]!;
    if (l !== -Infinity) h -= Math.exp(l) * l;
  }
  return Math.max(0, h);
}
