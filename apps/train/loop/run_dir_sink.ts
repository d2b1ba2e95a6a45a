/**
 * The {@link RunSink} of `deno task train`: a training session's records go to its run
 * directory's JSONL files (`RunDir`, with its trackers), and its checkpoints to
 * `checkpoints/step-N/`: the model (or LoRA's adapters), the optimizer, the data position, the
 * rollout scheduler's batches, the sampling state, and with LoRA at the last step the merged
 * model (`merged/`).
 *
 * Design decision: the caller's `onStep` and `onEval` run here, right after their record is
 * written (before the step's samples), as they always have.
 *
 * @module
 */

import { join } from "node:path";
import type { SampleRecord } from "../run/records.ts";
import type { RunDir } from "../run/run_dir.ts";
import { LORA_FILES } from "./lora.ts";
import { saveMergedModel } from "./lora_files.ts";
import type { EvalLine, MetricsRecord, RunSink, SessionCheckpoint } from "./run_sink.ts";
import { saveSamplingState, saveSchedulerState, saveTrainState } from "./state.ts";

/** What a {@link RunDirSink} calls after writing a record. */
export interface RunDirHooks {
  /** Called with each step's metrics record, after it is written. */
  onStep?: (record: MetricsRecord) => void | Promise<void>;
  /** Called with each held-out evaluation, after it is written. */
  onEval?: (record: EvalLine) => void | Promise<void>;
}

/**
 * A run directory as a {@link RunSink} (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { RunDir } from "../run/run_dir.ts";
 * import { RunDirSink } from "./run_dir_sink.ts";
 * import assert from "node:assert/strict";
 * const root = await Deno.makeTempDir();
 * const run = await RunDir.create(root, "demo");
 * const seen: number[] = [];
 * const sink = new RunDirSink(run, { onEval: (r) => void seen.push(r.step!) });
 * await sink.appendEval({ step: 0, "pass@1": 0.25, "pass@k": 0.5, k: 4, n: 4 });
 * assert.deepEqual((await run.readEval()).map((r) => r.step), [0]);
 * assert.deepEqual(seen, [0]);
 * await run.close();
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export class RunDirSink implements RunSink {
  /** The run directory written to. */
  readonly run: RunDir;
  readonly #hooks: RunDirHooks;

  /** A sink writing to `run`, calling `hooks` after each record they watch. */
  constructor(run: RunDir, hooks: RunDirHooks = {}) {
    this.run = run;
    this.#hooks = hooks;
  }

  /** Appends to `metrics.jsonl` (and the trackers), then calls `onStep`. */
  async appendMetrics(record: MetricsRecord): Promise<void> {
    await this.run.appendMetrics(record);
    await this.#hooks.onStep?.(record);
  }

  /** Appends to `eval.jsonl` (and the trackers), then calls `onEval`. */
  async appendEval(record: EvalLine): Promise<void> {
    await this.run.appendEval(record);
    await this.#hooks.onEval?.(record);
  }

  /** Appends to `eval_samples.jsonl`. */
  async appendEvalSample(record: SampleRecord): Promise<void> {
    await this.run.appendEvalSample(record);
  }

  /** Appends to `samples.jsonl` (and the trackers). */
  async appendSample(record: SampleRecord): Promise<void> {
    await this.run.appendSample(record);
  }

  /** Writes `checkpoints/step-N/` and marks it complete; returns its folder. */
  async checkpoint(c: SessionCheckpoint): Promise<string> {
    const { config, learner, step } = c;
    const { model, tokenizer, optimizer, init } = learner;
    const vlm = learner.vision?.modelOf(model);
    const visionSave = vlm === undefined
      ? undefined
      : { model: vlm, preprocessorConfig: init.vision?.preprocessorConfig ?? null };
    const dir = await this.run.beginCheckpoint(step);
    await saveTrainState(dir, model, tokenizer, optimizer, {
      step,
      seed: c.seed,
      dataPosition: c.dataPosition,
    }, {
      generationConfig: init.generationConfig,
      baseModel: config.model.checkpoint,
      ...(visionSave !== undefined ? { vision: visionSave } : {}),
    });
    if (c.rollouts !== null) await saveSchedulerState(dir, c.rollouts);
    if (c.sampling !== null) await saveSamplingState(dir, c.sampling);
    if (config.model.lora != null && step === config.trainer.steps) {
      await saveMergedModel(
        join(dir, LORA_FILES.merged),
        model,
        tokenizer,
        init.generationConfig,
        visionSave,
      );
    }
    await this.run.completeCheckpoint(step);
    return dir;
  }
}
