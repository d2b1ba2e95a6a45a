/**
 * The scoring core shared by the runner and the composite rewards (private): calls one reward
 * (per-sample or batched, sync or async) under a time budget and a concurrency limit, and turns
 * every failure into a fallback value plus a recorded reason. Nothing here throws because of a
 * sample; only a malformed reward object (no `score` and no `scoreBatch`) is rejected, up front.
 *
 * @module
 */

import { messageOf, show } from "./_check.ts";
import type {
  CompositeReward,
  Reward,
  RewardContext,
  RewardInput,
  RewardOutcome,
  RewardValue,
  Row,
} from "./types.ts";

/** Default time budget per reward call (ms). */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Default maximum of reward calls in flight at once. */
export const DEFAULT_CONCURRENCY = 32;

/** True when `reward` is a {@link CompositeReward}. */
export function isComposite<R extends Row>(reward: Reward<R>): reward is CompositeReward<R> {
  const c = reward as Partial<CompositeReward<R>>;
  return Array.isArray(c.components) && typeof c.combine === "function";
}

/** A counting semaphore: at most `limit` tasks run at once, the rest wait in FIFO order. */
export class Limiter {
  #active = 0;
  #queue: (() => void)[] = [];
  constructor(readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#active >= this.limit) {
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    } else this.#active++;
    try {
      return await task();
    } finally {
      const next = this.#queue.shift();
      if (next) next(); // hand the slot over without releasing it
      else this.#active--;
    }
  }
}

/** How one call of a reward function ended. */
export type CallResult<T> =
  | { kind: "ok"; value: T; ms: number }
  | { kind: "error" | "timeout"; reason: string; ms: number };

/**
 * Calls `fn` with a fresh AbortSignal; resolves (never rejects) with its value, its error, or a
 * timeout after `timeoutMs` (`Infinity`: no limit). On timeout the signal is aborted and the
 * call's eventual result is ignored. `outer` aborts the call early (recorded as an error).
 */
export async function callWithTimeout<T>(
  fn: (signal: AbortSignal) => T | Promise<T>,
  timeoutMs: number,
  outer?: AbortSignal,
): Promise<CallResult<T>> {
  const start = performance.now();
  const elapsed = () => performance.now() - start;
  if (outer?.aborted) {
    return { kind: "error", reason: `aborted: ${messageOf(outer.reason)}`, ms: 0 };
  }
  const ctrl = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let rejectStop: (e: unknown) => void = () => {};
  const stop = new Promise<never>((_, reject) => (rejectStop = reject));
  stop.catch(() => {});
  const onOuter = () => {
    ctrl.abort(outer?.reason);
    rejectStop(new Error(`aborted: ${messageOf(outer?.reason)}`));
  };
  outer?.addEventListener("abort", onOuter, { once: true });
  if (timeoutMs !== Infinity) {
    timer = setTimeout(() => {
      timedOut = true;
      const e = new DOMException(`timed out after ${timeoutMs} ms`, "TimeoutError");
      ctrl.abort(e);
      rejectStop(e);
    }, timeoutMs);
  }
  const call = (async () => await fn(ctrl.signal))();
  call.catch(() => {}); // a late rejection after a timeout must not become unhandled
  try {
    const value = await Promise.race([call, stop]);
    return { kind: "ok", value, ms: elapsed() };
  } catch (e) {
    if (timedOut) {
      return { kind: "timeout", reason: `timed out after ${timeoutMs} ms`, ms: elapsed() };
    }
    return { kind: "error", reason: messageOf(e), ms: elapsed() };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    outer?.removeEventListener("abort", onOuter);
  }
}

/** Settings of one scoring pass. */
export interface EvalSettings {
  /** Default time budget per call; a reward's own `timeoutMs` wins. */
  timeoutMs: number;
  /** Value used on error or timeout. */
  onError: number | null;
  /** Bounds the calls in flight. */
  limiter: Limiter;
  /** Aborts every pending call. */
  signal?: AbortSignal;
  /** Receives the outcomes of every reward scored, keyed by path (`composite/component`). */
  record?: (path: string, outcomes: readonly RewardOutcome[]) => void;
  /** Each reward object is scored once per pass, even when several composites use it. */
  memo: Map<Reward<never>, Promise<RewardOutcome[]>>;
}

/** Settings with the runner's defaults. */
export function defaultSettings(signal?: AbortSignal): EvalSettings {
  return {
    timeoutMs: DEFAULT_TIMEOUT_MS,
    onError: 0,
    limiter: new Limiter(DEFAULT_CONCURRENCY),
    memo: new Map(),
    ...(signal ? { signal } : {}),
  };
}

function invalidReason(value: unknown): string {
  return `returned ${show(value)}; a reward must return a finite number or null`;
}

function outcomeOf(value: unknown, ms: number, onError: number | null): RewardOutcome {
  if (value === null) return { value: null, status: "null", ms };
  if (typeof value === "number" && Number.isFinite(value)) return { value, status: "ok", ms };
  return { value: onError, status: "error", reason: invalidReason(value), ms };
}

function failed(
  n: number,
  kind: "error" | "timeout",
  reason: string,
  ms: number,
  onError: number | null,
): RewardOutcome[] {
  return Array.from({ length: n }, () => ({ value: onError, status: kind, reason, ms }));
}

/**
 * Throws a TypeError unless `reward` is a usable reward object (checked before any scoring,
 * recursively through composites).
 */
export function checkReward(owner: string, field: string, reward: unknown): void {
  const r = reward as Partial<Reward>;
  if (typeof reward !== "object" || reward === null) {
    throw new TypeError(
      `${owner}: ${field} must be a reward {name, score | scoreBatch} (see defineReward), got ${
        show(reward)
      }`,
    );
  }
  if (typeof r.name !== "string" || r.name.trim() === "") {
    throw new TypeError(
      `${owner}: ${field}.name must be a non-empty string (the metric key), got ${show(r.name)}`,
    );
  }
  if (typeof r.score !== "function" && typeof r.scoreBatch !== "function") {
    throw new TypeError(
      `${owner}: ${field} ("${r.name}") has neither score nor scoreBatch; build it with defineReward or defineBatchReward`,
    );
  }
  if (
    r.timeoutMs !== undefined &&
    !(typeof r.timeoutMs === "number" && r.timeoutMs > 0)
  ) {
    throw new RangeError(
      `${owner}: ${field}.timeoutMs ("${r.name}") must be a number > 0 or Infinity, got ${
        show(r.timeoutMs)
      }`,
    );
  }
  if (isComposite(r as Reward)) {
    (r as CompositeReward).components.forEach((c, k) =>
      checkReward(owner, `${field}.components[${k}]`, c)
    );
  }
}

/** Scores `inputs` with `reward`; never rejects because of a sample. */
export function evaluate<R extends Row>(
  reward: Reward<R>,
  inputs: readonly RewardInput<R>[],
  path: string,
  settings: EvalSettings,
): Promise<RewardOutcome[]> {
  const key = reward as unknown as Reward<never>;
  let pending = settings.memo.get(key);
  if (!pending) {
    pending = evaluateOnce(reward, inputs, path, settings);
    settings.memo.set(key, pending);
  }
  return pending.then((outcomes) => {
    settings.record?.(path, outcomes);
    return outcomes;
  });
}

async function evaluateOnce<R extends Row>(
  reward: Reward<R>,
  inputs: readonly RewardInput<R>[],
  path: string,
  settings: EvalSettings,
): Promise<RewardOutcome[]> {
  const n = inputs.length;
  if (n === 0) return [];
  const { onError } = settings;
  if (isComposite(reward)) {
    const start = performance.now();
    const parts = await Promise.all(
      reward.components.map((c) => evaluate(c, inputs, `${path}/${c.name}`, settings)),
    );
    try {
      const values = reward.combine(parts.map((o) => o.map((x) => x.value)), inputs);
      const ms = performance.now() - start;
      if (!Array.isArray(values) || values.length !== n) {
        return failed(
          n,
          "error",
          `combine returned ${
            Array.isArray(values) ? `${values.length} values` : show(values)
          } for ${n} inputs; it must return one value per input`,
          ms,
          onError,
        );
      }
      return values.map((v) => outcomeOf(v, ms, onError));
    } catch (e) {
      return failed(n, "error", messageOf(e), performance.now() - start, onError);
    }
  }
  const timeoutMs = reward.timeoutMs ?? settings.timeoutMs;
  if (typeof reward.scoreBatch === "function") {
    const batch = reward.scoreBatch.bind(reward);
    const res = await settings.limiter.run(() =>
      callWithTimeout((signal) => batch(inputs, { signal }), timeoutMs, settings.signal)
    );
    if (res.kind !== "ok") return failed(n, res.kind, res.reason, res.ms, onError);
    const values = res.value as unknown;
    if (!Array.isArray(values) || values.length !== n) {
      return failed(
        n,
        "error",
        `scoreBatch returned ${
          Array.isArray(values) ? `${values.length} values` : show(values)
        } for ${n} inputs; it must return one value per input, in order`,
        res.ms,
        onError,
      );
    }
    return values.map((v) => outcomeOf(v, res.ms, onError));
  }
  const score = reward.score!.bind(reward);
  return await Promise.all(inputs.map(async (input) => {
    const res = await settings.limiter.run(() =>
      callWithTimeout(
        (signal) => score(input, { signal } satisfies RewardContext),
        timeoutMs,
        settings.signal,
      )
    );
    if (res.kind !== "ok") return failed(1, res.kind, res.reason, res.ms, onError)[0]!;
    return outcomeOf(res.value, res.ms, onError);
  }));
}

/** Scores `inputs` with `reward` under the runner defaults and returns the values only. */
export async function valuesOf<R extends Row>(
  reward: Reward<R>,
  inputs: readonly RewardInput<R>[],
  signal?: AbortSignal,
): Promise<RewardValue[]> {
  const outcomes = await evaluate(reward, inputs, reward.name, defaultSettings(signal));
  return outcomes.map((o) => o.value);
}
