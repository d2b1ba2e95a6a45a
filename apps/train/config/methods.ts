/**
 * User methods from modules: `algorithm.estimator`, `algorithm.loss` and `algorithm.aggregation`
 * may name a module export (`./my_adv.ts#myAdv`, `default` without `#`) instead of a registry
 * key, and `plugins: [./my_methods.ts]` lists modules that register names themselves
 * (`registerEstimator`, `registerPolicyLoss`, `registerAggregation`), as veRL's
 * `@register_adv_est` decorators do on import.
 *
 * Design decisions:
 * - **Loaded before validation** (`loadConfig` calls {@link loadMethods} on the merged layers),
 *   so the schema's registry checks and the trial calls of `checks.ts` (each method run on a
 *   small synthetic batch before step 1) see the user's methods like built-ins, and their errors
 *   name the module.
 * - **A path value stays in the config** (so `config.yaml` and `--resume` load the same module);
 *   the function is registered under {@link methodKey}, the export's name in snake_case (`myAdv`
 *   → `my_adv`), and the run looks it up by that key. An export whose key is a built-in name is
 *   refused (rename it): a user method never silently replaces veRL's.
 * - Relative paths resolve against the working directory (as `rewards[].path` and `--data` do).
 *
 * @module
 */

import { type EstimatorFn, estimatorNames, registerEstimator } from "@rlvr/advantage";
import {
  type AggregationFn,
  aggregationNames,
  type PolicyLossFn,
  policyLossNames,
  registerAggregation,
  registerPolicyLoss,
} from "@rlvr/objectives";

/** The config keys that may name a module export, with their registry. */
const SLOTS = {
  estimator: {
    kind: "estimator",
    names: estimatorNames,
    register: (k: string, f: unknown) => registerEstimator(k, f as EstimatorFn, { override: true }),
  },
  loss: {
    kind: "policy loss",
    names: policyLossNames,
    register: (k: string, f: unknown) =>
      registerPolicyLoss(k, f as PolicyLossFn, { override: true }),
  },
  aggregation: {
    kind: "aggregation",
    names: aggregationNames,
    register: (k: string, f: unknown) =>
      registerAggregation(k, f as AggregationFn, { override: true }),
  },
} as const;

const PATH = /^(?:\.{1,2}\/|\/|file:|https?:)[^#]*\.(?:ts|mts|js|mjs)(?:#([A-Za-z_$][\w$]*))?$/;

/** Keys registered from modules, by path value (a module may be loaded twice; its key not). */
const loaded = new Map<string, string>();
/** Built-in names at first use, so a user export cannot take one. */
let builtins: Set<string> | null = null;

/**
 * Whether a config value names a module export (`./file.ts#name`, `/abs/file.ts`, `https:`).
 *
 * @example Usage
 * ```ts
 * import { isMethodPath } from "./methods.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isMethodPath("./examples/methods/my_adv.ts#myAdv"), true);
 * assert.equal(isMethodPath("grpo"), false);
 * ```
 */
export function isMethodPath(value: string): boolean {
  return PATH.test(value);
}

/**
 * Whether {@link loadMethods} registered this module-path value (so its {@link methodKey} names
 * the user's function, not a built-in that happens to share the name).
 *
 * @example Usage
 * ```ts
 * import { isLoadedMethod } from "./methods.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isLoadedMethod("./never_loaded.ts#grpo"), false);
 * ```
 */
export function isLoadedMethod(value: string): boolean {
  return loaded.has(value);
}

function snake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "").toLowerCase();
}

/**
 * The registry key a config value is looked up by: the value itself for a registry key, the
 * export's name in snake_case for a module path (`default`: the file's name).
 *
 * @example Usage
 * ```ts
 * import { methodKey } from "./methods.ts";
 * import assert from "node:assert/strict";
 * assert.equal(methodKey("grpo"), "grpo");
 * assert.equal(methodKey("./examples/methods/my_adv.ts#myAdv"), "my_adv");
 * assert.equal(methodKey("./lib/tokenBalanced.ts"), "token_balanced");
 * ```
 */
export function methodKey(value: string): string {
  const m = PATH.exec(value);
  if (m === null) return value;
  const name = m[1] ?? value.split("#")[0]!.split("/").pop()!.replace(/\.[a-z]+$/, "");
  const key = snake(name);
  return /^[a-z]/.test(key) ? key : `user_${key}`;
}

/**
 * The URL of a module path. `node:path` and `node:url` are imported here, when a path is
 * loaded (in Deno, by `loadConfig`), not with this file: the training session, which runs in a
 * browser too, imports it for {@link methodKey}.
 */
async function moduleUrl(path: string, cwd: string): Promise<string> {
  if (/^(?:file|https?):/.test(path)) return path;
  const { isAbsolute, resolve } = await import("node:path");
  const { pathToFileURL } = await import("node:url");
  return pathToFileURL(isAbsolute(path) ? path : resolve(cwd, path)).href;
}

async function importModule(path: string, cwd: string, where: string) {
  try {
    return await import(await moduleUrl(path, cwd)) as Record<string, unknown>;
  } catch (e) {
    throw new TypeError(
      `${where}: cannot load ${JSON.stringify(path)}: ${
        (e as Error).message.split("\n")[0]
      }; give a path (relative to ${cwd}) to a .ts or .js module`,
    );
  }
}

/**
 * Imports the config's `plugins` and the modules its `algorithm.estimator`, `loss` and
 * `aggregation` name, registering the named exports (see the module doc). `raw` is the merged,
 * not yet validated config; errors name the key, the module and the fix.
 *
 * @example Usage
 * ```ts
 * import { loadMethods } from "./methods.ts";
 * import { estimatorNames } from "@rlvr/advantage";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/adv.ts`,
 *   "export const signAdv = (x: { rewards: Float64Array }) => { const a = Array.from(x.rewards, Math.sign); return { advantages: a, returns: a }; };");
 * await loadMethods({ algorithm: { estimator: "./adv.ts#signAdv" } }, dir);
 * assert.ok(estimatorNames().includes("sign_adv"));
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadMethods(raw: unknown, cwd: string = Deno.cwd()): Promise<void> {
  if (typeof raw !== "object" || raw === null) return;
  const config = raw as { plugins?: unknown; algorithm?: Record<string, unknown> };
  builtins ??= new Set(Object.values(SLOTS).flatMap((s) => s.names()));
  if (config.plugins != null) {
    if (!Array.isArray(config.plugins) || config.plugins.some((p) => typeof p !== "string")) {
      throw new TypeError(
        `plugins: ${
          JSON.stringify(config.plugins)
        } must be a list of module paths, e.g. [./my_methods.ts]`,
      );
    }
    for (const [i, p] of (config.plugins as string[]).entries()) {
      await importModule(p, cwd, `plugins[${i}]`);
    }
  }
  const a = config.algorithm;
  if (typeof a !== "object" || a === null) return;
  for (const [slot, spec] of Object.entries(SLOTS)) {
    const value = a[slot];
    if (typeof value !== "string" || !isMethodPath(value)) continue;
    const where = `algorithm.${slot}`;
    const key = methodKey(value);
    if (loaded.get(value) === key) continue;
    if (builtins.has(key)) {
      throw new TypeError(
        `${where}: ${value} would register as ${
          JSON.stringify(key)
        }, the name of a built-in ${spec.kind}; rename the export`,
      );
    }
    const path = value.split("#")[0]!;
    const exportName = value.includes("#") ? value.split("#")[1]! : "default";
    const mod = await importModule(path, cwd, where);
    const fn = mod[exportName];
    if (typeof fn !== "function") {
      const fns = Object.keys(mod).filter((k) => typeof mod[k] === "function");
      throw new TypeError(
        `${where}: ${path} has no function export ${JSON.stringify(exportName)} (${
          fns.length > 0 ? `its functions: ${fns.join(", ")}` : "it exports no function"
        }); write ${path}#<export>`,
      );
    }
    spec.register(key, fn);
    loaded.set(value, key);
  }
}

/** What a sampler stands in for a user method it never runs (see {@link withoutUserMethods}). */
const STAND_INS = { estimator: "grpo", loss: "vanilla", aggregation: "seq-mean-token-mean" };

/**
 * A copy of a raw config whose module-path estimator, loss and aggregation are replaced by
 * built-ins, with `plugins` dropped: for rollout workers, which sample and never run the
 * trainer's method, and must not import code a (possibly forged) run record names.
 *
 * @example Usage
 * ```ts
 * import { withoutUserMethods } from "./methods.ts";
 * import assert from "node:assert/strict";
 * const raw = { plugins: ["./m.ts"], algorithm: { estimator: "./a.ts#myAdv", loss: "gspo" } };
 * assert.deepEqual(withoutUserMethods(raw), { algorithm: { estimator: "grpo", loss: "gspo" } });
 * ```
 */
export function withoutUserMethods<T>(raw: T): T {
  if (typeof raw !== "object" || raw === null) return raw;
  const { plugins: _, ...rest } = raw as Record<string, unknown>;
  const a = rest.algorithm;
  if (typeof a === "object" && a !== null) {
    const algorithm = { ...(a as Record<string, unknown>) };
    for (const [slot, standIn] of Object.entries(STAND_INS)) {
      const v = algorithm[slot];
      if (typeof v === "string" && isMethodPath(v)) algorithm[slot] = standIn;
    }
    rest.algorithm = algorithm;
  }
  return rest as T;
}
