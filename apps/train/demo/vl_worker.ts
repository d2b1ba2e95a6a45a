/**
 * The Web Worker of {@link VlParallelSft} (`vl_sft.ts`; not imported by anything else): it holds
 * a copy of the vision-language model and answers `init` `{config}` (builds it) and `step`
 * `{weights, batch, total, microBatch}` (loads the weights, computes the gradients of its part
 * of the batch with `vlSftGradients` and answers `{loss, grads}`, one array per parameter in
 * `model.parameters()` order).
 *
 * @module
 */

import { type VisionLanguageConfig, VisionLanguageModel } from "@rlvr/policy";
import { createCpuBackend, setBackend } from "@rlvr/tensor";
import { type VlSequence, vlSftGradients } from "./vl_sft.ts";

/** A request of the main thread. */
export type VlWorkerRequest =
  | { type: "init"; config: VisionLanguageConfig }
  | {
    type: "step";
    weights: Float32Array[];
    batch: VlSequence[];
    total: number;
    microBatch: number;
  };

let model: VisionLanguageModel | null = null;

/** The worker's global scope, typed here (as in `sft_worker.ts`). */
interface WorkerScope {
  onmessage: ((e: MessageEvent<VlWorkerRequest>) => void) | null;
  postMessage(message: unknown, options?: { transfer?: Transferable[] }): void;
}
const scope = globalThis as unknown as WorkerScope;

scope.onmessage = async (e: MessageEvent<VlWorkerRequest>) => {
  const m = e.data;
  try {
    if (m.type === "init") {
      // One matmul thread, no native BLAS, the oracle's attention: the same backend as the main
      // thread of `pretrain_vl.ts`, so both halves round alike on every machine.
      setBackend(createCpuBackend({ threads: 1, blas: "wasm", attention: "ts" }));
      model = VisionLanguageModel.random(m.config, { seed: 0 });
      scope.postMessage({ type: "ready" });
      return;
    }
    const params = model!.parameters();
    params.forEach((p, i) => p.backend.write(p.buffer, m.weights[i]!));
    const loss = await vlSftGradients(model!, m.batch, {
      total: m.total,
      microBatch: m.microBatch,
    });
    const grads = await Promise.all(
      params.map(async (p) => Float32Array.from(await p.grad!.data() as Float32Array)),
    );
    for (const p of params) {
      p.grad?.dispose();
      p.grad = null;
    }
    scope.postMessage({ type: "grads", loss, grads }, { transfer: grads.map((g) => g.buffer) });
  } catch (err) {
    scope.postMessage({ type: "error", message: (err as Error).stack ?? String(err) });
  }
};
