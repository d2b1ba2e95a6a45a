/**
 * Entry point of `deno task report <runDir>`: (re)builds `report.html` from a run directory's
 * files, during a run or after it.
 *
 * @module
 */

import { existsSync, statSync } from "node:fs";
import { writeReport } from "./report.ts";

/** The usage line. */
export const REPORT_USAGE =
  "usage: deno task report <runDir>   (writes <runDir>/report.html from its config and JSONL files)";

/**
 * Builds the report of the run directory in `args[0]`; returns the exit code (0 ok, 2 bad
 * arguments).
 *
 * @example Usage
 * ```ts
 * import { reportMain } from "./main.ts";
 * import assert from "node:assert/strict";
 * const err = console.error;
 * console.error = () => {};
 * try {
 *   assert.equal(await reportMain([]), 2);
 * } finally {
 *   console.error = err;
 * }
 * ```
 */
export async function reportMain(args: readonly string[]): Promise<number> {
  if (args.length !== 1 || args[0] === "--help" || args[0] === "-h") {
    console.error(REPORT_USAGE);
    return 2;
  }
  const dir = args[0]!;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    console.error(`report: ${dir} is not a directory; ${REPORT_USAGE}`);
    return 2;
  }
  const path = await writeReport(dir);
  console.log(`report: wrote ${path}`);
  return 0;
}

if (import.meta.main) Deno.exit(await reportMain(Deno.args));
