/**
 * Append-only JSON Lines files (`metrics.jsonl`, `eval.jsonl`, `samples.jsonl`): a writer that
 * hands each record to the OS as one complete line, a reader that tolerates a crash, and
 * truncation for resume.
 *
 * Design decisions:
 * - A line counts only when its `\n` was written. The writer issues `JSON + "\n"` as one
 *   buffer, so a crash leaves at most one partial last line with no newline; the reader ignores
 *   it (even when it happens to parse) and reports it, and truncation removes it.
 * - Each line reaches the OS before `append` resolves (Deno's files are unbuffered), so another
 *   process (`deno task report` during a run) sees every finished step; `durable: true` also
 *   fsyncs each line, for machines that may lose power.
 * - A malformed line *before* the last one is not a crash artifact but corruption, and is an
 *   error naming the file and the line rather than silently dropped.
 * - Opening a writer on a file whose last line is partial is an error: appending would glue
 *   the next record to the fragment. Resume truncates first.
 *
 * @module
 */

import { writeFileAtomic } from "./atomic.ts";

/** What {@link readJsonl} returns. */
export interface JsonlContent<T> {
  /** The complete lines, parsed, in file order. */
  records: T[];
  /** The trailing fragment without a newline (a write cut by a crash), or null. */
  partial: string | null;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Splits JSON Lines text into records and a partial tail (see the module doc). `where` names
 * the file in errors.
 *
 * @example Usage
 * ```ts
 * import { parseJsonl } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const { records, partial } = parseJsonl('{"step":1}\n{"step":2}\n{"ste', "metrics.jsonl");
 * assert.deepEqual(records, [{ step: 1 }, { step: 2 }]);
 * assert.equal(partial, '{"ste');
 * assert.throws(() => parseJsonl('{"step":1}\nnope\n', "m.jsonl"), /m.jsonl line 2/);
 * ```
 */
export function parseJsonl<T = unknown>(text: string, where: string): JsonlContent<T> {
  const lines = text.split("\n");
  const tail = lines.pop()!; // text after the last newline: "" when the file ends cleanly
  const records: T[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      records.push(JSON.parse(line) as T);
    } catch (e) {
      throw new SyntaxError(
        `readJsonl: ${where} line ${i + 1} is not JSON (${
          (e as Error).message
        }); the file is corrupted before its last line, which a crash cannot cause - fix or remove that line`,
      );
    }
  });
  return { records, partial: tail === "" ? null : tail };
}

/**
 * Reads a JSON Lines file; a missing file is empty.
 *
 * @example Usage
 * ```ts
 * import { readJsonl } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/m.jsonl`, '{"step":1}\n{"step":2');
 * const content = await readJsonl(`${dir}/m.jsonl`);
 * assert.deepEqual(content.records, [{ step: 1 }]);
 * assert.equal(content.partial, '{"step":2');
 * assert.deepEqual((await readJsonl(`${dir}/none.jsonl`)).records, []);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readJsonl<T = unknown>(path: string): Promise<JsonlContent<T>> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { records: [], partial: null };
    throw e;
  }
  return parseJsonl<T>(decoder.decode(bytes), path);
}

/**
 * Rewrites a JSON Lines file atomically with only the complete records that `keep` accepts,
 * dropping any partial last line. Returns how many records were kept and dropped and whether
 * a partial line was removed. A missing file stays missing.
 *
 * @example Usage
 * ```ts
 * import { readJsonl, truncateJsonl } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const path = `${dir}/m.jsonl`;
 * await Deno.writeTextFile(path, '{"step":1}\n{"step":2}\n{"step":3}\n{"st');
 * const r = await truncateJsonl<{ step: number }>(path, (x) => x.step <= 2);
 * assert.deepEqual(r, { kept: 2, dropped: 1, partialRemoved: true });
 * assert.equal(await Deno.readTextFile(path), '{"step":1}\n{"step":2}\n');
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function truncateJsonl<T = unknown>(
  path: string,
  keep: (record: T) => boolean,
): Promise<{ kept: number; dropped: number; partialRemoved: boolean }> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { kept: 0, dropped: 0, partialRemoved: false };
    throw e;
  }
  const { records, partial } = parseJsonl<T>(text, path);
  const kept = records.filter(keep);
  await writeFileAtomic(path, kept.map((r) => JSON.stringify(r) + "\n").join(""));
  return {
    kept: kept.length,
    dropped: records.length - kept.length,
    partialRemoved: partial !== null,
  };
}

/** Options of {@link JsonlWriter.open}. */
export interface JsonlWriterOptions {
  /** fsync after every line (default false: each line reaches the OS, not necessarily the disk). */
  durable?: boolean;
}

/**
 * Appends records to a JSON Lines file, one complete line per {@link JsonlWriter.append}.
 *
 * @example Usage
 * ```ts
 * import { JsonlWriter, readJsonl } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const writer = await JsonlWriter.open(`${dir}/m.jsonl`);
 * await writer.append({ step: 1, "reward/mean": 0.5 });
 * // visible to readers before close
 * assert.deepEqual((await readJsonl(`${dir}/m.jsonl`)).records, [{ step: 1, "reward/mean": 0.5 }]);
 * await writer.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class JsonlWriter {
  readonly #file: Deno.FsFile;
  readonly #durable: boolean;
  #closed = false;
  #queue: Promise<void> = Promise.resolve();
  /** The file's path. */
  readonly path: string;

  private constructor(path: string, file: Deno.FsFile, durable: boolean) {
    this.path = path;
    this.#file = file;
    this.#durable = durable;
  }

  /**
   * Opens `path` for appending (creating it). Throws when the file ends with a partial line
   * (truncate it first, see {@link truncateJsonl}).
   */
  static async open(path: string, options: JsonlWriterOptions = {}): Promise<JsonlWriter> {
    const existing = await readJsonl(path);
    if (existing.partial !== null) {
      throw new Error(
        `JsonlWriter.open: ${path} ends with a partial line ${
          JSON.stringify(existing.partial.slice(0, 40))
        } (a crash cut a write); truncate it before appending (RunDir.resume does)`,
      );
    }
    const file = await Deno.open(path, { append: true, create: true });
    return new JsonlWriter(path, file, options.durable ?? false);
  }

  /** Writes `record` as one line. Throws for values JSON cannot represent. */
  async append(record: unknown): Promise<void> {
    if (this.#closed) throw new Error(`JsonlWriter.append: ${this.path} is closed`);
    const json = JSON.stringify(record);
    if (json === undefined) {
      throw new TypeError(
        `JsonlWriter.append: ${this.path}: record must be JSON-serialisable, got ${typeof record}`,
      );
    }
    const bytes = encoder.encode(json + "\n");
    // Appends are chained so that un-awaited calls cannot interleave partial writes.
    const next = this.#queue.then(async () => {
      let written = 0;
      while (written < bytes.length) written += await this.#file.write(bytes.subarray(written));
      if (this.#durable) await this.#file.syncData();
    });
    this.#queue = next.catch(() => {});
    await next;
  }

  /** Waits for pending appends, then closes the file (idempotent). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue;
    this.#file.close();
  }
}
