/**
 * Dedicated-worker entry of the parity page (bundled as `threads_worker.js`): the WebAssembly
 * matmul on several threads in a browser. Posted `{ seed }`, it builds a CPU backend with
 * `threads: 2` and one with `threads: 1`, checks that random products give the same bits on both
 * (a tile's bits never depend on which thread computes it), times a 512³ product on each, and
 * posts a {@link ThreadsReport} back.
 *
 * Why a worker: the matmul's calling thread waits for its helpers' grains with `Atomics.wait`,
 * which a page's main thread may not call, so `@rlvr/tensor` starts Web Workers (on a shared
 * `WebAssembly.Memory`) only where the caller may block and the context is cross-origin isolated;
 * on the page itself it runs on one thread.
 *
 * @module
 */

import { createCpuBackend, matmul, Rng, tensor } from "@rlvr/tensor";
import type { ThreadsReport } from "./threads.ts";

/** Products big enough to be split over threads (at least 2^25 multiply-adds). */
const SHAPES: readonly [number, number, number][] = [[256, 512, 384], [97, 1031, 520], [
  64,
  2056,
  300,
]];

async function measure(seed: number): Promise<ThreadsReport> {
  const threads = 2;
  const many = createCpuBackend({ kernels: "wasm", blas: "wasm", threads });
  const one = createCpuBackend({ kernels: "wasm", blas: "wasm", threads: 1 });
  // The helpers start in the background; give them a moment before timing.
  await new Promise((r) => setTimeout(r, 300));
  const rng = new Rng(seed);
  const products: ThreadsReport["products"] = [];
  for (const [m, n, k] of SHAPES) {
    const transA = rng.uniform() < 0.5, transB = rng.uniform() < 0.5;
    const a = Float32Array.from({ length: m * k }, () => rng.uniform() * 2 - 1);
    const b = Float32Array.from({ length: k * n }, () => rng.uniform() * 2 - 1);
    const out: Float32Array[] = [];
    for (const backend of [many, one]) {
      const A = tensor(a, { shape: transA ? [k, m] : [m, k], backend });
      const B = tensor(b, { shape: transB ? [n, k] : [k, n], backend });
      const C = matmul(A, B, { transA, transB });
      out.push(await C.data() as Float32Array);
      for (const t of [A, B, C]) t.dispose();
    }
    const [x, y] = out.map((o) => new Uint32Array(o.buffer, o.byteOffset, o.length));
    let differing = 0;
    for (let i = 0; i < x!.length; i++) if (x![i] !== y![i]) differing++;
    products.push({
      shape: `${m}×${n}×${k}${transA ? " Aᵀ" : ""}${transB ? " Bᵀ" : ""}`,
      differing,
    });
  }
  const time = async (backend: typeof one) => {
    const size = 512;
    const A = tensor(new Float32Array(size * size).fill(0.5), { shape: [size, size], backend });
    const times: number[] = [];
    for (let r = 0; r < 6; r++) {
      const t0 = performance.now();
      const C = matmul(A, A);
      await C.data();
      times.push(performance.now() - t0);
      C.dispose();
    }
    A.dispose();
    return times.slice(1).sort((p, q) => p - q)[2]!;
  };
  const msMany = await time(many);
  const msOne = await time(one);
  return {
    error: "",
    crossOriginIsolated: globalThis.crossOriginIsolated,
    path: many.matmulPath,
    threads: many.matmulThreads,
    products,
    ms512: { one: msOne, many: msMany },
  };
}

self.onmessage = async (e: MessageEvent<{ seed: number }>) => {
  let report: ThreadsReport;
  try {
    report = await measure(e.data.seed);
  } catch (err) {
    report = {
      error: (err as Error).stack ?? String(err),
      crossOriginIsolated: globalThis.crossOriginIsolated,
      path: "",
      threads: 0,
      products: [],
      ms512: { one: 0, many: 0 },
    };
  }
  self.postMessage(report);
};
