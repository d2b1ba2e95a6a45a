/**
 * Entry point of `deno task train`.
 *
 * Until the training app lands (issue #8) this prints the planned usage, says plainly that no
 * training happens yet, and exits 0 so the README command works on a fresh machine.
 *
 * @module
 */

import { parseArgs } from "node:util";

const USAGE = `rlvr train - reinforcement learning with verifiable rewards

Usage:
  deno task train [--recipe <file.yaml>] [--help]

Options:
  --recipe <file>  a YAML recipe (default: the built-in demo recipe)
  --help           print this message

Status: not yet - the training loop lands with issue #8 (apps/train). The tensor core it builds on
(@rlvr/tensor: autograd, CPU backend, AdamW, safetensors) is available now; see README.md.`;

/** Parses the command line and prints the usage; returns the exit code. */
export function main(args: string[]): number {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { recipe: { type: "string" }, help: { type: "boolean" } },
    });
  } catch (e) {
    console.error(`train: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  console.log(USAGE);
  if (parsed.values.recipe !== undefined && !parsed.values.help) {
    console.log(`\n(recipe ${JSON.stringify(parsed.values.recipe)} noted; nothing to run yet)`);
  }
  return 0;
}

if (import.meta.main) Deno.exit(main(Deno.args));
