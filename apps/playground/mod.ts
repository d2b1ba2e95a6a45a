/**
 * @module
 *
 * `@rlvr/playground`: the toolkit in a real browser. The training page (`deno task
 * playground`: GRPO and the other recipes a tab can run, live in the tab, on WebGPU or
 * WebAssembly; {@link buildPlayground}), a headless-Chromium harness (puppeteer-core) with a
 * cross-origin-isolated static server and a bundler step, and a page that checks
 * `@rlvr/tensor`'s kernels on WebAssembly and WebGPU inside the browser.
 *
 * Not published to JSR (`"publish": false`): it is an application of the workspace.
 *
 * @example Usage
 * ```ts
 * import { chromiumArgs, contentTypeOf } from "@rlvr/playground";
 * import assert from "node:assert/strict";
 * assert.equal(contentTypeOf("k.wasm"), "application/wasm");
 * assert.ok(chromiumArgs({ webgpu: true }).includes("--enable-unsafe-webgpu"));
 * ```
 */

export { type BuildOptions, type BuiltBundle, bundleForBrowser, nodeImportsOf } from "./build.ts";
export {
  CONTENT_TYPES,
  contentTypeOf,
  ISOLATION_HEADERS,
  resolveUnder,
  serveDirectory,
  type StaticServer,
  type StaticServerOptions,
} from "./static_server.ts";
export {
  buildPlayground,
  DEFAULT_OUT_DIR,
  MODEL_FILES,
  MODEL_MANIFEST,
  type PlaygroundBuild,
  type PlaygroundBuildOptions,
} from "./playground.ts";
export {
  type BrowserPage,
  type BrowserSession,
  chromiumArgs,
  findChromium,
  launchBrowser,
  type LaunchOptions,
  type OpenPageOptions,
  WEBGPU_FLAGS,
} from "./browser.ts";
