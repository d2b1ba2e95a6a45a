/**
 * A metrics sink that prints one `key=value` line per record, for humans watching a run.
 *
 * Design decision: numbers are shown with 4 significant digits (integers in full), keys in
 * record order, and the line goes through an injectable `print` function (default
 * `console.log`) so tests and progress bars can capture it. It is lossy by design; use
 * {@link JsonlSink} for the record of truth.
 *
 * @module
 */

import { type MetricsRecord, type MetricsSink, type MetricValue, recordEntries } from "./types.ts";

/**
 * Options of {@link ConsoleSink}.
 *
 * @example Usage
 * ```ts
 * import type { ConsoleSinkOptions } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const o: ConsoleSinkOptions = { prefix: "[train]", keys: ["step", "loss"] };
 * assert.equal(o.keys!.length, 2);
 * ```
 */
export interface ConsoleSinkOptions {
  /** Receives each formatted line (default `console.log`). */
  print?: (line: string) => void;
  /** Only these keys, in this order (default: every key of the record, in record order). */
  keys?: readonly string[];
  /** Put before every line, e.g. `"[worker 3]"`. */
  prefix?: string;
  /** Significant digits of non-integer numbers (default 4). */
  digits?: number;
}

/**
 * Formats one value the way {@link ConsoleSink} prints it.
 *
 * @param value The metric value.
 * @param digits Significant digits of non-integers.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { formatMetric } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   [formatMetric(12345), formatMetric(0.123456), formatMetric(null), formatMetric(NaN)],
 *   ["12345", "0.1235", "-", "NaN"],
 * );
 * ```
 */
export function formatMetric(value: MetricValue, digits = 4): string {
  if (value === null) return "-";
  if (typeof value !== "number") return String(value);
  if (Number.isInteger(value) || !Number.isFinite(value)) return String(value);
  return String(Number(value.toPrecision(digits)));
}

/**
 * Prints each record as one line of `key=value` pairs.
 *
 * @example Usage
 * ```ts
 * import { ConsoleSink } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * const sink = new ConsoleSink({ print: (l) => lines.push(l), prefix: "[train]" });
 * await sink.write({ step: 3, loss: 0.123456, phase: "rl" });
 * await sink.close();
 * assert.deepEqual(lines, ["[train] step=3 loss=0.1235 phase=rl"]);
 * ```
 */
export class ConsoleSink implements MetricsSink {
  #print: (line: string) => void;
  #keys: readonly string[] | undefined;
  #prefix: string;
  #digits: number;
  #closed = false;

  /**
   * A sink that prints to `options.print` (default `console.log`).
   *
   * @param options Output function, key selection, prefix and digits.
   */
  constructor(options: ConsoleSinkOptions = {}) {
    this.#print = options.print ?? ((l) => console.log(l));
    this.#keys = options.keys;
    this.#prefix = options.prefix === undefined ? "" : `${options.prefix} `;
    this.#digits = options.digits ?? 4;
    if (!Number.isInteger(this.#digits) || this.#digits < 1 || this.#digits > 21) {
      throw new RangeError(
        `ConsoleSink: options.digits must be an integer in [1, 21], got ${options.digits}`,
      );
    }
  }

  /**
   * Prints one record.
   *
   * @param record The metrics.
   *
   * @example Usage
   * ```ts
   * import { ConsoleSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const lines: string[] = [];
   * const sink = new ConsoleSink({ print: (l) => lines.push(l), keys: ["b", "a"] });
   * await sink.write({ a: 1, b: 2, c: 3 });
   * assert.deepEqual(lines, ["b=2 a=1"]);
   * ```
   */
  write(record: MetricsRecord): Promise<void> {
    try {
      if (this.#closed) throw new Error("ConsoleSink.write: the sink is closed");
      const entries = recordEntries("ConsoleSink", record);
      const map = new Map(entries);
      const keys = this.#keys ?? entries.map(([k]) => k);
      const parts = keys.filter((k) => map.has(k)).map((k) =>
        `${k}=${formatMetric(map.get(k)!, this.#digits)}`
      );
      this.#print(this.#prefix + parts.join(" "));
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Marks the sink closed.
   *
   * @example Usage
   * ```ts
   * import { ConsoleSink } from "@rlvr/infra";
   * import assert from "node:assert/strict";
   * const sink = new ConsoleSink({ print: () => {} });
   * await sink.close();
   * await assert.rejects(sink.write({ a: 1 }), /closed/);
   * ```
   */
  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }
}
