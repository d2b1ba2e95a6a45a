/**
 * Data-parallel supervised steps on two CPU cores ({@link TwoThreadSft}; {@link ParallelSft} for
 * text models, `VlParallelSft` of `vl_sft.ts` for vision-language ones): the main thread and one
 * Web Worker each compute the gradients of half the batch, the worker's are added to the main
 * thread's, then one clipped optimizer step. The CPU backend computes on one thread, so this is
 * how the 15-minute budget of `deno task pretrain:cot` uses both cores of the lab machine.
 *
 * Design decisions:
 * - **Deterministic**: the batch is sorted by length and dealt alternately (the two halves get
 *   similar lengths, so neither thread waits long), each half's loss is divided by the whole
 *   batch's trained tokens, and the worker's gradients are always added to the main thread's in
 *   the same order, so the same inputs give the same bytes.
 * - **Weights go out every step** as one `Float32Array` per parameter (3.5 MB for 0.9M
 *   parameters, a copy in memory): the worker holds no optimizer state.
 *
 * @module
 */

import type { CausalLM, ModelConfig } from "@rlvr/policy";
import type { Optimizer } from "@rlvr/tensor";
import type { HasParameters, SftGradients } from "./sft_worker_serve.ts";
import {
  applySftGradients,
  sftGradients,
  type SftSequence,
  type SftStepOptions,
  trainedTokens,
} from "./sft.ts";

type Reply =
  | { type: "ready" }
  | { type: "grads"; loss: number; grads: Float32Array[] }
  | { type: "error"; message: string };

/**
 * The data-parallel step shared by {@link ParallelSft} (text models) and `VlParallelSft`
 * (`vl_sft.ts`): a worker module that answers `init`/`step` (`serveSftWorker` of
 * `sft_worker_serve.ts`) and the gradient function of the main thread's half.
 */
export class TwoThreadSft<M extends HasParameters, S extends SftSequence> {
  readonly #worker: Worker;
  readonly #name: string;
  readonly #gradients: SftGradients<M, S>;
  #pending: ((r: Reply) => void) | null = null;

  /**
   * Starts the worker module `worker` (`init` then sends it the model config).
   *
   * @param worker The worker module's URL.
   * @param name What error messages call the worker.
   * @param gradients The main thread's gradients of its half (the worker runs the same).
   */
  protected constructor(worker: URL, name: string, gradients: SftGradients<M, S>) {
    this.#worker = new Worker(worker.href, { type: "module" });
    this.#name = name;
    this.#gradients = gradients;
    this.#worker.onmessage = (e: MessageEvent<Reply>) => {
      const resolve = this.#pending;
      this.#pending = null;
      resolve?.(e.data);
    };
  }

  #request(message: unknown, transfer: Transferable[] = []): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.#pending = (
        r,
      ) => (r.type === "error" ? reject(new Error(`${this.#name}: ${r.message}`)) : resolve(r));
      this.#worker.postMessage(message, transfer);
    });
  }

  /** Sends the model config to the worker; stops it when that fails. */
  protected async init(config: unknown): Promise<this> {
    try {
      await this.#request({ type: "init", config });
    } catch (e) {
      this.#worker.terminate();
      throw e;
    }
    return this;
  }

  /** One step on `batch` (see the module doc); returns the loss before it. */
  async step(
    model: M,
    optimizer: Optimizer,
    batch: readonly S[],
    options: SftStepOptions = {},
  ): Promise<number> {
    const len = (s: SftSequence) => s.promptIds.length + s.completionIds.length;
    const sorted = batch.slice().sort((a, b) => len(a) - len(b));
    const mine = sorted.filter((_, i) => i % 2 === 0);
    const theirs = sorted.filter((_, i) => i % 2 === 1);
    const total = batch.reduce((a, s) => a + trainedTokens(s), 0);
    const params = model.parameters();
    const microBatch = options.microBatch ?? batch.length;
    let reply: Promise<Reply> | null = null;
    if (theirs.length > 0) {
      const weights = await Promise.all(
        params.map(async (p) => Float32Array.from(await p.data() as Float32Array)),
      );
      reply = this.#request(
        { type: "step", weights, batch: theirs, total, microBatch },
        weights.map((w) => w.buffer),
      );
    }
    let loss = await this.#gradients(model, mine, { total, microBatch });
    if (reply !== null) {
      const r = await reply as { loss: number; grads: Float32Array[] };
      loss += r.loss;
      for (let i = 0; i < params.length; i++) {
        const g = params[i]!.grad!;
        const sum = Float32Array.from(await g.data() as Float32Array);
        const other = r.grads[i]!;
        for (let j = 0; j < sum.length; j++) sum[j]! += other[j]!;
        g.backend.write(g.buffer, sum);
      }
    }
    await applySftGradients(params, optimizer);
    return loss;
  }

  /** Stops the worker. */
  close(): void {
    this.#worker.terminate();
  }
}

/**
 * Two-thread {@link sftStep} of a text model: see the module doc.
 *
 * @example Usage
 * ```ts
 * import { ParallelSft } from "./sft_parallel.ts";
 * import { loadPolicy } from "../loop/policy.ts";
 * import { AdamW } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const { model } = await loadPolicy("builtin:tiny");
 * const opt = new AdamW(model.parameters(), { lr: 1e-3 });
 * const sft = await ParallelSft.start(model.config);
 * const seq = (n: number) => ({ promptIds: [1, 20 + n], completionIds: [22, 2] });
 * const loss = await sft.step(model, opt, [seq(1), seq(2), seq(3)]);
 * assert.ok(loss > 0);
 * sft.close();
 * opt.dispose();
 * model.dispose();
 * ```
 */
export class ParallelSft extends TwoThreadSft<CausalLM, SftSequence> {
  private constructor() {
    super(new URL("./sft_worker.ts", import.meta.url), "sft worker", sftGradients);
  }

  /** Starts the worker with a model of `config` (its weights come with every step). */
  static start(config: ModelConfig): Promise<ParallelSft> {
    return new ParallelSft().init(config);
  }
}
