/**
 * Field mapping: which column of a dataset row is the prompt, the answer and the uid, with
 * nested paths such as `meta.answer` or `reward_model.ground_truth` (veRL's layout).
 *
 * Design: a path is split on `.`; each part indexes an object key, or an array element when the
 * part is a non-negative integer (`prompt.0.content`). A key that itself contains a dot can be
 * reached because an exact top-level key is tried before splitting. A missing field is an error
 * that names the path, the part that was missing and the keys that were there. Without an
 * explicit uid field, a row's uid is a 53-bit hash of its prompt (as JSON), so it is stable when
 * rows are added, removed or reordered, and equal prompts share a uid.
 *
 * @module
 */

import { show } from "../_args.ts";
import { hash53 } from "../_prng.ts";

/** Which fields of a row hold what. */
export interface FieldMap {
  /** Path of the prompt (a string or a chat message list), e.g. `"question"` or `"prompt"`. */
  prompt: string;
  /** Path of the reference answer, e.g. `"answer"` or `"reward_model.ground_truth"`. */
  answer?: string;
  /** Path of a stable id (default: a hash of the prompt). */
  uid?: string;
}

/** The field map used when none is given: `prompt` and `answer`. */
export const DEFAULT_FIELDS: Readonly<FieldMap> = Object.freeze({
  prompt: "prompt",
  answer: "answer",
});

/** One mapped dataset row. */
export interface Example {
  /** Stable id (the uid field, or `h` + a hash of the prompt). */
  uid: string;
  /** The prompt value (string, or chat messages as in veRL parquet files). */
  prompt: unknown;
  /** The answer value (`undefined` when the map has no answer field). */
  answer: unknown;
  /** The whole row, for templates and reward functions. */
  row: Record<string, unknown>;
  /** 0-based position of the row among the source's data rows (bad rows included). */
  index: number;
  /** Where it came from, e.g. `"data.jsonl:12"` or `"data.parquet row 7"`. */
  source: string;
}

/**
 * A mapped field is missing or has the wrong kind of value; `path` is the mapped path and
 * `available` the keys that were there.
 *
 * @example Usage
 * ```ts
 * import { FieldError, getPath } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * try {
 *   getPath({ a: 1 }, "b");
 *   assert.fail("expected an error");
 * } catch (e) {
 *   assert.ok(e instanceof FieldError);
 *   assert.equal(e.path, "b");
 *   assert.deepEqual(e.available, ["a"]);
 * }
 * ```
 */
export class FieldError extends TypeError {
  /** The mapped path. */
  readonly path: string;
  /** The keys available where the lookup failed. */
  readonly available: string[];

  /** An error about field `path`. */
  constructor(message: string, path: string, available: string[]) {
    super(message);
    this.name = "FieldError";
    this.path = path;
    this.available = available;
  }
}

/** Result of {@link lookupPath}: found with a value, or not with the reason. */
export type PathLookup =
  | { found: true; value: unknown }
  | { found: false; missing: string; available: string[] };

function keysOf(v: unknown): string[] {
  if (Array.isArray(v)) return v.length === 0 ? [] : [`0..${v.length - 1}`];
  if (v !== null && typeof v === "object") return Object.keys(v);
  return [];
}

/**
 * Looks up a dotted path; reports the missing part and the keys available at that level.
 *
 * @example Usage
 * ```ts
 * import { lookupPath } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const row = { meta: { answer: "42" }, prompt: [{ role: "user", content: "hi" }] };
 * assert.deepEqual(lookupPath(row, "meta.answer"), { found: true, value: "42" });
 * assert.deepEqual(lookupPath(row, "prompt.0.content"), { found: true, value: "hi" });
 * assert.deepEqual(lookupPath(row, "meta.solution"), {
 *   found: false,
 *   missing: "meta.solution",
 *   available: ["answer"],
 * });
 * ```
 */
export function lookupPath(row: unknown, path: string): PathLookup {
  if (row !== null && typeof row === "object" && !Array.isArray(row) && Object.hasOwn(row, path)) {
    const value = (row as Record<string, unknown>)[path];
    if (value !== undefined) return { found: true, value };
  }
  const parts = path.split(".");
  let cur: unknown = row;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const here = parts.slice(0, i + 1).join(".");
    let next: unknown = undefined;
    let ok = false;
    if (Array.isArray(cur)) {
      if (/^\d+$/.test(part) && Number(part) < cur.length) {
        next = cur[Number(part)];
        ok = true;
      }
    } else if (cur !== null && typeof cur === "object" && Object.hasOwn(cur, part)) {
      next = (cur as Record<string, unknown>)[part];
      ok = true;
    }
    if (!ok || next === undefined) return { found: false, missing: here, available: keysOf(cur) };
    cur = next;
  }
  return { found: true, value: cur };
}

/**
 * The value at a dotted path, or a {@link FieldError} naming the path, `where` (e.g. file and line) and
 * the available keys.
 *
 * @example Usage
 * ```ts
 * import { getPath } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(getPath({ meta: { answer: 7 } }, "meta.answer"), 7);
 * assert.throws(() => getPath({ q: 1 }, "question", "train.jsonl:3"), /train\.jsonl:3.*"question".*q/);
 * ```
 */
export function getPath(row: unknown, path: string, where = "row"): unknown {
  const r = lookupPath(row, path);
  if (r.found) return r.value;
  const avail = r.available.length > 0
    ? r.available.map((k) => JSON.stringify(k)).join(", ")
    : "none";
  throw new FieldError(
    `${where}: field ${JSON.stringify(path)} is missing (no ${
      JSON.stringify(r.missing)
    }); available: ${avail}; map another field or fix the data`,
    path,
    r.available,
  );
}

/**
 * Maps a raw row to an {@link Example}; throws (naming `source`) when a mapped field is missing
 * or null, or the uid is not a string or number.
 *
 * @example Usage
 * ```ts
 * import { mapExample } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const ex = mapExample(
 *   { question: "1+1?", meta: { answer: "2" }, id: 17 },
 *   { prompt: "question", answer: "meta.answer", uid: "id" },
 *   0,
 *   "mem:1",
 * );
 * assert.deepEqual([ex.uid, ex.prompt, ex.answer], ["17", "1+1?", "2"]);
 * ```
 */
export function mapExample(
  row: unknown,
  fields: FieldMap,
  index: number,
  source: string,
): Example {
  if (row === null || typeof row !== "object" || Array.isArray(row)) {
    throw new TypeError(`${source}: a row must be a JSON object, got ${show(row)}`);
  }
  const prompt = getPath(row, fields.prompt, source);
  if (prompt === null) {
    throw new FieldError(
      `${source}: field ${JSON.stringify(fields.prompt)} (prompt) is null`,
      fields.prompt,
      Object.keys(row),
    );
  }
  let answer: unknown = undefined;
  if (fields.answer !== undefined) {
    answer = getPath(row, fields.answer, source);
    if (answer === null) {
      throw new FieldError(
        `${source}: field ${JSON.stringify(fields.answer)} (answer) is null`,
        fields.answer,
        Object.keys(row),
      );
    }
  }
  let uid: string;
  if (fields.uid !== undefined) {
    const raw = getPath(row, fields.uid, source);
    if (typeof raw !== "string" && typeof raw !== "number" && typeof raw !== "bigint") {
      throw new FieldError(
        `${source}: field ${JSON.stringify(fields.uid)} (uid) must be a string or number, got ${
          show(raw)
        }`,
        fields.uid,
        Object.keys(row),
      );
    }
    uid = String(raw);
  } else {
    uid = promptUid(prompt);
  }
  return { uid, prompt, answer, row: row as Record<string, unknown>, index, source };
}

/**
 * The default uid of a prompt: `h` + a base-36 53-bit hash of the prompt as JSON.
 *
 * @example Usage
 * ```ts
 * import { promptUid } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(promptUid("What is 2+2?"), promptUid("What is 2+2?"));
 * assert.notEqual(promptUid("What is 2+2?"), promptUid("What is 2+3?"));
 * assert.match(promptUid("x"), /^h[0-9a-z]+$/);
 * ```
 */
export function promptUid(prompt: unknown): string {
  const text = typeof prompt === "string"
    ? prompt
    : JSON.stringify(prompt, (_k, v) => typeof v === "bigint" ? v.toString() : v);
  return `h${hash53(text).toString(36)}`;
}
