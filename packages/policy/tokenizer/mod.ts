/**
 * Tokenizers of `@rlvr/policy`: the {@link Tokenizer} interface, {@link HfTokenizer} for Hugging
 * Face `tokenizer.json` files, the built-in {@link CharTokenizer} of the tiny demo models, and
 * {@link loadTokenizerFromFiles} / {@link loadTokenizerFromUrl}, which pick between them (the folder
 * loader `loadTokenizer` is in `@rlvr/policy/fs`).
 *
 * @example Usage
 * ```ts
 * import { CharTokenizer } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const tok = CharTokenizer.fromCorpus(["abc"]);
 * assert.equal(tok.decode(tok.encode("cab"), { skipSpecialTokens: true }), "cab");
 * ```
 *
 * @module
 */

export type {
  ApplyChatTemplateOptions,
  ChatContentPart,
  ChatMessage,
  DecodeOptions,
  EncodeOptions,
  Tokenizer,
} from "./tokenizer.ts";
export { HfTokenizer, type HfTokenizerOptions } from "./hf_tokenizer.ts";
export {
  CHAR_CHAT_TEMPLATE,
  CHAR_SPECIAL_TOKENS,
  CharTokenizer,
  type CharTokenizerOptions,
} from "./char_tokenizer.ts";
export { loadTokenizerFromFiles, loadTokenizerFromUrl } from "./load.ts";
