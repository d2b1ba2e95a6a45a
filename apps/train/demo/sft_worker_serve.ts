/**
 * The loop of a {@link TwoThreadSft} worker (`sft_parallel.ts`): `sft_worker.ts` (text models)
 * and `vl_worker.ts` (vision-language models) call {@link serveSftWorker} with how to build their
 * model and compute its gradients. It answers `init` `{config}` (builds the model) and `step`
 * `{weights, batch, total, microBatch}` (loads the weights, computes the gradients of its part of
 * the batch and answers `{loss, grads}`, one array per parameter in `model.parameters()` order).
 *
 * @module
 */

import { createCpuBackend, setBackend, type Tensor } from "@rlvr/tensor";
import type { SftSequence } from "./sft.ts";

/** A request of the main thread. */
export type SftWorkerRequest<C, S> =
  | { type: "init"; config: C }
  | { type: "step"; weights: Float32Array[]; batch: S[]; total: number; microBatch: number };

/** A model whose parameters the two threads share (a text or a vision-language model). */
export interface HasParameters {
  /** The trained tensors, in the order the gradients travel in. */
  parameters(): Tensor[];
}

/** Accumulates the gradients of `batch` into the parameters' `grad`; returns its loss share. */
export type SftGradients<M, S> = (
  model: M,
  batch: readonly S[],
  options: { total: number; microBatch: number },
) => Promise<number>;

/** The worker's global scope, typed here (as in `loop/rollout_worker.ts`). */
interface WorkerScope {
  onmessage: ((e: MessageEvent) => void) | null;
  postMessage(message: unknown, options?: { transfer?: Transferable[] }): void;
}

/**
 * Serves the requests of the main thread in this worker (see the module doc).
 *
 * @param build Builds the model from the config `init` sends.
 * @param gradients Its gradients of a part of the batch (what the main thread runs on the other
 *   part), returning the loss share.
 *
 * @example Usage
 * ```ts ignore
 * // sft_worker.ts
 * import { CausalLM } from "@rlvr/policy";
 * import { sftGradients } from "./sft.ts";
 * import { serveSftWorker } from "./sft_worker_serve.ts";
 * serveSftWorker((config) => CausalLM.random(config, { seed: 0 }), sftGradients);
 * ```
 */
export function serveSftWorker<C, M extends HasParameters, S extends SftSequence>(
  build: (config: C) => M,
  gradients: SftGradients<M, S>,
): void {
  const scope = globalThis as unknown as WorkerScope;
  let model: M | null = null;
  scope.onmessage = async (e: MessageEvent<SftWorkerRequest<C, S>>) => {
    const m = e.data;
    try {
      if (m.type === "init") {
        // One matmul thread: the main thread computes the other half on the other core. No
        // native BLAS and the oracle's attention: the backend of the pretrain scripts' main
        // thread, whose rounding the shipped checkpoints were made with, on every machine.
        setBackend(createCpuBackend({ threads: 1, blas: "wasm", attention: "ts" }));
        model = build(m.config);
        scope.postMessage({ type: "ready" });
        return;
      }
      const params = model!.parameters();
      params.forEach((p, i) => p.backend.write(p.buffer, m.weights[i]!));
      const loss = await gradients(model!, m.batch, { total: m.total, microBatch: m.microBatch });
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
}
