/**
 * Internal: the program inside a Python sandbox child (run by `python.ts`, never imported).
 *
 * It runs with `--allow-read=<pyodide package dir>` and nothing else, under an import map that
 * blocks every local module outside that directory (and maps `./_harden.ts` to a copy the parent
 * wrote), with code generation from strings disabled, loads Pyodide (from a memory snapshot when
 * the parent sends one), then serves test cases one at a time. Protocol: the parent writes
 * frames to stdin (4-byte little-endian length, then the payload): a JSON config
 * `{nonce, indexURL, mode, modules, toolkit, testModules, tests}`, then (mode `serve`) the
 * snapshot bytes (possibly empty), then one JSON job `{id, code, test, input, outputLimitBytes}`
 * per case (`test`: the index of the case's snippet in `tests`, or `null` for a stdin/stdout
 * case). Mode `snapshot` imports `modules`, compiles the toolkit, writes the raw snapshot to
 * stdout and exits 0 (4 when the toolkit fails its self-check). In mode `serve` every reply is
 * one stdout line `<nonce> <json>`; the nonce travels only on stdin and lives in this module's
 * closure.
 *
 * Verdict integrity: the verdict is computed here, in JavaScript, and never trusted from Python.
 * Before any untrusted code runs, the runner evaluates the Python toolkit (`_py_toolkit.ts`) in
 * a private namespace, compiles every test snippet with it, cuts the JavaScript bridge (the
 * `js` and `pyodide_js` modules; `jsglobals` is an empty frozen object anyway), installs the
 * toolkit's audit hook, and locks this realm's intrinsics (`_harden.ts`), so that whatever
 * JavaScript object a program might still reach cannot run code from a string or replace a
 * built-in the runner uses. Per case it calls, through the proxies it holds, the toolkit's
 * `run_source` on the program and, for an assertion case, `run_code` on the pre-compiled
 * tests in a fresh namespace: the case passes when that call returned no exception. Python
 * produces no JSON and no status; it cannot write to the real stdout (its streams go to the
 * sinks below) and it cannot read the nonce.
 *
 * Self-contained on purpose: the child resolves modules under `--no-config`, so its only imports
 * are `./_pyodide_entry.ts`, which the child's import map points at Pyodide's `pyodide.mjs`
 * (a static import: JSR rejects dynamic imports it cannot resolve at publish time), and
 * `./_harden.ts`, which it points at the parent's copy.
 *
 * @module
 */

import { loadPyodide as loadPyodideEntry } from "./_pyodide_entry.ts";
import { hardenIntrinsics } from "./_harden.ts";

/** A proxy of a Python object, as Pyodide hands it to JavaScript. */
interface PyProxy {
  (...args: unknown[]): unknown;
  /** Calls with stack switching (JSPI), so `asyncio.run` can wait on JavaScript promises. */
  callPromising?(...args: unknown[]): Promise<unknown>;
  get(key: unknown): unknown;
  set(key: unknown, value: unknown): void;
  delete(key: unknown): void;
  toJs(): unknown;
  destroy(): void;
}

interface PyodideLike {
  runPython(code: string, options?: { globals?: unknown; filename?: string }): unknown;
  setStdin(options: { read(buffer: Uint8Array): number; isatty?: boolean }): void;
  setStdout(options: { write(buffer: Uint8Array): number; isatty?: boolean }): void;
  setStderr(options: { write(buffer: Uint8Array): number; isatty?: boolean }): void;
  makeMemorySnapshot(): Uint8Array;
  unregisterJsModule(name: string): void;
}

type LoadPyodide = (config: Record<string, unknown>) => Promise<PyodideLike>;

interface Config {
  nonce: string;
  indexURL: string;
  mode: "snapshot" | "serve";
  /** Modules to import before the snapshot. */
  modules: string[];
  /** The Python toolkit's source (`_py_toolkit.ts`). */
  toolkit: string;
  /** Standard-library modules tests get fresh copies of. */
  testModules: string[];
  /** The assertion snippets of the program's cases. */
  tests: string[];
}

interface Job {
  id: number;
  code: string;
  test: number | null;
  input: string;
  outputLimitBytes: number;
}

const writeSync = Deno.stdout.writeSync.bind(Deno.stdout);
const exit: (code?: number) => never = Deno.exit.bind(Deno);
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const stdinReader = Deno.stdin.readable.getReader();
let pending: Uint8Array[] = [];
let pendingBytes = 0;

function writeAll(bytes: Uint8Array): void {
  let o = 0;
  while (o < bytes.length) o += writeSync(bytes.subarray(o));
}

async function readExact(n: number): Promise<Uint8Array | null> {
  while (pendingBytes < n) {
    const { value, done } = await stdinReader.read();
    if (done) return null;
    pending.push(value);
    pendingBytes += value.length;
  }
  const all = new Uint8Array(pendingBytes);
  let o = 0;
  for (const c of pending) {
    all.set(c, o);
    o += c.length;
  }
  pending = n < all.length ? [all.subarray(n)] : [];
  pendingBytes = all.length - n;
  return all.subarray(0, n);
}

async function readFrame(): Promise<Uint8Array | null> {
  const head = await readExact(4);
  if (head === null) return null;
  const len = new DataView(head.buffer, head.byteOffset, 4).getUint32(0, true);
  return len === 0 ? new Uint8Array(0) : await readExact(len);
}

const first = await readFrame();
if (first === null) exit(2);
const config = JSON.parse(decoder.decode(first)) as Config;
const started = performance.now();
const loadPyodide = loadPyodideEntry as unknown as LoadPyodide;
// The `js` module is this object: empty, frozen, without a prototype to climb.
const jsglobals = Object.freeze(Object.create(null));
const common = { indexURL: config.indexURL, jsglobals, env: {}, args: [] };

/**
 * Evaluates the toolkit in a private namespace whose `__builtins__` is empty, with the C `exec`
 * (Pyodide's `runPython` would tokenize it in Python). The snapshot holds it compiled already
 * (as `sys._rlvr_toolkit`, removed here before any program runs): compiling takes 0.1 s.
 */
function evaluateToolkit(py: PyodideLike): PyProxy {
  const sys = py.runPython("import sys; sys.__dict__") as PyProxy;
  const exec = py.runPython("exec") as PyProxy;
  const scope = py.runPython("{'__builtins__': {}}") as PyProxy;
  const code = (sys.get("_rlvr_toolkit") as PyProxy | undefined) ?? compileToolkit(py);
  sys.delete("_rlvr_toolkit");
  exec(code, scope);
  const build = scope.get("_rlvr_build") as PyProxy;
  scope.delete("_rlvr_build");
  return build;
}

function compileToolkit(py: PyodideLike): PyProxy {
  const compile = py.runPython("compile") as PyProxy;
  return compile(config.toolkit, "<rlvr>", "exec", 0, true) as PyProxy;
}

function randomHex(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

function buildToolkit(py: PyodideLike): PyProxy {
  const builtins = py.runPython("import builtins; builtins.__dict__");
  const runUntilComplete = py.runPython(
    "import pyodide_js; bool(pyodide_js._api.config.enableRunUntilComplete)",
  );
  return evaluateToolkit(py)(
    builtins,
    `__rlvr_cmp_${randomHex()}`,
    `__rlvr_tests_${randomHex()}`,
    config.testModules.join(","),
    runUntilComplete,
  ) as PyProxy;
}

if (config.mode === "snapshot") {
  const py = await loadPyodide({ ...common, _makeSnapshot: true });
  py.runPython(`import ${config.modules.join(", ")}`);
  (py.runPython("import sys; sys.__dict__") as PyProxy).set("_rlvr_toolkit", compileToolkit(py));
  const bytes = py.makeMemorySnapshot();
  // Once per snapshot (its cache key covers the toolkit): no toolkit function may look up a
  // global or a builtin, or share a closure cell (see `check` in the toolkit). Checked after
  // the snapshot is taken, so that nothing of it is in there.
  const fns = buildToolkit(py);
  const problems = ((fns.get(9) as PyProxy)(fns) as PyProxy).toJs() as string[];
  if (problems.length > 0) {
    Deno.stderr.writeSync(encoder.encode(`the Python toolkit is unsafe: ${problems.join("; ")}\n`));
    exit(4);
  }
  writeAll(bytes);
  exit(0);
}

const snapshot = await readFrame();
if (snapshot === null) exit(2);
const nonce = config.nonce;
const stringify = JSON.stringify;
function send(message: Record<string, unknown>): void {
  writeAll(encoder.encode(`\n${nonce} ${stringify(message)}\n`));
}

let py: PyodideLike;
try {
  py = await loadPyodide(
    snapshot.length > 0 ? { ...common, _loadSnapshot: snapshot } : common,
  );
} catch (e) {
  send({ type: "fatal", message: `could not load Pyodide: ${String(e)}` });
  exit(3);
}

/** The toolkit's functions, held only here. */
interface Toolkit {
  newGlobals: PyProxy;
  begin: PyProxy;
  end: PyProxy;
  runSource: PyProxy;
  runCode: PyProxy;
  testGlobals: PyProxy;
  describe: PyProxy;
  /** Per snippet of `config.tests`: its code object, or why it does not compile. */
  tests: ({ code: PyProxy } | { error: string })[];
}

/** Everything before the first untrusted line runs: see the module documentation. */
function setUp(py: PyodideLike): Toolkit {
  const fns = buildToolkit(py);
  const fn = (i: number) => fns.get(i) as PyProxy;
  const prepare = fn(0);
  const describe = fn(7);
  const tests = config.tests.map((source) => {
    const pair = prepare(source) as PyProxy;
    const code = pair.get(0) as PyProxy | undefined;
    const error = pair.get(1) as PyProxy | undefined;
    if (error === undefined) return { code: code! };
    const text = String(describe(error, "", source)).split("\x1f")[2] ?? "";
    error.destroy();
    return { error: text };
  });
  py.unregisterJsModule("js");
  py.unregisterJsModule("pyodide_js");
  (fn(8))();
  return {
    newGlobals: fn(1),
    begin: fn(2),
    end: fn(3),
    runSource: fn(4),
    runCode: fn(5),
    testGlobals: fn(6),
    describe,
    tests,
  };
}

let input = new Uint8Array(0);
let inputPos = 0;
let current = -1;
let limit = 0;
const used = { out: 0, err: 0 }; // bytes written this case, per stream
let out: Uint8Array[] = [];
let err: Uint8Array[] = [];

function text(chunks: readonly Uint8Array[]): string {
  let n = 0;
  for (const c of chunks) n += c.length;
  const all = new Uint8Array(n);
  let o = 0;
  for (const c of chunks) {
    all.set(c, o);
    o += c.length;
  }
  return decoder.decode(all);
}

function sink(stream: "out" | "err"): { write(buffer: Uint8Array): number; isatty: boolean } {
  const chunks = () => (stream === "out" ? out : err);
  return {
    isatty: false,
    write(buffer: Uint8Array): number {
      const room = limit - used[stream];
      used[stream] += buffer.length;
      if (used[stream] > limit) {
        if (room > 0) chunks().push(buffer.slice(0, room));
        send({
          type: "result",
          id: current,
          status: "output_limit",
          fatal: true,
          stdout: text(out),
          stderr: text(err),
        });
        exit(0);
      }
      chunks().push(buffer.slice());
      return buffer.length;
    },
  };
}

py.setStdin({
  isatty: false,
  read(buffer: Uint8Array): number {
    const n = Math.min(buffer.length, input.length - inputPos);
    buffer.set(input.subarray(inputPos, inputPos + n));
    inputPos += n;
    return n;
  },
});
py.setStdout(sink("out"));
py.setStderr(sink("err"));

const loadedAt = performance.now();
let toolkit: Toolkit;
try {
  toolkit = setUp(py);
} catch (e) {
  send({ type: "fatal", message: `could not set up the sandbox: ${String(e)}` });
  exit(3);
}
const setUpAt = performance.now();
hardenIntrinsics();

/** Calls into Python with stack switching when available (see {@link PyProxy}). */
async function call(fn: PyProxy, ...args: unknown[]): Promise<unknown> {
  return fn.callPromising ? await fn.callPromising(...args) : fn(...args);
}

/**
 * What a `JsException` wraps (Pyodide hands it over as the JavaScript value itself): read here,
 * outside the toolkit's trusted window, because a crafted value can run Python code when read.
 */
function jsErrorText(value: unknown): string {
  if (typeof value === "function" && "destroy" in value) {
    (value as PyProxy).destroy(); // a Python exception: described already
    return "";
  }
  try {
    return value instanceof Error ? `\n${value.name}: ${value.message}` : "";
  } catch {
    return "";
  }
}

/** The outcome of one case, decided here from what the toolkit's calls returned. */
async function runCase(job: Job): Promise<Record<string, unknown>> {
  const { begin, end, newGlobals, runSource, runCode, testGlobals, describe } = toolkit;
  const streams = await call(begin) as PyProxy;
  const g = newGlobals() as PyProxy;
  let phase = "code";
  let error = await call(runSource, job.code, g) as PyProxy | undefined;
  let testsSource = "";
  if (error === undefined && job.test !== null) {
    phase = "tests";
    const test = toolkit.tests[job.test];
    testsSource = config.tests[job.test] ?? "";
    if (test === undefined || "error" in test) {
      await call(end, streams);
      return {
        status: "error",
        phase,
        exitCode: 1,
        message: test === undefined ? `no test snippet ${job.test}` : test.error,
      };
    }
    const tg = testGlobals(g) as PyProxy;
    error = await call(runCode, test.code, tg) as PyProxy | undefined;
    tg.destroy();
    if (error === undefined) phase = "done";
  }
  await call(end, streams);
  streams.destroy();
  g.destroy();
  if (error === undefined) return { status: "ok", phase, exitCode: 0, message: "" };
  const [kind = "error", code = "1", described = ""] = String(
    describe(error, job.code, testsSource),
  ).split("\x1f");
  const message = described + jsErrorText(error.get(0));
  error.destroy();
  const status = kind === "assert" && phase !== "tests" ? "error" : kind;
  return { status, phase, exitCode: Number(code), message: message.slice(-4000) };
}

send({
  type: "ready",
  ms: performance.now() - started,
  loadMs: loadedAt - started,
  setUpMs: setUpAt - loadedAt,
  snapshot: snapshot.length > 0,
});

while (true) {
  const frame = await readFrame();
  if (frame === null) exit(0);
  const job = JSON.parse(decoder.decode(frame)) as Job;
  current = job.id;
  input = encoder.encode(job.input);
  inputPos = 0;
  limit = job.outputLimitBytes;
  used.out = 0;
  used.err = 0;
  out = [];
  err = [];
  let reply: Record<string, unknown>;
  try {
    reply = await runCase(job);
  } catch (e) {
    // Not a Python exception: the interpreter itself failed (wasm stack or memory exhausted).
    // It cannot be trusted with another case, so report and exit.
    const message = String(e instanceof Error ? `${e.name}: ${e.message || e.stack}` : e);
    const memory = /out of memory|OOM|Memory\.grow|allocation/i.test(message);
    send({
      type: "result",
      id: job.id,
      status: memory ? "memory" : "error",
      fatal: true,
      phase: "code",
      exitCode: 1,
      message,
      stdout: text(out),
      stderr: text(err),
    });
    exit(0);
  }
  const fatal = reply.status === "memory";
  send({ type: "result", id: job.id, ...reply, fatal, stdout: text(out), stderr: text(err) });
  // After a MemoryError the WebAssembly memory stays grown: start the next case afresh.
  if (fatal) exit(0);
}
