/**
 * Dotted command-line overrides, `--set optimizer.lr=1e-4` or a bare `optimizer.lr=1e-4`
 * argument (see `cli.ts`), as config layers.
 *
 * Design decision: the value is parsed as YAML (`1e-4` is a number, `true` a boolean, `null`
 * null, `[0.9, 0.95]` a list, `"1"` a string), so an override means exactly what the same text
 * means in a recipe file. Text containing `{{` (a prompt template, which YAML would read as a
 * nested mapping) and text that is not valid YAML on its own are kept as strings.
 *
 * @module
 */

import YAML from "yaml";
import { ConfigError } from "./errors.ts";
import type { Layer } from "./merge.ts";

const KEY = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * Parses a value as YAML (the text of a recipe); falls back to the raw string when it is not
 * valid YAML on its own.
 *
 * @example Usage
 * ```ts
 * import { parseScalar } from "./overrides.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseScalar("1e-4"), 1e-4);
 * assert.equal(parseScalar("true"), true);
 * assert.equal(parseScalar("'7'"), "7");
 * assert.deepEqual(parseScalar("[0.9, 0.95]"), [0.9, 0.95]);
 * assert.equal(parseScalar("{{question}}"), "{{question}}");
 * ```
 */
export function parseScalar(text: string): unknown {
  // `{{field}}` is a prompt template, which YAML would read as a nested flow mapping.
  if (text.includes("{{")) return text;
  try {
    return YAML.parse(text) ?? (text.trim() === "" ? "" : null);
  } catch {
    return text;
  }
}

/** A parsed `--set` expression. */
export interface Override {
  /** The key's parts: `["optimizer", "lr"]`. */
  path: string[];
  /** The parsed value. */
  value: unknown;
  /** The original text, for messages. */
  text: string;
}

/**
 * Parses `key=value` with a dotted key. Throws a {@link ConfigError} naming the expression and
 * the expected form.
 *
 * @example Usage
 * ```ts
 * import { parseOverride } from "./overrides.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseOverride("trainer.steps=3").path, ["trainer", "steps"]);
 * assert.equal(parseOverride("trainer.steps=3").value, 3);
 * assert.throws(() => parseOverride("trainer.steps"), /expected key=value/);
 * ```
 */
export function parseOverride(text: string): Override {
  const eq = text.indexOf("=");
  const key = eq < 0 ? text : text.slice(0, eq).trim();
  if (eq < 0 || !KEY.test(key)) {
    throw new ConfigError([{
      path: "",
      message: `override ${
        JSON.stringify(text)
      }: expected key=value with a dotted key of letters, digits and _, e.g. optimizer.lr=1e-4 (bare or after --set)`,
    }]);
  }
  return { path: key.split("."), value: parseScalar(text.slice(eq + 1)), text };
}

/**
 * The nested object `{a: {b: value}}` for path `["a", "b"]`.
 *
 * @example Usage
 * ```ts
 * import { nest } from "./overrides.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(nest(["a", "b"], 1), { a: { b: 1 } });
 * ```
 */
export function nest(path: readonly string[], value: unknown): Record<string, unknown> {
  let out: unknown = value;
  for (let i = path.length - 1; i >= 0; i--) out = { [path[i]!]: out };
  return out as Record<string, unknown>;
}

/**
 * One layer per `--set` expression, in order (a later expression wins), each with the source
 * `--set <expression>`.
 *
 * @example Usage
 * ```ts
 * import { overrideLayers } from "./overrides.ts";
 * import assert from "node:assert/strict";
 * const [layer] = overrideLayers(["optimizer.lr=1e-4"]);
 * assert.deepEqual(layer, { source: "--set optimizer.lr=1e-4", data: { optimizer: { lr: 1e-4 } } });
 * ```
 */
export function overrideLayers(expressions: readonly string[]): Layer[] {
  return expressions.map((text) => {
    const o = parseOverride(text);
    return { source: `--set ${text}`, data: nest(o.path, o.value) };
  });
}
