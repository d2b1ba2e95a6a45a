/**
 * The Web Worker of {@link VlParallelSft} (`vl_sft.ts`; not imported by anything else): a copy
 * of the vision-language model, served by `serveSftWorker` (`sft_worker_serve.ts`) with
 * `vlSftGradients`.
 *
 * @module
 */

import { type VisionLanguageConfig, VisionLanguageModel } from "@rlvr/policy";
import { vlSftGradients } from "./vl_sft.ts";
import { serveSftWorker } from "./sft_worker_serve.ts";

serveSftWorker(
  (config: VisionLanguageConfig) => VisionLanguageModel.random(config, { seed: 0 }),
  vlSftGradients,
);
