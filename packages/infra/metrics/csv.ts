/**
 * A metrics sink that appends CSV rows, for spreadsheets and quick plots.
 *
 * Design decisions:
 * - The header is fixed by the first record (or by `columns`), in key order, and written in the
 *   same `write` call as that record's row. A resumed run (the file already has lines) reuses the
 *   file's header.
 * - A record with a key that is not a column is refused with a {@link CsvSchemaError} naming the
 *   new keys, and nothing is written. The alternatives are worse: adding a column would mean
 *   rewriting the header of an append-only file (not atomic, and it breaks a reader that is
 *   tailing the file), and writing extra cells past the header makes a file that CSV readers
 *   misparse. Put every key in the first record (use `null` for values not known yet), pass
 *   `columns`, or use the JSONL sink for sparse metrics.
 * - A missing key or `null` is an empty cell; cells with a comma, quote or newline are quoted
 *   per RFC 4180; numbers use JavaScript's shortest round-trip form (`NaN`, `Infinity` as is).
 * - One row per `write` call on a file opened for appending, as the JSONL sink.
 *
 * @module
 */

import { AppendFile } from "./_append_file.ts";
import { type MetricsRecord, type MetricsSink, type MetricValue, recordEntries } from "./types.ts";

/**
 * Thrown when a record has keys that are not columns of the CSV file.
 *
 * @example Usage
 * ```ts
 * import { CsvSchemaError, CsvSink } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".csv" });
 * const sink = await CsvSink.open(path);
 * await sink.write({ step: 1 });
 * await assert.rejects(
 *   sink.write({ step: 2, kl: 0.1 }),
 *   (e: unknown) => e instanceof CsvSchemaError && e.newKeys[0] === "kl",
 * );
 * await sink.close();
 * await Deno.remove(path);
 * ```
 */
export class CsvSchemaError extends Error {
  /** The file. */
  readonly path: string;
  /** Keys of the record that are not columns. */
  readonly newKeys: readonly string[];
  /** The file's columns. */
  readonly columns: readonly string[];

  /**
   * Builds the message naming the new keys and the fix.
   *
   * @param path The file.
   * @param newKeys Keys that are not columns.
   * @param columns The file's columns.
   */
  constructor(path: string, newKeys: readonly string[], columns: readonly string[]) {
    super(
      `CsvSink (${path}): record has key${newKeys.length === 1 ? "" : "s"} ` +
        `${newKeys.map((k) => JSON.stringify(k)).join(", ")} that ${
          newKeys.length === 1 ? "is not a column" : "are not columns"
        } (columns: ${columns.join(", ")}); the header is fixed by the first record, so put ` +
        `every key in the first record (null where unknown), pass options.columns, or log ` +
        `sparse metrics to a JsonlSink; the row was not written`,
    );
    this.name = "CsvSchemaError";
    this.path = path;
    this.newKeys = Object.freeze([...newKeys]);
    this.columns = Object.freeze([...columns]);
  }
}

/**
 * Options of {@link CsvSink.open}.
 *
 * @example Usage
 * ```ts
 * import type { CsvSinkOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: CsvSinkOptions = { columns: ["step", "loss", "reward/mean"] };
 * assert.equal(o.columns!.length, 3);
 * ```
 */
export interface CsvSinkOptions {
  /** Fix the columns up front instead of taking them from the first record. */
  columns?: readonly string[];
}

/**
 * Quotes one CSV cell when needed (RFC 4180).
 *
 * @param value The metric value (null is an empty cell).
 * @returns The cell text.
 *
 * @example Usage
 * ```ts
 * import { csvCell } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   [csvCell(1.5), csvCell(null), csvCell('say "hi", ok'), csvCell(true)],
 *   ["1.5", "", '"say ""hi"", ok"', "true"],
 * );
 * ```
 */
export function csvCell(value: MetricValue): string {
  if (value === null) return "";
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * Splits one CSV line into cells (RFC 4180 quoting; the line holds no newline).
 *
 * @param line One line of a CSV file.
 * @returns The cells, unquoted.
 *
 * @example Usage
 * ```ts
 * import { parseCsvLine } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseCsvLine('a,"b,c",,"d""e"'), ["a", "b,c", "", 'd"e']);
 * ```
 */
export function parseCsvLine(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      cells.push(cell);
      cell = "";
    } else cell += c;
  }
  cells.push(cell);
  return cells;
}

/**
 * What {@link parseCsv} returns.
 *
 * @example Usage
 * ```ts
 * import type { CsvContent } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const c: CsvContent = { columns: ["step"], rows: [["1"]], partial: null };
 * assert.equal(c.rows.length, 1);
 * ```
 */
export interface CsvContent {
  /** The header's cells ([] for an empty file). */
  columns: string[];
  /** The complete rows after the header, as cells. */
  rows: string[][];
  /** Text after the last complete row (a write cut by a crash), or null. */
  partial: string | null;
}

/**
 * Splits the text of a CSV file into its header, its complete rows and a partial tail. A row
 * is complete when its newline outside quotes was written (RFC 4180 quoting, so a quoted cell
 * may span lines); `\r\n` endings are accepted.
 *
 * @param text The file's contents.
 * @returns Header, rows and the partial tail.
 *
 * @example Usage
 * ```ts
 * import { parseCsv } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const c = parseCsv('step,note\n1,"a\nb"\n2,x\n3,"cut');
 * assert.deepEqual(c.columns, ["step", "note"]);
 * assert.deepEqual(c.rows, [["1", "a\nb"], ["2", "x"]]);
 * assert.equal(c.partial, '3,"cut');
 * ```
 */
export function parseCsv(text: string): CsvContent {
  const lines: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (c === "\n" && !quoted) {
      const line = text.slice(start, i);
      lines.push(line.endsWith("\r") ? line.slice(0, -1) : line);
      start = i + 1;
    }
  }
  const partial = start < text.length ? text.slice(start) : null;
  const [header, ...rest] = lines;
  return {
    columns: header === undefined ? [] : parseCsvLine(header),
    rows: rest.map(parseCsvLine),
    partial,
  };
}

/**
 * Appends records as CSV rows under a header fixed by the first record.
 *
 * @example Usage
 * ```ts
 * import { CsvSink } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".csv" });
 * const sink = await CsvSink.open(path);
 * await sink.write({ step: 1, loss: 0.5, note: "a,b" });
 * await sink.write({ step: 2, loss: null }); // missing and null are empty cells
 * await sink.close();
 * assert.equal(await Deno.readTextFile(path), 'step,loss,note\n1,0.5,"a,b"\n2,,\n');
 * await Deno.remove(path);
 * ```
 */
export class CsvSink implements MetricsSink {
  #file: AppendFile;
  #columns: readonly string[] | null;

  private constructor(file: AppendFile, columns: readonly string[] | null) {
    this.#file = file;
    this.#columns = columns;
  }

  /**
   * Opens `path` for appending. When the file already has a header, it is the header (and must
   * equal `options.columns` when both exist).
   *
   * @param path The `.csv` file.
   * @param options Fixed columns.
   * @returns The sink.
   *
   * @example Usage
   * ```ts
   * import { CsvSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile({ suffix: ".csv" });
   * await Deno.writeTextFile(path, "step,loss\n1,0.5\n"); // an earlier run
   * const sink = await CsvSink.open(path);
   * assert.deepEqual(sink.columns, ["step", "loss"]);
   * await sink.write({ loss: 0.25, step: 2 }); // cells follow the header, not the key order
   * await sink.close();
   * assert.equal(await Deno.readTextFile(path), "step,loss\n1,0.5\n2,0.25\n");
   * await Deno.remove(path);
   * ```
   */
  static async open(path: string, options: CsvSinkOptions = {}): Promise<CsvSink> {
    const wanted = options.columns;
    if (wanted !== undefined) checkColumns(path, wanted);
    const file = await AppendFile.open(path);
    let columns: readonly string[] | null = null;
    if (file.existed) {
      const header = await AppendFile.firstLine(path);
      if (header !== null) columns = Object.freeze(parseCsvLine(header));
    }
    if (
      columns !== null && wanted !== undefined && columns.join("\u0000") !== wanted.join("\u0000")
    ) {
      await file.close();
      throw new Error(
        `CsvSink (${path}): the file's header is ${columns.join(",")} but options.columns is ` +
          `${wanted.join(",")}; write to a new file or drop options.columns to reuse the header`,
      );
    }
    if (columns === null && wanted !== undefined) {
      columns = Object.freeze([...wanted]);
      // Columns given up front: write the header now so that a reader sees it even before the
      // first record.
      await file.append(columns.map(csvCell).join(",") + "\n");
    }
    return new CsvSink(file, columns);
  }

  /**
   * The file path.
   *
   * @example Usage
   * ```ts
   * import { CsvSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const sink = await CsvSink.open(path);
   * assert.equal(sink.path, path);
   * await sink.close();
   * await Deno.remove(path);
   * ```
   */
  get path(): string {
    return this.#file.path;
  }

  /**
   * The columns, or null before the first record of a new file.
   *
   * @example Usage
   * ```ts
   * import { CsvSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const sink = await CsvSink.open(path);
   * assert.equal(sink.columns, null);
   * await sink.write({ a: 1, b: 2 });
   * assert.deepEqual(sink.columns, ["a", "b"]);
   * await sink.close();
   * await Deno.remove(path);
   * ```
   */
  get columns(): readonly string[] | null {
    return this.#columns;
  }

  /**
   * Appends one record as one row (with the header first, for the first record of a new file).
   *
   * @param record The metrics; every key must be a column.
   * @throws {CsvSchemaError} when the record has keys that are not columns (nothing is written).
   *
   * @example Usage
   * ```ts
   * import { CsvSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const sink = await CsvSink.open(path, { columns: ["step", "loss"] });
   * await sink.write({ step: 0 });
   * await sink.close();
   * assert.equal(await Deno.readTextFile(path), "step,loss\n0,\n");
   * await Deno.remove(path);
   * ```
   */
  write(record: MetricsRecord): Promise<void> {
    let text: string;
    try {
      if (this.#file.closed) throw new Error(`CsvSink (${this.path}): the sink is closed`);
      const entries = recordEntries("CsvSink", record);
      text = "";
      if (this.#columns === null) {
        const keys = entries.map(([k]) => k);
        checkColumns(this.path, keys);
        this.#columns = Object.freeze(keys);
        text = keys.map(csvCell).join(",") + "\n";
      }
      const columns = this.#columns;
      const known = new Set(columns);
      const extra = entries.map(([k]) => k).filter((k) => !known.has(k));
      if (extra.length > 0) throw new CsvSchemaError(this.path, extra, columns);
      const map = new Map(entries);
      text += columns.map((c) => csvCell(map.get(c) ?? null)).join(",") + "\n";
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#file.append(text);
  }

  /**
   * Waits for pending writes and closes the file. Idempotent.
   *
   * @example Usage
   * ```ts
   * import { CsvSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const sink = await CsvSink.open(path);
   * await sink.close();
   * await assert.rejects(sink.write({ a: 1 }), /closed/);
   * await Deno.remove(path);
   * ```
   */
  close(): Promise<void> {
    return this.#file.close();
  }
}

function checkColumns(path: string, columns: readonly string[]): void {
  if (columns.length === 0) {
    throw new RangeError(`CsvSink (${path}): no columns; the first record must have keys`);
  }
  const seen = new Set<string>();
  for (const c of columns) {
    if (c.length === 0) throw new RangeError(`CsvSink (${path}): a column name is empty`);
    if (seen.has(c)) throw new RangeError(`CsvSink (${path}): column ${JSON.stringify(c)} twice`);
    seen.add(c);
  }
}
