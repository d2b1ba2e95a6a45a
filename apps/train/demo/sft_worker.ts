/**
 * The Web Worker of {@link ParallelSft} (`sft_parallel.ts`; not imported by anything else): a
 * copy of the text model, served by `serveSftWorker` (`sft_worker_serve.ts`) with `sftGradients`.
 *
 * @module
 */

import { CausalLM, type ModelConfig } from "@rlvr/policy";
import { sftGradients } from "./sft.ts";
import { serveSftWorker } from "./sft_worker_serve.ts";

serveSftWorker((config: ModelConfig) => CausalLM.random(config, { seed: 0 }), sftGradients);
