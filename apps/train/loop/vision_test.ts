import assert from "node:assert/strict";
import {
  expandImageTokens,
  generate,
  modelConfig,
  scoreCompletions,
  visionConfig,
  visionLanguageConfig,
  VisionLanguageModel,
} from "@rlvr/policy";
import { noGrad } from "@rlvr/tensor";
import { countShapesTask } from "@rlvr/rewards/vision";
import { createImage, toDataUrl } from "@rlvr/image";
import { RowImages, rowImageSources } from "./vision.ts";

const PROCESSOR = { minPixels: 56 * 56, maxPixels: 56 * 56 };

function tinyModel(): VisionLanguageModel {
  return VisionLanguageModel.random(
    visionLanguageConfig({
      text: modelConfig({
        modelType: "qwen2",
        vocabSize: 40,
        hiddenSize: 16,
        intermediateSize: 32,
        numLayers: 1,
        numHeads: 2,
      }),
      vision: visionConfig({ depth: 1, embedDim: 8, numHeads: 2, outHiddenSize: 16 }),
      imageTokenId: 37,
      visionStartTokenId: 38,
      visionEndTokenId: 39,
      mropeSection: [1, 1, 2],
    }),
    { seed: 1, std: 0.5 },
  );
}

Deno.test("RowImages: a task row's image runs through generate and scoreCompletions, and the image changes the logprobs", async () => {
  const task = countShapesTask({
    size: 56,
    count: [0, 2],
    distractors: [1, 2],
    shapeSize: [8, 10],
  });
  const rows = [task.row(0, 0), task.row(0, 1)];
  const images = new RowImages({ processor: PROCESSOR });
  await images.prepare(rows);
  const prompts = rows.map((r) => expandImageTokens([38, 37, 39, 5, 6], 37, images.tokenCounts(r)));
  assert.equal(prompts[0]!.length, 4 + 4);
  const model = tinyModel();
  const out = await generate(model.lm, prompts, {
    maxNewTokens: 3,
    sampler: { temperature: 1, seed: 0 },
    eosTokenIds: [],
    forwardHook: images.hook(model, (i) => rows[i]),
  });
  const score = (rowOf: (i: number) => (typeof rows)[number]) =>
    noGrad(() =>
      scoreCompletions(
        model.lm,
        out.sequences.map((s) => ({ promptIds: s.promptIds, completionIds: s.tokens })),
        { forwardHook: images.hook(model, rowOf), entropy: false },
      )
    );
  const same = await score((i) => rows[i]!).logprobs.toArray() as number[][];
  out.sequences.forEach((s, b) => {
    s.logprobs.forEach((lp, j) =>
      assert.ok(Math.abs(lp - same[b]![j]!) < 1e-5, `row ${b} token ${j}`)
    );
  });
  // The other row's image (swapped) gives other logprobs: the hook really feeds the pixels.
  const swapped = await score((i) => rows[1 - i]!).logprobs.toArray() as number[][];
  assert.notDeepEqual(swapped, same);
  model.dispose();
});

Deno.test("RowImages: rows without images are text-only; bad sources name the row and the field", async () => {
  const row = { id: "q-1", task: "t", prompt: "?", answer: "1", difficulty: 1 };
  assert.deepEqual(rowImageSources(row), []);
  const images = new RowImages({ processor: PROCESSOR });
  await images.prepare([row]);
  assert.equal(images.pixels(row), undefined);
  await assert.rejects(
    () => images.prepare([{ ...row, images: ["data:image/png;base64,AAAA"] }]),
    /row q-1: images\[0\]:/,
  );
  assert.throws(
    () => images.pixels({ ...row, images: [toDataUrl(createImage(28, 28))] }),
    /was not prepared/,
  );
  assert.throws(
    () => rowImageSources({ ...row, images: "x" }),
    /row .*: images is string; use a list/,
  );
});

Deno.test("RowImages: the cache keeps at most maxEntries images, least recently used out", async () => {
  const images = new RowImages({ processor: PROCESSOR, maxEntries: 2 });
  const rows = [0, 1, 2].map((v) => ({
    id: `r${v}`,
    task: "t",
    prompt: "?",
    answer: "1",
    difficulty: 1,
    images: [toDataUrl(createImage(56, 56, { fill: [v, v, v] }))],
  }));
  await images.prepare(rows);
  assert.throws(() => images.pixels(rows[0]!), /was not prepared/);
  assert.ok(images.pixels(rows[2]!) !== undefined);
});
