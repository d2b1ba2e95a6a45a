/**
 * The metrics sink contract shared by the console, JSONL and CSV sinks.
 *
 * Design decision: a record is one flat object of scalars per logging step (`{ step: 3,
 * "reward/mean": 0.4, "staleness/0": 12 }`), the shape every tracker (wandb, TensorBoard, CSV)
 * accepts; nested data such as histograms is flattened by its owner (`Histogram.toRecord`).
 * `write` is async so that file sinks can await their single `write` call, and sinks serialize
 * concurrent calls themselves: callers may fire and forget within one step and still get whole,
 * ordered lines.
 *
 * @module
 */

/**
 * One metric value: a number (NaN and ±Infinity allowed), a string, a boolean, or null (no
 * value this step).
 *
 * @example Usage
 * ```ts
 * import type { MetricValue } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const v: MetricValue = 0.25;
 * assert.equal(v, 0.25);
 * ```
 */
export type MetricValue = number | string | boolean | null;

/**
 * One flat record of metrics (one logging step).
 *
 * @example Usage
 * ```ts
 * import type { MetricsRecord } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const r: MetricsRecord = { step: 1, "reward/mean": 0.5, phase: "train" };
 * assert.equal(Object.keys(r).length, 3);
 * ```
 */
export type MetricsRecord = Readonly<Record<string, MetricValue>>;

/**
 * Where metrics records go. Implementations: {@link ConsoleSink}, {@link JsonlSink},
 * {@link CsvSink}.
 *
 * @example Usage
 * ```ts
 * import type { MetricsRecord, MetricsSink } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const seen: MetricsRecord[] = [];
 * const memory: MetricsSink = {
 *   write: (r) => Promise.resolve(void seen.push(r)),
 *   close: () => Promise.resolve(),
 * };
 * await memory.write({ step: 0 });
 * assert.equal(seen.length, 1);
 * ```
 */
export interface MetricsSink {
  /** Writes one record; resolves once it is handed to the OS (file sinks) or printed. */
  write(record: MetricsRecord): Promise<void>;
  /** Waits for pending writes and releases the sink; later writes throw. Idempotent. */
  close(): Promise<void>;
}

/**
 * Checks that `record` is a flat object of {@link MetricValue}s and returns its entries.
 * Internal: shared by the sinks so that every sink rejects the same inputs.
 */
export function recordEntries(sink: string, record: MetricsRecord): [string, MetricValue][] {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    throw new TypeError(`${sink}.write: record must be a plain object, got ${String(record)}`);
  }
  const entries = Object.entries(record);
  for (const [k, v] of entries) {
    if (k.length === 0) throw new TypeError(`${sink}.write: a metric key is the empty string`);
    const ok = v === null || typeof v === "number" || typeof v === "string" ||
      typeof v === "boolean";
    if (!ok) {
      throw new TypeError(
        `${sink}.write: metric ${JSON.stringify(k)} is ${typeof v}; values must be numbers, ` +
          `strings, booleans or null (flatten nested data, e.g. histogram.toRecord("${k}"))`,
      );
    }
  }
  return entries;
}
