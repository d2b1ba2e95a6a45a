// A Qwen2.5-VL checkpoint folder (model_type "qwen2_5_vl": window-attention tower) loads through
// loadPolicy and policyFromFiles as a vision-language policy, and generates with an image.

import assert from "node:assert/strict";
import { join } from "node:path";
import { createImage, processQwen2VLImages } from "@rlvr/image";
import {
  expandImageTokens,
  generate,
  imageInputs,
  visionConfig,
  visionLanguageConfig,
  VisionLanguageModel,
  vlConfigFromHf,
} from "@rlvr/policy";
import { saveVisionLanguageModel } from "@rlvr/policy/fs";
import { loadPolicy, TINY_VL_CHECKPOINT_DIR } from "./policy.ts";
import { policyFromFiles } from "./policy_files.ts";

const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "generation_config.json"];

/** A tiny Qwen2.5-VL folder: tiny-vl's decoder sizes, tokenizer and image tokens, a new tower. */
async function tinyQwen25Folder(dir: string): Promise<VisionLanguageModel> {
  const base = vlConfigFromHf(
    JSON.parse(await Deno.readTextFile(join(TINY_VL_CHECKPOINT_DIR, "config.json"))),
  );
  const config = visionLanguageConfig({
    ...base,
    vision: visionConfig({
      kind: "qwen2_5_vl",
      depth: 2,
      embedDim: 16,
      numHeads: 2,
      intermediateSize: 24,
      windowSize: 56, // 2×2 merged tokens of 14-pixel patches
      fullattBlockIndexes: [1],
      outHiddenSize: base.text.hiddenSize,
    }),
  });
  const model = VisionLanguageModel.random(config, { seed: 5, std: 0.1 });
  await saveVisionLanguageModel(dir, model);
  for (const f of TOKENIZER_FILES) {
    await Deno.copyFile(join(TINY_VL_CHECKPOINT_DIR, f), join(dir, f));
  }
  // Qwen2.5-VL's processor is Qwen2-VL's; a 2×2 merge and up to 112×112 pixels here.
  const pre = JSON.parse(
    await Deno.readTextFile(join(TINY_VL_CHECKPOINT_DIR, "preprocessor_config.json")),
  );
  await Deno.writeTextFile(
    join(dir, "preprocessor_config.json"),
    JSON.stringify({
      ...pre,
      processor_class: "Qwen2_5_VLProcessor",
      merge_size: 2,
      min_pixels: 3136,
      max_pixels: 12544,
      size: { shortest_edge: 3136, longest_edge: 12544 },
    }),
  );
  return model;
}

Deno.test("loadPolicy: a Qwen2.5-VL folder (model_type qwen2_5_vl) is a vision-language policy with its window-attention tower, and generates with an image", async () => {
  const dir = await Deno.makeTempDir();
  const saved = await tinyQwen25Folder(dir);
  const policy = await loadPolicy(dir);
  const files: Record<string, Uint8Array> = {};
  for await (const e of Deno.readDir(dir)) files[e.name] = await Deno.readFile(join(dir, e.name));
  const fromFiles = await policyFromFiles(files, "qwen25");
  try {
    assert.ok(policy.vision !== null && fromFiles.vision !== null);
    const model = policy.vision.model;
    assert.equal(model.config.vision.kind, "qwen2_5_vl");
    assert.deepEqual(model.config, saved.config);
    assert.deepEqual(fromFiles.vision.model.config, saved.config);
    assert.equal(policy.vision.processor.mergeSize, 2);
    assert.equal(policy.model, model.lm);
    for (const [name, t] of saved.params) {
      assert.deepEqual(await model.params.get(name)!.data(), await t.data(), name);
    }
    // A 100×80 image (width × height): resized to 112×84 (multiples of 28), 6×8 patches (rows ×
    // columns), 3×4 merged tokens in 2×2 windows (the bottom two cut by the image's edge).
    const image = createImage(100, 80, { fill: [0, 0, 0] });
    image.data.forEach((_, i) => image.data[i] = (i * 37) % 256);
    const px = processQwen2VLImages([image], policy.vision.processor);
    assert.deepEqual(px.gridThw, [[1, 6, 8]]);
    const prompt = expandImageTokens(
      [
        model.config.visionStartTokenId,
        model.config.imageTokenId,
        model.config.visionEndTokenId,
        ...policy.tokenizer.encode("How many?"),
      ],
      model.config.imageTokenId,
      px.imageTokenCounts,
    );
    const inputs = imageInputs(px);
    const out = await generate(policy.model, [prompt], {
      maxNewTokens: 3,
      sampler: { temperature: 0, seed: 0 },
      eosTokenIds: [],
      forwardHook: model.forwardHook(() => inputs),
    });
    assert.equal(out.sequences[0]!.tokens.length, 3);
    assert.ok(out.sequences[0]!.logprobs.every(Number.isFinite));
    inputs.pixelValues.dispose();
  } finally {
    saved.dispose();
    policy.model.dispose();
    fromFiles.model.dispose();
    await Deno.remove(dir, { recursive: true });
  }
});
