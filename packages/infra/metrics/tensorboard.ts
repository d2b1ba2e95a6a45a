/**
 * TensorBoard event files, written without TensorFlow: TFRecord framing (`tfrecord.ts`) around
 * hand-encoded `Event` protos (`_event_proto.ts`, field numbers from the public `event.proto`
 * and `summary.proto`).
 *
 * Design decisions:
 * - **One file per writer**, named `events.out.tfevents.<unix seconds>.<host>.<pid>.<n>` as
 *   TensorFlow names them (TensorBoard reads every file whose name contains `tfevents`, in name
 *   order); `<n>` makes two writers of one process in one second distinct, and the file is
 *   created exclusively, so a writer never appends to another's file. A resumed run gets a new
 *   file after the old ones.
 * - **Every event is flushed**: framed in full and handed to the OS in one `write` before the
 *   call resolves (Deno's files are unbuffered), so a crash loses at most the event being
 *   written, and a half-written event at the end of a file is cut by {@link truncateEventFiles}
 *   (TensorBoard itself stops at it).
 * - **Scalars are `simple_value` floats** (float32, what TensorBoard plots; the exact float64
 *   values stay in the JSONL files); text is a scalar `DT_STRING` tensor with
 *   `plugin_name: "text"`, rendered as Markdown by TensorBoard's text dashboard.
 * - **Resume**: {@link truncateEventFiles} drops the events after a checkpoint's step from the
 *   existing files (atomically, file by file), so the event files say what the truncated JSONL
 *   files say; the resumed writer (`startStep`) first writes a `SessionLog` START at the step it
 *   continues from, which makes a TensorBoard that is already running purge the orphaned steps
 *   it had read before the truncation.
 *
 * @module
 */

import { join } from "node:path";
import { SerialFileWriter } from "@rlvr/common/fs";
import { encodeEvent, eventStep, type SummaryValue } from "./_event_proto.ts";
import { encodeTfRecord, readTfRecords } from "./tfrecord.ts";
import { type MetricsRecord, type MetricsSink, recordEntries } from "./types.ts";

/** The `file_version` of the first event of every file. */
const FILE_VERSION = "brain.Event:2";

/**
 * Whether `name` is a TensorBoard event file's name (it contains `tfevents`, TensorBoard's test).
 *
 * @param name A file name.
 * @returns True for event files.
 *
 * @example Usage
 * ```ts
 * import { isEventFileName } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * assert.ok(isEventFileName("events.out.tfevents.1700000000.host.12.0"));
 * assert.ok(!isEventFileName("metrics.jsonl"));
 * ```
 */
export function isEventFileName(name: string): boolean {
  return name.includes("tfevents");
}

function hostName(): string {
  try {
    return Deno.hostname().replace(/[^A-Za-z0-9._-]/g, "_") || "localhost";
  } catch {
    return "localhost"; // no --allow-sys
  }
}

function checkStep(owner: string, step: unknown): number {
  if (typeof step !== "number" || !Number.isSafeInteger(step) || step < 0) {
    throw new RangeError(
      `${owner}: step must be a non-negative integer (0, 1, 2, ...), got ${String(step)}`,
    );
  }
  return step;
}

function checkTag(owner: string, tag: unknown): string {
  if (typeof tag !== "string" || tag.length === 0) {
    throw new TypeError(`${owner}: a tag must be a non-empty string, got ${JSON.stringify(tag)}`);
  }
  return tag;
}

/**
 * Options of {@link TensorBoardWriter.open}.
 *
 * @example Usage
 * ```ts
 * import type { TensorBoardWriterOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: TensorBoardWriterOptions = { host: "trainer", startStep: 101 };
 * assert.equal(o.startStep, 101);
 * ```
 */
export interface TensorBoardWriterOptions {
  /** The host part of the file name (default `Deno.hostname()`, `localhost` without permission). */
  host?: string;
  /** Wall clock in milliseconds (default `Date.now`), for the events' `wall_time`. */
  now?: () => number;
  /** fsync after every event (default false: each event reaches the OS, not necessarily the disk). */
  durable?: boolean;
  /**
   * A resumed run continues at this step: write a `SessionLog` START there first, so that a
   * running TensorBoard drops what it read of steps >= `startStep` from earlier files.
   */
  startStep?: number;
}

/**
 * Writes one TensorBoard event file (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { readTfRecords, TensorBoardWriter } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const tb = await TensorBoardWriter.open(`${dir}/tb`);
 * await tb.scalars(1, { "reward/mean": 0.5, loss: 1.25 });
 * await tb.text(1, "samples", "| prompt | completion |\n|---|---|\n| 1+1= | 2 |");
 * await tb.close();
 * assert.match(tb.path, /events\.out\.tfevents\.\d+\./);
 * // the file_version event, then the two written above
 * assert.equal(readTfRecords(await Deno.readFile(tb.path)).records.length, 3);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class TensorBoardWriter {
  /** The event file's path. */
  readonly path: string;
  #out: SerialFileWriter;
  #now: () => number;

  private constructor(path: string, file: Deno.FsFile, now: () => number, durable: boolean) {
    this.path = path;
    this.#out = new SerialFileWriter(path, file, { durable, owner: "TensorBoardWriter" });
    this.#now = now;
  }

  /**
   * Creates `dir` if needed and a new event file in it, and writes its `file_version` event
   * (and a `SessionLog` START when `options.startStep` is given).
   *
   * @param dir The log directory (one TensorBoard run).
   * @param options Host, clock, durability and resume step.
   * @returns The writer.
   *
   * @example Usage
   * ```ts
   * import { TensorBoardWriter } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const dir = await Deno.makeTempDir();
   * const a = await TensorBoardWriter.open(dir, { host: "h", now: () => 1.7e12 });
   * const b = await TensorBoardWriter.open(dir, { host: "h", now: () => 1.7e12 });
   * assert.notEqual(a.path, b.path); // same second, same process: still two files
   * assert.match(a.path, /events\.out\.tfevents\.1700000000\.h\.\d+\.0$/);
   * await a.close();
   * await b.close();
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  static async open(
    dir: string,
    options: TensorBoardWriterOptions = {},
  ): Promise<TensorBoardWriter> {
    const now = options.now ?? Date.now;
    const host = (options.host ?? hostName()).replace(/[^A-Za-z0-9._-]/g, "_");
    if (options.startStep !== undefined) checkStep("TensorBoardWriter.open", options.startStep);
    await Deno.mkdir(dir, { recursive: true });
    const seconds = Math.floor(now() / 1000);
    for (let n = 0;; n++) {
      const path = join(dir, `events.out.tfevents.${seconds}.${host}.${Deno.pid}.${n}`);
      let file: Deno.FsFile;
      try {
        file = await Deno.open(path, { write: true, createNew: true });
      } catch (e) {
        if (e instanceof Deno.errors.AlreadyExists) continue;
        throw e;
      }
      const writer = new TensorBoardWriter(path, file, now, options.durable ?? false);
      await writer.#write(0, { fileVersion: FILE_VERSION });
      if (options.startStep !== undefined) {
        await writer.#write(options.startStep, { sessionStart: true });
      }
      return writer;
    }
  }

  #write(step: number, body: Parameters<typeof encodeEvent>[2]): Promise<void> {
    return this.#out.write(encodeTfRecord(encodeEvent(this.#now() / 1000, step, body)));
  }

  /**
   * Writes one event with a scalar per entry (tag = key). Non-finite numbers are written as
   * they are (TensorBoard shows NaN and ±Infinity).
   *
   * @param step The step (a non-negative integer).
   * @param values Tag → number.
   *
   * @example Usage
   * ```ts
   * import { TensorBoardWriter } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const dir = await Deno.makeTempDir();
   * const tb = await TensorBoardWriter.open(dir);
   * await tb.scalars(3, { "eval/pass@1": 0.25 });
   * await assert.rejects(tb.scalars(-1, { a: 1 }), /step must be a non-negative integer/);
   * await tb.close();
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  scalars(step: number, values: Readonly<Record<string, number>>): Promise<void> {
    const summary: SummaryValue[] = [];
    try {
      checkStep("TensorBoardWriter.scalars", step);
      for (const [tag, v] of Object.entries(values)) {
        checkTag("TensorBoardWriter.scalars", tag);
        if (typeof v !== "number") {
          throw new TypeError(
            `TensorBoardWriter.scalars: ${
              JSON.stringify(tag)
            } is ${typeof v}; values must be numbers`,
          );
        }
        summary.push({ tag, simpleValue: v });
      }
    } catch (e) {
      return Promise.reject(e);
    }
    if (summary.length === 0) return Promise.resolve();
    return this.#write(step, { summary });
  }

  /**
   * Writes one text summary (Markdown, shown by TensorBoard's text dashboard).
   *
   * @param step The step (a non-negative integer).
   * @param tag The tag.
   * @param markdown The text.
   *
   * @example Usage
   * ```ts
   * import { TensorBoardWriter } from "@rlvr/infra";
   * const dir = await Deno.makeTempDir();
   * const tb = await TensorBoardWriter.open(dir);
   * await tb.text(0, "notes", "**started**");
   * await tb.close();
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  text(step: number, tag: string, markdown: string): Promise<void> {
    try {
      checkStep("TensorBoardWriter.text", step);
      checkTag("TensorBoardWriter.text", tag);
      if (typeof markdown !== "string") {
        throw new TypeError(
          `TensorBoardWriter.text: the text must be a string, got ${typeof markdown}`,
        );
      }
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#write(step, { summary: [{ tag, text: markdown }] });
  }

  /**
   * Waits for pending events and closes the file. Idempotent.
   *
   * @example Usage
   * ```ts
   * import { TensorBoardWriter } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const dir = await Deno.makeTempDir();
   * const tb = await TensorBoardWriter.open(dir);
   * await tb.close();
   * await tb.close();
   * await assert.rejects(tb.scalars(1, { a: 1 }), /closed/);
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  close(): Promise<void> {
    return this.#out.close();
  }
}

/**
 * Options of {@link TensorBoardSink}.
 *
 * @example Usage
 * ```ts
 * import type { TensorBoardSinkOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: TensorBoardSinkOptions = { prefix: "eval/" };
 * assert.equal(o.prefix, "eval/");
 * ```
 */
export interface TensorBoardSinkOptions extends TensorBoardWriterOptions {
  /** Put before every tag (e.g. `"eval/"`); default none. */
  prefix?: string;
  /** The key holding the step (default `"step"`); it is not written as a scalar. */
  stepKey?: string;
}

/**
 * A {@link MetricsSink} that writes every numeric value of a record as a TensorBoard scalar at
 * the record's step (strings, booleans and nulls are skipped).
 *
 * @example Usage
 * ```ts
 * import { TensorBoardSink } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const sink = await TensorBoardSink.open(`${dir}/tb`);
 * await sink.write({ step: 1, loss: 0.5, kl: null, phase: "rl" }); // one scalar: loss
 * await assert.rejects(sink.write({ loss: 1 }), /step/);
 * await sink.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class TensorBoardSink implements MetricsSink {
  /** The writer (its `path` is the event file). */
  readonly writer: TensorBoardWriter;
  #prefix: string;
  #stepKey: string;

  /**
   * A sink over an open writer; {@link TensorBoardSink.close} closes it.
   *
   * @param writer The event file writer.
   * @param options Tag prefix and step key.
   */
  constructor(writer: TensorBoardWriter, options: TensorBoardSinkOptions = {}) {
    this.writer = writer;
    this.#prefix = options.prefix ?? "";
    this.#stepKey = options.stepKey ?? "step";
  }

  /**
   * Opens a new event file in `dir` (see {@link TensorBoardWriter.open}).
   *
   * @param dir The log directory.
   * @param options Writer options, tag prefix and step key.
   * @returns The sink.
   *
   * @example Usage
   * ```ts
   * import { TensorBoardSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const dir = await Deno.makeTempDir();
   * const sink = await TensorBoardSink.open(dir, { prefix: "eval/" });
   * assert.ok(sink.writer.path.startsWith(dir));
   * await sink.close();
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  static async open(dir: string, options: TensorBoardSinkOptions = {}): Promise<TensorBoardSink> {
    return new TensorBoardSink(await TensorBoardWriter.open(dir, options), options);
  }

  /**
   * Writes the record's numbers as scalars at its step.
   *
   * @param record The metrics; `record[stepKey]` must be a non-negative integer.
   *
   * @example Usage
   * ```ts
   * import { TensorBoardSink } from "@rlvr/infra";
   * const dir = await Deno.makeTempDir();
   * const sink = await TensorBoardSink.open(dir);
   * await sink.write({ step: 2, "reward/mean": 0.75 });
   * await sink.close();
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  write(record: MetricsRecord): Promise<void> {
    const values: Record<string, number> = {};
    let step: number;
    try {
      const entries = recordEntries("TensorBoardSink", record);
      const s = record[this.#stepKey];
      if (typeof s !== "number" || !Number.isSafeInteger(s) || s < 0) {
        throw new RangeError(
          `TensorBoardSink.write: the record's ${JSON.stringify(this.#stepKey)} must be a ` +
            `non-negative integer, got ${JSON.stringify(s)}`,
        );
      }
      step = s;
      for (const [k, v] of entries) {
        if (k !== this.#stepKey && typeof v === "number") values[this.#prefix + k] = v;
      }
    } catch (e) {
      return Promise.reject(e);
    }
    return this.writer.scalars(step, values);
  }

  /**
   * Closes the writer. Idempotent.
   *
   * @example Usage
   * ```ts
   * import { TensorBoardSink } from "@rlvr/infra";
   * const dir = await Deno.makeTempDir();
   * const sink = await TensorBoardSink.open(dir);
   * await sink.close();
   * await sink.close();
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  close(): Promise<void> {
    return this.writer.close();
  }
}

/**
 * What {@link truncateEventFiles} did.
 *
 * @example Usage
 * ```ts
 * import type { EventTruncation } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const t: EventTruncation = { files: 1, dropped: 2, tornBytes: 0 };
 * assert.equal(t.dropped, 2);
 * ```
 */
export interface EventTruncation {
  /** Event files rewritten. */
  files: number;
  /** Events dropped (their step was after the kept step). */
  dropped: number;
  /** Bytes of incomplete last records removed. */
  tornBytes: number;
}

/**
 * Keeps only the events with `step <= maxStep` in every event file of `dir` (and removes an
 * incomplete last record); each changed file is replaced atomically (temporary file, fsync,
 * rename). A missing directory is nothing to do. Pass -1 to keep only the `file_version`
 * events (step 0 events are kept for any `maxStep >= 0`).
 *
 * @param dir The log directory.
 * @param maxStep The last step to keep (a resumed run's checkpoint step).
 * @returns Counts of what changed.
 *
 * @example Usage
 * ```ts
 * import { readTfRecords, TensorBoardWriter, truncateEventFiles } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const tb = await TensorBoardWriter.open(dir);
 * for (const step of [1, 2, 3]) await tb.scalars(step, { loss: step });
 * await tb.close();
 * assert.deepEqual(await truncateEventFiles(dir, 2), { files: 1, dropped: 1, tornBytes: 0 });
 * assert.equal(readTfRecords(await Deno.readFile(tb.path)).records.length, 3); // version, 1, 2
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function truncateEventFiles(dir: string, maxStep: number): Promise<EventTruncation> {
  const result: EventTruncation = { files: 0, dropped: 0, tornBytes: 0 };
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && isEventFileName(e.name)) names.push(e.name);
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return result;
    throw e;
  }
  for (const name of names.sort()) {
    const path = join(dir, name);
    const { records, tornBytes } = readTfRecords(await Deno.readFile(path), path);
    const kept = records.filter((r, i) => {
      const step = eventStep(r, `${path} record ${i}`);
      return step <= maxStep || (step === 0 && i === 0);
    });
    if (kept.length === records.length && tornBytes === 0) continue;
    const framed = kept.map(encodeTfRecord);
    const bytes = new Uint8Array(framed.reduce((n, f) => n + f.length, 0));
    let at = 0;
    for (const f of framed) {
      bytes.set(f, at);
      at += f.length;
    }
    // The temporary name must not contain "tfevents": TensorBoard would read a leftover one.
    const tmp = join(dir, `.rlvr-truncating-${Deno.pid}`);
    const file = await Deno.open(tmp, { write: true, create: true, truncate: true });
    try {
      let w = 0;
      while (w < bytes.length) w += await file.write(bytes.subarray(w));
      await file.syncData();
    } finally {
      file.close();
    }
    await Deno.rename(tmp, path);
    result.files++;
    result.dropped += records.length - kept.length;
    result.tornBytes += tornBytes;
  }
  return result;
}
