/**
 * The built-in reward types of a config's `rewards:` list, by name, each built from its
 * `options` into a `Reward` of `@rlvr/rewards`: the verifiers (`task`, `math`, `code`), shaping
 * (`format`, `length`, `repetition`), the spurious-rewards baseline (`random`), graders (`rubric`, `judge`) and the unsupervised rewards
 * (`majority_vote`, `self_certainty`, `entropy`), and the process credit of the vision-language
 * warm start's counting trace (`vl_rows`).
 *
 * Design decisions:
 * - **Options are the reward's own**: each factory of `@rlvr/rewards` checks its option names and
 *   ranges with messages naming the field; the config check builds every reward once at load time
 *   (`registryProblems`), so a wrong option fails before any model loads, attached to
 *   `rewards[i].options`.
 * - **What the run knows is filled in**: the token counter of the length rewards is the
 *   completion's token count (not words), `task` is the task's own verifier, the correctness of
 *   Kimi's length reward is the task's verifier unless given, and the log-prob rewards read the
 *   sampler's per-token distributions, which the rollout attaches when such a reward is configured.
 * - `@rlvr/rewards` is imported lazily, as in `tasks.ts`, so a config that fails its schema fails
 *   before the slowest package loads.
 * - **One registry idiom**: the types are a `Registry` of `@rlvr/common`, as the built-in tasks
 *   and environments are; each entry is the reward's builder with its description and log-prob
 *   flag attached, and an unknown name is the registry's error.
 *
 * @module
 */

import { Registry } from "@rlvr/common";
import type { Reward, RewardInput, Row, Task, TaskRow } from "@rlvr/rewards";
import type { RewardSpec } from "./types.ts";

const rewards = () => import("@rlvr/rewards");
const codeRewards = () => import("@rlvr/rewards/code");

/** What a reward is built with besides its options. */
export interface RewardBuildContext {
  /** The run's task (its verifier backs `task` and, by default, Kimi's correctness). */
  task: Task | null;
}

/** A reward input as the trainer passes it (the completion's token ids and log-prob rows too). */
export interface TrainRewardInput extends RewardInput<Row> {
  /** The completion's token ids. */
  completionIds?: readonly number[];
  /** Per completion token, the sampling distribution's log-probs (only for log-prob rewards). */
  logprobs?: readonly ArrayLike<number>[];
}

/**
 * A built-in reward type: called with its options and the {@link RewardBuildContext}, it builds
 * the reward (the factory checks the options); it carries its description and whether it reads
 * log-probs (internal: the builder takes loosely typed options).
 */
export interface BuiltinRewardType {
  /** Builds the reward; the factory checks the options. */
  (options: Record<string, unknown>, ctx: RewardBuildContext): Promise<Reward<Row>>;
  /** One line for `--help` and error messages. */
  readonly description: string;
  /** Whether it reads the sampler's per-token log-prob rows (`input.logprobs`). */
  readonly logprobs: boolean;
}

/** Tokens of a completion: its token ids when the trainer attached them, else its words. */
function tokenCount(text: string, input: RewardInput<Row>): number {
  const ids = (input as TrainRewardInput).completionIds;
  return ids !== undefined ? ids.length : text.trim() === "" ? 0 : text.trim().split(/\s+/).length;
}

/** Refuses options for a reward type that takes none, naming them. */
function noOptions(type: string, options: Record<string, unknown>): void {
  if (Object.keys(options).length > 0) {
    throw new TypeError(
      `${type}: takes no ${type === "vl_rows" ? "other " : ""}options, got ${
        Object.keys(options).join(", ")
      }`,
    );
  }
}

function taskVerifier(ctx: RewardBuildContext, owner: string) {
  const task = ctx.task;
  if (task === null) {
    throw new TypeError(`${owner}: needs a task whose verifier it uses (task.name or task.data)`);
  }
  return async (input: RewardInput<Row>) => {
    const { completionReward } = await import("../demo/format.ts");
    return completionReward(task, input.row as TaskRow, input.completion) === 1;
  };
}

/**
 * The built-in reward types by name (internal: `@rlvr/train` exports none of it; an unknown name
 * is `REWARD_TYPES.get`'s error, which lists the names).
 *
 * @example Usage
 * ```ts
 * import { REWARD_TYPES } from "./rewards.ts";
 * import assert from "node:assert/strict";
 * assert.equal(REWARD_TYPES.get("entropy").logprobs, true);
 * assert.throws(
 *   () => REWARD_TYPES.get("lenght", "rewards[0].type"),
 *   /^RangeError: rewards\[0\]\.type: unknown reward type "lenght"; valid keys: task, math, .* \(did you mean "length"\?\)$/,
 * );
 * ```
 */
export const REWARD_TYPES: Registry<BuiltinRewardType> = new Registry<BuiltinRewardType>(
  "reward type",
);

/** Registers a built-in reward type: its builder with its description and log-prob flag. */
function registerRewardType(
  name: string,
  description: string,
  logprobs: boolean,
  build: (options: Record<string, unknown>, ctx: RewardBuildContext) => Promise<Reward<Row>>,
): void {
  REWARD_TYPES.register(name, Object.assign(build, { description, logprobs }));
}

registerRewardType(
  "task",
  "the task's own verifier, 1 or 0 (what training uses without a rewards list)",
  false,
  async (options, ctx) => {
    const { defineReward } = await rewards();
    noOptions("task", options);
    const verify = taskVerifier(ctx, "task");
    return defineReward<Row>("task", async (input) => (await verify(input)) ? 1 : 0);
  },
);
registerRewardType(
  "math",
  "verifyMath of the final answer against row.answer (goldField), null without one",
  false,
  async (o) => (await rewards()).mathReward(o) as Reward<Row>,
);
registerRewardType(
  "code",
  "the completion's last code block run against row.tests in the sandbox",
  false,
  async (o) => (await codeRewards()).codeReward<Row>(o),
);
registerRewardType(
  "format",
  "1 when the completion is <think>…</think><answer>…</answer> (mode), else 0",
  false,
  async (o) => (await rewards()).formatReward<Row>(o),
);
registerRewardType(
  "random",
  "1 with probability p, whatever the completion (the spurious-rewards baseline)",
  false,
  async (o) => (await rewards()).randomReward<Row>(o),
);
registerRewardType(
  "length",
  "length shaping: kind kimi (needs correctness), l1 (target length) or dapo (overlong)",
  false,
  async (options, ctx) => {
    const r = await rewards();
    const { kind, ...rest } = options;
    const o = { countTokens: tokenCount, ...rest };
    if (kind === "dapo") return r.dapoOverlongReward<Row>(o as never);
    if (kind === "l1") return r.l1LengthReward<Row>(o as never);
    if (kind === "kimi") {
      const correct = rest.correct ?? taskVerifier(ctx, "length (kimi)");
      return r.kimiLengthReward<Row>({ ...o, correct } as never);
    }
    throw new TypeError(
      `length: options.kind must be "kimi", "l1" or "dapo", got ${JSON.stringify(kind)}`,
    );
  },
);
registerRewardType(
  "repetition",
  "minus the fraction of repeated n-grams (a penalty in [-maxPenalty, 0])",
  false,
  async (o) => (await rewards()).repetitionPenalty<Row>(o),
);
registerRewardType(
  "rubric",
  "the share of the row's rubric criteria (row.rubric) the completion meets",
  false,
  async (o) => (await rewards()).rowRubricReward<Row>(o),
);
registerRewardType(
  "judge",
  "an OpenAI-compatible chat endpoint grades the completion (baseUrl, model, promptTemplate)",
  false,
  async (o) => (await rewards()).judgeReward<Row>(o as never) as Reward<Row>,
);
registerRewardType(
  "majority_vote",
  "TTRL: 1 when the answer is its group's most frequent answer (no gold answer needed)",
  false,
  async (options) => {
    const r = await rewards();
    // As the task verifier reads answers: the <answer>/\boxed{} text, else the whole trimmed
    // completion (the tiny policy answers bare), so bare answers vote too.
    const extract = (c: string) => r.extractFinalAnswer(c) ?? (c.trim() === "" ? null : c.trim());
    return r.majorityVoteReward<Row>({ extract, ...options });
  },
);
registerRewardType(
  "self_certainty",
  "Intuitor: the self-certainty of the sampler's per-token distributions",
  true,
  async (o) => (await rewards()).selfCertaintyReward<Row>(o),
);
registerRewardType(
  "entropy",
  "RENT: minus the mean token entropy of the sampler's distributions",
  true,
  async (o) => (await rewards()).negativeEntropyReward<Row>(o),
);
registerRewardType(
  "vl_rows",
  "builtin:tiny-vl's counting trace: the share of patch rows whose count is the image's (with steps)",
  false,
  async (options) => {
    const { defineReward } = await rewards();
    const { described, ...rest } = options;
    noOptions("vl_rows", rest);
    if (described !== undefined && typeof described !== "boolean") {
      throw new TypeError(
        `vl_rows: options.described must be true or false (credit a row only when its ` +
          `description is also right), got ${JSON.stringify(described)}`,
      );
    }
    const credit = { described: described === true };
    const { rowCountCredit, rowCountSteps, traceGrid } = await import("../demo/vl_format.ts");
    const { VL_PROCESSOR } = await import("../demo/pretrain_vl.ts");
    const gridOf = (input: RewardInput<Row>) => traceGrid(input.row as TaskRow, VL_PROCESSOR);
    // Its steps (one per patch row) are the process credit GiGPO reads (loop/reward_steps.ts).
    return {
      ...defineReward<Row>("vl_rows", (input) => {
        const grid = gridOf(input);
        return grid === null
          ? null
          : rowCountCredit(input.row as TaskRow, grid, input.completion, credit);
      }),
      steps(input: RewardInput<Row>) {
        const grid = gridOf(input);
        return grid === null
          ? null
          : rowCountSteps(input.row as TaskRow, grid, input.completion, credit);
      },
    };
  },
);

/**
 * The built-in reward type names, sorted.
 *
 * @example Usage
 * ```ts
 * import { builtinRewardNames } from "./rewards.ts";
 * import assert from "node:assert/strict";
 * assert.ok(builtinRewardNames().includes("majority_vote"));
 * ```
 */
export function builtinRewardNames(): string[] {
  return REWARD_TYPES.names().sort();
}

/**
 * The built-in reward type `name`, or undefined.
 *
 * @example Usage
 * ```ts
 * import { builtinRewardType } from "./rewards.ts";
 * import assert from "node:assert/strict";
 * assert.equal(builtinRewardType("entropy")?.logprobs, true);
 * assert.equal(builtinRewardType("nope"), undefined);
 * ```
 */
export function builtinRewardType(name: string): BuiltinRewardType | undefined {
  return REWARD_TYPES.has(name) ? REWARD_TYPES.get(name) : undefined;
}

/**
 * `./file.ts#name` → the file and the export (`default` when no `#`).
 *
 * @example Usage
 * ```ts
 * import { parseRewardPath } from "./rewards.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseRewardPath("./r.ts#short"), { file: "./r.ts", exportName: "short" });
 * assert.deepEqual(parseRewardPath("./r.ts"), { file: "./r.ts", exportName: "default" });
 * ```
 */
export function parseRewardPath(path: string): { file: string; exportName: string } {
  const at = path.lastIndexOf("#");
  if (at < 0) return { file: path, exportName: "default" };
  return { file: path.slice(0, at), exportName: path.slice(at + 1) || "default" };
}

/**
 * The metric name of a reward spec: its `name`, else the type, the export (the file's stem for
 * a default export) or the inline name.
 *
 * @example Usage
 * ```ts
 * import { rewardName } from "./rewards.ts";
 * import assert from "node:assert/strict";
 * assert.equal(rewardName({ path: "./rewards/short.ts", weight: 1, options: {} }), "short");
 * assert.equal(rewardName({ type: "math", name: "gold", weight: 1, options: {} }), "gold");
 * ```
 */
export function rewardName(spec: RewardSpec): string {
  if (spec.name != null) return spec.name;
  if (spec.type != null) return spec.type;
  if (spec.inline != null) return spec.inline;
  const { file, exportName } = parseRewardPath(spec.path!);
  if (exportName !== "default") return exportName;
  return file.replace(/^.*[\\/]/, "").replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9_]/g, "_");
}
