/**
 * Supervised steps of a vision-language model: `sft.ts`'s token-mean NLL with each sequence's
 * image put into its image tokens through the model's `forwardHook`, on one thread
 * ({@link vlSftGradients}) or on two ({@link VlParallelSft}: the main thread and a Web Worker,
 * `vl_worker.ts`, each compute half the batch, as `sft_parallel.ts` does for text models).
 *
 * Design decisions:
 * - **Images travel as the processor's float32 patches** with their grids, so the worker runs no
 *   image code and both threads see the same values.
 * - **Deterministic**: the batch is sorted by length and dealt alternately, each half's loss is
 *   divided by the whole batch's trained tokens, the worker's gradients are added to the main
 *   thread's in parameter order, then one clipped optimizer step (`applySftGradients`): the same
 *   inputs give the same bytes.
 *
 * @module
 */

import type { GridThw, VisionLanguageConfig, VisionLanguageModel } from "@rlvr/policy";
import { type Optimizer, type Tensor, tensor } from "@rlvr/tensor";
import { applySftGradients, sftGradients, type SftSequence, type SftStepOptions } from "./sft.ts";
import { TwoThreadSft } from "./sft_parallel.ts";

/** One SFT sequence of a vision-language model: prompt, completion and the prompt's images. */
export interface VlSequence extends SftSequence {
  /** The processor's patches of the prompt's images (rows of `patchDim` values) and grids. */
  image: { pixelValues: Float32Array; gridThw: readonly GridThw[] };
}

/**
 * Accumulates the gradients of the supervised loss on `batch` into the parameters' `grad`
 * (decoder and tower) and returns the loss (its share, with `total`), as `sftGradients` does for
 * a text model.
 *
 * @example Usage
 * ```ts
 * import { vlSftGradients } from "./vl_sft.ts";
 * import { VL_PROCESSOR, vlModelConfig, vlPrompt, vlTokenizer } from "./pretrain_vl.ts";
 * import { VisionLanguageModel } from "@rlvr/policy";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const model = VisionLanguageModel.random(vlModelConfig(), { seed: 0 });
 * const p = vlPrompt(countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 0), vlTokenizer(), VL_PROCESSOR);
 * const loss = await vlSftGradients(model, [{ promptIds: p.ids, completionIds: [20, 2], image: p }]);
 * assert.ok(loss > 0);
 * assert.ok(model.parameters().every((t) => t.grad !== null));
 * model.dispose();
 * ```
 */
export async function vlSftGradients(
  model: VisionLanguageModel,
  batch: readonly VlSequence[],
  options: SftStepOptions & { total?: number } = {},
): Promise<number> {
  const made: Tensor[] = [];
  try {
    return await sftGradients(model.lm, batch, {
      ...options,
      forwardHook: (part) => {
        const images = part.map((s) => {
          const { pixelValues, gridThw } = (s as VlSequence).image;
          const rows = gridThw.reduce((a, g) => a + g[0] * g[1] * g[2], 0);
          const t = tensor(pixelValues, { shape: [rows, pixelValues.length / rows] });
          made.push(t);
          return { pixelValues: t, gridThw };
        });
        return model.forwardHook((r) => images[r]);
      },
    });
  } finally {
    for (const t of made) t.dispose();
  }
}

/**
 * One supervised step of a vision-language model on one thread: {@link vlSftGradients}, then
 * the clipped optimizer step of `sft.ts`. Returns the loss before it.
 */
export async function vlSftStep(
  model: VisionLanguageModel,
  optimizer: Optimizer,
  batch: readonly VlSequence[],
  options: SftStepOptions = {},
): Promise<number> {
  const loss = await vlSftGradients(model, batch, options);
  await applySftGradients(model.parameters(), optimizer);
  return loss;
}

/**
 * Two-thread {@link vlSftStep}: see the module doc.
 *
 * @example Usage
 * ```ts
 * import { VlParallelSft, vlSftStep } from "./vl_sft.ts";
 * import { VL_PROCESSOR, vlModelConfig, vlPrompt, vlTokenizer } from "./pretrain_vl.ts";
 * import { VisionLanguageModel } from "@rlvr/policy";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import { AdamW } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const task = countShapesTask({ size: 56, shapeSize: [8, 10] });
 * const batch = [0, 1, 2].map((i) => {
 *   const p = vlPrompt(task.row(0, i), vlTokenizer(), VL_PROCESSOR);
 *   return { promptIds: p.ids, completionIds: [20 + i, 2], image: p };
 * });
 * const losses = [];
 * for (const parallel of [false, true]) {
 *   const model = VisionLanguageModel.random(vlModelConfig(), { seed: 0 });
 *   const opt = new AdamW(model.parameters(), { lr: 1e-3 });
 *   const sft = parallel ? await VlParallelSft.start(model.config) : null;
 *   losses.push(sft ? await sft.step(model, opt, batch) : await vlSftStep(model, opt, batch));
 *   sft?.close();
 *   opt.dispose();
 *   model.dispose();
 * }
 * assert.ok(Math.abs(losses[0]! - losses[1]!) < 1e-5);
 * ```
 */
export class VlParallelSft extends TwoThreadSft<VisionLanguageModel, VlSequence> {
  private constructor() {
    super(new URL("./vl_worker.ts", import.meta.url), "vl sft worker", vlSftGradients);
  }

  /** Starts the worker with a model of `config` (its weights come with every step). */
  static start(config: VisionLanguageConfig): Promise<VlParallelSft> {
    return new VlParallelSft().init(config);
  }
}
