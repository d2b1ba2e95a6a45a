/**
 * One step's rollout: prompts from the training stream, a group of sampled completions per
 * prompt (one batched, KV-cached `generate` call per round, with the sampler's log-probs), and
 * their verifiable rewards; with DAPO's dynamic sampling, groups whose rewards are all equal are
 * dropped and more rounds are sampled until the batch is full.
 *
 * Design decisions: every draw is keyed by `(seed, step, sequence, position)` with
 * `sequence = (round · promptsPerRound + prompt) · groupSize + sample`, so a step's rollout is
 * a pure function of the seed, the step and the data position (what resume relies on). When
 * dynamic sampling runs out of rounds, the batch is the kept groups only (possibly fewer than
 * `batchSize`, or none: the step then skips the update), never padded with zero-signal groups.
 * The reward is the task verifier's 0/1 plus, when enabled, DAPO's overlong penalty scaled by
 * `algorithm.overlong.penalty`.
 *
 * @module
 */

import { type CausalLM, generate, type SamplingParams, type Tokenizer } from "@rlvr/policy";
import { dapoOverlongPenalty, type Task, type TaskRow } from "@rlvr/rewards";
import { completionReward, promptText } from "../demo/format.ts";
import { promptIds } from "./eval.ts";
import type { TrainStream } from "./problems.ts";

/** One sampled completion. */
export interface RolloutItem {
  /** The problem. */
  row: TaskRow;
  /** Its group (index into the batch's groups). */
  group: number;
  /** Prompt token ids. */
  promptIds: number[];
  /** Completion token ids (including EOS when it ended with one). */
  completionIds: number[];
  /** The sampler's `log softmax(logits / T)` per completion token. */
  samplerLogprobs: number[];
  /** The decoded completion. */
  text: string;
  /** The prompt text. */
  prompt: string;
  /** The total reward. */
  reward: number;
  /** The verifier's reward alone (0 or 1). */
  correct: number;
}

/** Options of {@link collectRollout}. */
export interface RolloutOptions {
  /** The training step (the draw keys' step). */
  step: number;
  /** Sampler seed. */
  seed: number;
  /** Responses wanted. */
  batchSize: number;
  /** Responses per prompt. */
  groupSize: number;
  /** Generation limit. */
  maxNewTokens: number;
  /** Sampler parameters. */
  sampling: SamplingParams;
  /** Dynamic sampling (DAPO): extra rounds allowed, or null (off). */
  dynamicRetries: number | null;
  /** Overlong shaping: buffer and penalty, or null (off). */
  overlong: { buffer: number; penalty: number } | null;
}

/** What {@link collectRollout} returns. */
export interface Rollout {
  /** The batch, group by group. */
  items: RolloutItem[];
  /** Fraction of all sampled groups whose rewards were all equal. */
  fracZeroStdGroups: number;
  /** Generation rounds run. */
  rounds: number;
  /** Tokens generated over all rounds. */
  generatedTokens: number;
  /** Seconds. */
  seconds: number;
}

function std(xs: readonly number[]): number {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length);
}

/**
 * Samples a batch (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { collectRollout, heldOutProblems, loadPolicy, TrainStream } from "@rlvr/train";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * const stream = new TrainStream(task, 0, heldOutProblems(task, 8));
 * const r = await collectRollout(model, tokenizer, task, stream, {
 *   step: 1, seed: 0, batchSize: 8, groupSize: 4, maxNewTokens: 4,
 *   sampling: { temperature: 1 }, dynamicRetries: null, overlong: null,
 * });
 * assert.equal(r.items.length, 8);
 * assert.ok(r.items.every((it) => it.reward === 0 || it.reward === 1));
 * model.dispose();
 * ```
 */
export async function collectRollout<R extends TaskRow>(
  model: CausalLM,
  tokenizer: Tokenizer,
  task: Task<R>,
  stream: TrainStream<R>,
  opts: RolloutOptions,
): Promise<Rollout> {
  const started = performance.now();
  const { groupSize, batchSize } = opts;
  const prompts = batchSize / groupSize;
  const items: RolloutItem[] = [];
  let groupsSeen = 0;
  let zeroStd = 0;
  let tokens = 0;
  let round = 0;
  const maxRounds = 1 + (opts.dynamicRetries ?? 0);
  for (; round < maxRounds && items.length < batchSize; round++) {
    const rows = stream.take(prompts);
    const ids = rows.map((row) => promptIds(tokenizer, row));
    const { sequences } = await generate(
      model,
      rows.flatMap((_, p) => Array.from({ length: groupSize }, () => ids[p]!)),
      {
        maxNewTokens: opts.maxNewTokens,
        sampler: { ...opts.sampling, seed: opts.seed },
        step: opts.step,
        sequenceIds: rows.flatMap((_, p) =>
          Array.from({ length: groupSize }, (_, s) => (round * prompts + p) * groupSize + s)
        ),
        tokenizer,
      },
    );
    for (let p = 0; p < rows.length; p++) {
      const row = rows[p]!;
      const group: RolloutItem[] = [];
      for (let s = 0; s < groupSize; s++) {
        const seq = sequences[p * groupSize + s]!;
        tokens += seq.tokens.length;
        const text = seq.text ?? "";
        const correct = completionReward(task, row, text);
        let reward = correct;
        if (opts.overlong !== null && opts.overlong.buffer > 0) {
          reward += opts.overlong.penalty * dapoOverlongPenalty(seq.tokens.length, {
            maxLength: opts.maxNewTokens,
            cacheLength: opts.overlong.buffer,
          });
        }
        group.push({
          row,
          group: 0,
          promptIds: ids[p]!,
          completionIds: seq.tokens,
          samplerLogprobs: seq.scaledLogprobs,
          text,
          prompt: promptText(row),
          reward,
          correct,
        });
      }
      groupsSeen++;
      const flat = groupSize > 1 && std(group.map((g) => g.reward)) === 0;
      if (flat) zeroStd++;
      if (opts.dynamicRetries !== null && flat) continue;
      if (items.length >= batchSize) continue;
      const index = items.length / groupSize;
      for (const g of group) items.push({ ...g, group: index });
    }
  }
  return {
    items,
    fracZeroStdGroups: groupsSeen === 0 ? 0 : zeroStd / groupsSeen,
    rounds: round,
    generatedTokens: tokens,
    seconds: (performance.now() - started) / 1000,
  };
}
