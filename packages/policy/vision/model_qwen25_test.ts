// A Qwen2.5-VL VisionLanguageModel: logits against the float64 references (the Qwen2.5-VL tower
// of _test_reference_25.ts feeding the decoder's), Hugging Face folders (both name layouts)
// loading bit for bit, and generation with images.

import assert from "node:assert/strict";
import { noGrad, Rng, type Tensor, tensor } from "@rlvr/tensor";
import { assertClose } from "@rlvr/tensor/testing";
import {
  generate,
  type GridThw,
  loadCheckpointFromFiles,
  loadVisionLanguageModelFromFiles,
  modelConfig,
  visionConfig,
  type VisionLanguageConfig,
  visionLanguageConfig,
  VisionLanguageModel,
  vlConfigFromHf,
  vlConfigToHf,
} from "@rlvr/policy";
import { loadVisionLanguageModel, saveVisionLanguageModel } from "@rlvr/policy/fs";
import { hostParams } from "../_test_reference.ts";
import { randomPixels, refVlLogits, saveNewerLayout, visionHostParams } from "./_test_reference.ts";
import { refTower25 } from "./_test_reference_25.ts";

const IMAGE = 29;
const START = 30;
const END = 31;

function config(): VisionLanguageConfig {
  return visionLanguageConfig({
    text: modelConfig({
      modelType: "qwen2",
      vocabSize: 32,
      hiddenSize: 16,
      intermediateSize: 24,
      numLayers: 2,
      numHeads: 2,
      numKvHeads: 1,
      tieWordEmbeddings: true,
    }),
    vision: visionConfig({
      kind: "qwen2_5_vl",
      depth: 2,
      embedDim: 8,
      numHeads: 2,
      intermediateSize: 12,
      patchSize: 2,
      windowSize: 8, // 2×2 merged tokens
      fullattBlockIndexes: [1],
      outHiddenSize: 16,
    }),
    imageTokenId: IMAGE,
    visionStartTokenId: START,
    visionEndTokenId: END,
    mropeSection: [1, 2, 1],
  });
}

const readFiles = async (dir: string): Promise<Record<string, Uint8Array>> => {
  const files: Record<string, Uint8Array> = {};
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile) files[e.name] = await Deno.readFile(`${dir}/${e.name}`);
  }
  return files;
};

async function assertSameBits(a: ReadonlyMap<string, Tensor>, b: ReadonlyMap<string, Tensor>) {
  assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort());
  for (const [name, t] of a) {
    const x = await t.data();
    const y = await b.get(name)!.data();
    assert.deepEqual(
      new Uint32Array(x.buffer, x.byteOffset, x.length),
      new Uint32Array(y.buffer, y.byteOffset, y.length),
      name,
    );
  }
}

// Tolerance against the float64 reference: rtol 1e-4, atol 1e-5, as the Qwen2-VL model's test.
Deno.test("VisionLanguageModel (qwen2_5_vl): logits equal the float64 reference (window tower, scatter, M-RoPE decoder), two images in a row and left padding", async () => {
  const c = config();
  for (const seed of [1, 2]) {
    const host = {
      lm: hostParams(c.text, seed),
      vision: visionHostParams(c.vision, seed + 1),
    };
    // Row 0: a 3×2 merged image (two windows: 2×2 and 1×2) and a 1×1 one; row 1: a 2×3 image.
    const grids: GridThw[][] = [[[1, 6, 4], [1, 2, 2]], [[1, 4, 6]]];
    const prompts = grids.map((g) => [
      5,
      ...g.flatMap(([t, h, w]) => [START, ...new Array((t * h * w) / 4).fill(IMAGE), END, 7]),
    ]);
    const width = Math.max(...prompts.map((p) => p.length));
    const ids = prompts.map((p) => [...new Array(width - p.length).fill(0), ...p]);
    const mask = prompts.map((p) => [...new Array(width - p.length).fill(0), ...p.map(() => 1)]);
    const grid = grids.flat();
    const patches = grid.reduce((s, [t, h, w]) => s + t * h * w, 0);
    const pixels = randomPixels(new Rng(seed + 2), patches, 24);
    const shapes = VisionLanguageModel.parameterShapes(c);
    const params = new Map<string, Tensor>();
    for (const [name, a] of [...host.lm, ...host.vision]) {
      params.set(name, tensor(a, { shape: shapes.get(name)! }));
    }
    const model = VisionLanguageModel.fromParams(c, params);
    try {
      const { logits } = noGrad(() =>
        model.forward(ids, { mask, images: { pixelValues: tensor(pixels), gridThw: grid } })
      );
      const features = refTower25(c.vision, host.vision, pixels, grid);
      const want = refVlLogits(c, host.lm, { ids, mask, grid, features });
      assertClose(await logits.toArray(), want, { rtol: 1e-4, atol: 1e-5 });
      logits.dispose();
    } finally {
      model.dispose();
    }
  }
});

Deno.test("loadVisionLanguageModel (qwen2_5_vl): a random-weight checkpoint in HF layout (original and newer names, text_config) loads bit for bit with the same logits; save/load round trip is exact", async () => {
  const c = config();
  const model = VisionLanguageModel.random(c, { seed: 9, std: 0.3 });
  const grid: GridThw[] = [[1, 6, 4]];
  const pixels = tensor(randomPixels(new Rng(10), 24, 24));
  const ids = [[START, ...new Array(6).fill(IMAGE), END, 3, 4]];
  const images = { pixelValues: pixels, gridThw: grid };
  const want = await noGrad(() => model.forward(ids, { images })).logits.toArray();
  const dir = await Deno.makeTempDir();
  try {
    await saveVisionLanguageModel(`${dir}/a`, model, { maxShardBytes: 4096 });
    const hf = JSON.parse(await Deno.readTextFile(`${dir}/a/config.json`));
    assert.equal(hf.model_type, "qwen2_5_vl");
    assert.deepEqual(hf.architectures, ["Qwen2_5_VLForConditionalGeneration"]);
    assert.deepEqual(hf.vision_config, {
      depth: 2,
      hidden_size: 8,
      intermediate_size: 12,
      num_heads: 2,
      hidden_act: "silu",
      in_chans: 3,
      in_channels: 3,
      patch_size: 2,
      temporal_patch_size: 2,
      spatial_merge_size: 2,
      window_size: 8,
      fullatt_block_indexes: [1],
      out_hidden_size: 16,
    });
    const index = JSON.parse(await Deno.readTextFile(`${dir}/a/model.safetensors.index.json`));
    for (const name of ["visual.blocks.0.mlp.gate_proj.weight", "visual.merger.ln_q.weight"]) {
      assert.ok(Object.keys(index.weight_map).includes(name), name);
    }
    assert.ok(!Object.keys(index.weight_map).includes("visual.merger.ln_q.bias"));
    // The newer transformers layout: model.visual.*, model.language_model.*, text_config (whose
    // model_type is "qwen2_5_vl_text"), one file.
    await saveNewerLayout(`${dir}/b`, model, {
      textModelType: "qwen2_5_vl_text",
      visionExtra: { tokens_per_second: 2 },
    });
    for (const sub of ["a", "b"]) {
      const loaded = await loadVisionLanguageModel(`${dir}/${sub}`);
      assert.deepEqual(loaded.config, c, sub);
      await assertSameBits(loaded.params, model.params);
      const got = await noGrad(() => loaded.forward(ids, { images })).logits.toArray();
      assert.deepEqual(got, want, sub);
      // From bytes (what a browser loads), too.
      const fromFiles = await loadVisionLanguageModelFromFiles(await readFiles(`${dir}/${sub}`));
      await assertSameBits(fromFiles.params, model.params);
      fromFiles.dispose();
      // Save again: the same config and tensors (bit for bit).
      await saveVisionLanguageModel(`${dir}/${sub}-again`, loaded);
      const again = await loadVisionLanguageModel(`${dir}/${sub}-again`);
      assert.deepEqual(again.config, c);
      await assertSameBits(again.params, model.params);
      again.dispose();
      loaded.dispose();
    }
    // The text-model loader takes the folder's decoder (and the tower's tensors as extras).
    const ckpt = await loadCheckpointFromFiles(await readFiles(`${dir}/b`), {
      allowExtra: /^visual\./,
    });
    assert.deepEqual(ckpt.config, c.text);
    assert.equal(ckpt.extra.size, model.tower.params.size);
    for (const t of [...ckpt.params.values(), ...ckpt.extra.values()]) t.dispose();
    assert.deepEqual(vlConfigFromHf(vlConfigToHf(c)), c);
  } finally {
    await Deno.remove(dir, { recursive: true });
    pixels.dispose();
    model.dispose();
  }
});

Deno.test("VisionLanguageModel (qwen2_5_vl): generate with images (KV cache, left padding) gives the logprobs of the full forward", async () => {
  const { logSoftmax } = await import("@rlvr/tensor");
  const model = VisionLanguageModel.random(config(), { seed: 11, std: 0.5 });
  const images = [
    { pixelValues: tensor(randomPixels(new Rng(12), 24, 24)), gridThw: [[1, 4, 6]] as GridThw[] },
    undefined,
  ];
  const prompts = [[START, ...new Array(6).fill(IMAGE), END, 5], [3, 4]];
  const out = await generate(model.lm, prompts, {
    maxNewTokens: 4,
    sampler: { temperature: 1, seed: 3 },
    eosTokenIds: [],
    forwardHook: model.forwardHook((r) => images[r]),
  });
  for (const [b, s] of out.sequences.entries()) {
    assert.equal(s.tokens.length, 4);
    const img = images[b];
    const { logits } = noGrad(() =>
      model.forward([[...s.promptIds, ...s.tokens]], img === undefined ? {} : { images: img })
    );
    const lp = await noGrad(() => logSoftmax(logits, -1)).toArray() as number[][][];
    const p = s.promptIds.length;
    const want = s.tokens.map((tok, i) => lp[0]![p - 1 + i]![tok]!);
    assertClose(s.logprobs, want, { rtol: 1e-5, atol: 1e-5, msg: `row ${b}` });
  }
  images[0]!.pixelValues.dispose();
  model.dispose();
});
