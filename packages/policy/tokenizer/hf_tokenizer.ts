/**
 * {@link HfTokenizer}: a Hugging Face fast tokenizer (`tokenizer.json` + `tokenizer_config.json`)
 * run by `@huggingface/tokenizers`, the pure-JavaScript port of 🤗 Tokenizers.
 *
 * Design: encoding and decoding are delegated to `@huggingface/tokenizers` unchanged (the tests
 * check its ids against the Rust library's), and this class adds what the training loop needs
 * around it: special token ids resolved from `tokenizer_config.json` (an unknown token name is an
 * error naming the file and field, not a silent `undefined`), `specialTokenIds` that
 * `skipSpecialTokens` filters by (so decode agrees with the ids the caller sees), strict id
 * checks in `decode`, chat templates rendered like `transformers`, and `save` that writes both
 * files back. Two defaults differ from the JavaScript library and follow current `transformers`:
 * `clean_up_tokenization_spaces` is false when the config does not say (cleaning would break
 * `decode(encode(x)) == x` for text like `"a ."`), and `decode([])` is `""` instead of an error.
 * The objects given to the constructor are kept (not copied) and written back by `save`.
 *
 * @module
 */

import { Tokenizer as JsTokenizer } from "@huggingface/tokenizers";
import { dirSource, type FileSource, joinPath } from "../file_source.ts";
import { ChatTemplateSet } from "./_chat_template.ts";
import {
  CHAT_TEMPLATE_JINJA,
  checkDir,
  checkIds,
  isObject,
  type JsonObject,
  jsonText,
  readJsonObject,
  readTextIfExists,
  show,
  tokenContent,
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

/** The special-token fields of `tokenizer_config.json` passed to chat templates. */
const NAMED_SPECIALS = ["bos_token", "eos_token", "unk_token", "pad_token"] as const;

/** The `model.type`s `@huggingface/tokenizers` implements. */
const MODEL_TYPES = ["BPE", "WordPiece", "Unigram"] as const;

/**
 * Options of the {@link HfTokenizer} constructor.
 *
 * @example Usage
 * ```ts
 * import type { HfTokenizerOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const o: HfTokenizerOptions = { source: "models/tiny" };
 * assert.equal(o.source, "models/tiny");
 * ```
 */
export interface HfTokenizerOptions {
  /** Where the tokenizer came from, used in error messages (default `"<memory>"`). */
  source?: string;
}

/**
 * A Hugging Face tokenizer loaded from `tokenizer.json` and `tokenizer_config.json`.
 *
 * @example Usage
 * ```ts
 * import { HfTokenizer } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * // A tiny BPE tokenizer: four characters, one merge, and an end-of-text special token.
 * const tok = new HfTokenizer(
 *   {
 *     model: {
 *       type: "BPE", unk_token: "?", merges: [["a", "b"]],
 *       vocab: { "?": 0, a: 1, b: 2, c: 3, ab: 4, "<|end|>": 5 },
 *     },
 *     added_tokens: [{ id: 5, content: "<|end|>", special: true, normalized: false }],
 *     normalizer: null, pre_tokenizer: null, post_processor: null, decoder: { type: "Fuse" },
 *   },
 *   {
 *     eos_token: "<|end|>",
 *     chat_template: "{% for m in messages %}{{ m.content + eos_token }}{% endfor %}",
 *   },
 * );
 * assert.deepEqual(tok.encode("abcx<|end|>"), [4, 3, 0, 5]);
 * assert.equal(tok.decode([4, 3, 5], { skipSpecialTokens: true }), "abc");
 * assert.deepEqual(tok.eosTokenIds, [5]);
 * assert.equal(tok.applyChatTemplate([{ role: "user", content: "ab" }]), "ab<|end|>");
 * ```
 */
export class HfTokenizer implements Tokenizer {
  /** Where the tokenizer came from (directory or `"<memory>"`), for error messages. */
  readonly source: string;
  /** Number of ids: one more than the largest id of the vocabulary and the added tokens. */
  readonly vocabSize: number;
  /** Id of `bos_token`, or null. */
  readonly bosTokenId: number | null;
  /** Id of `eos_token` (one id; empty when the config names none). */
  readonly eosTokenIds: readonly number[];
  /** Id of `pad_token`, or null. */
  readonly padTokenId: number | null;
  /** Id of `unk_token` (config, else the model's), or null. */
  readonly unkTokenId: number | null;
  /** Added tokens marked special, the named special tokens and `additional_special_tokens`. */
  readonly specialTokenIds: readonly number[];
  readonly #tok: JsTokenizer;
  readonly #json: JsonObject;
  readonly #config: JsonObject;
  readonly #special: ReadonlySet<number>;
  readonly #templates: ChatTemplateSet;
  readonly #templateVars: Readonly<Record<string, unknown>>;

  /**
   * Builds a tokenizer from the parsed `tokenizer.json` and `tokenizer_config.json` objects
   * (kept by reference and written back by {@link HfTokenizer.save}).
   */
  constructor(
    tokenizerJson: unknown,
    tokenizerConfig: unknown = {},
    options: HfTokenizerOptions = {},
  ) {
    const source = options.source ?? "<memory>";
    this.source = source;
    const jsonWhere = options.source === undefined
      ? TOKENIZER_JSON
      : joinPath(source, TOKENIZER_JSON);
    const configWhere = options.source === undefined
      ? TOKENIZER_CONFIG_JSON
      : joinPath(source, TOKENIZER_CONFIG_JSON);
    if (!isObject(tokenizerJson) || !isObject(tokenizerJson.model)) {
      throw new TypeError(
        `HfTokenizer: ${jsonWhere} must be an object with a "model" field, got ${
          show(tokenizerJson)
        }`,
      );
    }
    if (!isObject(tokenizerConfig)) {
      throw new TypeError(
        `HfTokenizer: ${configWhere} must be an object, got ${show(tokenizerConfig)}`,
      );
    }
    // The JavaScript library requires these keys (null allowed) where the Rust one defaults them.
    const json: JsonObject = {
      normalizer: null,
      pre_tokenizer: null,
      post_processor: null,
      decoder: null,
      added_tokens: [],
      ...tokenizerJson,
    };
    if (!Array.isArray(json.added_tokens)) {
      throw new TypeError(
        `HfTokenizer: ${jsonWhere} added_tokens must be a list, got ${show(json.added_tokens)}`,
      );
    }
    const modelType = tokenizerJson.model.type;
    // The library turns any other model with a vocab (e.g. WordLevel) into a pass-through
    // "Legacy" model that silently maps whole words or unk; refuse instead.
    if (modelType !== undefined && !(MODEL_TYPES as readonly unknown[]).includes(modelType)) {
      throw new Error(
        `HfTokenizer: ${jsonWhere} model.type ${show(modelType)} is not supported; ` +
          `@huggingface/tokenizers implements ${MODEL_TYPES.join(", ")}`,
      );
    }
    this.#json = tokenizerJson;
    this.#config = tokenizerConfig;
    try {
      this.#tok = new JsTokenizer(json, {
        ...tokenizerConfig,
        clean_up_tokenization_spaces: tokenizerConfig.clean_up_tokenization_spaces ?? false,
      });
    } catch (e) {
      throw new Error(
        `HfTokenizer: cannot build a tokenizer from ${jsonWhere}: ${(e as Error).message} ` +
          `(a component @huggingface/tokenizers lacks, or a malformed file?)`,
        { cause: e },
      );
    }
    let maxId = -1;
    for (const id of this.#tok.get_vocab(true).values()) maxId = Math.max(maxId, id);
    this.vocabSize = maxId + 1;

    const idOf = (field: string, content: string): number => {
      const id = this.#tok.token_to_id(content);
      if (id === undefined) {
        throw new Error(
          `HfTokenizer: ${configWhere} ${field} ${show(content)} is not a token of ${jsonWhere}; ` +
            `fix the name or add the token to added_tokens`,
        );
      }
      return id;
    };
    const special = new Set<number>();
    for (const t of json.added_tokens) {
      if (isObject(t) && t.special === true && typeof t.id === "number") special.add(t.id);
    }
    const vars: Record<string, unknown> = {};
    const ids: Record<string, number | null> = {};
    for (const field of NAMED_SPECIALS) {
      const content = tokenContent(configWhere, field, tokenizerConfig[field]);
      ids[field] = content === null ? null : idOf(field, content);
      if (content !== null) {
        vars[field] = content;
        special.add(ids[field]!);
      }
    }
    const extraSpecials = tokenizerConfig.additional_special_tokens ?? [];
    if (!Array.isArray(extraSpecials)) {
      throw new TypeError(
        `HfTokenizer: ${configWhere} additional_special_tokens must be a list, got ${
          show(extraSpecials)
        }`,
      );
    }
    vars.additional_special_tokens = extraSpecials.map((t, i) => {
      const field = `additional_special_tokens[${i}]`;
      const content = tokenContent(configWhere, field, t);
      if (content === null) {
        throw new TypeError(`HfTokenizer: ${configWhere} ${field} must be a token, got null`);
      }
      special.add(idOf(field, content));
      return content;
    });
    this.bosTokenId = ids.bos_token ?? null;
    this.eosTokenIds = ids.eos_token == null ? [] : [ids.eos_token];
    this.padTokenId = ids.pad_token ?? null;
    const modelUnk = (json.model as JsonObject).unk_token;
    this.unkTokenId = ids.unk_token ??
      (typeof modelUnk === "string" ? this.#tok.token_to_id(modelUnk) ?? null : null);
    this.#special = special;
    this.specialTokenIds = [...special].sort((a, b) => a - b);
    this.#templateVars = vars;
    this.#templates = new ChatTemplateSet(tokenizerConfig.chat_template, configWhere);
  }

  /**
   * Loads `tokenizer.json` (required), `tokenizer_config.json` (optional) and, when the config
   * has no `chat_template`, `chat_template.jinja` (optional) from `dir`. Needs Deno and
   * `--allow-read`; the same files in memory or under a URL load with `loadTokenizerFromFiles` /
   * `loadTokenizerFromUrl` (which a browser can use).
   *
   * @example Usage
   * ```ts
   * import { CharTokenizer, HfTokenizer } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const dir = await Deno.makeTempDir();
   * await CharTokenizer.fromCorpus(["hello"]).save(dir);
   * const tok = await HfTokenizer.load(dir);
   * assert.equal(tok.decode(tok.encode("hello"), { skipSpecialTokens: true }), "hello");
   * await Deno.remove(dir, { recursive: true });
   * ```
   */
  static async load(dir: string): Promise<HfTokenizer> {
    const owner = "HfTokenizer.load";
    await checkDir(owner, dir);
    return await hfTokenizerFrom(owner, dirSource(dir));
  }

  /** Token ids of `text` (special-token strings become their ids). */
  encode(text: string, options: EncodeOptions = {}): number[] {
    if (typeof text !== "string") {
      throw new TypeError(`HfTokenizer.encode: text must be a string, got ${show(text)}`);
    }
    const { ids, tokens } = this.#tok.encode(text, {
      add_special_tokens: options.addSpecialTokens ?? true,
    });
    const bad = ids.findIndex((id) => id === undefined);
    if (bad >= 0) {
      throw new Error(
        `HfTokenizer.encode: piece ${show(tokens[bad])} of the text has no id in ${this.source} ` +
          `and the tokenizer has no unk_token`,
      );
    }
    return ids;
  }

  /** Text of `ids`; `skipSpecialTokens` drops the ids in {@link HfTokenizer.specialTokenIds}. */
  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    checkIds("HfTokenizer.decode", ids, this.vocabSize);
    const kept = options.skipSpecialTokens ? ids.filter((id) => !this.#special.has(id)) : ids;
    if (kept.length === 0) return "";
    for (const id of kept) {
      if (this.#tok.id_to_token(id) === undefined) {
        throw new RangeError(
          `HfTokenizer.decode: id ${id} is inside [0, ${this.vocabSize}) but no token of ` +
            `${this.source} has it`,
        );
      }
    }
    return this.#tok.decode([...kept], { skip_special_tokens: false });
  }

  /** Id of a vocabulary or added token string, or null. */
  tokenToId(token: string): number | null {
    return this.#tok.token_to_id(token) ?? null;
  }

  /** Vocabulary string of an id (byte-level BPE tokens look like `"Ġthe"`), or null. */
  idToToken(id: number): string | null {
    return this.#tok.id_to_token(id) ?? null;
  }

  /**
   * Renders the config's `chat_template` for `messages` with the variables `transformers`
   * passes (`messages`, `add_generation_prompt`, `tools`, the special token strings, extras).
   */
  applyChatTemplate(
    messages: readonly ChatMessage[],
    options: ApplyChatTemplateOptions = {},
  ): string {
    return this.#templates.render(
      "HfTokenizer.applyChatTemplate",
      messages,
      options,
      this.#templateVars,
    );
  }

  /**
   * The files {@link HfTokenizer.save} writes, as text by name: `tokenizer.json` and
   * `tokenizer_config.json` (with the chat template), what `loadTokenizerFromFiles` reads back.
   *
   * @example Usage
   * ```ts
   * import { CharTokenizer, HfTokenizer } from "@rlvr/policy";
   * import assert from "node:assert/strict";
   * const char = CharTokenizer.fromCorpus(["ab"]);
   * const tok = new HfTokenizer(char.toTokenizerJson(), char.toTokenizerConfig());
   * const files = tok.toFiles();
   * assert.deepEqual(Object.keys(files), ["tokenizer.json", "tokenizer_config.json"]);
   * assert.equal(JSON.parse(files["tokenizer_config.json"]!).eos_token, "<eos>");
   * ```
   */
  toFiles(): Record<string, string> {
    const config = { ...this.#config };
    const template = this.#templates.toConfigValue();
    if (template !== undefined) config.chat_template = template;
    return { [TOKENIZER_JSON]: jsonText(this.#json), [TOKENIZER_CONFIG_JSON]: jsonText(config) };
  }

  /**
   * Writes `tokenizer.json` and `tokenizer_config.json` (with the chat template) into `dir`
   * (created if missing): {@link HfTokenizer.toFiles}. Needs Deno and `--allow-write`.
   */
  async save(dir: string): Promise<void> {
    await writeFiles("HfTokenizer.save", dir, this.toFiles());
  }
}

/**
 * An {@link HfTokenizer} from the files of `src` (internal: {@link HfTokenizer.load} and the
 * files and URL loaders call it): `tokenizer.json` (required), `tokenizer_config.json`
 * (optional) and, when the config has no `chat_template`, `chat_template.jinja` (optional).
 *
 * @param owner The caller, for messages.
 * @param src Where the files are; its `where` becomes the tokenizer's `source`.
 * @returns The tokenizer.
 *
 * @example Usage
 * ```ts
 * import { hfTokenizerFrom } from "./hf_tokenizer.ts";
 * import { filesSource } from "../file_source.ts";
 * import assert from "node:assert/strict";
 * await assert.rejects(
 *   hfTokenizerFrom("load", filesSource({}, "mem")),
 *   /load: mem\/tokenizer\.json does not exist/,
 * );
 * ```
 */
export async function hfTokenizerFrom(owner: string, src: FileSource): Promise<HfTokenizer> {
  const json = await readJsonObject(
    owner,
    src,
    TOKENIZER_JSON,
    "a Hugging Face fast tokenizer directory needs tokenizer.json (a slow-only tokenizer with " +
      "vocab.json/merges.txt or tokenizer.model must be converted with transformers' " +
      "AutoTokenizer.from_pretrained(...).save_pretrained(...))",
  );
  const config = await readJsonObject(owner, src, TOKENIZER_CONFIG_JSON) ?? {};
  if (config.chat_template === undefined) {
    const jinja = await readTextIfExists(owner, src, CHAT_TEMPLATE_JINJA);
    if (jinja !== null) config.chat_template = jinja;
  }
  return new HfTokenizer(json, config, { source: src.where });
}
