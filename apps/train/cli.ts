/**
 * The `deno task train` command line: `--config`, `--set` (repeatable), `--model`, `--data`,
 * `--device`, `--seed`, `--steps`, `--out`, `--resume <runDir>`, `--help`.
 *
 * Design decision: parsing only turns the arguments into {@link LoadOptions}; every value is
 * checked by the config loader, so a flag and the `--set` it stands for (`--seed 3` and
 * `--set trainer.seed=3`) give the same error for the same bad value. The usage text lists the
 * recipes found in `recipes/` with the first line of each file's header, so it cannot drift
 * from the files.
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_RECIPE, listRecipes, type LoadOptions, RECIPES_DIR } from "./config/load.ts";

/** A command-line error (unknown flag, missing value, stray argument). */
export class CliError extends Error {
  /** Builds the error; the message names the argument. */
  constructor(message: string) {
    super(message);
    this.name = "CliError";
  }
}

/** What the command line asks for. */
export type CliCommand =
  | { kind: "help" }
  | { kind: "run"; options: LoadOptions };

function recipeSummary(recipesDir: string, name: string): string {
  try {
    const text = readFileSync(join(recipesDir, `${name}.yaml`), "utf8");
    const first = /^#\s*(.+)$/m.exec(text)?.[1] ?? "";
    return first.trim();
  } catch {
    return "";
  }
}

/**
 * The usage text, listing the recipes of `recipesDir` with the first header line of each.
 *
 * @example Usage
 * ```ts
 * import { usage } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const text = usage();
 * assert.match(text, /--set <key=value>/);
 * assert.match(text, /\n {2}dapo +DAPO/);
 * ```
 */
export function usage(recipesDir: string = RECIPES_DIR): string {
  const names = listRecipes(recipesDir);
  const width = Math.max(0, ...names.map((n) => n.length));
  const recipes = names.map((n) => `  ${n.padEnd(width)}  ${recipeSummary(recipesDir, n)}`);
  return `rlvr train - reinforcement learning with verifiable rewards

Usage:
  deno task train [--config <recipe>] [--set key=value ...] [flags]
  deno task train --resume runs/<name> [--steps N] [--device D]
  deno task report runs/<name>

Options:
  --config <recipe>     a recipe name from apps/train/recipes/ or a path to a YAML file
                        (default: ${DEFAULT_RECIPE})
  --set <key=value>     override one config key, dotted, value parsed as YAML; repeatable
                        (e.g. --set optimizer.lr=1e-4 --set rollout.groupSize=8)
  --model <folder>      model.checkpoint: a Hugging Face checkpoint folder (config.json,
                        *.safetensors, tokenizer.json; its chat template formats the prompts)
  --data <file>         task.data.path: train on a .jsonl, .ndjson or .parquet file instead of
                        task.name (format from the extension); map its fields with --set
                        task.data.promptField=question (default prompt), answerField (default
                        answer), template ("Q: {{question}}"), testFraction (default 0.1)
  --device <d>          trainer.device: auto, cpu or webgpu
  --seed <n>            trainer.seed
  --steps <n>           trainer.steps
  --out <dir>           output.dir, where runs/<name>/ is created (default: runs)
  --resume <runDir>     continue a run from its latest complete checkpoint, with its own
                        config.yaml (only --steps and --device may change)
  -h, --help            print this message

Recipes:
${recipes.join("\n")}`;
}

/**
 * Parses the arguments of `deno task train`. Throws a {@link CliError} for an unknown flag, a
 * flag without its value or a positional argument.
 *
 * @example Usage
 * ```ts
 * import { parseCli } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const cmd = parseCli(["--config", "dapo", "--set", "trainer.steps=5", "--set", "optimizer.lr=1e-4", "--seed", "3"]);
 * assert.deepEqual(cmd, {
 *   kind: "run",
 *   options: { config: "dapo", set: ["trainer.steps=5", "optimizer.lr=1e-4"], seed: "3" },
 * });
 * assert.deepEqual(parseCli(["--help"]), { kind: "help" });
 * assert.throws(() => parseCli(["--bogus"]), /Unknown option '--bogus'/);
 * ```
 */
export function parseCli(args: readonly string[]): CliCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: false,
      strict: true,
      options: {
        config: { type: "string" },
        set: { type: "string", multiple: true },
        model: { type: "string" },
        data: { type: "string" },
        device: { type: "string" },
        seed: { type: "string" },
        steps: { type: "string" },
        out: { type: "string" },
        resume: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new CliError(`train: ${(e as Error).message}; run with --help for the options`);
  }
  const v = parsed.values;
  if (v.help) return { kind: "help" };
  const options: LoadOptions = {};
  if (v.config !== undefined) options.config = v.config;
  if (v.set !== undefined) options.set = v.set;
  if (v.model !== undefined) options.model = v.model;
  if (v.data !== undefined) options.data = v.data;
  if (v.device !== undefined) options.device = v.device;
  if (v.seed !== undefined) options.seed = v.seed;
  if (v.steps !== undefined) options.steps = v.steps;
  if (v.out !== undefined) options.out = v.out;
  if (v.resume !== undefined) options.resume = v.resume;
  return { kind: "run", options };
}
