/**
 * Loading the policy a config names: `builtin:tiny` is the checkpoint shipped in
 * `apps/train/checkpoints/tiny/` (written by `deno task pretrain`), anything else a Hugging
 * Face checkpoint folder with its tokenizer.
 *
 * Design decision: the built-in name resolves relative to this module, not the working
 * directory, so `deno task train` works from any directory of a fresh clone.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { CausalLM, loadCheckpoint, loadTokenizer, type Tokenizer } from "@rlvr/policy";
import type { Tensor } from "@rlvr/tensor";

/** The folder of the shipped tiny checkpoint. */
export const TINY_CHECKPOINT_DIR: string = fileURLToPath(
  new URL("../checkpoints/tiny/", import.meta.url),
);

/** A loaded policy. */
export interface LoadedPolicy {
  /** The model. */
  model: CausalLM;
  /** Its tokenizer. */
  tokenizer: Tokenizer;
  /** The folder it was read from. */
  dir: string;
  /** Non-parameter tensors found beside the weights (e.g. a value head). */
  extra: Map<string, Tensor>;
}

/**
 * The folder of `model.checkpoint`: {@link TINY_CHECKPOINT_DIR} for `builtin:tiny`, else the
 * path itself.
 *
 * @example Usage
 * ```ts
 * import { checkpointDir, TINY_CHECKPOINT_DIR } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * assert.equal(checkpointDir("builtin:tiny"), TINY_CHECKPOINT_DIR);
 * assert.equal(checkpointDir("models/x"), "models/x");
 * ```
 */
export function checkpointDir(checkpoint: string): string {
  if (checkpoint === "builtin:tiny") return TINY_CHECKPOINT_DIR;
  return checkpoint;
}

/**
 * Loads the model and tokenizer of `checkpoint` (`v_head.*` tensors are returned in `extra`).
 *
 * @example Usage
 * ```ts
 * import { loadPolicy } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const p = await loadPolicy("builtin:tiny");
 * assert.equal(p.model.config.vocabSize, p.tokenizer.vocabSize);
 * p.model.dispose();
 * ```
 */
export async function loadPolicy(checkpoint: string): Promise<LoadedPolicy> {
  const dir = checkpointDir(checkpoint);
  const ckpt = await loadCheckpoint(dir, { allowExtra: ["v_head.*"] });
  const model = CausalLM.fromParams(ckpt.config, ckpt.params);
  const tokenizer = await loadTokenizer(dir);
  return { model, tokenizer, dir, extra: ckpt.extra };
}
