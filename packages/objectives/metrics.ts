/**
 * Reading and releasing the metric tensors that every loss returns. Losses never read values
 * back themselves (a GPU backend stays asynchronous); the caller reads them once per step.
 *
 * @module
 */

import type { Metrics } from "./types.ts";

/**
 * Reads every scalar metric tensor to a number (in parallel). With `dispose: true` the tensors
 * are disposed after reading.
 *
 * @example Usage
 * ```ts
 * import { readMetrics } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const m = await readMetrics({ a: tensor(1.5), b: tensor([2]) }, { dispose: true });
 * assert.deepEqual(m, { a: 1.5, b: 2 });
 * ```
 */
export async function readMetrics(
  metrics: Metrics,
  options: { dispose?: boolean } = {},
): Promise<Record<string, number>> {
  const entries = Object.entries(metrics);
  try {
    const values = await Promise.all(entries.map(([, t]) => t.item()));
    return Object.fromEntries(entries.map(([k], i) => [k, values[i]!]));
  } finally {
    if (options.dispose) disposeMetrics(metrics);
  }
}

/**
 * Disposes every metric tensor.
 *
 * @example Usage
 * ```ts
 * import { disposeMetrics } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const metrics = { a: tensor(1) };
 * disposeMetrics(metrics);
 * assert.ok(metrics.a.isDisposed);
 * ```
 */
export function disposeMetrics(metrics: Metrics): void {
  for (const t of Object.values(metrics)) t.dispose();
}
