/**
 * Rollout workers under versioned weight snapshots, through the staleness gate: the
 * {@link RolloutSource} of `rollout.mode: one_step_off | async` (see `rollout_source.ts` for
 * the interface and the sources on the trainer's thread). Workers are Web Workers
 * (`worker_executor.ts`) or remote workers over NATS (`nats_executor.ts`, `rollout.nats`).
 *
 * Design decision: a file of its own, since it starts workers and writes the run directory's
 * `staleness.json`, so the training session (`session.ts`), which runs in a browser too, never
 * loads it; `deno task train` hands it to the session as its `rollouts` option.
 *
 * @module
 */

import { basename, join } from "node:path";
import type { CausalLM } from "@rlvr/policy";
import { snapshot, StalenessGate, type WeightSnapshot } from "@rlvr/infra";
import { rolloutSchedule } from "../config/mapping.ts";
import { writeFileAtomic } from "../run/atomic.ts";
import { withMergedParams } from "./lora.ts";
import { startNatsExecutors } from "./nats_executor.ts";
import type { RolloutItem } from "./rollout.ts";
import { jobRowCount, type RolloutExecutor } from "./rollout_job.ts";
import { episodeMetrics, type RolloutSource, type SourceContext } from "./rollout_source.ts";
import { RolloutScheduler } from "./scheduler.ts";
import { loadSchedulerState } from "./state.ts";
import type { VisionInputs } from "./vision.ts";
import { WorkerExecutor } from "./worker_executor.ts";

/**
 * What partial rollouts add to a record: the newest version among the batch's tokens and the
 * fraction of its sequences whose tokens come from more than one version.
 */
function partialMetrics(
  newest: number | undefined,
  items: readonly RolloutItem[],
): Record<string, number> {
  const mixed = items.filter((it) => new Set(it.tokenVersions ?? []).size > 1).length;
  return {
    ...(newest !== undefined ? { "rollout/policy_version_newest": newest } : {}),
    "rollout/mixed_version_frac": mixed / Math.max(1, items.length),
  };
}

/** Where {@link scheduledRollouts} starts from. */
export interface ScheduledStart {
  /** Steps already taken (the first weights published are version `start`). */
  start: number;
  /** The checkpoint resumed from (its outstanding batches are restored), or null. */
  checkpointPath: string | null;
  /** The run directory (names the run for remote workers; `staleness.json` goes there). */
  runDir: string;
  /** Log lines (remote workers joining). */
  log: (line: string) => void;
}

/**
 * Rollout workers under versioned weights through the staleness gate (`rollout.mode:
 * one_step_off | async`; `rollout.nats` for remote workers).
 *
 * @example Usage
 * ```ts
 * import { scheduledRollouts } from "./scheduled_rollouts.ts";
 * import assert from "node:assert/strict";
 * // Starting one needs Web Workers and a model; see async_run_test.ts for a full run.
 * assert.equal(typeof scheduledRollouts, "function");
 * ```
 */
export async function scheduledRollouts(
  ctx: SourceContext,
  at: ScheduledStart,
): Promise<RolloutSource> {
  const { config } = ctx;
  const schedule = rolloutSchedule(config);
  if (schedule.mode === "sync") {
    throw new Error("scheduledRollouts: rollout.mode is sync; use syncRollouts");
  }
  const restored = at.checkpointPath === null ? null : await loadSchedulerState(at.checkpointPath);
  const gate = restored !== null
    ? StalenessGate.fromJSON(restored.gate)
    : new StalenessGate({ maxStaleness: schedule.maxStaleness, policy: schedule.stalePolicy });
  // Remote workers over NATS (`deno task worker --nats <url>`), or Web Workers here.
  const remote = config.rollout.nats ?? null;
  const executors: RolloutExecutor[] = remote !== null
    ? await startNatsExecutors(config, schedule.workers, {
      runId: basename(at.runDir),
      log: at.log,
    })
    : await Promise.all(
      Array.from({ length: schedule.workers }, (_, i) => WorkerExecutor.start(`w${i}`, config)),
    );
  const rows = jobRowCount(config);
  const scheduler = new RolloutScheduler({
    mode: schedule.mode,
    executors,
    gate,
    takeRows: () => ctx.stream.take(rows),
    partial: schedule.partial,
    ...(restored !== null ? { restore: restored } : {}),
  });
  // With LoRA the workers, plain models of model.checkpoint, get the merged weights.
  scheduler.publish(await policySnapshot(ctx.model, at.start, ctx.vision));
  const description = `rollout: ${schedule.mode}, ${schedule.workers} worker${
    schedule.workers > 1 ? "s" : ""
  } (${
    remote !== null
      ? `remote workers over NATS ${remote}`
      : `Web Workers on ${(executors[0] as WorkerExecutor).device}`
  }), max staleness ${schedule.maxStaleness}${
    schedule.mode === "async" ? `, stale batches: ${schedule.stalePolicy}` : ""
  }${schedule.partial ? ", partial rollouts" : ""}${
    restored !== null ? `, ${restored.ready.length} batches restored` : ""
  }`;
  const episodes = config.task.env != null;
  return {
    description,
    async next(step) {
      const next = await scheduler.next(step - 1, config.trainer.steps - step + 1);
      const r = next.batch.rollout;
      const counts = scheduler.gate.counts;
      return {
        rollout: r,
        waitS: next.waitS,
        record: {
          "rollout/policy_version": next.batch.policyVersion,
          "rollout/staleness": next.staleness,
          "rollout/dropped": counts.dropped,
          "rollout/regenerated": counts.regenerated,
          "rollout/queue_depth": next.queueDepth,
          "rollout/in_flight": next.inFlight,
          "rollout/worker": Number(/\d+$/.exec(next.batch.worker)?.[0] ?? -1),
          "rollout/worker_tokens_per_s": r.generatedTokens / Math.max(1e-9, r.seconds),
          "time/wait_s": next.waitS,
          ...(schedule.partial ? partialMetrics(next.batch.newestVersion, r.items) : {}),
          ...(episodes ? episodeMetrics(r.items) : {}),
        },
      };
    },
    async afterUpdate(step) {
      scheduler.publish(await policySnapshot(ctx.model, step, ctx.vision));
    },
    checkpoint: (write) => scheduler.checkpoint(write),
    async finish() {
      const g = scheduler.gate;
      const c = g.counts;
      await writeFileAtomic(join(at.runDir, "staleness.json"), JSON.stringify(g.toJSON()));
      return `rollout staleness (batches): used ${c.used}, dropped ${c.dropped}, regenerated ${c.regenerated}; histogram ${
        g.histogram.labels().slice(1).map((l, i) =>
          `${l}:${g.histogram.counts[i] ?? g.histogram.overflow}`
        ).join(" ")
      }`;
    },
    close: () => scheduler.close(),
  };
}

/**
 * The weight snapshot rollout workers load for policy version `version`: the parameters of a
 * plain model of `model.checkpoint` that computes what the policy computes, i.e. the merged
 * weights of a LoRA policy ({@link withMergedParams}), else `model.params`, and with a
 * vision-language policy's `vision` inputs its tower's `visual.*` tensors too (trained or frozen,
 * one snapshot holds what the worker's copy computes with). Workers then hold a plain model
 * whatever the run trains, local (Web Workers) or remote (NATS) alike.
 *
 * @example Usage
 * ```ts
 * import { attachRunLora } from "./lora.ts";
 * import { policySnapshot } from "./scheduled_rollouts.ts";
 * import { loadPolicy } from "./policy.ts";
 * import { applySnapshot } from "@rlvr/infra";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * attachRunLora(model, { rank: 2, alpha: 4, targetModules: ["v_proj"] }, { seed: 0 });
 * const worker = await loadPolicy("builtin:tiny"); // a plain model, no adapters
 * assert.equal(await applySnapshot(worker.model.params, await policySnapshot(model, 3)), 3);
 * worker.model.dispose();
 * model.dispose();
 * ```
 */
export function policySnapshot(
  model: CausalLM,
  version: number,
  vision?: VisionInputs | null,
): Promise<WeightSnapshot> {
  const tower = vision?.modelOf(model)?.tower.params;
  return withMergedParams(
    model,
    (params) => snapshot(tower === undefined ? params : new Map([...params, ...tower]), version),
  );
}
