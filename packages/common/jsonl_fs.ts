/**
 * JSON Lines files (`@rlvr/common/fs`: needs Deno's file system), the one module behind the run directory's `metrics.jsonl` / `eval.jsonl` /
 * `samples.jsonl` (`@rlvr/train`), the metrics sinks (`@rlvr/infra`: `JsonlSink`, and `CsvSink`
 * through {@link AppendFile}; the TensorBoard event files through its {@link SerialFileWriter})
 * and the dataset reader (`@rlvr/sampling`: {@link readLines}).
 *
 * Design decisions:
 * - **A line counts only when its `\n` was written.** Writers hand each record to the OS as one
 *   complete line in one `write` call on a file opened with O_APPEND, so lines are whole and
 *   ordered even with several writers, and a crash leaves at most one partial last line. The
 *   readers ignore it (even when it happens to parse) and report it; {@link truncateJsonl}
 *   removes it.
 * - **Opening a writer on a file with a partial last line** either refuses (`torn: "error"`,
 *   the run directory's choice: its resume truncates first, so a fragment means a bug) or cuts
 *   the fragment (`torn: "repair"`, the sinks' choice: they own their files).
 * - **A malformed line before the last one is corruption**, not a crash artifact, and is an
 *   error naming the file and the line, never silently dropped.
 * - Each line reaches the OS before `append` resolves (Deno's files are unbuffered), so another
 *   process sees every finished record; `durable: true` also fsyncs each line.
 * - JSON has no NaN or ±Infinity: `nonFinite: "string"` writes them as `"NaN"`, `"Infinity"`,
 *   `"-Infinity"` (the sinks: a diverged loss must not become null) and {@link reviveNonFinite}
 *   reads them back; the default is `JSON.stringify`'s `null` (the run directory checks its
 *   records are finite before writing them).
 * - {@link readLines} streams a file of any size line by line (one chunk plus one line in
 *   memory), accepting `\r\n` endings and a UTF-8 byte order mark, for datasets.
 *
 * @module
 */

import { readTextOrNull, writeFileAtomic } from "./atomic.ts";
import { type JsonlContent, parseJsonl } from "./jsonl.ts";

const NEWLINE = 0x0a;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Reads a JSON Lines file; a missing file is empty.
 *
 * @param path The file.
 * @returns The complete records and the partial tail.
 *
 * @example Usage
 * ```ts
 * import { readJsonl } from "@rlvr/common/fs";
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
 * @param path The file.
 * @param keep Which records stay.
 * @returns Counts of what was kept and dropped.
 *
 * @example Usage
 * ```ts
 * import { readJsonl, truncateJsonl } from "@rlvr/common/fs";
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

/**
 * Options of {@link AppendFile.open}.
 *
 * @example Usage
 * ```ts
 * import type { AppendFileOptions } from "@rlvr/common/fs";
 * import assert from "node:assert/strict";
 * const o: AppendFileOptions = { torn: "error", durable: true };
 * assert.equal(o.torn, "error");
 * ```
 */
export interface AppendFileOptions {
  /**
   * A partial last line found on open: `"repair"` (default) cuts the file back to its last
   * newline; `"error"` throws (truncate it first, see {@link truncateJsonl}).
   */
  torn?: "repair" | "error";
  /** fsync after every append (default false: each line reaches the OS, not necessarily the disk). */
  durable?: boolean;
  /** Names the owner in errors (default `"AppendFile"`). */
  owner?: string;
}

/**
 * Options of {@link SerialFileWriter}.
 *
 * @example Usage
 * ```ts
 * import type { SerialFileWriterOptions } from "@rlvr/common/fs";
 * import assert from "node:assert/strict";
 * const o: SerialFileWriterOptions = { durable: true, owner: "EventLog" };
 * assert.equal(o.owner, "EventLog");
 * ```
 */
export interface SerialFileWriterOptions {
  /** fsync after every write (default false: each write reaches the OS, not necessarily the disk). */
  durable?: boolean;
  /** Names the owner in the error of a write after close (default `"SerialFileWriter"`). */
  owner?: string;
}

/**
 * Writes to an open file one call after another, in call order: each call hands its bytes to the
 * OS in one `write` (finishing a short one) before it resolves, and fsyncs them when durable. A
 * failed write rejects its own call only; later calls still run. The writer under
 * {@link AppendFile} and under `@rlvr/infra`'s TensorBoard event files, which frame their own
 * records and open their own files.
 *
 * @example Usage
 * ```ts
 * import { SerialFileWriter } from "@rlvr/common/fs";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile();
 * const w = new SerialFileWriter(path, await Deno.open(path, { write: true }), { owner: "Log" });
 * const bytes = (s: string) => new TextEncoder().encode(s);
 * await Promise.all([w.write(bytes("one ")), w.write(bytes("two"))]);
 * await w.close();
 * assert.equal(await Deno.readTextFile(path), "one two");
 * await assert.rejects(w.write(bytes("!")), /Log: .* is closed/);
 * await Deno.remove(path);
 * ```
 */
export class SerialFileWriter {
  /** The file's path (for messages). */
  readonly path: string;
  #file: Deno.FsFile | null;
  #durable: boolean;
  #owner: string;
  #chain: Promise<void> = Promise.resolve();

  /**
   * Takes over `file`: {@link SerialFileWriter.close} closes it.
   *
   * @param path The file's path, named in errors.
   * @param file The file, open for writing.
   * @param options Durability and the owner's name.
   */
  constructor(path: string, file: Deno.FsFile, options: SerialFileWriterOptions = {}) {
    this.path = path;
    this.#file = file;
    this.#durable = options.durable ?? false;
    this.#owner = options.owner ?? "SerialFileWriter";
  }

  /**
   * Whether {@link SerialFileWriter.close} was called.
   *
   * @example Usage
   * ```ts
   * import { SerialFileWriter } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const w = new SerialFileWriter(path, await Deno.open(path, { write: true }));
   * assert.equal(w.closed, false);
   * await w.close();
   * assert.equal(w.closed, true);
   * await Deno.remove(path);
   * ```
   */
  get closed(): boolean {
    return this.#file === null;
  }

  /**
   * Writes `bytes` after every earlier call's bytes.
   *
   * @param bytes The bytes.
   *
   * @example Usage
   * ```ts
   * import { SerialFileWriter } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const w = new SerialFileWriter(path, await Deno.open(path, { write: true }), { durable: true });
   * await w.write(new Uint8Array([1, 2, 3]));
   * await w.close();
   * assert.deepEqual([...await Deno.readFile(path)], [1, 2, 3]);
   * await Deno.remove(path);
   * ```
   */
  write(bytes: Uint8Array): Promise<void> {
    const file = this.#file;
    if (file === null) {
      return Promise.reject(new Error(`${this.#owner}: ${this.path} is closed; open a new one`));
    }
    const done = this.#chain.then(async () => {
      let at = await file.write(bytes);
      // A regular file takes the whole buffer in one write on Linux and macOS; the loop only
      // guards against a short write (full disk), where finishing the record beats leaving it
      // torn.
      while (at < bytes.length) at += await file.write(bytes.subarray(at));
      if (this.#durable) await file.syncData();
    });
    // A failure belongs to its own call; the next write must not inherit the rejection.
    this.#chain = done.catch(() => {});
    return done;
  }

  /**
   * Waits for pending writes and closes the file. Idempotent.
   *
   * @example Usage
   * ```ts
   * import { SerialFileWriter } from "@rlvr/common/fs";
   * const path = await Deno.makeTempFile();
   * const w = new SerialFileWriter(path, await Deno.open(path, { write: true }));
   * await w.close();
   * await w.close();
   * await Deno.remove(path);
   * ```
   */
  async close(): Promise<void> {
    const file = this.#file;
    if (file === null) return;
    this.#file = null;
    await this.#chain;
    file.close();
  }
}

/**
 * An append-only text file of whole lines, one `write` call per {@link AppendFile.append}
 * (see the module doc); appends run in call order.
 *
 * @example Usage
 * ```ts
 * import { AppendFile } from "@rlvr/common/fs";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/log`, "one\ntw"); // torn by a crash
 * const f = await AppendFile.open(`${dir}/log`);
 * assert.equal(f.repairedBytes, 2);
 * await Promise.all([f.append("two\n"), f.append("three\n")]);
 * await f.close();
 * assert.equal(await Deno.readTextFile(`${dir}/log`), "one\ntwo\nthree\n");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class AppendFile {
  /** The file's path. */
  readonly path: string;
  /** Bytes of a torn last line that {@link AppendFile.open} removed (0 normally). */
  readonly repairedBytes: number;
  /** Whether the file held data when it was opened (a resumed run). */
  readonly existed: boolean;
  #out: SerialFileWriter;

  private constructor(
    path: string,
    out: SerialFileWriter,
    repairedBytes: number,
    existed: boolean,
  ) {
    this.path = path;
    this.#out = out;
    this.repairedBytes = repairedBytes;
    this.existed = existed;
  }

  /**
   * Opens (creating) `path` for appending; a partial last line is cut or refused (see
   * {@link AppendFileOptions}).
   *
   * @param path The file.
   * @param options What to do with a partial last line, durability, the owner's name.
   * @returns The file.
   *
   * @example Usage
   * ```ts
   * import { AppendFile } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const dir = await Deno.makeTempDir();
   * await Deno.writeTextFile(`${dir}/m.jsonl`, '{"st');
   * await assert.rejects(AppendFile.open(`${dir}/m.jsonl`, { torn: "error" }), /ends with a partial line/);
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  static async open(path: string, options: AppendFileOptions = {}): Promise<AppendFile> {
    const owner = options.owner ?? "AppendFile";
    let size = 0;
    try {
      size = (await Deno.stat(path)).size;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    let repaired = 0;
    if (size > 0) {
      const bytes = await Deno.readFile(path);
      const end = bytes.lastIndexOf(NEWLINE) + 1; // 0 when there is no newline at all
      if (end < bytes.length) {
        if ((options.torn ?? "repair") === "error") {
          throw new Error(
            `${owner}.open: ${path} ends with a partial line ${
              JSON.stringify(decoder.decode(bytes.subarray(end)).slice(0, 40))
            } (a crash cut a write); truncate it before appending (RunDir.resume does)`,
          );
        }
        repaired = bytes.length - end;
        await Deno.truncate(path, end);
        size = end;
      }
    }
    const file = await Deno.open(path, { append: true, create: true });
    const out = new SerialFileWriter(path, file, { durable: options.durable ?? false, owner });
    return new AppendFile(path, out, repaired, size > 0);
  }

  /**
   * Reads the first line of `path` (without the newline), or null when empty or missing.
   *
   * @param path The file.
   * @returns The first complete line, or null.
   *
   * @example Usage
   * ```ts
   * import { AppendFile } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const dir = await Deno.makeTempDir();
   * await Deno.writeTextFile(`${dir}/a.csv`, "step,loss\n1,0.5\n");
   * assert.equal(await AppendFile.firstLine(`${dir}/a.csv`), "step,loss");
   * assert.equal(await AppendFile.firstLine(`${dir}/none.csv`), null);
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  static async firstLine(path: string): Promise<string | null> {
    const text = await readTextOrNull(path);
    if (text === null) return null;
    const nl = text.indexOf("\n");
    return nl < 0 ? null : text.slice(0, nl);
  }

  /**
   * Whether {@link AppendFile.close} was called.
   *
   * @example Usage
   * ```ts
   * import { AppendFile } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const f = await AppendFile.open(path);
   * await f.close();
   * assert.equal(f.closed, true);
   * await Deno.remove(path);
   * ```
   */
  get closed(): boolean {
    return this.#out.closed;
  }

  /**
   * Appends `text` (one or more whole lines) with one write call; calls run in order.
   *
   * @param text Whole lines, each ending with `\n`.
   *
   * @example Usage
   * ```ts
   * import { AppendFile } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const f = await AppendFile.open(path);
   * await f.append("a\nb\n");
   * await f.close();
   * await assert.rejects(f.append("c\n"), /closed/);
   * await Deno.remove(path);
   * ```
   */
  append(text: string): Promise<void> {
    return this.#out.write(encoder.encode(text));
  }

  /**
   * Waits for pending appends and closes the file. Idempotent.
   *
   * @example Usage
   * ```ts
   * import { AppendFile } from "@rlvr/common/fs";
   * const path = await Deno.makeTempFile();
   * const f = await AppendFile.open(path);
   * await f.close();
   * await f.close();
   * await Deno.remove(path);
   * ```
   */
  close(): Promise<void> {
    return this.#out.close();
  }
}

/**
 * Options of {@link JsonlWriter.open}.
 *
 * @example Usage
 * ```ts
 * import type { JsonlWriterOptions } from "@rlvr/common/fs";
 * import assert from "node:assert/strict";
 * const o: JsonlWriterOptions = { durable: true, torn: "repair", nonFinite: "string" };
 * assert.equal(o.nonFinite, "string");
 * ```
 */
export interface JsonlWriterOptions {
  /** fsync after every line (default false: each line reaches the OS, not necessarily the disk). */
  durable?: boolean;
  /** A partial last line found on open: `"error"` (default) throws, `"repair"` cuts it. */
  torn?: "error" | "repair";
  /**
   * How top-level NaN and ±Infinity values are written: `"null"` (default, `JSON.stringify`)
   * or `"string"` (`"NaN"`, `"Infinity"`, `"-Infinity"`; see {@link reviveNonFinite}).
   */
  nonFinite?: "null" | "string";
  /** Names the owner in errors (default `"JsonlWriter"`). */
  owner?: string;
}

/**
 * Appends records to a JSON Lines file, one complete line per {@link JsonlWriter.append}.
 *
 * @example Usage
 * ```ts
 * import { JsonlWriter, readJsonl } from "@rlvr/common/fs";
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
  readonly #file: AppendFile;
  readonly #nonFinite: "null" | "string";
  readonly #owner: string;

  private constructor(file: AppendFile, nonFinite: "null" | "string", owner: string) {
    this.#file = file;
    this.#nonFinite = nonFinite;
    this.#owner = owner;
  }

  /**
   * Opens `path` for appending (creating it); see {@link JsonlWriterOptions} for a partial
   * last line.
   *
   * @param path The file.
   * @param options Durability, partial-line policy, non-finite numbers, owner name.
   * @returns The writer.
   *
   * @example Usage
   * ```ts
   * import { JsonlWriter } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const dir = await Deno.makeTempDir();
   * await Deno.writeTextFile(`${dir}/m.jsonl`, '{"step":1}\n{"st');
   * await assert.rejects(JsonlWriter.open(`${dir}/m.jsonl`), /partial line/);
   * const w = await JsonlWriter.open(`${dir}/m.jsonl`, { torn: "repair" });
   * assert.equal(w.repairedBytes, 4);
   * await w.close();
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  static async open(path: string, options: JsonlWriterOptions = {}): Promise<JsonlWriter> {
    const owner = options.owner ?? "JsonlWriter";
    const file = await AppendFile.open(path, {
      torn: options.torn ?? "error",
      durable: options.durable ?? false,
      owner,
    });
    return new JsonlWriter(file, options.nonFinite ?? "null", owner);
  }

  /**
   * The file's path.
   *
   * @example Usage
   * ```ts
   * import { JsonlWriter } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const w = await JsonlWriter.open(path);
   * assert.equal(w.path, path);
   * await w.close();
   * await Deno.remove(path);
   * ```
   */
  get path(): string {
    return this.#file.path;
  }

  /**
   * Bytes of a partial last line cut when the file was opened with `torn: "repair"` (0
   * normally).
   *
   * @example Usage
   * ```ts
   * import { JsonlWriter } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const w = await JsonlWriter.open(path);
   * assert.equal(w.repairedBytes, 0);
   * await w.close();
   * await Deno.remove(path);
   * ```
   */
  get repairedBytes(): number {
    return this.#file.repairedBytes;
  }

  /**
   * The line of `record` as this writer writes it (with its newline). Throws for values JSON
   * cannot represent.
   *
   * @param record The record.
   * @returns One line of JSON and `\n`.
   *
   * @example Usage
   * ```ts
   * import { JsonlWriter } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const w = await JsonlWriter.open(path, { nonFinite: "string" });
   * assert.equal(w.line({ loss: NaN }), '{"loss":"NaN"}\n');
   * await w.close();
   * await Deno.remove(path);
   * ```
   */
  line(record: unknown): string {
    let value = record;
    if (
      this.#nonFinite === "string" && typeof record === "object" && record !== null &&
      !Array.isArray(record)
    ) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(record)) {
        out[k] = typeof v === "number" && !Number.isFinite(v) ? String(v) : v;
      }
      value = out;
    }
    const json = JSON.stringify(value);
    if (json === undefined) {
      throw new TypeError(
        `${this.#owner}.append: ${this.path}: record must be JSON-serialisable, got ${typeof record}`,
      );
    }
    return json + "\n";
  }

  /**
   * Writes `record` as one line. Rejects for values JSON cannot represent (nothing written).
   *
   * @param record The record.
   *
   * @example Usage
   * ```ts
   * import { JsonlWriter } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const w = await JsonlWriter.open(path);
   * await Promise.all([w.append({ i: 0 }), w.append({ i: 1 })]); // ordered, whole lines
   * await assert.rejects(w.append(undefined), /must be JSON-serialisable/);
   * await w.close();
   * assert.equal(await Deno.readTextFile(path), '{"i":0}\n{"i":1}\n');
   * await Deno.remove(path);
   * ```
   */
  append(record: unknown): Promise<void> {
    if (this.#file.closed) {
      return Promise.reject(new Error(`${this.#owner}.append: ${this.path} is closed`));
    }
    let text: string;
    try {
      text = this.line(record);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#file.append(text);
  }

  /**
   * Waits for pending appends, then closes the file (idempotent).
   *
   * @example Usage
   * ```ts
   * import { JsonlWriter } from "@rlvr/common/fs";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile();
   * const w = await JsonlWriter.open(path);
   * await w.close();
   * await w.close();
   * await assert.rejects(w.append({}), /is closed/);
   * await Deno.remove(path);
   * ```
   */
  close(): Promise<void> {
    return this.#file.close();
  }
}

/** Splits a text stream into lines (without their `\n` / `\r\n`). */
function lineSplitter(): TransformStream<string, string> {
  let rest = "";
  return new TransformStream<string, string>({
    transform(chunk, controller) {
      const text = rest + chunk;
      let start = 0;
      let nl = text.indexOf("\n");
      while (nl >= 0) {
        const line = text.slice(start, nl);
        controller.enqueue(line.endsWith("\r") ? line.slice(0, -1) : line);
        start = nl + 1;
        nl = text.indexOf("\n", start);
      }
      rest = text.slice(start);
    },
    flush(controller) {
      if (rest.length > 0) controller.enqueue(rest.endsWith("\r") ? rest.slice(0, -1) : rest);
    },
  });
}

/**
 * Reads the lines of a text file one at a time (1-based line numbers), streaming: memory stays
 * at one chunk plus one line. `\r\n` endings and a UTF-8 byte order mark are accepted; a last
 * line without a newline is returned too. A missing file rejects with Deno's `NotFound`.
 *
 * @param path The file.
 * @returns The lines with their numbers.
 *
 * @example Usage
 * ```ts
 * import { readLines } from "@rlvr/common/fs";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".txt" });
 * await Deno.writeTextFile(path, "a\r\nb\n\nc");
 * const lines: string[] = [];
 * for await (const { line, text } of readLines(path)) lines.push(`${line}:${text}`);
 * assert.deepEqual(lines, ["1:a", "2:b", "3:", "4:c"]);
 * await Deno.remove(path);
 * ```
 */
export async function* readLines(
  path: string,
): AsyncGenerator<{ line: number; text: string }, void, undefined> {
  const file = await Deno.open(path, { read: true });
  const reader = file.readable
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(lineSplitter())
    .getReader();
  let line = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      line++;
      yield { line, text: value };
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
