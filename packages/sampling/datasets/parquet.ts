/**
 * Streaming Parquet reader on `hyparquet`.
 *
 * Design: the file is read through an `AsyncBuffer` over a `Deno.FsFile` (seek + read of the byte
 * ranges hyparquet asks for, one at a time), so only the footer and the row group being decoded
 * are in memory; rows are decoded one row group at a time and yielded before the next group is
 * read. Before any row is read, every mapped field's column (the first part of a dotted path such
 * as `reward_model.ground_truth`, or the whole path when a column has exactly that name) is
 * checked against the schema: a missing one is a {@link DatasetError} naming the file, the
 * column and the available columns (always, whatever `onBadRow` says). Nested paths go into
 * struct columns and into JSON columns (hyparquet parses the JSON logical type). A row whose
 * mapped value is missing or null is a bad row: an error naming the file, the row and the
 * column, or skipped and counted with `onBadRow: "skip"`. INT64 values arrive as `bigint`.
 *
 * @module
 */

import {
  type AsyncBuffer,
  type FileMetaData,
  parquetMetadataAsync,
  parquetReadObjects,
  parquetSchema,
} from "hyparquet";
import { checkChoice } from "../_args.ts";
import { DatasetError, emptyStats, MAX_BAD_ROWS_KEPT } from "./errors.ts";
import { DEFAULT_FIELDS, type Example, FieldError, mapExample } from "./fields.ts";
import type { ExampleStream, ReadOptions } from "./jsonl.ts";

/** Options of {@link readParquet}. */
export interface ParquetReadOptions extends ReadOptions {
  /** Columns to read into `row` (default: all); the mapped columns are always read. */
  columns?: string[];
  /**
   * Columns whose byte arrays without a text annotation stay bytes (`Uint8Array`) instead of
   * being decoded as UTF-8 text (hyparquet's default for such columns): binary data, such as the
   * images of a Hugging Face `Image` column (`{bytes, path}` structs). Columns not in the file
   * are ignored. Default: none.
   */
  bytesColumns?: string[];
}

/** An open Parquet file as hyparquet's `AsyncBuffer`. */
interface OpenFile {
  buffer: AsyncBuffer;
  close(): void;
}

async function openBuffer(path: string): Promise<OpenFile> {
  const file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  let queue: Promise<unknown> = Promise.resolve();
  const read = async (start: number, end: number): Promise<ArrayBuffer> => {
    await file.seek(start, Deno.SeekMode.Start);
    const buf = new Uint8Array(end - start);
    let off = 0;
    while (off < buf.length) {
      const n = await file.read(buf.subarray(off));
      if (n === null) {
        throw new DatasetError(`${path}: file ended at byte ${start + off}, expected ${end}`, {
          file: path,
        });
      }
      off += n;
    }
    return buf.buffer;
  };
  return {
    buffer: {
      byteLength: size,
      slice(start: number, end: number = size): Promise<ArrayBuffer> {
        // One seek+read at a time: hyparquet may ask for several ranges concurrently.
        const p = queue.then(() => read(start, Math.min(end, size)));
        queue = p.catch(() => {});
        return p;
      },
    },
    close() {
      try {
        file.close();
      } catch {
        // already closed
      }
    },
  };
}

/** The top-level column a mapped path reads. */
function columnOf(path: string, columns: readonly string[]): string {
  return columns.includes(path) ? path : path.split(".")[0]!;
}

/**
 * The top-level column names of a Parquet file (reads only the footer).
 *
 * @example Usage
 * ```ts
 * import { parquetColumns } from "@rlvr/sampling/fs";
 * import { parquetWriteBuffer } from "hyparquet-writer";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".parquet" });
 * await Deno.writeFile(path, new Uint8Array(parquetWriteBuffer({
 *   columnData: [{ name: "prompt", data: ["a"], type: "STRING" }, { name: "answer", data: ["b"], type: "STRING" }],
 * })));
 * assert.deepEqual(await parquetColumns(path), ["prompt", "answer"]);
 * await Deno.remove(path);
 * ```
 */
export async function parquetColumns(path: string): Promise<string[]> {
  const f = await openBuffer(path);
  try {
    const metadata = await parquetMetadataAsync(f.buffer);
    return parquetSchema(metadata).children.map((c) => c.element.name);
  } finally {
    f.close();
  }
}

/**
 * Streams a Parquet file as mapped {@link Example}s, one row group at a time.
 *
 * @example Usage
 * ```ts
 * import { readParquet } from "@rlvr/sampling/fs";
 * import { parquetWriteBuffer } from "hyparquet-writer";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".parquet" });
 * await Deno.writeFile(path, new Uint8Array(parquetWriteBuffer({
 *   columnData: [
 *     { name: "question", data: ["1+1?", "2+2?", "3+3?"], type: "STRING" },
 *     { name: "meta", data: [{ answer: "2" }, { answer: "4" }, { answer: "6" }], type: "JSON" },
 *   ],
 *   rowGroupSize: 2, // two row groups: rows 0-1 and row 2
 * })));
 * const rows: unknown[] = [];
 * for await (const ex of readParquet(path, { fields: { prompt: "question", answer: "meta.answer" } })) {
 *   rows.push([ex.prompt, ex.answer]);
 * }
 * assert.deepEqual(rows, [["1+1?", "2"], ["2+2?", "4"], ["3+3?", "6"]]);
 * await assert.rejects(
 *   () => Array.fromAsync(readParquet(path, { fields: { prompt: "problem" } })),
 *   /column "problem".*available columns: "question", "meta"/,
 * );
 * await Deno.remove(path);
 * ```
 */
export function readParquet(path: string, options: ParquetReadOptions = {}): ExampleStream {
  const policy = checkChoice("readParquet", "onBadRow", options.onBadRow ?? "error", [
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
      const f = await openBuffer(path);
      try {
        let metadata: FileMetaData;
        try {
          metadata = await parquetMetadataAsync(f.buffer);
        } catch (e) {
          throw new DatasetError(
            `${path}: not a readable Parquet file (${(e as Error).message})`,
            { file: path, cause: e },
          );
        }
        const available = parquetSchema(metadata).children.map((c) => c.element.name);
        const mapped: [string, string][] = [["prompt", fields.prompt]];
        if (fields.answer !== undefined) mapped.push(["answer", fields.answer]);
        if (fields.uid !== undefined) mapped.push(["uid", fields.uid]);
        const needed = new Set<string>();
        for (const [role, p] of mapped) {
          const col = columnOf(p, available);
          if (!available.includes(col)) {
            throw new DatasetError(
              `${path}: column ${JSON.stringify(col)} (mapped as ${role}${
                col === p ? "" : ` via ${JSON.stringify(p)}`
              }) is not in the file; available columns: ${
                available.map((c) => JSON.stringify(c)).join(", ")
              }; map ${role} to one of them`,
              { file: path, column: col, available },
            );
          }
          needed.add(col);
        }
        let columns: string[] | undefined;
        if (options.columns !== undefined) {
          for (const c of options.columns) {
            if (!available.includes(c)) {
              throw new DatasetError(
                `${path}: column ${
                  JSON.stringify(c)
                } (in options.columns) is not in the file; available columns: ${
                  available.map((x) => JSON.stringify(x)).join(", ")
                }`,
                { file: path, column: c, available },
              );
            }
          }
          columns = [...new Set([...options.columns, ...needed])];
        }
        // The binary columns are read in a second pass, as bytes; the first reads the rest.
        const binary = new Set((options.bytesColumns ?? []).filter((c) => available.includes(c)));
        const wanted = columns ?? available;
        const asBytes = wanted.filter((c) => binary.has(c));
        const asText = columns || asBytes.length > 0
          ? { columns: wanted.filter((c) => !binary.has(c)) }
          : {};
        let rowStart = 0;
        for (const group of metadata.row_groups) {
          const rowEnd = rowStart + Number(group.num_rows);
          const rows = await parquetReadObjects({
            file: f.buffer,
            metadata,
            rowStart,
            rowEnd,
            ...asText,
          });
          if (asBytes.length > 0) {
            // The binary columns again, as bytes: each column chunk is read once either way.
            const raw = await parquetReadObjects({
              file: f.buffer,
              metadata,
              rowStart,
              rowEnd,
              columns: asBytes,
              utf8: false,
            });
            for (let k = 0; k < rows.length; k++) Object.assign(rows[k]!, raw[k]);
          }
          for (let k = 0; k < rows.length; k++) {
            const index = rowStart + k;
            const where = `${path} row ${index}`;
            let example: Example;
            try {
              example = mapExample({ ...rows[k] }, fields, index, where);
            } catch (e) {
              const fe = e instanceof FieldError ? e : undefined;
              const err = new DatasetError((e as Error).message, {
                file: path,
                row: index,
                cause: e,
                ...(fe ? { column: fe.path, available: fe.available } : {}),
              });
              if (policy === "error") throw err;
              stats.skipped++;
              if (stats.badRows.length < MAX_BAD_ROWS_KEPT) {
                stats.badRows.push({ row: index, reason: err.message });
              }
              continue;
            }
            stats.rows++;
            yield example;
          }
          rowStart = rowEnd;
        }
      } finally {
        f.close();
      }
    },
  };
}
