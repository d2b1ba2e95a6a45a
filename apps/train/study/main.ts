/**
 * `deno task study`: `--list` prints the studies with their claims; `<name> [--quick]
 * [--seeds N] [--out DIR] [--concurrency N]` runs one (see `study.ts`).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { STUDIES } from "./studies.ts";
import { runStudy } from "./study.ts";

/** The usage text. */
export const STUDY_USAGE = `deno task study --list
deno task study <name> [--quick] [--seeds N] [--out DIR] [--concurrency N]

  --list            the studies, each with its claim and source
  --quick           smoke-test sizes (one step, tiny batches): checks the pipeline, not the claim
  --seeds N         seeds 0..N-1 per arm (default 3, at least 2)
  --out DIR         parent folder (default runs/studies); the study writes DIR/<name>/
  --concurrency N   training runs at a time (default 2)`;

/**
 * Runs the command line `args`; returns the exit code.
 *
 * @example Usage
 * ```ts
 * import { studyMain } from "./main.ts";
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * assert.equal(await studyMain(["--list"], (l) => lines.push(l)), 0);
 * assert.ok(lines.some((l) => l.startsWith("clip-higher")));
 * assert.equal(await studyMain(["nope"], () => {}), 2);
 * ```
 */
export async function studyMain(
  args: readonly string[],
  log: (line: string) => void = console.log,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        list: { type: "boolean" },
        quick: { type: "boolean" },
        seeds: { type: "string" },
        out: { type: "string" },
        concurrency: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    log(`study: ${(e as Error).message}\n${STUDY_USAGE}`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) {
    log(STUDY_USAGE);
    return 0;
  }
  if (v.list) {
    for (const s of STUDIES) log(`${s.name.padEnd(18)} ${s.claim}\n${"".padEnd(18)} ${s.source}`);
    return 0;
  }
  const name = parsed.positionals[0];
  if (name === undefined || parsed.positionals.length > 1) {
    log(`study: give one study name (deno task study --list shows them)\n${STUDY_USAGE}`);
    return 2;
  }
  if (!STUDIES.some((s) => s.name === name)) {
    log(`study: unknown study "${name}"; use one of ${STUDIES.map((s) => s.name).join(", ")}`);
    return 2;
  }
  const int = (flag: string, value: string | undefined, min: number, max: number) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new RangeError(
        `study: --${flag} must be an integer from ${min} to ${max}, got ${value}`,
      );
    }
    return n;
  };
  try {
    const seeds = int("seeds", v.seeds, 2, 32);
    const concurrency = int("concurrency", v.concurrency, 1, 16);
    await runStudy(name, {
      quick: v.quick ?? false,
      ...(seeds !== undefined ? { seeds } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(v.out !== undefined ? { out: v.out } : {}),
      log,
    });
  } catch (e) {
    log(`study: ${(e as Error).message}`);
    return 1;
  }
  return 0;
}

if (import.meta.main) Deno.exit(await studyMain(Deno.args));
