/**
 * One step's rollout: prompts from the training stream, a group of sampled completions per
 * prompt (one batched, KV-cached `generate` call per round, with the sampler's log-probs), and
 * their verifiable rewards; with DAPO's dynamic sampling, groups whose rewards are all equal are
 * dropped and more rounds are sampled until the batch is full.
 *
 * Design decisions: every draw is keyed by `(seed, step, sequence, position)` with
 * `sequence = (round · promptsPerRound + prompt) · groupSize + sample` (with DARS budgets,
 * `groupSize` is the largest group allowed, `slotSize`), so a step's rollout is
 * a pure function of the seed, the step and the data position (what resume relies on). When
 * dynamic sampling runs out of rounds, the batch is the kept groups only (possibly fewer than
 * `batchSize`, or none: the step then skips the update), never padded with zero-signal groups.
 * The reward is the task verifier's 0/1, plus `task.formatWeight` times the `<think>/<answer>`
 * format reward of `@rlvr/rewards` (`checkFormat`, strict mode: the whole completion is one
 * `<think>…</think>` block then one non-empty `<answer>…</answer>` block; when the rendered prompt
 * already ends with `<think>`, as R1-style chat templates do, the completion is checked as
 * continuing it), plus, when enabled, DAPO's overlong penalty scaled by
 * `algorithm.overlong.penalty`. A format weight of 0 skips the format check entirely, so the
 * reward is then exactly what it was without the term. Prompts are written in the tokenizer's
 * format (`prompt.ts`: compact for the char-level demo model, the chat template for an instruct
 * checkpoint), and the logged prompt is that text.
 *
 * @module
 */

import { type CausalLM, generate, type SamplingParams, type Tokenizer } from "@rlvr/policy";
import { checkFormat, dapoOverlongPenalty, type Task, type TaskRow } from "@rlvr/rewards";
import { completionReward } from "../demo/format.ts";
import { promptFormat, promptIds, renderPrompt } from "./prompt.ts";

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
  /** The prompt text, as the policy saw it (for a chat model, the rendered template). */
  prompt: string;
  /** The total reward. */
  reward: number;
  /** The verifier's reward alone (0 or 1). */
  correct: number;
  /** The format reward alone (1 when the completion has the `<think>/<answer>` layout), or null when `formatWeight` is 0. */
  format: number | null;
  /**
   * Multi-turn episodes only: per completion token, 1 for the policy's tokens and 0 for the
   * environment's (observations), which stay out of the loss. Absent: every token counts.
   */
  lossMask?: number[];
  /**
   * ReMax only (`greedyBaseline`): the reward of the greedy completion of the same prompt, the
   * baseline its advantage subtracts.
   */
  baselineReward?: number;
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
  /** Weight of the `<think>/<answer>` format reward (`task.formatWeight`, >= 0; default 0 = off). */
  formatWeight?: number;
  /** Token ids that end a completion (default: the tokenizer's EOS; see `stopTokenIds`). */
  eosTokenIds?: readonly number[];
  /**
   * Also decode each prompt greedily and give every sample of it that completion's reward as
   * `baselineReward` (ReMax's baseline; default false).
   */
  greedyBaseline?: boolean;
  /**
   * Samples per prompt of a round (DARS budgets; each >= 1, summing to `prompts × groupSize`);
   * default `groupSize` each. Draw keys then use `slotSize` samples per prompt.
   */
  groupSizes?: (rows: readonly TaskRow[]) => number[];
  /** The most samples a prompt may get (the draw keys' per-prompt stride; default `groupSize`). */
  slotSize?: number;
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

/** What {@link rolloutReward} needs besides the completion. */
export interface RewardOptions {
  /** Weight of the `<think>/<answer>` format reward (0 = off: not even checked). */
  formatWeight: number;
  /** The prompt already opened `<think>` (the completion continues inside it). */
  thinkInPrompt: boolean;
  /** The generation limit (for the overlong penalty). */
  maxNewTokens: number;
  /** Overlong shaping: buffer and penalty, or null (off). */
  overlong: { buffer: number; penalty: number } | null;
}

/** The reward of one completion and its parts. */
export interface RewardParts {
  /** verifier + formatWeight · format + overlong penalty. */
  reward: number;
  /** The verifier's 0/1. */
  correct: number;
  /** The format reward's 0/1, or null when `formatWeight` is 0. */
  format: number | null;
}

/**
 * The reward of one completion of `length` tokens (see the module doc): the verifier's 0/1,
 * plus `formatWeight` times the strict `<think>/<answer>` format reward, plus the overlong
 * penalty; the terms are added in that order, and a zero weight adds nothing.
 *
 * @example Usage
 * ```ts
 * import { rolloutReward } from "@rlvr/train";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: 1, chainLength: 1 });
 * const row = task.row(0, 0);
 * const opts = { formatWeight: 0.5, thinkInPrompt: false, maxNewTokens: 64, overlong: null };
 * const tagged = `<think>easy</think><answer>${row.answer}</answer>`;
 * assert.deepEqual(rolloutReward(task, row, tagged, 10, opts), { reward: 1.5, correct: 1, format: 1 });
 * assert.deepEqual(rolloutReward(task, row, row.answer, 2, opts), { reward: 1, correct: 1, format: 0 });
 * ```
 */
export function rolloutReward<R extends TaskRow>(
  task: Task<R>,
  row: R,
  text: string,
  length: number,
  opts: RewardOptions,
): RewardParts {
  const correct = completionReward(task, row, text);
  let reward = correct;
  let format: number | null = null;
  if (opts.formatWeight > 0) {
    format = checkFormat(text, { mode: "strict", thinkInPrompt: opts.thinkInPrompt }) ? 1 : 0;
    reward += opts.formatWeight * format;
  }
  if (opts.overlong !== null && opts.overlong.buffer > 0) {
    reward += opts.overlong.penalty * dapoOverlongPenalty(length, {
      maxLength: opts.maxNewTokens,
      cacheLength: opts.overlong.buffer,
    });
  }
  return { reward, correct, format };
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
  stream: { take(count: number): R[] },
  opts: RolloutOptions,
): Promise<Rollout> {
  const started = performance.now();
  const { groupSize, batchSize } = opts;
  const prompts = batchSize / groupSize;
  const items: RolloutItem[] = [];
  let groupsSeen = 0;
  let groupCount = 0;
  let zeroStd = 0;
  let tokens = 0;
  let round = 0;
  const maxRounds = 1 + (opts.dynamicRetries ?? 0);
  const formatWeight = opts.formatWeight ?? 0;
  if (!(Number.isFinite(formatWeight) && formatWeight >= 0)) {
    throw new RangeError(
      `collectRollout: formatWeight must be a finite number >= 0, got ${formatWeight}; set task.formatWeight to 0 (off) or more`,
    );
  }
  const format = promptFormat(tokenizer);
  for (; round < maxRounds && items.length < batchSize; round++) {
    const rows = stream.take(prompts);
    const texts = rows.map((row) => renderPrompt(tokenizer, row, format));
    const ids = rows.map((row) => promptIds(tokenizer, row, format));
    const sizes = opts.groupSizes?.(rows) ?? rows.map(() => groupSize);
    const slot = opts.slotSize ?? groupSize;
    const firsts = sizes.map((_, p) => sizes.slice(0, p).reduce((a, b) => a + b, 0));
    const { sequences } = await generate(
      model,
      rows.flatMap((_, p) => Array.from({ length: sizes[p]! }, () => ids[p]!)),
      {
        maxNewTokens: opts.maxNewTokens,
        sampler: { ...opts.sampling, seed: opts.seed },
        step: opts.step,
        sequenceIds: rows.flatMap((_, p) =>
          Array.from({ length: sizes[p]! }, (_, s) => (round * prompts + p) * slot + s)
        ),
        tokenizer,
        ...(opts.eosTokenIds !== undefined ? { eosTokenIds: opts.eosTokenIds } : {}),
      },
    );
    // ReMax: one greedy completion per prompt, scored like the samples (argmax draws no random
    // numbers, so the sequence ids do not matter).
    const baselines = opts.greedyBaseline
      ? (await generate(model, ids, {
        maxNewTokens: opts.maxNewTokens,
        sampler: { ...opts.sampling, temperature: 0, seed: opts.seed },
        step: opts.step,
        sequenceIds: rows.map((_, p) => round * prompts + p),
        tokenizer,
        ...(opts.eosTokenIds !== undefined ? { eosTokenIds: opts.eosTokenIds } : {}),
      })).sequences.map((seq, p) => {
        tokens += seq.tokens.length;
        return rolloutReward(task, rows[p]!, seq.text ?? "", seq.tokens.length, {
          formatWeight,
          thinkInPrompt: texts[p]!.trimEnd().endsWith("<think>"),
          maxNewTokens: opts.maxNewTokens,
          overlong: opts.overlong,
        }).reward;
      })
      : null;
    for (let p = 0; p < rows.length; p++) {
      const row = rows[p]!;
      const thinkInPrompt = texts[p]!.trimEnd().endsWith("<think>");
      const group: RolloutItem[] = [];
      for (let s = 0; s < sizes[p]!; s++) {
        const seq = sequences[firsts[p]! + s]!;
        tokens += seq.tokens.length;
        const text = seq.text ?? "";
        const { reward, correct, format: formatOk } = rolloutReward(
          task,
          row,
          text,
          seq.tokens.length,
          { formatWeight, thinkInPrompt, maxNewTokens: opts.maxNewTokens, overlong: opts.overlong },
        );
        group.push({
          row,
          group: 0,
          promptIds: ids[p]!,
          completionIds: seq.tokens,
          samplerLogprobs: seq.scaledLogprobs,
          text,
          prompt: texts[p]!,
          reward,
          correct,
          format: formatOk,
          ...(baselines !== null ? { baselineReward: baselines[p]! } : {}),
        });
      }
      groupsSeen++;
      const flat = group.length > 1 && std(group.map((g) => g.reward)) === 0;
      if (flat) zeroStd++;
      if (opts.dynamicRetries !== null && flat) continue;
      if (items.length >= batchSize) continue;
      const index = groupCount++;
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
