/**
 * The rewards of a run (`rewards:` in the config, `--reward`, or `train({ rewards })`), scored
 * together for each sampling round: a weighted sum of components, each a `Reward` of
 * `@rlvr/rewards` run under the reward runner's time budget.
 *
 * - **Component kinds**: a built-in type (`config/rewards.ts`), a user module
 *   (`path: ./my_reward.ts#exportName`), or a reward passed in code (`inline: <name>`, from
 *   `train()`). A module or inline reward is a `Reward` object (`defineReward`,
 *   `defineBatchReward`) or a TRL-style batch function
 *   `({ prompts, completions, completionIds, rows }, options) => (number | null)[]`, sync or async.
 * - **The total** is `Σ weight · value` over the components that scored the sample; a component
 *   that returns `null` (not applicable, e.g. a code reward on a math row) is left out of the sum,
 *   as TRL's `nansum` does. A component that throws, times out or returns an invalid value makes the
 *   sample's total `null`: the sample is scored `null`, left out of its group's statistics and of the
 *   update, counted in `reward/<name>/errors` and logged with its id and the error; the run goes
 *   on. A sample no component scored also totals `null` (counted in `reward/unscored`).
 * - **One runner call per round**: batched rewards (majority vote, a judge's batch) see the whole
 *   round, grouped by prompt.
 * - **Steps**: one component may also report the steps its value is made of (a `steps` method,
 *   `reward_steps.ts`); they are checked against its value here, and a sample whose steps fail
 *   the check is failed like a throwing reward. GiGPO turns them into turns (process credit).
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Reward, Row, Task } from "@rlvr/rewards";
import type { RewardSpec } from "../config/types.ts";
import { checkSteps, hasSteps, type RewardStep } from "./reward_steps.ts";
import {
  parseRewardPath,
  REWARD_TYPES,
  rewardName,
  type TrainRewardInput,
} from "../config/rewards.ts";

/** A TRL-style batch reward function (`reward_funcs` of TRL's `GRPOTrainer`). */
export type BatchRewardFn = (
  batch: {
    /** The rendered prompts. */
    prompts: string[];
    /** The decoded completions. */
    completions: string[];
    /** The completions' token ids. */
    completionIds: number[][];
    /** The dataset rows the prompts came from. */
    rows: Row[];
  },
  options: Record<string, unknown>,
) =>
  | readonly (number | null | undefined)[]
  | Promise<readonly (number | null | undefined)[]>;

/** What a reward component can be in code: a `Reward` object or a TRL-style batch function. */
export type RewardLike = Reward<Row> | BatchRewardFn;

/** One component of a {@link RewardSet}. */
export interface RewardComponent {
  /** The metric name (`reward/<name>/mean`). */
  name: string;
  /** Its weight in the total. */
  weight: number;
  /** The reward. */
  reward: Reward<Row>;
  /** Whether it reads the sampler's per-token log-prob rows. */
  logprobs: boolean;
}

/** A failed reward call, for the run's log. */
export interface RewardError {
  /** Index of the sample in the scored inputs. */
  index: number;
  /** The component. */
  reward: string;
  /** `error` or `timeout`. */
  status: string;
  /** Why. */
  reason: string;
}

/** What {@link RewardSet.score} returns. */
export interface RewardScores {
  /** Per sample: the weighted total, or null (an error, or no component applied). */
  totals: (number | null)[];
  /** Per component name, per sample: its value (null when not applicable or failed). */
  parts: Record<string, (number | null)[]>;
  /** Every failed call. */
  errors: RewardError[];
  /**
   * Per sample, the steps of the component that reports them ({@link RewardSet.stepped}), or
   * null (no such component, not applicable, or the sample failed).
   */
  steps: (readonly RewardStep[] | null)[];
}

/** What {@link RewardSet.fromSpecs} reads besides the specs. */
export interface RewardSetContext {
  /** The run's task (for `task` and Kimi's correctness). */
  task: Task | null;
  /** Rewards passed in code (`train({ rewards })`), by name, for `inline` specs. */
  inline?: ReadonlyMap<string, RewardLike>;
  /** Where relative `path`s resolve (default: the working directory). */
  cwd?: string;
}

function isReward(x: unknown): x is Reward<Row> {
  return typeof x === "object" && x !== null && typeof (x as Reward).name === "string" &&
    (typeof (x as Reward).score === "function" || typeof (x as Reward).scoreBatch === "function");
}

/**
 * `like` as a `Reward` named `name`: a `Reward` object keeps its scorer under the new name, a
 * function becomes a batched reward receiving the round's columns and `options`.
 *
 * @example Usage
 * ```ts
 * import { asReward } from "./reward_set.ts";
 * import assert from "node:assert/strict";
 * const short = asReward("short", ({ completions }) => completions.map((c) => c.length < 5 ? 1 : 0));
 * const out = await short.scoreBatch!([
 *   { prompt: "p", completion: "ok", row: {} },
 *   { prompt: "p", completion: "too long", row: {} },
 * ], { signal: new AbortController().signal });
 * assert.deepEqual(out, [1, 0]);
 * ```
 */
export function asReward(
  name: string,
  like: RewardLike,
  options: Record<string, unknown> = {},
): Reward<Row> {
  if (isReward(like)) return { ...like, name };
  if (typeof like !== "function") {
    throw new TypeError(
      `reward ${name}: expected a Reward object ({name, score | scoreBatch}) or a function ({prompts, completions, completionIds, rows}) => (number | null)[], got ${typeof like}`,
    );
  }
  return {
    name,
    async scoreBatch(inputs) {
      const batch = {
        prompts: inputs.map((x) => x.prompt),
        completions: inputs.map((x) => x.completion),
        completionIds: inputs.map((x) => [...((x as TrainRewardInput).completionIds ?? [])]),
        rows: inputs.map((x) => x.row),
      };
      const out = await like(batch, options);
      if (!Array.isArray(out) || out.length !== inputs.length) {
        throw new TypeError(
          `reward ${name} returned ${
            Array.isArray(out) ? `${out.length} values` : typeof out
          } for ${inputs.length} completions; return one number or null per completion`,
        );
      }
      return out.map((v) => v ?? null);
    },
  };
}

async function loadModuleReward(spec: RewardSpec, i: number, cwd: string): Promise<RewardLike> {
  const { file, exportName } = parseRewardPath(spec.path!);
  const url = /^[a-z][a-z0-9+.-]+:/i.test(file)
    ? file
    : pathToFileURL(isAbsolute(file) ? file : resolve(cwd, file)).href;
  let mod: Record<string, unknown>;
  try {
    mod = await import(url);
  } catch (e) {
    throw new Error(
      `rewards[${i}].path: cannot import ${file}: ${(e as Error).message.split("\n")[0]}`,
    );
  }
  const value = mod[exportName];
  if (value === undefined) {
    throw new Error(
      `rewards[${i}].path: ${file} has no export "${exportName}"; exports: ${
        Object.keys(mod).join(", ") || "none"
      } (name one with ${file}#<export>)`,
    );
  }
  return value as RewardLike;
}

/**
 * A run's rewards, scored together (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { RewardSet } from "./reward_set.ts";
 * import assert from "node:assert/strict";
 * const set = await RewardSet.fromSpecs([
 *   { inline: "short", weight: 1, options: {} },
 *   { type: "format", weight: 0.5, options: {} },
 * ], { task: null, inline: new Map([["short", ({ completions }) => completions.map((c) => c.length < 40 ? 1 : 0)]]) });
 * const s = await set.score([{ prompt: "p", completion: "<think>a</think><answer>1</answer>", row: {} }]);
 * assert.deepEqual(s.totals, [1.5]);
 * assert.deepEqual(s.parts, { short: [1], format: [1] });
 * ```
 */
export class RewardSet {
  /** The components, in config order. */
  readonly components: readonly RewardComponent[];

  /** The component that reports steps, or null (at most one may). */
  readonly stepped: RewardComponent | null;

  /** A set of `components` (distinct names, none `total`, at most one reporting steps). */
  constructor(components: readonly RewardComponent[]) {
    const stepped = components.filter((c) => hasSteps(c.reward));
    if (stepped.length > 1) {
      throw new TypeError(
        `rewards: ${
          stepped.map((c) => c.name).join(" and ")
        } both report steps; one reward of a run may (its steps become the completion's turns)`,
      );
    }
    this.stepped = stepped[0] ?? null;
    const seen = new Set<string>();
    for (const c of components) {
      if (c.name === "total" || seen.has(c.name)) {
        throw new TypeError(
          `rewards: the name "${c.name}" is ${
            c.name === "total" ? "reserved" : "used twice"
          }; give each reward a distinct name (it is its metric key)`,
        );
      }
      seen.add(c.name);
    }
    this.components = components;
  }

  /** Builds the components of `specs` (built-in types, modules, inline rewards). */
  static async fromSpecs(
    specs: readonly RewardSpec[],
    ctx: RewardSetContext,
  ): Promise<RewardSet> {
    const cwd = ctx.cwd ?? Deno.cwd();
    const components: RewardComponent[] = [];
    for (const [i, spec] of specs.entries()) {
      const name = rewardName(spec);
      let reward: Reward<Row>;
      let logprobs = false;
      if (spec.type != null) {
        const type = REWARD_TYPES.get(spec.type, `rewards[${i}].type`);
        try {
          reward = { ...(await type(spec.options, { task: ctx.task })), name };
        } catch (e) {
          throw new Error(
            `rewards[${i}].options: rejected by reward ${spec.type}: ${(e as Error).message}`,
          );
        }
        logprobs = type.logprobs;
      } else if (spec.inline != null) {
        const like = ctx.inline?.get(spec.inline);
        if (like === undefined) {
          throw new Error(
            `rewards[${i}].inline: no reward "${spec.inline}" was passed in code; an inline reward exists only in the train({ rewards }) call that named it (pass the same rewards to resume)`,
          );
        }
        reward = asReward(name, like, spec.options);
      } else {
        reward = asReward(name, await loadModuleReward(spec, i, cwd), spec.options);
      }
      components.push({ name, weight: spec.weight, reward, logprobs });
    }
    return new RewardSet(components);
  }

  /** Whether a component reads the sampler's per-token log-prob rows. */
  get needsLogprobs(): boolean {
    return this.components.some((c) => c.logprobs);
  }

  /** Scores a round's samples (see the module doc). */
  async score(
    inputs: readonly TrainRewardInput[],
    options: { timeoutMs?: number } = {},
  ): Promise<RewardScores> {
    const { scoreRewards } = await import("@rlvr/rewards");
    const result = await scoreRewards(this.components.map((c) => c.reward), inputs, {
      onError: null,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
    const parts: Record<string, (number | null)[]> = {};
    const failed = new Set<number>();
    for (const c of this.components) {
      const outcomes = result.outcomes[c.name]!;
      parts[c.name] = outcomes.map((o) => (o.status === "ok" ? o.value : null));
      outcomes.forEach((o, i) => {
        if (o.status === "error" || o.status === "timeout") failed.add(i);
      });
    }
    const stepErrors: RewardError[] = [];
    const steps = inputs.map((input, i) => {
      const c = this.stepped;
      const value = c === null ? null : parts[c.name]![i];
      if (c === null || value === null || value === undefined || !hasSteps(c.reward)) return null;
      try {
        const reported = c.reward.steps(input);
        return reported === null
          ? null
          : checkSteps(c.name, reported, value, input.completion.length);
      } catch (e) {
        failed.add(i);
        stepErrors.push({ index: i, reward: c.name, status: "error", reason: String(e) });
        return null;
      }
    });
    const totals = inputs.map((_, i) => {
      if (failed.has(i)) return null;
      let sum = 0;
      let any = false;
      for (const c of this.components) {
        const v = parts[c.name]![i];
        if (v === null || v === undefined) continue;
        sum += c.weight * v;
        any = true;
      }
      return any ? sum : null;
    });
    const errors: RewardError[] = result.failures
      .filter((f) => this.components.some((c) => c.name === f.reward))
      .map((f) => ({ index: f.index, reward: f.reward, status: f.status, reason: f.reason }));
    errors.push(...stepErrors);
    return { totals, parts, errors, steps };
  }
}
