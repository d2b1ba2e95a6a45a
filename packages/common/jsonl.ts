/**
 * JSON Lines text, the pure half of the JSON Lines module (no file system): {@link parseJsonl}
 * splits text into complete records and a partial tail, {@link reviveNonFinite} reads back the
 * `"NaN"` / `"Infinity"` strings a writer with `nonFinite: "string"` wrote. The file readers and
 * writers built on them (`readJsonl`, `JsonlWriter`, `AppendFile`, ...) are in `jsonl_fs.ts`,
 * exported from `@rlvr/common/fs`.
 *
 * @module
 */

/**
 * What {@link readJsonl} and {@link parseJsonl} return.
 *
 * @example Usage
 * ```ts
 * import type { JsonlContent } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * const c: JsonlContent<{ step: number }> = { records: [{ step: 1 }], partial: null };
 * assert.equal(c.records[0]!.step, 1);
 * ```
 */
export interface JsonlContent<T> {
  /** The complete lines, parsed, in file order. */
  records: T[];
  /** The trailing fragment without a newline (a write cut by a crash), or null. */
  partial: string | null;
}

/**
 * Splits JSON Lines text into records and a partial tail (see the module doc). `where` names
 * the file in errors, `owner` the caller (default `"readJsonl"`).
 *
 * @param text The file's contents.
 * @param where The file's name, for errors.
 * @param owner The function named in errors.
 * @returns The complete records and the partial tail.
 *
 * @example Usage
 * ```ts
 * import { parseJsonl } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * const { records, partial } = parseJsonl('{"step":1}\n{"step":2}\n{"ste', "metrics.jsonl");
 * assert.deepEqual(records, [{ step: 1 }, { step: 2 }]);
 * assert.equal(partial, '{"ste');
 * assert.throws(() => parseJsonl('{"step":1}\nnope\n', "m.jsonl"), /m.jsonl line 2/);
 * ```
 */
export function parseJsonl<T = unknown>(
  text: string,
  where: string,
  owner = "readJsonl",
): JsonlContent<T> {
  const lines = text.split("\n");
  const tail = lines.pop()!; // text after the last newline: "" when the file ends cleanly
  const records: T[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      records.push(JSON.parse(line) as T);
    } catch (e) {
      throw new SyntaxError(
        `${owner}: ${where} line ${i + 1} is not JSON (${
          (e as Error).message
        }); the file is corrupted before its last line, which a crash cannot cause - fix or remove that line`,
      );
    }
  });
  return { records, partial: tail === "" ? null : tail };
}

const NON_FINITE: Readonly<Record<string, number>> = {
  NaN: NaN,
  Infinity: Infinity,
  "-Infinity": -Infinity,
};

/**
 * Turns the strings `"NaN"`, `"Infinity"` and `"-Infinity"` among a record's values back into
 * numbers (in place; see `nonFinite: "string"` of {@link JsonlWriterOptions}).
 *
 * @param record A parsed flat record.
 * @returns The same record.
 *
 * @example Usage
 * ```ts
 * import { reviveNonFinite } from "@rlvr/common";
 * import assert from "node:assert/strict";
 * assert.deepEqual(reviveNonFinite({ a: "Infinity", b: 1, c: "x" }), { a: Infinity, b: 1, c: "x" });
 * ```
 */
export function reviveNonFinite<T extends Record<string, unknown>>(record: T): T {
  for (const [k, v] of Object.entries(record)) {
    if (typeof v === "string" && Object.hasOwn(NON_FINITE, v)) {
      (record as Record<string, unknown>)[k] = NON_FINITE[v]!;
    }
  }
  return record;
}
