/**
 * Internal: one JavaScript/TypeScript test case in a permission-less Deno subprocess.
 *
 * Each case gets a fresh temporary directory holding the program (`main.js` / `main.ts`) and an
 * import map, and a fresh `deno run` with no `--allow-*` flag and `--no-prompt` (every
 * permission check fails), `--no-remote --no-npm` (only `node:` built-ins and `data:` modules
 * load), `--no-config`, `--no-code-cache`, a V8 heap limit, a cleared environment and an empty
 * `DENO_DIR`. Two holes in Deno's permission model are closed by hand: Deno checks no permission
 * for imports of local files (static or dynamic with a literal specifier), so the import map
 * sends every `file:///` specifier except the program itself to a directory that does not exist
 * (`import x from "/etc/secret.json" with { type: "json" }` fails to resolve); and `require()`
 * reads Deno's npm cache unchecked, so the child's `DENO_DIR` is an empty directory.
 *
 * Node-style programs work: `require` is defined (built-ins only) and stdin can be read with
 * `require("fs").readFileSync(0)`, `process.stdin` or `Deno.stdin` (not `/dev/stdin`, a path).
 *
 * The program cannot read its own file (no read permission), so the assertion epilogue can
 * carry a secret: after the test snippet returns, it prints a random sentinel line and exits.
 * A program that exits early (`Deno.exit(0)`) never prints it and fails.
 *
 * @module
 */

import type { CodeCase } from "./cases.ts";
import { isAssertCase, outputsMatch } from "./cases.ts";
import type { CaseResult, SandboxLimits } from "./result.ts";
import { concat, SandboxProcess } from "./_process.ts";
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

/** The module that runs before anything else in assertion cases (see {@link buildProgram}). */
export const PRELUDE_FILE = "_rlvr_prelude.js";
const PRELUDE = `import assert from "node:assert/strict";\nObject.freeze(assert);\n`;

/**
 * Builds the program source for one case; returns it with the sentinel (assertion cases).
 *
 * In assertion cases the first import is {@link PRELUDE_FILE}, which freezes `node:assert`
 * before any module of the program is evaluated, so the program cannot replace `assert.equal`
 * with a no-op (imports run in order, and a `data:` module of the program runs only after it).
 */
export function buildProgram(
  code: string,
  testCase: CodeCase,
): { source: string; sentinel: string | null } {
  const id = randomId();
  // Prepended to the program's first line, so that its line numbers stay as written.
  const prelude =
    `import { createRequire as __rlvr_cr_${id} } from "node:module"; globalThis.require ??= __rlvr_cr_${id}(import.meta.url); `;
  const body = stripShebang(code);
  if (!isAssertCase(testCase)) return { source: prelude + body + "\n", sentinel: null };
  const sentinel = `rlvr-tests-done-${randomId()}`;
  const imports =
    `import "./${PRELUDE_FILE}"; import __rlvr_assert_${id} from "node:assert/strict"; `;
  const epilogue = `\n;await (async (assert) => {\n${testCase.assert}\n})(` +
    `__rlvr_assert_${id});\nDeno.stdout.writeSync(new TextEncoder().encode("\\n${sentinel}\\n"));\n` +
    `Deno.exit(0);\n`;
  return { source: imports + prelude + body + epilogue, sentinel };
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
  const file = `${dir}/main.${language === "typescript" ? "ts" : "js"}`;
  const dirUrl = new URL(`file://${dir}/`).href;
  const mainUrl = new URL(`file://${file}`).href;
  const { source, sentinel } = buildProgram(code, testCase);
  await Deno.writeTextFile(file, source);
  const preludeUrl = new URL(PRELUDE_FILE, dirUrl).href;
  await Deno.writeTextFile(`${dir}/${PRELUDE_FILE}`, PRELUDE);
  await Deno.writeTextFile(
    `${dir}/import_map.json`,
    JSON.stringify({
      imports: { "file:///": `${dirUrl}blocked/`, [mainUrl]: mainUrl, [preludeUrl]: preludeUrl },
    }),
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
      file,
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
