/**
 * The held-out evaluation of a training run: pass@1 and pass@k of the policy as it is on the
 * run's held-out problems (episode success with an environment), with the first completion of
 * each of the first problems logged as held-out samples, and the `eval.jsonl` record of a result.
 *
 * Design decision: the logged problems are the same at every evaluation (the first
 * `trainer.samplesCount`), so a report shows one problem's completion before and after training.
 *
 * @module
 */

import type { Task, TaskRow } from "@rlvr/rewards";
import type { Environment } from "@rlvr/rewards/env";
import type { Config } from "../config/types.ts";
import { samplingParams } from "../config/mapping.ts";
import { evaluateEpisodes } from "./episode.ts";
import { type EvalResult, type EvalSample, evaluate } from "./eval.ts";
import type { Learner } from "./learner.ts";
import { episodeIo, renderPrompt } from "./prompt.ts";
import type { RewardSet } from "./reward_set.ts";
import { type EvalLine, type RunSink, sampleImages } from "./run_sink.ts";

/** The `rewards:` total at which a held-out sample of a dataset without answers counts as solved. */
const SOLVED_REWARD = 1;

/**
 * For rows without a reference answer: a sample solves its row when the `rewards:` total is at
 * least {@link SOLVED_REWARD} (a 0/1 verifier's pass, e.g. code tests all passing); a sample no
 * reward scored does not.
 */
function solvedByRewards(rewards: RewardSet) {
  return async (
    rows: readonly TaskRow[],
    prompts: readonly string[],
    completions: readonly string[],
  ): Promise<number[]> => {
    const { totals } = await rewards.score(
      rows.map((row, i) => ({ row, prompt: prompts[i]!, completion: completions[i]! })),
    );
    return totals.map((t) => (t !== null && t >= SOLVED_REWARD ? 1 : 0));
  };
}

/** What {@link heldOutEvaluator} evaluates on and scores with. */
export interface HeldOutJob {
  /** The task (its verifier scores completions). */
  task: Task<TaskRow>;
  /** A multi-turn environment (episodes are evaluated), or null. */
  env: Environment | null;
  /** The `rewards:` of a dataset without answers (they decide what is solved), or null. */
  rewards: RewardSet | null;
}

/**
 * Evaluates the policy as it is on `held` (episode success with an environment); with sample
 * logging on (`trainer.samplesEvery` > 0) the first completion of each of the first
 * `trainer.samplesCount` problems goes to the sink's held-out samples with the step given.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import { heldOutEvaluator } from "./held_out.ts";
 * import { loadLearner } from "./learner.ts";
 * import { heldOutProblems } from "./problems.ts";
 * import { MemorySink } from "./run_sink.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * config.trainer.evalSamples = 2;
 * config.trainer.evalK = 2;
 * config.rollout.maxNewTokens = 4;
 * const learner = await loadLearner(config, null);
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const sink = new MemorySink();
 * const evaluate = heldOutEvaluator(config, learner, { task, env: null, rewards: null },
 *   heldOutProblems(task, 3), sink);
 * const result = await evaluate(0);
 * assert.equal(result.problems, 3);
 * assert.equal(sink.evalSamples.length, Math.min(3, config.trainer.samplesCount));
 * learner.dispose();
 * ```
 */
export function heldOutEvaluator(
  config: Config,
  learner: Learner,
  job: HeldOutJob,
  held: readonly TaskRow[],
  sink: RunSink,
): (step: number) => Promise<EvalResult> {
  const t = config.trainer;
  const { model, tokenizer } = learner;
  const options = {
    ...(config.task.data?.answerField === null && job.rewards !== null
      ? { solved: solvedByRewards(job.rewards) }
      : {}),
    samples: t.evalSamples,
    k: t.evalK,
    seed: t.seed,
    sampling: samplingParams(config),
    maxNewTokens: config.rollout.maxNewTokens,
    eosTokenIds: learner.init.eosTokenIds,
    vision: learner.vision,
    ...(config.rollout.decodeLoop === undefined ? {} : { decodeLoop: config.rollout.decodeLoop }),
  };
  const logged = t.samplesEvery > 0 ? Math.min(t.samplesCount, held.length) : 0;
  const rows = [...held];
  return async (step) => {
    if (job.env !== null) {
      return await evaluateEpisodes(model, tokenizer, job.env, rows, {
        ...options,
        ...episodeIo(tokenizer),
      });
    }
    const shown: EvalSample[] = [];
    const result = await evaluate(model, tokenizer, job.task, rows, {
      ...options,
      ...(logged > 0
        ? { onSample: (s: EvalSample) => s.problem < logged && s.sample === 0 && shown.push(s) }
        : {}),
    });
    for (const s of shown.sort((a, b) => a.problem - b.problem)) {
      const row = rows[s.problem]!;
      await sink.appendEvalSample({
        step,
        problem: s.problem,
        prompt: renderPrompt(tokenizer, row),
        completion: s.text,
        reward: s.reward,
        answer: row.answer,
        ...sampleImages(row),
      });
    }
    return result;
  };
}

/**
 * The `eval.jsonl` record of an evaluation after `step` steps.
 *
 * @example Usage
 * ```ts
 * import { evalRecord } from "./held_out.ts";
 * import assert from "node:assert/strict";
 * const r = evalRecord(5, {
 *   passAt1: 0.5, passAtK: 1, k: 4, n: 4, problems: 8, meanLength: 6, seconds: 0.1,
 * });
 * assert.deepEqual(r, {
 *   step: 5, "pass@1": 0.5, "pass@k": 1, k: 4, n: 4, problems: 8,
 *   "response_length/mean": 6, "time/eval_s": 0.1,
 * });
 * ```
 */
export function evalRecord(step: number, r: EvalResult): EvalLine {
  return {
    step,
    "pass@1": r.passAt1,
    "pass@k": r.passAtK,
    k: r.k,
    n: r.n,
    problems: r.problems,
    "response_length/mean": r.meanLength,
    "time/eval_s": r.seconds,
  };
}
