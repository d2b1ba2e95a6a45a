/**
 * Entry point of `deno task train`.
 *
 * It parses the command line, assembles and validates the config (a bad config exits 2 with one
 * line per problem, before anything is loaded), prints a `note: ...` line on stderr for each
 * veRL/TRL key it translated (`config/aliases.ts`), prints the resolved config and runs the
 * training loop (`loop/run.ts`): held-out evaluation before, the steps, evaluation after, the
 * report and the summary. Exit codes: 0 done, 1 the run failed (its error message on stderr;
 * `RLVR_DEBUG=1` adds the stack), 2 bad arguments or config, 130 stopped by Ctrl-C after saving a
 * checkpoint. The loop is imported only after the config is valid, so a bad
 * config still fails before the model packages load.
 *
 * @module
 */

import { CliError, parseCli, usage } from "./cli.ts";
import { ConfigError } from "./config/errors.ts";
import { configToYaml, loadConfig } from "./config/load.ts";
import { RunLockedError } from "./run/run_lock.ts";

/**
 * Runs `deno task train` with `args`; returns the exit code (0 ok, 1 the run failed, 2 bad
 * arguments or config, 130 interrupted by Ctrl-C after a checkpoint).
 *
 * @example Usage
 * ```ts
 * import { main } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const log = console.log;
 * console.log = () => {};
 * try {
 *   assert.equal(await main(["--help"]), 0);
 * } finally {
 *   console.log = log;
 * }
 * ```
 */
export async function main(args: string[]): Promise<number> {
  let command;
  try {
    command = parseCli(args);
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    console.error(e.message);
    return 2;
  }
  if (command.kind === "help") {
    console.log(usage());
    return 0;
  }
  let loaded;
  try {
    loaded = await loadConfig(command.options);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(e.message);
    return 2;
  }
  const { config, recipe, resume } = loaded;
  for (const line of loaded.notices) console.error(line);
  const origin = resume !== null ? `resuming ${resume}` : `recipe ${recipe}`;
  console.log(`# resolved config (${origin})\n${configToYaml(config)}`);
  // The CLI is train() with a config resolved from flags (the same path as the typed API).
  const { train } = await import("./train.ts");
  try {
    const result = await train({ resolved: loaded, handleSignals: true });
    return result.interrupted ? 130 : 0;
  } catch (e) {
    // A problem found once the run starts (a dataset without usable rows, a checkpoint that does
    // not load, no WebGPU adapter for --device webgpu) is the user's to fix: its message names
    // the file, field and fix, so print that line, not a stack trace (RLVR_DEBUG=1 shows it).
    if (!(e instanceof Error)) throw e;
    console.error(`train: ${e.message.replace(/^train: /, "")}`);
    // Another process took the run's lock after loadConfig's check: a usage error, as there.
    if (e instanceof RunLockedError) return 2;
    if (Deno.env.get("RLVR_DEBUG") === "1" && e.stack !== undefined) console.error(e.stack);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
