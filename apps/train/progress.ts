/**
 * Terminal progress for `deno task train`: a progress bar with elapsed time, ETA and live key
 * metrics (reward, held-out pass@1, tokens/s), and {@link summaryTable} for the final table.
 *
 * Design decisions: on a terminal the bar redraws one line in place (`\r` and erase-to-end),
 * truncated to the terminal width so it never wraps; when output goes to a file or a CI log
 * (`Deno.stdout.isTerminal()` is false) it prints a plain line each time another `plainEvery`
 * percent is done, so logs stay short and readable. The ETA uses the rate of the steps done
 * in this process (a resumed run starts its clock at the resumed step). Time and output are
 * injectable, so the strings are unit-tested exactly.
 *
 * @module
 */

import { formatNumber } from "./report/summary.ts";

/**
 * Formats seconds as `42s`, `3m05s` or `1h02m` (`-` for a non-finite or negative value).
 *
 * @example Usage
 * ```ts
 * import { formatDuration } from "./progress.ts";
 * import assert from "node:assert/strict";
 * assert.equal(formatDuration(42.4), "42s");
 * assert.equal(formatDuration(185), "3m05s");
 * assert.equal(formatDuration(3720), "1h02m");
 * assert.equal(formatDuration(NaN), "-");
 * ```
 */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "-";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** The live metrics shown on the progress line (absent or null ones are left out). */
export interface LiveMetrics {
  /** Mean reward of the last step. */
  reward?: number | null;
  /** Held-out pass@1 of the last evaluation. */
  pass1?: number | null;
  /** Tokens per second of the last step. */
  tokensPerS?: number | null;
}

/** What {@link progressLine} formats. */
export interface ProgressState {
  /** Steps done so far (including those before a resume). */
  done: number;
  /** Total steps. */
  total: number;
  /** Steps already done when this process started (resume), default 0. */
  start?: number;
  /** Seconds since this process started counting. */
  elapsedS: number;
  /** Live metrics. */
  metrics?: LiveMetrics;
  /** Bar width in characters (default 24). */
  width?: number;
  /** Prefix (default `train`). */
  label?: string;
}

/**
 * One progress line: label, bar, `done/total`, percent, elapsed, ETA and the live metrics.
 *
 * @example Usage
 * ```ts
 * import { progressLine } from "./progress.ts";
 * import assert from "node:assert/strict";
 * const line = progressLine({
 *   done: 25, total: 100, elapsedS: 50, width: 10, metrics: { reward: 0.5, pass1: 0.25, tokensPerS: 1234 },
 * });
 * assert.equal(line, "train [##--------]   25/100   25%  elapsed 50s  ETA 2m30s  reward 0.5  pass@1 0.25  tok/s 1234");
 * ```
 */
export function progressLine(state: ProgressState): string {
  const { done, total } = state;
  const width = state.width ?? 24;
  const frac = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
  const filled = Math.floor(frac * width);
  const bar = "#".repeat(filled) + "-".repeat(width - filled);
  const doneHere = done - (state.start ?? 0);
  const eta = doneHere > 0 ? (state.elapsedS / doneHere) * (total - done) : NaN;
  const digits = String(total).length;
  const parts = [
    `${state.label ?? "train"} [${bar}]`,
    `${String(done).padStart(digits)}/${total}`,
    `${String(Math.floor(frac * 100)).padStart(3)}%`,
    `elapsed ${formatDuration(state.elapsedS)}`,
    `ETA ${done >= total ? "0s" : formatDuration(eta)}`,
  ];
  const m = state.metrics ?? {};
  if (m.reward != null) parts.push(`reward ${formatNumber(m.reward)}`);
  if (m.pass1 != null) parts.push(`pass@1 ${formatNumber(m.pass1)}`);
  if (m.tokensPerS != null) parts.push(`tok/s ${formatNumber(m.tokensPerS)}`);
  return parts.join("  ");
}

/** Options of {@link ProgressBar}. */
export interface ProgressOptions {
  /** Total steps. */
  total: number;
  /** Steps already done (resume), default 0. */
  start?: number;
  /** Redraw in place (default `Deno.stdout.isTerminal()`). */
  tty?: boolean;
  /** Output (default: synchronous writes to stdout). */
  write?: (text: string) => void;
  /** Clock in milliseconds (default `performance.now`). */
  now?: () => number;
  /** Without a TTY, print a line every this many percent (default 10). */
  plainEvery?: number;
  /** Terminal width the TTY line is truncated to (default `Deno.consoleSize()`, else 100). */
  columns?: number;
  /** Bar width (default 24). */
  width?: number;
  /** Prefix (default `train`). */
  label?: string;
}

function writeStdout(text: string): void {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
}

function terminalColumns(): number {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return 100;
  }
}

/**
 * A progress bar (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { ProgressBar } from "./progress.ts";
 * import assert from "node:assert/strict";
 * const out: string[] = [];
 * let t = 0;
 * const bar = new ProgressBar({ total: 4, tty: false, plainEvery: 50, write: (s) => out.push(s), now: () => t });
 * for (let step = 1; step <= 4; step++) {
 *   t += 1000;
 *   bar.update(step, { reward: step / 4 });
 * }
 * bar.finish();
 * assert.equal(out.length, 2); // at 50% and 100%
 * assert.match(out[1]!, /4\/4 +100%  elapsed 4s  ETA 0s  reward 1\n$/);
 * ```
 */
export class ProgressBar {
  readonly #o: Required<Omit<ProgressOptions, "columns">> & { columns: number };
  readonly #t0: number;
  #lastBucket: number;
  #printedDone: number | null = null;
  #done: number;
  #metrics: LiveMetrics = {};
  #finished = false;

  /** Starts the clock. */
  constructor(options: ProgressOptions) {
    if (!Number.isSafeInteger(options.total) || options.total < 1) {
      throw new RangeError(`ProgressBar: total must be an integer >= 1, got ${options.total}`);
    }
    const tty = options.tty ?? Deno.stdout.isTerminal();
    this.#o = {
      total: options.total,
      start: options.start ?? 0,
      tty,
      write: options.write ?? writeStdout,
      now: options.now ?? (() => performance.now()),
      plainEvery: options.plainEvery ?? 10,
      columns: options.columns ?? (tty ? terminalColumns() : 100),
      width: options.width ?? 24,
      label: options.label ?? "train",
    };
    this.#t0 = this.#o.now();
    this.#done = this.#o.start;
    this.#lastBucket = Math.floor((this.#done / this.#o.total) * 100 / this.#o.plainEvery);
  }

  /** The line for the current state. */
  line(): string {
    return progressLine({
      done: this.#done,
      total: this.#o.total,
      start: this.#o.start,
      elapsedS: (this.#o.now() - this.#t0) / 1000,
      metrics: this.#metrics,
      width: this.#o.width,
      label: this.#o.label,
    });
  }

  /** Records `done` steps and the latest metrics (merged with the previous ones) and draws. */
  update(done: number, metrics: LiveMetrics = {}): void {
    this.#done = done;
    this.#metrics = { ...this.#metrics, ...metrics };
    if (this.#o.tty) {
      const line = this.line().slice(0, Math.max(10, this.#o.columns - 1));
      this.#o.write(`\r${line}\x1b[K`);
      return;
    }
    const bucket = Math.floor((done / this.#o.total) * 100 / this.#o.plainEvery);
    if (bucket > this.#lastBucket || (done >= this.#o.total && !this.#finished)) {
      this.#lastBucket = bucket;
      this.#printedDone = done;
      this.#o.write(`${this.line()}\n`);
      if (done >= this.#o.total) this.#finished = true;
    }
  }

  /** Ends the bar: a newline on a TTY, otherwise the current line unless it was just printed. */
  finish(metrics: LiveMetrics = {}): void {
    this.#metrics = { ...this.#metrics, ...metrics };
    if (this.#o.tty) {
      this.#o.write(`\r${this.line().slice(0, Math.max(10, this.#o.columns - 1))}\x1b[K\n`);
    } else if (!this.#finished && this.#printedDone !== this.#done) {
      this.#o.write(`${this.line()}\n`);
    }
    this.#finished = true;
  }
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "number") return formatNumber(value);
  return String(value);
}

/**
 * A plain-text table of `rows` (objects; the columns are their keys in first-seen order).
 * Numbers are formatted with {@link formatNumber} and right-aligned; missing cells are `-`.
 *
 * @example Usage
 * ```ts
 * import { summaryTable } from "./progress.ts";
 * import assert from "node:assert/strict";
 * const table = summaryTable([
 *   { metric: "steps", value: 100 },
 *   { metric: "reward/mean", value: 0.4123456 },
 * ]);
 * assert.equal(table, [
 *   "metric        value",
 *   "-----------  ------",
 *   "steps           100",
 *   "reward/mean  0.4123",
 * ].join("\n"));
 * ```
 */
export function summaryTable(rows: readonly Record<string, unknown>[]): string {
  const columns: string[] = [];
  for (const row of rows) {
    for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  }
  if (columns.length === 0) return "";
  const numeric = columns.map((c) =>
    rows.every((r) => r[c] === undefined || r[c] === null || typeof r[c] === "number")
  );
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const fmt = (values: readonly string[]) =>
    values.map((v, i) => numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))
      .join("  ").trimEnd();
  return [
    fmt(columns),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...cells.map((row) => fmt(row)),
  ].join("\n");
}
