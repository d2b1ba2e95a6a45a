/**
 * Headless Chromium for the playground's browser tests, driven by puppeteer-core: launch with or
 * without WebGPU, open a page that records everything that went wrong in it, evaluate, take a
 * screenshot, close without leaving a process or a profile directory behind.
 *
 * Design decisions:
 * - **puppeteer-core**, not the raw DevTools protocol (`apps/train/report/_chromium.ts`): a
 *   maintained driver, pinned in `deno.json`, that runs under Deno's Node compatibility. It drives
 *   the system's Chromium (`$CHROMIUM_BIN`, else chromium, chromium-browser, google-chrome,
 *   google-chrome-stable on PATH, else `/usr/bin/chromium`); nothing is downloaded.
 * - **WebGPU without a GPU**: `webgpu: true` adds `--enable-unsafe-webgpu --enable-features=Vulkan
 *   --use-vulkan=swiftshader --use-angle=swiftshader`, which gives a WebGPU adapter on
 *   SwiftShader (Vulkan on the CPU; `isFallbackAdapter`, 1 GiB buffers) on any Linux machine.
 *   `webgpu: false` adds `--disable-gpu` and none of those, so `navigator.gpu` finds no adapter
 *   and a page runs its WebAssembly/JavaScript paths.
 * - **Problems are recorded, not thrown**: console errors (and failed `console.assert`s),
 *   uncaught exceptions and unhandled rejections (`pageerror`), failed requests (network
 *   errors, and HTTP statuses >= 400) are collected per page, so a test can assert that there
 *   were none and print them all when there were.
 * - **Clean exit**: puppeteer's signal handlers are off (they would register process-wide
 *   listeners), `close()` asks the browser to quit and kills it after `closeTimeoutMs`, and the
 *   temporary profile directory is removed.
 *
 * @module
 */

import puppeteer, {
  type Browser,
  type ConsoleMessage,
  type HTTPRequest,
  type HTTPResponse,
  type Page,
} from "puppeteer-core";

const CANDIDATES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/** `bin` as an absolute path: itself when it holds a `/`, else the first match on `$PATH`. */
function onPath(bin: string): string | null {
  if (bin.includes("/")) return bin;
  let path = "";
  try {
    path = Deno.env.get("PATH") ?? "";
  } catch { /* no env permission: nothing on PATH */ }
  for (const dir of path.split(":")) {
    if (dir === "") continue;
    const candidate = `${dir}/${bin}`;
    try {
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch { /* not there */ }
  }
  return null;
}

/**
 * The Chromium executable, as an absolute path (puppeteer needs one): `$CHROMIUM_BIN` when set
 * (and it runs), else the first of chromium, chromium-browser, google-chrome,
 * google-chrome-stable on `$PATH` that runs `--version`, else `/usr/bin/chromium` when it runs;
 * null when none does.
 *
 * @returns The executable's path, or null.
 *
 * @example Usage
 * ```ts
 * import { findChromium } from "./browser.ts";
 * const chromium = await findChromium();
 * console.log(chromium ?? "no chromium: apt-get install chromium");
 * ```
 */
export async function findChromium(): Promise<string | null> {
  let env: string | undefined;
  try {
    env = Deno.env.get("CHROMIUM_BIN");
  } catch { /* no env permission: look on PATH */ }
  for (const name of env ? [env] : [...CANDIDATES, "/usr/bin/chromium"]) {
    const bin = onPath(name);
    if (bin === null) continue;
    try {
      const out = await new Deno.Command(bin, {
        args: ["--version"],
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).output();
      if (out.success) return bin;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied)) {
        throw e;
      }
    }
  }
  return null;
}

/** The flags that give headless Chromium a WebGPU adapter on SwiftShader (no GPU needed). */
export const WEBGPU_FLAGS: readonly string[] = Object.freeze([
  "--enable-unsafe-webgpu",
  "--enable-features=Vulkan",
  "--use-vulkan=swiftshader",
  "--use-angle=swiftshader",
]);

/**
 * Chromium's command-line flags for {@link launchBrowser} (besides the profile directory and the
 * DevTools port, which puppeteer adds).
 *
 * @param options `webgpu`: add {@link WEBGPU_FLAGS}, else `--disable-gpu`.
 * @returns The flags.
 *
 * @example Usage
 * ```ts
 * import { chromiumArgs } from "./browser.ts";
 * import assert from "node:assert/strict";
 * assert.ok(chromiumArgs({ webgpu: true }).includes("--use-vulkan=swiftshader"));
 * assert.ok(chromiumArgs({ webgpu: false }).includes("--disable-gpu"));
 * ```
 */
export function chromiumArgs(options: { webgpu: boolean }): string[] {
  return [
    "--headless=new",
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--mute-audio",
    ...(options.webgpu ? WEBGPU_FLAGS : ["--disable-gpu"]),
  ];
}

/** Options of {@link launchBrowser}. */
export interface LaunchOptions {
  /** Whether pages get a WebGPU adapter (SwiftShader; see the module doc). */
  webgpu: boolean;
  /** The Chromium executable (default: {@link findChromium}; throws when there is none). */
  executablePath?: string;
  /** Extra Chromium flags. */
  args?: readonly string[];
  /** Viewport width and height in CSS pixels (default 1280×900). */
  viewport?: { width: number; height: number };
  /** Limit on starting the browser and on each DevTools call, in ms (default 60 000). */
  timeoutMs?: number;
  /** How long `close()` waits for the browser to quit before killing it, in ms (default 5000). */
  closeTimeoutMs?: number;
}

/** Options of {@link BrowserSession.openPage}. */
export interface OpenPageOptions {
  /** Limit on the navigation (until the `load` event), in ms (default: the launch timeout). */
  timeoutMs?: number;
}

/** A page opened by {@link BrowserSession.openPage}, with what went wrong in it so far. */
export interface BrowserPage extends AsyncDisposable {
  /** `console.error` messages and failed `console.assert`s, as text. */
  readonly consoleErrors: string[];
  /** Uncaught exceptions and unhandled rejections. */
  readonly pageErrors: string[];
  /** Requests that failed: `<url>: <network error>` or `<url>: HTTP <status>`. */
  readonly failedRequests: string[];
  /** Every console message, `<type>: <text>` (for diagnostics). */
  readonly consoleLog: string[];
  /** All the problems above, each prefixed with its kind; empty when the page is clean. */
  problems(): string[];
  /**
   * Evaluates a JavaScript expression in the page (awaiting a promise) and returns its value,
   * which must be JSON-serializable.
   */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /**
   * Waits until `expression` is truthy in the page; on timeout, fails with the page's problems
   * and the last console lines.
   */
  waitFor(expression: string, options?: { timeoutMs?: number }): Promise<void>;
  /** Saves a PNG screenshot of the whole page to `path`. */
  screenshot(path: string): Promise<void>;
  /** Closes the page. */
  close(): Promise<void>;
}

/** A running browser from {@link launchBrowser}. */
export interface BrowserSession extends AsyncDisposable {
  /** The browser's process id (null when puppeteer did not start a process). */
  readonly pid: number | null;
  /** The executable it runs. */
  readonly executablePath: string;
  /** Its flags. */
  readonly args: readonly string[];
  /** Whether it was launched with the WebGPU flags. */
  readonly webgpu: boolean;
  /** The browser's version string, e.g. `Chrome/156.0.8078.108`. */
  version(): Promise<string>;
  /** Opens `url` in a new page and waits for its `load` event. */
  openPage(url: string, options?: OpenPageOptions): Promise<BrowserPage>;
  /** Closes every page and the browser, kills it if it does not quit, removes its profile. */
  close(): Promise<void>;
}

function describeConsole(m: ConsoleMessage): string {
  const loc = m.location();
  const where = loc.url
    ? ` (${loc.url}${loc.lineNumber === undefined ? "" : `:${loc.lineNumber + 1}`})`
    : "";
  return `${m.text()}${where}`;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function wrapPage(page: Page, timeoutMs: number): BrowserPage {
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  const failedRequests: string[] = [];
  const consoleLog: string[] = [];
  page.on("console", (m: ConsoleMessage) => {
    consoleLog.push(`${m.type()}: ${m.text()}`);
    if (m.type() === "error" || m.type() === "assert") {
      consoleErrors.push(`console.${m.type()}: ${describeConsole(m)}`);
    }
  });
  page.on("pageerror", (e: unknown) => {
    pageErrors.push(e instanceof Error ? (e.stack ?? e.message) : String(e));
  });
  page.on("requestfailed", (r: HTTPRequest) => {
    failedRequests.push(`${r.url()}: ${r.failure()?.errorText ?? "failed"}`);
  });
  page.on("response", (r: HTTPResponse) => {
    if (r.status() >= 400) failedRequests.push(`${r.url()}: HTTP ${r.status()}`);
  });
  const problems = () => [
    ...consoleErrors,
    ...pageErrors.map((e) => `uncaught: ${e}`),
    ...failedRequests.map((r) => `request failed: ${r}`),
  ];
  const context = () => {
    const p = problems();
    return `problems in the page: ${p.length === 0 ? "none" : `\n  ${p.join("\n  ")}`}\n` +
      `last console lines:\n  ${consoleLog.slice(-20).join("\n  ") || "(none)"}`;
  };
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await page.close().catch(() => {});
  };
  return {
    consoleErrors,
    pageErrors,
    failedRequests,
    consoleLog,
    problems,
    async evaluate<T>(expression: string): Promise<T> {
      try {
        return await withTimeout(
          page.evaluate(expression) as Promise<T>,
          timeoutMs,
          `evaluate ${JSON.stringify(expression.slice(0, 80))}`,
        );
      } catch (e) {
        throw new Error(
          `evaluate ${JSON.stringify(expression.slice(0, 200))} in ${page.url()} failed: ${
            (e as Error).message
          }\n${context()}`,
        );
      }
    },
    async waitFor(expression: string, options: { timeoutMs?: number } = {}): Promise<void> {
      const ms = options.timeoutMs ?? timeoutMs;
      try {
        await page.waitForFunction(expression, { timeout: ms, polling: 100 });
      } catch (e) {
        throw new Error(
          `waiting for ${JSON.stringify(expression)} in ${page.url()}: ${
            (e as Error).message
          } (limit ${ms} ms)\n${context()}`,
        );
      }
    },
    async screenshot(path: string): Promise<void> {
      if (!path.endsWith(".png")) {
        throw new Error(`screenshot: path must end with .png, got ${JSON.stringify(path)}`);
      }
      const png = await withTimeout(
        page.screenshot({ fullPage: true, type: "png" }),
        timeoutMs,
        "screenshot",
      );
      await Deno.writeFile(path, png);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Starts headless Chromium through puppeteer-core (see the module doc for the flags). Close it
 * with `close()` or `await using`.
 *
 * @param options WebGPU on or off, executable, extra flags, viewport and timeouts.
 * @returns The browser session.
 *
 * @example Usage
 * ```ts
 * import { launchBrowser } from "./browser.ts";
 * // Type-checked, not called here: it needs Chromium (kernels_browser_test.ts runs it).
 * async function titleOf(url: string): Promise<string> {
 *   await using browser = await launchBrowser({ webgpu: true });
 *   await using page = await browser.openPage(url);
 *   await page.screenshot("/tmp/page.png");
 *   if (page.problems().length > 0) throw new Error(page.problems().join("\n"));
 *   return await page.evaluate<string>("document.title");
 * }
 * console.log(typeof titleOf);
 * ```
 */
export async function launchBrowser(options: LaunchOptions): Promise<BrowserSession> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 5000;
  const executablePath = options.executablePath ?? await findChromium();
  if (executablePath === null) {
    throw new Error(
      "launchBrowser: no Chromium found (looked at $CHROMIUM_BIN, then chromium, " +
        "chromium-browser, google-chrome, google-chrome-stable and /usr/bin/chromium); install " +
        "it (Debian/Ubuntu: apt-get install chromium) or set CHROMIUM_BIN",
    );
  }
  const args = [...chromiumArgs({ webgpu: options.webgpu }), ...(options.args ?? [])];
  const viewport = options.viewport ?? { width: 1280, height: 900 };
  const userDataDir = await Deno.makeTempDir({ prefix: "rlvr-playground-chromium-" });
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      executablePath,
      headless: true,
      args: [...args], // a copy: puppeteer takes --enable-features out of the array it is given
      userDataDir,
      defaultViewport: viewport,
      timeout: timeoutMs,
      protocolTimeout: timeoutMs,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      dumpio: false,
    });
  } catch (e) {
    await Deno.remove(userDataDir, { recursive: true }).catch(() => {});
    throw new Error(
      `launchBrowser: ${executablePath} ${args.join(" ")} did not start: ${(e as Error).message}`,
    );
  }
  const pages: BrowserPage[] = [];
  let closing: Promise<void> | null = null;
  const close = () =>
    closing ??= (async () => {
      for (const p of pages) await p.close();
      const proc = browser.process();
      try {
        await withTimeout(browser.close(), closeTimeoutMs, "browser.close");
      } catch {
        proc?.kill("SIGKILL");
      }
      if (proc !== null && proc.exitCode === null && proc.signalCode === null) {
        await withTimeout(
          new Promise<void>((resolve) => proc.once("exit", () => resolve())),
          closeTimeoutMs,
          "chromium exit after SIGKILL",
        ).catch(() => {});
      }
      await Deno.remove(userDataDir, { recursive: true }).catch(() => {});
    })();
  return {
    pid: browser.process()?.pid ?? null,
    executablePath,
    args,
    webgpu: options.webgpu,
    version: () => browser.version(),
    async openPage(url: string, pageOptions: OpenPageOptions = {}): Promise<BrowserPage> {
      const page = await browser.newPage();
      page.setDefaultTimeout(timeoutMs);
      const wrapped = wrapPage(page, timeoutMs);
      pages.push(wrapped);
      try {
        const res = await page.goto(url, {
          waitUntil: "load",
          timeout: pageOptions.timeoutMs ?? timeoutMs,
        });
        if (res !== null && !res.ok()) {
          throw new Error(`HTTP ${res.status()} ${res.statusText()}`);
        }
      } catch (e) {
        throw new Error(
          `openPage ${url}: ${(e as Error).message}; problems so far: ${
            JSON.stringify(wrapped.problems())
          }`,
        );
      }
      return wrapped;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
