/**
 * The Web Worker of {@link ParallelSft} (`sft_parallel.ts`; not imported by anything else): it
 * holds a copy of the model and answers `init` `{config}` (builds it) and `step` `{weights,
 * batch, total, microBatch}` (loads the weights, computes the gradients of its part of the batch
 * with `sftGradients` and answers `{loss, grads}`, one array per parameter in
 * `model.parameters()` order).
 *
 * @module
 */

import { CausalLM, type ModelConfig } from "@rlvr/policy";
import { createCpuBackend, setBackend } from "@rlvr/tensor";
import { sftGradients, type SftSequence } from "./sft.ts";

/** A request of the main thread. */
export type SftWorkerRequest =
  | { type: "init"; config: ModelConfig }
  | {
    type: "step";
    weights: Float32Array[];
    batch: SftSequence[];
    total: number;
    microBatch: number;
  };

let model: CausalLM | null = null;

/** The worker's global scope, typed here (as in `loop/rollout_worker.ts`). */
interface WorkerScope {
  onmessage: ((e: MessageEvent<SftWorkerRequest>) => void) | null;
  postMessage(message: unknown, options?: { transfer?: Transferable[] }): void;
}
const scope = globalThis as unknown as WorkerScope;

scope.onmessage = async (e: MessageEvent<SftWorkerRequest>) => {
  const m = e.data;
  try {
    if (m.type === "init") {
      // One matmul thread: the main thread computes the other half on the other core. No
      // native BLAS and the oracle's attention: the shipped checkpoints were made with the
      // WebAssembly matmul's and the float64 attention loops' rounding.
      setBackend(createCpuBackend({ threads: 1, blas: "wasm", attention: "ts" }));
      model = CausalLM.random(m.config, { seed: 0 });
      scope.postMessage({ type: "ready" });
      return;
    }
    const params = model!.parameters();
    params.forEach((p, i) => p.backend.write(p.buffer, m.weights[i]!));
    const loss = await sftGradients(model!, m.batch, { total: m.total, microBatch: m.microBatch });
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
