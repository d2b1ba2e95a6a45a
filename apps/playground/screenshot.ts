/**
 * The README's picture of the playground: builds and serves the page, runs a recipe in headless
 * Chromium until it is done, and saves a PNG of the finished page.
 *
 * ```sh
 * deno run -A apps/playground/screenshot.ts --out apps/playground/playground.png \
 *   --params "recipe=grpo&steps=200&evalEvery=50&backend=wasm"
 * ```
 *
 * Design decision: the browser test (`playground_browser_test.ts`) proves the page equals
 * `deno task train`, on 30 steps, which is too short to show learning; this script runs
 * whatever the URL parameters ask for (the page's own knobs), so the picture shows a run long
 * enough to learn, made by a command, and prints the held-out pass@1 the picture shows.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { launchBrowser } from "./browser.ts";
import { buildPlayground } from "./playground.ts";
import { serveDirectory } from "./static_server.ts";
import type { PlaygroundState } from "./page/state.ts";

/** Options of {@link screenshotPlayground}. */
export interface ScreenshotOptions {
  /** Where the PNG goes. */
  out: string;
  /** The page's URL parameters (its knobs), without `autostart`, e.g. `recipe=grpo&steps=200`. */
  params: string;
  /** WebGPU in the browser (default false: the WebAssembly path). */
  webgpu?: boolean;
  /** How long the run may take, in ms (default 15 minutes). */
  timeoutMs?: number;
}

/**
 * Runs the page with `options.params` until it is done and saves a screenshot; returns the
 * page's final state. Throws when the page reports an error or a console error.
 *
 * @example Usage
 * ```ts ignore
 * import { screenshotPlayground } from "./screenshot.ts";
 * const state = await screenshotPlayground({
 *   out: "/tmp/playground.png",
 *   params: "recipe=grpo&steps=20&evalEvery=10&backend=wasm",
 * });
 * console.log(state.evals.map((e) => e["pass@1"]));
 * ```
 */
export async function screenshotPlayground(options: ScreenshotOptions): Promise<PlaygroundState> {
  const built = await buildPlayground({ outDir: await Deno.makeTempDir() });
  const server = await serveDirectory(built.outDir, { port: 0 });
  const browser = await launchBrowser({
    webgpu: options.webgpu ?? false,
    viewport: { width: 1280, height: 960 },
  });
  try {
    const page = await browser.openPage(`${server.url}?${options.params}&autostart=1`);
    await page.waitFor(
      "window.__playground && (window.__playground.done || window.__playground.status === 'failed')",
      { timeoutMs: options.timeoutMs ?? 15 * 60_000 },
    );
    const state = await page.evaluate<PlaygroundState>("window.__playground");
    const problems = [...page.problems(), ...state.errors];
    if (problems.length > 0) {
      throw new Error(`screenshot: the page reported problems:\n${problems.join("\n")}`);
    }
    await page.screenshot(options.out);
    return state;
  } finally {
    await browser.close();
    await server.close();
    await Deno.remove(built.outDir, { recursive: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      out: { type: "string", default: "playground.png" },
      params: { type: "string", default: "recipe=grpo&steps=200&evalEvery=50&backend=wasm" },
      webgpu: { type: "boolean", default: false },
    },
  });
  const state = await screenshotPlayground({
    out: values.out,
    params: values.params,
    webgpu: values.webgpu,
  });
  const pass = state.evals.map((e) => `${e.step}: ${(100 * (e["pass@1"] ?? 0)).toFixed(1)}%`);
  console.log(
    `screenshot: ${values.out} (${values.params}; ${state.step} steps in ${
      (state.elapsedMs / 1000).toFixed(1)
    } s on ${state.backend?.line}); held-out pass@1 ${pass.join(", ")}`,
  );
}
