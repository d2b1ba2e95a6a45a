/**
 * A checkpoint held in memory: what a run directory's `checkpoints/step-N/` keeps of a training
 * session (the trained tensors, AdamW's moments, the step, the data position, the prompt
 * source and adaptive KL state, the rollout scheduler's batches), as copies a browser tab can
 * keep, so a run stopped after step N continues in a new session exactly as an uninterrupted one.
 *
 * Design decisions:
 * - **Only the trained tensors are copied** (`model.namedParameters()`: the full model, or the
 *   LoRA adapters and value head), since nothing else of the learner changes during training:
 *   the session that continues gets a learner loaded the same way as the first (same
 *   `model.checkpoint`, same config) and {@link resumeLearner} writes the copies into it.
 * - **Bit for bit**: the copies are the tensors' own f32 values and the optimizer's own buffers
 *   (`Optimizer.state`), as a checkpoint folder stores them.
 *
 * @module
 */

import type { OptimizerState } from "@rlvr/tensor";
import type { Learner } from "./learner.ts";
import type { SessionCheckpoint, SessionState } from "./run_sink.ts";
import type { SchedulerState } from "./scheduler.ts";

/** A checkpoint in memory (see the module doc). */
export interface MemoryCheckpoint extends SessionState {
  /** The trained tensors' values by name (`model.namedParameters()`). */
  weights: Map<string, Float32Array>;
  /** The optimizer's state (step count, moments). */
  optimizer: OptimizerState;
  /** The rollout scheduler's outstanding batches (asynchronous modes), else null. */
  rollouts: SchedulerState | null;
}

/**
 * Copies what a checkpoint hook receives into a {@link MemoryCheckpoint}.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { loadLearner } from "./learner.ts";
 * import { captureCheckpoint } from "./memory_checkpoint.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const learner = await loadLearner(config, null);
 * const c = await captureCheckpoint({
 *   config, learner, step: 0, seed: 0, dataPosition: 0, sampling: null, rollouts: null,
 * });
 * assert.equal(c.weights.size, learner.model.namedParameters().size);
 * learner.dispose();
 * ```
 */
export async function captureCheckpoint(c: SessionCheckpoint): Promise<MemoryCheckpoint> {
  const weights = new Map<string, Float32Array>();
  for (const [name, t] of c.learner.model.namedParameters()) {
    weights.set(name, Float32Array.from(await t.data()));
  }
  return {
    step: c.step,
    seed: c.seed,
    dataPosition: c.dataPosition,
    sampling: c.sampling === null ? null : structuredClone(c.sampling),
    weights,
    optimizer: await c.learner.optimizer.state(),
    rollouts: c.rollouts === null ? null : structuredClone(c.rollouts),
  };
}

/**
 * Writes a {@link MemoryCheckpoint} into a learner loaded as the checkpointed one was (same
 * config, no checkpoint path) and returns it as a resumed learner (`start` and `dataPosition`
 * the checkpoint's), to create a session with (`sampling: checkpoint.sampling`). Throws when a
 * tensor is missing or of another size, naming it.
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { loadLearner } from "./learner.ts";
 * import { captureCheckpoint, resumeLearner } from "./memory_checkpoint.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const learner = await loadLearner(config, null);
 * const c = await captureCheckpoint({
 *   config, learner, step: 3, seed: 0, dataPosition: 48, sampling: null, rollouts: null,
 * });
 * const resumed = resumeLearner(learner, c);
 * assert.equal(resumed.start, 3);
 * assert.equal(resumed.dataPosition, 48);
 * learner.dispose();
 * ```
 */
export function resumeLearner(learner: Learner, checkpoint: MemoryCheckpoint): Learner {
  const params = learner.model.namedParameters();
  const missing = [...checkpoint.weights.keys()].filter((n) => !params.has(n));
  const absent = [...params.keys()].filter((n) => !checkpoint.weights.has(n));
  if (missing.length > 0 || absent.length > 0) {
    throw new Error(
      `resumeLearner: the checkpoint of step ${checkpoint.step} does not fit this learner: ${
        [
          ...missing.map((n) => `${n} is not trained here`),
          ...absent.map((n) => `${n} is not in the checkpoint`),
        ]
          .slice(0, 4).join("; ")
      }; load the learner with the config the checkpoint was made with`,
    );
  }
  for (const [name, t] of params) {
    const values = checkpoint.weights.get(name)!;
    if (values.length !== t.size) {
      throw new Error(
        `resumeLearner: ${name} has ${values.length} values in the checkpoint of step ${checkpoint.step} and ${t.size} in this learner; load the learner with the config the checkpoint was made with`,
      );
    }
    t.backend.write(t.buffer, values);
  }
  learner.optimizer.loadState(checkpoint.optimizer);
  return { ...learner, start: checkpoint.step, dataPosition: checkpoint.dataPosition };
}
