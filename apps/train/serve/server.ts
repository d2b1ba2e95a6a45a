/**
 * An OpenAI-compatible HTTP server for a policy (`deno task serve`): `GET /v1/models`,
 * `POST /v1/completions` and `POST /v1/chat/completions`, streaming or not, so that TypeScript
 * agent frameworks, a generative-judge reward or a rollout can drive the policy with the
 * official `openai` client.
 *
 * Design decisions:
 * - **One generation at a time**: requests wait in a FIFO queue and each runs as one batched
 *   {@link generate} call (its `n` choices, and every prompt of a multi-prompt completions
 *   request, are rows of one batch). Requests are not batched with each other; the server stays
 *   responsive while generating (it yields to the event loop between decode steps), so
 *   `/v1/models`, errors and queued streams are answered meanwhile. A stream whose client goes
 *   away stops generating at the next step; a non-streamed request runs to its end.
 * - **Seeded, reproducible draws**: a request's tokens are drawn with the sampler seed `seed`
 *   (random when absent) and the draw key `(0, choiceIndex, position)`, so the same request with
 *   the same seed gives the same tokens, streamed or not, alone or with other choices
 *   (`choiceIndex = promptIndex · n + i`).
 * - **Log-probabilities are `log softmax(logits / T)`** of the tokens (the raw
 *   `log softmax(logits)` when `temperature` is 0), before top-p / top-k / min-p filtering:
 *   what `scoreCompletions(model, …, { temperature: T })` recomputes on the learner, the TRL /
 *   veRL convention. `top_logprobs` come from the same distribution. When the model's
 *   embedding is padded past the tokenizer's vocabulary (Qwen), the padded ids are never
 *   sampled and the distribution is over the tokenizer's ids only, so the numbers differ from
 *   the learner's by the (tiny) log of the padded ids' mass.
 * - **Decode loop** (`decodeLoop: "device"`, `deno task serve --decode-loop device`, WebGPU): a
 *   request without `top_logprobs` (which need every step's logits) decodes on the GPU (top-k /
 *   top-p / min-p and images too), many steps per host round trip (`generate`'s
 *   `decodeLoop`); its tokens are the host loop's up to f32 rounding and its log-probs those of
 *   the device's kernels. Any other request runs on the host loop. Streamed chunks then arrive a
 *   chunk of steps at a time.
 * - **Extra fields for RL**: every choice (and every streamed chunk's choice) has `token_ids`,
 *   the sampled token ids, including the EOS or stop-string-completing token that ended the
 *   choice, so a rollout driven through the server trains on exactly the sampled tokens; a
 *   non-streamed choice also has `prompt_token_ids`, the prompt as the model saw it. `text` /
 *   `content` is cut before a stop string (OpenAI's behaviour), and drops special tokens, so
 *   `decode(token_ids, { skipSpecialTokens: true })` equals it unless a stop string was cut.
 *   With `logprobs`, there is one entry per token of `token_ids`.
 * - **Chat prompts** follow `promptFormat` of the train app: a tokenizer with a chat template
 *   renders `messages` with it (`add_generation_prompt`), encoded without added special tokens;
 *   the built-in char-level models (`compact` format: they were pre-trained on `<bos>7*8=`, not
 *   on chat) and Hugging Face tokenizers without a template (`plain`) take the **content of the
 *   last user message** as the prompt, encoded with the tokenizer's special tokens (so
 *   `<bos>` + content for the tiny model). A completions prompt string is encoded with the
 *   tokenizer's special tokens (as vLLM does); a token-id array is used as it is.
 * - **Images** (a vision-language policy, e.g. `builtin:tiny-vl`): chat messages may carry
 *   OpenAI `image_url` parts whose `url` is a base64 PNG or JPEG data URL; the server fetches
 *   nothing, so an http(s) URL is a 400. The prompt is written as in training (`prompt.ts`):
 *   each image of the last user message as `<|vision_start|><|image_pad|><|vision_end|>` before
 *   its text (compact and plain), or every message's image parts passed to the chat template as
 *   `{type: "image"}` (chat); each `<|image_pad|>` is then repeated for the image's merged
 *   patches, and `generate` runs with the model's forward hook, every row of the batch (each of
 *   the `n` choices) seeing its request's images. An image is measured from its data URL and
 *   header (bytes, pixels, tokens: so the context check comes before any pixel is decoded),
 *   then decoded and processed with the checkpoint's `preprocessor_config.json`. A text-only
 *   policy refuses an image part with a 400 naming it; image tokens typed as text, or in a
 *   completions prompt (which carries no pixels), are a 400 too, never a failed forward pass.
 * - **Errors** are OpenAI-shaped, `{ error: { message, type, param, code } }`: 400 for a bad
 *   request (the message names the field, the value and the fix), 404 for an unknown route,
 *   405 for a wrong method, 500 for a failure while generating; none of them stops the server.
 *   Options this server cannot honour (`echo`, `suffix`, penalties, `logit_bias`, `tools`,
 *   `best_of` ≠ `n`, a JSON `response_format`) are refused with a 400 rather than ignored;
 *   unknown fields (`user`, `metadata`, …) are ignored.
 * - **Defaults**: `max_tokens` 16 for completions (OpenAI's), the rest of the context window
 *   for chat; `temperature` 1, `top_p` 1; vLLM's `top_k` and `min_p` are accepted too. A
 *   prompt plus `max_tokens` longer than the model's context window (`max_position_embeddings`)
 *   is a 400. A `temperature` above 0 but below {@link GREEDY_BELOW_TEMPERATURE} (1e-5, vLLM's
 *   `_SAMPLING_EPS`) is greedy, exactly as 0: dividing the logits by a denormal temperature
 *   overflows to ±Infinity, and the log-probs would come back as NaN (`null` in the JSON). There
 *   is no authentication: the server binds to 127.0.0.1 by default.
 * - **Limits against hostile or careless input** ({@link ServerLimits}, each a `deno task serve`
 *   flag): a request body over `maxBodyBytes` (1 MiB) is a 413, answered from its
 *   `Content-Length` before anything is read, or as soon as a streamed (chunked) body passes the
 *   limit, so a huge body is never buffered nor tokenized; more than `maxPrompts` prompts or
 *   more than `maxCompletions` choices (`n` × prompts) in one request is a 400 naming the field,
 *   the value and the limit, checked before any prompt is tokenized; at most {@link MAX_STOP}
 *   stop strings (each is searched for at every step of every choice); and when `maxQueue`
 *   generation requests are already waiting or running, a new one is refused at once with a 429
 *   (`Retry-After: 1`; the `openai` client retries it) instead of piling up in memory (checked
 *   before a request's images are decoded too). A chat request may carry at most `maxImages`
 *   images, each of at most `maxImageBytes` encoded bytes and `maxImagePixels` pixels, checked
 *   from the data URL's length and the image's header before anything is decoded.
 *
 * @module
 */

import {
  decodeImage,
  ImageDecodeError,
  MAX_IMAGE_PIXELS,
  parseDataUrl,
  processQwen2VLImages,
  qwen2VLImageGrid,
  type Qwen2VLOptions,
  readImageHeader,
} from "@rlvr/image";
import {
  type ChatContentPart,
  type ChatMessage,
  concatPixels,
  deviceDecodeProblem,
  expandImageTokens,
  type FinishReason,
  type ForwardHook,
  generate,
  type GenerateResult,
  type GenerateStep,
  imageInputs,
  type ProcessedPixels,
  type SamplerConfig,
  type Tokenizer,
  type VisionLanguageModel,
} from "@rlvr/policy";
import type { CausalLM } from "@rlvr/policy";
import { loadPolicy } from "../loop/policy.ts";
import { IMAGE_MARKERS, promptFormat } from "../loop/prompt.ts";

/**
 * A loaded policy as the server needs it: what `loadPolicy` returns satisfies it.
 *
 * @example Usage
 * ```ts
 * import type { ServedPolicy } from "./server.ts";
 * import { loadPolicy } from "../loop/policy.ts";
 * import assert from "node:assert/strict";
 * const policy: ServedPolicy = await loadPolicy("builtin:tiny");
 * assert.deepEqual(policy.eosTokenIds, [2]);
 * policy.model.dispose();
 * ```
 */
export interface ServedPolicy {
  /** The model. */
  model: CausalLM;
  /** Its tokenizer. */
  tokenizer: Tokenizer;
  /** Ids that end a generation. */
  eosTokenIds: readonly number[];
  /**
   * For a vision-language policy (what `loadPolicy` returns for a Qwen2-VL checkpoint such as
   * `builtin:tiny-vl`): its model, whose `lm` must be {@link ServedPolicy.model}, and its image
   * processor options. Null or absent for a text-only policy, which refuses images.
   */
  vision?: ServedVision | null;
}

/**
 * The vision side of a {@link ServedPolicy}: what chat requests with `image_url` parts need.
 *
 * @example Usage
 * ```ts
 * import type { ServedVision } from "./server.ts";
 * import { loadPolicy } from "../loop/policy.ts";
 * import assert from "node:assert/strict";
 * const policy = await loadPolicy("builtin:tiny-vl");
 * const vision: ServedVision = policy.vision!;
 * assert.equal(vision.model.lm, policy.model);
 * assert.equal(vision.processor.maxPixels, 56 * 56);
 * policy.model.dispose();
 * ```
 */
export interface ServedVision {
  /** The vision-language model; its decoder `lm` is the served policy's `model`. */
  model: VisionLanguageModel;
  /** The image processor options of the checkpoint (`preprocessor_config.json`). */
  processor: Qwen2VLOptions;
}

/**
 * Options of {@link startServer}.
 *
 * @example Usage
 * ```ts
 * import type { ServerOptions } from "./server.ts";
 * import assert from "node:assert/strict";
 * const opts: ServerOptions = { model: "builtin:tiny", port: 0 };
 * assert.equal(opts.port, 0);
 * ```
 */
export interface ServerOptions {
  /**
   * What `loadPolicy` loads: `builtin:tiny` (default), a training checkpoint folder
   * (`runs/<name>/checkpoints/step-N`) or a Hugging Face folder. Ignored when `policy` is given.
   */
  model?: string;
  /** An already loaded policy to serve instead of loading `model`; `close()` does not dispose it. */
  policy?: ServedPolicy;
  /** The model id of `/v1/models`, which requests must name; default `model` (or `"policy"`). */
  modelName?: string;
  /** TCP port, default 8000; 0 picks a free one (see {@link PolicyServer.url}). */
  port?: number;
  /** Interface to listen on, default `127.0.0.1`. */
  host?: string;
  /** Request-size and queue limits; each one left out takes its {@link SERVER_LIMITS} default. */
  limits?: Partial<ServerLimits>;
  /**
   * Where decode steps run (default `"host"`): `"device"` decodes the requests it can on the GPU
   * (see the module doc); refused at start when the policy cannot run there (not on WebGPU,
   * ...), with the reason.
   */
  decodeLoop?: "host" | "device";
}

/**
 * The limits that keep one request (or a flood of them) from hanging or exhausting the server;
 * see {@link SERVER_LIMITS} for the defaults and the module doc for how each is answered.
 *
 * @example Usage
 * ```ts
 * import type { ServerLimits } from "./server.ts";
 * import assert from "node:assert/strict";
 * const limits: ServerLimits = {
 *   maxBodyBytes: 1 << 20, maxPrompts: 1024, maxCompletions: 4096, maxQueue: 64,
 *   maxImages: 8, maxImageBytes: 8 << 20, maxImagePixels: 4096 * 4096,
 * };
 * assert.equal(limits.maxBodyBytes, 1048576);
 * ```
 */
export interface ServerLimits {
  /** Largest request body in bytes; a larger one is a 413 (`--max-body-bytes`). */
  maxBodyBytes: number;
  /** Most prompts in one completions request; more is a 400 naming `prompt` (`--max-prompts`). */
  maxPrompts: number;
  /**
   * Most choices one request may generate, `n` × prompts (each a row of the batch); more is a
   * 400 naming `n` (`--max-completions`).
   */
  maxCompletions: number;
  /**
   * Most generation requests waiting or running at once (the one running included); one more
   * is a 429 (`--max-queue`).
   */
  maxQueue: number;
  /**
   * Most images in one chat request (`image_url` parts of every message); more is a 400 naming
   * `messages`, before any image is decoded (`--max-images`).
   */
  maxImages: number;
  /**
   * Largest image, in encoded (PNG / JPEG) bytes, measured on its data URL before the base64 is
   * decoded; larger is a 400 naming the part (`--max-image-bytes`). The image's data URL also
   * counts toward `maxBodyBytes`.
   */
  maxImageBytes: number;
  /**
   * Most pixels (width × height) of one image, read from its header before its pixels are
   * decoded; more is a 400 naming the part (`--max-image-pixels`, at most `MAX_IMAGE_PIXELS` of
   * `@rlvr/image`).
   */
  maxImagePixels: number;
}

/**
 * The default {@link ServerLimits}: a 1 MiB body (about 250k tokens of text, far above any
 * context window this server runs), 1024 prompts and 4096 choices per request (e.g. 256 prompts
 * × `n` = 16), 64 requests in the queue, and 8 images per request of at most 8 MiB and
 * 4096 × 4096 pixels each (48 MiB of RGB once decoded). Larger images need a larger body too:
 * a data URL is 4/3 of the image's bytes.
 *
 * @example Usage
 * ```ts
 * import { SERVER_LIMITS } from "./server.ts";
 * import assert from "node:assert/strict";
 * assert.equal(SERVER_LIMITS.maxBodyBytes, 1024 * 1024);
 * assert.ok(SERVER_LIMITS.maxCompletions >= SERVER_LIMITS.maxPrompts);
 * assert.equal(SERVER_LIMITS.maxImages, 8);
 * ```
 */
export const SERVER_LIMITS: Readonly<ServerLimits> = Object.freeze({
  maxBodyBytes: 1024 * 1024,
  maxPrompts: 1024,
  maxCompletions: 4096,
  maxQueue: 64,
  maxImages: 8,
  maxImageBytes: 8 * 1024 * 1024,
  maxImagePixels: 4096 * 4096,
});

/**
 * A `temperature` above 0 and below this is served as greedy (temperature 0): the logits divided
 * by it would overflow to ±Infinity, and log-probs to NaN. The value is vLLM's `_SAMPLING_EPS`,
 * below which vLLM samples greedily too.
 *
 * @example Usage
 * ```ts
 * import { GREEDY_BELOW_TEMPERATURE } from "./server.ts";
 * import assert from "node:assert/strict";
 * assert.equal(GREEDY_BELOW_TEMPERATURE, 1e-5);
 * assert.equal(Number.isFinite(1 / 1e-320), false); // why: a denormal temperature overflows
 * ```
 */
export const GREEDY_BELOW_TEMPERATURE = 1e-5;

/**
 * Most stop strings per request (OpenAI allows 4): each one is searched for in every choice's
 * text at every decode step, so an unbounded list would stall the generation.
 *
 * @example Usage
 * ```ts
 * import { MAX_STOP } from "./server.ts";
 * import assert from "node:assert/strict";
 * assert.equal(MAX_STOP, 16);
 * ```
 */
export const MAX_STOP = 16;

/**
 * A running server (see {@link startServer}).
 *
 * @example Usage
 * ```ts
 * import { startServer } from "./server.ts";
 * import assert from "node:assert/strict";
 * const server = await startServer({ port: 0 });
 * assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
 * await server.close();
 * ```
 */
export interface PolicyServer {
  /** `http://host:port`, without a trailing slash; the OpenAI base URL is `url + "/v1"`. */
  url: string;
  /** The model id requests must name. */
  modelName: string;
  /** Whether the served policy reads images (`image_url` parts of chat messages). */
  vision: boolean;
  /** Stops listening, waits for the requests in flight, and disposes a model it loaded. */
  close(): Promise<void>;
}

/** An OpenAI-shaped error response, thrown by the request handlers. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type: string = status >= 500 ? "server_error" : "invalid_request_error",
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function show(v: unknown): string {
  if (v === undefined) return "undefined";
  try {
    const s = JSON.stringify(v) ?? String(v);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    // `String` of a deeply nested array overflows the stack too: name the type instead.
    try {
      return String(v).slice(0, 80);
    } catch {
      return Array.isArray(v) ? "[a deeply nested array]" : `[a ${typeof v}]`;
    }
  }
}

function errorBody(e: HttpError): string {
  return JSON.stringify({
    error: { message: e.message, type: e.type, param: e.param, code: e.code },
  });
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function errorResponse(e: HttpError, headers: Record<string, string> = {}): Response {
  return new Response(errorBody(e), {
    status: e.status,
    headers: { "content-type": "application/json", ...headers },
  });
}

// ---------------------------------------------------------------------------------------------
// Request validation

type Body = Record<string, unknown>;

function bad(param: string, value: unknown, want: string): HttpError {
  return new HttpError(400, `${param} must be ${want}, got ${show(value)}`, param, "invalid_value");
}

function optInt(body: Body, param: string, min: number, max: number, fix = ""): number | null {
  const v = body[param];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    const range = max === Infinity ? `>= ${min}` : `in [${min}, ${max}]`;
    throw bad(param, v, `an integer ${range}${fix}`);
  }
  return v;
}

function optNumber(body: Body, param: string, ok: (v: number) => boolean, want: string) {
  const v = body[param];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isFinite(v) || !ok(v)) throw bad(param, v, want);
  return v;
}

function optBool(body: Body, param: string): boolean | null {
  const v = body[param];
  if (v === undefined || v === null) return null;
  if (typeof v !== "boolean") throw bad(param, v, "true or false");
  return v;
}

/** Refuses an option this server cannot honour unless it has its neutral value. */
function unsupported(body: Body, param: string, neutral: (v: unknown) => boolean, fix: string) {
  const v = body[param];
  if (v === undefined || v === null || neutral(v)) return;
  throw new HttpError(
    400,
    `${param} ${show(v)} is not supported by this server; ${fix}`,
    param,
    "unsupported_parameter",
  );
}

interface Sampling {
  maxTokens: number | null;
  sampler: SamplerConfig;
  n: number;
  stop: string[];
  stream: boolean;
  includeUsage: boolean;
}

const MAX_N = 128;
const MAX_TOP_LOGPROBS = 20;

function commonSampling(body: Body, maxTokensParam: string, vocab: number): Sampling {
  const maxTokens = optInt(body, maxTokensParam, 1, Infinity);
  const requestedT = optNumber(body, "temperature", (v) => v >= 0, "a number >= 0 (0: greedy)") ??
    1;
  // Below GREEDY_BELOW_TEMPERATURE, logits / T overflows and the log-probs would be NaN.
  const temperature = requestedT < GREEDY_BELOW_TEMPERATURE ? 0 : requestedT;
  const topP = optNumber(body, "top_p", (v) => v > 0 && v <= 1, "a number in (0, 1]") ?? 1;
  const topK = optInt(body, "top_k", -1, Infinity, " (0 or -1: off)") ?? 0;
  const minP = optNumber(body, "min_p", (v) => v >= 0 && v <= 1, "a number in [0, 1]") ?? 0;
  const n = optInt(body, "n", 1, MAX_N, " (the number of choices)") ?? 1;
  const seed = optInt(body, "seed", 0, Number.MAX_SAFE_INTEGER) ??
    Math.floor(Math.random() * 2 ** 32);
  const stopRaw = body.stop;
  let stop: string[] = [];
  if (typeof stopRaw === "string") stop = [stopRaw];
  else if (Array.isArray(stopRaw)) stop = stopRaw as string[];
  else if (stopRaw !== undefined && stopRaw !== null) {
    throw bad("stop", stopRaw, "a string or an array of strings");
  }
  if (stop.length > MAX_STOP) {
    throw new HttpError(
      400,
      `stop has ${stop.length} strings, more than this server's limit of ${MAX_STOP}; ` +
        `send at most ${MAX_STOP} stop strings`,
      "stop",
      "invalid_value",
    );
  }
  stop.forEach((s, i) => {
    if (typeof s !== "string" || s === "") throw bad(`stop[${i}]`, s, "a non-empty string");
  });
  const stream = optBool(body, "stream") ?? false;
  const so = body.stream_options;
  let includeUsage = false;
  if (so !== undefined && so !== null) {
    if (typeof so !== "object" || Array.isArray(so)) {
      throw bad("stream_options", so, "an object such as {include_usage: true}");
    }
    includeUsage = optBool(so as Body, "include_usage") ?? false;
  }
  unsupported(body, "best_of", (v) => v === n, "leave it out or set it equal to n");
  unsupported(body, "frequency_penalty", (v) => v === 0, "leave it out or set it to 0");
  unsupported(body, "presence_penalty", (v) => v === 0, "leave it out or set it to 0");
  unsupported(body, "repetition_penalty", (v) => v === 1, "leave it out or set it to 1");
  unsupported(
    body,
    "logit_bias",
    (v) => typeof v === "object" && Object.keys(v as object).length === 0,
    "leave it out",
  );
  return {
    maxTokens,
    sampler: { seed, temperature, topP, topK, minP, vocabSize: vocab },
    n,
    stop,
    stream,
    includeUsage,
  };
}

function checkModel(body: Body, modelName: string): void {
  const m = body.model;
  if (typeof m !== "string" || m === "") {
    throw new HttpError(
      400,
      `model must be the served model id ${show(modelName)} (see GET /v1/models), got ${show(m)}`,
      "model",
      "invalid_value",
    );
  }
  if (m !== modelName) {
    throw new HttpError(
      400,
      `model ${show(m)} is not served here; this server serves ${show(modelName)} ` +
        `(GET /v1/models lists it): set model to ${show(modelName)}`,
      "model",
      "model_not_found",
    );
  }
}

function checkIds(param: string, ids: readonly unknown[], vocab: number): number[] {
  if (ids.length === 0) throw bad(param, ids, "a non-empty array of token ids");
  ids.forEach((id, i) => {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id >= vocab) {
      throw bad(`${param}[${i}]`, id, `a token id, an integer in [0, ${vocab})`);
    }
  });
  return ids as number[];
}

function encodePrompt(tokenizer: Tokenizer, text: string, param: string): number[] {
  const ids = tokenizer.encode(text, { addSpecialTokens: true });
  if (ids.length === 0) throw bad(param, text, "a prompt of at least one token");
  return ids;
}

/**
 * How many prompts a completions request's `prompt` holds, without tokenizing it (0 when it is
 * malformed: {@link completionPrompts} names the problem).
 */
function promptCount(p: unknown): number {
  if (typeof p === "string") return 1;
  if (!Array.isArray(p) || p.length === 0) return 0;
  return p.every((x) => typeof x === "number") ? 1 : p.length;
}

/**
 * Refuses a request over the per-request limits, before its prompts are tokenized: more than
 * `maxPrompts` prompts (param `prompt`), or more than `maxCompletions` choices, `n` × prompts
 * (param `n`).
 */
function checkBatch(prompts: number, n: number, limits: ServerLimits): void {
  if (prompts > limits.maxPrompts) {
    throw new HttpError(
      400,
      `prompt has ${prompts} prompts, more than this server's limit of ${limits.maxPrompts} ` +
        `per request (--max-prompts); send at most ${limits.maxPrompts} prompts per request`,
      "prompt",
      "too_many_prompts",
    );
  }
  if (prompts * n > limits.maxCompletions) {
    const what = prompts === 1 ? `n ${n}` : `n ${n} × ${prompts} prompts = ${prompts * n}`;
    throw new HttpError(
      400,
      `${what} choices is more than this server's limit of ${limits.maxCompletions} choices ` +
        `per request (--max-completions); lower n${
          prompts === 1 ? "" : " or send fewer prompts per request"
        }`,
      "n",
      "too_many_completions",
    );
  }
}

/** The prompts of a completions request, as token ids. */
function completionPrompts(body: Body, tokenizer: Tokenizer, vocab: number): number[][] {
  const p = body.prompt;
  const want = "a string, an array of strings, an array of token ids, or an array of such arrays";
  if (typeof p === "string") return [encodePrompt(tokenizer, p, "prompt")];
  if (!Array.isArray(p) || p.length === 0) throw bad("prompt", p, want);
  if (p.every((x) => typeof x === "number")) return [checkIds("prompt", p, vocab)];
  return p.map((x, i) => {
    if (typeof x === "string") return encodePrompt(tokenizer, x, `prompt[${i}]`);
    if (Array.isArray(x)) return checkIds(`prompt[${i}]`, x, vocab);
    throw bad(`prompt[${i}]`, x, "a string or an array of token ids");
  });
}

/** An `image_url` part of a chat request. */
interface ImagePart {
  /** Where it is: `messages[i].content[j]`. */
  param: string;
  /** Its data URL (checked to start with `data:`). */
  url: string;
}

/** A chat message as parsed: its text parts joined, its parts in order, and its images. */
interface ParsedMessage {
  /** The message as sent (the template sees its extra fields). */
  raw: Body;
  role: string;
  text: string;
  parts: ({ type: "text"; text: string } | { type: "image"; image: ImagePart })[];
  images: ImagePart[];
}

const IMAGE_DETAILS: readonly string[] = ["auto", "low", "high"];

/**
 * The content of message `i`: a string, null, or OpenAI content parts `{type: "text", text}` and
 * (for a vision-language policy) `{type: "image_url", image_url: {url, detail?}}` with a data URL.
 * `textOnly` names the served model when it cannot read images: an image part is then a 400
 * naming the part and the fix.
 */
function messageContent(
  m: Body,
  i: number,
  textOnly: string | null,
): Pick<ParsedMessage, "text" | "parts" | "images"> {
  const c = m.content;
  if (typeof c === "string") return { text: c, parts: [{ type: "text", text: c }], images: [] };
  if (c === null || c === undefined) return { text: "", parts: [], images: [] };
  const kinds = textOnly === null
    ? `text parts {type: "text", text: "..."} and image parts {type: "image_url", image_url: ` +
      `{url: "data:image/png;base64,..."}}`
    : `text parts {type: "text", text: "..."} (this policy reads text only)`;
  if (!Array.isArray(c)) throw bad(`messages[${i}].content`, c, `a string or an array of ${kinds}`);
  const parts: ParsedMessage["parts"] = [];
  const images: ImagePart[] = [];
  c.forEach((part, j) => {
    const param = `messages[${i}].content[${j}]`;
    const p = (typeof part === "object" && part !== null ? part : {}) as Body;
    if (p.type === "text" && typeof p.text === "string") {
      parts.push({ type: "text", text: p.text });
      return;
    }
    if (p.type !== "image_url") throw bad(param, part, `one of ${kinds}`);
    if (textOnly !== null) {
      throw new HttpError(
        400,
        `${param} is an image_url part, but ${show(textOnly)} is a text-only model that cannot ` +
          `read images; send text parts only, or serve a vision-language checkpoint (deno task ` +
          `serve --model builtin:tiny-vl, or a Qwen2-VL folder)`,
        param,
        "image_not_supported",
      );
    }
    const iu = p.image_url;
    if (
      typeof iu !== "object" || iu === null || Array.isArray(iu) ||
      typeof (iu as Body).url !== "string"
    ) {
      throw bad(`${param}.image_url`, iu, `an object {url: "data:image/png;base64,..."}`);
    }
    const detail = (iu as Body).detail;
    if (detail !== undefined && detail !== null && !IMAGE_DETAILS.includes(detail as string)) {
      throw bad(`${param}.image_url.detail`, detail, `"auto", "low" or "high" (or left out)`);
    }
    const url = (iu as Body).url as string;
    if (!/^data:/i.test(url)) {
      const what = /^https?:\/\//i.test(url) ? "an http(s) URL" : "not a data URL";
      throw new HttpError(
        400,
        `${param}.image_url.url ${show(url)} is ${what}; this server fetches nothing: send the ` +
          `image inline as a base64 data URL, data:image/png;base64,... or ` +
          `data:image/jpeg;base64,...`,
        `${param}.image_url.url`,
        "invalid_image_url",
      );
    }
    const image = { param, url };
    parts.push({ type: "image", image });
    images.push(image);
  });
  return { text: parts.map((p) => p.type === "text" ? p.text : "").join(""), parts, images };
}

/** The messages of a chat request, checked (see {@link messageContent}). */
function chatMessages(body: Body, textOnly: string | null): ParsedMessage[] {
  const msgs = body.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) {
    throw new HttpError(
      400,
      `messages must be a non-empty array of {role, content} messages, got ${show(msgs)}; ` +
        `e.g. [{"role": "user", "content": "7*8="}]`,
      "messages",
      msgs === undefined ? "missing_required_parameter" : "invalid_value",
    );
  }
  return msgs.map((m, i) => {
    if (typeof m !== "object" || m === null || typeof (m as Body).role !== "string") {
      throw bad(`messages[${i}]`, m, `a message {role: "user", content: "..."}`);
    }
    const raw = m as Body;
    return { raw, role: raw.role as string, ...messageContent(raw, i, textOnly) };
  });
}

/** An image of a chat prompt, its header read: its bytes and the image tokens it takes. */
interface InspectedImage {
  /** `messages[i].content[j]`. */
  param: string;
  /** The PNG or JPEG bytes. */
  bytes: Uint8Array;
  /** `<|image_pad|>` tokens in the prompt (the processor's merged patches). */
  tokens: number;
}

/** A 400 for an image that cannot be read: `invalid_image`, or `image_too_large` for a limit. */
function imageError(param: string, e: unknown): HttpError {
  const at = `${param}.image_url.url`;
  const limit = e instanceof ImageDecodeError && e.reason === "limit";
  const why = ((e as Error)?.message ?? String(e)).replace(/^\w+: /, "");
  return new HttpError(
    400,
    `${at} is not an image this server can read: ${why}`,
    at,
    limit ? "image_too_large" : "invalid_image",
  );
}

/**
 * Reads an image's size from its data URL and header, without decoding its pixels: the byte and
 * pixel limits are checked first, then the tokens the processor gives it are computed.
 */
function inspectImage(
  part: ImagePart,
  processor: Qwen2VLOptions,
  limits: ServerLimits,
): InspectedImage {
  const at = `${part.param}.image_url.url`;
  const comma = part.url.indexOf(",");
  const payload = comma < 0 ? "" : part.url.slice(comma + 1).replace(/=+$/, "");
  // Every 4 base64 characters are 3 bytes: the size before decoding anything.
  const bytesBound = Math.floor(payload.length * 3 / 4);
  if (bytesBound > limits.maxImageBytes) {
    throw new HttpError(
      400,
      `${at} carries an image of about ${bytesBound} bytes, more than this server's limit of ` +
        `${limits.maxImageBytes} bytes per image (--max-image-bytes); send a smaller or more ` +
        `compressed PNG or JPEG`,
      at,
      "image_too_large",
    );
  }
  let bytes: Uint8Array;
  let width: number;
  let height: number;
  try {
    bytes = parseDataUrl(part.url, { maxBytes: limits.maxImageBytes }).bytes;
    ({ width, height } = readImageHeader(bytes));
  } catch (e) {
    throw imageError(part.param, e);
  }
  if (width * height > limits.maxImagePixels) {
    throw new HttpError(
      400,
      `${at} is a ${width}×${height} image (${width * height} pixels), more than this server's ` +
        `limit of ${limits.maxImagePixels} pixels per image (--max-image-pixels); downscale it`,
      at,
      "image_too_large",
    );
  }
  try {
    return { param: part.param, bytes, tokens: qwen2VLImageGrid(height, width, processor).tokens };
  } catch (e) {
    throw imageError(part.param, e);
  }
}

/**
 * Decodes and processes the images of a prompt (after its length was checked) into the tower's
 * input: every image's patches in order, one grid per image.
 */
function processImages(
  images: readonly InspectedImage[],
  processor: Qwen2VLOptions,
  limits: ServerLimits,
): ProcessedPixels {
  const parts = images.map((img) => {
    let out: ReturnType<typeof processQwen2VLImages>;
    try {
      const decoded = decodeImage(img.bytes, {
        maxBytes: limits.maxImageBytes,
        maxPixels: limits.maxImagePixels,
      });
      out = processQwen2VLImages([decoded], processor);
    } catch (e) {
      throw imageError(img.param, e);
    }
    if (out.imageTokenCounts[0] !== img.tokens) {
      throw new Error(
        `${img.param}: the processed image takes ${out.imageTokenCounts[0]} tokens, its header ` +
          `said ${img.tokens}`,
      );
    }
    return out;
  });
  return concatPixels(parts);
}

/**
 * Refuses a prompt of a vision-language policy whose image tokens are not exactly `images`
 * `<|image_pad|>` tokens, each right after `<|vision_start|>` (one per image, before expansion):
 * image tokens typed as text, or a chat template that does not write an image part so, would
 * leave the model without the pixels they stand for (or the pixels without their place).
 * `source`: how the prompt was written (`template`: by the model's chat template from
 * `messages`; `messages`: from the last user message; `completions`: a completions prompt, which
 * carries no images).
 */
function checkImageTokens(
  ids: readonly number[],
  images: number,
  vision: ServedVision,
  tokenizer: Tokenizer,
  param: string,
  source: "template" | "messages" | "completions",
): void {
  const { imageTokenId, visionStartTokenId } = vision.model.config;
  let found = 0;
  let loose = false;
  ids.forEach((id, k) => {
    if (id !== imageTokenId) return;
    found++;
    if (k === 0 || ids[k - 1] !== visionStartTokenId) loose = true;
  });
  if (found === images && !loose) return;
  const pad = show(tokenizer.decode([imageTokenId]));
  const start = show(tokenizer.decode([visionStartTokenId]));
  let fix: string;
  if (source === "completions") {
    fix = `a completions prompt carries no pixels: remove the image tokens, and send images as ` +
      `image_url parts to /v1/chat/completions`;
  } else if (source === "template" && found < images) {
    fix = `the model's chat template must write ${start}${pad} for each {type: "image"} part; ` +
      `serve a checkpoint whose template does (a Qwen2-VL one)`;
  } else {
    fix = `send images as image_url parts only, with no ${pad} or ${start} typed in the text`;
  }
  const what = source === "completions" ? param : `the prompt written from ${param}`;
  throw new HttpError(
    400,
    `${what} has ${found} image token(s) ${pad} (id ${imageTokenId}) for ${images} image ` +
      `part(s)${loose ? `, not all of them right after ${start}` : ""}; ${fix}`,
    param,
    "invalid_value",
  );
}

/** A chat prompt: its token ids (images expanded) and the images they hold, in order. */
interface ChatPrompt {
  ids: number[];
  images: InspectedImage[];
}

/** The prompt of a chat request (see the module doc for the rendering, images included). */
function chatPrompt(
  messages: readonly ParsedMessage[],
  tokenizer: Tokenizer,
  vision: ServedVision | null,
  limits: ServerLimits,
): ChatPrompt {
  const all = messages.flatMap((m) => m.images);
  if (all.length > limits.maxImages) {
    throw new HttpError(
      400,
      `messages carry ${all.length} images, more than this server's limit of ` +
        `${limits.maxImages} per request (--max-images); send at most ${limits.maxImages} images ` +
        `per request`,
      "messages",
      "too_many_images",
    );
  }
  const format = promptFormat(tokenizer);
  let ids: number[];
  let used: ImagePart[];
  if (format === "chat") {
    const rendered: ChatMessage[] = messages.map((m) => ({
      ...m.raw,
      role: m.role,
      content: m.images.length === 0
        ? m.text
        : m.parts.map((p): ChatContentPart =>
          p.type === "text" ? { type: "text", text: p.text } : { type: "image" }
        ),
    }));
    let text: string;
    try {
      text = tokenizer.applyChatTemplate(rendered, { addGenerationPrompt: true });
    } catch (e) {
      throw new HttpError(
        400,
        `messages could not be rendered with the model's chat template: ${(e as Error).message}`,
        "messages",
        "invalid_value",
      );
    }
    ids = tokenizer.encode(text, { addSpecialTokens: false });
    if (ids.length === 0) {
      const sent = messages.map((m) => m.raw);
      throw bad("messages", sent, "messages that render to a non-empty prompt");
    }
    used = all;
  } else {
    const last = messages.findLastIndex((m) => m.role === "user");
    if (last < 0) {
      throw new HttpError(
        400,
        `messages must contain a user message: this model's tokenizer has no chat template, so ` +
          `the prompt is the last user message's content; got roles ${
            show(messages.map((m) => m.role))
          }`,
        "messages",
        "invalid_value",
      );
    }
    const stray = messages.find((m, i) => i !== last && m.images.length > 0)?.images[0];
    if (stray !== undefined) {
      throw new HttpError(
        400,
        `${stray.param} is an image outside the last user message; this model's tokenizer has ` +
          `no chat template, so its prompt is the last user message alone (its images, then its ` +
          `text): move the image there`,
        stray.param,
        "invalid_value",
      );
    }
    used = messages[last]!.images;
    // As the model was trained (prompt.ts): each image's markers, then the text.
    ids = encodePrompt(
      tokenizer,
      IMAGE_MARKERS.repeat(used.length) + messages[last]!.text,
      `messages[${last}].content`,
    );
  }
  if (vision === null) return { ids, images: [] };
  const source = format === "chat" ? "template" : "messages";
  checkImageTokens(ids, used.length, vision, tokenizer, "messages", source);
  const images = used.map((part) => inspectImage(part, vision.processor, limits));
  if (images.length === 0) return { ids, images };
  const counts = images.map((image) => image.tokens);
  return { ids: expandImageTokens(ids, vision.model.config.imageTokenId, counts), images };
}

/** Resolves `max_tokens` against the context window. */
function maxNewTokens(
  requested: number | null,
  fallback: number,
  prompts: readonly number[][],
  context: number,
  param: string,
  promptParam: string,
): number {
  // A loop, not `Math.max(...lengths)`, which overflows the call stack on a long prompt list.
  let longest = 0;
  for (const p of prompts) longest = Math.max(longest, p.length);
  const room = context - longest;
  if (room < 1) {
    throw new HttpError(
      400,
      `the prompt has ${longest} tokens, which leaves no room in this model's context window of ` +
        `${context} tokens; shorten the prompt`,
      promptParam,
      "context_length_exceeded",
    );
  }
  if (requested === null) return Math.min(fallback, room);
  if (longest + requested > context) {
    throw new HttpError(
      400,
      `${param} ${requested} plus the prompt's ${longest} tokens exceeds this model's context ` +
        `window of ${context} tokens; set ${param} to at most ${room}`,
      param,
      "context_length_exceeded",
    );
  }
  return requested;
}

// ---------------------------------------------------------------------------------------------
// Generation

/** The top `k` tokens of `log softmax(row / T)` over the first `vocab` entries, best first. */
function topLogprobs(row: Float32Array, temperature: number, vocab: number, k: number) {
  const top: { id: number; logprob: number }[] = [];
  if (k <= 0) return top;
  const t = temperature > 0 ? temperature : 1;
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) if (row[i]! / t > max) max = row[i]! / t;
  let sum = 0;
  for (let i = 0; i < vocab; i++) sum += Math.exp(row[i]! / t - max);
  const logZ = max + Math.log(sum);
  for (let i = 0; i < vocab; i++) {
    const lp = row[i]! / t - logZ;
    if (top.length < k || lp > top[top.length - 1]!.logprob) {
      let at = top.length;
      while (at > 0 && top[at - 1]!.logprob < lp) at--;
      top.splice(at, 0, { id: i, logprob: lp });
      if (top.length > k) top.pop();
    }
  }
  return top;
}

interface TokenInfo {
  id: number;
  logprob: number;
  top: { id: number; logprob: number }[];
}

interface Job {
  prompts: number[][];
  /** The images of each prompt (by index in `prompts`), for a vision-language policy. */
  images?: readonly (ProcessedPixels | undefined)[];
  maxNewTokens: number;
  sampling: Sampling;
  topK: number;
  /** Called after each step with the new token per choice (null when the choice is done). */
  onStep?: (step: (TokenInfo | null)[], finish: (FinishReason | null)[]) => void;
  aborted?: () => boolean;
  /** The server's decode loop; the job runs on the host loop when it needs what only it has. */
  decodeLoop?: "host" | "device";
}

/** Whether `job` runs on the device loop: asked for, no top logprobs. */
function onDevice(job: Job): boolean {
  return job.decodeLoop === "device" && job.topK === 0;
}

interface JobResult {
  result: GenerateResult;
  tokens: TokenInfo[][];
}

class Aborted extends Error {}

/**
 * The forward hook of one `generate` call of a vision-language policy (undefined for a text-only
 * one): row `r` of the call sees `pixelsOf(r)`, none for a text-only row. The tower's input
 * tensor is made inside the hook, so the forward pass's `tidy` frees it.
 */
function visionHook(
  policy: ServedPolicy,
  pixelsOf: (row: number) => ProcessedPixels | undefined,
): ForwardHook | undefined {
  const vision = policy.vision ?? null;
  if (vision === null) return undefined;
  const backend = policy.model.params.get("model.embed_tokens.weight")!.backend;
  return vision.model.forwardHook((row) => {
    const pixels = pixelsOf(row);
    return pixels === undefined ? undefined : imageInputs(pixels, backend);
  });
}

async function runJob(policy: ServedPolicy, job: Job): Promise<JobResult> {
  const { n } = job.sampling;
  const prompts = job.prompts.flatMap((p) => Array.from({ length: n }, () => p));
  const vocab = Math.min(policy.tokenizer.vocabSize, policy.model.config.vocabSize);
  const tokens: TokenInfo[][] = prompts.map(() => []);
  let lastYield = performance.now();
  // Row r of the batch is choice r % n of prompt ⌊r / n⌋, and sees that prompt's images.
  const forwardHook = visionHook(policy, (row) => job.images?.[Math.floor(row / n)]);
  const result = await generate(policy.model, prompts, {
    ...(forwardHook === undefined ? {} : { forwardHook }),
    ...(onDevice(job) ? { decodeLoop: "device" as const } : {}),
    maxNewTokens: job.maxNewTokens,
    sampler: job.sampling.sampler,
    sequenceIds: prompts.map((_, i) => i),
    eosTokenIds: policy.eosTokenIds,
    stopStrings: job.sampling.stop,
    tokenizer: policy.tokenizer,
    onTokens: async (e: GenerateStep) => {
      const infos = e.tokens.map((id, i) => {
        if (id === null) return null;
        const info: TokenInfo = {
          id,
          logprob: e.scaledLogprobs[i]!,
          // The device loop has no logits after the prefill; its jobs ask for no top logprobs.
          top: job.topK === 0
            ? []
            : topLogprobs(e.logits[i]!, job.sampling.sampler.temperature ?? 1, vocab, job.topK),
        };
        tokens[i]!.push(info);
        return info;
      });
      job.onStep?.(infos, [...e.finishReasons]);
      // Let the HTTP layer flush streamed chunks and answer other requests meanwhile.
      if (job.onStep !== undefined || performance.now() - lastYield > 20) {
        await new Promise((r) => setTimeout(r, 0));
        lastYield = performance.now();
      }
      if (job.aborted?.()) throw new Aborted("the client went away");
    },
  });
  return { result, tokens };
}

function finishReason(f: FinishReason): "stop" | "length" {
  return f === "length" ? "length" : "stop";
}

/**
 * Streamed text: the decoded text of the tokens so far, less what could still change (a
 * trailing incomplete UTF-8 character, a suffix that may begin a stop string), cut at a stop
 * string. The concatenated deltas equal the final text.
 */
class TextStream {
  #emitted = "";
  #ids: number[] = [];
  constructor(readonly tokenizer: Tokenizer, readonly stop: readonly string[]) {}

  push(id: number): string {
    this.#ids.push(id);
    let text = this.tokenizer.decode(this.#ids, { skipSpecialTokens: true });
    let cut = -1;
    for (const s of this.stop) {
      const at = text.indexOf(s);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      text = text.slice(0, cut);
    } else {
      let hold = 0;
      for (const s of this.stop) {
        for (let k = Math.min(s.length - 1, text.length); k > hold; k--) {
          if (text.endsWith(s.slice(0, k))) {
            hold = k;
            break;
          }
        }
      }
      text = text.slice(0, text.length - hold);
      while (text.endsWith("\uFFFD")) text = text.slice(0, -1);
    }
    return this.#take(text);
  }

  /** The rest of `final` not yet emitted. */
  finish(final: string): string {
    return this.#take(final);
  }

  #take(text: string): string {
    if (!text.startsWith(this.#emitted)) return "";
    const delta = text.slice(this.#emitted.length);
    this.#emitted = text;
    return delta;
  }
}

// ---------------------------------------------------------------------------------------------
// Response shapes

function tokenText(tokenizer: Tokenizer, id: number): string {
  return tokenizer.decode([id]);
}

const encoder = new TextEncoder();

function chatLogprobs(tokenizer: Tokenizer, infos: readonly TokenInfo[]) {
  const entry = (id: number, logprob: number) => {
    const token = tokenText(tokenizer, id);
    return { token, logprob, bytes: Array.from(encoder.encode(token)) };
  };
  return {
    content: infos.map((t) => ({
      ...entry(t.id, t.logprob),
      top_logprobs: t.top.map((x) => entry(x.id, x.logprob)),
    })),
    refusal: null,
  };
}

function completionLogprobs(tokenizer: Tokenizer, infos: readonly TokenInfo[], offset: number) {
  const tokens = infos.map((t) => tokenText(tokenizer, t.id));
  const textOffset: number[] = [];
  let at = offset;
  for (const t of tokens) {
    textOffset.push(at);
    at += t.length;
  }
  return {
    tokens,
    token_logprobs: infos.map((t) => t.logprob),
    top_logprobs: infos.map((t) => {
      const d: Record<string, number> = {};
      for (const x of t.top) d[tokenText(tokenizer, x.id)] ??= x.logprob;
      d[tokenText(tokenizer, t.id)] ??= t.logprob;
      return d;
    }),
    text_offset: textOffset,
  };
}

function usageOf(prompts: readonly number[][], result: GenerateResult) {
  const prompt = prompts.reduce((s, p) => s + p.length, 0);
  const completion = result.sequences.reduce((s, q) => s + q.tokens.length, 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
}

let counter = 0;
function requestId(prefix: string): string {
  counter = (counter + 1) % 1e9;
  return `${prefix}-${Date.now().toString(36)}${counter.toString(36)}`;
}

// ---------------------------------------------------------------------------------------------
// Server

/** Runs a job in its turn in the generation queue (see `reserve` in {@link startServer}). */
type Runner = <T>(job: () => Promise<T>) => Promise<T>;

/**
 * The largest value of each {@link ServerLimits} field that has one: `maxImagePixels` is at most
 * what an image may hold at all (`MAX_IMAGE_PIXELS` of `@rlvr/image`, 64 Mi pixels).
 *
 * @example Usage
 * ```ts
 * import { LIMIT_MAXIMA } from "./server.ts";
 * import assert from "node:assert/strict";
 * assert.equal(LIMIT_MAXIMA.maxImagePixels, 64 * 1024 * 1024);
 * ```
 */
export const LIMIT_MAXIMA: Readonly<Partial<ServerLimits>> = Object.freeze({
  maxImagePixels: MAX_IMAGE_PIXELS,
});

/** `opts.limits` over the defaults, each checked to be an integer >= 1 (and its maximum). */
function resolveLimits(given: Partial<ServerLimits> | undefined): ServerLimits {
  const limits = { ...SERVER_LIMITS, ...given };
  for (const key of Object.keys(SERVER_LIMITS) as (keyof ServerLimits)[]) {
    const v = limits[key];
    const max = LIMIT_MAXIMA[key] ?? Number.MAX_SAFE_INTEGER;
    if (!Number.isSafeInteger(v) || v < 1 || v > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? ">= 1" : `in [1, ${max}]`;
      throw new RangeError(
        `startServer: limits.${key} must be an integer ${range}, got ${show(v)}; leave it out ` +
          `for the default ${SERVER_LIMITS[key]}`,
      );
    }
  }
  return limits;
}

/** Refuses a served model name no client could send (requests must name it as `model`). */
function checkModelName(name: unknown): void {
  if (typeof name !== "string" || name.trim() === "") {
    throw new RangeError(
      `startServer: modelName must be a non-empty model id (clients send it as model), got ` +
        `${show(name)}; leave it out to use the model path`,
    );
  }
}

/**
 * Starts an OpenAI-compatible server for a policy (see the module doc for the API). Loads
 * `opts.model` with `loadPolicy` unless `opts.policy` is given.
 *
 * @param opts Model, served name, port, host and limits.
 * @returns The server's URL and `close()`.
 * @throws {RangeError} On a bad port, an empty `modelName` or a limit that is not an integer >= 1.
 *
 * @example Usage
 * ```ts
 * import { startServer } from "./server.ts";
 * import assert from "node:assert/strict";
 * const server = await startServer({ model: "builtin:tiny", port: 0 });
 * const res = await fetch(`${server.url}/v1/chat/completions`, {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({
 *     model: server.modelName,
 *     messages: [{ role: "user", content: "7*8=" }],
 *     max_tokens: 4,
 *     temperature: 0,
 *   }),
 * });
 * const body = await res.json();
 * assert.equal(body.object, "chat.completion");
 * assert.equal(typeof body.choices[0].message.content, "string");
 * assert.ok(body.choices[0].token_ids.length <= 4);
 * await server.close();
 * ```
 */
export async function startServer(opts: ServerOptions = {}): Promise<PolicyServer> {
  const host = opts.host ?? "127.0.0.1";
  const port = opts.port ?? 8000;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`startServer: port must be an integer in [0, 65535], got ${show(port)}`);
  }
  const limits = resolveLimits(opts.limits);
  if (opts.modelName !== undefined) checkModelName(opts.modelName);
  const given = opts.policy?.vision ?? null;
  if (given !== null && given.model.lm !== opts.policy!.model) {
    throw new RangeError(
      `startServer: policy.vision.model.lm is not policy.model; the decoder that generates must ` +
        `be the vision-language model's (pass what loadPolicy returns, or set model to ` +
        `vision.model.lm)`,
    );
  }
  const decodeLoop = opts.decodeLoop ?? "host";
  if (decodeLoop !== "host" && decodeLoop !== "device") {
    throw new RangeError(
      `startServer: decodeLoop must be "host" or "device", got ${show(decodeLoop)}`,
    );
  }
  const owned = opts.policy === undefined;
  const modelArg = opts.model ?? "builtin:tiny";
  const policy: ServedPolicy = opts.policy ?? await loadPolicy(modelArg);
  if (decodeLoop === "device") {
    const why = deviceDecodeProblem(policy.model);
    if (why !== null) {
      if (owned) policy.model.dispose();
      throw new RangeError(
        `startServer: decodeLoop "device" cannot serve this policy: ${why}; use decodeLoop "host"`,
      );
    }
  }
  const modelName = opts.modelName ?? (owned || opts.model !== undefined ? modelArg : "policy");
  const created = Math.floor(Date.now() / 1000);
  const { tokenizer } = policy;
  const vision = policy.vision ?? null;
  const vocab = Math.min(tokenizer.vocabSize, policy.model.config.vocabSize);
  const context = policy.model.config.maxPositions;
  const modelCard = { id: modelName, object: "model", created, owned_by: "rlvr" };

  let queue: Promise<unknown> = Promise.resolve();
  /** Generation requests holding a place in the queue: waiting or running. */
  let pending = 0;
  /**
   * Takes a place in the generation queue for a validated request, or refuses it with a 429 when
   * `maxQueue` requests already hold one. Called before a stream's 200 goes out, so that a full
   * queue is an HTTP error rather than an error event. The returned function runs the job after
   * every job queued before it and frees the place when the job settles (before its caller
   * resumes), so each place runs one job.
   */
  const reserve = (): Runner => {
    checkQueue();
    pending++;
    return <T>(job: () => Promise<T>): Promise<T> => {
      const run = queue.then(job, job).finally(() => pending--);
      queue = run.catch(() => {});
      return run;
    };
  };

  /**
   * Refuses a request with a 429 when the queue is full, without taking a place: called before
   * a request's images are decoded too, so a flood of image requests is refused cheaply.
   */
  function checkQueue(): void {
    if (pending >= limits.maxQueue) {
      throw new HttpError(
        429,
        `the server is busy: its generation queue is full (${pending} requests waiting or ` +
          `running, its limit of ${limits.maxQueue}, --max-queue); retry later (the openai ` +
          `client retries a 429 by itself)`,
        null,
        "queue_full",
        "rate_limit_error",
        { "retry-after": "1" },
      );
    }
  }

  /**
   * The request body as a JSON object. A body over `maxBodyBytes` is a 413: refused from its
   * `Content-Length` before anything is read, or, when it has none (chunked), as soon as the
   * bytes read pass the limit; so a huge body is neither buffered nor parsed nor tokenized.
   */
  async function readBody(req: Request): Promise<Body> {
    const max = limits.maxBodyBytes;
    const tooLarge = (what: string) =>
      new HttpError(
        413,
        `the request body ${what}, more than this server's limit of ${max} bytes ` +
          `(--max-body-bytes); send fewer or shorter prompts (or smaller images) per request`,
        null,
        "request_too_large",
      );
    const declared = req.headers.get("content-length");
    if (declared !== null && Number(declared) > max) {
      throw tooLarge(`has ${declared} bytes (its Content-Length)`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (req.body !== null) {
      const reader = req.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > max) {
          await reader.cancel().catch(() => {});
          throw tooLarge(`passed ${max} bytes while being read (it has no Content-Length)`);
        }
        chunks.push(value);
      }
    }
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
    const text = new TextDecoder().decode(bytes);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (e) {
      throw new HttpError(
        400,
        `the request body is not valid JSON (${(e as Error).message}); send a JSON object ` +
          `with content-type application/json`,
        null,
        "invalid_json",
      );
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new HttpError(400, `the request body must be a JSON object, got ${show(body)}`);
    }
    return body as Body;
  }

  /**
   * Runs a streamed job: a chunk per new token of each choice (its fields from `fields.token`,
   * given the text released by its {@link TextStream}), then a chunk per choice with the text
   * still held back (`fields.final`) and the finish reason. The two endpoints differ only in
   * those fields (`text` for completions, `delta` for chat).
   */
  async function streamJob(
    run: Runner,
    job: Job,
    send: (data: unknown) => void,
    aborted: () => boolean,
    base: Record<string, unknown>,
    texts: readonly TextStream[],
    fields: {
      token: (choice: number, info: TokenInfo, text: string) => Record<string, unknown>;
      final: (rest: string) => Record<string, unknown>;
    },
  ): Promise<GenerateResult> {
    const { result } = await run(() =>
      runJob(policy, {
        ...job,
        decodeLoop,
        aborted,
        onStep: (infos) => {
          infos.forEach((info, i) => {
            if (info === null) return;
            const choice = { index: i, ...fields.token(i, info, texts[i]!.push(info.id)) };
            send({ ...base, choices: [{ ...choice, finish_reason: null, token_ids: [info.id] }] });
          });
        },
      })
    );
    result.sequences.forEach((s, i) => {
      send({
        ...base,
        choices: [{
          index: i,
          ...fields.final(texts[i]!.finish(s.text ?? "")),
          logprobs: null,
          finish_reason: finishReason(s.finishReason),
          token_ids: [],
        }],
      });
    });
    return result;
  }

  /** An SSE response whose events `produce` writes; errors become an `error` event. */
  function sse(produce: (send: (data: unknown) => void, aborted: () => boolean) => Promise<void>) {
    let closed = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const send = (data: unknown) => {
          if (closed) return;
          const s = typeof data === "string" ? data : JSON.stringify(data);
          controller.enqueue(encoder.encode(`data: ${s}\n\n`));
        };
        produce(send, () => closed).catch((e) => {
          if (e instanceof Aborted) return;
          const err = e instanceof HttpError ? e : new HttpError(500, `generation failed: ${e}`);
          send(JSON.parse(errorBody(err)));
        }).finally(() => {
          if (closed) return;
          send("[DONE]");
          closed = true;
          controller.close();
        });
      },
      cancel() {
        closed = true;
      },
    });
    return new Response(stream, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      },
    });
  }

  async function completions(req: Request): Promise<Response> {
    const body = await readBody(req);
    checkModel(body, modelName);
    const sampling = commonSampling(body, "max_tokens", vocab);
    const lp = optInt(body, "logprobs", 0, MAX_TOP_LOGPROBS, " (the number of top log-probs)");
    unsupported(body, "echo", (v) => v === false, "leave it out or set it to false");
    unsupported(body, "suffix", (v) => v === "", "leave it out");
    checkBatch(promptCount(body.prompt), sampling.n, limits);
    const prompts = completionPrompts(body, tokenizer, vocab);
    if (vision !== null) {
      // A list of prompts names each one (`prompt[i]`); one prompt (a string, ids) is `prompt`.
      const listed = Array.isArray(body.prompt) && body.prompt.some((x) => typeof x !== "number");
      prompts.forEach((p, i) => {
        const param = listed ? `prompt[${i}]` : "prompt";
        checkImageTokens(p, 0, vision, tokenizer, param, "completions");
      });
    }
    const max = maxNewTokens(sampling.maxTokens, 16, prompts, context, "max_tokens", "prompt");
    const id = requestId("cmpl");
    const created = Math.floor(Date.now() / 1000);
    const base = { id, object: "text_completion", created, model: modelName };
    const job: Job = {
      prompts,
      maxNewTokens: max,
      sampling,
      topK: lp ?? 0,
    };
    const run = reserve();
    if (!sampling.stream) {
      const { result, tokens } = await run(() => runJob(policy, { ...job, decodeLoop }));
      return json({
        ...base,
        choices: result.sequences.map((s, i) => ({
          index: i,
          text: s.text ?? "",
          logprobs: lp === null ? null : completionLogprobs(tokenizer, tokens[i]!, 0),
          finish_reason: finishReason(s.finishReason),
          token_ids: s.tokens,
          prompt_token_ids: s.promptIds,
        })),
        usage: usageOf(prompts, result),
      });
    }
    return sse(async (send, aborted) => {
      const texts = prompts.flatMap(() =>
        Array.from({ length: sampling.n }, () => new TextStream(tokenizer, sampling.stop))
      );
      const offsets = texts.map(() => 0);
      const result = await streamJob(run, job, send, aborted, base, texts, {
        token: (i, info, text) => {
          const logprobs = lp === null ? null : completionLogprobs(tokenizer, [info], offsets[i]!);
          offsets[i]! += text.length;
          return { text, logprobs };
        },
        final: (rest) => ({ text: rest }),
      });
      if (sampling.includeUsage) send({ ...base, choices: [], usage: usageOf(prompts, result) });
    });
  }

  async function chat(req: Request): Promise<Response> {
    const body = await readBody(req);
    checkModel(body, modelName);
    const maxParam = body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens";
    const sampling = commonSampling(body, maxParam, vocab);
    const wantLogprobs = optBool(body, "logprobs") ?? false;
    const topK = optInt(body, "top_logprobs", 0, MAX_TOP_LOGPROBS) ?? 0;
    if (topK > 0 && !wantLogprobs) {
      throw new HttpError(
        400,
        `top_logprobs ${topK} needs logprobs: true; set logprobs to true or leave top_logprobs out`,
        "top_logprobs",
        "invalid_value",
      );
    }
    unsupported(body, "tools", (v) => Array.isArray(v) && v.length === 0, "leave tools out");
    unsupported(body, "functions", (v) => Array.isArray(v) && v.length === 0, "leave it out");
    unsupported(
      body,
      "response_format",
      (v) => typeof v === "object" && (v as Body).type === "text",
      `leave it out or use {"type": "text"}`,
    );
    checkBatch(1, sampling.n, limits);
    const messages = chatMessages(body, vision === null ? modelName : null);
    const { ids: prompt, images } = chatPrompt(messages, tokenizer, vision, limits);
    const max = maxNewTokens(sampling.maxTokens, context, [prompt], context, maxParam, "messages");
    let pixels: ProcessedPixels | undefined;
    if (images.length > 0) {
      // Decoding is the costly part of an image: not for a request the queue would refuse.
      checkQueue();
      pixels = processImages(images, vision!.processor, limits);
    }
    const id = requestId("chatcmpl");
    const created = Math.floor(Date.now() / 1000);
    const job: Job = {
      prompts: [prompt],
      images: [pixels],
      maxNewTokens: max,
      sampling,
      topK,
    };
    const run = reserve();
    if (!sampling.stream) {
      const { result, tokens } = await run(() => runJob(policy, { ...job, decodeLoop }));
      return json({
        id,
        object: "chat.completion",
        created,
        model: modelName,
        choices: result.sequences.map((s, i) => ({
          index: i,
          message: { role: "assistant", content: s.text ?? "", refusal: null },
          logprobs: wantLogprobs ? chatLogprobs(tokenizer, tokens[i]!) : null,
          finish_reason: finishReason(s.finishReason),
          token_ids: s.tokens,
          prompt_token_ids: s.promptIds,
        })),
        usage: usageOf([prompt], result),
      });
    }
    const base = { id, object: "chat.completion.chunk", created, model: modelName };
    return sse(async (send, aborted) => {
      const texts = Array.from(
        { length: sampling.n },
        () => new TextStream(tokenizer, sampling.stop),
      );
      for (let i = 0; i < sampling.n; i++) {
        send({
          ...base,
          choices: [{
            index: i,
            delta: { role: "assistant", content: "" },
            logprobs: null,
            finish_reason: null,
          }],
        });
      }
      const result = await streamJob(run, job, send, aborted, base, texts, {
        token: (_, info, text) => ({
          delta: { content: text },
          logprobs: wantLogprobs ? chatLogprobs(tokenizer, [info]) : null,
        }),
        final: (rest) => ({ delta: rest === "" ? {} : { content: rest } }),
      });
      if (sampling.includeUsage) send({ ...base, choices: [], usage: usageOf([prompt], result) });
    });
  }

  const routes: Record<string, { method: string; handle: (req: Request) => Promise<Response> }> = {
    "/v1/models": {
      method: "GET",
      handle: () => Promise.resolve(json({ object: "list", data: [modelCard] })),
    },
    "/v1/completions": { method: "POST", handle: completions },
    "/v1/chat/completions": { method: "POST", handle: chat },
    "/health": { method: "GET", handle: () => Promise.resolve(new Response("ok")) },
  };

  async function handler(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname.replace(/\/+$/, "");
    try {
      const route = routes[path];
      if (route === undefined) {
        if (path.startsWith("/v1/models/") && req.method === "GET") {
          const id = decodeURIComponent(path.slice("/v1/models/".length));
          if (id === modelName) return json(modelCard);
          throw new HttpError(
            404,
            `model ${show(id)} does not exist; this server serves ${show(modelName)}`,
            "model",
            "model_not_found",
          );
        }
        throw new HttpError(
          404,
          `no route ${req.method} ${path}; this server has GET /v1/models, ` +
            `POST /v1/completions and POST /v1/chat/completions`,
          null,
          "unknown_url",
        );
      }
      if (req.method !== route.method) {
        return errorResponse(
          new HttpError(
            405,
            `method ${req.method} is not allowed on ${path}; use ${route.method}`,
            null,
            "method_not_allowed",
          ),
          { allow: route.method },
        );
      }
      return await route.handle(req);
    } catch (e) {
      if (e instanceof HttpError) return errorResponse(e, e.headers);
      // The client went away mid-generation: nobody reads this answer.
      if (e instanceof Aborted) return new Response(null, { status: 499 });
      console.error(`serve: ${req.method} ${path} failed:`, e);
      return errorResponse(new HttpError(500, `internal error: ${(e as Error)?.message ?? e}`));
    }
  }

  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({ hostname: host, port, onListen: () => {} }, handler);
  } catch (e) {
    if (owned) policy.model.dispose();
    throw e;
  }
  const addr = server.addr;
  const shownHost = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${shownHost}:${addr.port}`,
    modelName,
    vision: vision !== null,
    close() {
      closing ??= (async () => {
        await server.shutdown();
        await queue;
        if (owned) policy.model.dispose();
      })();
      return closing;
    },
  };
}
