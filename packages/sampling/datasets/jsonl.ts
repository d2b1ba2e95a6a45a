/**
 * Streaming JSONL reader.
 *
 * Design: the file is read line by line with `readLines` of `@rlvr/common` (the workspace's one
 * JSONL module, re-exported here), so memory stays at one chunk plus one line however large the
 * file is. Lines are numbered from 1; blank lines are ignored (they are neither rows nor bad
 * rows); `\r\n` endings and a UTF-8 BOM are accepted. Each non-blank line must be a JSON object; it is mapped with a
 * {@link FieldMap} (default `prompt`/`answer`). A malformed line or a missing mapped field throws a
 * {@link DatasetError} naming the file, the line number and a snippet of the line, unless
 * `onBadRow: "skip"`, which skips it and counts it in `stats`. Each iteration re-reads the file
 * and resets `stats`; breaking out of a `for await` closes the file.
 *
 * @module
 */

import { readLines } from "@rlvr/common/fs";
import { checkChoice } from "../_args.ts";
import {
  type BadRowPolicy,
  DatasetError,
  emptyStats,
  MAX_BAD_ROWS_KEPT,
  type ReadStats,
} from "./errors.ts";
import { DEFAULT_FIELDS, type Example, FieldError, type FieldMap, mapExample } from "./fields.ts";

// The line reader is the workspace's one (`@rlvr/common`); `@rlvr/sampling` keeps exporting it.
export { readLines };

/** Options of the dataset readers. */
export interface ReadOptions {
  /** Which fields hold the prompt, answer and uid (default `{ prompt: "prompt", answer: "answer" }`). */
  fields?: FieldMap;
  /** `"error"` (default) throws on a bad row; `"skip"` skips and counts it. */
  onBadRow?: BadRowPolicy;
}

/** A re-iterable stream of examples with the statistics of the current (or last) pass. */
export interface ExampleStream extends AsyncIterable<Example> {
  /** The file. */
  readonly path: string;
  /** Counters of the current or last pass. */
  readonly stats: ReadStats;
}

const SNIPPET = 60;

function snippetOf(line: string): string {
  const t = line.trim();
  return t.length > SNIPPET ? `${t.slice(0, SNIPPET)}...` : t;
}

/**
 * Streams a JSONL file as mapped {@link Example}s, line by line.
 *
 * @example Usage
 * ```ts
 * import { readJsonl } from "@rlvr/sampling/fs";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const path = `${dir}/train.jsonl`;
 * await Deno.writeTextFile(
 *   path,
 *   '{"question": "1+1?", "meta": {"answer": "2"}}\n{"question": oops}\n{"question": "2+2?", "meta": {"answer": "4"}}\n',
 * );
 * const stream = readJsonl(path, {
 *   fields: { prompt: "question", answer: "meta.answer" },
 *   onBadRow: "skip",
 * });
 * const answers: unknown[] = [];
 * for await (const ex of stream) answers.push(ex.answer);
 * assert.deepEqual(answers, ["2", "4"]);
 * assert.equal(stream.stats.skipped, 1);
 * assert.equal(stream.stats.badRows[0]!.line, 2);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function readJsonl(path: string, options: ReadOptions = {}): ExampleStream {
  const policy = checkChoice("readJsonl", "onBadRow", options.onBadRow ?? "error", [
    "error",
    "skip",
  ]);
  const fields = options.fields ?? DEFAULT_FIELDS;
  let stats = emptyStats();
  return {
    path,
    get stats() {
      return stats;
    },
    async *[Symbol.asyncIterator]() {
      stats = emptyStats();
      let row = 0;
      for await (const { line, text } of readLines(path)) {
        if (text.trim() === "") continue;
        const where = `${path}:${line}`;
        const index = row++;
        let example: Example;
        try {
          let value: unknown;
          try {
            value = JSON.parse(text);
          } catch (e) {
            throw new DatasetError(
              `${where}: malformed JSON (${(e as Error).message}); the line starts ${
                JSON.stringify(snippetOf(text))
              }`,
              { file: path, line, row: index, snippet: snippetOf(text), cause: e },
            );
          }
          try {
            example = mapExample(value, fields, index, where);
          } catch (e) {
            const fe = e instanceof FieldError ? e : undefined;
            const info = {
              file: path,
              line,
              row: index,
              snippet: snippetOf(text),
              cause: e,
              ...(fe ? { column: fe.path, available: fe.available } : {}),
            };
            throw new DatasetError(
              `${(e as Error).message}; the line starts ${JSON.stringify(snippetOf(text))}`,
              info,
            );
          }
        } catch (e) {
          if (policy === "error") throw e;
          stats.skipped++;
          if (stats.badRows.length < MAX_BAD_ROWS_KEPT) {
            stats.badRows.push({ row: index, line, reason: (e as Error).message });
          }
          continue;
        }
        stats.rows++;
        yield example;
      }
    },
  };
}
