/**
 * The error type of the dataset readers and the per-read statistics.
 *
 * Design: one error class, {@link DatasetError}, carries where the problem is as fields (file,
 * line, row, column, the available columns) as well as in its message, so callers and tests can
 * match on data rather than on wording. A bad row (malformed JSON, a missing or null mapped
 * field) is an error by default; with `onBadRow: "skip"` it is skipped and counted in
 * {@link ReadStats}. A file-level problem (a mapped column missing from a Parquet schema, an
 * unreadable file) is always an error.
 *
 * @module
 */

/** Where a {@link DatasetError} happened. */
export interface DatasetErrorInfo {
  /** The file path. */
  file: string;
  /** 1-based line (JSONL). */
  line?: number;
  /** 0-based data row. */
  row?: number;
  /** The mapped column or field path at fault. */
  column?: string;
  /** The columns or keys that were there. */
  available?: string[];
  /** The start of the offending line (JSONL). */
  snippet?: string;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * A dataset could not be read: the message names the file and the line or row and, where it
 * applies, the column and the available ones.
 *
 * @example Usage
 * ```ts
 * import { DatasetError } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const e = new DatasetError("data.jsonl:3: malformed JSON", { file: "data.jsonl", line: 3 });
 * assert.equal(e.name, "DatasetError");
 * assert.equal(e.line, 3);
 * ```
 */
export class DatasetError extends Error {
  /** The file path. */
  readonly file: string;
  /** 1-based line (JSONL). */
  readonly line: number | undefined;
  /** 0-based data row. */
  readonly row: number | undefined;
  /** The mapped column or field path at fault. */
  readonly column: string | undefined;
  /** The columns or keys that were there. */
  readonly available: string[] | undefined;
  /** The start of the offending line (JSONL). */
  readonly snippet: string | undefined;

  /** An error with a message and its location. */
  constructor(message: string, info: DatasetErrorInfo) {
    super(message, info.cause === undefined ? undefined : { cause: info.cause });
    this.name = "DatasetError";
    this.file = info.file;
    this.line = info.line;
    this.row = info.row;
    this.column = info.column;
    this.available = info.available;
    this.snippet = info.snippet;
  }
}

/** A skipped row, as recorded in {@link ReadStats.badRows}. */
export interface BadRow {
  /** 0-based data row. */
  row: number;
  /** 1-based line (JSONL only). */
  line?: number;
  /** Why it was skipped. */
  reason: string;
}

/** Counters of one pass over a dataset file. */
export interface ReadStats {
  /** Rows yielded. */
  rows: number;
  /** Bad rows skipped (`onBadRow: "skip"`). */
  skipped: number;
  /** The first {@link MAX_BAD_ROWS_KEPT} skipped rows with reasons. */
  badRows: BadRow[];
}

/** How many skipped rows {@link ReadStats.badRows} keeps. */
export const MAX_BAD_ROWS_KEPT = 100;

/** What to do with a bad row: throw (default) or skip and count it. */
export type BadRowPolicy = "error" | "skip";

/** Fresh zeroed statistics. */
export function emptyStats(): ReadStats {
  return { rows: 0, skipped: 0, badRows: [] };
}
