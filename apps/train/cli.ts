/**
 * The `deno task train` command line: `--config`, `--set` (repeatable) and bare `key=value`
 * overrides, `--model`, `--data`, `--reward` (repeatable), `--device`, `--seed`, `--steps`,
 * `--out`, `--resume <runDir>`, `--help`.
 *
 * Design decisions:
 * - Parsing only turns the arguments into {@link LoadOptions}; every value is checked by the
 *   config loader, so a flag and the `--set` it stands for (`--seed 3` and
 *   `--set trainer.seed=3`) give the same error for the same bad value.
 * - A bare `key=value` argument (Hydra's form, as veRL and TRL users type it:
 *   `deno task train algorithm.estimator=rloo trainer.steps=5`) is a `--set`: the same parsing,
 *   and one list in command-line order, so the later of `--set a=1 a=2` wins. Any other bare
 *   argument is an error naming it (a recipe is `--config <name>`).
 * - The usage text lists the recipes found in `recipes/` with the first line of each file's
 *   header, so it cannot drift from the files.
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
 * import { usage } from "./cli.ts";
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
  deno task train [--config <recipe>] [key=value ...] [--set key=value ...] [flags]
  deno task train --resume runs/<name> [--steps N] [--device D]
  deno task report runs/<name>

Options:
  --config <recipe>     a recipe name from apps/train/recipes/ or a path to a YAML file
                        (default: ${DEFAULT_RECIPE})
  key=value             override one config key, dotted, value parsed as YAML; repeatable,
  --set <key=value>     bare or after --set, applied in command-line order (e.g.
                        optimizer.lr=1e-4 --set rollout.groupSize=8). veRL and TRL names are
                        accepted and translated with a note (data.train_batch_size=16,
                        actor_rollout_ref.rollout.n=8, num_generations=8, beta=0.04; the table
                        is in apps/train/README.md#config)
  --model <folder>      model.checkpoint: a Hugging Face checkpoint folder (config.json,
                        *.safetensors, tokenizer.json; its chat template formats the prompts)
  --data <file>         task.data.path: train on a .jsonl, .ndjson or .parquet file instead of
                        task.name (format from the extension); map its fields with --set
                        task.data.promptField=question (default prompt), answerField (default
                        answer), template ("Q: {{question}}"), testFraction (default 0.1)
  --reward <file[#fn]>  add { path: file#fn, weight: 1 } to the rewards list (fn: the export,
                        default "default"); repeatable; adds to the recipe's rewards, where
                        --set 'rewards=[...]' replaces them
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
 * Parses the arguments of `deno task train`. Bare `key=value` arguments join the `--set`
 * overrides in command-line order. Throws a {@link CliError} for an unknown flag, a flag
 * without its value or a bare argument without `=`.
 *
 * @example Usage
 * ```ts
 * import { parseCli } from "./cli.ts";
 * import assert from "node:assert/strict";
 * const cmd = parseCli(["--config", "dapo", "trainer.steps=5", "--set", "optimizer.lr=1e-4", "--seed", "3"]);
 * assert.deepEqual(cmd, {
 *   kind: "run",
 *   options: { config: "dapo", set: ["trainer.steps=5", "optimizer.lr=1e-4"], seed: "3" },
 * });
 * assert.deepEqual(parseCli(["--help"]), { kind: "help" });
 * assert.throws(() => parseCli(["--bogus"]), /Unknown option '--bogus'/);
 * assert.throws(() => parseCli(["dapo"]), /unexpected argument "dapo"/);
 * ```
 */
export function parseCli(args: readonly string[]): CliCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      tokens: true,
      options: {
        config: { type: "string" },
        set: { type: "string", multiple: true },
        model: { type: "string" },
        data: { type: "string" },
        reward: { type: "string", multiple: true },
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
  // `--set` values and bare `key=value` arguments, in command-line order.
  const set: string[] = [];
  for (const token of parsed.tokens) {
    if (token.kind === "option" && token.name === "set" && token.value !== undefined) {
      set.push(token.value);
    } else if (token.kind === "positional") {
      if (!token.value.includes("=")) {
        throw new CliError(
          `train: unexpected argument ${
            JSON.stringify(token.value)
          }: overrides are key=value (e.g. trainer.steps=5) and a recipe is --config <name>; run with --help for the options`,
        );
      }
      set.push(token.value);
    }
  }
  const options: LoadOptions = {};
  if (v.config !== undefined) options.config = v.config;
  if (set.length > 0) options.set = set;
  if (v.model !== undefined) options.model = v.model;
  if (v.data !== undefined) options.data = v.data;
  if (v.reward !== undefined) options.reward = v.reward;
  if (v.device !== undefined) options.device = v.device;
  if (v.seed !== undefined) options.seed = v.seed;
  if (v.steps !== undefined) options.steps = v.steps;
  if (v.out !== undefined) options.out = v.out;
  if (v.resume !== undefined) options.resume = v.resume;
  return { kind: "run", options };
}
