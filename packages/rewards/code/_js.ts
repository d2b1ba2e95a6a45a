/**
 * Internal: one JavaScript/TypeScript test case in a permission-less Deno subprocess.
 *
 * Each case gets a fresh temporary directory holding the program (`main.js` / `main.ts`) and an
 * import map, and a fresh `deno run` with no `--allow-*` flag and `--no-prompt` (every
 * permission check fails), `--no-remote --no-npm` (only `node:` built-ins and `data:` modules
 * load), `--no-config`, `--no-code-cache`, a V8 heap limit, a cleared environment and an empty
 * `DENO_DIR`. Two holes in Deno's permission model are closed by hand: Deno checks no permission
 * for imports of local files (static or dynamic with a literal specifier), so the import map
 * sends every `file:///` specifier except the case's own files to a directory that does not
 * exist (`import x from "/etc/secret.json" with { type: "json" }` fails to resolve); and
 * `require()` reads Deno's npm cache unchecked, so the child's `DENO_DIR` is an empty directory.
 *
 * Node-style programs work: `require` is defined (built-ins only) and stdin can be read with
 * `require("fs").readFileSync(0)`, `process.stdin` or `Deno.stdin` (not `/dev/stdin`, a path).
 *
 * Verdict integrity (assertion cases). The program runs in the same realm as its tests, so the
 * verdict must not depend on anything the program can change:
 *
 * - Three modules with random names: a prelude, the program (`main.js`, which ends with the test
 *   snippet as an exported `async function` under a random name) and an entry that imports both.
 *   Modules evaluate in import order, so the prelude runs before any code of the program: it
 *   captures what the verdict needs (`Promise.prototype.then`, `Deno.stdout.writeSync`,
 *   `Deno.exit`) and locks the intrinsics and `node:assert` (`_harden.ts`), so the program cannot
 *   replace `Promise.prototype.then`, `Object.is`, `JSON.stringify` or `assert.equal`.
 *   The prototypes of `Array`, `Function`, `String`, `Number` and `Date` stay extensible while
 *   the program's top level runs (`Array.prototype.last = ...` is a classic exercise); they are
 *   sealed before the tests, and a program that added a hook there that built-ins look up on
 *   the tests' own values (`toJSON`, `Symbol.toPrimitive`, `Symbol.split`, ...) fails.
 * - Only the entry knows the random sentinel line that means "the tests ran to their end", and
 *   it writes it from a reaction registered with the captured `then` on the promise of the test
 *   function: the program cannot read the entry (no read permission; it sees no function of it)
 *   and cannot reach the reaction. The parent decides: pass only when the child exited with
 *   code 0 and its stdout ends with that line. Exiting early (`Deno.exit(0)`), an exception or
 *   a suppressed rejection never writes it.
 * - The test function takes the intrinsics (`Object`, `JSON`, `Math`, `Promise`, ...) as
 *   parameters, so a program that declares `const JSON = ...` at module scope does not shadow
 *   them for the tests; its export binding is `const`, so the program cannot swap it through a
 *   self-import and direct `eval`; `Function.prototype.toString` hides its source (and that of
 *   functions defined in it) so the program cannot read the expected values; and it runs only
 *   when given a secret key that only the entry and its own (hidden) source hold, so the
 *   program cannot run it with an `assert` of its own that records the expected values.
 * - A program swallowing the test code (an unclosed template literal or comment) removes the
 *   export, and the entry fails to link.
 *
 * Stdin/stdout cases need none of this: the parent compares the captured stdout itself.
 *
 * @module
 */

import type { CodeCase } from "./cases.ts";
import { isAssertCase, outputsMatch } from "./cases.ts";
import type { CaseResult, SandboxLimits } from "./result.ts";
import { concat, SandboxProcess } from "./_process.ts";
import { hardenIntrinsics } from "./_harden.ts";
import { clip, looksOutOfMemory } from "./_util.ts";

/** Options of {@link runJsCase}. */
export interface JsCaseOptions {
  /** Compares stdout with the expected output (default {@link outputsMatch}). */
  compare?: (actual: string, expected: string) => boolean;
  /** Kills the case when aborted (status `skipped`). */
  signal?: AbortSignal;
}

function stripShebang(code: string): string {
  return code.startsWith("#!") ? code.replace(/^#![^\n]*/, "") : code;
}

function randomId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

/**
 * The intrinsics handed to the test function as parameters (a program's module-scope
 * `const JSON = ...` would otherwise shadow the real one for the tests).
 */
const TEST_PARAMS = [
  "Object",
  "Function",
  "Array",
  "Number",
  "Boolean",
  "String",
  "Symbol",
  "BigInt",
  "Math",
  "JSON",
  "Reflect",
  "Promise",
  "Proxy",
  "Map",
  "Set",
  "WeakMap",
  "WeakSet",
  "WeakRef",
  "Date",
  "RegExp",
  "Error",
  "TypeError",
  "RangeError",
  "SyntaxError",
  "ReferenceError",
  "EvalError",
  "URIError",
  "AggregateError",
  "ArrayBuffer",
  "DataView",
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
  "Iterator",
  "Intl",
  "parseInt",
  "parseFloat",
  "isNaN",
  "isFinite",
  "encodeURIComponent",
  "decodeURIComponent",
  "encodeURI",
  "decodeURI",
  "NaN",
  "Infinity",
  "undefined",
  "globalThis",
];

/**
 * Node built-ins loaded before the intrinsics are locked: loading `node:os` (also loaded by
 * `node:tty`) runs Deno code that assigns a property the lock makes read-only. The others load
 * fine afterwards (the hostile suite runs `fs`, `readline`, `util` and `os` programs).
 */
const PRELOAD = ["node:os"];

/**
 * The prelude of an assertion case: everything the verdict needs, captured before the program
 * runs, then the lock. `hide` registers the test function, whose source (and that of functions
 * defined in it) `Function.prototype.toString` then refuses to show.
 */
function preludeSource(mainUrl: string): string {
  return `import assert from "node:assert/strict";
import { createRequire } from "node:module";
${PRELOAD.map((m) => `import ${JSON.stringify(m)};`).join("\n")}
globalThis.require ??= createRequire(${JSON.stringify(mainUrl)});
const uncurry = (f) => Function.prototype.call.bind(f);
const then = uncurry(Promise.prototype.then);
const realToString = uncurry(Function.prototype.toString);
const includes = uncurry(String.prototype.includes);
const write = Deno.stdout.writeSync.bind(Deno.stdout);
const writeErr = Deno.stderr.writeSync.bind(Deno.stderr);
const exit = Deno.exit.bind(Deno);
const encoder = new TextEncoder();
const encode = uncurry(TextEncoder.prototype.encode);
const hiddenFns = new WeakSet();
const hiddenTexts = [];
const MASK = "function () { [native code] }";
Object.defineProperty(Function.prototype, "toString", {
  value: function toString() {
    if (hiddenFns.has(this)) return MASK;
    const text = realToString(this);
    for (const hidden of hiddenTexts) if (includes(hidden, text)) return MASK;
    return text;
  },
  writable: true,
  configurable: true,
});
export function hide(fn) {
  hiddenFns.add(fn);
  hiddenTexts.push(realToString(fn));
  return fn;
}
export const intrinsics = Object.freeze([${TEST_PARAMS.join(", ")}]);
export { assert };
/** Prototypes programs may extend at their top level; sealed before the tests run. */
const EXTENSIBLE = [Array.prototype, Function.prototype, String.prototype, Number.prototype,
  Date.prototype];
const BUILT_IN = EXTENSIBLE.map((proto) => new Set(Reflect.ownKeys(proto)));
(${String(hardenIntrinsics)})([assert], EXTENSIBLE);
/** Hooks that built-in operations look up by name on the test's own values, too. */
const HOOKS = ["toJSON", "then", Symbol.toPrimitive, Symbol.toStringTag, Symbol.split,
  Symbol.replace, Symbol.match, Symbol.matchAll, Symbol.search, Symbol.isConcatSpreadable];
/** Seals the prototypes the program could extend, refusing hooks added to them. */
function seal() {
  for (const [i, proto] of EXTENSIBLE.entries()) {
    for (const key of HOOKS) {
      if (!BUILT_IN[i].has(key) && Object.getOwnPropertyDescriptor(proto, key) !== undefined) {
        const name = proto.constructor.name;
        throw new TypeError(\`the program defined \${name}.prototype[\${String(key)}]\`);
      }
    }
    Object.preventExtensions(proto);
  }
}
function fail(error) {
  let text;
  try {
    text = String(error && typeof error === "object" && "stack" in error ? error.stack : error);
  } catch {
    text = "an exception that cannot be printed";
  }
  try {
    writeErr(encode(encoder, "error: Uncaught (in promise) " + text + "\\n"));
  } finally {
    exit(1);
  }
}
/**
 * Seals the prototypes, runs the tests; writes \`line\` and exits 0 once they resolve, else
 * exits 1.
 */
export function settle(run, line) {
  let promise;
  try {
    seal();
    promise = run();
  } catch (error) {
    fail(error);
  }
  then(promise, () => {
    write(encode(encoder, line));
    exit(0);
  }, fail);
}
`;
}

/** The files of one case: what to write in the case's directory and which one to run. */
export interface JsProgram {
  /** File name → source; `main` is the program. */
  files: Record<string, string>;
  /** The file `deno run` starts. */
  entry: string;
  /** The line written when the tests ran to their end (assertion cases), else `null`. */
  sentinel: string | null;
}

/**
 * Builds the files of one case (see the module documentation). `dirUrl` is the `file:` URL of
 * the case's directory, with a trailing slash.
 *
 * @example Usage
 * ```ts
 * import { buildProgram } from "./_js.ts";
 * import assert from "node:assert/strict";
 * const { files, entry, sentinel } = buildProgram(
 *   "const f = (x) => x + 1;",
 *   { assert: "assert.equal(f(1), 2);" },
 *   "javascript",
 *   "file:///tmp/case/",
 * );
 * assert.equal(Object.keys(files).length, 3); // prelude, main.js, entry
 * assert.ok(files["main.js"]!.includes("assert.equal(f(1), 2);"));
 * assert.ok(!files["main.js"]!.includes(sentinel!)); // only the entry knows it
 * assert.ok(files[entry]!.includes(sentinel!));
 * ```
 */
export function buildProgram(
  code: string,
  testCase: CodeCase,
  language: "javascript" | "typescript",
  dirUrl: string,
): JsProgram {
  const id = randomId();
  const main = `main.${language === "typescript" ? "ts" : "js"}`;
  const body = stripShebang(code);
  if (!isAssertCase(testCase)) {
    // Prepended to the program's first line, so that its line numbers stay as written.
    const require =
      `import { createRequire as __rlvr_cr_${id} } from "node:module"; globalThis.require ??= __rlvr_cr_${id}(import.meta.url); `;
    return { files: { [main]: require + body + "\n" }, entry: main, sentinel: null };
  }
  const prelude = `_rlvr_${randomId()}.js`;
  const entry = `_rlvr_${randomId()}.js`;
  const sentinel = `rlvr-tests-done-${randomId()}`;
  const tests = `__rlvr_tests_${id}`;
  const hide = `__rlvr_hide_${id}`;
  const key = `__rlvr_key_${id}`;
  const secret = randomId();
  // The key keeps the program from running the tests itself (e.g. from inside \`add\`, with an
  // \`assert\` of its own that records the expected values).
  const program = `import { hide as ${hide} } from "./${prelude}"; ` + body +
    `\n;export const ${tests} = ${hide}(async function (${key}, assert, ${
      TEST_PARAMS.join(", ")
    }) {\nif (${key} !== "${secret}") throw new TypeError("only the sandbox runs the tests");\n` +
    `${testCase.assert}\n});\n`;
  const entrySource = `import { assert, intrinsics, settle } from "./${prelude}";
import { ${tests} as tests } from "./${main}";
const line = ${JSON.stringify(`\n${sentinel}\n`)};
settle(() => tests("${secret}", assert, ...intrinsics), line);
`;
  return {
    files: {
      [prelude]: preludeSource(new URL(main, dirUrl).href),
      [main]: program,
      [entry]: entrySource,
    },
    entry,
    sentinel,
  };
}

/** Runs `code` on one case in a fresh sandboxed Deno process. */
export async function runJsCase(
  code: string,
  language: "javascript" | "typescript",
  testCase: CodeCase,
  limits: SandboxLimits,
  options: JsCaseOptions = {},
): Promise<CaseResult> {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-code-" });
  try {
    return await runIn(dir, code, language, testCase, limits, options);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function runIn(
  dir: string,
  code: string,
  language: "javascript" | "typescript",
  testCase: CodeCase,
  limits: SandboxLimits,
  options: JsCaseOptions,
): Promise<CaseResult> {
  const dirUrl = new URL(`file://${dir}/`).href;
  const { files, entry, sentinel } = buildProgram(code, testCase, language, dirUrl);
  const allowed: Record<string, string> = {};
  for (const [name, source] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${name}`, source);
    const url = new URL(name, dirUrl).href;
    allowed[url] = url;
  }
  await Deno.writeTextFile(
    `${dir}/import_map.json`,
    JSON.stringify({ imports: { "file:///": `${dirUrl}blocked/`, ...allowed } }),
  );
  const out: Uint8Array[] = [];
  let outBytes = 0;
  const started = performance.now();
  const proc = new SandboxProcess({
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
      `--v8-flags=--max-old-space-size=${Math.max(16, Math.floor(limits.memoryMb))}`,
      `${dir}/${entry}`,
    ],
    cwd: dir,
    denoDir: `${dir}/deno_dir`,
    memoryMb: limits.memoryMb,
    stderrLimitBytes: limits.outputLimitBytes,
    onStdout(chunk) {
      const room = limits.outputLimitBytes + (sentinel === null ? 0 : sentinel.length + 2) -
        outBytes;
      if (room > 0) out.push(chunk.slice(0, room));
      outBytes += chunk.length;
      if (room < chunk.length) proc.kill("output_limit");
    },
  });
  const timer = setTimeout(() => proc.kill("timeout"), limits.timeoutMs);
  const onAbort = () => proc.kill("aborted");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    const input = isAssertCase(testCase) ? "" : testCase.input;
    if (input.length > 0) await proc.write(new TextEncoder().encode(input));
    await proc.closeStdin();
    const status = await proc.done;
    const ms = performance.now() - started;
    let stdout = new TextDecoder().decode(concat(out));
    const stderr = clean(proc.stderrText(), dir);
    const base = { ms, stderr: clip(stderr, limits.outputLimitBytes) };
    const tail = `\n${sentinel}\n`;
    const finished = sentinel !== null && stdout.endsWith(tail);
    if (finished) stdout = stdout.slice(0, -tail.length);
    const result = (status: CaseResult["status"], message?: string): CaseResult => ({
      status,
      ...base,
      stdout,
      ...(message === undefined ? {} : { message }),
    });
    switch (proc.killedFor) {
      case "timeout":
        return result("timeout", `killed after ${limits.timeoutMs} ms (wall clock)`);
      case "memory":
        return result("memory", `killed above ${limits.memoryMb} MiB resident memory`);
      case "output_limit":
        return result("output_limit", `wrote more than ${limits.outputLimitBytes} bytes`);
      case "aborted":
      case "closed":
        return result("skipped", "aborted");
    }
    if (!status.success && looksOutOfMemory(stderr)) {
      return result("memory", clip(stderr, 2000));
    }
    if (isAssertCase(testCase)) {
      if (finished && status.success) return result("pass");
      if (/Uncaught (?:\(in promise\) )?AssertionError/.test(stderr)) {
        return result("fail", clip(stderr, 2000));
      }
      if (status.success) return result("fail", "exited before the tests finished");
      return result("error", clip(stderr, 2000) || exitMessage(status));
    }
    if (!status.success) return result("error", clip(stderr, 2000) || exitMessage(status));
    const compare = options.compare ?? outputsMatch;
    return compare(stdout, testCase.output) ? result("pass") : result("fail", "wrong output");
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

function exitMessage(status: Deno.CommandStatus): string {
  return status.signal ? `killed by ${status.signal}` : `exited with code ${status.code}`;
}

function clean(stderr: string, dir: string): string {
  return stderr.replaceAll(`file://${dir}/`, "").replaceAll(`${dir}/`, "");
}
