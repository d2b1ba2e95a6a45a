/**
 * The procedural task contract: a seeded generator of rows with a verifier, a canonical key
 * for de-duplication and a reward; plus {@link defineTask} to build one and
 * {@link splitTrainTest} to draw disjoint splits.
 *
 * Design: row `i` of seed `s` is generated from its own random stream `seededRng(s, i)`, so a row
 * never depends on how many rows were drawn before it, and the same seed gives the same data
 * everywhere. A task's reward reads the final answer from the completion (`<answer>…</answer>`
 * or `\boxed{…}`, via `extractFinalAnswer`), scores 1 if the verifier accepts it and 0 otherwise, and
 * returns `null` (not applicable) on rows of another task (`row.task` differs), so several task
 * rewards can score one mixed batch. Verifiers check the answer against the problem (e.g. a
 * Countdown expression is evaluated, a Sudoku grid is checked against the rules and the givens),
 * not only against the stored answer string.
 *
 * @module
 */

import { checkFunction, checkName, checkNumber, checkOptions, show } from "../_check.ts";
import { defineReward } from "../define.ts";
import { extractFinalAnswer } from "../extract.ts";
import type { Reward, Row } from "../types.ts";
import { type Rng, seededRng } from "./rng.ts";

/** The fields every task row has. */
export interface TaskRow extends Row {
  /** Unique within a seed: `task-seed-index`. */
  id: string;
  /** The task's name (its reward applies only to rows with this name). */
  task: string;
  /** The rendered problem, asking for the final answer in `<answer>…</answer>`. */
  prompt: string;
  /** A reference answer the verifier accepts. */
  answer: string;
  /** A task-specific difficulty score (larger is harder; each task documents its formula). */
  difficulty: number;
}

/** A seeded procedural task. */
export interface Task<R extends TaskRow = TaskRow> {
  /** The task's name, also its reward's name and every row's `task`. */
  readonly name: string;
  /** Row `index` (integer >= 0) of the stream of `seed`. */
  row(seed: number, index: number): R;
  /** `count` rows of the stream of `seed`, starting at `start` (default 0). */
  rows(seed: number, count: number, start?: number): R[];
  /** Canonical key of a row's problem: equal keys mean the same problem. */
  key(row: R): string;
  /** True when `answer` (a bare final answer, already extracted) solves the row's problem. */
  verify(row: R, answer: string): boolean;
  /** 1 when the completion's extracted answer verifies, 0 otherwise, `null` on other tasks' rows. */
  readonly reward: Reward;
}

/** What {@link defineTask} needs. */
export interface TaskSpec<R extends TaskRow> {
  /** Task name (non-empty; used as the reward name and `row.task`). */
  name: string;
  /** Draws one problem from `rng`; `id` and `task` are added by the task. */
  generate(rng: Rng): Omit<R, "id" | "task">;
  /** Canonical key of a problem. */
  key(row: R): string;
  /** Checks a bare answer; must not throw on malformed answers (return false). */
  verify(row: R, answer: string): boolean;
}

/**
 * Builds a {@link Task} from a generator, a key and a verifier.
 *
 * @example Usage
 * ```ts
 * import { defineTask, scoreRewards, type TaskRow } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * interface DoubleRow extends TaskRow {
 *   n: number;
 * }
 * const double = defineTask<DoubleRow>({
 *   name: "double",
 *   generate(rng) {
 *     const n = rng.int(1, 99);
 *     return { n, prompt: `Double ${n}. Answer in <answer></answer>.`, answer: String(2 * n), difficulty: 1 };
 *   },
 *   key: (row) => String(row.n),
 *   verify: (row, answer) => answer.trim() === String(2 * row.n),
 * });
 * const row = double.row(0, 0);
 * assert.deepEqual(double.row(0, 0), row); // deterministic
 * const r = await scoreRewards([double.reward], [
 *   { prompt: row.prompt, completion: `<answer>${row.answer}</answer>`, row },
 * ]);
 * assert.deepEqual(r.totals, [1]);
 * ```
 */
export function defineTask<R extends TaskRow>(spec: TaskSpec<R>): Task<R> {
  const owner = "defineTask";
  const s = checkOptions<TaskSpec<R>>(owner, spec, "{name, generate, key, verify}");
  const name = checkName(owner, "spec.name", s.name);
  const generate = checkFunction<TaskSpec<R>["generate"]>(
    owner,
    "spec.generate",
    s.generate,
    "a function (rng) => row fields",
  );
  const key = checkFunction<TaskSpec<R>["key"]>(
    owner,
    "spec.key",
    s.key,
    "a function (row) => string",
  );
  const verify = checkFunction<TaskSpec<R>["verify"]>(
    owner,
    "spec.verify",
    s.verify,
    "a function (row, answer) => boolean",
  );
  const row = (seed: number, index: number): R => {
    checkNumber(name, "seed", seed, { integer: true });
    checkNumber(name, "index", index, { min: 0, integer: true });
    const fields = generate(seededRng(seed, index));
    return { id: `${name}-${seed}-${index}`, task: name, ...fields } as R;
  };
  const safeVerify = (r: R, answer: string): boolean => {
    if (typeof answer !== "string") return false;
    try {
      return verify(r, answer) === true;
    } catch {
      return false;
    }
  };
  const reward = defineReward(name, ({ completion, row: r }) => {
    if (r.task !== name) return null;
    const answer = extractFinalAnswer(completion);
    return answer !== null && safeVerify(r as R, answer) ? 1 : 0;
  });
  return Object.freeze({
    name,
    row,
    rows(seed: number, count: number, start = 0): R[] {
      checkNumber(name, "count", count, { min: 0, integer: true });
      checkNumber(name, "start", start, { min: 0, integer: true });
      return Array.from({ length: count }, (_, i) => row(seed, start + i));
    },
    key,
    verify: safeVerify,
    reward,
  });
}

/** Options of {@link splitTrainTest}. */
export interface SplitOptions {
  /** The seed of the row stream (integer). */
  seed: number;
  /** Rows in the training split (integer >= 0). */
  trainSize: number;
  /** Rows in the test split (integer >= 0). */
  testSize: number;
  /** Rows drawn at most before giving up (default `20·(trainSize + testSize) + 1000`). */
  maxDraws?: number;
}

/** A train/test split. */
export interface Split<R extends TaskRow> {
  /** Training rows. */
  train: R[];
  /** Test rows; no row here has the key of a training row. */
  test: R[];
}

/**
 * Draws disjoint train and test splits: rows of the seed's stream are taken in order, a row
 * whose canonical key was already taken is skipped, the first `testSize` distinct rows form the
 * test split and the next `trainSize` the training split. The splits never share a key (nor
 * does either repeat one), and the test split does not change when `trainSize` does. Throws a
 * RangeError when the task has too few distinct problems for the sizes asked.
 *
 * @example Usage
 * ```ts
 * import { arithmeticTask, splitTrainTest } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const { train, test } = splitTrainTest(task, { seed: 1, trainSize: 50, testSize: 10 });
 * assert.equal(train.length, 50);
 * const testKeys = new Set(test.map(task.key));
 * assert.ok(train.every((row) => !testKeys.has(task.key(row))));
 * ```
 */
export function splitTrainTest<R extends TaskRow>(task: Task<R>, options: SplitOptions): Split<R> {
  const owner = "splitTrainTest";
  if (
    typeof task !== "object" || task === null || typeof task.row !== "function" ||
    typeof task.key !== "function"
  ) {
    throw new TypeError(`${owner}: task must be a Task (e.g. arithmeticTask()), got ${show(task)}`);
  }
  const opts = checkOptions<SplitOptions>(owner, options, "{seed, trainSize, testSize, maxDraws?}");
  const seed = checkNumber(owner, "options.seed", opts.seed, { integer: true });
  const trainSize = checkNumber(owner, "options.trainSize", opts.trainSize, {
    min: 0,
    integer: true,
  });
  const testSize = checkNumber(owner, "options.testSize", opts.testSize, { min: 0, integer: true });
  const need = trainSize + testSize;
  const maxDraws = checkNumber(owner, "options.maxDraws", opts.maxDraws ?? 20 * need + 1000, {
    min: need,
    integer: true,
  });
  const seen = new Set<string>();
  const test: R[] = [];
  const train: R[] = [];
  let index = 0;
  for (; index < maxDraws && test.length + train.length < need; index++) {
    const row = task.row(seed, index);
    const k = task.key(row);
    if (seen.has(k)) continue;
    seen.add(k);
    (test.length < testSize ? test : train).push(row);
  }
  if (test.length + train.length < need) {
    throw new RangeError(
      `${owner}: found only ${seen.size} distinct "${task.name}" problems in ${index} draws but trainSize + testSize = ${need}; ` +
        `lower the sizes, raise the task's difficulty knobs (more distinct problems) or raise options.maxDraws`,
    );
  }
  return { train, test };
}
