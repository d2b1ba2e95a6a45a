/**
 * `deno task eval [checkpoint]`: held-out pass@1 and pass@k of a policy on the default task,
 * with the evaluation `deno task train` runs before training (64 problems, 8 samples,
 * temperature 1, seed 0) unless flags say otherwise. Used to check that `deno task pretrain`
 * reproduces the shipped checkpoint's quality: `deno task eval apps/train/checkpoints/tiny`
 * against `deno task eval <the new folder>`.
 *
 * Design decision: the default task and the held-out set come from the same functions the
 * training loop uses (`defaultTask`, `heldOutProblems`), so the numbers are comparable with the
 * `held-out before training` line of `deno task train`.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { defaultTask } from "../demo/pretrain.ts";
import { type EvalResult, evaluate } from "./eval.ts";
import { loadPolicy } from "./policy.ts";
import { heldOutProblems } from "./problems.ts";

/** Usage of `deno task eval`. */
export const EVAL_USAGE =
  `Usage: deno task eval [checkpoint] [--problems N] [--samples N] [--k N] [--seed N]
  checkpoint   builtin:tiny (default) or a checkpoint folder (e.g. runs/grpo/checkpoints/step-600)
  --problems   held-out problems (default 64)
  --samples    samples per problem, n (default 8)
  --k          k of pass@k (default: n)
  --seed       sampler seed (default 0)`;

/**
 * Runs `deno task eval` with `args`; prints one line and returns the result (null on a usage
 * error, which is printed).
 *
 * @example Usage
 * ```ts
 * import { evalMain } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const r = await evalMain(["builtin:tiny", "--problems", "4", "--samples", "2"], () => {});
 * assert.equal(r!.n, 2);
 * assert.equal(await evalMain(["--bogus"], () => {}), null);
 * ```
 */
export async function evalMain(
  args: readonly string[],
  log: (line: string) => void = (line) => console.log(line),
): Promise<EvalResult | null> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        problems: { type: "string", default: "64" },
        samples: { type: "string", default: "8" },
        k: { type: "string" },
        seed: { type: "string", default: "0" },
      },
    });
  } catch (e) {
    log(`eval: ${(e as Error).message}\n${EVAL_USAGE}`);
    return null;
  }
  const v = parsed.values;
  const problems = Number(v.problems);
  const samples = Number(v.samples);
  const k = v.k === undefined ? samples : Number(v.k);
  const seed = Number(v.seed);
  const checkpoint = parsed.positionals[0] ?? "builtin:tiny";
  const task = defaultTask();
  const { model, tokenizer } = await loadPolicy(checkpoint);
  try {
    const r = await evaluate(model, tokenizer, task, heldOutProblems(task, problems), {
      samples,
      k,
      seed,
      sampling: { temperature: 1 },
      maxNewTokens: 8,
    });
    log(
      `eval ${checkpoint}: held-out pass@1 ${(100 * r.passAt1).toFixed(1)}%, pass@${r.k} ${
        (100 * r.passAtK).toFixed(1)
      }% (${r.problems} problems x ${r.n} samples, temperature 1, seed ${seed})`,
    );
    return r;
  } finally {
    model.dispose();
  }
}

if (import.meta.main) {
  const r = await evalMain(Deno.args);
  Deno.exit(r === null ? 2 : 0);
}
