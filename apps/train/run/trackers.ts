/**
 * Trackers of a run directory: where the records of `metrics.jsonl`, `eval.jsonl` and
 * `samples.jsonl` also go (`output.tensorboard`, `output.sinks`, and `MetricsSink` objects given
 * programmatically). {@link RunDir} calls them after each JSONL append, so every record of the
 * run reaches every tracker, and truncates their files with the JSONL files on resume.
 *
 * | option                   | output                                                                   |
 * | ------------------------ | ------------------------------------------------------------------------ |
 * | `tensorboard: true`      | `tb/events.out.tfevents.*`: metrics as scalars (tag = key), evals as `eval/<key>`, samples as one `samples` text per step |
 * | `sinks: [csv]`           | `metrics.csv`, `eval.csv` (columns fixed by each file's first record)    |
 * | `sinks: [console]`       | one `key=value` line per record through `print` (eval keys `eval/<key>`) |
 * | `metricsSinks: [s, ...]` | each `MetricsSink` gets every metrics record, and every eval record with its keys prefixed `eval/` |
 *
 * Design decisions:
 * - **The JSONL files stay the record of truth**: a tracker gets a record after its line was
 *   written, so a failing tracker (its error propagates) never loses a record from the files
 *   that resume, the report and the summary read.
 * - **One TensorBoard text per step**: samples are collected per step and written as one
 *   Markdown table when the step's samples are complete (a record of a later step, a checkpoint
 *   or `close`), because TensorBoard keeps one value per tag and step. A crash can lose only the
 *   samples of steps after the last checkpoint, which resume truncates and logs again anyway.
 * - **Resume**: {@link truncateTrackers} keeps the steps <= the checkpoint's in `metrics.csv`,
 *   `eval.csv` and the event files (and cuts a write torn by the crash), as `RunDir.resume` does
 *   with the JSONL files; the resumed process writes a new event file that starts with a
 *   `SessionLog` START at the next step.
 * - **CSV columns are fixed by the first record** (`CsvSink`); a key that first appears later
 *   is left out of the CSV (the JSONL has it) and named once through `warn`, instead of failing
 *   the run.
 * - Programmatic sinks belong to the caller: the run directory writes to them but never closes
 *   them.
 *
 * @module
 */

import { readTextOrNull } from "@rlvr/common/fs";
import { join } from "node:path";
import {
  ConsoleSink,
  csvCell,
  CsvSink,
  type MetricsRecord,
  type MetricsSink,
  parseCsv,
  TensorBoardWriter,
  truncateEventFiles,
} from "@rlvr/infra";
import type { OutputSection } from "../config/types.ts";
import { writeFileAtomic } from "./atomic.ts";

/** The names `output.sinks` accepts. */
export const SINK_NAMES: readonly ["jsonl", "csv", "console"] = Object.freeze(
  ["jsonl", "csv", "console"] as const,
);

/** One of {@link SINK_NAMES}. */
export type SinkName = (typeof SINK_NAMES)[number];

// The config's list and this one must stay the same.
const _sameNames: [SinkName] extends [NonNullable<OutputSection["sinks"]>[number]]
  ? [NonNullable<OutputSection["sinks"]>[number]] extends [SinkName] ? true : false
  : false = true;

/** The tracker files of a run directory. */
export const TRACKER_FILES: Readonly<{ tensorboard: string; metricsCsv: string; evalCsv: string }> =
  Object.freeze({ tensorboard: "tb", metricsCsv: "metrics.csv", evalCsv: "eval.csv" });

/**
 * What a run directory sends its records to, besides its JSONL files.
 *
 * @example Usage
 * ```ts
 * import { RunDir } from "./run_dir.ts";
 * import { type TrackerOptions } from "./trackers.ts";
 * import assert from "node:assert/strict";
 * const root = await Deno.makeTempDir();
 * const options: TrackerOptions = { tensorboard: true, sinks: ["jsonl", "csv"] };
 * const run = await RunDir.create(root, "r", options);
 * assert.ok(run.file("tensorboard").endsWith("/tb"));
 * await run.close();
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export interface TrackerOptions {
  /** Write TensorBoard event files to `tb/` (default false). */
  tensorboard?: boolean;
  /** Sinks by name (default `["jsonl"]`; `jsonl` is the run's own files, always written). */
  sinks?: readonly SinkName[];
  /** Sinks that receive every metrics and eval record (the caller closes them). */
  metricsSinks?: readonly MetricsSink[];
  /** Where the `console` sink prints (default `console.log`). */
  print?: (line: string) => void;
  /** Where warnings go (default `console.warn`). */
  warn?: (line: string) => void;
}

/**
 * The tracker options of a config's `output` section, with the programmatic sinks and the log
 * of `runTraining`'s options.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig } from "@rlvr/train";
 * import { trackerOptions } from "./trackers.ts";
 * import assert from "node:assert/strict";
 * const config = defaultConfig();
 * config.output.tensorboard = true;
 * const lines: string[] = [];
 * const o = trackerOptions(config, { log: (l) => lines.push(l) });
 * assert.equal(o.tensorboard, true);
 * assert.deepEqual(o.sinks, ["jsonl"]);
 * o.print!("x");
 * assert.deepEqual(lines, ["x"]);
 * ```
 */
export function trackerOptions(
  config: { output: OutputSection },
  options: { sinks?: readonly MetricsSink[]; log?: (line: string) => void } = {},
): TrackerOptions {
  const log = options.log;
  return {
    tensorboard: config.output.tensorboard ?? false,
    sinks: config.output.sinks ?? ["jsonl"],
    metricsSinks: options.sinks ?? [],
    ...(log === undefined ? {} : { print: log, warn: log }),
  };
}

/**
 * A sample as the TensorBoard text shows it (the fields of a `samples.jsonl` record it uses).
 *
 * @example Usage
 * ```ts
 * import type { SampleRow } from "./trackers.ts";
 * import assert from "node:assert/strict";
 * const row: SampleRow = { prompt: "1+1=", completion: "2", reward: 1 };
 * assert.equal(row.reward, 1);
 * ```
 */
export interface SampleRow {
  /** The prompt as the model saw it. */
  prompt: string;
  /** The completion. */
  completion: string;
  /** Its reward (shown with `String`). */
  reward: unknown;
}

const MD_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "|": "&#124;",
  "\\": "&#92;",
  "`": "&#96;",
  "*": "&#42;",
  "_": "&#95;",
  "[": "&#91;",
  "]": "&#93;",
  "#": "&#35;",
};

/**
 * One table cell of Markdown showing `text` literally: HTML and Markdown characters become
 * entities (TensorBoard's sanitiser would drop a `<think>` tag), newlines `<br>`.
 *
 * @example Usage
 * ```ts
 * import { markdownCell } from "./trackers.ts";
 * import assert from "node:assert/strict";
 * assert.equal(markdownCell("<a>|b\n*c*"), "&lt;a&gt;&#124;b<br>&#42;c&#42;");
 * ```
 */
export function markdownCell(text: string): string {
  return text.replace(/[&<>|\\`*_[\]#]/g, (c) => MD_ESCAPES[c]!).replace(/\r?\n/g, "<br>");
}

/**
 * The Markdown table of one step's samples (the TensorBoard text of tag `samples`).
 *
 * @example Usage
 * ```ts
 * import { samplesMarkdown } from "./trackers.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   samplesMarkdown([{ prompt: "1+1=", completion: "2", reward: 1 }]),
 *   "| prompt | completion | reward |\n| --- | --- | --- |\n| 1+1= | 2 | 1 |",
 * );
 * ```
 */
export function samplesMarkdown(samples: readonly SampleRow[]): string {
  const rows = samples.map((s) =>
    `| ${markdownCell(s.prompt)} | ${markdownCell(s.completion)} | ${
      markdownCell(String(s.reward))
    } |`
  );
  return ["| prompt | completion | reward |", "| --- | --- | --- |", ...rows].join("\n");
}

/** The numeric values of a record, keyed by tag (`prefix + key`), without the step. */
function scalarsOf(record: Readonly<Record<string, unknown>>, prefix: string) {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(record)) {
    if (k !== "step" && typeof v === "number") out[prefix + k] = v;
  }
  return out;
}

/** An eval record with its keys (but `step`) prefixed `eval/`. */
function prefixed(record: Readonly<Record<string, unknown>>): MetricsRecord {
  const out: Record<string, MetricsRecord[string]> = {};
  for (const [k, v] of Object.entries(record)) {
    out[k === "step" ? k : `eval/${k}`] = v as MetricsRecord[string];
  }
  return out;
}

/** A CSV file whose columns were fixed by its first record; later new keys are left out. */
class CsvTarget {
  #sink: Promise<CsvSink> | null = null;
  #warned = new Set<string>();
  constructor(readonly path: string, readonly warn: (line: string) => void) {}

  async write(record: Readonly<Record<string, unknown>>): Promise<void> {
    if (this.#sink === null) {
      this.#sink = CsvSink.open(this.path);
      this.#sink.catch(() => (this.#sink = null));
    }
    const sink = await this.#sink;
    const columns = sink.columns;
    let row = record as MetricsRecord;
    if (columns !== null) {
      const known = new Set(columns);
      const extra = Object.keys(record).filter((k) => !known.has(k) && !this.#warned.has(k));
      if (extra.length > 0) {
        for (const k of extra) this.#warned.add(k);
        this.warn(
          `trackers: ${this.path}: ${extra.map((k) => JSON.stringify(k)).join(", ")} first ` +
            `appeared at step ${JSON.stringify(record.step)}, after the CSV's columns were fixed ` +
            `by its first record (${
              columns.join(", ")
            }); left out of the CSV (the JSONL file has ` +
            `every key)`,
        );
      }
      row = Object.fromEntries(
        columns.filter((c) => c in record).map((c) => [c, record[c] as MetricsRecord[string]]),
      );
    }
    await sink.write(row);
  }

  async close(): Promise<void> {
    const s = this.#sink;
    this.#sink = null;
    if (s !== null) await s.then((x) => x.close(), () => {});
  }
}

/**
 * The trackers of one run directory (see the module doc); `RunDir` owns one.
 *
 * @example Usage
 * ```ts
 * import { RunTrackers } from "./trackers.ts";
 * import type { MetricsRecord } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const seen: MetricsRecord[] = [];
 * const sink = { write: (r: MetricsRecord) => Promise.resolve(void seen.push(r)), close: () => Promise.resolve() };
 * const t = new RunTrackers(dir, { sinks: ["csv"], metricsSinks: [sink] });
 * await t.metrics({ step: 1, loss: 0.5 });
 * await t.eval({ step: 1, "pass@1": 0.25 });
 * await t.close();
 * assert.deepEqual(seen, [{ step: 1, loss: 0.5 }, { step: 1, "eval/pass@1": 0.25 }]);
 * assert.equal(await Deno.readTextFile(`${dir}/metrics.csv`), "step,loss\n1,0.5\n");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class RunTrackers {
  readonly #path: string;
  readonly #options: TrackerOptions;
  readonly #durable: boolean;
  readonly #sinks: MetricsSink[];
  readonly #csv: { metrics: CsvTarget; eval: CsvTarget } | null;
  #tb: Promise<TensorBoardWriter> | null = null;
  #pending: { step: number; rows: SampleRow[] } | null = null;
  /** The step a resumed run continues at (the event file's SessionLog START), if resumed. */
  #startStep: number | undefined = undefined;

  /**
   * Trackers writing into the run directory `path`.
   *
   * @param path The run directory.
   * @param options What to track.
   * @param durable fsync every event file write (as the JSONL files' `durable`).
   */
  constructor(path: string, options: TrackerOptions = {}, durable = false) {
    this.#path = path;
    this.#options = options;
    this.#durable = durable;
    const names = new Set(options.sinks ?? ["jsonl"]);
    for (const n of names) {
      if (!(SINK_NAMES as readonly string[]).includes(n)) {
        throw new RangeError(
          `RunTrackers: unknown sink ${JSON.stringify(n)}; use ${SINK_NAMES.join(", ")}`,
        );
      }
    }
    const warn = options.warn ?? ((l: string) => console.warn(l));
    this.#csv = names.has("csv")
      ? {
        metrics: new CsvTarget(join(path, TRACKER_FILES.metricsCsv), warn),
        eval: new CsvTarget(join(path, TRACKER_FILES.evalCsv), warn),
      }
      : null;
    this.#sinks = [
      ...(names.has("console") ? [new ConsoleSink({ print: options.print ?? console.log })] : []),
      ...(options.metricsSinks ?? []),
    ];
  }

  #writer(): Promise<TensorBoardWriter> {
    if (this.#tb === null) {
      this.#tb = TensorBoardWriter.open(join(this.#path, TRACKER_FILES.tensorboard), {
        durable: this.#durable,
        ...(this.#startStep === undefined ? {} : { startStep: this.#startStep }),
      });
      this.#tb.catch(() => (this.#tb = null));
    }
    return this.#tb;
  }

  async #flushIfOtherStep(step: number): Promise<void> {
    if (this.#pending !== null && this.#pending.step !== step) await this.flush();
  }

  /** Sends a `metrics.jsonl` record (already written there) to every tracker. */
  async metrics(record: Readonly<Record<string, unknown>>): Promise<void> {
    const step = record.step as number;
    await this.#flushIfOtherStep(step);
    if (this.#options.tensorboard === true) {
      await (await this.#writer()).scalars(step, scalarsOf(record, ""));
    }
    await this.#csv?.metrics.write(record);
    for (const s of this.#sinks) await s.write(record as MetricsRecord);
  }

  /** Sends an `eval.jsonl` record (already written there) to every tracker. */
  async eval(record: Readonly<Record<string, unknown>>): Promise<void> {
    const step = record.step as number;
    await this.#flushIfOtherStep(step);
    if (this.#options.tensorboard === true) {
      await (await this.#writer()).scalars(step, scalarsOf(record, "eval/"));
    }
    await this.#csv?.eval.write(record);
    if (this.#sinks.length > 0) {
      const p = prefixed(record);
      for (const s of this.#sinks) await s.write(p);
    }
  }

  /** Collects a `samples.jsonl` record for the step's TensorBoard text. */
  async sample(record: Readonly<Record<string, unknown>>): Promise<void> {
    if (this.#options.tensorboard !== true) return;
    const step = record.step as number;
    await this.#flushIfOtherStep(step);
    this.#pending ??= { step, rows: [] };
    this.#pending.rows.push({
      prompt: String(record.prompt),
      completion: String(record.completion),
      reward: record.reward,
    });
  }

  /** Writes the collected samples' text (called before a checkpoint and by `close`). */
  async flush(): Promise<void> {
    const p = this.#pending;
    if (p === null) return;
    this.#pending = null;
    await (await this.#writer()).text(p.step, "samples", samplesMarkdown(p.rows));
  }

  /**
   * Marks the run as resumed after `step`: the next event file starts with a `SessionLog`
   * START at `step + 1`.
   */
  resumedAfter(step: number): void {
    this.#startStep = step + 1;
  }

  /** Flushes and closes the files (trackers reopen on the next record; sinks given are kept open). */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      const tb = this.#tb;
      this.#tb = null;
      if (tb !== null) await tb.then((w) => w.close(), () => {});
      await this.#csv?.metrics.close();
      await this.#csv?.eval.close();
    }
  }
}

/**
 * What {@link truncateTrackers} dropped.
 *
 * @example Usage
 * ```ts
 * import type { TrackerTruncation } from "./trackers.ts";
 * import assert from "node:assert/strict";
 * const t: TrackerTruncation = { csvRows: { "metrics.csv": 2 }, events: 5 };
 * assert.equal(t.events, 5);
 * ```
 */
export interface TrackerTruncation {
  /** CSV rows dropped, per file that exists. */
  csvRows: Record<string, number>;
  /** TensorBoard events dropped. */
  events: number;
}

async function truncateCsv(path: string, step: number): Promise<number | null> {
  const text = await readTextOrNull(path);
  if (text === null) return null;
  const { columns, rows, partial } = parseCsv(text);
  const at = columns.indexOf("step");
  if (columns.length > 0 && at < 0) {
    throw new Error(
      `truncateTrackers: ${path} has no "step" column (columns: ${columns.join(", ")}); ` +
        `it was not written by a run directory - move it away and resume again`,
    );
  }
  const kept = rows.filter((r) => Number(r[at]) <= step);
  if (kept.length === rows.length && partial === null) return 0;
  const lines = columns.length === 0 ? [] : [columns, ...kept];
  await writeFileAtomic(
    path,
    lines.map((cells) => cells.map(csvCell).join(",") + "\n").join(""),
  );
  return rows.length - kept.length;
}

/**
 * Keeps the records with `step <= step` in a run directory's tracker files (`metrics.csv`,
 * `eval.csv`, `tb/`), removing a write torn by a crash; missing files are nothing to do.
 *
 * @example Usage
 * ```ts
 * import { truncateTrackers } from "./trackers.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/metrics.csv`, "step,loss\n1,0.5\n2,0.4\n3,0.");
 * assert.deepEqual(await truncateTrackers(dir, 1), { csvRows: { "metrics.csv": 1 }, events: 0 });
 * assert.equal(await Deno.readTextFile(`${dir}/metrics.csv`), "step,loss\n1,0.5\n");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function truncateTrackers(path: string, step: number): Promise<TrackerTruncation> {
  const csvRows: Record<string, number> = {};
  for (const name of [TRACKER_FILES.metricsCsv, TRACKER_FILES.evalCsv]) {
    const n = await truncateCsv(join(path, name), step);
    if (n !== null) csvRows[name] = n;
  }
  const tb = await truncateEventFiles(join(path, TRACKER_FILES.tensorboard), step);
  return { csvRows, events: tb.dropped };
}
