/**
 * Optimizers and training utilities: {@link AdamW} and {@link SGD} over parameter groups,
 * {@link paramGroupsNoDecay}, gradient clipping ({@link clipGradNorm}) and learning-rate
 * schedules ({@link LrScheduler}, {@link cosineSchedule}, ...), with PyTorch semantics.
 *
 * Design: parameters are updated in place so model references stay valid; optimizer state is
 * owned by the optimizer, allocated once, and serialisable for checkpoint resume.
 *
 * @example Usage
 * ```ts
 * import { AdamW, clipGradNorm, cosineSchedule, LrScheduler, tensor, tidy } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = tensor([3, -2], { requiresGrad: true });
 * const opt = new AdamW([w], { lr: 0.1, weightDecay: 0 });
 * const sched = new LrScheduler(opt, cosineSchedule({ warmupSteps: 5, totalSteps: 100 }));
 * let first = 0, last = 0;
 * for (let i = 0; i < 100; i++) {
 *   const loss = tidy(() => w.square().sum());
 *   loss.backward();
 *   await clipGradNorm([w], 1);
 *   opt.step();
 *   opt.zeroGrad();
 *   sched.step();
 *   const v = await loss.item();
 *   loss.dispose();
 *   if (i === 0) first = v;
 *   last = v;
 * }
 * assert.ok(last < first / 10);
 * opt.dispose();
 * ```
 *
 * @module
 */

export * from "./optimizer.ts";
export * from "./adamw.ts";
export * from "./sgd.ts";
export * from "./param_groups.ts";
export * from "./clip.ts";
export * from "./schedule.ts";
