import assert from "node:assert/strict";
import fc from "fast-check";
import { noGrad, Rng, type Tensor, tensor } from "@rlvr/tensor";
import { assertClose } from "@rlvr/tensor/testing";
import {
  CausalLM,
  type GridThw,
  KVCache,
  modelConfig,
  mropePositions,
  parameterShapes,
  visionConfig,
  type VisionLanguageConfig,
  visionLanguageConfig,
  VisionLanguageModel,
} from "@rlvr/policy";
import { hostParams } from "../_test_reference.ts";
import {
  randomPixels,
  refTower,
  refVlLogits,
  saveNewerLayout,
  visionHostParams,
} from "./_test_reference.ts";

const IMAGE = 29;
const START = 30;
const END = 31;

function config(hiddenAct: "quick_gelu" | "gelu" = "quick_gelu"): VisionLanguageConfig {
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
      depth: 1,
      embedDim: 8,
      numHeads: 2,
      hiddenAct,
      patchSize: 2,
      outHiddenSize: 16,
    }),
    imageTokenId: IMAGE,
    visionStartTokenId: START,
    visionEndTokenId: END,
    mropeSection: [1, 2, 1],
  });
}

interface Host {
  lm: Map<string, Float64Array>;
  vision: Map<string, Float64Array>;
}

function modelOf(c: VisionLanguageConfig, host: Host): VisionLanguageModel {
  const shapes = VisionLanguageModel.parameterShapes(c);
  const params = new Map<string, Tensor>();
  for (const [name, a] of [...host.lm, ...host.vision]) {
    params.set(name, tensor(a, { shape: shapes.get(name)! }));
  }
  return VisionLanguageModel.fromParams(c, params);
}

/** A prompt: some text, then per image <|vision_start|>, its tokens, <|vision_end|>, then text. */
function prompt(rng: Rng, grids: GridThw[], merge: number): number[] {
  const text = () =>
    Array.from({ length: 1 + Math.floor(rng.uniform() * 3) }, () => Math.floor(rng.uniform() * 29));
  const out = text();
  for (const [t, h, w] of grids) {
    out.push(START, ...new Array((t * h * w) / merge ** 2).fill(IMAGE), END, ...text());
  }
  return out;
}

// Tolerance against the float64 reference: rtol 1e-4, atol 1e-5 (f32 weights feed both; each
// op rounds to f32 through the tower and two decoder layers).
Deno.test("VisionLanguageModel: logits equal the float64 reference (tower, scatter, M-RoPE decoder) on random weights, images and left padding", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 1e6 }),
      fc.array(
        fc.array(
          fc.tuple(
            fc.integer({ min: 1, max: 2 }),
            fc.integer({ min: 1, max: 2 }),
            fc.integer({ min: 1, max: 3 }),
          ),
          {
            maxLength: 2,
          },
        ),
        { minLength: 1, maxLength: 2 },
      ),
      fc.constantFrom<"quick_gelu" | "gelu">("quick_gelu", "gelu"),
      async (seed, perRow, act) => {
        const c = config(act);
        const host: Host = {
          lm: hostParams(c.text, seed),
          vision: visionHostParams(c.vision, seed + 1),
        };
        const rng = new Rng(seed + 2);
        const rowsGrids = perRow.map((g) => g.map(([t, h, w]) => [t, 2 * h, 2 * w] as GridThw));
        const prompts = rowsGrids.map((g) => prompt(rng, g, 2));
        const width = Math.max(...prompts.map((p) => p.length));
        const ids = prompts.map((p) => [...new Array(width - p.length).fill(0), ...p]);
        const mask = prompts.map((
          p,
        ) => [...new Array(width - p.length).fill(0), ...p.map(() => 1)]);
        const grid = rowsGrids.flat();
        const patches = grid.reduce((s, [t, h, w]) => s + t * h * w, 0);
        const pixels = randomPixels(rng, patches, 3 * 2 * 2 * 2);
        const model = modelOf(c, host);
        try {
          const { logits } = noGrad(() =>
            model.forward(ids, {
              mask,
              ...(grid.length === 0 ? {} : {
                images: {
                  pixelValues: tensor(pixels.length > 0 ? pixels : [[0]]),
                  gridThw: grid,
                },
              }),
            })
          );
          // Reference: token embeddings with image rows replaced by the float64 tower's output.
          const features = grid.length === 0 ? [] : refTower(c.vision, host.vision, pixels, grid);
          const want = refVlLogits(c, host.lm, { ids, mask, grid, features });
          assertClose(await logits.toArray(), want, { rtol: 1e-4, atol: 1e-5 });
          logits.dispose();
        } finally {
          model.dispose();
        }
      },
    ),
    { numRuns: 10 },
  );
});

Deno.test("VisionLanguageModel: text only gives the decoder's logits bit for bit", async () => {
  const c = config();
  const model = VisionLanguageModel.random(c, { seed: 3, std: 0.5 });
  const ids = [[1, 2, 3, 4], [5, 6, 7, 8]];
  const { logits, ropeDeltas } = noGrad(() => model.forward(ids));
  const plain = noGrad(() => model.lm.forward(tensor(ids, { dtype: "i32" })));
  assert.deepEqual(await logits.toArray(), await plain.toArray());
  assert.deepEqual(ropeDeltas, [0, 0]);
  model.dispose();
});

Deno.test("VisionLanguageModel: decoding with a KV cache and ropeDeltas equals the full forward bit for bit", async () => {
  const c = config();
  const model = VisionLanguageModel.random(c, { seed: 4, std: 0.5 });
  const grid: GridThw[] = [[1, 2, 4], [1, 4, 2]];
  const pixels = tensor(randomPixels(new Rng(5), 16, 24));
  const ids = [[0, START, IMAGE, IMAGE, END, 7], [START, IMAGE, IMAGE, END, 8, 9]];
  const mask = [[0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]];
  const next = [[11, 12], [13, 14]];
  const full = noGrad(() =>
    model.forward(ids.map((r, b) => [...r, ...next[b]!]), {
      images: { pixelValues: pixels, gridThw: grid },
      mask: mask.map((r) => [...r, 1, 1]),
    })
  );
  const cache = new KVCache(c.text, 2);
  const pre = noGrad(() =>
    model.forward(ids, { images: { pixelValues: pixels, gridThw: grid }, mask, cache })
  );
  const steps: number[][][][] = [];
  for (let s = 0; s < 2; s++) {
    const m = mask.map((r) => [...r, ...new Array(s + 1).fill(1)]);
    const out = noGrad(() =>
      model.forward(next.map((r) => [r[s]!]), { cache, mask: m, ropeDeltas: pre.ropeDeltas })
    );
    steps.push(await out.logits.toArray() as number[][][]);
    out.logits.dispose();
  }
  const all = await full.logits.toArray() as number[][][];
  for (let b = 0; b < 2; b++) {
    assert.deepEqual(steps[0]![b]![0], all[b]![6], `row ${b} step 0`);
    assert.deepEqual(steps[1]![b]![0], all[b]![7], `row ${b} step 1`);
  }
  assert.throws(
    () => model.forward([[1], [2]], { cache, mask: mask.map((r) => [...r, 1, 1, 1]) }),
    /ropeDeltas must be 2 integers/,
  );
  cache.dispose();
  model.dispose();
});

Deno.test("VisionLanguageModel: a wrong number of image tokens is an error that says how many are needed", () => {
  const model = VisionLanguageModel.random(config());
  assert.throws(
    () =>
      model.forward([[START, IMAGE, END]], {
        images: { pixelValues: tensor(randomPixels(new Rng(1), 8, 24)), gridThw: [[1, 2, 4]] },
      }),
    /needs 2 image tokens after <\|vision_start\|>, found 1/,
  );
  model.dispose();
});

Deno.test("VisionLanguageModel: newer transformers names (model.visual.*, model.language_model.*) load", () => {
  const c = config();
  const a = VisionLanguageModel.random(c);
  const renamed = new Map<string, Tensor>();
  for (const [n, t] of a.params) {
    renamed.set(
      n.startsWith("visual.") ? `model.${n}` : n.replace(/^model\./, "model.language_model."),
      t,
    );
  }
  const b = VisionLanguageModel.fromParams(c, renamed);
  assert.deepEqual(
    [...b.params.keys()].sort(),
    [...VisionLanguageModel.parameterShapes(c).keys()].sort(),
  );
  assert.equal(parameterShapes(c.text).size + b.tower.params.size, b.params.size);
  assert.ok(b.lm instanceof CausalLM);
  b.dispose();
});

Deno.test("loadVisionLanguageModel: a random-weight Qwen2-VL checkpoint in HF layout (both name layouts, sharded) loads with the same logits", async () => {
  const { loadVisionLanguageModel, saveVisionLanguageModel } = await import("@rlvr/policy/fs");
  const c = config("gelu");
  const model = VisionLanguageModel.random(c, { seed: 9, std: 0.3 });
  const grid: GridThw[] = [[1, 2, 2]];
  const pixels = tensor(randomPixels(new Rng(10), 4, 24));
  const ids = [[START, IMAGE, END, 3, 4]];
  const want = await noGrad(() =>
    model.forward(ids, { images: { pixelValues: pixels, gridThw: grid } })
  ).logits.toArray();
  const dir = await Deno.makeTempDir();
  try {
    // Original layout, as the Qwen/Qwen2-VL-* repositories ship it, in several shards.
    await saveVisionLanguageModel(`${dir}/a`, model, { maxShardBytes: 4096 });
    const hf = JSON.parse(await Deno.readTextFile(`${dir}/a/config.json`));
    assert.equal(hf.architectures[0], "Qwen2VLForConditionalGeneration");
    assert.deepEqual(hf.rope_scaling, { mrope_section: [1, 2, 1], type: "mrope" });
    const index = JSON.parse(await Deno.readTextFile(`${dir}/a/model.safetensors.index.json`));
    assert.ok(Object.keys(index.weight_map).includes("visual.blocks.0.attn.qkv.weight"));
    // Newer transformers layout: model.visual.*, model.language_model.*, text_config.
    await saveNewerLayout(`${dir}/b`, model, { textModelType: "qwen2_vl_text" });
    for (const sub of ["a", "b"]) {
      const loaded = await loadVisionLanguageModel(`${dir}/${sub}`);
      const got = await noGrad(() =>
        loaded.forward(ids, { images: { pixelValues: pixels, gridThw: grid } })
      ).logits.toArray();
      assert.deepEqual(got, want, sub);
      loaded.dispose();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
    model.dispose();
  }
});

Deno.test("VisionLanguageModel.forwardHook: generate (left-padded, KV cache) and scoreCompletions with images give the logprobs of the full forward", async () => {
  const { generate, scoreCompletions } = await import("@rlvr/policy");
  const { logSoftmax } = await import("@rlvr/tensor");
  const c = config();
  const model = VisionLanguageModel.random(c, { seed: 11, std: 0.5 });
  const images = [
    { pixelValues: tensor(randomPixels(new Rng(12), 8, 24)), gridThw: [[1, 2, 4]] as GridThw[] },
    undefined,
    { pixelValues: tensor(randomPixels(new Rng(13), 8, 24)), gridThw: [[1, 4, 2]] as GridThw[] },
  ];
  const prompts = [[START, IMAGE, IMAGE, END, 5], [3, 4], [6, START, IMAGE, IMAGE, END]];
  const out = await generate(model.lm, prompts, {
    maxNewTokens: 4,
    sampler: { temperature: 1, seed: 3 },
    eosTokenIds: [],
    forwardHook: model.forwardHook((r) => images[r]),
  });
  const scores = noGrad(() =>
    scoreCompletions(
      model.lm,
      out.sequences.map((s) => ({ promptIds: s.promptIds, completionIds: s.tokens })),
      { forwardHook: model.forwardHook((r) => images[r]), entropy: false },
    )
  );
  const scored = await scores.logprobs.toArray() as number[][];
  for (const [b, s] of out.sequences.entries()) {
    const ids = [[...s.promptIds, ...s.tokens]];
    const img = images[b];
    const { logits } = noGrad(() => model.forward(ids, img === undefined ? {} : { images: img }));
    const lp = await noGrad(() => logSoftmax(logits, -1)).toArray() as number[][][];
    const p = s.promptIds.length;
    const want = s.tokens.map((tok, i) => lp[0]![p - 1 + i]![tok]!);
    assertClose(s.logprobs, want, { rtol: 1e-5, atol: 1e-5, msg: `generate row ${b}` });
    assertClose(scored[b]!.slice(0, s.tokens.length), want, {
      rtol: 1e-5,
      atol: 1e-5,
      msg: `score row ${b}`,
    });
  }
  model.dispose();
});

Deno.test("VisionLanguageModel: the tower trains through lm.parameters() (an optimizer over the decoder sees it) unless frozen", async () => {
  const { AdamW } = await import("@rlvr/tensor");
  const c = config();
  const model = VisionLanguageModel.random(c, { seed: 14, std: 0.3 });
  const images = {
    pixelValues: tensor(randomPixels(new Rng(15), 8, 24)),
    gridThw: [[1, 2, 4]] as GridThw[],
  };
  const ids = [[START, IMAGE, IMAGE, END, 3, 4]];
  const name = "visual.blocks.0.attn.qkv.weight";
  const step = async () => {
    const opt = new AdamW(model.lm.parameters(), { lr: 1e-2 });
    const before = await model.tower.params.get(name)!.toArray();
    const { logits } = model.forward(ids, { images });
    logits.sum().backward();
    opt.step();
    opt.zeroGrad();
    logits.dispose();
    opt.dispose();
    return { before, after: await model.tower.params.get(name)!.toArray() };
  };
  assert.ok(model.lm.namedParameters().has(name));
  const trained = await step();
  assert.notDeepEqual(trained.after, trained.before);
  model.towerTrainable = false;
  assert.ok(!model.lm.namedParameters().has(name));
  const frozen = await step();
  assert.deepEqual(frozen.after, frozen.before);
  model.dispose();
  assert.ok(model.tower.params.get(name)!.isDisposed);
});

Deno.test("VisionLanguageModel.forwardHook: image tokens the policy samples (a stray <|image_pad|>, a whole <|vision_start|> span) are text, scored as decoding saw them", async () => {
  const { scoreCompletions } = await import("@rlvr/policy");
  const { logSoftmax } = await import("@rlvr/tensor");
  const c = config();
  const model = VisionLanguageModel.random(c, { seed: 21, std: 0.5 });
  const image = {
    pixelValues: tensor(randomPixels(new Rng(22), 8, 24)),
    gridThw: [[1, 2, 4]] as GridThw[],
  };
  const promptIds = [4, START, IMAGE, IMAGE, END, 5];
  const completions = [[7, IMAGE, 8, 2], [START, IMAGE, IMAGE, END], [IMAGE, START, IMAGE, 3]];
  // The reference: the KV-cached decode generate runs (the prefill with the image, then one
  // token at a time, which can only be text).
  const want: number[][] = [];
  for (const completion of completions) {
    const cache = new KVCache(c.text, 1);
    const pre = noGrad(() => model.forward([promptIds], { images: image, cache }));
    let logits = pre.logits;
    const lps: number[] = [];
    for (const tok of completion) {
      const lp = await noGrad(() => logSoftmax(logits.narrow(1, logits.shape[1]! - 1, 1), -1))
        .toArray() as number[][][];
      lps.push(lp[0]![0]![tok]!);
      logits.dispose();
      logits = noGrad(() => model.forward([[tok]], { cache, ropeDeltas: pre.ropeDeltas })).logits;
    }
    logits.dispose();
    cache.dispose();
    want.push(lps);
  }
  const scores = noGrad(() =>
    scoreCompletions(
      model.lm,
      completions.map((completionIds) => ({ promptIds, completionIds })),
      { forwardHook: model.forwardHook(() => image), entropy: false },
    )
  );
  const got = await scores.logprobs.toArray() as number[][];
  completions.forEach((_, b) => {
    assertClose(got[b]!, want[b]!, { rtol: 1e-5, atol: 1e-5, msg: `completion ${b}` });
  });
  scores.logprobs.dispose();
  scores.mask.dispose();
  // Spans are counted per row: a row declared to hold one image holds exactly one.
  assert.throws(
    () =>
      mropePositions(
        [[START, IMAGE, IMAGE, END]],
        [],
        {
          imageTokenId: IMAGE,
          visionStartTokenId: START,
          mergeSize: 2,
        },
        undefined,
        [1],
      ),
    /more images than gridThw lists/,
  );
  model.dispose();
});
