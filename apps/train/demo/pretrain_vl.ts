/**
 * `deno task pretrain:vl`: the vision-language warm start `builtin:tiny-vl`, a Qwen2-VL model
 * (vision tower + Qwen2 decoder, 1.33M parameters) trained from scratch by SFT on the counting
 * traces of `vl_format.ts` (the running count; `--style rows` for the earlier per-row count),
 * written to `apps/train/checkpoints/tiny-vl/` with its char-level tokenizer and its
 * `preprocessor_config.json`.
 *
 * Design decisions:
 * - **Small images, one token per patch.** The tasks draw 56-pixel images ({@link VL_IMAGE_SIZE})
 *   with shapes of 8–10 pixels; the processor ({@link VL_PROCESSOR}) keeps Qwen2-VL's 14-pixel
 *   patches, temporal patch 2 and CLIP normalisation, with a pixel budget of exactly 56×56 and
 *   merge 1, so an image is 4×4 = 16 image tokens and every shape lies inside one patch (the
 *   task's 14-pixel layout cells are the patches): each shape's code in the trace is read off
 *   one image token. (In 300-step probes of the same trace, the default 2×2 merge, four cells a
 *   token, reached a loss of 0.33 and merge 1 of 0.22.)
 * - **Sizes** ({@link vlModelConfig}): decoder hidden 128, 4 layers, 4 heads, MLP 384 (0.88M
 *   parameters with its embeddings); tower width 128, 2 blocks, 4 heads, MLP 256 (0.45M). The
 *   decoder's work is the text (matching codes, adding small numbers); the tower runs on 16
 *   patches an image, so its width costs little. RoPE base 10 and M-RoPE sections [2, 7, 7]:
 *   with Qwen's base of 10⁶ the width section, which gets the lowest of the 16 frequencies of a
 *   head, would turn by less than 5·10⁻⁴ radians from one patch to the next, too little to tell
 *   the columns of image tokens apart; with base 10 its slowest turns by 0.12 radians.
 * - **The task**: counting (`count_shapes`: "how many red circles", 3 colours and 3 kinds a row
 *   out of 6 and 4). The SFT data ({@link VL_SFT_TASKS}) has 0–6 targets among up to 14
 *   shapes; the RL recipe's task ({@link VL_RECIPE_TASKS}) has 3–6 among 9–14, harder than the
 *   SFT data's median by the task's difficulty formula. Held-out problems of both are never
 *   trained on.
 * - **Throughput**: both cores, by data parallelism with a Web Worker (`vl_sft.ts`), batches of
 *   32 sorted by length into micro-batches of 16, 800 steps with a cosine decay from 3e-3 (20
 *   warm-up steps): 9m40s to 10m34s on the 2-core machine, evaluation included, with either
 *   trace (2026-11-29; 12m48s to 14m43s for the rows trace on a busier day).
 * - **Reproducible**: initialisation, data, trace noise, the split between the two threads and
 *   the evaluation draws follow `seed`; the CPU backend is pinned (one matmul thread, the
 *   WebAssembly matmul, the float64 attention loops) on both threads, so the bytes depend on
 *   neither a native BLAS nor the thread count, and the same command writes the same bytes (the
 *   sha256 is in apps/train/README.md; three full runs wrote it; a test checks a short run).
 *
 * @module
 */

import { resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  CharTokenizer,
  generate,
  modelConfig,
  type SamplingParams,
  visionConfig,
  type VisionLanguageConfig,
  visionLanguageConfig,
  VisionLanguageModel,
} from "@rlvr/policy";
import { saveVisionLanguageModel } from "@rlvr/policy/fs";
import { OPENAI_CLIP_MEAN, OPENAI_CLIP_STD, type Qwen2VLOptions } from "@rlvr/image";
import { seededRng, type Task, type TaskRow } from "@rlvr/rewards";
import { type CountShapesOptions, visionTask } from "@rlvr/rewards/vision";
import { AdamW, createCpuBackend, getBackend, setBackend, type Tensor, tensor } from "@rlvr/tensor";
import { assetLocation } from "../_assets.ts";
import { EVAL_DRAW_STEP, passRates } from "../loop/eval.ts";
import { heldOutProblems } from "../loop/problems.ts";
import { completionReward, TINY_ALPHABET } from "./format.ts";
import { VlParallelSft, type VlSequence, vlSftStep } from "./vl_sft.ts";
import {
  checkTrace,
  vlCompletion,
  type VlPrompt,
  vlPrompt,
  type VlTraceOptions,
  type VlTraceStyle,
} from "./vl_format.ts";

export { vlCompletion, vlPrompt, vlPromptIds, vlQuestion } from "./vl_format.ts";
export type { VlPrompt, VlTraceOptions, VlTraceStyle } from "./vl_format.ts";

/**
 * The folder of the shipped vision-language warm start (`builtin:tiny-vl`): a path, or a URL
 * ending in `/` when this module was imported by URL.
 */
export const TINY_VL_CHECKPOINT_DIR: string = assetLocation(
  new URL("../checkpoints/tiny-vl/", import.meta.url),
);

/** Image side of the warm start's tasks, in pixels: 2×2 tokens of 28 pixels. */
export const VL_IMAGE_SIZE = 56;

/**
 * The special tokens of the vision-language format, one token each in {@link vlTokenizer}:
 * Qwen2-VL's image markers and the four tags of the trace format.
 */
export const VL_WORDS: readonly string[] = Object.freeze([
  "<|vision_start|>",
  "<|image_pad|>",
  "<|vision_end|>",
  "<think>",
  "</think>",
  "<answer>",
  "</answer>",
]);

/**
 * The warm start's tokenizer: the tiny model's characters plus {@link VL_WORDS} as single tokens.
 *
 * @example Usage
 * ```ts
 * import { vlTokenizer } from "./pretrain_vl.ts";
 * import assert from "node:assert/strict";
 * const tok = vlTokenizer();
 * assert.equal(tok.encode("<|vision_start|><|image_pad|><|vision_end|>", { addSpecialTokens: false }).length, 3);
 * ```
 */
export function vlTokenizer(): CharTokenizer {
  return new CharTokenizer(TINY_ALPHABET, { words: VL_WORDS });
}

/**
 * The image processor's options: Qwen2-VL's (14-pixel patches, temporal patch 2, 2×2 merge,
 * CLIP normalisation) with a pixel budget of exactly 56×56, so every image is 4 tokens.
 */
export const VL_PROCESSOR: Readonly<Required<Qwen2VLOptions>> = Object.freeze({
  patchSize: 14,
  temporalPatchSize: 2,
  mergeSize: 1,
  minPixels: VL_IMAGE_SIZE * VL_IMAGE_SIZE,
  maxPixels: VL_IMAGE_SIZE * VL_IMAGE_SIZE,
  imageMean: OPENAI_CLIP_MEAN,
  imageStd: OPENAI_CLIP_STD,
  rescaleFactor: 1 / 255,
  doResize: true,
});

/**
 * {@link VL_PROCESSOR} as a Hugging Face `preprocessor_config.json` object, which
 * `qwen2VLOptionsFromConfig` reads back.
 *
 * @example Usage
 * ```ts
 * import { VL_PROCESSOR, vlPreprocessorConfig } from "./pretrain_vl.ts";
 * import { qwen2VLOptionsFromConfig } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * assert.deepEqual({ ...qwen2VLOptionsFromConfig(vlPreprocessorConfig()) }, { ...VL_PROCESSOR });
 * ```
 */
export function vlPreprocessorConfig(): Record<string, unknown> {
  const p = VL_PROCESSOR;
  return {
    image_processor_type: "Qwen2VLImageProcessor",
    processor_class: "Qwen2VLProcessor",
    do_resize: p.doResize,
    resample: 3,
    do_rescale: true,
    rescale_factor: p.rescaleFactor,
    do_normalize: true,
    image_mean: [...p.imageMean],
    image_std: [...p.imageStd],
    do_convert_rgb: true,
    min_pixels: p.minPixels,
    max_pixels: p.maxPixels,
    size: { shortest_edge: p.minPixels, longest_edge: p.maxPixels },
    patch_size: p.patchSize,
    temporal_patch_size: p.temporalPatchSize,
    merge_size: p.mergeSize,
  };
}

/** Model sizes of {@link vlModelConfig}. */
export interface VlModelSizes {
  /** Decoder width (default 128). */
  hidden?: number;
  /** Decoder layers (default 4). */
  layers?: number;
  /** Vision tower width (default 128). */
  visionDim?: number;
  /** Vision tower blocks (default 2). */
  visionDepth?: number;
}

/**
 * The warm start's architecture: see the module doc.
 *
 * @example Usage
 * ```ts
 * import { vlModelConfig } from "./pretrain_vl.ts";
 * import assert from "node:assert/strict";
 * const c = vlModelConfig();
 * assert.equal(c.text.modelType, "qwen2");
 * assert.equal(c.vision.outHiddenSize, c.text.hiddenSize);
 * ```
 */
export function vlModelConfig(sizes: VlModelSizes = {}): VisionLanguageConfig {
  const tok = vlTokenizer();
  const id = (w: string) => tok.encode(w, { addSpecialTokens: false })[0]!;
  const hidden = sizes.hidden ?? 128;
  const text = modelConfig({
    modelType: "qwen2",
    vocabSize: tok.vocabSize,
    hiddenSize: hidden,
    intermediateSize: hidden * 3,
    numLayers: sizes.layers ?? 4,
    numHeads: 4,
    maxPositions: 160,
    ropeTheta: 10,
    bosTokenId: tok.bosTokenId,
    eosTokenIds: [...tok.eosTokenIds],
    padTokenId: tok.padTokenId,
  });
  const vd = sizes.visionDim ?? 128;
  return visionLanguageConfig({
    text,
    vision: visionConfig({
      depth: sizes.visionDepth ?? 2,
      embedDim: vd,
      numHeads: vd / 32,
      mlpRatio: 2,
      outHiddenSize: hidden,
      patchSize: VL_PROCESSOR.patchSize,
      temporalPatchSize: VL_PROCESSOR.temporalPatchSize,
      spatialMergeSize: VL_PROCESSOR.mergeSize,
    }),
    imageTokenId: id("<|image_pad|>"),
    visionStartTokenId: id("<|vision_start|>"),
    visionEndTokenId: id("<|vision_end|>"),
    mropeSection: [2, 7, 7],
  });
}

/** A visual task by name and options, as a config names it (`visionTask(name, options)`). */
export interface VlTaskSpec {
  /** The task's name in `visionTasks`. */
  name: "count_shapes";
  /** Its options. */
  options: CountShapesOptions;
  /** How the run labels it. */
  label: string;
}

/** The SFT data: counting at 56 pixels, 0–6 targets among up to 14 shapes. */
export const VL_SFT_TASKS: readonly VlTaskSpec[] = Object.freeze([
  Object.freeze<VlTaskSpec>({
    name: "count_shapes",
    label: "count_shapes",
    options: {
      size: VL_IMAGE_SIZE,
      shapeSize: [8, 10],
      count: [0, 6],
      distractors: [0, 8],
      colors: 3,
      kinds: 3,
    },
  }),
]);

/**
 * The visual RL recipe's task(s): counting with 3–6 targets among 9–14 shapes, harder than the
 * SFT data's median.
 */
export const VL_RECIPE_TASKS: readonly VlTaskSpec[] = Object.freeze([
  Object.freeze<VlTaskSpec>({
    name: "count_shapes",
    label: "count_shapes-hard",
    options: {
      size: VL_IMAGE_SIZE,
      shapeSize: [8, 10],
      count: [3, 6],
      distractors: [6, 8],
      colors: 3,
      kinds: 3,
    },
  }),
]);

/**
 * The {@link Task} of a spec: `visionTask(spec.name, spec.options)`.
 *
 * @example Usage
 * ```ts
 * import { VL_RECIPE_TASKS, vlTask } from "./pretrain_vl.ts";
 * import assert from "node:assert/strict";
 * const row = vlTask(VL_RECIPE_TASKS[0]!).row(0, 0);
 * assert.equal(row.task, "count_shapes");
 * assert.ok(Number(row.answer) >= 3);
 * ```
 */
export function vlTask(spec: VlTaskSpec): Task {
  return visionTask(spec.name, spec.options) as unknown as Task;
}

/**
 * The SFT stream: sequence `i` of `seed` is a trace of row `i` of one of {@link VL_SFT_TASKS},
 * skipping the held-out problems of those tasks and of {@link VL_RECIPE_TASKS}.
 *
 * @example Usage
 * ```ts
 * import { vlStream } from "./pretrain_vl.ts";
 * import assert from "node:assert/strict";
 * const a = vlStream(0), b = vlStream(0);
 * const x = a.next().value!, y = b.next().value!;
 * assert.deepEqual(x.completion, y.completion);
 * assert.match(x.completion, /^<think>.*<\/think><answer>\d+<\/answer>$/);
 * ```
 */
export function* vlStream(
  seed: number,
  options: VlTraceOptions & {
    heldOutEvalProblems?: number;
    sftTasks?: readonly VlTaskSpec[];
    recipeTasks?: readonly VlTaskSpec[];
  } = {},
): Generator<{ row: TaskRow; prompt: VlPrompt; completion: string }> {
  const tokenizer = vlTokenizer();
  const tasks = (options.sftTasks ?? VL_SFT_TASKS).map(vlTask);
  const held = new Set<string>();
  for (const task of [...tasks, ...(options.recipeTasks ?? VL_RECIPE_TASKS).map(vlTask)]) {
    for (const r of heldOutProblems(task, options.heldOutEvalProblems ?? 64)) {
      held.add(`${task.name}:${task.key(r)}`);
    }
  }
  for (let i = 0;; i++) {
    const rng = seededRng(seed, i, 11);
    const task = tasks[tasks.length === 1 ? 0 : rng.int(0, tasks.length - 1)]!;
    const row = task.row(seed, i);
    if (held.has(`${task.name}:${task.key(row)}`)) continue;
    const prompt = vlPrompt(row, tokenizer, VL_PROCESSOR);
    const completion = vlCompletion(row, prompt.gridThw[0]!, rng, options);
    if (completion === null) continue;
    yield { row, prompt, completion };
  }
}

/** Options of {@link vlEvaluate}. */
export interface VlEvaluateOptions {
  /** Samples per problem. */
  samples: number;
  /** The k of pass@k. */
  k: number;
  /** Sampler seed. */
  seed: number;
  /** Sampling parameters (temperature 0: greedy). */
  sampling: SamplingParams;
  /** Generation limit (default 80). */
  maxNewTokens?: number;
  /** Completions per `generate` call (default 256). */
  batch?: number;
}

/** What {@link vlEvaluate} returns. */
export interface VlEvalResult {
  /** Mean over problems of the unbiased pass@1. */
  passAt1: number;
  /** Mean over problems of the unbiased pass@k. */
  passAtK: number;
  /** Share of completions in the `<think>…</think><answer>…</answer>` format. */
  formatRate: number;
  /** Share of completions whose description of the image is right (counting rows). */
  describedRate: number;
  /** Share of written patch rows whose count follows from their own description. */
  rowCountRate: number;
  /** Mean completion length in tokens. */
  meanLength: number;
  /** Seconds. */
  seconds: number;
}

/**
 * Held-out evaluation of a vision-language model, as `evaluate` of `loop/eval.ts` (the same draw
 * keys) with each prompt's image put in through the model's `forwardHook`.
 */
export async function vlEvaluate(
  model: VisionLanguageModel,
  tokenizer: CharTokenizer,
  task: Task,
  rows: readonly TaskRow[],
  opts: VlEvaluateOptions,
): Promise<VlEvalResult> {
  const started = performance.now();
  const n = opts.samples;
  const prompts = rows.map((r) => vlPrompt(r, tokenizer, VL_PROCESSOR));
  const jobs: { row: number; id: number }[] = [];
  rows.forEach((_, p) => {
    for (let s = 0; s < n; s++) jobs.push({ row: p, id: p * n + s });
  });
  const correct = new Array<number>(rows.length).fill(0);
  let tokens = 0;
  let formatted = 0;
  let described = 0;
  let lines = 0;
  let linesRight = 0;
  const batch = opts.batch ?? 256;
  const format = /^<think>[^<]*<\/think><answer>[^<]*<\/answer>$/;
  for (let i = 0; i < jobs.length; i += batch) {
    const part = jobs.slice(i, i + batch);
    const images = new Map<number, Tensor>();
    try {
      for (const j of part) {
        if (!images.has(j.row)) {
          const p = prompts[j.row]!;
          images.set(
            j.row,
            tensor(p.pixelValues, { shape: [p.pixelValues.length / p.patchDim, p.patchDim] }),
          );
        }
      }
      const { sequences } = await generate(model.lm, part.map((j) => prompts[j.row]!.ids), {
        maxNewTokens: opts.maxNewTokens ?? 80,
        sampler: { ...opts.sampling, seed: opts.seed },
        step: EVAL_DRAW_STEP,
        sequenceIds: part.map((j) => j.id),
        tokenizer,
        forwardHook: model.forwardHook((r) => {
          const row = part[r]!.row;
          return { pixelValues: images.get(row)!, gridThw: prompts[row]!.gridThw };
        }),
      });
      sequences.forEach((seq, j) => {
        const job = part[j]!;
        const text = seq.text ?? "";
        tokens += seq.tokens.length;
        if (format.test(text)) formatted++;
        const check = checkTrace(rows[job.row]!, prompts[job.row]!.gridThw[0]!, text);
        if (check !== null) {
          if (check.described) described++;
          lines += check.lines;
          linesRight += check.countsRight;
        }
        correct[job.row]! += completionReward(task, rows[job.row]!, text);
      });
    } finally {
      for (const t of images.values()) t.dispose();
    }
  }
  return {
    ...passRates(correct, n, opts.k),
    formatRate: formatted / Math.max(1, jobs.length),
    describedRate: described / Math.max(1, jobs.length),
    rowCountRate: linesRight / Math.max(1, lines),
    meanLength: tokens / Math.max(1, jobs.length),
    seconds: (performance.now() - started) / 1000,
  };
}

/** Options of {@link pretrainVl}. */
export interface PretrainVlOptions {
  /** Output folder (default the shipped `tiny-vl` folder). */
  out?: string;
  /** Seed of initialisation, data and evaluation (default 0). */
  seed?: number;
  /** SFT steps (default 800). */
  steps?: number;
  /** Sequences per step (default 32). */
  batchSize?: number;
  /** Peak learning rate (default 3e-3; 20 warm-up steps, cosine decay to a tenth). */
  lr?: number;
  /** Held-out problems per task in the final evaluation (default 64; 0 skips it). */
  evalProblems?: number;
  /** Samples per held-out problem (default 8). */
  evalSamples?: number;
  /** Probability of a slip in a trace (default 0.2). */
  slipRate?: number;
  /**
   * How the traces count (default `running`, the shipped warm start's; `rows` is the earlier
   * warm start's trace; see `VlTraceStyle`).
   */
  style?: VlTraceStyle;
  /** Sequences per forward/backward pass, after sorting the batch by length (default 16). */
  microBatch?: number;
  /** Both CPU cores, by data parallelism with a Web Worker (`vl_sft.ts`; default true). */
  parallel?: boolean;
  /** Model sizes (default {@link vlModelConfig}). */
  model?: VisionLanguageConfig;
  /** SFT tasks (default {@link VL_SFT_TASKS}). */
  sftTasks?: readonly VlTaskSpec[];
  /** Recipe tasks (default {@link VL_RECIPE_TASKS}). */
  recipeTasks?: readonly VlTaskSpec[];
  /** Initialisation std (default 0.05). */
  initStd?: number;
  /** Progress lines (default console.log). */
  log?: (line: string) => void;
}

/** Held-out pass@1 of one task in {@link PretrainVlResult}. */
export interface VlEval {
  /** Task label. */
  task: string;
  /** Held-out pass@1 at temperature 1. */
  passAt1: number;
  /** Held-out pass@k at temperature 1 (k = the samples). */
  passAtK: number;
  /** Held-out pass@1 of greedy decoding. */
  greedyPassAt1: number;
  /** Share of samples in the trace format. */
  formatRate: number;
  /** Share of samples (T = 1) that describe the image right. */
  describedRate: number;
  /** Share of greedy completions that describe the image right. */
  greedyDescribedRate: number;
  /** Share of the samples' patch rows (T = 1) whose count follows from their description. */
  rowCountRate: number;
  /** The same for greedy completions. */
  greedyRowCountRate: number;
  /** Mean completion length in tokens. */
  meanLength: number;
}

/** What {@link pretrainVl} returns. */
export interface PretrainVlResult {
  /** SFT steps taken. */
  steps: number;
  /** Parameters (decoder and tower). */
  parameters: number;
  /** Token-mean NLL of the last step. */
  loss: number;
  /** Final held-out evaluation per task (empty with `evalProblems: 0`). */
  evals: VlEval[];
  /** Seconds. */
  seconds: number;
}

/** Trains the warm start and saves it; see the module doc. */
export async function pretrainVl(options: PretrainVlOptions = {}): Promise<PretrainVlResult> {
  const out = options.out ?? TINY_VL_CHECKPOINT_DIR;
  const seed = options.seed ?? 0;
  const steps = options.steps ?? 800;
  const batchSize = options.batchSize ?? 32;
  const lr = options.lr ?? 3e-3;
  const evalProblems = options.evalProblems ?? 64;
  const evalSamples = options.evalSamples ?? 8;
  const microBatch = options.microBatch ?? 16;
  const log = options.log ?? ((line: string) => console.log(line));
  const started = performance.now();
  const tokenizer = vlTokenizer();
  const config = options.model ?? vlModelConfig();
  const backendBefore = getBackend();
  setBackend(createCpuBackend({ threads: 1, blas: "wasm", attention: "ts" }));
  const parallel = options.parallel ?? true ? await VlParallelSft.start(config) : null;
  const model = VisionLanguageModel.random(config, { seed, std: options.initStd ?? 0.05 });
  const eos = tokenizer.eosTokenIds[0]!;
  const sftTasks = options.sftTasks ?? VL_SFT_TASKS;
  const recipeTasks = options.recipeTasks ?? VL_RECIPE_TASKS;
  const stream = vlStream(seed, {
    slipRate: options.slipRate ?? 0.2,
    style: options.style ?? "running",
    sftTasks,
    recipeTasks,
  });
  const params = model.parameters();
  const opt = new AdamW(params, { lr, betas: [0.9, 0.98], weightDecay: 0.01 });
  const count = params.reduce((a, p) => a + p.size, 0);
  log(`pretrain:vl: ${count} parameters, ${steps} steps of ${batchSize} traces, peak lr ${lr}`);
  let loss = NaN;
  const evals: VlEval[] = [];
  try {
    for (let step = 0; step < steps; step++) {
      const batch: VlSequence[] = Array.from({ length: batchSize }, () => {
        const { prompt, completion } = stream.next().value!;
        return {
          promptIds: prompt.ids,
          completionIds: [...tokenizer.encode(completion, { addSpecialTokens: false }), eos],
          image: prompt,
        };
      });
      const warm = Math.min(1, (step + 1) / 20);
      const cosine = 0.1 + 0.45 * (1 + Math.cos(Math.PI * step / Math.max(1, steps - 1)));
      opt.lr = lr * Math.min(warm, cosine);
      loss = parallel !== null
        ? await parallel.step(model, opt, batch, { microBatch })
        : await vlSftStep(model, opt, batch, { microBatch });
      if ((step + 1) % 10 === 0 || step + 1 === steps) {
        log(
          `step ${step + 1}/${steps}: loss ${loss.toFixed(4)} (${
            ((performance.now() - started) / 1000).toFixed(0)
          } s)`,
        );
      }
    }
    await saveVisionLanguageModel(out, model);
    await tokenizer.save(out);
    await Deno.writeTextFile(
      `${out}/generation_config.json`,
      JSON.stringify(
        { bos_token_id: config.text.bosTokenId, eos_token_id: config.text.eosTokenIds },
        null,
        2,
      ) + "\n",
    );
    await Deno.writeTextFile(
      `${out}/preprocessor_config.json`,
      JSON.stringify(vlPreprocessorConfig(), null, 2) + "\n",
    );
    if (evalProblems > 0) {
      for (const spec of [...sftTasks, ...recipeTasks]) {
        const task = vlTask(spec);
        const rows = heldOutProblems(task, evalProblems);
        const r = await vlEvaluate(model, tokenizer, task, rows, {
          samples: evalSamples,
          k: evalSamples,
          seed,
          sampling: { temperature: 1 },
        });
        const g = await vlEvaluate(model, tokenizer, task, rows, {
          samples: 1,
          k: 1,
          seed,
          sampling: { temperature: 0 },
        });
        evals.push({
          task: spec.label,
          passAt1: r.passAt1,
          passAtK: r.passAtK,
          greedyPassAt1: g.passAt1,
          formatRate: r.formatRate,
          describedRate: r.describedRate,
          greedyDescribedRate: g.describedRate,
          rowCountRate: r.rowCountRate,
          greedyRowCountRate: g.rowCountRate,
          meanLength: r.meanLength,
        });
        const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
        log(
          `held-out ${spec.label} (${evalProblems} problems): pass@1 ${pct(r.passAt1)}, ` +
            `pass@${evalSamples} ${pct(r.passAtK)}, greedy ${pct(g.passAt1)}; format ` +
            `${pct(r.formatRate)}, image described right ${pct(r.describedRate)} (greedy ` +
            `${pct(g.describedRate)}), row counts right ${pct(r.rowCountRate)} (greedy ` +
            `${pct(g.rowCountRate)}), mean length ${r.meanLength.toFixed(1)} tokens ` +
            `(${(r.seconds + g.seconds).toFixed(0)} s)`,
        );
      }
    }
  } finally {
    parallel?.close();
    opt.dispose();
    model.dispose();
    setBackend(backendBefore);
  }
  const seconds = (performance.now() - started) / 1000;
  log(`pretrain:vl: saved ${out} after ${steps} steps (${seconds.toFixed(0)} s)`);
  return { steps, parameters: count, loss, evals, seconds };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { style: { type: "string" } },
    allowPositionals: true,
  });
  const style = values.style;
  if (style !== undefined && style !== "rows" && style !== "running") {
    console.error(`pretrain:vl: --style must be rows or running, got ${JSON.stringify(style)}`);
    Deno.exit(2);
  }
  const out = positionals[0];
  await pretrainVl({
    ...(out !== undefined ? { out: resolve(out) } : {}),
    ...(style !== undefined ? { style } : {}),
  });
}
