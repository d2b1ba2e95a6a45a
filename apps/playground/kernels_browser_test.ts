/**
 * The kernel parity page in real headless Chromium, twice: with WebGPU (SwiftShader; the adapter
 * must be found and the WebGPU checks must run) and without (WebAssembly vs the oracle only).
 * Each run also checks the WebAssembly matmul on 2 threads in a dedicated Web Worker (bits equal
 * to one thread) and on 1 thread on the page's main thread.
 * Every comparison must pass and the page must log no error, throw nothing and load every
 * resource. A screenshot of each run is saved (`$RLVR_ARTIFACTS/playground`, else a temporary
 * directory) and its path printed.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { bundleForBrowser } from "./build.ts";
import { launchBrowser } from "./browser.ts";
import { serveDirectory } from "./static_server.ts";
import { type ParityReport, summarizeReport } from "./parity/report.ts";
import { artifactDir, chromiumOrSkip } from "./_test_utils.ts";

const HERE = import.meta.dirname!;
const ROOT = join(HERE, "..", "..");
/** Generous: SwiftShader compiles every WGSL pipeline on the CPU, on a busy 2-core machine. */
const RUN_TIMEOUT_MS = 240_000;

Deno.test({
  name: "kernel parity page in headless Chromium: WebGPU (SwiftShader) and WebAssembly vs the " +
    "CPU oracle, every comparison within the @rlvr/tensor tests' tolerances, no console errors",
  async fn(t) {
    const chromium = await chromiumOrSkip("the kernel parity browser test");
    if (chromium === null) return;
    const out = await Deno.makeTempDir({ prefix: "rlvr-parity-page-" });
    const artifacts = await artifactDir();
    try {
      const t0 = performance.now();
      const [built] = await bundleForBrowser({
        entries: [join(HERE, "parity", "kernels.ts"), join(HERE, "parity", "threads_worker.ts")],
        copy: [join(HERE, "parity", "index.html")],
        outDir: out,
        cwd: ROOT,
      });
      console.log(
        `bundled ${built!.entry} (${(built!.bytes / 1024).toFixed(0)} KiB) in ` +
          `${(performance.now() - t0).toFixed(0)} ms`,
      );
      await using server = await serveDirectory(out);
      for (const webgpu of [true, false]) {
        await t.step(webgpu ? "with WebGPU (SwiftShader)" : "without WebGPU", async () => {
          const started = performance.now();
          await using browser = await launchBrowser({ webgpu, executablePath: chromium });
          await using page = await browser.openPage(`${server.url}?seed=25`);
          await page.waitFor("window.__parity !== undefined", { timeoutMs: RUN_TIMEOUT_MS });
          const report = await page.evaluate<ParityReport>("window.__parity");
          const shot = join(artifacts, `kernel_parity_${webgpu ? "webgpu" : "wasm"}.png`);
          await page.screenshot(shot);
          console.log(
            `${summarizeReport(report)}\nbrowser: ${await browser.version()}; ` +
              `wall ${((performance.now() - started) / 1000).toFixed(1)} s; screenshot: ${shot}`,
          );
          assert.equal(report.error, "", `the page stopped: ${report.error}`);
          assert.deepEqual(page.problems(), [], "console errors, exceptions or failed requests");
          assert.equal(report.crossOriginIsolated, true, "the page is cross-origin isolated");
          assert.ok(report.wasmRan, `the WebAssembly checks ran (wasm: ${report.backends.wasm})`);
          assert.match(report.backends.wasm, /^wasm-(relaxed|simd)$/);
          if (webgpu) {
            assert.doesNotMatch(report.backends.webgpu, /^none|^error/, "an adapter was found");
            assert.ok(report.webgpuRan, "the WebGPU checks ran");
          } else {
            assert.match(report.backends.webgpu, /^none/);
            assert.ok(!report.webgpuRan);
          }
          const failed = report.results.filter((r) => !r.pass);
          assert.deepEqual(
            failed.map((r) => `${r.backend} ${r.check} ${r.what}: ${r.detail}`),
            [],
            "every comparison passed",
          );
          assert.ok(report.ok && report.passed > 0);
          // The wasm matmul on threads: Web Workers in a dedicated worker (which may block in
          // Atomics.wait), one thread on the page; the same bits either way.
          const worker = report.threads?.worker;
          assert.ok(worker, "the threads worker ran");
          assert.equal(worker.error, "");
          assert.equal(worker.threads, 2, "a threads: 2 backend in a worker has 2 threads");
          assert.equal(report.threads!.mainThread, 1, "one thread on the page's main thread");
          assert.ok(worker.products.length > 0);
          for (const p of worker.products) assert.equal(p.differing, 0, `bits differ: ${p.shape}`);
          const inTable = await page.evaluate<number>(
            "document.querySelectorAll('#results tr').length",
          );
          assert.equal(inTable, report.results.length, "the table shows every comparison");
          const json = await page.evaluate<string>(
            "document.getElementById('parity-json').textContent",
          );
          assert.equal((JSON.parse(json) as ParityReport).passed, report.passed);
        });
      }
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});
