/**
 * Configuration errors: every problem of a config is collected and reported at once, one line
 * per problem, in the form
 * `config: <dotted.key>: <what is wrong>; <how to fix it> (from <where the value came from>)`.
 *
 * Design decision: a config is assembled from layers (defaults, a recipe and the recipes it
 * extends, `--set` overrides, flag shortcuts), so "which value is bad" is not enough to fix it;
 * each problem also names the layer that set the value ({@link Provenance}). Problems are data
 * ({@link ConfigProblem}) so tests can assert on the key without parsing the text. A rule
 * between fields (`rollout.groupSize` must divide `rollout.batchSize`) is reported at one key
 * but may be broken by a value given for another: such a problem lists the other keys it read
 * (`related`), and its source names their layers too ({@link problemSource}), so a `--set` value
 * is never blamed on the defaults or the recipe that set the key the problem is filed under.
 *
 * @module
 */

/** One problem of a config. */
export interface ConfigProblem {
  /** The dotted key, e.g. `algorithm.estimator` (empty for the config as a whole). */
  path: string;
  /** What is wrong and how to fix it, e.g. `-1 is not allowed; use a number > 0`. */
  message: string;
  /** Where the value came from, e.g. `--set optimizer.lr=-1`; absent when unknown. */
  source?: string;
  /**
   * Other keys a rule between fields read (`rollout.batchSize` for a `rollout.groupSize` that
   * does not divide it): their sources join the problem's (see {@link problemSource}).
   */
  related?: readonly string[];
}

/**
 * Where each value of an assembled config came from: dotted key → a description of the layer
 * that set it (`recipe apps/train/recipes/grpo.yaml`, `--set trainer.steps=3`, `defaults`).
 *
 * @example Usage
 * ```ts
 * import { type Provenance } from "@rlvr/train";
 * import { sourceOf } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const p: Provenance = new Map([["optimizer", "defaults"], ["optimizer.lr", "--set optimizer.lr=1"]]);
 * assert.equal(sourceOf(p, "optimizer.lr"), "--set optimizer.lr=1");
 * assert.equal(sourceOf(p, "optimizer.betas"), "defaults");
 * ```
 */
export type Provenance = Map<string, string>;

/**
 * The layer that set `path`: the entry of `path` itself, else of its nearest parent, else of
 * the nearest child (an unknown section is known only through the keys under it), else
 * undefined.
 *
 * @example Usage
 * ```ts
 * import { sourceOf } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const p = new Map([["rollout.groupSize", "recipe a.yaml"]]);
 * assert.equal(sourceOf(p, "rollout.groupSize"), "recipe a.yaml");
 * assert.equal(sourceOf(p, "rollout"), "recipe a.yaml");
 * assert.equal(sourceOf(p, "trainer.seed"), undefined);
 * ```
 */
export function sourceOf(provenance: Provenance, path: string): string | undefined {
  const own = provenance.get(path);
  if (own !== undefined) return own;
  // Parents, nearest first; a list item's parent is the list (`rewards[0].type` → `rewards[0]`
  // → `rewards`), whose layer set the whole list.
  for (let i = path.length - 1; i > 0; i--) {
    if (path[i] !== "." && path[i] !== "[") continue;
    const parent = provenance.get(path.slice(0, i));
    if (parent !== undefined) return parent;
  }
  const prefix = path === "" ? "" : `${path}.`;
  for (const [key, source] of provenance) if (key.startsWith(prefix)) return source;
  return undefined;
}

/**
 * The source of a problem: the layer of its key and, for each of its `related` keys set by
 * another layer, `<key> from <layer>`, joined by `; `. Undefined when none is known.
 *
 * @example Usage
 * ```ts
 * import { problemSource } from "./errors.ts";
 * import assert from "node:assert/strict";
 * const p = new Map([
 *   ["rollout.groupSize", "defaults"],
 *   ["rollout.batchSize", "--set rollout.batchSize=12"],
 * ]);
 * assert.equal(
 *   problemSource(p, "rollout.groupSize", ["rollout.batchSize"]),
 *   "defaults; rollout.batchSize from --set rollout.batchSize=12",
 * );
 * assert.equal(problemSource(p, "rollout.groupSize"), "defaults");
 * ```
 */
export function problemSource(
  provenance: Provenance,
  path: string,
  related: readonly string[] = [],
): string | undefined {
  const own = sourceOf(provenance, path);
  const parts = own === undefined ? [] : [own];
  const seen = new Set(parts);
  for (const key of related) {
    const source = sourceOf(provenance, key);
    if (source === undefined || seen.has(source)) continue;
    seen.add(source);
    parts.push(`${key} from ${source}`);
  }
  return parts.length === 0 ? undefined : parts.join("; ");
}

/**
 * Formats one problem as the line printed to the user.
 *
 * @example Usage
 * ```ts
 * import { formatProblem } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   formatProblem({ path: "optimizer.lr", message: "-1 is not allowed; use a number > 0", source: "--set optimizer.lr=-1" }),
 *   "config: optimizer.lr: -1 is not allowed; use a number > 0 (from --set optimizer.lr=-1)",
 * );
 * ```
 */
export function formatProblem(problem: ConfigProblem): string {
  const where = problem.path === "" ? "" : `${problem.path}: `;
  const from = problem.source === undefined ? "" : ` (from ${problem.source})`;
  return `config: ${where}${problem.message}${from}`;
}

/**
 * A config that cannot be used: the message is one line per problem (see
 * {@link formatProblem}); `problems` holds them as data.
 *
 * @example Usage
 * ```ts
 * import { ConfigError } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const e = new ConfigError([{ path: "trainer.steps", message: "0 is too small; use an integer >= 1" }]);
 * assert.equal(e.message, "config: trainer.steps: 0 is too small; use an integer >= 1");
 * assert.equal(e.problems[0]!.path, "trainer.steps");
 * ```
 */
export class ConfigError extends Error {
  /** The problems, in the order they were found. */
  readonly problems: readonly ConfigProblem[];

  /** Builds the error from at least one problem. */
  constructor(problems: readonly ConfigProblem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/**
 * A short, stable rendering of a config value for messages: JSON for plain data, with
 * `Infinity` and long values handled.
 *
 * @example Usage
 * ```ts
 * import { showValue } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(showValue("grpx"), '"grpx"');
 * assert.equal(showValue(-0.001), "-0.001");
 * assert.equal(showValue(Infinity), "Infinity");
 * assert.equal(showValue(undefined), "nothing");
 * ```
 */
export function showValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "number") return String(value);
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
