/**
 * A generative-judge reward: asks an LLM served behind an OpenAI-compatible
 * `/v1/chat/completions` endpoint (vLLM, SGLang, llama.cpp, Ollama, OpenAI ...) to grade each
 * completion, and parses a score in [0, 1] from its reply.
 *
 * Design: one HTTP request per sample (the runner's `concurrency` bounds how many are in
 * flight), with the runner's AbortSignal passed to `fetch`, so a timeout cancels the request.
 * Requests that fail with a network error, HTTP 5xx or 429 are retried with exponential backoff
 * (`backoffMs · 2^attempt`, up to `retries` times); other 4xx responses and malformed replies
 * are not retried: they throw, and the runner records the error for that sample only. Replies
 * are cached by a SHA-256 of the request (URL, model, messages, temperature, max tokens) in an
 * in-memory LRU and, optionally, in a JSON file written atomically (a temporary file renamed
 * over the old one) after each new reply; identical requests in flight at once share one HTTP
 * call. Only replies whose score parsed are cached. The template fills `{{prompt}}`,
 * `{{completion}}` and `{{field}}` / `{{row.field}}` from the dataset row (non-strings as
 * JSON). Judges are hackable (false positives, discrimination collapse); gate or clip them.
 *
 * @module
 */

import { checkFunction, checkName, checkNumber, checkOptions, messageOf, show } from "./_check.ts";
import type { Reward, RewardInput, Row } from "./types.ts";

/** Cache settings of {@link judgeReward}. */
export interface JudgeCacheOptions {
  /** Replies kept in memory (integer >= 1; default 10 000), least recently used evicted first. */
  maxEntries?: number;
  /**
   * A JSON file that persists every cached reply across runs (read once, rewritten atomically);
   * needs Deno's file system.
   */
  file?: string;
}

/** Options of {@link judgeReward}. */
export interface JudgeOptions<R extends Row = Row> {
  /** Server root, e.g. `http://localhost:8000` (a trailing `/v1` is accepted). */
  baseUrl: string;
  /** Model name sent in the request. */
  model: string;
  /** The user message: a template with `{{prompt}}`, `{{completion}}`, `{{field}}`, or a function. */
  promptTemplate: string | ((input: RewardInput<R>) => string);
  /** An optional system message. */
  system?: string;
  /** Reads the score from the reply (default {@link parseJudgeScore}); return null or throw if absent. */
  parseScore?: (reply: string, input: RewardInput<R>) => number | null;
  /** Cache settings, or `false` for none (default: in-memory LRU of 10 000 replies). */
  cache?: JudgeCacheOptions | false;
  /** Sent as `Authorization: Bearer …` when given. */
  apiKey?: string;
  /** Extra HTTP headers. */
  headers?: Record<string, string>;
  /** Sampling temperature (default 0). */
  temperature?: number;
  /** `max_tokens` of the request (default: the server's). */
  maxTokens?: number;
  /** Retries after a network error, 5xx or 429 (integer >= 0; default 3). */
  retries?: number;
  /** First backoff in ms, doubled each retry (>= 0; default 500). */
  backoffMs?: number;
  /** Time budget per sample, retries included (ms, > 0; default 60 000). */
  timeoutMs?: number;
  /** Metric key (default `"judge"`). */
  name?: string;
  /** The fetch to use (default the global `fetch`). */
  fetch?: typeof fetch;
}

/** Counters of a {@link JudgeReward}. */
export interface JudgeStats {
  /** HTTP requests sent (retries included). */
  requests: number;
  /** Scores served from the memory or file cache, or from an identical request in flight. */
  cacheHits: number;
  /** Retries after a network error, 5xx or 429. */
  retries: number;
  /** Samples that ended in an error (HTTP, malformed reply, unparseable score). */
  failures: number;
}

/** The reward returned by {@link judgeReward}, with its cache and counters. */
export interface JudgeReward<R extends Row = Row> extends Reward<R> {
  /** A snapshot of the counters. */
  stats(): JudgeStats;
  /** Empties the in-memory cache (the file, if any, is kept). */
  clearCache(): void;
  /** Resolves when pending cache-file writes are done. */
  flush(): Promise<void>;
}

/**
 * The default score parser: the last score-like number in the reply, where a score is a
 * fraction `a/b` or `a out of b` with `0 ≤ a ≤ b` (`Score: 7/10` → 0.7), a percentage up to 100
 * (`85%` → 0.85), or a plain number in [0, 1]. Numbers outside these forms (`Score: 7`) are
 * skipped; `null` when nothing qualifies.
 *
 * @example Usage
 * ```ts
 * import { parseJudgeScore } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(parseJudgeScore("Reasoning... Score: 7/10"), 0.7);
 * assert.equal(parseJudgeScore("3 of 5 steps hold. Final score: 0.6"), 0.6);
 * assert.equal(parseJudgeScore("I give it 8 out of 10."), 0.8);
 * assert.equal(parseJudgeScore("Score: 7"), null);
 * ```
 */
export function parseJudgeScore(reply: string): number | null {
  const re = /(\d+(?:\.\d+)?|\.\d+)\s*(?:(?:\/|out of)\s*(\d+(?:\.\d+)?)|(%))?/gi;
  let last: number | null = null;
  for (const m of String(reply).matchAll(re)) {
    const a = Number(m[1]);
    let v: number;
    if (m[2] !== undefined) {
      const b = Number(m[2]);
      if (!(b > 0) || a > b) continue;
      v = a / b;
    } else if (m[3] !== undefined) {
      if (a > 100) continue;
      v = a / 100;
    } else v = a;
    if (Number.isFinite(v) && v >= 0 && v <= 1) last = v;
  }
  return last;
}

class Lru {
  #map = new Map<string, string>();
  constructor(readonly max: number) {}
  get(key: string): string | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }
  set(key: string, value: string): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    while (this.#map.size > this.max) this.#map.delete(this.#map.keys().next().value!);
  }
  clear(): void {
    this.#map.clear();
  }
}

function fill<R extends Row>(template: string, input: RewardInput<R>): string {
  return template.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_, key: string) => {
    if (key === "prompt") return input.prompt;
    if (key === "completion") return input.completion;
    const field = key.startsWith("row.") ? key.slice(4) : key;
    if (!(field in input.row)) {
      throw new RangeError(
        `judgeReward: promptTemplate uses {{${key}}} but the row has no field "${field}"; add it to the row or change the template`,
      );
    }
    const v = input.row[field];
    return typeof v === "string" ? v : JSON.stringify(v);
  });
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A generative-judge reward (see the module doc for retries, caching and templates).
 *
 * @example Usage
 * ```ts
 * import { judgeReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * // A stand-in judge server: replies "Score: 9/10" to everything.
 * const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () =>
 *   Response.json({ choices: [{ message: { role: "assistant", content: "Score: 9/10" } }] }));
 * const judge = judgeReward({
 *   baseUrl: `http://127.0.0.1:${server.addr.port}`,
 *   model: "judge-model",
 *   promptTemplate: "Question: {{prompt}}\nReference: {{answer}}\nResponse: {{completion}}\nScore 0-10.",
 * });
 * const input = { prompt: "2+2?", completion: "4", row: { answer: "4" } };
 * const r = await scoreRewards([judge], [input, input]);
 * assert.deepEqual(r.totals, [0.9, 0.9]);
 * assert.equal(judge.stats().requests, 1); // the identical second request was a cache hit
 * await server.shutdown();
 * ```
 */
export function judgeReward<R extends Row = Row>(options: JudgeOptions<R>): JudgeReward<R> {
  const owner = "judgeReward";
  const opts = checkOptions<JudgeOptions<R>>(
    owner,
    options,
    "{baseUrl, model, promptTemplate, parseScore?, cache?, ...}",
  );
  if (typeof opts.baseUrl !== "string" || !/^https?:\/\//.test(opts.baseUrl)) {
    throw new TypeError(
      `${owner}: options.baseUrl must be an http(s) URL such as "http://localhost:8000", got ${
        show(opts.baseUrl)
      }`,
    );
  }
  const root = opts.baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
  const url = `${root}/v1/chat/completions`;
  const model = checkName(owner, "options.model", opts.model);
  const template = opts.promptTemplate;
  if (typeof template !== "string" && typeof template !== "function") {
    throw new TypeError(
      `${owner}: options.promptTemplate must be a string with {{prompt}}/{{completion}} or a function (input) => string, got ${
        show(template)
      }`,
    );
  }
  const parse = opts.parseScore === undefined
    ? (reply: string) => parseJudgeScore(reply)
    : checkFunction<NonNullable<JudgeOptions<R>["parseScore"]>>(
      owner,
      "options.parseScore",
      opts.parseScore,
      "a function (reply, input) => number | null",
    );
  const cacheOpts = opts.cache === false ? null : checkOptions<JudgeCacheOptions>(
    owner,
    opts.cache,
    "{maxEntries?, file?}",
  );
  const lru = cacheOpts === null ? null : new Lru(
    checkNumber(owner, "options.cache.maxEntries", cacheOpts.maxEntries ?? 10_000, {
      min: 1,
      integer: true,
    }),
  );
  const file = cacheOpts?.file;
  if (file !== undefined && (typeof file !== "string" || file === "")) {
    throw new TypeError(`${owner}: options.cache.file must be a file path, got ${show(file)}`);
  }
  if (file !== undefined && (globalThis as { Deno?: unknown }).Deno === undefined) {
    throw new Error(
      `${owner}: options.cache.file (${show(file)}) needs Deno's file system; in a browser leave ` +
        `it out (the in-memory cache still works)`,
    );
  }
  const temperature = checkNumber(owner, "options.temperature", opts.temperature ?? 0, { min: 0 });
  const maxTokens = opts.maxTokens === undefined
    ? undefined
    : checkNumber(owner, "options.maxTokens", opts.maxTokens, { min: 1, integer: true });
  const retries = checkNumber(owner, "options.retries", opts.retries ?? 3, {
    min: 0,
    integer: true,
  });
  const backoffMs = checkNumber(owner, "options.backoffMs", opts.backoffMs ?? 500, { min: 0 });
  const timeoutMs = checkNumber(owner, "options.timeoutMs", opts.timeoutMs ?? 60_000, {
    min: 0,
    minExclusive: true,
    allowInfinity: true,
  });
  const name = checkName(owner, "options.name", opts.name ?? "judge");
  const doFetch = opts.fetch ?? fetch;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
    ...(opts.headers ?? {}),
  };
  const stats: JudgeStats = { requests: 0, cacheHits: 0, retries: 0, failures: 0 };
  const inFlight = new Map<string, Promise<string>>();

  // The file cache: loaded once, rewritten atomically after each new reply, writes serialised.
  let fileEntries: Record<string, string> | null = null;
  let loading: Promise<Record<string, string>> | null = null;
  let writing: Promise<void> = Promise.resolve();
  const loadFile = (): Promise<Record<string, string>> => {
    if (file === undefined) return Promise.resolve({});
    loading ??= (async () => {
      let text: string;
      try {
        text = await Deno.readTextFile(file);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return (fileEntries = {});
        throw new Error(`${owner}: cannot read cache file ${file}: ${messageOf(e)}`);
      }
      try {
        const parsed = JSON.parse(text);
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
          throw new Error("not an object");
        }
        return (fileEntries = parsed as Record<string, string>);
      } catch (e) {
        throw new Error(
          `${owner}: cache file ${file} is not a JSON object (${
            messageOf(e)
          }); delete it or point options.cache.file elsewhere`,
        );
      }
    })();
    return loading;
  };
  const persist = (): Promise<void> => {
    if (file === undefined || fileEntries === null) return Promise.resolve();
    const entries = fileEntries;
    writing = writing.catch(() => {}).then(async () => {
      const tmp = `${file}.${crypto.randomUUID()}.tmp`;
      await Deno.writeTextFile(tmp, JSON.stringify(entries));
      await Deno.rename(tmp, file);
    });
    return writing;
  };

  const request = async (body: string, signal: AbortSignal): Promise<string> => {
    for (let attempt = 0;; attempt++) {
      let retryable: string;
      try {
        stats.requests++;
        const res = await doFetch(url, { method: "POST", headers, body, signal });
        if (res.status >= 500 || res.status === 429) {
          await res.body?.cancel();
          retryable = `HTTP ${res.status}`;
        } else if (!res.ok) {
          const text = await res.text();
          throw new Error(
            `${owner}: HTTP ${res.status} from ${url}: ${
              text.slice(0, 200)
            }; check options.baseUrl, model and apiKey`,
          );
        } else {
          const text = await res.text();
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            throw new Error(
              `${owner}: the reply from ${url} is not JSON: ${show(text.slice(0, 80))}`,
            );
          }
          const content = (json as { choices?: { message?: { content?: unknown } }[] })
            ?.choices?.[0]?.message?.content;
          if (typeof content !== "string") {
            throw new Error(
              `${owner}: the reply has no choices[0].message.content (got ${
                show(json)
              }); is ${url} an OpenAI-compatible chat endpoint?`,
            );
          }
          return content;
        }
      } catch (e) {
        if (signal.aborted) throw e;
        if (e instanceof Error && e.message.startsWith(`${owner}:`)) throw e;
        retryable = messageOf(e); // network error
      }
      if (attempt >= retries) {
        throw new Error(`${owner}: ${retryable} from ${url} after ${attempt + 1} attempts`);
      }
      stats.retries++;
      await sleep(backoffMs * 2 ** attempt, signal);
    }
  };

  const score = async (input: RewardInput<R>, ctx: { signal: AbortSignal }): Promise<number> => {
    try {
      const content = typeof template === "string" ? fill(template, input) : template(input);
      if (typeof content !== "string") {
        throw new TypeError(
          `${owner}: options.promptTemplate returned ${show(content)}; it must return a string`,
        );
      }
      const messages = [
        ...(opts.system !== undefined ? [{ role: "system", content: opts.system }] : []),
        { role: "user", content },
      ];
      const payload = {
        model,
        messages,
        temperature,
        ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
      };
      const key = await sha256(JSON.stringify([url, payload]));
      let reply = lru?.get(key);
      if (reply === undefined && lru !== null && file !== undefined) {
        reply = (await loadFile())[key];
        if (reply !== undefined) lru.set(key, reply);
      }
      let fresh = false;
      if (reply !== undefined) stats.cacheHits++;
      else {
        const pending = inFlight.get(key);
        if (pending) {
          stats.cacheHits++;
          reply = await pending;
        } else {
          const p = request(JSON.stringify(payload), ctx.signal);
          inFlight.set(key, p);
          try {
            reply = await p;
          } finally {
            inFlight.delete(key);
          }
          fresh = true;
        }
      }
      const s = parse(reply, input);
      if (typeof s !== "number" || !Number.isFinite(s)) {
        throw new Error(
          `${owner}: could not read a score from the judge's reply ${
            show(reply.slice(-120))
          }; expected a number in [0, 1] or a form like "Score: 7/10" (or pass options.parseScore)`,
        );
      }
      if (fresh && lru !== null) {
        lru.set(key, reply);
        if (file !== undefined) {
          (await loadFile())[key] = reply;
          await persist();
        }
      }
      return s;
    } catch (e) {
      stats.failures++;
      throw e;
    }
  };

  return Object.freeze({
    name,
    timeoutMs,
    score,
    stats: () => ({ ...stats }),
    clearCache: () => lru?.clear(),
    flush: () => writing,
  });
}
