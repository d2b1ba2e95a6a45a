/**
 * Test helper (private): opens a page in a real headless Chromium and reports its console
 * errors, uncaught exceptions and log errors, the value of a JavaScript expression, and a PNG
 * screenshot, speaking the Chrome DevTools Protocol over Deno's WebSocket.
 *
 * Design decision: no browser-automation library (none is reachable here, and the protocol
 * subset needed is small): the browser is started with `--remote-debugging-port=0`, the
 * DevTools URL is read from its stderr, a page target is created and attached with a flat
 * session, and every command is a JSON message matched to its reply by id.
 *
 * @module
 */

/** The result of {@link inspectPage}. */
export interface PageInspection {
  /** Console errors, uncaught exceptions and error log entries, as text. */
  errors: string[];
  /** The value of the evaluated expression (by value). */
  value: unknown;
  /** A PNG screenshot of the full page. */
  screenshot: Uint8Array;
}

const CANDIDATES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/**
 * The Chromium executable: `$CHROMIUM_BIN` when set, else the first of chromium,
 * chromium-browser, google-chrome, google-chrome-stable that runs; null when none does.
 */
export async function findChromium(): Promise<string | null> {
  const env = Deno.env.get("CHROMIUM_BIN");
  for (const bin of env ? [env] : CANDIDATES) {
    try {
      const out = await new Deno.Command(bin, {
        args: ["--version"],
        stdout: "piped",
        stderr: "null",
      })
        .output();
      if (out.success) return bin;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied)) {
        throw e;
      }
    }
  }
  return null;
}

interface Pending {
  resolve: (v: Record<string, unknown>) => void;
  reject: (e: Error) => void;
}

type EventHandler = (params: Record<string, unknown>, sessionId?: string) => void;

class Cdp {
  #id = 0;
  readonly #pending = new Map<number, Pending>();
  readonly #handlers = new Map<string, EventHandler[]>();

  constructor(readonly ws: WebSocket) {
    ws.onmessage = (ev) => {
      const msg = JSON.parse(String(ev.data));
      if (typeof msg.id === "number") {
        const p = this.#pending.get(msg.id);
        this.#pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(`CDP error: ${JSON.stringify(msg.error)}`));
        else p?.resolve(msg.result ?? {});
      } else if (typeof msg.method === "string") {
        for (const h of this.#handlers.get(msg.method) ?? []) h(msg.params ?? {}, msg.sessionId);
      }
    };
    ws.onclose = () => {
      for (const p of this.#pending.values()) p.reject(new Error("CDP: socket closed"));
      this.#pending.clear();
    };
  }

  send(
    method: string,
    params: Record<string, unknown> = {},
    sessionId?: string,
  ): Promise<Record<string, unknown>> {
    const id = ++this.#id;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  }

  on(method: string, handler: EventHandler): void {
    const list = this.#handlers.get(method) ?? [];
    list.push(handler);
    this.#handlers.set(method, list);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function devtoolsUrl(
  stderr: ReadableStream<Uint8Array>,
  log: string[],
): Promise<string> {
  const reader = stderr.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`chromium exited before printing its DevTools URL:\n${log.join("")}`);
    buffer += value;
    log.push(value);
    const m = /DevTools listening on (ws:\/\/\S+)/.exec(buffer);
    if (m) {
      // Keep draining stderr so the browser never blocks on a full pipe.
      (async () => {
        try {
          for (;;) {
            const r = await reader.read();
            if (r.done) break;
            log.push(r.value);
          }
        } catch { /* the browser is gone */ }
      })();
      return m[1]!;
    }
  }
}

function describeRemote(arg: Record<string, unknown>): string {
  if (typeof arg.value === "string") return arg.value;
  if (arg.value !== undefined) return JSON.stringify(arg.value);
  return String(arg.description ?? arg.type ?? "?");
}

/**
 * Starts headless Chromium, opens `url`, waits for its load event (plus `settleMs`), evaluates
 * `expression`, takes a full-page screenshot and closes the browser.
 */
export async function inspectPage(
  chromium: string,
  url: string,
  expression: string,
  options: { timeoutMs?: number; settleMs?: number } = {},
): Promise<PageInspection> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const userDataDir = await Deno.makeTempDir({ prefix: "rlvr-chromium-" });
  const child = new Deno.Command(chromium, {
    args: [
      "--headless=new",
      "--no-sandbox",
      "--remote-debugging-port=0",
      `--user-data-dir=${userDataDir}`,
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--no-default-browser-check",
      "--window-size=1280,1600",
      "about:blank",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderrLog: string[] = [];
  let ws: WebSocket | undefined;
  try {
    const wsUrl = await withTimeout(
      devtoolsUrl(child.stderr, stderrLog),
      timeoutMs,
      "chromium start",
    );
    ws = new WebSocket(wsUrl);
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        ws!.onopen = () => resolve();
        ws!.onerror = (e) => reject(new Error(`CDP socket: ${(e as ErrorEvent).message ?? e}`));
      }),
      timeoutMs,
      "CDP connect",
    );
    const cdp = new Cdp(ws);
    const call = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
      withTimeout(cdp.send(method, params, sessionId), timeoutMs, method);

    const { targetId } = await call("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await call("Target.attachToTarget", { targetId, flatten: true });
    const sid = String(sessionId);
    const errors: string[] = [];
    cdp.on("Runtime.consoleAPICalled", (p, s) => {
      if (s !== sid || (p.type !== "error" && p.type !== "assert")) return;
      const args = (p.args as Record<string, unknown>[] | undefined) ?? [];
      errors.push(`console.${p.type}: ${args.map(describeRemote).join(" ")}`);
    });
    cdp.on("Runtime.exceptionThrown", (p, s) => {
      if (s !== sid) return;
      const d = p.exceptionDetails as Record<string, unknown> | undefined;
      const ex = d?.exception as Record<string, unknown> | undefined;
      errors.push(`exception: ${String(ex?.description ?? d?.text ?? "?")}`);
    });
    cdp.on("Log.entryAdded", (p, s) => {
      if (s !== sid) return;
      const e = p.entry as Record<string, unknown>;
      if (e.level === "error") errors.push(`log (${String(e.source)}): ${String(e.text)}`);
    });
    let loaded!: () => void;
    const load = new Promise<void>((resolve) => loaded = resolve);
    cdp.on("Page.loadEventFired", (_p, s) => {
      if (s === sid) loaded();
    });
    await call("Runtime.enable", {}, sid);
    await call("Log.enable", {}, sid);
    await call("Page.enable", {}, sid);
    const nav = await call("Page.navigate", { url }, sid);
    if (typeof nav.errorText === "string" && nav.errorText !== "") {
      throw new Error(`Page.navigate ${url}: ${nav.errorText}`);
    }
    await withTimeout(load, timeoutMs, "page load");
    await new Promise((r) => setTimeout(r, options.settleMs ?? 250));
    const evaluated = await call("Runtime.evaluate", { expression, returnByValue: true }, sid);
    if (evaluated.exceptionDetails !== undefined) {
      throw new Error(
        `Runtime.evaluate ${expression}: ${JSON.stringify(evaluated.exceptionDetails)}`,
      );
    }
    const value = (evaluated.result as Record<string, unknown> | undefined)?.value;
    const shot = await call("Page.captureScreenshot", {
      format: "png",
      captureBeyondViewport: true,
    }, sid);
    const screenshot = Uint8Array.from(atob(String(shot.data)), (c) => c.charCodeAt(0));
    await call("Browser.close").catch(() => {});
    return { errors, value, screenshot };
  } catch (e) {
    throw new Error(
      `${(e as Error).message}\nchromium stderr:\n${stderrLog.join("").slice(-2000)}`,
    );
  } finally {
    ws?.close();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const exited = await Promise.race([
      child.status.then(() => true),
      new Promise<boolean>((r) => timer = setTimeout(() => r(false), 3000)),
    ]);
    clearTimeout(timer);
    if (!exited) {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
    }
    await Deno.remove(userDataDir, { recursive: true }).catch(() => {});
  }
}
