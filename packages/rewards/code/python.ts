/**
 * Python test cases through Pyodide (CPython compiled to WebAssembly), inside a sandboxed Deno
 * subprocess.
 *
 * Design: Pyodide's own file system is in memory, but Python code can reach JavaScript through
 * its FFI, so the boundary is not the interpreter: it is the process. Each interpreter lives in
 * a child `deno run` whose only permission is reading the Pyodide package directory
 * (`--allow-read=<dir>`; no write, net, env, run, ffi or sys), with `--no-prompt`, `--no-remote`,
 * `--no-npm`, `--no-config`, a cleared environment and an empty `DENO_DIR`, a V8 heap limit, an
 * import map that blocks every other local module, and the limits of `_process.ts` (SIGKILL at
 * the wall-clock limit, resident-memory watchdog, output caps). When this package is imported by
 * URL (`https:`), the child runs a copy of the runner written to its temporary folder (it may
 * load no remote module).
 *
 * Loading Pyodide takes about 2 s, so the first use makes a memory snapshot of a freshly started
 * interpreter (once, in a child of its own, cached on disk for later processes: see
 * `snapshotCacheFile`) and every interpreter after that starts from it in about 0.3 s (0.4 s of
 * CPU). An interpreter is reused for further cases of the SAME program only, with a fresh
 * `__main__` namespace and fresh std streams per case; a different program always gets a fresh
 * process, so one sample cannot influence another. A case that times out, runs out of memory,
 * floods output or crashes the interpreter kills it; the next case starts a new one.
 *
 * Python's `stdin` is the case input, `stdout`/`stderr` are captured per case; `open(0)`,
 * `input()` and `sys.stdin.read()` all work. Only the standard library is available (no
 * `micropip`, no network).
 *
 * Verdict integrity: the child decides a case in JavaScript, from whether its call of the
 * pre-compiled tests raised, never from anything Python prints or serialises; before any program
 * runs it locks itself down (`_py_runner.ts`, `_py_toolkit.ts`): no bridge from Python to
 * JavaScript, an audit hook against frames, tracing and introspection, comparisons in the tests
 * that objects "equal to everything" cannot satisfy, and a locked JavaScript realm without
 * `eval`. Because the tests are compiled before the program runs, an interpreter serves one
 * program with one set of assertion snippets (the pool key of `run.ts` holds both).
 *
 * @module
 */

import type { CodeCase } from "./cases.ts";
import { isAssertCase, outputsMatch } from "./cases.ts";
import type { CaseResult, SandboxLimits } from "./result.ts";
import { concat, type KillReason, SandboxProcess } from "./_process.ts";
import { hardenIntrinsics } from "./_harden.ts";
import { PY_TEST_MODULES, PY_TOOLKIT, PY_TOOLKIT_MODULES } from "./_py_toolkit.ts";
import { clip, looksOutOfMemory } from "./_util.ts";

const RUNNER = new URL("./_py_runner.ts", import.meta.url);
/** The module the runner imports Pyodide through, beside it (see `_pyodide_entry.ts`). */
const ENTRY = "./_pyodide_entry.ts";
/** The module the runner locks its realm with, beside it: the child gets a copy (`_harden.ts`). */
const HARDEN = "./_harden.ts";
const HARDEN_SOURCE = `export ${String(hardenIntrinsics)}\n`;
/** V8 flags of every Python child besides the heap limit: no `eval`, no `new Function`. */
const V8_FLAGS = "--disallow-code-generation-from-strings";
const LOAD_TIMEOUT_MS = 60_000;
const SNAPSHOT_MEMORY_MB = 2048;

let indexUrl: Promise<string> | undefined;

/** The `file:` URL of the Pyodide package directory (with a trailing slash). */
function pyodideIndexURL(): Promise<string> {
  indexUrl ??= (async () => {
    // Importing it makes Deno install the pinned npm package (offline afterwards: the wasm
    // binary and the standard library ship inside the npm tarball).
    await import("pyodide");
    const url = import.meta.resolve("pyodide");
    if (!url.startsWith("file:")) {
      throw new Error(`pyodide resolved to ${url}, not a local file; cannot sandbox it`);
    }
    return url.slice(0, url.lastIndexOf("/") + 1);
  })();
  indexUrl.catch(() => {
    indexUrl = undefined;
  });
  return indexUrl;
}

/** The directory of a `file:` URL as a path with a trailing slash (what Pyodide wants in Deno). */
function pyodidePath(index: string): string {
  return decodeURIComponent(new URL(index).pathname);
}

function frame(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + payload.length);
  new DataView(out.buffer).setUint32(0, payload.length, true);
  out.set(payload, 4);
  return out;
}

function jsonFrame(value: unknown): Uint8Array {
  return frame(new TextEncoder().encode(JSON.stringify(value)));
}

let runnerText: Promise<string> | undefined;

/**
 * The runner's source: read from disk, or fetched when this module was imported by URL
 * (`https:`, `http:`). Needs read permission on the runner, or net permission on its host.
 */
function runnerSource(): Promise<string> {
  runnerText ??= (async () => {
    if (RUNNER.protocol === "file:") return await Deno.readTextFile(RUNNER);
    const res = await fetch(RUNNER);
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`cannot fetch the Python runner ${RUNNER.href}: HTTP ${res.status}`);
    }
    return await res.text();
  })();
  runnerText.catch(() => {
    runnerText = undefined;
  });
  return runnerText;
}

/** A child's private folder, its `deno run` flags and the runner module it runs. */
interface ChildSetup {
  dir: string;
  args: string[];
  runner: string;
}

async function childSetup(index: string): Promise<ChildSetup> {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-py-" });
  let runner = RUNNER.href;
  if (RUNNER.protocol !== "file:") {
    // Imported by URL: the child runs with --no-remote, so it runs a local copy of the runner.
    try {
      await Deno.writeTextFile(`${dir}/_py_runner.ts`, await runnerSource());
    } catch (e) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      throw e;
    }
    runner = new URL(`file://${dir}/_py_runner.ts`).href;
  }
  const blocked = new URL(`file://${dir}/blocked/`).href;
  const entry = new URL(ENTRY, runner).href;
  const harden = new URL(`file://${dir}/_harden.js`).href;
  await Deno.writeTextFile(`${dir}/_harden.js`, HARDEN_SOURCE);
  await Deno.writeTextFile(
    `${dir}/import_map.json`,
    JSON.stringify({
      imports: {
        "file:///": blocked,
        [runner]: runner,
        [entry]: `${index}pyodide.mjs`,
        [new URL(HARDEN, runner).href]: harden,
        [harden]: harden,
        [index]: index,
      },
    }),
  );
  const pyodideDir = pyodidePath(index);
  return {
    dir,
    runner,
    args: [
      "run",
      "--no-prompt",
      "--no-remote",
      "--no-npm",
      "--no-config",
      "--no-code-cache",
      "--no-check",
      "--quiet",
      `--import-map=${dir}/import_map.json`,
      `--allow-read=${pyodideDir}`,
    ],
  };
}

/** Imported before the snapshot is taken, so that every interpreter starts with them loaded. */
const SNAPSHOT_MODULES = [...PY_TEST_MODULES, ...PY_TOOLKIT_MODULES];

let snapshot: Promise<Uint8Array | null> | undefined;
let snapshotError: string | undefined;
let snapshotFile: string | null = null; // where the snapshot in use was cached, if it was

function granted(descriptor: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(descriptor).state === "granted";
  } catch {
    return false;
  }
}

/**
 * The file caching the snapshot between processes (`$XDG_CACHE_HOME` or `~/.cache`, then
 * `rlvr/pyodide-snapshots/<hash>.bin`, private to the user), or `null` when this process may not
 * use it. The hash covers the Pyodide directory (so its version), the Deno and V8 versions and
 * the runner's source, so any change makes a new snapshot. Trusting it is no new trust: whoever
 * can write there can also rewrite the Pyodide package in Deno's cache.
 */
async function snapshotCacheFile(index: string): Promise<string | null> {
  try {
    if (!granted({ name: "env", variable: "XDG_CACHE_HOME" })) return null;
    if (!granted({ name: "env", variable: "HOME" })) return null;
    const home = Deno.env.get("HOME");
    const base = Deno.env.get("XDG_CACHE_HOME") || (home ? `${home}/.cache` : "");
    if (base === "") return null;
    const dir = `${base}/rlvr/pyodide-snapshots`;
    if (!granted({ name: "read", path: dir }) || !granted({ name: "write", path: dir })) {
      return null;
    }
    if (RUNNER.protocol === "file:" && !granted({ name: "read", path: RUNNER })) return null;
    const runner = await runnerSource();
    const text = [
      index,
      Deno.version.deno,
      Deno.version.v8,
      runner,
      HARDEN_SOURCE,
      PY_TOOLKIT,
      V8_FLAGS,
      ...SNAPSHOT_MODULES,
    ].join("\0");
    const digest = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
    );
    const hex = Array.from(digest.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
    return `${dir}/${hex}.bin`;
  } catch {
    return null;
  }
}

/** The snapshot child's exit code when the toolkit fails its self-check (see `_py_runner.ts`). */
const UNSAFE_TOOLKIT = 4;

/**
 * Makes the interpreter snapshot in a child of its own; `null` (and a reason) if that fails.
 * Throws when the child found the Python toolkit unsafe: no interpreter may then start.
 */
async function makeSnapshot(index: string): Promise<Uint8Array | null> {
  const { dir, args, runner } = await childSetup(index);
  try {
    const chunks: Uint8Array[] = [];
    const proc = new SandboxProcess({
      args: [...args, `--v8-flags=--max-old-space-size=${SNAPSHOT_MEMORY_MB},${V8_FLAGS}`, runner],
      cwd: dir,
      denoDir: `${dir}/deno_dir`,
      memoryMb: SNAPSHOT_MEMORY_MB,
      stderrLimitBytes: 1 << 16,
      onStdout: (c) => chunks.push(c.slice()),
    });
    const timer = setTimeout(() => proc.kill("timeout"), LOAD_TIMEOUT_MS);
    await proc.write(jsonFrame({
      nonce: "",
      indexURL: pyodidePath(index),
      mode: "snapshot",
      modules: SNAPSHOT_MODULES,
      toolkit: PY_TOOLKIT,
      testModules: PY_TEST_MODULES,
      tests: [],
    }));
    await proc.closeStdin();
    const status = await proc.done;
    clearTimeout(timer);
    const bytes = concat(chunks);
    if (status.code === UNSAFE_TOOLKIT) throw new Error(clip(proc.stderrText(), 2000));
    if (!status.success || bytes.length === 0) {
      snapshotError = `snapshot child ${proc.killedFor ?? `exited ${status.code}`}: ${
        clip(proc.stderrText(), 1000)
      }`;
      return null;
    }
    return bytes;
  } catch (e) {
    if (e instanceof Error && e.message.includes("toolkit is unsafe")) throw e;
    snapshotError = String(e);
    return null;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The interpreter snapshot: from memory, else the disk cache, else made (and cached). */
function interpreterSnapshot(): Promise<Uint8Array | null> {
  snapshot ??= (async () => {
    const index = await pyodideIndexURL();
    const file = await snapshotCacheFile(index);
    if (file !== null) {
      try {
        const cached = await Deno.readFile(file);
        if (cached.length > 0) {
          snapshotFile = file;
          return cached;
        }
      } catch { /* not cached yet */ }
    }
    const made = await makeSnapshot(index);
    if (made !== null && file !== null) {
      try {
        await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true, mode: 0o700 });
        const tmp = `${file}.${crypto.randomUUID()}.tmp`;
        await Deno.writeFile(tmp, made, { mode: 0o600 });
        await Deno.rename(tmp, file); // atomic: readers never see a partial file
        await pruneSnapshotCache(file);
      } catch { /* caching is best effort */ }
    }
    return made;
  })();
  return snapshot;
}

/** Removes other snapshots (older Pyodide/Deno/runner versions) not written in the last day. */
async function pruneSnapshotCache(keep: string): Promise<void> {
  const dir = keep.slice(0, keep.lastIndexOf("/"));
  const cutoff = Date.now() - 24 * 3600 * 1000;
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (!entry.isFile || path === keep || !/\.(bin|tmp)$/.test(entry.name)) continue;
    const mtime = (await Deno.stat(path).catch(() => null))?.mtime?.getTime() ?? Infinity;
    if (mtime < cutoff) await Deno.remove(path).catch(() => {});
  }
}

/** Forgets a cached snapshot that did not load (stale or corrupt); the next use remakes it. */
async function dropCachedSnapshot(): Promise<boolean> {
  const file = snapshotFile;
  if (file === null) return false;
  snapshotFile = null;
  snapshot = undefined;
  await Deno.remove(file).catch(() => {});
  return true;
}

/** What {@link preparePython} found. */
export interface PythonInfo {
  /** The Pyodide package directory the sandboxes read. */
  indexURL: string;
  /** Whether interpreters start from a memory snapshot (else each loads Pyodide from scratch). */
  snapshot: boolean;
  /** Whether the snapshot came from the cache on disk (made by an earlier process). */
  snapshotCached: boolean;
  /** Why no snapshot could be made, when `snapshot` is false. */
  snapshotError?: string;
  /** Milliseconds a sandboxed interpreter took to start (process start to ready). */
  startMs: number;
  /**
   * Of `startMs`, the milliseconds the interpreter spent locking itself down before it could
   * take a program (the verdict toolkit, the audit hook, the locked JavaScript realm).
   */
  setUpMs: number;
  /** Milliseconds this call took (includes installing Pyodide and making the snapshot). */
  ms: number;
}

/**
 * Loads Pyodide once (installing the pinned npm package if needed), makes the interpreter
 * snapshot and starts one sandboxed interpreter to prove it works. Call it at start-up to pay
 * that cost early; otherwise the first Python case pays it. Rejects when Pyodide cannot run.
 *
 * @example Usage
 * ```ts
 * import { preparePython } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * const info = await preparePython(); // about 3 s the first time in a process
 * assert.equal(info.snapshot, true);
 * assert.ok(info.startMs < 10_000);
 * assert.ok(info.setUpMs <= info.startMs);
 * ```
 */
export async function preparePython(): Promise<PythonInfo> {
  const t0 = performance.now();
  const indexURL = await pyodideIndexURL();
  await interpreterSnapshot();
  const t1 = performance.now();
  const worker = await PythonWorker.start("prepare", 512);
  const startMs = performance.now() - t1;
  const setUpMs = worker.setUpMs;
  await worker.close();
  const snap = await interpreterSnapshot(); // the one in use (remade if the cached one failed)
  return {
    indexURL,
    snapshot: snap !== null,
    snapshotCached: snapshotFile !== null,
    ...(snap === null && snapshotError !== undefined ? { snapshotError } : {}),
    startMs,
    setUpMs,
    ms: performance.now() - t0,
  };
}

interface Reply {
  type: "ready" | "result" | "fatal";
  /** In `ready`: milliseconds spent setting up the verdict machinery. */
  setUpMs?: number;
  id?: number;
  status?: "ok" | "exit" | "error" | "assert" | "memory" | "output_limit";
  phase?: string;
  exitCode?: number;
  message?: string;
  stdout?: string;
  stderr?: string;
  fatal?: boolean;
}

/** An interpreter that did not start; `killed` says whether the parent killed it, and why. */
class StartError extends Error {
  constructor(message: string, readonly killed: KillReason | null) {
    super(message);
    this.name = "StartError";
  }
}

/** Options of {@link PythonWorker.run}. */
export interface PythonCaseOptions {
  /** Compares stdout with the expected output (default `outputsMatch`). */
  compare?: (actual: string, expected: string) => boolean;
  /** Kills the interpreter when aborted (status `skipped`). */
  signal?: AbortSignal;
}

/** One sandboxed Python interpreter, serving the cases of one program. */
export class PythonWorker {
  /** The program identity this interpreter serves (reuse key). */
  readonly key: string;
  #setUpMs = 0;
  #proc: SandboxProcess;
  #dir: string;
  #nonce: string;
  #memoryMb: number;
  #decoder = new TextDecoder();
  #line = "";
  #garbage = 0;
  #garbageLimit = 1 << 20;
  #waiter: ((reply: Reply | null) => void) | null = null;
  #nextId = 0;
  #dead = false;
  #tests: readonly string[];

  private constructor(
    key: string,
    setup: ChildSetup,
    memoryMb: number,
    tests: readonly string[],
  ) {
    const { dir, args, runner } = setup;
    this.key = key;
    this.#tests = tests;
    this.#dir = dir;
    this.#nonce = crypto.randomUUID();
    this.#memoryMb = memoryMb;
    this.#proc = new SandboxProcess({
      args: [
        ...args,
        `--v8-flags=--max-old-space-size=${Math.max(64, Math.floor(memoryMb))},${V8_FLAGS}`,
        runner,
      ],
      cwd: dir,
      denoDir: `${dir}/deno_dir`,
      memoryMb,
      stderrLimitBytes: 1 << 20,
      onStdout: (chunk) => this.#onStdout(chunk),
    });
    this.#proc.done.then(() => this.#onExit());
  }

  /**
   * Starts an interpreter (from the snapshot when there is one); rejects if it cannot load.
   * `tests` are the assertion snippets it may run: they are compiled before any program code
   * runs in it, so a worker serves one program with one set of tests (see `_py_toolkit.ts`).
   */
  static async start(
    key: string,
    memoryMb: number,
    tests: readonly string[] = [],
    signal?: AbortSignal,
  ): Promise<PythonWorker> {
    try {
      return await PythonWorker.#start(key, memoryMb, tests, signal);
    } catch (e) {
      // A snapshot from the disk cache that does not load (the child failed on its own, it was
      // not killed for a limit) is remade once.
      if (!(e instanceof StartError) || e.killed !== null || !(await dropCachedSnapshot())) throw e;
      return await PythonWorker.#start(key, memoryMb, tests, signal);
    }
  }

  static async #start(
    key: string,
    memoryMb: number,
    tests: readonly string[],
    signal?: AbortSignal,
  ): Promise<PythonWorker> {
    const index = await pyodideIndexURL();
    const snap = await interpreterSnapshot();
    const worker = new PythonWorker(key, await childSetup(index), memoryMb, tests);
    const onAbort = () => worker.#proc.kill("aborted");
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => worker.#proc.kill("timeout"), LOAD_TIMEOUT_MS);
    try {
      const ready = worker.#next();
      await worker.#proc.write(jsonFrame({
        nonce: worker.#nonce,
        indexURL: pyodidePath(index),
        mode: "serve",
        toolkit: PY_TOOLKIT,
        testModules: PY_TEST_MODULES,
        tests,
      }));
      await worker.#proc.write(frame(snap ?? new Uint8Array(0)));
      const reply = await ready;
      if (reply?.type !== "ready") {
        const killed = worker.#proc.killedFor;
        await worker.close();
        const why = killed === "memory"
          ? `it needed more than memoryMb = ${memoryMb} MiB (Pyodide itself takes about 200 MiB)`
          : `${killed ? `${killed}; ` : ""}${reply?.message ?? ""} ${
            clip(worker.#proc.stderrText(), 1000)
          }`;
        throw new StartError(`the Python sandbox did not start: ${why.trim()}`, killed);
      }
      worker.#setUpMs = reply.setUpMs ?? 0;
      return worker;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Milliseconds the interpreter spent setting up its verdict machinery when it started. */
  get setUpMs(): number {
    return this.#setUpMs;
  }

  /** Whether the interpreter can take another case. */
  get alive(): boolean {
    return !this.#dead;
  }

  /** Runs one case of `code`; the interpreter dies on timeout, memory or output limit. */
  async run(
    code: string,
    testCase: CodeCase,
    limits: SandboxLimits,
    options: PythonCaseOptions = {},
  ): Promise<CaseResult> {
    const id = this.#nextId++;
    const assertMode = isAssertCase(testCase);
    const test = assertMode ? this.#tests.indexOf(testCase.assert) : null;
    if (test === -1) {
      throw new Error("PythonWorker.run: the interpreter was not started with this test snippet");
    }
    const started = performance.now();
    const reply = this.#next();
    this.#garbage = 0;
    this.#garbageLimit = 2 * limits.outputLimitBytes + 65536;
    const timer = setTimeout(() => this.#proc.kill("timeout"), limits.timeoutMs);
    const onAbort = () => this.#proc.kill("aborted");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    let r: Reply | null;
    try {
      await this.#proc.write(jsonFrame({
        id,
        code,
        test,
        input: assertMode ? "" : testCase.input,
        outputLimitBytes: limits.outputLimitBytes,
      }));
      r = await reply;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
    const ms = performance.now() - started;
    if (r?.type !== "result" || r.id !== id) {
      // No reply: the interpreter was killed (or died); wait for it to be gone.
      this.#dead = true;
      this.#proc.kill("closed");
      await this.#proc.done;
      const base = { ms, stdout: "", stderr: "" };
      switch (this.#proc.killedFor) {
        case "timeout":
          return {
            ...base,
            status: "timeout",
            message: `killed after ${limits.timeoutMs} ms (wall clock)`,
          };
        case "memory":
          return {
            ...base,
            status: "memory",
            message: `killed above ${this.#memoryMb} MiB resident memory`,
          };
        case "output_limit":
          return {
            ...base,
            status: "output_limit",
            message: `wrote more than ${limits.outputLimitBytes} bytes`,
          };
        case "aborted":
          return { ...base, status: "skipped", message: "aborted" };
      }
      const stderr = this.#proc.stderrText();
      if (looksOutOfMemory(stderr)) {
        return { ...base, status: "memory", message: clip(stderr, 2000) };
      }
      return { ...base, status: "error", message: `the interpreter died: ${clip(stderr, 2000)}` };
    }
    const stdout = r.stdout ?? "";
    const stderr = r.stderr ?? "";
    const result = (status: CaseResult["status"], message?: string): CaseResult => ({
      status,
      ms,
      stdout,
      stderr,
      ...(message === undefined ? {} : { message }),
    });
    const message = r.message ?? "";
    if (r.fatal) {
      // The runner exits after these (its interpreter is spent); wait until it is gone.
      this.#dead = true;
      await this.#proc.done;
    }
    switch (r.status) {
      case "output_limit":
        return result("output_limit", `wrote more than ${limits.outputLimitBytes} bytes`);
      case "memory":
        return result("memory", message || "MemoryError");
      case "error":
        return result("error", clip(message, 2000));
      case "assert":
        return result("fail", clip(message, 2000));
      case "exit":
        if (r.exitCode !== 0) {
          return result("error", message || `exited with code ${r.exitCode}`);
        }
        if (assertMode) return result("fail", "exited before the tests finished");
        break;
      case "ok":
        if (assertMode) {
          return r.phase === "done" ? result("pass") : result("fail", "the tests did not finish");
        }
        break;
      default:
        return result("error", `unexpected reply ${JSON.stringify(r.status)}`);
    }
    if (isAssertCase(testCase)) return result("fail", "the tests did not finish");
    const compare = options.compare ?? outputsMatch;
    return compare(stdout, testCase.output) ? result("pass") : result("fail", "wrong output");
  }

  /** Kills the interpreter and removes its files. */
  async close(): Promise<void> {
    this.#dead = true;
    this.#proc.kill("closed");
    await this.#proc.closeStdin();
    await this.#proc.done;
    await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
  }

  #next(): Promise<Reply | null> {
    return new Promise((resolve) => {
      if (this.#dead) resolve(null); // already gone: no reply will ever come
      else this.#waiter = resolve;
    });
  }

  #deliver(reply: Reply | null): void {
    const w = this.#waiter;
    this.#waiter = null;
    w?.(reply);
  }

  #onExit(): void {
    this.#dead = true;
    this.#deliver(null);
  }

  #onStdout(chunk: Uint8Array): void {
    this.#line += this.#decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = this.#line.indexOf("\n")) >= 0) {
      const line = this.#line.slice(0, nl);
      this.#line = this.#line.slice(nl + 1);
      const prefix = `${this.#nonce} `;
      if (line.startsWith(prefix)) {
        let reply: Reply | null = null;
        try {
          reply = JSON.parse(line.slice(prefix.length)) as Reply;
        } catch {
          reply = null;
        }
        if (reply !== null) this.#deliver(reply);
      } else {
        this.#countGarbage(line.length + 1);
      }
    }
    this.#countGarbage(0);
  }

  #countGarbage(n: number): void {
    // Bytes on the real stdout that are not replies: only a program that escaped to JavaScript
    // writes them. A partial line counts too, so a flood without newlines is caught.
    this.#garbage += n;
    const partial = this.#line.length;
    const maxLine = 8 * this.#garbageLimit; // a reply line carries up to 2 escaped outputs
    if (this.#garbage > this.#garbageLimit || partial > maxLine) this.#proc.kill("output_limit");
  }
}
