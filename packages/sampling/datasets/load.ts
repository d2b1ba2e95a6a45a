/**
 * Opening a dataset file by its extension, streamed or loaded.
 *
 * Design: `.jsonl` / `.ndjson` files go to {@link readJsonl} and `.parquet` files to
 * {@link readParquet}; anything else is an error naming the accepted extensions.
 * {@link loadExamples} collects a stream into an array (what a shuffled, resumable
 * {@link EpochIterator} needs) and returns the read statistics with it.
 *
 * @module
 */

import type { ReadStats } from "./errors.ts";
import type { Example } from "./fields.ts";
import { type ExampleStream, readJsonl } from "./jsonl.ts";
import { type ParquetReadOptions, readParquet } from "./parquet.ts";

/**
 * A stream over a `.jsonl`, `.ndjson` or `.parquet` file.
 *
 * @example Usage
 * ```ts
 * import { openDataset } from "@rlvr/sampling/fs";
 * import assert from "node:assert/strict";
 * assert.throws(() => openDataset("data.csv"), /\.jsonl, \.ndjson or \.parquet/);
 * ```
 */
export function openDataset(path: string, options: ParquetReadOptions = {}): ExampleStream {
  const lower = path.toLowerCase();
  if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) return readJsonl(path, options);
  if (lower.endsWith(".parquet")) return readParquet(path, options);
  throw new TypeError(
    `openDataset: cannot tell the format of ${
      JSON.stringify(path)
    }; use a .jsonl, .ndjson or .parquet file (or call readJsonl / readParquet)`,
  );
}

/**
 * Reads a whole dataset file into memory.
 *
 * @example Usage
 * ```ts
 * import { loadExamples } from "@rlvr/sampling/fs";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".jsonl" });
 * await Deno.writeTextFile(path, '{"prompt": "a", "answer": 1}\n{"prompt": "b"}\n');
 * const { examples, stats } = await loadExamples(path, { onBadRow: "skip" });
 * assert.deepEqual(examples.map((e) => e.prompt), ["a"]);
 * assert.equal(stats.skipped, 1); // row 2 has no answer
 * await Deno.remove(path);
 * ```
 */
export async function loadExamples(
  path: string,
  options: ParquetReadOptions = {},
): Promise<{ examples: Example[]; stats: ReadStats }> {
  const stream = openDataset(path, options);
  const examples: Example[] = [];
  for await (const ex of stream) examples.push(ex);
  return { examples, stats: stream.stats };
}
