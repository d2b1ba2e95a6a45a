/**
 * The {@link Tokenizer} interface every tokenizer of `@rlvr/policy` implements, and the option
 * and message types of its methods.
 *
 * Design: one small synchronous interface for the training loop (encode, decode, special ids,
 * chat template), whatever the backing implementation: a Hugging Face `tokenizer.json`
 * ({@link HfTokenizer}) or the built-in character tokenizer of the tiny demo models
 * ({@link CharTokenizer}). Both save the same two Hugging Face files (`tokenizer.json` and
 * `tokenizer_config.json`), so a directory written by either loads with the other and with
 * Hugging Face's own tools. Option defaults follow `transformers`: `encode` adds the special
 * tokens the post-processor adds, `decode` keeps special tokens, `applyChatTemplate` adds no
 * generation prompt unless asked. Ids are plain `number[]` because sequences are short and the
 * model's embedding takes integer lists.
 *
 * @module
 */

/**
 * One chat message as chat templates see it: `role` and `content`, plus any extra fields the
 * template reads (e.g. `tool_calls` on an assistant message, `reasoning_content`). Same shape as
 * `ChatMessage` of `@rlvr/sampling`, so its `toMessages` output can be passed as it is.
 *
 * @example Usage
 * ```ts
 * import type { ChatMessage } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const m: ChatMessage = { role: "user", content: "2+2?" };
 * assert.equal(m.role, "user");
 * ```
 */
export interface ChatMessage {
  /** `"system"`, `"user"`, `"assistant"` or `"tool"` (templates may accept others). */
  role: string;
  /**
   * The text of the message, or its parts (OpenAI / Hugging Face multimodal messages), which the
   * template renders: a vision-language template writes `<|vision_start|><|image_pad|><|vision_end|>`
   * for each image part.
   */
  content: string | readonly ChatContentPart[];
  /** Extra fields, passed to the template as they are. */
  [key: string]: unknown;
}

/**
 * One part of a multimodal {@link ChatMessage}: text, or an image (HF's `{type: "image"}`, with an
 * optional source, or OpenAI's `{type: "image_url", image_url: {url}}`). The template sees the
 * part as it is.
 *
 * @example Usage
 * ```ts
 * import type { ChatContentPart } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const parts: ChatContentPart[] = [{ type: "image" }, { type: "text", text: "How many?" }];
 * assert.equal(parts.length, 2);
 * ```
 */
export type ChatContentPart =
  | { type: "text"; text: string }
  | { type: "image"; image?: string }
  | { type: "image_url"; image_url: { url: string } };

/**
 * Options of {@link Tokenizer.encode}.
 *
 * @example Usage
 * ```ts
 * import type { EncodeOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const o: EncodeOptions = { addSpecialTokens: false };
 * assert.equal(o.addSpecialTokens, false);
 * ```
 */
export interface EncodeOptions {
  /**
   * Add the special tokens the tokenizer's post-processor adds (e.g. a leading BOS); default
   * true, as in `transformers`. Pass false for text that already went through a chat template.
   */
  addSpecialTokens?: boolean;
}

/**
 * Options of {@link Tokenizer.decode}.
 *
 * @example Usage
 * ```ts
 * import type { DecodeOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const o: DecodeOptions = { skipSpecialTokens: true };
 * assert.equal(o.skipSpecialTokens, true);
 * ```
 */
export interface DecodeOptions {
  /** Drop the ids in {@link Tokenizer.specialTokenIds} before decoding; default false. */
  skipSpecialTokens?: boolean;
}

/**
 * Options of {@link Tokenizer.applyChatTemplate}.
 *
 * @example Usage
 * ```ts
 * import type { ApplyChatTemplateOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const o: ApplyChatTemplateOptions = { addGenerationPrompt: true, extra: { enable_thinking: false } };
 * assert.equal(o.addGenerationPrompt, true);
 * ```
 */
export interface ApplyChatTemplateOptions {
  /** Append the opening of an assistant turn (`add_generation_prompt`); default false. */
  addGenerationPrompt?: boolean;
  /** Tool descriptions (JSON schemas, `{type: "function", function: {...}}`) as `tools`. */
  tools?: readonly Record<string, unknown>[];
  /** More template variables, e.g. `{ enable_thinking: false }` for Qwen3. */
  extra?: Record<string, unknown>;
  /**
   * Name of the template when `chat_template` is a list of `{name, template}`; default
   * `"tool_use"` when tools are given and such a template exists, else `"default"`.
   */
  templateName?: string;
}

/**
 * A tokenizer: text to token ids and back, special token ids, chat template rendering, and
 * saving as Hugging Face `tokenizer.json` + `tokenizer_config.json`.
 *
 * Implemented by {@link HfTokenizer} and {@link CharTokenizer}; `loadTokenizer` (`@rlvr/policy/fs`)
 * and `loadTokenizerFromFiles` pick one.
 *
 * @example Usage
 * ```ts
 * import { CharTokenizer, type Tokenizer } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const tok: Tokenizer = CharTokenizer.fromCorpus(["0123456789+="]);
 * const ids = tok.encode("1+1=2", { addSpecialTokens: false });
 * assert.equal(ids.length, 5);
 * assert.equal(tok.decode(ids), "1+1=2");
 * ```
 */
export interface Tokenizer {
  /** Number of ids: one more than the largest token id. */
  readonly vocabSize: number;
  /** Id of the beginning-of-sequence token, or null if the tokenizer has none. */
  readonly bosTokenId: number | null;
  /** Ids that end a generation (the `eos_token`); empty if the tokenizer names none. */
  readonly eosTokenIds: readonly number[];
  /** Id of the padding token, or null if the tokenizer has none. */
  readonly padTokenId: number | null;
  /** Id that unknown text maps to, or null if every text is representable (byte-level BPE). */
  readonly unkTokenId: number | null;
  /** Ids of the special tokens (sorted): dropped by `decode` with `skipSpecialTokens`. */
  readonly specialTokenIds: readonly number[];
  /** Token ids of `text`; special-token strings in the text become their single ids. */
  encode(text: string, options?: EncodeOptions): number[];
  /** Text of `ids`; throws on an id outside `[0, vocabSize)`. */
  decode(ids: readonly number[], options?: DecodeOptions): string;
  /** Id of a token string (as stored in the vocabulary), or null. */
  tokenToId(token: string): number | null;
  /** Token string of an id (as stored in the vocabulary), or null. */
  idToToken(id: number): string | null;
  /** The chat template rendered for `messages` (text; encode it with `addSpecialTokens: false`). */
  applyChatTemplate(
    messages: readonly ChatMessage[],
    options?: ApplyChatTemplateOptions,
  ): string;
  /**
   * Writes `tokenizer.json` and `tokenizer_config.json` into `dir` (created if missing); needs
   * Deno's file system (elsewhere it throws saying so).
   */
  save(dir: string): Promise<void>;
}
