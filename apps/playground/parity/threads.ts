/**
 * The parity page's threads check: runs `threads_worker.js` in a dedicated Web Worker and
 * returns what it found, next to what the page's own thread gets.
 *
 * @module
 */

import { createCpuBackend } from "@rlvr/tensor";

/** What the threads worker (`threads_worker.ts`) found. */
export interface ThreadsReport {
  /** An error that stopped it ("" when none). */
  error: string;
  /** The worker's `crossOriginIsolated`. */
  crossOriginIsolated: boolean;
  /** The matmul path of its CPU backend (`wasm-relaxed`, `wasm-simd`). */
  path: string;
  /** Threads its `threads: 2` backend splits a product over (1 when no helper started). */
  threads: number;
  /** Random products on that backend vs a one-thread one: elements whose bits differ. */
  products: { shape: string; differing: number }[];
  /** Median ms of a 512³ product on one thread and on `threads`. */
  ms512: { one: number; many: number };
}

/** The check's result on the page: the worker's report and the page thread's own threads. */
export interface ThreadsCheck {
  /** The worker's report, or null when the page is not cross-origin isolated. */
  worker: ThreadsReport | null;
  /** Threads a `threads: 2` CPU backend gets on the page's main thread (expected: 1). */
  mainThread: number;
}

/**
 * Runs the threads worker (`workerUrl`, a bundled module) with `seed`; rejects after
 * `timeoutMs`.
 *
 * @param workerUrl URL of `threads_worker.js`.
 * @param seed Seed of the random products.
 * @param timeoutMs How long to wait for the worker's report.
 * @returns The worker's report and the main thread's thread count.
 *
 * @example Usage
 * ```ts ignore
 * import { runThreadsCheck } from "./threads.ts";
 * const check = await runThreadsCheck(new URL("threads_worker.js", location.href), 25);
 * console.log(check.worker?.threads, check.mainThread);
 * ```
 */
export async function runThreadsCheck(
  workerUrl: URL,
  seed: number,
  timeoutMs = 60_000,
): Promise<ThreadsCheck> {
  const mainThread = createCpuBackend({ kernels: "wasm", blas: "wasm", threads: 2 }).matmulThreads;
  if (globalThis.crossOriginIsolated !== true) return { worker: null, mainThread };
  const worker = new Worker(workerUrl, { type: "module" });
  try {
    const report = await new Promise<ThreadsReport>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the threads worker sent nothing in ${timeoutMs} ms`)),
        timeoutMs,
      );
      worker.onmessage = (e: MessageEvent<ThreadsReport>) => {
        clearTimeout(timer);
        resolve(e.data);
      };
      worker.onerror = (e) => {
        clearTimeout(timer);
        reject(new Error(`the threads worker failed: ${e.message}`));
      };
      worker.postMessage({ seed });
    });
    return { worker: report, mainThread };
  } finally {
    worker.terminate();
  }
}
