/**
 * `@rlvr/sampling/fs`: the dataset file readers of `@rlvr/sampling` (they need Deno and
 * `--allow-read`; the main entry runs anywhere and exports their types).
 *
 * - {@link readJsonl} streams a JSONL file line by line ({@link readLines} of `@rlvr/common/fs`,
 *   re-exported), {@link readParquet} a Parquet file row group by row group
 *   ({@link parquetColumns} lists its columns).
 * - {@link openDataset} picks the reader by extension, {@link loadExamples} reads a whole file.
 *
 * @example Usage
 * ```ts
 * import { loadExamples } from "@rlvr/sampling/fs";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".jsonl" });
 * await Deno.writeTextFile(path, '{"prompt": "1+1?", "answer": "2"}\n');
 * const { examples } = await loadExamples(path);
 * assert.equal(examples[0]!.answer, "2");
 * await Deno.remove(path);
 * ```
 *
 * @module
 */

export { type ExampleStream, readJsonl, readLines, type ReadOptions } from "./datasets/jsonl.ts";
export { parquetColumns, type ParquetReadOptions, readParquet } from "./datasets/parquet.ts";
export { loadExamples, openDataset } from "./datasets/load.ts";
