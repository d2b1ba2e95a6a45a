/**
 * `deno run -A apps/train/demo/vl_trace_stats.ts <samples.jsonl>...`: how faithful the counting
 * traces of `builtin:tiny-vl` and its trained checkpoints are. For the samples of a
 * `deno task eval --task count_shapes` run (its `samples.jsonl`), it rebuilds each problem's image
 * from the task (the row id holds its seed and index) and prints, per file: the share of right
 * answers, of samples whose every patch row is described right, of patch rows whose count is the
 * image's, of patch rows whose count is the number of targets the row's own description lists,
 * of samples whose answer is the sum of their own row counts, and of right answers whose every row
 * is described right and counted from that description (right for the trace's reasons).
 *
 * `--options <json>` gives the task's options (default: `grpo_vision`'s).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { type CountShapesOptions, countShapesTask } from "@rlvr/rewards/vision";
import { checkTrace, rowCountCredit } from "./vl_format.ts";

/** `grpo_vision`'s task options. */
export const GRPO_VISION_OPTIONS: CountShapesOptions = {
  size: 56,
  shapeSize: [8, 10],
  count: [3, 6],
  distractors: [6, 8],
  colors: 3,
  kinds: 3,
};

/** One sample of an eval's `samples.jsonl` (the fields read). */
export interface EvalSample {
  /** Row id, `count_shapes-<seed>-<index>`. */
  problem: string;
  /** The completion. */
  completion: string;
  /** Whether the verifier accepted its answer. */
  correct: boolean;
}

/** Shares (0 to 1) over a file's samples; see the module doc. */
export interface TraceStats {
  /** Samples read. */
  samples: number;
  /** Right answers. */
  correct: number;
  /** Samples with every patch row described right. */
  described: number;
  /** Patch rows whose count is the image's. */
  rowsRight: number;
  /** Patch rows whose count is the number of targets its own description lists. */
  rowsFollow: number;
  /** Samples whose answer is the sum of their own row counts. */
  sumFollows: number;
  /** Of the right answers: every row described right and counted from its description. */
  faithfulRight: number;
}

/**
 * The first four patch rows' counts a completion writes: the `:count=` of a rows trace, or in a
 * running trace (no `:`) each row's total less the row before's.
 */
function rowCounts(completion: string): number[] {
  if (completion.includes(":")) {
    return [...completion.matchAll(/:(\d+)=/g)].slice(0, 4).map((x) => Number(x[1]));
  }
  const totals = [...completion.matchAll(/=(\d+)/g)].slice(0, 4).map((x) => Number(x[1]));
  return totals.map((t, i) => t - (i === 0 ? 0 : totals[i - 1]!));
}

/**
 * The {@link TraceStats} of a list of samples.
 *
 * @param samples The samples of one eval.
 * @param options The task's options.
 * @returns The shares.
 *
 * @example Usage
 * ```ts
 * import { GRPO_VISION_OPTIONS, traceStats } from "./vl_trace_stats.ts";
 * import { vlCompletion } from "./vl_format.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import { seededRng } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = countShapesTask(GRPO_VISION_OPTIONS).row(7, 0);
 * const completion = vlCompletion(row, [1, 4, 4], seededRng(0), { slipRate: 0 })!;
 * const s = traceStats([{ problem: row.id, completion, correct: true }], GRPO_VISION_OPTIONS);
 * assert.deepEqual(
 *   [s.correct, s.described, s.rowsRight, s.rowsFollow, s.sumFollows, s.faithfulRight],
 *   [1, 1, 1, 1, 1, 1],
 * );
 * ```
 */
export function traceStats(
  samples: readonly EvalSample[],
  options: CountShapesOptions,
): TraceStats {
  const task = countShapesTask(options);
  let correct = 0, described = 0, rowsRight = 0, rowsFollow = 0, sumFollows = 0, faithful = 0;
  for (const [i, s] of samples.entries()) {
    const m = /^count_shapes-(\d+)-(\d+)$/.exec(s.problem);
    if (m === null) {
      throw new RangeError(
        `vl_trace_stats: sample ${i}'s problem must be a count_shapes row id ` +
          `(count_shapes-<seed>-<index>), got ${JSON.stringify(s.problem)}`,
      );
    }
    const row = task.row(Number(m[1]), Number(m[2]));
    const t = checkTrace(row, [1, 4, 4], s.completion)!;
    const counts = rowCounts(s.completion);
    const answer = /<answer>(\d+)<\/answer>/.exec(s.completion)?.[1];
    if (s.correct) correct++;
    if (t.described) described++;
    rowsRight += 4 * (rowCountCredit(row, [1, 4, 4], s.completion) ?? 0);
    rowsFollow += t.countsRight;
    if (answer !== undefined && counts.reduce((a, b) => a + b, 0) === Number(answer)) sumFollows++;
    if (s.correct && t.described && t.countsRight === 4) faithful++;
  }
  const n = samples.length;
  return {
    samples: n,
    correct: correct / n,
    described: described / n,
    rowsRight: rowsRight / (4 * n),
    rowsFollow: rowsFollow / (4 * n),
    sumFollows: sumFollows / n,
    faithfulRight: correct === 0 ? 0 : faithful / correct,
  };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { options: { type: "string" } },
  });
  if (positionals.length === 0) {
    console.error(
      "usage: deno run -A apps/train/demo/vl_trace_stats.ts [--options <json>] <samples.jsonl>...",
    );
    Deno.exit(2);
  }
  const options = values.options === undefined
    ? GRPO_VISION_OPTIONS
    : JSON.parse(values.options) as CountShapesOptions;
  const pct = (x: number) => (100 * x).toFixed(1);
  console.log(
    "| samples | n | answer right % | every row described % | row counts right % | " +
      "row counts follow the description % | answer = sum of its row counts % | " +
      "right answers described and counted from it % |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const file of positionals) {
    const samples = (await Deno.readTextFile(file)).trim().split("\n")
      .map((l) => JSON.parse(l) as EvalSample);
    const s = traceStats(samples, options);
    console.log(
      `| ${file} | ${s.samples} | ${pct(s.correct)} | ${pct(s.described)} | ${
        pct(s.rowsRight)
      } | ` +
        `${pct(s.rowsFollow)} | ${pct(s.sumFollows)} | ${pct(s.faithfulRight)} |`,
    );
  }
}
