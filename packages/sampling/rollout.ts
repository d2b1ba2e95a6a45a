/**
 * Rollout planning: `n` samples per prompt with group bookkeeping.
 *
 * Design: a plan is flat and group-major, like veRL's `repeat(n, interleave=True)`: the slots of
 * one prompt are contiguous, each slot carries its group id and sample index, and
 * {@link RolloutPlan.index} is the per-response group id list that the advantage estimators take
 * as `index` (veRL `uid`). The group id is the prompt's uid; if the same uid appears more than
 * once in one plan (a prompt drawn twice, e.g. across an epoch boundary), its later groups get
 * `uid#2`, `uid#3`, ... so groups never merge silently. Results come back either in slot order
 * ({@link collectGroups}, as a batched generator returns them) or tagged with
 * `(groupId, sampleIndex)` in any order ({@link assembleGroups}, as async rollouts finish);
 * both check that every group is complete and that no sample arrived twice.
 *
 * @module
 */

import { checkNumber, show } from "./_args.ts";

/** One generation request: sample `sampleIndex` of group `groupId`. */
export interface RolloutSlot<P> {
  /** The group id (the prompt uid, made unique within the plan). */
  groupId: string;
  /** The prompt's uid as given. */
  uid: string;
  /** 0-based index of this sample within its group. */
  sampleIndex: number;
  /** The number of samples in this group. */
  groupSize: number;
  /** The prompt. */
  prompt: P;
}

/** One group of a plan: a prompt and where its slots are. */
export interface PlannedGroup<P> {
  /** The group id (unique within the plan). */
  groupId: string;
  /** The prompt's uid as given. */
  uid: string;
  /** The prompt. */
  prompt: P;
  /** Samples requested for this prompt. */
  size: number;
  /** Index of the group's first slot in {@link RolloutPlan.slots}. */
  start: number;
}

/** The result of {@link planRollouts}. */
export interface RolloutPlan<P> {
  /** Every slot, group-major. */
  slots: RolloutSlot<P>[];
  /** Every group, in prompt order. */
  groups: PlannedGroup<P>[];
  /** The group id of each slot (veRL `uid`; the advantage estimators' `index`). */
  index: string[];
}

/** Options of {@link planRollouts}. */
export interface PlanOptions<P> {
  /**
   * Samples per prompt (`n`, veRL `rollout.n`, TRL `num_generations`): a number, or a function
   * of the prompt (e.g. a budget from {@link budgetForPassRate}).
   */
  groupSize: number | ((prompt: P, position: number) => number);
  /** The prompt's uid (default: its string `uid` field). */
  uid?: (prompt: P, position: number) => string;
}

/** A finished group: a prompt and its samples in sample-index order. */
export interface RolloutGroup<P, S> {
  /** The group id. */
  groupId: string;
  /** The prompt's uid. */
  uid: string;
  /** The prompt. */
  prompt: P;
  /** The samples, `samples[k]` being sample index `k`. */
  samples: S[];
}

/** A sample tagged with its slot, for {@link assembleGroups}. */
export interface TaggedSample<S> {
  /** The slot's group id. */
  groupId: string;
  /** The slot's sample index. */
  sampleIndex: number;
  /** The sample. */
  sample: S;
}

function defaultUid(owner: string, prompt: unknown, position: number): string {
  const uid = (prompt as { uid?: unknown } | null)?.uid;
  if (typeof uid !== "string" || uid === "") {
    throw new TypeError(
      `${owner}: prompts[${position}] has no string uid (got ${
        show(uid)
      }); give each prompt a uid field or pass options.uid`,
    );
  }
  return uid;
}

/**
 * Plans `n` samples per prompt: group-major slots with group ids and sample indices.
 *
 * @example Usage
 * ```ts
 * import { planRollouts } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const plan = planRollouts([{ uid: "q1" }, { uid: "q2" }, { uid: "q1" }], { groupSize: 2 });
 * assert.deepEqual(plan.index, ["q1", "q1", "q2", "q2", "q1#2", "q1#2"]);
 * assert.deepEqual(plan.slots.map((s) => s.sampleIndex), [0, 1, 0, 1, 0, 1]);
 * ```
 */
export function planRollouts<P>(prompts: readonly P[], options: PlanOptions<P>): RolloutPlan<P> {
  const owner = "planRollouts";
  if (!Array.isArray(prompts)) {
    throw new TypeError(`${owner}: prompts must be an array, got ${show(prompts)}`);
  }
  const sizeOf = typeof options.groupSize === "function"
    ? options.groupSize
    : (checkNumber(owner, "groupSize", options.groupSize, { integer: true, min: 1 }),
      () => options.groupSize as number);
  const uidOf = options.uid ?? ((p: P, i: number) => defaultUid(owner, p, i));
  const seen = new Map<string, number>();
  const slots: RolloutSlot<P>[] = [];
  const groups: PlannedGroup<P>[] = [];
  const index: string[] = [];
  prompts.forEach((prompt, i) => {
    const uid = uidOf(prompt, i);
    if (typeof uid !== "string" || uid === "") {
      throw new TypeError(
        `${owner}: uid of prompts[${i}] must be a non-empty string, got ${show(uid)}`,
      );
    }
    const size = checkNumber(owner, `groupSize of prompts[${i}] (uid ${uid})`, sizeOf(prompt, i), {
      integer: true,
      min: 1,
    });
    const count = (seen.get(uid) ?? 0) + 1;
    seen.set(uid, count);
    const groupId = count === 1 ? uid : `${uid}#${count}`;
    groups.push({ groupId, uid, prompt, size, start: slots.length });
    for (let k = 0; k < size; k++) {
      slots.push({ groupId, uid, sampleIndex: k, groupSize: size, prompt });
      index.push(groupId);
    }
  });
  return { slots, groups, index };
}

/**
 * Regroups outputs that come back in slot order (one per slot) into groups.
 *
 * @example Usage
 * ```ts
 * import { collectGroups, planRollouts } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const plan = planRollouts([{ uid: "a" }, { uid: "b" }], { groupSize: 2 });
 * const groups = collectGroups(plan, ["a0", "a1", "b0", "b1"]);
 * assert.deepEqual(groups.map((g) => [g.groupId, g.samples]), [["a", ["a0", "a1"]], ["b", ["b0", "b1"]]]);
 * ```
 */
export function collectGroups<P, S>(
  plan: RolloutPlan<P>,
  outputs: readonly S[],
): RolloutGroup<P, S>[] {
  if (outputs.length !== plan.slots.length) {
    throw new RangeError(
      `collectGroups: got ${outputs.length} outputs for a plan of ${plan.slots.length} slots; pass exactly one output per slot, in slot order (or use assembleGroups for tagged outputs)`,
    );
  }
  return plan.groups.map((g) => ({
    groupId: g.groupId,
    uid: g.uid,
    prompt: g.prompt,
    samples: outputs.slice(g.start, g.start + g.size),
  }));
}

/**
 * Regroups samples tagged with `(groupId, sampleIndex)` and arriving in any order. Throws on an
 * unknown group, an out-of-range index, a duplicate, or a missing sample (naming them).
 *
 * @example Usage
 * ```ts
 * import { assembleGroups, planRollouts } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const plan = planRollouts([{ uid: "a" }], { groupSize: 2 });
 * const groups = assembleGroups(plan, [
 *   { groupId: "a", sampleIndex: 1, sample: "second" },
 *   { groupId: "a", sampleIndex: 0, sample: "first" },
 * ]);
 * assert.deepEqual(groups[0]!.samples, ["first", "second"]);
 * ```
 */
export function assembleGroups<P, S>(
  plan: RolloutPlan<P>,
  tagged: readonly TaggedSample<S>[],
): RolloutGroup<P, S>[] {
  const owner = "assembleGroups";
  const byId = new Map<string, { group: PlannedGroup<P>; samples: S[]; filled: boolean[] }>();
  for (const g of plan.groups) {
    byId.set(g.groupId, { group: g, samples: new Array(g.size), filled: new Array(g.size) });
  }
  tagged.forEach((t, i) => {
    const entry = byId.get(t.groupId);
    if (!entry) {
      throw new RangeError(
        `${owner}: tagged[${i}] has groupId ${
          show(t.groupId)
        }, which is not in the plan; pass samples of this plan only`,
      );
    }
    const k = t.sampleIndex;
    if (!Number.isInteger(k) || k < 0 || k >= entry.group.size) {
      throw new RangeError(
        `${owner}: tagged[${i}] (group ${t.groupId}) has sampleIndex ${
          show(k)
        }; it must be an integer in [0, ${entry.group.size})`,
      );
    }
    if (entry.filled[k]) {
      throw new RangeError(`${owner}: sample ${k} of group ${t.groupId} arrived twice`);
    }
    entry.filled[k] = true;
    entry.samples[k] = t.sample;
  });
  return plan.groups.map((g) => {
    const entry = byId.get(g.groupId)!;
    const missing: number[] = [];
    for (let k = 0; k < g.size; k++) if (!entry.filled[k]) missing.push(k);
    if (missing.length > 0) {
      throw new RangeError(
        `${owner}: group ${g.groupId} is missing sample(s) ${
          missing.join(", ")
        }; wait for every slot before assembling`,
      );
    }
    return { groupId: g.groupId, uid: g.uid, prompt: g.prompt, samples: entry.samples };
  });
}
