/**
 * Prompts and traces of the vision-language warm start (`deno task pretrain:vl`): a row of a
 * visual task becomes prompt token ids around its processed image ({@link vlPrompt}) and, for
 * supervised training, a step-by-step completion `<think>…</think><answer>…</answer>`
 * ({@link vlCompletion}).
 *
 * Design decisions:
 * - **The prompt is Qwen2-VL's image block plus a compact question.** `<bos>`, then per image
 *   `<|vision_start|>`, one `<|image_pad|>` per image token (what the processor's grid gives) and
 *   `<|vision_end|>`, then the question in a few characters (`red circles?`): a char-level model
 *   of a million parameters cannot read the task's English instructions, as in `format.ts`.
 * - **The trace describes the image, then counts in text.** At the warm start's sizes a 56-pixel
 *   image is 4×4 patches of 14 pixels, one token each (merge 1), and every shape sits inside one
 *   patch. The trace goes through the patch rows in the processor's (row-major) order; for each
 *   it writes every patch's content (`.` for an empty patch, else a code per shape: its colour's
 *   and kind's first letters, `rc` for a red circle), then `:` and the number of targets in the
 *   row, then `=` and the running total: `rc.gt.:1=1 bs...:0=1 rcrc.gd:2=3 ....:0=3`. The answer
 *   is the last total. Each code is read off one image token, so the tower is taught by every
 *   shape, whatever the question; matching the question's colour and kind happens in text.
 *   (A first design wrote only each token's count of targets, `1+0=1+2=3+1=4`, four 2×2-merged
 *   tokens: after 300 steps of 32 its model still answered from the prior, as if blind — the
 *   tower had to learn colour and kind from a signal that depended on the question. With the
 *   description the tower's features are learned from every shape; at 800 steps the
 *   descriptions are right for 99% of the rows.)
 * - **Or a running count** (`style: "running"`, the shipped warm start's): the same
 *   descriptions, with the running total written after every target code and each row ending in
 *   `=` and the total so far: `rc1.gt.=1 bs...=1 rc2rc3.gd=3 ....=3` (for red circles). A row's
 *   count is then one decision per code (is it the question's?) and a successor digit, instead of
 *   a count over the row's codes at once: the warm start trained on it counts 86% of the recipe
 *   task's rows right at temperature 1, against 57% with the per-row count (`style: "rows"`, the
 *   default here and the first warm start's). The readers ({@link checkTrace},
 *   {@link rowCountSteps}) take a `<think>` block without `:` as this style and a row's count as
 *   its total less the row before's.
 * - **A noisy teacher, on purpose.** With probability `slipRate` one row's count is written one
 *   off (one more for a row without targets, else one more or one less at random; in the
 *   running style one of the row's targets goes uncounted or another of its shapes is counted)
 *   and the totals go on from it, so the answer is wrong: SFT learns to slip, sampling at
 *   temperature 1 does, greedy decoding mostly does not, and RL has a mistake to unlearn.
 * - **The answers are what the task verifiers read** (`<answer>4</answer>`), so the tasks'
 *   rewards and the format reward apply unchanged.
 *
 * @module
 */

import {
  decodeImage,
  parseDataUrl,
  processQwen2VLImages,
  type Qwen2VLOptions,
  type RgbImage,
  smartResize,
} from "@rlvr/image";
import type { CharTokenizer, GridThw } from "@rlvr/policy";
import type { Rng, TaskRow } from "@rlvr/rewards";
import { promptText } from "./format.ts";

/** A row's prompt for the vision-language model: token ids and the processed images. */
export interface VlPrompt {
  /** Prompt token ids: `<bos>`, each image's block, the question. */
  ids: number[];
  /** The processor's patches of every image in order, `[Σ t·h·w, patchDim]` row-major. */
  pixelValues: Float32Array;
  /** Values per patch row. */
  patchDim: number;
  /** `[t, h, w]` of each image, in patches. */
  gridThw: GridThw[];
}

/**
 * How a trace counts (see the module doc): `rows` writes each patch row's count after its
 * description (`gtgt.gt:3=4`); `running` writes the running total after every target code
 * (`gt2gt3.gt4=4`), so the count is one increment per matching code.
 */
export type VlTraceStyle = "rows" | "running";

/** Options of {@link vlCompletion}. */
export interface VlTraceOptions {
  /**
   * Probability that one patch row's count is written one off and the totals go on from it (the
   * answer is then wrong; default 0.2).
   */
  slipRate?: number;
  /**
   * How the trace counts (default `rows`, the first warm start's; `deno task pretrain:vl` writes
   * the shipped one's, `running`).
   */
  style?: VlTraceStyle;
}

/**
 * The compact question of a row (`promptText` of `format.ts`): `red circles?` for counting; a
 * task without a compact form keeps its full prompt.
 *
 * @example Usage
 * ```ts
 * import { vlQuestion } from "./vl_format.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const row = countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 0);
 * assert.equal(vlQuestion(row), `${row.targetColor} ${row.targetKind}s?`);
 * ```
 */
export function vlQuestion(row: TaskRow): string {
  return promptText(row);
}

/**
 * The decoded images of a row (its `images`, PNG or JPEG data URLs).
 *
 * @example Usage
 * ```ts
 * import { rowImages } from "./vl_format.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const [image] = rowImages(countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 0));
 * assert.equal(image!.width, 56);
 * ```
 */
export function rowImages(row: TaskRow): RgbImage[] {
  const images = row.images;
  if (!Array.isArray(images) || images.length === 0) {
    throw new TypeError(
      `vlPrompt: row ${row.id} has no images (a visual task's row carries images: [data URL])`,
    );
  }
  return images.map((url) => decodeImage(parseDataUrl(url as string).bytes));
}

/**
 * The prompt of a row for the vision-language model (see the module doc): token ids and the
 * processed images, one `<|image_pad|>` per image token.
 *
 * @example Usage
 * ```ts
 * import { vlPrompt } from "./vl_format.ts";
 * import { VL_PROCESSOR, vlTokenizer } from "./pretrain_vl.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const tok = vlTokenizer();
 * const row = countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 0);
 * const p = vlPrompt(row, tok, VL_PROCESSOR);
 * assert.deepEqual(p.gridThw, [[1, 4, 4]]); // 16 patches of 14 pixels, one token each
 * assert.equal(p.pixelValues.length, 16 * p.patchDim);
 * assert.match(tok.decode(p.ids), /^<bos><\|vision_start\|>(<\|image_pad\|>){16}<\|vision_end\|>\w+ \w+s\?$/);
 * ```
 */
export function vlPrompt(
  row: TaskRow,
  tokenizer: CharTokenizer,
  processor: Qwen2VLOptions,
): VlPrompt {
  const processed = processQwen2VLImages(rowImages(row), processor);
  return {
    ids: vlPromptIds(tokenizer, row, processed.imageTokenCounts),
    pixelValues: processed.pixelValues,
    patchDim: processed.patchDim,
    gridThw: processed.gridThw,
  };
}

/**
 * The prompt token ids of a row whose images take `imageTokenCounts` image tokens (the
 * processor's counts, e.g. `RowImages.tokenCounts(row)` of `loop/vision.ts`): `<bos>`, per image
 * `<|vision_start|>`, that many `<|image_pad|>` and `<|vision_end|>`, then {@link vlQuestion}.
 *
 * @example Usage
 * ```ts
 * import { vlPromptIds } from "./vl_format.ts";
 * import { vlTokenizer } from "./pretrain_vl.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const tok = vlTokenizer();
 * const row = countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 0);
 * const ids = vlPromptIds(tok, row, [2]);
 * assert.equal(
 *   tok.decode(ids),
 *   `<bos><|vision_start|><|image_pad|><|image_pad|><|vision_end|>${row.targetColor} ${row.targetKind}s?`,
 * );
 * ```
 */
export function vlPromptIds(
  tokenizer: CharTokenizer,
  row: TaskRow,
  imageTokenCounts: readonly number[],
): number[] {
  const token = (word: string) => {
    const ids = tokenizer.encode(word, { addSpecialTokens: false });
    if (ids.length !== 1) {
      throw new RangeError(`vlPromptIds: the tokenizer must have ${word} as one token`);
    }
    return ids[0]!;
  };
  const start = token("<|vision_start|>");
  const pad = token("<|image_pad|>");
  const end = token("<|vision_end|>");
  const ids: number[] = tokenizer.bosTokenId === null ? [] : [tokenizer.bosTokenId];
  for (const n of imageTokenCounts) {
    ids.push(start, ...new Array<number>(n).fill(pad), end);
  }
  ids.push(...tokenizer.encode(vlQuestion(row), { addSpecialTokens: false }));
  return ids;
}

/** A shape of a counting row, as `countShapesTask` stores it. */
interface RowShape {
  kind: string;
  color: string;
  x: number;
  y: number;
  size: number;
}

/**
 * The code of a shape in a trace: its colour's and its kind's first letters (`rc` for a red
 * circle; the six colours and four kinds all differ in their first letter).
 *
 * @example Usage
 * ```ts
 * import { shapeCode } from "./vl_format.ts";
 * import assert from "node:assert/strict";
 * assert.equal(shapeCode({ color: "purple", kind: "diamond" }), "pd");
 * ```
 */
export function shapeCode(shape: { color: string; kind: string }): string {
  return `${shape.color[0]}${shape.kind[0]}`;
}

/**
 * The shapes of a counting row by image token: cell `r · w + c` of the processor's `[t, h, w]`
 * grid (merge 1: one token per patch) holds the shapes whose centre lies in patch (r, c).
 *
 * @example Usage
 * ```ts
 * import { cellShapes } from "./vl_format.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const row = countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 2);
 * const cells = cellShapes(row, [1, 4, 4]);
 * assert.equal(cells.length, 16);
 * assert.equal(cells.flat().length, row.shapes.length);
 * ```
 */
export function cellShapes(row: TaskRow, grid: GridThw): RowShape[][] {
  const shapes = row.shapes as RowShape[];
  const width = row.width as number;
  const height = row.height as number;
  const [, rows, cols] = grid;
  const cells: RowShape[][] = Array.from({ length: rows * cols }, () => []);
  for (const s of shapes) {
    const c = Math.min(cols - 1, Math.floor((s.x + s.size / 2) * cols / width));
    const r = Math.min(rows - 1, Math.floor((s.y + s.size / 2) * rows / height));
    cells[r * cols + c]!.push(s);
  }
  return cells;
}

/** A patch row's description in the trace: per patch `.` when empty, else its shapes' codes. */
function rowCodes(line: readonly RowShape[][]): string {
  return line.map((c) => c.length === 0 ? "." : c.map(shapeCode).join("")).join("");
}

/** Options of {@link rowCountSteps} and {@link rowCountCredit} (the `vl_rows` reward's). */
export interface RowCreditOptions {
  /**
   * Credit a row only when its description is also the image's (default false: the count
   * alone).
   */
  described?: boolean;
}

/** The number of target shapes (the row's colour and kind) in each patch row of `cells`. */
function targetsPerRow(row: TaskRow, cells: RowShape[][], grid: GridThw): number[] {
  const [, rows, cols] = grid;
  return Array.from({ length: rows }, (_, r) =>
    cells.slice(r * cols, (r + 1) * cols).flat()
      .filter((s) => s.color === row.targetColor && s.kind === row.targetKind).length);
}

/**
 * A supervised completion of a counting row (see the module doc), drawing its slips from `rng`;
 * null for a row the trace format does not cover (not a counting row).
 *
 * @example Usage
 * ```ts
 * import { vlCompletion } from "./vl_format.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import { seededRng } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = countShapesTask({ size: 56, shapeSize: [8, 10] });
 * const row = task.row(0, 1);
 * const text = vlCompletion(row, [1, 4, 4], seededRng(0, 0), { slipRate: 0 })!;
 * assert.match(text, /^<think>([a-z.]+:\d=\d+ ){3}[a-z.]+:\d=\d+<\/think><answer>\d+<\/answer>$/);
 * assert.ok(text.endsWith(`<answer>${row.answer}</answer>`));
 * ```
 */
export function vlCompletion(
  row: TaskRow,
  grid: GridThw,
  rng: Rng,
  options: VlTraceOptions = {},
): string | null {
  if (!Array.isArray(row.shapes) || row.targetColor === undefined) return null;
  const cells = cellShapes(row, grid);
  const cols = grid[2];
  if (options.style === "running") return runningCompletion(row, cells, grid, rng, options);
  const counts = targetsPerRow(row, cells, grid);
  const lines: { codes: string; count: number }[] = [];
  for (let r = 0; r < grid[1]; r++) {
    const line = cells.slice(r * cols, (r + 1) * cols);
    lines.push({
      codes: rowCodes(line),
      count: counts[r]!,
    });
  }
  if (rng.next() < (options.slipRate ?? 0.2)) {
    const line = lines[rng.int(0, lines.length - 1)]!;
    line.count = line.count === 0 || rng.next() < 0.5 ? line.count + 1 : line.count - 1;
  }
  let sum = 0;
  const steps = lines.map((l) => `${l.codes}:${l.count}=${(sum += l.count)}`);
  return `<think>${steps.join(" ")}</think><answer>${sum}</answer>`;
}

/**
 * The `running` trace: every patch row's codes, each counted code followed by the running total,
 * then `=` and the total so far. A slip (probability `slipRate`) picks a patch row that holds a
 * shape and either leaves one of its targets uncounted or counts one of its other shapes (each
 * half the time when both are there), so that row's count is one off and the totals go on from
 * it, as the `rows` trace's slip.
 */
function runningCompletion(
  row: TaskRow,
  cells: RowShape[][],
  grid: GridThw,
  rng: Rng,
  options: VlTraceOptions,
): string {
  const cols = grid[2];
  const isTarget = (s: RowShape) => s.color === row.targetColor && s.kind === row.targetKind;
  const counted = cells.map((c) => c.map(isTarget));
  if (rng.next() < (options.slipRate ?? 0.2)) {
    const filled = Array.from({ length: grid[1] }, (_, r) => r)
      .filter((r) => cells.slice(r * cols, (r + 1) * cols).some((c) => c.length > 0));
    if (filled.length > 0) {
      const r = filled[rng.int(0, filled.length - 1)]!;
      const spots: { cell: number; shape: number; target: boolean }[] = [];
      for (let cell = r * cols; cell < (r + 1) * cols; cell++) {
        cells[cell]!.forEach((s, shape) => spots.push({ cell, shape, target: isTarget(s) }));
      }
      const targets = spots.filter((x) => x.target);
      const others = spots.filter((x) => !x.target);
      const drop = others.length === 0 || (targets.length > 0 && rng.next() < 0.5);
      const pool = drop ? targets : others;
      const spot = pool[rng.int(0, pool.length - 1)]!;
      counted[spot.cell]![spot.shape] = !drop;
    }
  }
  let sum = 0;
  const steps: string[] = [];
  for (let r = 0; r < grid[1]; r++) {
    let text = "";
    for (let cell = r * cols; cell < (r + 1) * cols; cell++) {
      const shapes = cells[cell]!;
      if (shapes.length === 0) text += ".";
      shapes.forEach((s, i) => {
        text += shapeCode(s);
        if (counted[cell]![i]) text += String(++sum);
      });
    }
    steps.push(`${text}=${sum}`);
  }
  return `<think>${steps.join(" ")}</think><answer>${sum}</answer>`;
}

/**
 * One patch row's step of a trace: `codes:count=total` (`rows`), or with `running` (a
 * `<think>` block without `:`) `codes=total` with running totals among the codes, whose count is
 * its total less `previousTotal`, the step before's. `codes` comes without running totals; null
 * for a malformed step.
 */
function parseStep(
  step: string,
  previousTotal: number,
  running: boolean,
): { codes: string; count: number; total: number } | null {
  if (running) {
    const m = /^([^=]*)=(\d+)$/.exec(step);
    if (m === null) return null;
    const total = Number(m[2]);
    return { codes: m[1]!.replace(/\d+/g, ""), count: total - previousTotal, total };
  }
  const m = /^([^:]*):(\d+)=(\d+)$/.exec(step);
  return m === null ? null : { codes: m[1]!, count: Number(m[2]), total: Number(m[3]) };
}

/** The patch-row steps of a completion's `<think>` block, and whether it is a `running` trace. */
function thinkSteps(text: string): { steps: string[]; at: number; running: boolean } | null {
  const think = /<think>([^<]*)<\/think>/.exec(text);
  if (think === null) return null;
  return {
    steps: think[1]!.split(" "),
    at: think.index + "<think>".length,
    running: !think[1]!.includes(":"),
  };
}

/** What {@link checkTrace} finds in a completion of a counting row. */
export interface TraceCheck {
  /** Every patch row's description is the image's (the codes before each `:`). */
  described: boolean;
  /** Patch rows the completion wrote (up to the grid's rows). */
  lines: number;
  /** Of those, rows whose count is the number of target codes the row itself lists. */
  countsRight: number;
}

/**
 * Where a completion of a counting row went wrong: whether it described the image right, and
 * how many of its row counts follow from its own descriptions; null for a row that is not a
 * counting row.
 *
 * @example Usage
 * ```ts
 * import { checkTrace, vlCompletion } from "./vl_format.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import { seededRng } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 4);
 * const text = vlCompletion(row, [1, 4, 4], seededRng(0), { slipRate: 0 })!;
 * assert.deepEqual(checkTrace(row, [1, 4, 4], text), { described: true, lines: 4, countsRight: 4 });
 * assert.equal(checkTrace(row, [1, 4, 4], "<answer>3</answer>")!.described, false);
 * ```
 */
export function checkTrace(row: TaskRow, grid: GridThw, text: string): TraceCheck | null {
  const want = vlCompletion(row, grid, { next: () => 1 } as unknown as Rng, { slipRate: 0 });
  if (want === null) return null;
  const wanted = thinkSteps(want)!.steps.map((l) => l.split(":")[0]);
  const think = thinkSteps(text);
  const got = (think?.steps ?? [""]).slice(0, wanted.length);
  const target = shapeCode({
    color: row.targetColor as string,
    kind: row.targetKind as string,
  });
  const targets = (codes: string) =>
    (codes.match(/[a-z]{2}/g) ?? []).filter((c) => c === target).length;
  let described = got.length === wanted.length;
  let written = 0;
  let countsRight = 0;
  let total = 0;
  got.forEach((line, i) => {
    if (think?.running === true) {
      const step = parseStep(line, total, true);
      total = step?.total ?? NaN;
      if (step?.codes !== wanted[i]) described = false;
      if (step === null) return;
      written++;
      if (step.count === targets(step.codes)) countsRight++;
      return;
    }
    const [codes, rest] = line.split(":");
    if (codes !== wanted[i]) described = false;
    if (codes === undefined || rest === undefined) return;
    written++;
    if (Number(rest.split("=")[0]) === targets(codes) && /^\d+=/.test(rest)) countsRight++;
  });
  return { described, lines: written, countsRight };
}

/**
 * Where a completion's count of each patch row ends and whether it is right: one step per
 * `codes:count=total` step of the completion's `<think>` block (the first `rows` of the grid;
 * a row the completion did not write has no step), ending at the character after it, with value
 * `1/rows` when its count is the number of targets in that patch row of the image (the truth,
 * from the row's shapes, not from the completion's own codes), else 0. Null for a row that is
 * not a counting row or a completion without a `<think>…</think>` block. With `described`, a
 * step is right only when the row's description (the codes before `:`) is also the image's, so
 * a count that is right for a wrong picture earns nothing. The values sum to
 * {@link rowCountCredit}: these are the steps of the `vl_rows` reward.
 *
 * @example Usage
 * ```ts
 * import { rowCountSteps } from "./vl_format.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const row = countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 4);
 * const steps = rowCountSteps(row, [1, 4, 4], "<think>.rc..:9=9 ....:0=9</think>")!;
 * assert.deepEqual(steps.map((s) => s.end), [16, 25]); // after "....:0=9"
 * assert.equal(steps[0]!.value, 0); // nine is never right
 * assert.equal(rowCountSteps(row, [1, 4, 4], "<answer>3</answer>"), null);
 * ```
 */
export function rowCountSteps(
  row: TaskRow,
  grid: GridThw,
  text: string,
  options: RowCreditOptions = {},
): { end: number; value: number }[] | null {
  if (!Array.isArray(row.shapes) || row.targetColor === undefined) return null;
  const think = thinkSteps(text);
  if (think === null) return null;
  const cells = cellShapes(row, grid);
  const want = targetsPerRow(row, cells, grid);
  const [, rows, cols] = grid;
  const written = think.steps;
  const steps: { end: number; value: number }[] = [];
  let at = think.at;
  let total = 0;
  for (let r = 0; r < rows && r < written.length; r++) {
    const step = parseStep(written[r]!, total, think.running);
    total = step?.total ?? NaN;
    at += written[r]!.length;
    const described = options.described !== true ||
      step?.codes === rowCodes(cells.slice(r * cols, (r + 1) * cols));
    const right = step !== null && step.count === want[r] && described;
    steps.push({ end: at, value: right ? 1 / rows : 0 });
    at += 1; // the space between steps
  }
  return steps;
}

/**
 * The share of a counting row's patch rows whose count a completion writes right: the `i`-th
 * step `codes:count=total` of its `<think>` block against the number of targets in patch row
 * `i` of the image (the truth, from the row's shapes, not from the completion's own codes);
 * null for a row that is not a counting row. A missing or malformed step counts as wrong, and
 * steps past the grid's rows are not read. The value of `grpo_vision`'s `vl_rows` reward; its
 * steps are {@link rowCountSteps}.
 *
 * @example Usage
 * ```ts
 * import { rowCountCredit, vlCompletion } from "./vl_format.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import { seededRng } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 4);
 * const text = vlCompletion(row, [1, 4, 4], seededRng(0), { slipRate: 0 })!;
 * assert.equal(rowCountCredit(row, [1, 4, 4], text), 1);
 * assert.equal(rowCountCredit(row, [1, 4, 4], "<answer>3</answer>"), 0);
 * const sum = { id: "x", task: "arithmetic", difficulty: 0, prompt: "2+2", answer: "4" };
 * assert.equal(rowCountCredit(sum, [1, 4, 4], text), null);
 * ```
 */
export function rowCountCredit(
  row: TaskRow,
  grid: GridThw,
  text: string,
  options: RowCreditOptions = {},
): number | null {
  if (!Array.isArray(row.shapes) || row.targetColor === undefined) return null;
  const steps = rowCountSteps(row, grid, text, options) ?? [];
  return steps.reduce((sum, s) => sum + s.value, 0);
}

/**
 * The image-token grid `[1, rows, cols]` a counting row's image gets from `processor` (its
 * size after `smartResize`, in merged patches), without decoding the image: the grid the
 * trace's patch rows follow. Null for a row without `width` and `height` (not a visual row).
 *
 * @example Usage
 * ```ts
 * import { traceGrid } from "./vl_format.ts";
 * import { VL_PROCESSOR } from "./pretrain_vl.ts";
 * import { countShapesTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const row = countShapesTask({ size: 56, shapeSize: [8, 10] }).row(0, 0);
 * assert.deepEqual(traceGrid(row, VL_PROCESSOR), [1, 4, 4]);
 * const sum = { id: "x", task: "arithmetic", difficulty: 0, prompt: "2+2", answer: "4" };
 * assert.equal(traceGrid(sum, VL_PROCESSOR), null);
 * ```
 */
export function traceGrid(row: TaskRow, processor: Required<Qwen2VLOptions>): GridThw | null {
  const { width, height } = row;
  if (typeof width !== "number" || typeof height !== "number") return null;
  const factor = processor.patchSize * processor.mergeSize;
  const size = smartResize(height, width, {
    factor,
    minPixels: processor.minPixels,
    maxPixels: processor.maxPixels,
  });
  return [1, size.height / factor, size.width / factor];
}
