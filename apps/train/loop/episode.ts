/**
 * Multi-turn rollouts: a group of episodes per problem in an `@rlvr/rewards` environment, the
 * policy's turns sampled in batches with the KV-cached `generate`, the environment's
 * observations appended between them. The result is a list of {@link RolloutItem}s the trainer
 * takes as it takes single-turn ones, each with a `lossMask` that keeps the environment's tokens
 * out of the loss.
 *
 * Design decisions:
 * - **Token in, token out.** An episode's context is a list of token ids: the prompt's, then per
 *   turn the ids the sampler drew (kept as drawn, stop string and EOS included) and the ids of
 *   the observation. The policy's text is decoded only to hand it to the environment and is
 *   never encoded again, so the learner scores exactly the sampled tokens; only observations
 *   are tokenized, and they carry loss weight 0 (and log-prob 0 in `samplerLogprobs`).
 * - **Turns run in lockstep**: at turn t, every live episode of the batch is one row of one
 *   `generate` call (the whole context is re-read: the tiny models here need no cache across
 *   turns). Draws are keyed by `(seed, step, episode · maxTurns + turn, position)`, so a
 *   rollout is a pure function of the seed, the step and the rows, as in single-turn training.
 * - **A turn ends at EOS, a stop string of the environment or `maxNewTokens`; the episode ends
 *   when the environment says so** (a chat model ends every turn with its end-of-turn token).
 * - **The reward of an episode** is the environment's `finalReward()` plus the sum of its turn
 *   rewards; `correct` is `success()`. An episode ends when the environment says done, after
 *   `maxTurns` policy turns, or when the context would not fit `maxContextTokens` (the model's
 *   window): then the observation is cut to fit and the episode ends.
 *
 * @module
 */

import { type CausalLM, generate, type SamplingParams, type Tokenizer } from "@rlvr/policy";
import { seededRng, type TaskRow } from "@rlvr/rewards";
import type { Environment, Episode } from "@rlvr/rewards/env";
import { checkEvalSizes, EVAL_DRAW_STEP, type EvalResult, passRates } from "./eval.ts";
import type { RolloutItem } from "./rollout.ts";
import { withImageTokens } from "./prompt.ts";
import { forwardHookOf, type VisionInputs } from "./vision.ts";

/** One finished episode (a {@link RolloutItem} with its turns). */
export interface EpisodeItem extends RolloutItem {
  /** Per completion token: 1 for the policy's tokens, 0 for the environment's. */
  lossMask: number[];
  /** Policy turns taken. */
  turns: number;
  /** The environment's verdict on the episode. */
  success: boolean;
  /** Sum of the turn rewards (included in `reward`). */
  turnReward: number;
  /**
   * Per policy turn: the environment state it acted from (the observations so far, as a
   * canonical key, for turn-level credit such as GiGPO's anchor states), its reward if the
   * environment gave one, and the columns `[start, end)` of its tokens in `completionIds`.
   */
  turnSpans: TurnSpan[];
}

/** One policy turn of an episode (see {@link EpisodeItem.turnSpans}). */
export interface TurnSpan {
  /** The environment state the turn acted from: the episode's observations so far, JSON. */
  state: string;
  /** The turn's reward, when the environment gave one. */
  reward?: number;
  /** First column of the turn's tokens in the completion. */
  start: number;
  /** One past its last column. */
  end: number;
}

/** Options of {@link collectEpisodes}. */
export interface EpisodeOptions {
  /** The draw keys' step. */
  step: number;
  /** Sampler seed. */
  seed: number;
  /** Episodes per problem (a GRPO group). */
  groupSize: number;
  /** New tokens per policy turn. */
  maxNewTokens: number;
  /** Sampler parameters. */
  sampling: SamplingParams;
  /** Policy turns per episode (default: the environment's `maxTurns`). */
  maxTurns?: number;
  /** Token ids that end a turn (default: the tokenizer's EOS). */
  eosTokenIds?: readonly number[];
  /** The context window: prompt + all turns + observations (default: the model's positions). */
  maxContextTokens?: number;
  /** The prompt text of a row (default: the episode's own `prompt`). */
  render?: (episode: Episode, row: TaskRow) => string;
  /** Token ids of the rendered prompt (default `tokenizer.encode(text)`). */
  encode?: (text: string) => number[];
  /**
   * A vision-language policy's images: rows that carry images (a visual environment's) get
   * their image tokens expanded in the prompt, and every turn's forward pass their pixels.
   */
  vision?: VisionInputs | null;
}

/** What {@link collectEpisodes} returns. */
export interface EpisodeRollout {
  /** The episodes, group by group. */
  items: EpisodeItem[];
  /** Fraction of groups whose rewards were all equal. */
  fracZeroStdGroups: number;
  /** Tokens the policy generated. */
  generatedTokens: number;
  /** Mean policy turns per episode. */
  meanTurns: number;
  /** Seconds. */
  seconds: number;
}

interface Live {
  row: TaskRow;
  group: number;
  episode: Episode;
  prompt: string;
  promptIds: number[];
  ids: number[];
  mask: number[];
  logprobs: number[];
  turns: number;
  turnReward: number;
  done: boolean;
  actions: string[];
  observations: string[];
  spans: TurnSpan[];
}

/**
 * Runs `groupSize` episodes of `env` on each row (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { agentCalcEnv } from "../demo/pretrain_agent.ts";
 * import { collectEpisodes } from "./episode.ts";
 * import { loadPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * // The calculator environment in the tiny model's compact syntax: `{347+589}` calls the tool.
 * const env = agentCalcEnv();
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * const r = await collectEpisodes(model, tokenizer, env, env.task.rows(0, 2), {
 *   step: 1, seed: 0, groupSize: 2, maxNewTokens: 8, sampling: { temperature: 1 },
 * });
 * assert.equal(r.items.length, 4);
 * for (const it of r.items) {
 *   assert.equal(it.lossMask.length, it.completionIds.length);
 *   assert.ok(it.turns >= 1 && it.turns <= env.maxTurns);
 * }
 * model.dispose();
 * ```
 */
export async function collectEpisodes(
  model: CausalLM,
  tokenizer: Tokenizer,
  env: Environment,
  rows: readonly TaskRow[],
  opts: EpisodeOptions,
): Promise<EpisodeRollout> {
  const started = performance.now();
  const maxTurns = opts.maxTurns ?? env.maxTurns;
  if (!(Number.isInteger(maxTurns) && maxTurns >= 1)) {
    throw new RangeError(`collectEpisodes: maxTurns must be an integer >= 1, got ${maxTurns}`);
  }
  const window = opts.maxContextTokens ?? model.config.maxPositions;
  const vision = opts.vision ?? null;
  await vision?.prepare(rows);
  const live: Live[] = [];
  rows.forEach((row, p) => {
    for (let s = 0; s < opts.groupSize; s++) {
      // The episode's own seed, drawn from (seed, step, problem, sample) like every other draw.
      const seed = seededRng(opts.seed, opts.step, p, s).int(0, 0x7fffffff);
      const episode = env.reset(row, { seed });
      const prompt = opts.render?.(episode, row) ?? episode.prompt;
      const ids = opts.encode?.(prompt) ?? tokenizer.encode(prompt);
      const promptIds = withImageTokens(ids, row, vision, {
        of: "the environment's task",
        instead: "an environment",
      });
      live.push({
        row,
        group: p,
        episode,
        prompt,
        promptIds,
        ids: [],
        mask: [],
        logprobs: [],
        turns: 0,
        turnReward: 0,
        done: false,
        actions: [],
        observations: [prompt],
        spans: [],
      });
    }
  });
  let tokens = 0;
  for (let turn = 0; turn < maxTurns; turn++) {
    const active = live.map((e, i) => ({ e, i })).filter(({ e }) =>
      !e.done && e.promptIds.length + e.ids.length < window
    );
    if (active.length === 0) break;
    const budget = Math.min(
      opts.maxNewTokens,
      ...active.map(({ e }) => window - e.promptIds.length - e.ids.length),
    );
    const { sequences } = await generate(
      model,
      active.map(({ e }) => [...e.promptIds, ...e.ids]),
      {
        maxNewTokens: Math.max(1, budget),
        sampler: { ...opts.sampling, seed: opts.seed },
        step: opts.step,
        sequenceIds: active.map(({ i }) => i * maxTurns + turn),
        tokenizer,
        ...forwardHookOf(vision, model, (k) => active[k]?.e.row),
        ...(env.stop.length > 0 ? { stopStrings: env.stop } : {}),
        ...(opts.eosTokenIds !== undefined ? { eosTokenIds: opts.eosTokenIds } : {}),
      },
    );
    for (let a = 0; a < active.length; a++) {
      const { e } = active[a]!;
      const seq = sequences[a]!;
      tokens += seq.tokens.length;
      const span: TurnSpan = {
        state: JSON.stringify(e.observations),
        start: e.ids.length,
        end: e.ids.length + seq.tokens.length,
      };
      e.spans.push(span);
      e.ids.push(...seq.tokens);
      e.mask.push(...seq.tokens.map(() => 1));
      e.logprobs.push(...seq.scaledLogprobs);
      e.turns++;
      const action = tokenizer.decode(seq.tokens, { skipSpecialTokens: true });
      e.actions.push(action);
      const res = await e.episode.step(action);
      if (res.reward !== undefined && Number.isFinite(res.reward)) {
        e.turnReward += res.reward;
        span.reward = res.reward;
      }
      e.observations.push(res.observation);
      if (res.done) e.done = true;
      else if (res.observation !== "") {
        let obs = tokenizer.encode(res.observation, { addSpecialTokens: false });
        const room = window - e.promptIds.length - e.ids.length;
        if (obs.length >= room) {
          obs = obs.slice(0, Math.max(0, room));
          e.done = true; // no room left for the policy to act on it
        }
        e.ids.push(...obs);
        e.mask.push(...obs.map(() => 0));
        e.logprobs.push(...obs.map(() => 0));
      }
    }
  }
  const items: EpisodeItem[] = [];
  for (const e of live) {
    const final = await e.episode.finalReward();
    const reward = (Number.isFinite(final) ? final : 0) + e.turnReward;
    const success = e.episode.success();
    items.push({
      row: e.row,
      group: e.group,
      promptIds: e.promptIds,
      completionIds: e.ids,
      samplerLogprobs: e.logprobs,
      text: tokenizer.decode(e.ids, { skipSpecialTokens: true }),
      prompt: e.prompt,
      reward,
      correct: success ? 1 : 0,
      format: null,
      lossMask: e.mask,
      turns: e.turns,
      success,
      turnReward: e.turnReward,
      turnSpans: e.spans,
    });
  }
  let zero = 0;
  for (let p = 0; p < rows.length; p++) {
    const g = items.filter((it) => it.group === p).map((it) => it.reward);
    if (g.length > 1 && g.every((r) => r === g[0])) zero++;
  }
  return {
    items,
    fracZeroStdGroups: rows.length === 0 ? 0 : zero / rows.length,
    generatedTokens: tokens,
    meanTurns: items.reduce((n, it) => n + it.turns, 0) / Math.max(1, items.length),
    seconds: (performance.now() - started) / 1000,
  };
}

/** Options of {@link evaluateEpisodes}. */
export interface EvaluateEpisodesOptions {
  /** Episodes per problem (n). */
  samples: number;
  /** The k of pass@k (<= samples). */
  k: number;
  /** Sampler seed. */
  seed: number;
  /** Sampling parameters. */
  sampling: SamplingParams;
  /** New tokens per policy turn. */
  maxNewTokens: number;
  /** Token ids that end a turn (default: the tokenizer's EOS). */
  eosTokenIds?: readonly number[];
  /** The prompt text of a row (see {@link EpisodeOptions.render}). */
  render?: (episode: Episode, row: TaskRow) => string;
  /** Token ids of the rendered prompt (see {@link EpisodeOptions.encode}). */
  encode?: (text: string) => number[];
  /** Episodes per batch of lockstep turns (default 512). */
  batch?: number;
  /** A vision-language policy's images (see {@link EpisodeOptions.vision}). */
  vision?: VisionInputs | null;
}

/**
 * Held-out success of a policy in an environment: `samples` episodes per problem, success
 * rate as pass@1 and the unbiased pass@k over them (the shape `evaluate` returns, so reports
 * and summaries read it unchanged); `meanLength` is the mean number of policy turns.
 *
 * @example Usage
 * ```ts
 * import { agentCalcEnv } from "../demo/pretrain_agent.ts";
 * import { evaluateEpisodes } from "./episode.ts";
 * import { loadPolicy } from "./policy.ts";
 * import assert from "node:assert/strict";
 * const env = agentCalcEnv();
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * const r = await evaluateEpisodes(model, tokenizer, env, env.task.rows(9, 4), {
 *   samples: 4, k: 2, seed: 0, sampling: { temperature: 1 }, maxNewTokens: 8,
 * });
 * assert.ok(r.passAt1 >= 0 && r.passAt1 <= r.passAtK && r.passAtK <= 1);
 * assert.ok(r.meanLength >= 1);
 * model.dispose();
 * ```
 */
export async function evaluateEpisodes(
  model: CausalLM,
  tokenizer: Tokenizer,
  env: Environment,
  rows: readonly TaskRow[],
  opts: EvaluateEpisodesOptions,
): Promise<EvalResult> {
  const { samples: n, k } = opts;
  checkEvalSizes("evaluateEpisodes", n, k);
  const started = performance.now();
  const perBatch = Math.max(1, Math.floor((opts.batch ?? 512) / n));
  const successes: number[] = [];
  let turns = 0;
  for (let i = 0; i < rows.length; i += perBatch) {
    const part = rows.slice(i, i + perBatch);
    const r = await collectEpisodes(model, tokenizer, env, part, {
      step: EVAL_DRAW_STEP - i,
      seed: opts.seed,
      groupSize: n,
      maxNewTokens: opts.maxNewTokens,
      sampling: opts.sampling,
      ...(opts.eosTokenIds !== undefined ? { eosTokenIds: opts.eosTokenIds } : {}),
      ...(opts.render !== undefined ? { render: opts.render } : {}),
      ...(opts.encode !== undefined ? { encode: opts.encode } : {}),
      vision: opts.vision ?? null,
    });
    for (let p = 0; p < part.length; p++) {
      successes.push(r.items.filter((it) => it.group === p && it.success).length);
    }
    turns += r.items.reduce((t, it) => t + it.turns, 0);
  }
  return {
    ...passRates(successes, n, k),
    k,
    n,
    problems: rows.length,
    meanLength: turns / Math.max(1, rows.length * n),
    seconds: (performance.now() - started) / 1000,
  };
}
