/**
 * A metrics sink that appends one JSON object per line (JSON Lines): the record of truth of a run.
 *
 * Design decision: every record becomes exactly one line, written with a single `write` call on
 * a file opened for appending (`@rlvr/common`'s `JsonlWriter`, the workspace's one JSONL
 * module, opened with `torn: "repair"`), so lines are whole and ordered even when the process
 * dies mid-run, and a resumed run appends to the same file. JSON has no NaN or Infinity, and
 * silently turning a diverged loss into `null` would hide the one thing worth seeing, so
 * non-finite numbers are written as the strings `"NaN"`, `"Infinity"` and `"-Infinity"`
 * (`nonFinite: "string"`; {@link parseJsonlMetrics} turns them back into numbers).
 *
 * @module
 */

import { parseJsonl, reviveNonFinite } from "@rlvr/common";
import { JsonlWriter } from "@rlvr/common/fs";
import { type MetricsRecord, type MetricsSink, type MetricValue, recordEntries } from "./types.ts";

/**
 * Appends records to a `.jsonl` file, one line each.
 *
 * @example Usage
 * ```ts
 * import { JsonlSink, parseJsonlMetrics } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".jsonl" });
 * const sink = await JsonlSink.open(path);
 * await sink.write({ step: 1, loss: 0.5 });
 * await sink.write({ step: 2, loss: NaN, note: "diverged" });
 * await sink.close();
 * assert.deepEqual(parseJsonlMetrics(await Deno.readTextFile(path)), [
 *   { step: 1, loss: 0.5 },
 *   { step: 2, loss: NaN, note: "diverged" },
 * ]);
 * await Deno.remove(path);
 * ```
 */
export class JsonlSink implements MetricsSink {
  #file: JsonlWriter;

  private constructor(file: JsonlWriter) {
    this.#file = file;
  }

  /**
   * Opens `path` for appending (created if missing). A line torn by a crash is cut first.
   *
   * @param path The `.jsonl` file.
   * @returns The sink.
   *
   * @example Usage
   * ```ts
   * import { JsonlSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * await Deno.writeTextFile(path, '{"step":1}\n{"st'); // torn by a crash
   * const sink = await JsonlSink.open(path);
   * assert.equal(sink.repairedBytes, 4);
   * await sink.close();
   * assert.equal(await Deno.readTextFile(path), '{"step":1}\n');
   * await Deno.remove(path);
   * ```
   */
  static async open(path: string): Promise<JsonlSink> {
    return new JsonlSink(
      await JsonlWriter.open(path, { torn: "repair", nonFinite: "string", owner: "JsonlSink" }),
    );
  }

  /**
   * The file path.
   *
   * @example Usage
   * ```ts
   * import { JsonlSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const sink = await JsonlSink.open(path);
   * assert.equal(sink.path, path);
   * await sink.close();
   * await Deno.remove(path);
   * ```
   */
  get path(): string {
    return this.#file.path;
  }

  /**
   * Bytes of a torn last line removed when the file was opened (0 normally).
   *
   * @example Usage
   * ```ts
   * import { JsonlSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const sink = await JsonlSink.open(path);
   * assert.equal(sink.repairedBytes, 0);
   * await sink.close();
   * await Deno.remove(path);
   * ```
   */
  get repairedBytes(): number {
    return this.#file.repairedBytes;
  }

  /**
   * Appends one record as one line.
   *
   * @param record The metrics.
   *
   * @example Usage
   * ```ts
   * import { JsonlSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const sink = await JsonlSink.open(path);
   * await Promise.all([sink.write({ i: 0 }), sink.write({ i: 1 })]); // ordered, whole lines
   * await sink.close();
   * assert.equal(await Deno.readTextFile(path), '{"i":0}\n{"i":1}\n');
   * await Deno.remove(path);
   * ```
   */
  write(record: MetricsRecord): Promise<void> {
    try {
      recordEntries("JsonlSink", record);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#file.append(record);
  }

  /**
   * Waits for pending writes and closes the file. Idempotent.
   *
   * @example Usage
   * ```ts
   * import { JsonlSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const sink = await JsonlSink.open(path);
   * await sink.close();
   * await sink.close();
   * await assert.rejects(sink.write({ a: 1 }), /closed/);
   * await Deno.remove(path);
   * ```
   */
  close(): Promise<void> {
    return this.#file.close();
  }
}

/**
 * Parses the text of a metrics `.jsonl` file, turning `"NaN"`, `"Infinity"` and `"-Infinity"`
 * back into numbers. Blank lines are skipped.
 *
 * @param text The file contents.
 * @returns One record per line.
 *
 * @example Usage
 * ```ts
 * import { parseJsonlMetrics } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseJsonlMetrics('{"a":"Infinity","b":1}\n\n'), [{ a: Infinity, b: 1 }]);
 * ```
 */
export function parseJsonlMetrics(text: string): Record<string, MetricValue>[] {
  // A last line without its newline is read too (this reads text, not a file being written).
  const complete = text === "" || text.endsWith("\n") ? text : text + "\n";
  return parseJsonl<Record<string, MetricValue>>(complete, "text", "parseJsonlMetrics").records
    .map(reviveNonFinite);
}
