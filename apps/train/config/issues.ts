/**
 * Turning zod issues into {@link ConfigProblem}s whose text names the key, the bad value and
 * what is allowed (zod's own messages, "Too small: expected number to be >0", name neither the
 * value nor a fix).
 *
 * Design decision: unknown keys get a suggestion, either a close spelling among the keys of the
 * same section or the same key name in another section (`trainer.lr` → `optimizer.lr`), because
 * those two mistakes are the common ones with dotted `--set` overrides.
 *
 * @module
 */

import { closest, editDistance } from "@rlvr/common";

import { type ConfigProblem, type Provenance, showValue, sourceOf } from "./errors.ts";

/**
 * Renders a zod path as a dotted key, with list indices in brackets: `optimizer.betas[1]`.
 *
 * @example Usage
 * ```ts
 * import { dottedPath } from "./issues.ts";
 * import assert from "node:assert/strict";
 * assert.equal(dottedPath(["optimizer", "betas", 1]), "optimizer.betas[1]");
 * assert.equal(dottedPath([]), "");
 * ```
 */
export function dottedPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

// The did-you-mean helpers are shared with the registries (one implementation).
export { closest, editDistance };

/**
 * The fields of a zod issue that {@link describeIssues} reads (zod's issue types satisfy it),
 * so the public API does not expose zod's internal types.
 */
export interface IssueLike {
  /** Issue kind: `invalid_type`, `too_small`, `unrecognized_keys`, `custom`, ... */
  readonly code: string;
  /** Path from the parsed value's root. */
  readonly path: readonly PropertyKey[];
  /** Zod's message (used for `custom` issues). */
  readonly message: string;
  /** The offending input (present when parsed with `reportInput: true`). */
  readonly input?: unknown;
  /** `unrecognized_keys`: the unknown keys. */
  readonly keys?: readonly string[];
  /** `invalid_type`: the expected type. */
  readonly expected?: string;
  /** `invalid_value`: the allowed values. */
  readonly values?: readonly unknown[];
  /** `too_small`: the bound. */
  readonly minimum?: unknown;
  /** `too_big`: the bound. */
  readonly maximum?: unknown;
  /** Whether the bound itself is allowed. */
  readonly inclusive?: boolean;
  /** What was measured: `number`, `array`, `string`, ... */
  readonly origin?: string;
}

const PHRASES: Record<string, string> = {
  int: "an integer",
  number: "a number",
  boolean: "true or false",
  string: "a string",
  object: "a mapping of keys to values",
  record: "a mapping of keys to values",
  array: "a list",
  tuple: "a list",
  null: "null",
};

function bound(
  issue: { minimum?: unknown; maximum?: unknown; inclusive?: boolean; origin?: string },
  big: boolean,
): string {
  const limit = String(big ? issue.maximum : issue.minimum);
  const op = big ? (issue.inclusive ? "<=" : "<") : (issue.inclusive ? ">=" : ">");
  switch (issue.origin) {
    case "array":
    case "set":
      return big ? `a list of at most ${limit} items` : `a list of at least ${limit} items`;
    case "string":
      return big ? `a string of at most ${limit} characters` : `a non-empty string`;
    default:
      return `a number ${op} ${limit}`;
  }
}

/** What a {@link describeIssues} call needs to know about the schema, for suggestions. */
export interface IssueContext {
  /** Where each value came from. */
  provenance?: Provenance;
  /** Prefix added to every issue path (for issues of a nested schema). */
  prefix?: readonly PropertyKey[];
  /** The known keys of the section at a dotted path (for unknown-key messages). */
  knownKeys?: (path: string) => readonly string[];
  /** Every dotted key of the full schema (for "did you mean section.key"). */
  allKeys?: readonly string[];
}

function unknownKeyProblem(
  section: string,
  key: string,
  value: unknown,
  ctx: IssueContext,
): ConfigProblem {
  const path = section === "" ? key : `${section}.${key}`;
  const known = ctx.knownKeys?.(section) ?? [];
  let hint = "";
  const near = closest(key, known);
  if (near !== undefined) {
    hint = `; did you mean ${section === "" ? near : `${section}.${near}`}?`;
  } else {
    const elsewhere = (ctx.allKeys ?? []).filter((k) => k.split(".").at(-1) === key);
    if (elsewhere.length > 0) hint = `; did you mean ${elsewhere.join(" or ")}?`;
  }
  const knownText = known.length > 0
    ? `${hint === "" ? ";" : ""} keys of ${section === "" ? "the config" : section}: ${
      known.join(", ")
    }`
    : "";
  const problem: ConfigProblem = {
    path,
    message: `unknown key (value ${showValue(value)})${hint}${knownText}`,
  };
  const source = ctx.provenance === undefined ? undefined : sourceOf(ctx.provenance, path);
  if (source !== undefined) problem.source = source;
  return problem;
}

/**
 * Converts zod issues (parsed with `reportInput: true`, so each carries its input) into
 * problems of the form "value is not allowed; use ...".
 *
 * @example Usage
 * ```ts
 * import { describeIssues } from "./issues.ts";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 * const schema = z.strictObject({ lr: z.number().gt(0) });
 * const result = schema.safeParse({ lr: -1, lrr: 2 }, { reportInput: true });
 * const problems = describeIssues(result.error!.issues, { prefix: ["optimizer"], knownKeys: () => ["lr"] });
 * assert.deepEqual(problems.map((p) => p.path), ["optimizer.lr", "optimizer.lrr"]);
 * assert.equal(problems[0]!.message, "-1 is not allowed; use a number > 0");
 * assert.match(problems[1]!.message, /unknown key \(value 2\); did you mean optimizer.lr\?/);
 * ```
 */
export function describeIssues(
  issues: readonly IssueLike[],
  ctx: IssueContext = {},
): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const prefix = ctx.prefix ?? [];
  for (const issue of issues) {
    const fullPath = [...prefix, ...issue.path];
    const path = dottedPath(fullPath);
    const input = issue.input;
    if (issue.code === "unrecognized_keys") {
      const obj = (input ?? {}) as Record<string, unknown>;
      for (const key of issue.keys ?? []) out.push(unknownKeyProblem(path, key, obj[key], ctx));
      continue;
    }
    let message: string;
    switch (issue.code) {
      case "invalid_type": {
        const expected = issue.expected ?? "another type";
        // A schema can give a sharper hint than the type name ("use an integer").
        const hint = issue.message.startsWith("use ")
          ? issue.message
          : `use ${PHRASES[expected] ?? expected}`;
        message = input === undefined
          ? `missing; ${hint.replace(/^use /, "set it to ")}`
          : `${showValue(input)} is not allowed; ${hint}`;
        break;
      }
      case "too_small":
        message = `${showValue(input)} is not allowed; use ${bound(issue, false)}`;
        break;
      case "too_big":
        message = `${showValue(input)} is not allowed; use ${bound(issue, true)}`;
        break;
      case "invalid_value":
        message = `${showValue(input)} is not allowed; use one of ${
          (issue.values ?? []).map((v) => typeof v === "string" ? v : showValue(v)).join(", ")
        }`;
        break;
      case "invalid_union":
        message = input === undefined
          ? `missing; ${issue.message}`
          : `${showValue(input)} is not allowed; ${issue.message}`;
        break;
      case "custom":
        message = issue.message;
        break;
      default:
        message = `${showValue(input)} is not allowed: ${issue.message}`;
    }
    const problem: ConfigProblem = { path, message };
    const source = ctx.provenance === undefined ? undefined : sourceOf(ctx.provenance, path);
    if (source !== undefined) problem.source = source;
    out.push(problem);
  }
  return out;
}
