/**
 * How a task row becomes the policy's prompt, for the built-in char-level model and for a
 * Hugging Face checkpoint (`--model <folder>`).
 *
 * Design decisions, one format per kind of tokenizer:
 * - **`compact`** for a {@link CharTokenizer} (the built-in tiny model and anything made by
 *   `deno task pretrain`): `<bos>` then `promptText(row)` (`7*8=` for arithmetic), exactly what
 *   these models were pre-trained on. They cannot read English instructions, and the default run's
 *   numbers depend on this format staying byte for byte what it was.
 * - **`chat`** for a tokenizer with a chat template (an instruct model such as Qwen2.5-Instruct):
 *   one user message whose content is the row's full `prompt` (the task's own instructions,
 *   including how to format the answer), rendered with `add_generation_prompt: true` and no
 *   system message (a template that has a default system prompt, as Qwen2.5's, adds it itself),
 *   then encoded without adding special tokens, since the template writes them: what
 *   `transformers`' `apply_chat_template(messages, add_generation_prompt=True, tokenize=True)`
 *   gives.
 * - **`plain`** for a Hugging Face tokenizer without a chat template (a base model): the row's
 *   full `prompt`, encoded with the tokenizer's own special tokens (`addSpecialTokens: true`,
 *   e.g. Llama's `<|begin_of_text|>`), as `tokenizer(prompt)` in `transformers`.
 * - The format follows the tokenizer only: the config schema has no switch for it (no
 *   `task.chatTemplate` field), so a chat model cannot be prompted without its template from a
 *   config; its template is how it was tuned to be prompted.
 *
 * Whether a tokenizer has a chat template is asked of the tokenizer itself (rendering a probe
 * message), once per tokenizer object.
 *
 * A row with images (`row.images`, a visual task's or a dataset's) is written for a
 * vision-language policy as Qwen2-VL's processor writes it: each image is
 * `<|vision_start|><|image_pad|><|vision_end|>` before the text (compact and plain), or an
 * image content part of the user message (chat, so the template places the markers); the one
 * `<|image_pad|>` of each image is then repeated for every merged patch of that image
 * ({@link PromptImages}, from the processed image), as the processor expands it. A text-only
 * policy given such a row fails with an error naming the row, not a prompt without its image.
 *
 * @module
 */

import {
  CharTokenizer,
  type ChatContentPart,
  expandImageTokens,
  type Tokenizer,
} from "@rlvr/policy";
import type { TaskRow } from "@rlvr/rewards";
import type { Episode } from "@rlvr/rewards/env";
import { promptText } from "../demo/format.ts";
import { rowImageSources } from "./vision.ts";

/** The text of one image in a compact or plain prompt, before the processor expands it. */
export const IMAGE_MARKERS = "<|vision_start|><|image_pad|><|vision_end|>";

/**
 * What {@link promptIds} needs to write a row's images: the image token and, for a prepared
 * row, the tokens each of its images takes (`VisionInputs` of `vision.ts`).
 */
export interface PromptImages {
  /** The id of `<|image_pad|>`. */
  readonly imageTokenId: number;
  /** Tokens per image of `row` (its merged patches). */
  tokenCounts(row: TaskRow): number[];
}

/** How prompts are written for a tokenizer (see the module doc). */
export type PromptFormat = "compact" | "chat" | "plain";

const formats = new WeakMap<Tokenizer, PromptFormat>();

/**
 * The prompt format of a tokenizer: `compact` for a {@link CharTokenizer}, `chat` when it has a
 * chat template, `plain` otherwise.
 *
 * @example Usage
 * ```ts
 * import { tinyTokenizer } from "../demo/format.ts";
 * import { promptFormat } from "./prompt.ts";
 * import { HfTokenizer } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * assert.equal(promptFormat(tinyTokenizer()), "compact");
 * const vocab = { a: 0, "<|end|>": 1 };
 * const json = {
 *   model: { type: "BPE", vocab, merges: [] },
 *   added_tokens: [{ id: 1, content: "<|end|>", special: true }],
 * };
 * assert.equal(promptFormat(new HfTokenizer(json, { eos_token: "<|end|>" })), "plain");
 * const chat = new HfTokenizer(json, {
 *   eos_token: "<|end|>",
 *   chat_template: "{% for m in messages %}{{ m.content + eos_token }}{% endfor %}",
 * });
 * assert.equal(promptFormat(chat), "chat");
 * ```
 */
export function promptFormat(tokenizer: Tokenizer): PromptFormat {
  const known = formats.get(tokenizer);
  if (known !== undefined) return known;
  let format: PromptFormat;
  if (tokenizer instanceof CharTokenizer) {
    format = "compact";
  } else {
    try {
      tokenizer.applyChatTemplate([{ role: "user", content: "" }], { addGenerationPrompt: true });
      format = "chat";
    } catch (e) {
      // Only "there is no template" means plain; a template that fails is an error to see.
      if (!/has no chat_template/.test((e as Error).message)) throw e;
      format = "plain";
    }
  }
  formats.set(tokenizer, format);
  return format;
}

/**
 * The prompt of a row as text, in the tokenizer's format (for `chat`, the rendered template with
 * its markers; this is what `samples.jsonl` shows).
 *
 * @example Usage
 * ```ts
 * import { tinyTokenizer } from "../demo/format.ts";
 * import { renderPrompt } from "./prompt.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
 * assert.equal(renderPrompt(tinyTokenizer(), row), row.expression.replaceAll(" ", "") + "=");
 * ```
 */
export function renderPrompt(
  tokenizer: Tokenizer,
  row: TaskRow,
  format: PromptFormat = promptFormat(tokenizer),
): string {
  const images = rowImageSources(row).length;
  switch (format) {
    case "compact":
      return IMAGE_MARKERS.repeat(images) + promptText(row);
    case "chat": {
      const content: string | ChatContentPart[] = images === 0 ? row.prompt : [
        ...Array.from({ length: images }, (): ChatContentPart => ({ type: "image" })),
        { type: "text", text: row.prompt },
      ];
      return tokenizer.applyChatTemplate([{ role: "user", content }], {
        addGenerationPrompt: true,
      });
    }
    default:
      return IMAGE_MARKERS.repeat(images) + row.prompt;
  }
}

/**
 * The token ids of a row's prompt in the tokenizer's format: `compact` is BOS (when the tokenizer
 * has one) then the compact text; `chat` the rendered template encoded without added special
 * tokens; `plain` the row's prompt with the tokenizer's own special tokens. A row with images
 * needs `images` (its `<|image_pad|>` tokens are expanded; see the module doc).
 *
 * @example Usage
 * ```ts
 * import { tinyTokenizer } from "../demo/format.ts";
 * import { promptIds } from "./prompt.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const tok = tinyTokenizer();
 * const ids = promptIds(tok, arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0));
 * assert.equal(ids[0], tok.bosTokenId);
 * ```
 */
export function promptIds(
  tokenizer: Tokenizer,
  row: TaskRow,
  format: PromptFormat = promptFormat(tokenizer),
  images?: PromptImages,
): number[] {
  const ids = encodeRendered(tokenizer, renderPrompt(tokenizer, row, format), format);
  return withImageTokens(ids, row, images, { of: `task ${row.task}`, instead: "a task" });
}

/**
 * `ids`, a prompt of `row`, with each of its images' `<|image_pad|>` expanded to the image's
 * token count (the processor's); `ids` itself for a row without images. A row with images and
 * no `images` (a text-only policy) is refused, naming the row, where it comes from (`of`: `task
 * count_shapes`) and what to use `instead` (`a task`, `an environment`) without images.
 *
 * @example Usage
 * ```ts
 * import { withImageTokens } from "./prompt.ts";
 * import assert from "node:assert/strict";
 * const row = { id: "r1", task: "t", difficulty: 0, prompt: "?", answer: "1", images: ["x"] };
 * const images = { imageTokenId: 9, tokenCounts: () => [3] };
 * const where = { of: "task t", instead: "a task" };
 * assert.deepEqual(withImageTokens([1, 9, 2], row, images, where), [1, 9, 9, 9, 2]);
 * assert.throws(() => withImageTokens([1, 9, 2], row, null, where), /row r1 of task t carries images/);
 * ```
 */
export function withImageTokens(
  ids: number[],
  row: TaskRow,
  images: PromptImages | null | undefined,
  where: { of: string; instead: string },
): number[] {
  if (rowImageSources(row).length === 0) return ids;
  if (images == null) {
    throw new Error(
      `row ${row.id} of ${where.of} carries images, but the policy is a text-only model; ` +
        `use a vision-language checkpoint (model.checkpoint: builtin:tiny-vl, or a Qwen2-VL ` +
        `folder) or ${where.instead} without images`,
    );
  }
  return expandImageTokens(ids, images.imageTokenId, images.tokenCounts(row));
}

/**
 * The prompt text of a free-form user message (an environment's first observation) in the
 * tokenizer's format: the chat template around it, or the text itself (compact and plain); with
 * `images` > 0, that many images before the text as {@link renderPrompt} writes a row's (image
 * parts of the message, or {@link IMAGE_MARKERS}), for `expandImageTokens` to fill.
 *
 * @example Usage
 * ```ts
 * import { loadPolicy } from "./policy.ts";
 * import { renderText } from "./prompt.ts";
 * import assert from "node:assert/strict";
 * const { tokenizer } = await loadPolicy("builtin:tiny");
 * assert.equal(renderText(tokenizer, "347+589="), "347+589=");
 * ```
 */
export function renderText(
  tokenizer: Tokenizer,
  text: string,
  format: PromptFormat = promptFormat(tokenizer),
  images = 0,
): string {
  if (format !== "chat") return IMAGE_MARKERS.repeat(images) + text;
  const content: string | ChatContentPart[] = images === 0 ? text : [
    ...Array.from({ length: images }, (): ChatContentPart => ({ type: "image" })),
    { type: "text", text },
  ];
  return tokenizer.applyChatTemplate([{ role: "user", content }], { addGenerationPrompt: true });
}

/**
 * Token ids of a rendered prompt, with the special tokens each format needs (BOS for compact,
 * the tokenizer's own for plain, none added to a chat template's text): what
 * {@link promptIds} and multi-turn episodes encode prompts with.
 *
 * @example Usage
 * ```ts
 * import { loadPolicy } from "./policy.ts";
 * import { encodeRendered, promptIds } from "./prompt.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const { tokenizer } = await loadPolicy("builtin:tiny");
 * const row = arithmeticTask({ digits: 1, chainLength: 1 }).row(0, 0);
 * assert.deepEqual(encodeRendered(tokenizer, `${row.expression.replaceAll(" ", "")}=`), promptIds(tokenizer, row));
 * ```
 */
export function encodeRendered(
  tokenizer: Tokenizer,
  text: string,
  format: PromptFormat = promptFormat(tokenizer),
): number[] {
  if (format === "plain") return tokenizer.encode(text, { addSpecialTokens: true });
  const ids = tokenizer.encode(text, { addSpecialTokens: false });
  if (format === "chat") return ids;
  return tokenizer.bosTokenId !== null ? [tokenizer.bosTokenId, ...ids] : ids;
}

/**
 * How an episode's first observation is written and tokenised in the tokenizer's prompt format.
 *
 * @example Usage
 * ```ts
 * import { loadPolicy } from "./policy.ts";
 * import { episodeIo } from "./rollout_source.ts";
 * import assert from "node:assert/strict";
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * const io = episodeIo(tokenizer);
 * assert.deepEqual(io.encode("1+1="), tokenizer.encode("1+1="));
 * model.dispose();
 * ```
 */
export function episodeIo(
  tokenizer: Tokenizer,
  format: PromptFormat = promptFormat(tokenizer),
): { render: (e: Episode, row: TaskRow) => string; encode: (text: string) => number[] } {
  return {
    // The row's images come before the first observation (a visual environment's rows).
    render: (e: Episode, row: TaskRow) =>
      renderText(tokenizer, e.prompt, format, rowImageSources(row).length),
    encode: (text: string) => encodeRendered(tokenizer, text, format),
  };
}
