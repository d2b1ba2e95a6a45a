/**
 * Process-wide state: the default backend, the grad mode and the stack of memory scopes.
 *
 * GPU buffers are not garbage-collected, so ownership is explicit: every tensor created inside
 * {@link tidy} is disposed when the scope ends unless it is returned or passed to {@link keep}.
 * The scope stack holds plain sets; a tensor that is disposed early simply does nothing later.
 *
 * @module
 */

import type { Backend } from "./backend/types.ts";
import { createCpuBackend } from "./backend/cpu/cpu_backend.ts";

/** Anything that owns backend memory and can release it. */
export interface Disposable {
  /** Releases the memory; calling twice is harmless. */
  dispose(): void;
}

let defaultBackend: Backend | null = null;
let gradEnabled = true;
let scopes: Set<Disposable>[] = [];

/**
 * The backend new tensors are created on when none is named: the CPU backend unless
 * {@link setBackend} chose another.
 *
 * @example Usage
 * ```ts
 * import { getBackend } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(typeof getBackend().name, "string");
 * ```
 */
export function getBackend(): Backend {
  defaultBackend ??= createCpuBackend();
  return defaultBackend;
}

/**
 * Sets the default backend for tensors created from now on.
 *
 * @example Usage
 * ```ts
 * import { createCpuBackend, getBackend, setBackend } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const before = getBackend();
 * setBackend(createCpuBackend({ precision: "f64" }));
 * assert.equal(getBackend().name, "cpu-f64");
 * setBackend(before);
 * ```
 */
export function setBackend(backend: Backend): void {
  defaultBackend = backend;
}

/**
 * Runs `fn` with `backend` as the default backend, then restores the previous one. An async
 * `fn` keeps the backend until its promise settles (do not interleave it with other code that
 * creates tensors).
 *
 * @example Usage
 * ```ts
 * import { createCpuBackend, tensor, withBackend } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const t = withBackend(createCpuBackend({ precision: "f64" }), () => tensor([0.1]));
 * assert.equal(t.backend.name, "cpu-f64");
 * ```
 */
export function withBackend<T>(backend: Backend, fn: () => T): T {
  const before = defaultBackend;
  defaultBackend = backend;
  return settle(fn, () => {
    defaultBackend = before;
  });
}

/** Calls `fn`, then `restore` when it returns, throws, or (for a promise) settles. */
function settle<T>(fn: () => T, restore: () => void): T {
  let result: T;
  try {
    result = fn();
  } catch (e) {
    restore();
    throw e;
  }
  if (result instanceof Promise) return result.finally(restore) as T;
  restore();
  return result;
}

/** True while operations record the autograd graph (outside {@link noGrad}).  *
 * @example Usage
 * ```ts
 * import { isGradEnabled, noGrad } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(isGradEnabled(), true);
 * assert.equal(noGrad(() => isGradEnabled()), false);
 * ```
 */
export function isGradEnabled(): boolean {
  return gradEnabled;
}

/**
 * Runs `fn` without recording gradients, as `torch.no_grad()` does: rollouts and evaluation
 * should run here. Works for async functions too (grad mode is restored when the promise
 * settles; do not interleave it with concurrent training code).
 *
 * @example Usage
 * ```ts
 * import { noGrad, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = tensor([2], { requiresGrad: true });
 * const y = noGrad(() => w.mul(3));
 * assert.equal(y.requiresGrad, false);
 * ```
 */
export function noGrad<T>(fn: () => T): T {
  const before = gradEnabled;
  gradEnabled = false;
  return settle(fn, () => {
    gradEnabled = before;
  });
}

/**
 * Runs `fn` with gradients recorded even inside {@link noGrad} or a backward pass, as
 * `torch.enable_grad()` does (activation checkpointing recomputes a forward pass this way).
 *
 * @example Usage
 * ```ts
 * import { enableGrad, isGradEnabled, noGrad } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.equal(noGrad(() => enableGrad(() => isGradEnabled())), true);
 * ```
 */
export function enableGrad<T>(fn: () => T): T {
  const before = gradEnabled;
  gradEnabled = true;
  return settle(fn, () => {
    gradEnabled = before;
  });
}

/** Registers a new tensor with the innermost scope (internal). */
export function track(t: Disposable): void {
  scopes[scopes.length - 1]?.add(t);
}

/**
 * Removes `value` (a tensor, or tensors inside arrays/objects) from every open scope so that
 * {@link tidy} does not dispose it. Returns `value`.
 *
 * @example Usage
 * ```ts
 * import { keep, tensor, tidy } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * let kept = tensor([0]);
 * tidy(() => {
 *   kept = keep(tensor([1, 2]));
 * });
 * assert.deepEqual(await kept.toArray(), [1, 2]);
 * ```
 */
export function keep<T>(value: T): T {
  for (const t of disposablesIn(value)) for (const s of scopes) s.delete(t);
  return value;
}

/**
 * Runs `fn` in a memory scope: every tensor created inside is disposed when it returns, except
 * the tensors in its result (found inside arrays and plain objects) and those passed to
 * {@link keep}. `fn` must be synchronous; for async code use `using` or `dispose()`.
 *
 * @example Usage
 * ```ts
 * import { getBackend, tensor, tidy } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const before = getBackend().memory().liveBuffers;
 * const y = tidy(() => tensor([1, 2]).mul(2).add(1));
 * assert.equal(getBackend().memory().liveBuffers, before + 1);
 * assert.deepEqual(await y.toArray(), [3, 5]);
 * y.dispose();
 * ```
 */
export function tidy<T>(fn: () => T): T {
  const scope = new Set<Disposable>();
  scopes.push(scope);
  let result: T;
  try {
    result = fn();
  } catch (e) {
    scopes.pop();
    for (const t of scope) t.dispose();
    throw e;
  }
  scopes.pop();
  if (result instanceof Promise) {
    for (const t of scope) t.dispose();
    throw new TypeError(
      "tidy: fn returned a Promise; tidy scopes must be synchronous (use `using` in async code)",
    );
  }
  const survivors = new Set(disposablesIn(result));
  for (const t of scope) if (!survivors.has(t)) t.dispose();
  for (const t of survivors) track(t);
  return result;
}

/** Runs `fn` with no open scope, so what it creates belongs to the caller (internal). */
export function untracked<T>(fn: () => T): T {
  const saved = scopes;
  scopes = [];
  try {
    return fn();
  } finally {
    scopes = saved;
  }
}

function isDisposable(v: unknown): v is Disposable {
  return typeof v === "object" && v !== null && typeof (v as Disposable).dispose === "function";
}

function* disposablesIn(value: unknown, depth = 0): Generator<Disposable> {
  if (depth > 8 || value === null || typeof value !== "object") return;
  if (isDisposable(value)) {
    yield value;
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) yield* disposablesIn(v, depth + 1);
  } else if (Object.getPrototypeOf(value) === Object.prototype || value instanceof Map) {
    const vals = value instanceof Map ? value.values() : Object.values(value);
    for (const v of vals) yield* disposablesIn(v, depth + 1);
  }
}
