/**
 * How tests are written in a dataset row, and how program output is compared.
 *
 * Design: two kinds of test case, both language-neutral in shape.
 *
 * - stdin/stdout cases `{ input, output }`: the program is run as a whole with `input` on stdin;
 *   it passes when it exits normally and its stdout equals `output` after {@link normalizeOutput}
 *   (line endings unified, trailing whitespace of every line and trailing blank lines dropped).
 *   The comparison happens in the caller, never in the sandbox, so the program cannot influence
 *   it.
 * - assertion cases `{ assert }`: a snippet appended to the program and run after it in the same
 *   scope. In Python it is plain statements (`assert f(2) == 4`); in JavaScript/TypeScript it runs
 *   inside an async function whose `assert` parameter is `node:assert/strict` (so
 *   `assert(f(2) === 4)`, `assert.deepEqual(...)` and `await` work; `import` statements do not).
 *   A case passes only when the snippet runs to its end: an `AssertionError` scores `fail`, any
 *   other exception `error`, and exiting early (`sys.exit(0)`, `Deno.exit(0)`) `fail`.
 *
 * {@link parseTests} accepts the common dataset shapes: a snippet string (one assertion case), an
 * array of snippets and/or `{input, output}` objects, a single `{input, output}`, and the
 * APPS/TACO form `{inputs: [...], outputs: [...]}` (also as a JSON string).
 *
 * @module
 */

/** A stdin/stdout case: run the program on `input`, compare stdout with `output`. */
export interface IoCase {
  /** Text written to the program's stdin (then closed); `""` when absent. */
  input: string;
  /** Expected stdout, compared after {@link normalizeOutput}. */
  output: string;
}

/** An assertion case: a snippet appended to the program that must run to its end. */
export interface AssertCase {
  /** Python statements, or a JS/TS snippet with `assert` (`node:assert/strict`) in scope. */
  assert: string;
}

/** One test case of a dataset row. */
export type CodeCase = IoCase | AssertCase;

/**
 * Whether a case is an assertion case.
 *
 * @example Usage
 * ```ts
 * import { isAssertCase } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * assert.equal(isAssertCase({ assert: "assert f(1) == 1" }), true);
 * assert.equal(isAssertCase({ input: "1", output: "1" }), false);
 * ```
 */
export function isAssertCase(c: CodeCase): c is AssertCase {
  return typeof (c as AssertCase).assert === "string";
}

/**
 * Output in comparable form: `\r\n` and `\r` become `\n`, trailing whitespace of every line is
 * dropped, then trailing blank lines. Leading whitespace and inner spacing are kept.
 *
 * @example Usage
 * ```ts
 * import { normalizeOutput } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * assert.equal(normalizeOutput("1 2  \r\n3\n\n\n"), "1 2\n3");
 * assert.equal(normalizeOutput("  x"), "  x");
 * ```
 */
export function normalizeOutput(text: string): string {
  return text.replace(/\r\n?/g, "\n").split("\n").map((l) => l.replace(/\s+$/, "")).join("\n")
    .replace(/\n+$/, "");
}

/**
 * The default output comparison: equal after {@link normalizeOutput}.
 *
 * @example Usage
 * ```ts
 * import { outputsMatch } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * assert.equal(outputsMatch("Fizz\nBuzz \n", "Fizz\r\nBuzz"), true);
 * assert.equal(outputsMatch("1", "1.0"), false);
 * ```
 */
export function outputsMatch(actual: string, expected: string): boolean {
  return normalizeOutput(actual) === normalizeOutput(expected);
}

function text(value: unknown, what: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value.join("\n");
  throw new TypeError(`parseTests: ${what} must be a string, got ${typeof value}`);
}

function oneCase(value: unknown, where: string): CodeCase {
  if (typeof value === "string") return { assert: value };
  if (typeof value === "object" && value !== null) {
    const o = value as Record<string, unknown>;
    if (typeof o.assert === "string") return { assert: o.assert };
    if ("output" in o) {
      return {
        input: o.input === undefined ? "" : text(o.input, `${where}.input`),
        output: text(o.output, `${where}.output`),
      };
    }
  }
  throw new TypeError(
    `parseTests: ${where} must be a snippet string, {assert} or {input, output}`,
  );
}

/**
 * Reads a row's tests field into cases; `null` when the field is absent or empty (the code
 * reward then does not apply). Throws a TypeError on a malformed field.
 *
 * @example Usage
 * ```ts
 * import { parseTests } from "@rlvr/rewards/code";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseTests("assert f(1) == 2"), [{ assert: "assert f(1) == 2" }]);
 * assert.deepEqual(parseTests({ inputs: ["1\n"], outputs: ["2\n"] }), [
 *   { input: "1\n", output: "2\n" },
 * ]);
 * assert.deepEqual(parseTests([{ input: "3", output: "4" }, "assert g() == 0"]), [
 *   { input: "3", output: "4" },
 *   { assert: "assert g() == 0" },
 * ]);
 * assert.equal(parseTests(undefined), null);
 * ```
 */
export function parseTests(value: unknown): CodeCase[] | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") {
    const s = value.trim();
    if (s === "") return null;
    if (s.startsWith("{")) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(s);
      } catch {
        parsed = undefined;
      }
      if (typeof parsed === "object" && parsed !== null && "outputs" in parsed) {
        return parseTests(parsed);
      }
    }
    return [{ assert: value }];
  }
  if (Array.isArray(value)) {
    const cases = value.map((v, i) => oneCase(v, `tests[${i}]`));
    return cases.length === 0 ? null : cases;
  }
  if (typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (Array.isArray(o.outputs)) {
      const inputs = o.inputs ?? [];
      if (!Array.isArray(inputs) || (inputs.length !== o.outputs.length && inputs.length !== 0)) {
        throw new TypeError("parseTests: inputs and outputs must be arrays of the same length");
      }
      const cases = o.outputs.map((out, i) => ({
        input: inputs.length === 0 ? "" : text(inputs[i], `inputs[${i}]`),
        output: text(out, `outputs[${i}]`),
      }));
      return cases.length === 0 ? null : cases;
    }
    return [oneCase(value, "tests")];
  }
  throw new TypeError(`parseTests: unsupported tests field of type ${typeof value}`);
}
