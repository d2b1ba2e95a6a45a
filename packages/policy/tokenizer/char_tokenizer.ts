/**
 * {@link CharTokenizer}: one token per character, for the tiny demo models.
 *
 * Design: the vocabulary is seven special tokens at fixed ids ({@link CHAR_SPECIAL_TOKENS}:
 * `<pad>` 0, `<bos>` 1, `<eos>` 2, `<unk>` 3, and the role markers `<|system|>` 4, `<|user|>` 5,
 * `<|assistant|>` 6) followed by the alphabet, one Unicode code point per id. The role markers
 * are tokens rather than text so that the built-in chat template ({@link CHAR_CHAT_TEMPLATE})
 * works with any alphabet, e.g. digits and `+=` only. Characters outside the alphabet map to
 * `<unk>`; special-token strings in the text become their ids (leftmost-longest match, as
 * Hugging Face's added-token splitter does); `encode` prepends `<bos>` unless
 * `addSpecialTokens: false`.
 *
 * It is saved as a valid Hugging Face fast tokenizer, not an own format: a BPE model with the
 * characters as vocabulary and no merges (Hugging Face has a `WordLevel` model, but
 * `@huggingface/tokenizers` does not implement it; BPE without merges splits a text into
 * characters and maps each to its id or to `unk_token`, which is exactly this tokenizer), no
 * normalizer or pre-tokenizer (nothing to merge, so no need to split words), a
 * `TemplateProcessing` post-processor that adds `<bos>`, and a `Fuse` decoder that joins tokens
 * without spaces. `tokenizer_config.json` names the special tokens and the chat template, and marks
 * the directory with `"rlvr_tokenizer": "CharTokenizer"` so `loadTokenizer` picks this
 * class; {@link HfTokenizer} and `transformers`' `PreTrainedTokenizerFast` read the same files and
 * give the same ids (the tests check the former). Encoding here is a direct map lookup per code
 * point, without the general machinery.
 *
 * @module
 */

import { dirSource, type FileSource } from "../file_source.ts";
import { ChatTemplateSet } from "./_chat_template.ts";
import {
  checkDir,
  checkIds,
  isObject,
  type JsonObject,
  jsonText,
  readJsonObject,
  show,
  TOKENIZER_CONFIG_JSON,
  TOKENIZER_JSON,
  writeFiles,
} from "./_files.ts";
import type {
  ApplyChatTemplateOptions,
  ChatMessage,
  DecodeOptions,
  EncodeOptions,
  Tokenizer,
} from "./tokenizer.ts";

/**
 * The special tokens of {@link CharTokenizer}; a token's index is its id.
 *
 * @example Usage
 * ```ts
 * import { CHAR_SPECIAL_TOKENS, CharTokenizer } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const tok = CharTokenizer.fromCorpus(["ab"]);
 * assert.equal(tok.tokenToId("<eos>"), CHAR_SPECIAL_TOKENS.indexOf("<eos>"));
 * ```
 */
export const CHAR_SPECIAL_TOKENS = [
  "<pad>",
  "<bos>",
  "<eos>",
  "<unk>",
  "<|system|>",
  "<|user|>",
  "<|assistant|>",
] as const;

const PAD = 0;
const BOS = 1;
const EOS = 2;
const UNK = 3;
const MARKER = "CharTokenizer";

/**
 * The built-in chat template of {@link CharTokenizer}: `<bos>`, then per message its role marker,
 * its content and `<eos>`; with `addGenerationPrompt`, a final `<|assistant|>`. Roles other
 * than system, user and assistant, and tools, raise an error.
 *
 * @example Usage
 * ```ts
 * import { CHAR_CHAT_TEMPLATE, CharTokenizer } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const tok = CharTokenizer.fromCorpus(["0123456789+="]);
 * assert.ok(CHAR_CHAT_TEMPLATE.includes("<|assistant|>"));
 * assert.equal(
 *   tok.applyChatTemplate([{ role: "user", content: "1+1=" }], { addGenerationPrompt: true }),
 *   "<bos><|user|>1+1=<eos><|assistant|>",
 * );
 * ```
 */
export const CHAR_CHAT_TEMPLATE: string = "{%- if tools %}" +
  "{{ raise_exception('the CharTokenizer chat template does not support tools') }}" +
  "{%- endif %}" +
  "{{- bos_token }}" +
  "{%- for message in messages %}" +
  "{%- if message.role not in ['system', 'user', 'assistant'] %}" +
  "{{ raise_exception('the CharTokenizer chat template has no role ' + message.role + " +
  "'; use system, user or assistant') }}" +
  "{%- endif %}" +
  "{{- '<|' + message.role + '|>' + message.content + eos_token }}" +
  "{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|assistant|>' }}{%- endif %}";

/**
 * Options of {@link CharTokenizer}.
 *
 * @example Usage
 * ```ts
 * import type { CharTokenizerOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const o: CharTokenizerOptions = { chatTemplate: "{{ messages[0].content }}" };
 * assert.ok(o.chatTemplate);
 * ```
 */
export interface CharTokenizerOptions {
  /** Jinja chat template (default {@link CHAR_CHAT_TEMPLATE}). */
  chatTemplate?: string;
  /**
   * Multi-character tokens after the alphabet (e.g. `<think>`), each one id: text matching one
   * becomes its id (leftmost-longest, after the special tokens), as a Hugging Face non-special
   * added token. Default none.
   */
  words?: readonly string[];
}

/**
 * A character-level tokenizer: fixed special tokens, then one id per character of its alphabet.
 *
 * @example Usage
 * ```ts
 * import { CharTokenizer } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const tok = CharTokenizer.fromCorpus(["12+34=46", "7+8=15"]);
 * assert.deepEqual(tok.alphabet, ["+", "1", "2", "3", "4", "5", "6", "7", "8", "="]);
 * const ids = tok.encode("1+2=3");
 * assert.equal(ids[0], tok.bosTokenId);
 * assert.equal(tok.decode(ids, { skipSpecialTokens: true }), "1+2=3");
 * assert.equal(tok.decode(tok.encode("9", { addSpecialTokens: false })), "<unk>");
 * ```
 */
export class CharTokenizer implements Tokenizer {
  /** The characters, in id order (the first has id `CHAR_SPECIAL_TOKENS.length`). */
  readonly alphabet: readonly string[];
  /** The multi-character tokens, in id order, after the alphabet ({@link CharTokenizerOptions.words}). */
  readonly words: readonly string[];
  /** The chat template source. */
  readonly chatTemplate: string;
  /** Seven special tokens plus the alphabet. */
  readonly vocabSize: number;
  /** Id of `<bos>` (1). */
  readonly bosTokenId: number = BOS;
  /** Id of `<eos>` (`[2]`). */
  readonly eosTokenIds: readonly number[] = [EOS];
  /** Id of `<pad>` (0). */
  readonly padTokenId: number = PAD;
  /** Id of `<unk>` (3). */
  readonly unkTokenId: number = UNK;
  /** Ids 0 to 6: the {@link CHAR_SPECIAL_TOKENS}. */
  readonly specialTokenIds: readonly number[] = CHAR_SPECIAL_TOKENS.map((_, i) => i);
  readonly #tokens: readonly string[];
  readonly #ids: ReadonlyMap<string, number>;
  readonly #templates: ChatTemplateSet;
  /** Words by their first character, longest first. */
  readonly #wordsAt: ReadonlyMap<string, readonly [string, number][]>;

  /**
   * A tokenizer over `alphabet`: distinct single code points, given in id order.
   */
  constructor(alphabet: Iterable<string>, options: CharTokenizerOptions = {}) {
    const owner = "CharTokenizer";
    if (alphabet === null || typeof alphabet !== "object" && typeof alphabet !== "string") {
      throw new TypeError(
        `${owner}: alphabet must be an iterable of characters, got ${show(alphabet)}`,
      );
    }
    const chars = [...alphabet];
    const ids = new Map<string, number>(CHAR_SPECIAL_TOKENS.map((t, i) => [t, i]));
    chars.forEach((c, i) => {
      if (typeof c !== "string" || [...c].length !== 1 || !c.isWellFormed()) {
        throw new TypeError(
          `${owner}: alphabet[${i}] must be exactly one Unicode character (code point, not a ` +
            `lone surrogate), got ${show(c)}`,
        );
      }
      if (ids.has(c)) {
        throw new RangeError(
          `${owner}: alphabet[${i}] ${show(c)} occurs twice; remove the duplicate`,
        );
      }
      ids.set(c, CHAR_SPECIAL_TOKENS.length + i);
    });
    const chatTemplate = options.chatTemplate ?? CHAR_CHAT_TEMPLATE;
    if (typeof chatTemplate !== "string" || chatTemplate === "") {
      throw new TypeError(
        `${owner}: options.chatTemplate must be a non-empty Jinja string, got ${
          show(chatTemplate)
        }`,
      );
    }
    const words = [...(options.words ?? [])];
    const wordsAt = new Map<string, [string, number][]>();
    words.forEach((w, i) => {
      if (typeof w !== "string" || [...w].length < 2 || !w.isWellFormed()) {
        throw new TypeError(
          `${owner}: options.words[${i}] must be a string of two or more characters, got ${
            show(w)
          }`,
        );
      }
      if (ids.has(w)) {
        throw new RangeError(
          `${owner}: options.words[${i}] ${show(w)} is already a token; remove it`,
        );
      }
      const id = CHAR_SPECIAL_TOKENS.length + chars.length + i;
      ids.set(w, id);
      const first = String.fromCodePoint(w.codePointAt(0)!);
      wordsAt.set(
        first,
        [...(wordsAt.get(first) ?? []), [w, id] as [string, number]]
          .sort((a, b) => b[0].length - a[0].length),
      );
    });
    this.alphabet = chars;
    this.words = words;
    this.#wordsAt = wordsAt;
    this.chatTemplate = chatTemplate;
    this.#tokens = [...CHAR_SPECIAL_TOKENS, ...chars, ...words];
    this.#ids = ids;
    this.vocabSize = this.#tokens.length;
    this.#templates = new ChatTemplateSet(chatTemplate, "CharTokenizer");
  }

  /**
   * A tokenizer whose alphabet is every character of `texts`, sorted by code point.
   *
   * @example Usage
   * ```ts
   * import { CharTokenizer } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * assert.deepEqual(CharTokenizer.fromCorpus(["ba", "ab!"]).alphabet, ["!", "a", "b"]);
   * ```
   */
  static fromCorpus(texts: Iterable<string>, options: CharTokenizerOptions = {}): CharTokenizer {
    const seen = new Set<number>();
    let i = 0;
    for (const text of texts) {
      if (typeof text !== "string") {
        throw new TypeError(
          `CharTokenizer.fromCorpus: texts[${i}] must be a string, got ${show(text)}`,
        );
      }
      for (const c of text) seen.add(c.codePointAt(0)!);
      i++;
    }
    const alphabet = [...seen].sort((a, b) => a - b).map((cp) => String.fromCodePoint(cp));
    return new CharTokenizer(alphabet, options);
  }

  /**
   * Loads a directory written by {@link CharTokenizer.save}; any other `tokenizer.json` is
   * rejected with the field that differs (load it with {@link HfTokenizer} instead).
   *
   * @example Usage
   * ```ts
   * import { CharTokenizer } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const dir = await Deno.makeTempDir();
   * await CharTokenizer.fromCorpus(["abc"]).save(dir);
   * assert.deepEqual((await CharTokenizer.load(dir)).alphabet, ["a", "b", "c"]);
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  static async load(dir: string): Promise<CharTokenizer> {
    const owner = "CharTokenizer.load";
    await checkDir(owner, dir);
    return await charTokenizerFrom(owner, dirSource(dir));
  }

  /** Token ids of `text`: a leading `<bos>` unless `addSpecialTokens: false`, then one per char. */
  encode(text: string, options: EncodeOptions = {}): number[] {
    if (typeof text !== "string") {
      throw new TypeError(`CharTokenizer.encode: text must be a string, got ${show(text)}`);
    }
    const out: number[] = options.addSpecialTokens ?? true ? [BOS] : [];
    const n = text.length;
    let i = 0;
    while (i < n) {
      const cp = text.codePointAt(i)!;
      // Every special token starts with "<": only there can a special token begin.
      if (cp === 60) {
        const special = this.#specialAt(text, i);
        if (special >= 0) {
          out.push(special);
          i += CHAR_SPECIAL_TOKENS[special]!.length;
          continue;
        }
      }
      const c = String.fromCodePoint(cp);
      const word = this.#wordsAt.get(c)?.find(([w]) => text.startsWith(w, i));
      if (word !== undefined) {
        out.push(word[1]);
        i += word[0].length;
        continue;
      }
      out.push(this.#ids.get(c) ?? UNK);
      i += c.length;
    }
    return out;
  }

  /** The id of the longest special token starting at `i`, or -1. */
  #specialAt(text: string, i: number): number {
    let best = -1;
    for (let s = 0; s < CHAR_SPECIAL_TOKENS.length; s++) {
      const t = CHAR_SPECIAL_TOKENS[s]!;
      if (text.startsWith(t, i) && (best < 0 || t.length > CHAR_SPECIAL_TOKENS[best]!.length)) {
        best = s;
      }
    }
    return best;
  }

  /** Text of `ids`: the tokens joined without separators (`<unk>` decodes as `"<unk>"`). */
  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    checkIds("CharTokenizer.decode", ids, this.vocabSize);
    const skip = options.skipSpecialTokens ?? false;
    let out = "";
    for (const id of ids) {
      if (skip && id < CHAR_SPECIAL_TOKENS.length) continue;
      out += this.#tokens[id]!;
    }
    return out;
  }

  /** Id of a special token or a character, or null. */
  tokenToId(token: string): number | null {
    return this.#ids.get(token) ?? null;
  }

  /** The special token or character of an id, or null. */
  idToToken(id: number): string | null {
    return Number.isInteger(id) ? this.#tokens[id] ?? null : null;
  }

  /** Renders the chat template (default {@link CHAR_CHAT_TEMPLATE}) for `messages`. */
  applyChatTemplate(
    messages: readonly ChatMessage[],
    options: ApplyChatTemplateOptions = {},
  ): string {
    return this.#templates.render("CharTokenizer.applyChatTemplate", messages, options, {
      bos_token: CHAR_SPECIAL_TOKENS[BOS],
      eos_token: CHAR_SPECIAL_TOKENS[EOS],
      unk_token: CHAR_SPECIAL_TOKENS[UNK],
      pad_token: CHAR_SPECIAL_TOKENS[PAD],
      additional_special_tokens: CHAR_SPECIAL_TOKENS.slice(4),
    });
  }

  /**
   * The `tokenizer.json` object: a BPE model without merges over the characters, a
   * `TemplateProcessing` post-processor adding `<bos>`, and a `Fuse` decoder.
   *
   * @example Usage
   * ```ts
   * import { CharTokenizer } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const json = CharTokenizer.fromCorpus(["ab"]).toTokenizerJson();
   * assert.deepEqual((json.model as { vocab: object }).vocab, {
   *   "<pad>": 0, "<bos>": 1, "<eos>": 2, "<unk>": 3,
   *   "<|system|>": 4, "<|user|>": 5, "<|assistant|>": 6, a: 7, b: 8,
   * });
   * ```
   */
  toTokenizerJson(): Record<string, unknown> {
    const bos = CHAR_SPECIAL_TOKENS[BOS];
    return {
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: [
        ...CHAR_SPECIAL_TOKENS.map((content, id) => ({ id, content, special: true })),
        ...this.words.map((content, i) => ({
          id: CHAR_SPECIAL_TOKENS.length + this.alphabet.length + i,
          content,
          special: false,
        })),
      ].map(({ id, content, special }) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special,
      })),
      normalizer: null,
      pre_tokenizer: null,
      post_processor: {
        type: "TemplateProcessing",
        single: [
          { SpecialToken: { id: bos, type_id: 0 } },
          { Sequence: { id: "A", type_id: 0 } },
        ],
        pair: [
          { SpecialToken: { id: bos, type_id: 0 } },
          { Sequence: { id: "A", type_id: 0 } },
          { Sequence: { id: "B", type_id: 1 } },
        ],
        special_tokens: { [bos]: { id: bos, ids: [BOS], tokens: [bos] } },
      },
      decoder: { type: "Fuse" },
      model: {
        type: "BPE",
        dropout: null,
        unk_token: CHAR_SPECIAL_TOKENS[UNK],
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        ignore_merges: false,
        vocab: Object.fromEntries(this.#tokens.map((t, id) => [t, id])),
        merges: [],
      },
    };
  }

  /**
   * The `tokenizer_config.json` object: special token names, the chat template, and the
   * `rlvr_tokenizer` marker `loadTokenizer` looks for.
   *
   * @example Usage
   * ```ts
   * import { CharTokenizer } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const config = CharTokenizer.fromCorpus(["ab"]).toTokenizerConfig();
   * assert.equal(config.eos_token, "<eos>");
   * assert.equal(config.tokenizer_class, "PreTrainedTokenizerFast");
   * ```
   */
  toTokenizerConfig(): Record<string, unknown> {
    return {
      tokenizer_class: "PreTrainedTokenizerFast",
      rlvr_tokenizer: MARKER,
      bos_token: CHAR_SPECIAL_TOKENS[BOS],
      eos_token: CHAR_SPECIAL_TOKENS[EOS],
      unk_token: CHAR_SPECIAL_TOKENS[UNK],
      pad_token: CHAR_SPECIAL_TOKENS[PAD],
      additional_special_tokens: CHAR_SPECIAL_TOKENS.slice(4),
      clean_up_tokenization_spaces: false,
      chat_template: this.chatTemplate,
    };
  }

  /**
   * The files {@link CharTokenizer.save} writes, as text by name: `tokenizer.json`
   * ({@link CharTokenizer.toTokenizerJson}) and `tokenizer_config.json`
   * ({@link CharTokenizer.toTokenizerConfig}), what `loadTokenizerFromFiles` reads back.
   *
   * @example Usage
   * ```ts
   * import { CharTokenizer, loadTokenizerFromFiles } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const tok = CharTokenizer.fromCorpus(["ab"]);
   * const back = await loadTokenizerFromFiles(tok.toFiles());
   * assert.ok(back instanceof CharTokenizer);
   * assert.deepEqual(back.alphabet, ["a", "b"]);
   * ```
   */
  toFiles(): Record<string, string> {
    return {
      [TOKENIZER_JSON]: jsonText(this.toTokenizerJson()),
      [TOKENIZER_CONFIG_JSON]: jsonText(this.toTokenizerConfig()),
    };
  }

  /**
   * Writes `tokenizer.json` and `tokenizer_config.json` into `dir` (created if missing):
   * {@link CharTokenizer.toFiles}. Needs Deno and `--allow-write`.
   */
  async save(dir: string): Promise<void> {
    await writeFiles("CharTokenizer.save", dir, this.toFiles());
  }
}

/**
 * A {@link CharTokenizer} from the files of `src` (internal: {@link CharTokenizer.load} and the
 * files and URL loaders call it); any other `tokenizer.json` is rejected with the field that
 * differs.
 *
 * @param owner The caller, for messages.
 * @param src Where the files are.
 * @returns The tokenizer.
 *
 * @example Usage
 * ```ts
 * import { CharTokenizer, charTokenizerFrom } from "./char_tokenizer.ts";
 * import { filesSource } from "../file_source.ts";
 * import assert from "node:assert/strict";
 * const tok = await charTokenizerFrom("load", filesSource(CharTokenizer.fromCorpus(["ab"]).toFiles(), "mem"));
 * assert.deepEqual(tok.alphabet, ["a", "b"]);
 * ```
 */
export async function charTokenizerFrom(owner: string, src: FileSource): Promise<CharTokenizer> {
  const jsonPath = src.path(TOKENIZER_JSON);
  const configPath = src.path(TOKENIZER_CONFIG_JSON);
  const json = (await readJsonObject(owner, src, TOKENIZER_JSON, "CharTokenizer.save writes it"))!;
  const config =
    (await readJsonObject(owner, src, TOKENIZER_CONFIG_JSON, "CharTokenizer.save writes it"))!;
  const notChar = (field: string, value: unknown, want: string): never => {
    throw new Error(
      `${owner}: ${field} must be ${want} for a CharTokenizer, got ${show(value)}; ` +
        `load other tokenizers with HfTokenizer.load or loadTokenizer`,
    );
  };
  if (config.rlvr_tokenizer !== MARKER) {
    notChar(`${configPath} rlvr_tokenizer`, config.rlvr_tokenizer, show(MARKER));
  }
  const model = json.model;
  if (!isObject(model) || model.type !== "BPE") {
    notChar(`${jsonPath} model.type`, isObject(model) ? model.type : model, '"BPE"');
  }
  const m = model as JsonObject;
  if (!Array.isArray(m.merges) || m.merges.length !== 0) {
    notChar(`${jsonPath} model.merges`, m.merges, "an empty list");
  }
  if (!isObject(m.vocab)) notChar(`${jsonPath} model.vocab`, m.vocab, "an object");
  const byId: string[] = [];
  for (const [token, id] of Object.entries(m.vocab as JsonObject)) {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || byId[id] !== undefined) {
      notChar(`${jsonPath} model.vocab[${show(token)}]`, id, "a distinct integer id >= 0");
    }
    byId[id as number] = token;
  }
  CHAR_SPECIAL_TOKENS.forEach((t, i) => {
    if (byId[i] !== t) notChar(`${jsonPath} model.vocab id ${i}`, byId[i], show(t));
  });
  const alphabet: string[] = [];
  const words: string[] = [];
  for (let id = CHAR_SPECIAL_TOKENS.length; id < byId.length; id++) {
    const c = byId[id];
    if (c === undefined) notChar(`${jsonPath} model.vocab id ${id}`, c, "a character (no gaps)");
    // Multi-character tokens (words) follow every single character.
    if ([...(c as string)].length > 1) words.push(c as string);
    else if (words.length > 0) {
      notChar(`${jsonPath} model.vocab id ${id}`, c, "a word: words come after the characters");
    } else alphabet.push(c as string);
  }
  const decoder = json.decoder;
  if (!isObject(decoder) || decoder.type !== "Fuse") {
    notChar(`${jsonPath} decoder`, decoder, '{"type": "Fuse"}');
  }
  const template = config.chat_template;
  if (typeof template !== "string") {
    notChar(`${configPath} chat_template`, template, "a template string");
  }
  try {
    return new CharTokenizer(alphabet, { chatTemplate: template as string, words });
  } catch (e) {
    throw new Error(`${owner}: ${jsonPath}: ${(e as Error).message}`, { cause: e });
  }
}
