/**
 * Internal: the program inside a Python sandbox child (run by `python.ts`, never imported).
 *
 * It runs with `--allow-read=<pyodide package dir>` and nothing else, under an import map that
 * blocks every local module outside that directory, loads Pyodide (from a memory snapshot when
 * the parent sends one), then serves test cases one at a time. Protocol: the parent writes
 * frames to stdin (4-byte little-endian length, then the payload): a JSON config
 * `{nonce, indexURL, mode}`, then (mode `serve`) the snapshot bytes (possibly empty), then one
 * JSON job `{id, code, tests, input, outputLimitBytes}` per case. Mode `snapshot` writes the raw
 * snapshot to stdout and exits. In mode `serve` every reply is one stdout line
 * `<nonce> <json>`; the nonce travels only on stdin and lives in this module's closure, so the
 * program under test (which can reach JavaScript through Pyodide's FFI) cannot forge replies.
 * Everything this file needs from the outside world is captured before any untrusted code runs.
 *
 * Self-contained on purpose: the child resolves modules under `--no-config`, so its only import
 * is `./_pyodide_entry.ts`, which the child's import map points at Pyodide's `pyodide.mjs`
 * (a static import: JSR rejects dynamic imports it cannot resolve at publish time).
 *
 * @module
 */

import { loadPyodide as loadPyodideEntry } from "./_pyodide_entry.ts";

interface PyCallable {
  (...args: unknown[]): unknown;
  /** Calls with stack switching (JSPI), so `asyncio.run` can wait on JavaScript promises. */
  callPromising?(...args: unknown[]): Promise<unknown>;
}

interface PyodideLike {
  runPython(code: string): unknown;
  globals: { get(name: string): unknown };
  setStdin(options: { read(buffer: Uint8Array): number; isatty?: boolean }): void;
  setStdout(options: { write(buffer: Uint8Array): number; isatty?: boolean }): void;
  setStderr(options: { write(buffer: Uint8Array): number; isatty?: boolean }): void;
  makeMemorySnapshot(): Uint8Array;
}

type LoadPyodide = (config: Record<string, unknown>) => Promise<PyodideLike>;

interface Config {
  nonce: string;
  indexURL: string;
  mode: "snapshot" | "serve";
}

interface Job {
  id: number;
  code: string;
  tests: string | null;
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

const HARNESS = `
def _rlvr_make():
    import sys, os, json, traceback
    def reopen_std_fds():
        # A program may have closed fd 0/1/2 (open(0) closes it when collected): reopen them.
        for fd, path, flags in ((0, "/dev/stdin", os.O_RDONLY), (1, "/dev/stdout", os.O_WRONLY), (2, "/dev/stderr", os.O_WRONLY)):
            try:
                os.fstat(fd)
            except OSError:
                new = os.open(path, flags)
                if new != fd:
                    os.dup2(new, fd)
                    os.close(new)
    def flush_all(streams):
        for s in streams:
            try:
                s.flush()
            except BaseException:
                pass
    def run(code, tests):
        ns = {"__name__": "__main__", "__builtins__": __builtins__}
        reopen_std_fds()
        out = open(1, "w", encoding="utf-8", errors="replace", closefd=False)
        err = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stdin = open(0, "r", encoding="utf-8", errors="replace", closefd=False)
        sys.stdout = out
        sys.stderr = err
        phase = "code"
        status = "ok"
        exit_code = 0
        message = ""
        try:
            exec(compile(code, "solution.py", "exec"), ns)
            if tests is not None:
                phase = "tests"
                # A trace function can jump over lines (frame.f_lineno): drop any the program set.
                sys.settrace(None)
                sys.setprofile(None)
                exec(compile(tests, "tests.py", "exec"), ns)
                phase = "done"
        except SystemExit as e:
            status = "exit"
            c = e.code
            if c is None:
                exit_code = 0
            elif isinstance(c, int):
                exit_code = c
            else:
                exit_code = 1
                message = str(c)
        except MemoryError:
            status = "memory"
            message = "MemoryError"
        except BaseException as e:
            status = "assert" if phase == "tests" and isinstance(e, AssertionError) else "error"
            tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
            message = "".join(traceback.format_exception(type(e), e, tb))
        finally:
            flush_all([sys.stdout, sys.stderr, out, err, sys.__stdout__, sys.__stderr__])
        return json.dumps({"status": status, "phase": phase, "exitCode": exit_code, "message": message[-4000:]})
    return run
_rlvr_run = _rlvr_make()
del _rlvr_make
`;

const first = await readFrame();
if (first === null) exit(2);
const config = JSON.parse(decoder.decode(first)) as Config;
const started = performance.now();
const loadPyodide = loadPyodideEntry as unknown as LoadPyodide;
const common = { indexURL: config.indexURL, jsglobals: {}, env: {}, args: [] };

if (config.mode === "snapshot") {
  const py = await loadPyodide({ ...common, _makeSnapshot: true });
  writeAll(py.makeMemorySnapshot());
  exit(0);
}

const snapshot = await readFrame();
if (snapshot === null) exit(2);
const nonce = config.nonce;
function send(message: Record<string, unknown>): void {
  writeAll(encoder.encode(`\n${nonce} ${JSON.stringify(message)}\n`));
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
py.runPython(HARNESS);
const run = py.globals.get("_rlvr_run") as PyCallable;

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

send({ type: "ready", ms: performance.now() - started, snapshot: snapshot.length > 0 });

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
    const tests = job.tests ?? undefined;
    const raw = run.callPromising ? await run.callPromising(job.code, tests) : run(job.code, tests);
    reply = JSON.parse(String(raw));
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
