/**
 * One registry idiom for every named set of functions in the workspace: advantage estimators
 * (`@rlvr/advantage`), policy losses, loss aggregations and KL estimators (`@rlvr/objectives`).
 * Each is a {@link Registry} with the same key rule, the same errors and the same order.
 *
 * Design decisions:
 * - **One key rule.** A key is a lowercase letter, then lowercase letters, digits and `_`; `-`
 *   joins words and one final `+` is allowed: veRL's names (`grpo`, `reinforce_plus_plus`),
 *   the aggregation modes (`seq-mean-token-mean`) and the straight-through KL estimators (`k3+`)
 *   all fit, and a key can be written in a config file or on a command line without quoting.
 *   A registry may pass its own rule.
 * - **Registering a taken key is an error** unless `{ override: true }`: two modules that pick
 *   the same name fail loudly instead of the later import winning silently.
 * - **One order**: {@link Registry.names} and {@link Registry.entries} list keys in registration
 *   order; replacing a key with `override` keeps its place.
 * - **Errors name the kind and the value**: a bad key or a non-function is a `TypeError`, a
 *   duplicate or an unknown key a `RangeError`; an unknown key lists every valid key and, when
 *   one is a likely typo of it (edit distance at most a third of its length, and at least 1),
 *   suggests it.
 *
 * @module
 */

import { closest } from "./closest.ts";

/** The default key rule of {@link Registry} (see the module doc). */
const DEFAULT_KEY = /^[a-z][a-z0-9_]*(?:-[a-z0-9_]+)*\+?$/;
const DEFAULT_KEY_RULE =
  'a lowercase letter, then lowercase letters, digits and _, words joined by -, optionally one final + (like "grpo", "seq-mean-token-mean", "k3+")';

/** Options of the {@link Registry} constructor. */
export interface RegistryOptions {
  /**
   * The pattern every key must match (default: a lowercase letter, then lowercase letters,
   * digits and `_`, words joined by `-`, optionally one final `+`).
   */
  key?: RegExp;
  /** The key rule in words, for the error on a bad key (default: the default rule's). */
  keyRule?: string;
}

/** Options of {@link Registry.register}. */
export interface RegisterOptions {
  /** Replace the function of a key that is taken (default false: that is an error). */
  override?: boolean;
}

/** A value as errors quote it: strings in JSON quotes, other values shortened. */
function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (typeof value === "bigint" || typeof value === "symbol") return String(value);
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/**
 * A named set of functions of one kind, in registration order, with one key rule and uniform
 * errors (see the module doc). Packages keep one private instance per kind and expose
 * `registerX` / `getX` / `xNames` functions over it.
 *
 * @typeParam F The function type of the registered values.
 *
 * @example Usage
 * ```ts
 * import { Registry } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * const scalers = new Registry<(x: number) => number>("scaler");
 * scalers.register("double", (x) => 2 * x);
 * scalers.register("half", (x) => x / 2);
 * assert.equal(scalers.get("double")(3), 6);
 * assert.deepEqual(scalers.names(), ["double", "half"]); // registration order
 * assert.throws(() => scalers.register("double", (x) => x), /pass \{ override: true \}/);
 * assert.throws(
 *   () => scalers.get("dubble"),
 *   /^RangeError: unknown scaler "dubble"; valid keys: double, half \(did you mean "double"\?\)$/,
 * );
 * ```
 */
export class Registry<F extends (...args: never[]) => unknown> {
  /** What the registered functions are ("estimator", "policy loss", ...), used in errors. */
  readonly kind: string;
  readonly #fns = new Map<string, F>();
  readonly #key: RegExp;
  readonly #keyRule: string;

  /**
   * An empty registry of `kind` (a non-empty phrase such as `"estimator"`), with the default key
   * rule or `options.key`.
   *
   * @example Usage
   * ```ts
   * import { Registry } from "@rlvr/common";
   * import assert from "node:assert/strict";
   * const upper = new Registry<() => void>("handler", { key: /^[A-Z]+$/, keyRule: "capitals" });
   * upper.register("ON", () => {});
   * assert.throws(() => upper.register("on", () => {}), /invalid handler key "on": capitals/);
   * ```
   */
  constructor(kind: string, options: RegistryOptions = {}) {
    if (typeof kind !== "string" || kind.trim() === "") {
      throw new TypeError(`Registry: kind must be a non-empty string, got ${show(kind)}`);
    }
    if (options.key !== undefined && !(options.key instanceof RegExp)) {
      throw new TypeError(`Registry: options.key must be a RegExp, got ${show(options.key)}`);
    }
    this.kind = kind;
    this.#key = options.key ?? DEFAULT_KEY;
    this.#keyRule = options.keyRule ??
      (options.key === undefined ? DEFAULT_KEY_RULE : `keys must match ${options.key}`);
  }

  /**
   * Registers `fn` under `key`. A key that breaks the key rule or an `fn` that is not a function
   * is a `TypeError`; a taken key is a `RangeError` unless `{ override: true }`, which replaces
   * the function and keeps the key's place in {@link Registry.names}.
   *
   * @example Usage
   * ```ts
   * import { Registry } from "@rlvr/common";
   * import assert from "node:assert/strict";
   * const r = new Registry<() => number>("source");
   * r.register("zero", () => 0);
   * r.register("zero", () => 1, { override: true });
   * assert.equal(r.get("zero")(), 1);
   * assert.throws(() => r.register("Zero", () => 0), TypeError);
   * assert.throws(() => r.register("one", 1 as never), /source "one" must be a function, got 1/);
   * ```
   */
  register(key: string, fn: F, options: RegisterOptions = {}): void {
    if (typeof key !== "string" || !this.#key.test(key)) {
      throw new TypeError(`invalid ${this.kind} key ${show(key)}: ${this.#keyRule}`);
    }
    if (typeof fn !== "function") {
      throw new TypeError(`${this.kind} ${show(key)} must be a function, got ${show(fn)}`);
    }
    if (this.#fns.has(key) && options?.override !== true) {
      throw new RangeError(
        `${this.kind} ${show(key)} is already registered; pass { override: true } to replace it`,
      );
    }
    this.#fns.set(key, fn);
  }

  /**
   * The function registered under `key`. An unknown key is a `RangeError` listing every valid
   * key in registration order, with a "did you mean" when one is a likely typo of `key`;
   * `context` (e.g. the calling function and argument) prefixes the message.
   *
   * @example Usage
   * ```ts
   * import { Registry } from "@rlvr/common";
   * import assert from "node:assert/strict";
   * const r = new Registry<() => string>("greeting");
   * r.register("hello", () => "hi");
   * assert.equal(r.get("hello")(), "hi");
   * assert.throws(
   *   () => r.get("helo", "greet: style"),
   *   /^RangeError: greet: style: unknown greeting "helo"; valid keys: hello \(did you mean "hello"\?\)$/,
   * );
   * ```
   */
  get(key: string, context?: string): F {
    const fn = typeof key === "string" ? this.#fns.get(key) : undefined;
    if (fn !== undefined) return fn;
    const names = this.names();
    const near = typeof key === "string" ? closest(key, names) : undefined;
    throw new RangeError(
      `${context === undefined ? "" : `${context}: `}unknown ${this.kind} ${
        show(key)
      }; valid keys: ${names.length === 0 ? "(none registered)" : names.join(", ")}${
        near === undefined ? "" : ` (did you mean ${show(near)}?)`
      }`,
    );
  }

  /**
   * Whether `key` is registered (false for anything that is not a registered string).
   *
   * @example Usage
   * ```ts
   * import { Registry } from "@rlvr/common";
   * import assert from "node:assert/strict";
   * const r = new Registry<() => void>("hook");
   * r.register("start", () => {});
   * assert.equal(r.has("start"), true);
   * assert.equal(r.has("stop"), false);
   * ```
   */
  has(key: string): boolean {
    return typeof key === "string" && this.#fns.has(key);
  }

  /**
   * The registered keys, in registration order (a fresh array).
   *
   * @example Usage
   * ```ts
   * import { Registry } from "@rlvr/common";
   * import assert from "node:assert/strict";
   * const r = new Registry<() => void>("hook");
   * for (const k of ["b", "a", "c"]) r.register(k, () => {});
   * assert.deepEqual(r.names(), ["b", "a", "c"]);
   * ```
   */
  names(): string[] {
    return [...this.#fns.keys()];
  }

  /**
   * The `[key, function]` pairs, in registration order (a fresh array).
   *
   * @example Usage
   * ```ts
   * import { Registry } from "@rlvr/common";
   * import assert from "node:assert/strict";
   * const r = new Registry<(x: number) => number>("op");
   * r.register("neg", (x) => -x);
   * r.register("sq", (x) => x * x);
   * assert.deepEqual(r.entries().map(([k, f]) => [k, f(3)]), [["neg", -3], ["sq", 9]]);
   * ```
   */
  entries(): [string, F][] {
    return [...this.#fns.entries()];
  }
}
