/**
 * A dataset file (`task.data`, `--data`) as a {@link Task}: the rows of a JSONL or Parquet file,
 * split into train and test by a stable hash, scored by the math verifier of `@rlvr/rewards`.
 *
 * Design decisions:
 * - **Reading** is `@rlvr/sampling`'s: `readJsonl` / `readParquet` (by `task.data.format`) with
 *   the field map `{ prompt: promptField, answer: answerField }` (dotted paths such as
 *   `meta.answer`) and `onBadRow: "skip"`; a plain `{{field}}` `template` renders the prompt
 *   text with `renderTemplate` instead (then `promptField` is not read). The whole file is loaded once (a finite task needs random
 *   access for its shuffled epochs).
 * - **Bad rows** (malformed JSON, a missing or null field, a template field that is missing, a
 *   prompt that is not text, an empty answer) are skipped and reported once, when the task is
 *   built (one warning line, the first {@link BAD_ROWS_SHOWN} with their reasons); they never
 *   stop a run. A file without a single usable row is an error naming the file, the field and
 *   the fix.
 * - **Images**: a row's `images` field (a list of file paths, relative to the dataset's folder,
 *   `data:image/...` URLs, or images stored as bytes: a Parquet dataset's Hugging Face `Image`
 *   structs `{bytes, path}`) rides along with paths resolved and bytes as data URLs, for a
 *   vision-language policy (`loop/vision.ts` decodes them when the row is first drawn); it is
 *   part of the row's key, so one question about two images is two problems. A field that is
 *   not such a list is a bad row.
 * - **The reference answer** is reduced with `extractGold`: a GSM8K solution `... #### 42`
 *   becomes `42`, a MATH solution its last `\boxed{...}`, anything else is used trimmed. A
 *   number is its decimal text; a list holds several accepted answers (any one counts).
 * - **Reward**: the completion's final answer as the loop reads it (`<answer>` tags or
 *   `\boxed{}`, else the trimmed completion) goes to `verifyMath`, which extracts from that text
 *   with its default strategies (`\boxed{}`, `<answer>`, `####`, "the answer is", then the last
 *   math segment or number) and compares it with the reference exactly, numerically or
 *   symbolically.
 * - **Split**: `trainTestSplit` of `@rlvr/sampling` by the row's key (a hash of the prompt text
 *   the model sees) with `testFraction`, so equal prompts land on the same side and no test
 *   prompt is ever trained on; adding rows to the file never moves an existing one.
 * - **Index → row** (the {@link Task} contract is an infinite, seeded stream; a file is finite):
 *   `row(HELD_OUT_SEED, i)` is test row `i mod |test|` in file order, so the held-out problems of
 *   `heldOutProblems` (the first `count` distinct rows of that stream) are the first `count`
 *   test rows of the file whatever `trainer.seed` is; `row(seed, i)` for any other seed is the
 *   training split in epochs, `i = epoch · |train| + j` giving train row
 *   `epochPermutation(|train|, seed, epoch)[j]`, so `TrainStream` walks shuffled epochs,
 *   deterministic per seed and resumable from its raw index. `trainer.seed` must therefore not
 *   be {@link HELD_OUT_SEED} (the loop refuses it).
 * - **Rows too long for the model** (prompt tokens + `rollout.maxNewTokens` past its
 *   `max_position_embeddings`) are known only once the model and its tokenizer are loaded, so
 *   {@link fitDataTask} handles them then, by `task.data.overlong`: `skip` (default; counted and
 *   reported like bad rows), `truncate` (the prompt's start is cut, keeping its end, where the
 *   question and the answer format usually are) or `error`. Either way such a row is never run:
 *   a model past its positions computes positions it was never trained on, and one 10,000-token
 *   prompt costs a step minutes and gigabytes. A row keeps its split side (the split is by key,
 *   decided before).
 *
 * @module
 */

import { basename, dirname, isAbsolute, join } from "node:path";
import { bytesToDataUrl } from "@rlvr/image";
import type { ChatMessage } from "@rlvr/policy";
import {
  defineReward,
  extractFinalAnswer,
  extractGold,
  type Reward,
  type Task,
  type TaskRow,
  verifyMath,
} from "@rlvr/rewards";
import {
  type BadRow,
  epochPermutation,
  type Example,
  type ExampleStream,
  promptUid,
  renderTemplate,
  templateFields,
  toMessages,
  trainTestSplit,
} from "@rlvr/sampling";
import { readJsonl, readParquet } from "@rlvr/sampling/fs";
import type { DataSection } from "../config/types.ts";
import { HELD_OUT_SEED } from "./problems.ts";
import { imageSources } from "./vision.ts";

/** How many skipped rows the warning of {@link dataTask} lists with their reasons. */
export const BAD_ROWS_SHOWN = 5;

/** A row of a {@link DataTask}. */
export interface DataRow extends TaskRow {
  /** `data`. */
  task: string;
  /** The canonical key: a hash of {@link DataRow.prompt} (equal prompts, same problem). */
  uid: string;
  /** Every accepted reference answer, reduced (see the module doc); `answer` is the first. */
  references: string[];
  /** Where it came from: `file:line` (JSONL) or `file row N` (Parquet). */
  source: string;
  /** 0-based position among the file's data rows (bad rows included). */
  index: number;
  /** The chat messages, when the prompt field holds a message list (veRL's layout). */
  messages?: ChatMessage[];
}

/** A skipped row of the file and why. */
export interface SkippedRow {
  /** `file:line` or `file row N`. */
  where: string;
  /** Why it was skipped. */
  reason: string;
}

/** A dataset file as a {@link Task}; see the module doc. */
export interface DataTask extends Task<DataRow> {
  /** The file. */
  readonly path: string;
  /** The training split, in file order. */
  readonly train: readonly DataRow[];
  /** The test (held-out) split, in file order. */
  readonly test: readonly DataRow[];
  /** Distinct problems (keys) of the test split: the most `heldOutProblems` can return. */
  readonly testProblems: number;
  /** The split's test fraction (`task.data.testFraction`). */
  readonly testFraction: number;
  /**
   * The skipped rows, in file order (of the rows the reader itself rejects, malformed JSON or a
   * missing field, it keeps the first `MAX_BAD_ROWS_KEPT`).
   */
  readonly skipped: readonly SkippedRow[];
  /**
   * The answer the verifier reads from a completion (after the loop's `<answer>`/`\boxed{}`
   * step), or `null` when it finds none: what maj@k votes on.
   */
  extract(row: DataRow, completion: string): string | null;
  /**
   * Rows {@link fitDataTask} skipped or truncated because their prompt did not fit the model
   * (absent before it ran).
   */
  readonly overlong?: { skipped: number; truncated: number };
}

/** Options of {@link dataTask}. */
export interface DataTaskOptions {
  /** Where the skipped-rows warning goes (default `console.warn`). */
  log?: (line: string) => void;
}

/**
 * Reduces a reference value to the accepted answers: strings through `extractGold`
 * (`"... #### 42"` → `"42"`), finite numbers and bigints as decimal text, a list element by
 * element; throws a message naming what is wrong when nothing usable is left.
 *
 * @example Usage
 * ```ts
 * import { referenceAnswers } from "./data_task.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(referenceAnswers("48 / 2 = 24\n#### 72"), ["72"]);
 * assert.deepEqual(referenceAnswers(12), ["12"]);
 * assert.deepEqual(referenceAnswers(["1/2", 0.5]), ["1/2", "0.5"]);
 * assert.throws(() => referenceAnswers("  "), /empty/);
 * ```
 */
export function referenceAnswers(value: unknown): string[] {
  const one = (v: unknown): string => {
    if (typeof v === "string") {
      const gold = extractGold(v);
      if (gold === "" || gold.includes("####")) {
        throw new TypeError(`the answer ${JSON.stringify(v.slice(0, 40))} is empty`);
      }
      return gold;
    }
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
    if (typeof v === "bigint") return v.toString();
    throw new TypeError(
      `the answer is ${
        v === null ? "null" : Array.isArray(v) ? "a nested list" : typeof v
      }; it must be a string, a number or a list of them`,
    );
  };
  if (Array.isArray(value)) {
    if (value.length === 0) throw new TypeError("the answer is an empty list");
    return value.map(one);
  }
  return [one(value)];
}

/** The prompt text of an example and its chat messages (when it is a message list). */
function promptOf(
  ex: Example,
  section: DataSection,
): { text: string; messages?: ChatMessage[] } {
  if (section.template != null) return { text: renderTemplate(section.template, ex.row) };
  const p = ex.prompt;
  if (typeof p === "string") return { text: p };
  if (typeof p === "number" || typeof p === "bigint") return { text: String(p) };
  if (Array.isArray(p)) {
    const messages = toMessages(ex.row, { prompt: section.promptField });
    return { text: messages.map((m) => m.content).join("\n\n"), messages };
  }
  throw new TypeError(
    `the prompt field ${JSON.stringify(section.promptField)} holds ${
      p === null ? "null" : typeof p
    }; use a field with text or a chat message list, or set task.data.template`,
  );
}

function openStream(section: DataSection): ExampleStream {
  // With a template the prompt is the rendered text, so the field the reader must find is the
  // template's first one, not promptField (whose default, `prompt`, the file may not have).
  const prompt = section.template != null
    ? templateFields(section.template)[0] ?? section.promptField
    : section.promptField;
  const options = {
    fields: section.answerField === null ? { prompt } : { prompt, answer: section.answerField },
    onBadRow: "skip" as const,
  };
  // A Parquet `images` column keeps its bytes (Hugging Face `Image` structs): see rowImages.
  return section.format === "parquet"
    ? readParquet(section.path, { ...options, bytesColumns: ["images"] })
    : readJsonl(section.path, options);
}

function mappingFix(section: DataSection): string {
  const prompt = section.template != null
    ? `task.data.template ${JSON.stringify(section.template)}`
    : `--set task.data.promptField=<field> (now ${JSON.stringify(section.promptField)})`;
  return `map the fields with ${prompt} and --set task.data.answerField=<field> (now ${
    JSON.stringify(section.answerField)
  }); dotted paths such as meta.answer reach nested fields; or fix the file`;
}

/**
 * Loads `section.path` and builds its {@link DataTask} (see the module doc). Rejects when the
 * file cannot be read or has no usable row, naming the file, the field and the fix.
 *
 * @example Usage
 * ```ts
 * import { dataTask } from "./data_task.ts";
 * import { HELD_OUT_SEED } from "./problems.ts";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".jsonl" });
 * const lines = Array.from({ length: 20 }, (_, i) =>
 *   JSON.stringify({ question: `What is ${i} + 1?`, answer: `${i} + 1 = ${i + 1}\n#### ${i + 1}` }));
 * await Deno.writeTextFile(path, lines.join("\n") + "\n");
 * const task = await dataTask({
 *   path, format: "jsonl", promptField: "question", answerField: "answer", testFraction: 0.25,
 * });
 * assert.equal(task.train.length + task.test.length, 20);
 * const row = task.row(HELD_OUT_SEED, 0); // the first test row
 * assert.equal(row, task.test[0]);
 * assert.ok(task.verify(row, row.answer));
 * assert.ok(task.verify(row, `so it is ${row.answer}`)); // the last number
 * assert.ok(!task.verify(row, "-1"));
 * await Deno.remove(path);
 * ```
 */
export async function dataTask(
  section: DataSection,
  options: DataTaskOptions = {},
): Promise<DataTask> {
  const log = options.log ?? ((line: string) => console.warn(line));
  const path = section.path;
  const file = basename(path);
  const name = "data";
  const stream = openStream(section);
  const rows: DataRow[] = [];
  const skipped: (SkippedRow & { row: number })[] = [];
  let badRows: BadRow[] = [];
  try {
    for await (const ex of stream) {
      let prompt: { text: string; messages?: ChatMessage[] };
      let references: string[];
      let images: string[] | null;
      try {
        prompt = promptOf(ex, section);
        if (prompt.text.trim() === "") throw new TypeError("the prompt is empty");
        references = section.answerField === null ? [] : referenceAnswers(ex.answer);
        images = rowImages(ex.row.images, path);
      } catch (e) {
        skipped.push({ row: ex.index, where: ex.source, reason: (e as Error).message });
        continue;
      }
      // The file's other fields ride along for rewards (a code row's `tests`); `expression` would
      // replace the prompt in the compact format, so it does not.
      const { expression: _, ...fields } = ex.row;
      const row: DataRow = {
        ...fields,
        id: `${file}#${ex.index}`,
        task: name,
        prompt: prompt.text,
        answer: references[0] ?? "",
        difficulty: 0,
        // The same question about two images is two problems.
        uid: images !== null
          ? promptUid([prompt.text, imageKey(ex.row.images, images)])
          : section.template != null
          ? promptUid(prompt.text)
          : ex.uid,
        ...(images !== null ? { images } : {}),
        references,
        source: ex.source,
        index: ex.index,
        ...(prompt.messages !== undefined ? { messages: prompt.messages } : {}),
      };
      rows.push(Object.freeze(row));
    }
    badRows = stream.stats.badRows;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error(
        `task.data.path: ${path} does not exist; use an existing .jsonl or .parquet file`,
      );
    }
    // A file-level problem (a mapped Parquet column that is not there, an unreadable file).
    throw new Error(`task.data: ${(e as Error).message}; ${mappingFix(section)}`, { cause: e });
  }
  // The reader's skipped rows (malformed JSON, missing fields) and ours, in file order.
  const all: SkippedRow[] = [
    ...badRows.map((b) => ({
      row: b.row,
      where: b.line !== undefined ? `${path}:${b.line}` : `${path} row ${b.row}`,
      reason: b.reason,
    })),
    ...skipped,
  ].sort((a, b) => a.row - b.row).map(({ where, reason }) => ({ where, reason }));
  const skippedCount = stream.stats.skipped + skipped.length;
  const described = (s: SkippedRow) =>
    s.reason.startsWith(s.where) ? s.reason : `${s.where}: ${s.reason}`;
  if (rows.length === 0 && all[0] === undefined) {
    throw new Error(`task.data: ${path} has no data rows; use a file with one row per problem`);
  }
  if (rows.length === 0) {
    throw new Error(
      `task.data: ${path} has no usable rows (all ${skippedCount} skipped; the first: ${
        described(all[0]!)
      }); ${mappingFix(section)}`,
    );
  }
  if (skippedCount > 0) {
    const shown = all.slice(0, BAD_ROWS_SHOWN).map(described).join(" | ");
    const more = skippedCount > BAD_ROWS_SHOWN
      ? ` | ... and ${skippedCount - BAD_ROWS_SHOWN} more`
      : "";
    log(
      `data: skipped ${skippedCount} of ${
        rows.length + skippedCount
      } rows of ${path}, which the run goes on without: ${shown}${more}`,
    );
  }

  const { train, test } = trainTestSplit(rows, { testFraction: section.testFraction });
  return splitTask(path, section.testFraction, train, test, all, undefined);
}

/**
 * A row's `images` field as image sources (data URLs, or file paths resolved against the
 * dataset's folder), or null when the row has none; anything else is a bad row's reason
 * (`imageSources` of `vision.ts`, the rule task rows follow too). An entry may also be an image
 * stored as bytes, as Parquet datasets of Hugging Face's `Image` feature hold it (`{bytes,
 * path}`, or the bytes alone): PNG or JPEG bytes become a data URL, a struct without bytes its
 * `path`.
 */
function rowImages(value: unknown, dataset: string): string[] | null {
  const entries = Array.isArray(value) ? value.map(imageEntry) : value;
  return imageSources(entries, "")?.map((s) =>
    /^data:/i.test(s) || /^file:\/\//i.test(s) || isAbsolute(s) ? s : join(dirname(dataset), s)
  ) ?? null;
}

/** One `images` entry as an image source when it is an image stored as bytes (see above). */
function imageEntry(entry: unknown, i: number): unknown {
  const bytes = entry instanceof Uint8Array
    ? entry
    : (entry as { bytes?: unknown } | null)?.bytes instanceof Uint8Array
    ? (entry as { bytes: Uint8Array }).bytes
    : null;
  if (bytes !== null) {
    try {
      return bytesToDataUrl(bytes);
    } catch (e) {
      throw new TypeError(`images[${i}]: ${(e as Error).message}`);
    }
  }
  const path = (entry as { path?: unknown } | null)?.path;
  if (typeof entry === "object" && entry !== null && !Array.isArray(entry)) {
    return typeof path === "string" ? path : entry;
  }
  return entry;
}

/** What a row's images add to its key: the entries as given, bytes by their data URLs. */
function imageKey(raw: unknown, sources: readonly string[]): unknown {
  return Array.isArray(raw) ? raw.map((e, i) => (typeof e === "string" ? e : sources[i])) : raw;
}

/** The {@link DataTask} of a file's split rows (see the module doc for `row`). */
function splitTask(
  path: string,
  testFraction: number,
  train: readonly DataRow[],
  test: readonly DataRow[],
  skipped: readonly SkippedRow[],
  overlong: DataTask["overlong"],
): DataTask {
  const name = "data";
  const trainRows = Object.freeze([...train]);
  const testRows = Object.freeze([...test]);
  const usable = trainRows.length + testRows.length;
  let cached: { seed: number; epoch: number; order: Uint32Array } | null = null;
  const row = (seed: number, index: number): DataRow => {
    if (!Number.isInteger(index) || index < 0) {
      throw new RangeError(`data task: index must be an integer >= 0, got ${index}`);
    }
    if (seed === HELD_OUT_SEED) {
      if (testRows.length === 0) {
        throw new RangeError(
          `task.data: the test split of ${path} is empty (${usable} usable rows, testFraction ${testFraction}); raise task.data.testFraction or add rows`,
        );
      }
      return testRows[index % testRows.length]!;
    }
    if (trainRows.length === 0) {
      throw new RangeError(
        `task.data: the training split of ${path} is empty (${usable} usable rows, testFraction ${testFraction}); lower task.data.testFraction or add rows`,
      );
    }
    const n = trainRows.length;
    const epoch = Math.floor(index / n);
    if (cached === null || cached.seed !== seed || cached.epoch !== epoch) {
      cached = { seed, epoch, order: epochPermutation(n, seed, epoch) };
    }
    return trainRows[cached.order[index % n]!]!;
  };
  const verify = (r: DataRow, answer: string): boolean =>
    typeof answer === "string" &&
    r.references.some((ref) => verifyMath(answer, ref, { extractGold: false }).correct);
  const reward: Reward = defineReward(name, ({ completion, row: r }) => {
    if (r.task !== name || (r as unknown as DataRow).references.length === 0) return null;
    const answer = extractFinalAnswer(completion) ?? completion.trim();
    return answer !== "" && verify(r as unknown as DataRow, answer) ? 1 : 0;
  });
  return Object.freeze({
    name,
    path,
    train: trainRows,
    test: testRows,
    testProblems: new Set(testRows.map((r) => r.uid)).size,
    testFraction,
    skipped: Object.freeze([...skipped]),
    ...(overlong !== undefined ? { overlong } : {}),
    row,
    rows(seed: number, count: number, start = 0): DataRow[] {
      return Array.from({ length: count }, (_, i) => row(seed, start + i));
    },
    key: (r: DataRow) => r.uid,
    verify,
    reward,
    extract(r: DataRow, completion: string): string | null {
      const bare = extractFinalAnswer(completion) ?? completion.trim();
      if (bare === "" || r.references.length === 0) return null;
      return verifyMath(bare, r.references[0]!, { extractGold: false }).extracted;
    },
  });
}

/** Options of {@link fitDataTask}. */
export interface FitOptions {
  /** The most prompt tokens a row may have: the model's positions less the new tokens. */
  maxPromptTokens: number;
  /** A row's prompt tokens as the policy sees them (`promptIds(tokenizer, row).length`). */
  promptTokens: (row: DataRow) => number;
  /** What to do with a longer row (`task.data.overlong`; default `skip`). */
  mode?: NonNullable<DataSection["overlong"]>;
  /**
   * The limit in words, for messages, e.g. `the 256 positions of builtin:tiny less
   * rollout.maxNewTokens 8`.
   */
  limit: string;
  /** Where the line about skipped or truncated rows goes (default `console.warn`). */
  log?: (line: string) => void;
}

/**
 * The rows of `task` that fit the model (see the module doc): a row whose prompt has more than
 * `maxPromptTokens` tokens is skipped (added to `skipped` and counted in `overlong`), truncated
 * (its prompt's start cut until it fits, its end kept; skipped when nothing is left) or an error,
 * by `mode`. Returns `task` itself when every row fits. Rejects, naming the file and the fixes,
 * when `mode` is `error` and a row is too long, or when no row is left.
 *
 * @example Usage
 * ```ts
 * import { dataTask, fitDataTask } from "./data_task.ts";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".jsonl" });
 * const rows = Array.from({ length: 10 }, (_, i) => ({ prompt: `${i}+${i}=`, answer: String(2 * i) }));
 * rows.push({ prompt: "9".repeat(500) + "+1=", answer: "1" + "0".repeat(500) });
 * await Deno.writeTextFile(path, rows.map((r) => JSON.stringify(r)).join("\n"));
 * const task = await dataTask({ path, format: "jsonl", promptField: "prompt", answerField: "answer", testFraction: 0.2 });
 * const lines: string[] = [];
 * const fitted = fitDataTask(task, {
 *   maxPromptTokens: 100, promptTokens: (r) => r.prompt.length + 1, limit: "100 tokens", log: (l) => lines.push(l),
 * });
 * assert.equal(fitted.train.length + fitted.test.length, 10);
 * assert.deepEqual(fitted.overlong, { skipped: 1, truncated: 0 });
 * assert.match(lines[0]!, /skipped 1 of 11 rows .* longer than 100 tokens/);
 * assert.throws(() => fitDataTask(task, {
 *   maxPromptTokens: 100, promptTokens: (r) => r.prompt.length + 1, limit: "100 tokens", mode: "error",
 * }), /task\.data: .*:11: the prompt has 504 tokens, more than 100 tokens; /);
 * await Deno.remove(path);
 * ```
 */
export function fitDataTask(task: DataTask, options: FitOptions): DataTask {
  const mode = options.mode ?? "skip";
  const max = options.maxPromptTokens;
  const log = options.log ?? ((line: string) => console.warn(line));
  const fixes =
    "lower rollout.maxNewTokens, use a model with a longer context, or shorten the rows";
  const overlong: SkippedRow[] = [];
  let truncated = 0;
  let longest: { where: string; tokens: number } | null = null;
  const fit = (row: DataRow): DataRow | null => {
    const tokens = options.promptTokens(row);
    if (tokens <= max) return row;
    if (longest === null || tokens > longest.tokens) longest = { where: row.source, tokens };
    if (mode === "error") {
      throw new Error(
        `task.data: ${row.source}: the prompt has ${tokens} tokens, more than ${options.limit}; set task.data.overlong to skip (leave such rows out) or truncate (cut their start), ${fixes}`,
      );
    }
    if (mode === "truncate") {
      const cut = truncatePrompt(row, max, options.promptTokens);
      if (cut !== null) {
        truncated++;
        return cut;
      }
    }
    overlong.push({
      where: row.source,
      reason: `the prompt has ${tokens} tokens, more than ${options.limit}`,
    });
    return null;
  };
  const train = task.train.map(fit).filter((r): r is DataRow => r !== null);
  const test = task.test.map(fit).filter((r): r is DataRow => r !== null);
  if (overlong.length === 0 && truncated === 0) return task;
  const total = task.train.length + task.test.length;
  const worst = longest as { where: string; tokens: number } | null;
  const worstText = worst === null ? "" : ` (the longest: ${worst.where}, ${worst.tokens} tokens)`;
  if (train.length + test.length === 0) {
    throw new Error(
      `task.data: all ${total} rows of ${task.path} have prompts longer than ${options.limit}${worstText}; ${fixes}`,
    );
  }
  log(
    `data: ${overlong.length > 0 ? `skipped ${overlong.length}` : ""}${
      overlong.length > 0 && truncated > 0 ? " and " : ""
    }${
      truncated > 0 ? `truncated ${truncated}` : ""
    } of ${total} rows of ${task.path} whose prompt is longer than ${options.limit}${worstText}; they are never run (task.data.overlong: ${mode}${
      mode === "skip" ? "; truncate keeps them, cut" : ""
    })`,
  );
  const skipped = [...task.skipped, ...overlong];
  return splitTask(task.path, task.testFraction, train, test, skipped, {
    skipped: (task.overlong?.skipped ?? 0) + overlong.length,
    truncated: (task.overlong?.truncated ?? 0) + truncated,
  });
}

/**
 * `row` with the start of its prompt cut so that it has at most `max` tokens, keeping as much of
 * its end as fits (a binary search over the characters kept); null when nothing fits.
 */
function truncatePrompt(
  row: DataRow,
  max: number,
  promptTokens: (row: DataRow) => number,
): DataRow | null {
  const text = row.prompt;
  const withTail = (keep: number): DataRow => {
    const { messages: _, ...rest } = row; // the messages would still hold the whole text
    return { ...rest, prompt: text.slice(text.length - keep) };
  };
  let lo = 0; // fits (or is nothing)
  let hi = text.length; // does not fit
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (promptTokens(withTail(mid)) <= max) lo = mid;
    else hi = mid;
  }
  if (lo === 0 || text.slice(text.length - lo).trim() === "") return null;
  return Object.freeze(withTail(lo));
}

/**
 * Whether `task` is a {@link DataTask} (built by {@link dataTask}).
 *
 * @example Usage
 * ```ts
 * import { isDataTask } from "./data_task.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * assert.equal(isDataTask(arithmeticTask()), false);
 * ```
 */
export function isDataTask(task: Task): task is DataTask {
  const t = task as Partial<DataTask>;
  return Array.isArray(t.test) && Array.isArray(t.train) && typeof t.extract === "function";
}
