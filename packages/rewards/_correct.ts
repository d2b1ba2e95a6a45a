/**
 * "Is this sample correct?" for the shaping rewards that depend on correctness (Kimi length
 * reward, RLCR): either a reward (correct when its value is `>= threshold`) or a predicate
 * (private).
 *
 * @module
 */

import { show } from "./_check.ts";
import { checkReward, valuesOf } from "./_evaluate.ts";
import type { Reward, RewardContext, RewardInput, RewardValue, Row } from "./types.ts";

/**
 * How a shaping reward learns whether a sample is correct: a reward (correct when its value is
 * `>= correctThreshold`, default 1) or a predicate.
 */
export type Correctness<R extends Row = Row> =
  | Reward<R>
  | ((input: RewardInput<R>, ctx: RewardContext) => boolean | Promise<boolean>);

/** Validates a {@link Correctness} argument. */
export function checkCorrectness<R extends Row>(
  owner: string,
  field: string,
  spec: unknown,
): Correctness<R> {
  if (typeof spec === "function") return spec as Correctness<R>;
  if (typeof spec === "object" && spec !== null) {
    checkReward(owner, field, spec);
    return spec as Correctness<R>;
  }
  throw new TypeError(
    `${owner}: ${field} must be a reward (e.g. a task's reward or mathReward) or a predicate (input) => boolean, got ${
      show(spec)
    }`,
  );
}

function toBool(value: RewardValue | boolean, threshold: number): boolean | null {
  if (value === null) return null;
  if (typeof value === "boolean") return value;
  return value >= threshold;
}

/** Correctness of one sample; errors propagate (so the caller's runner records them). */
export async function correctOne<R extends Row>(
  spec: Correctness<R>,
  input: RewardInput<R>,
  ctx: RewardContext,
  threshold: number,
): Promise<boolean | null> {
  if (typeof spec === "function") {
    const v = await spec(input, ctx);
    if (typeof v !== "boolean") {
      throw new TypeError(
        `the correctness predicate returned ${show(v)}; it must return a boolean`,
      );
    }
    return v;
  }
  let v: unknown;
  if (typeof spec.score === "function") v = await spec.score(input, ctx);
  else v = (await spec.scoreBatch!([input], ctx))[0];
  if (v !== null && !(typeof v === "number" && Number.isFinite(v))) {
    throw new TypeError(
      `the correctness reward "${spec.name}" returned ${
        show(v)
      }; a reward must return a finite number or null`,
    );
  }
  return toBool(v as RewardValue, threshold);
}

/**
 * Correctness of a batch. A reward is scored with the runner's semantics (a failed call scores
 * 0, i.e. incorrect); a predicate that throws counts as incorrect too.
 */
export async function correctBatch<R extends Row>(
  spec: Correctness<R>,
  inputs: readonly RewardInput<R>[],
  ctx: RewardContext,
  threshold: number,
): Promise<(boolean | null)[]> {
  if (typeof spec !== "function") {
    return (await valuesOf(spec, inputs, ctx.signal)).map((v) => toBool(v, threshold));
  }
  return await Promise.all(inputs.map(async (x) => {
    try {
      return (await spec(x, ctx)) === true;
    } catch {
      return false;
    }
  }));
}
