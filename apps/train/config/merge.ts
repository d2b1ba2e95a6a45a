/**
 * Merging config layers (defaults, recipes, overrides) into one raw config, recording which
 * layer set each key.
 *
 * Rules: mappings merge key by key; anything else (scalars, lists, `null`) replaces. One
 * exception keeps settings from belonging to the wrong thing: when a layer changes
 * `task.name` (or switches between `task.name` and `task.data`), `algorithm.estimator` or
 * `algorithm.loss`, the options of the previous choice (`task.options`,
 * `algorithm.estimatorOptions`, `algorithm.lossOptions`) are dropped, and only the options the
 * same layer gives apply; countdown's `count` means nothing to the arithmetic task, nor GRPO's
 * `epsilon` to RLOO.
 *
 * @module
 */

import type { Provenance } from "./errors.ts";

/** One source of config values. */
export interface Layer {
  /** Shown in error messages: `defaults`, `recipe apps/train/recipes/dapo.yaml`, `--set a.b=1`. */
  source: string;
  /** A (partial) config. */
  data: Record<string, unknown>;
}

/** What {@link mergeLayers} returns. */
export interface Merged {
  /** The merged raw config (not validated). */
  value: Record<string, unknown>;
  /** Dotted key → source of the layer that last set it. */
  provenance: Provenance;
}

/**
 * True for `{...}` objects (not arrays, not null, not class instances).
 *
 * @example Usage
 * ```ts
 * import { isPlainObject } from "./merge.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isPlainObject({ a: 1 }));
 * assert.ok(!isPlainObject([1]) && !isPlainObject(null) && !isPlainObject(new Date()));
 * ```
 */
export function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

interface Dependent {
  section: string;
  key: string;
  clears: readonly { field: string; reset: () => unknown }[];
}

const DEPENDENTS: readonly Dependent[] = [
  {
    section: "task",
    key: "name",
    clears: [{ field: "options", reset: () => undefined }, {
      field: "data",
      reset: () => undefined,
    }],
  },
  {
    section: "task",
    key: "data",
    clears: [{ field: "name", reset: () => undefined }, {
      field: "options",
      reset: () => undefined,
    }],
  },
  {
    section: "algorithm",
    key: "estimator",
    clears: [{ field: "estimatorOptions", reset: () => ({}) }],
  },
  { section: "algorithm", key: "loss", clears: [{ field: "lossOptions", reset: () => ({}) }] },
];

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function forget(provenance: Provenance, path: string): void {
  for (const key of [...provenance.keys()]) {
    if (key === path || key.startsWith(`${path}.`)) provenance.delete(key);
  }
}

function record(provenance: Provenance, path: string, value: unknown, source: string): void {
  provenance.set(path, source);
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) record(provenance, `${path}.${k}`, v, source);
  }
}

function apply(
  target: Record<string, unknown>,
  data: Record<string, unknown>,
  prefix: string,
  source: string,
  provenance: Provenance,
): void {
  for (const [key, value] of Object.entries(data)) {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    const current = target[key];
    if (isPlainObject(value) && isPlainObject(current)) {
      if (prefix === "") {
        for (const dep of DEPENDENTS) {
          if (dep.section !== key || value[dep.key] === undefined) continue;
          if (sameValue(current[dep.key], value[dep.key])) continue;
          for (const { field, reset } of dep.clears) {
            if (!(field in current)) continue;
            const fresh = reset();
            const fieldPath = `${path}.${field}`;
            forget(provenance, fieldPath);
            if (fresh === undefined) delete current[field];
            else {
              current[field] = fresh;
              provenance.set(fieldPath, source);
            }
          }
        }
      }
      provenance.set(path, provenance.get(path) ?? source);
      apply(current, value, path, source, provenance);
    } else {
      forget(provenance, path);
      target[key] = structuredClone(value);
      record(provenance, path, value, source);
    }
  }
}

/**
 * Merges layers in order (later wins) into a fresh object; the layers are not modified.
 *
 * @example Usage
 * ```ts
 * import { mergeLayers } from "./merge.ts";
 * import assert from "node:assert/strict";
 * const { value, provenance } = mergeLayers([
 *   { source: "defaults", data: { optimizer: { lr: 1e-5, betas: [0.9, 0.999] } } },
 *   { source: "--set optimizer.lr=1e-4", data: { optimizer: { lr: 1e-4 } } },
 * ]);
 * assert.deepEqual(value, { optimizer: { lr: 1e-4, betas: [0.9, 0.999] } });
 * assert.equal(provenance.get("optimizer.lr"), "--set optimizer.lr=1e-4");
 * assert.equal(provenance.get("optimizer.betas"), "defaults");
 * // a new estimator drops the previous estimator's options
 * const m = mergeLayers([
 *   { source: "a", data: { algorithm: { estimator: "grpo", estimatorOptions: { epsilon: 0 } } } },
 *   { source: "b", data: { algorithm: { estimator: "rloo" } } },
 * ]);
 * assert.deepEqual(m.value, { algorithm: { estimator: "rloo", estimatorOptions: {} } });
 * ```
 */
export function mergeLayers(layers: readonly Layer[]): Merged {
  const value: Record<string, unknown> = {};
  const provenance: Provenance = new Map();
  for (const layer of layers) apply(value, layer.data, "", layer.source, provenance);
  return { value, provenance };
}
