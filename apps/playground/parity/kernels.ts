/**
 * Browser entry of the kernel parity page (`index.html`): finds the backends the page has (the
 * CPU oracle always; the WebAssembly SIMD matmul where the engine has SIMD; WebGPU where
 * `navigator.gpu` gives an adapter), runs the checks of `checks.ts` for the seed in `?seed=`
 * (default 25), shows every comparison in a table as it completes, then runs the threads check
 * (`threads.ts`: the wasm matmul on 2 threads in a dedicated worker), and publishes the
 * {@link ParityReport} on `window.__parity` when done. Anything that stops the run is reported
 * there too, and logged with `console.error` so that a test watching the console sees it.
 *
 * Build: `deno run -A apps/playground/build.ts --out <dir> --copy
 * apps/playground/parity/index.html apps/playground/parity/kernels.ts
 * apps/playground/parity/threads_worker.ts`, then serve `<dir>` with `static_server.ts`.
 *
 * @module
 */

import {
  type Backend,
  createCpuBackend,
  createWebGpuBackend,
  describeAdapter,
  isSoftwareAdapter,
  type WebGpuBackend,
} from "@rlvr/tensor";
import { parityChecks } from "./checks.ts";
import type { ParityReport } from "./report.ts";
import { type ParityResult, runParity } from "./run.ts";
import { runThreadsCheck } from "./threads.ts";

declare global {
  /** The parity page's result (`window.__parity`), once the run is over. */
  var __parity: ParityReport | undefined;
}

function cell(text: string, className = ""): HTMLTableCellElement {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function num(x: number | null): string {
  return x === null ? "—" : x === 0 ? "0" : x.toExponential(2);
}

function showRow(r: ParityResult): void {
  const tr = document.createElement("tr");
  tr.className = r.pass ? "pass" : "fail";
  tr.append(
    cell(r.check),
    cell(r.backend),
    cell(r.what),
    cell(r.shape),
    cell(num(r.maxAbs), "num"),
    cell(num(r.maxRel), "num"),
    cell(r.ratio === null ? "∞" : r.ratio.toFixed(3), "num"),
    cell(r.tolerance),
    cell(r.ms.toFixed(0), "num"),
    cell(r.pass ? "pass" : `FAIL: ${r.detail}`, "verdict"),
  );
  document.getElementById("results")!.append(tr);
}

async function findWebGpu(): Promise<{ backend: WebGpuBackend | null; description: string }> {
  const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
  if (gpu === undefined) return { backend: null, description: "none (no navigator.gpu)" };
  const adapter = await gpu.requestAdapter();
  if (adapter === null) {
    return { backend: null, description: "none (navigator.gpu found no adapter)" };
  }
  const name = describeAdapter(adapter) + (isSoftwareAdapter(adapter) ? " (software)" : "");
  // An adapter without a working device is a failure, not a missing backend: it throws.
  const backend = await createWebGpuBackend({ adapter });
  return { backend, description: name };
}

function findWasm(): { backend: Backend | null; description: string } {
  try {
    const backend = createCpuBackend({ kernels: "wasm", blas: "wasm", threads: 1 });
    return { backend, description: backend.matmulPath };
  } catch (e) {
    return { backend: null, description: `none (${(e as Error).message})` };
  }
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const seedParam = new URL(location.href).searchParams.get("seed");
  const seed = seedParam === null ? 25 : Number(seedParam);
  const report: ParityReport = {
    done: true,
    seed,
    ok: false,
    passed: 0,
    failed: 0,
    ms: 0,
    backends: { oracle: "cpu (TypeScript kernels)", wasm: "?", webgpu: "?" },
    webgpuRan: false,
    wasmRan: false,
    crossOriginIsolated: globalThis.crossOriginIsolated,
    userAgent: navigator.userAgent,
    results: [],
    threads: null,
    error: "",
  };
  const status = document.getElementById("status")!;
  let webgpu: WebGpuBackend | null = null;
  try {
    if (!Number.isInteger(seed)) {
      throw new Error(`?seed= must be an integer, got ${JSON.stringify(seedParam)}`);
    }
    const wasm = findWasm();
    report.backends.wasm = wasm.description;
    try {
      const found = await findWebGpu();
      webgpu = found.backend;
      report.backends.webgpu = found.description;
    } catch (e) {
      report.backends.webgpu = `error (${(e as Error).message})`;
      throw new Error(`WebGPU: the adapter gave no working backend: ${(e as Error).message}`);
    }
    document.getElementById("backends")!.textContent =
      `backends: oracle: ${report.backends.oracle}; WebAssembly: ${report.backends.wasm}; ` +
      `WebGPU: ${report.backends.webgpu}; cross-origin isolated: ${report.crossOriginIsolated}`;
    const oracle = createCpuBackend({ kernels: "ts" });
    report.results = await runParity(
      parityChecks(seed),
      { oracle, wasm: wasm.backend, webgpu },
      (row) => {
        showRow(row);
        status.textContent = `running… ${row.check} (${row.backend})`;
      },
    );
    report.wasmRan = report.results.some((r) => r.backend === "wasm");
    report.webgpuRan = report.results.some((r) => r.backend === "webgpu");
    status.textContent = "running… the WebAssembly matmul on threads, in a worker";
    report.threads = await runThreadsCheck(new URL("threads_worker.js", location.href), seed);
    const w = report.threads.worker;
    document.getElementById("threads")!.textContent = w === null
      ? "threads: the page is not cross-origin isolated, so one thread"
      : `threads: in a worker ${w.threads} (${w.path}); on the page's own thread ` +
        `${report.threads.mainThread}; 512³ in ${w.ms512.one.toFixed(1)} ms on 1, ` +
        `${w.ms512.many.toFixed(1)} ms on ${w.threads}; bits equal to one thread: ` +
        `${w.products.every((p) => p.differing === 0)}`;
    if (w !== null && w.error !== "") throw new Error(`threads worker: ${w.error}`);
  } catch (e) {
    report.error = (e as Error).stack ?? String(e);
  } finally {
    webgpu?.destroy();
  }
  report.passed = report.results.filter((r) => r.pass).length;
  report.failed = report.results.length - report.passed;
  report.ok = report.error === "" && report.failed === 0 && report.passed > 0;
  report.ms = performance.now() - t0;
  status.className = report.ok ? "ok" : "fail";
  status.textContent = report.error !== ""
    ? `error: ${report.error}`
    : `${report.passed} passed, ${report.failed} failed in ${(report.ms / 1000).toFixed(1)} s ` +
      `(seed ${seed})`;
  const json = document.createElement("script");
  json.type = "application/json";
  json.id = "parity-json";
  json.textContent = JSON.stringify(report);
  document.body.append(json);
  if (report.error !== "") console.error(`kernel parity: ${report.error}`);
  else if (report.failed > 0) console.error(`kernel parity: ${report.failed} comparisons failed`);
  globalThis.__parity = report;
}

await main();
