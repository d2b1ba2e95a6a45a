/**
 * The result of the kernel parity page (`kernels.ts`), as it leaves the page on
 * `window.__parity`, and its text summary for test logs.
 *
 * @module
 */

import type { ParityResult } from "./run.ts";
import type { ThreadsCheck } from "./threads.ts";

/** What the parity page found and measured; `window.__parity` once `done`. */
export interface ParityReport {
  /** True once the run is over (successful or not). */
  done: true;
  /** The seed of the shapes and values. */
  seed: number;
  /** Every row passed and nothing threw. */
  ok: boolean;
  /** Rows that passed. */
  passed: number;
  /** Rows that failed. */
  failed: number;
  /** Wall time of the whole run (ms), backend creation included. */
  ms: number;
  /** The backends found: a description, or `none (<why>)`. */
  backends: {
    /** The oracle: always `cpu (TypeScript kernels)`. */
    oracle: string;
    /** The CPU backend's matmul path (`wasm-relaxed`, `wasm-simd`), or `none (...)`. */
    wasm: string;
    /** The WebGPU adapter's description, or `none (...)`. */
    webgpu: string;
  };
  /** Whether WebGPU checks ran. */
  webgpuRan: boolean;
  /** Whether WebAssembly checks ran. */
  wasmRan: boolean;
  /** The page's `crossOriginIsolated`. */
  crossOriginIsolated: boolean;
  /** The browser's user agent. */
  userAgent: string;
  /** The comparisons. */
  results: ParityResult[];
  /**
   * The multi-threaded WebAssembly matmul in a dedicated worker vs one thread (`threads.ts`), or
   * null when it did not run (the comparisons failed first).
   */
  threads: ThreadsCheck | null;
  /** An error that stopped the run ("" when none). */
  error: string;
}

function num(x: number | null): string {
  return x === null ? "—" : x === 0 ? "0" : x.toExponential(2);
}

/**
 * A plain-text table of `report` (one line per row, failures marked), for test logs.
 *
 * @param report The page's report.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { summarizeReport } from "./report.ts";
 * import assert from "node:assert/strict";
 * const text = summarizeReport({
 *   done: true, seed: 1, ok: true, passed: 0, failed: 0, ms: 5, webgpuRan: false, wasmRan: false,
 *   backends: { oracle: "cpu", wasm: "none (no SIMD)", webgpu: "none (no adapter)" },
 *   crossOriginIsolated: true, userAgent: "test", results: [], threads: null, error: "",
 * });
 * assert.match(text, /webgpu: none \(no adapter\)/);
 * ```
 */
export function summarizeReport(report: ParityReport): string {
  const b = report.backends;
  const lines = [
    `seed ${report.seed}: ${report.passed} passed, ${report.failed} failed in ` +
    `${(report.ms / 1000).toFixed(1)} s (cross-origin isolated: ${report.crossOriginIsolated})`,
    `backends: oracle: ${b.oracle}; wasm: ${b.wasm}; webgpu: ${b.webgpu}`,
  ];
  const th = report.threads;
  if (th !== null) {
    const w = th.worker;
    lines.push(
      w === null
        ? `threads: not cross-origin isolated; main thread ${th.mainThread}`
        : `threads: worker ${w.threads} (${w.path}), main thread ${th.mainThread}; ` +
          w.products.map((p) => `${p.shape}: ${p.differing} bits differ`).join(", ") +
          `; 512³ ${w.ms512.one.toFixed(1)} ms on 1 thread, ${w.ms512.many.toFixed(1)} ms on ` +
          `${w.threads}${w.error === "" ? "" : `; error: ${w.error}`}`,
    );
  }
  for (const r of report.results) {
    lines.push(
      `${r.pass ? "ok  " : "FAIL"} ${r.backend.padEnd(6)} ${r.check} | ${r.what} | ${r.shape} | ` +
        `abs ${num(r.maxAbs)} rel ${num(r.maxRel)} ratio ${num(r.ratio)} | ${r.tolerance} | ` +
        `${r.ms.toFixed(0)} ms${r.pass ? "" : `\n       ${r.detail}`}`,
    );
  }
  if (report.error !== "") lines.push(`error: ${report.error}`);
  return lines.join("\n");
}
