/**
 * Opening a tokenizer with the class that wrote it, from files in memory
 * ({@link loadTokenizerFromFiles}) or under a base URL ({@link loadTokenizerFromUrl}); a folder
 * is `loadTokenizer` of `@rlvr/policy/fs` (`load_fs.ts`), on the same code.
 *
 * Design: the choice is made by an explicit marker, not by guessing from the vocabulary: a
 * `tokenizer_config.json` with `"rlvr_tokenizer": "CharTokenizer"` (written by
 * `CharTokenizer.save`) opens as a `CharTokenizer`, which encodes by a direct lookup
 * and checks the files really are its format; everything else opens as an `HfTokenizer`.
 * Both give the same ids for a character tokenizer's files, so the marker only picks the faster
 * path and the stricter checks.
 *
 * @module
 */

import { type FileContents, type FileSource, filesSource, urlSource } from "../file_source.ts";
import { readJsonObject, TOKENIZER_CONFIG_JSON } from "./_files.ts";
import { charTokenizerFrom } from "./char_tokenizer.ts";
import { hfTokenizerFrom } from "./hf_tokenizer.ts";
import type { Tokenizer } from "./tokenizer.ts";

/**
 * The tokenizer in `src` (internal: the folder, files and URL loaders call it): a
 * `CharTokenizer` if its `tokenizer_config.json` says `"rlvr_tokenizer": "CharTokenizer"`,
 * else an `HfTokenizer`.
 *
 * @param owner The caller, for messages about `tokenizer_config.json`.
 * @param src Where the files are.
 * @param inner The callers named by the class's own checks (default: `owner` for both).
 * @returns The tokenizer.
 *
 * @example Usage
 * ```ts
 * import { loadTokenizerFrom } from "./load.ts";
 * import { CharTokenizer } from "./char_tokenizer.ts";
 * import { filesSource } from "../file_source.ts";
 * import assert from "node:assert/strict";
 * const src = filesSource(CharTokenizer.fromCorpus(["ab"]).toFiles(), "mem");
 * assert.ok((await loadTokenizerFrom("load", src)) instanceof CharTokenizer);
 * ```
 */
export async function loadTokenizerFrom(
  owner: string,
  src: FileSource,
  inner: { char: string; hf: string } = { char: owner, hf: owner },
): Promise<Tokenizer> {
  const config = await readJsonObject(owner, src, TOKENIZER_CONFIG_JSON);
  if (config?.rlvr_tokenizer === "CharTokenizer") return await charTokenizerFrom(inner.char, src);
  return await hfTokenizerFrom(inner.hf, src);
}

/**
 * Loads a tokenizer from its files in memory (`tokenizer.json`, `tokenizer_config.json`,
 * optional `chat_template.jinja`, by file name; bytes or text): a `CharTokenizer` if its
 * `tokenizer_config.json` says `"rlvr_tokenizer": "CharTokenizer"`, else an `HfTokenizer`,
 * with the checks and errors of the folder loader `loadTokenizer` of `@rlvr/policy/fs`. Runs
 * anywhere, browsers included.
 *
 * @param files The files by name.
 * @param options What messages and the tokenizer's `source` call the files (default
 *   `"<files>"`).
 * @returns The tokenizer.
 *
 * @example Usage
 * ```ts
 * import { CharTokenizer, HfTokenizer, loadTokenizerFromFiles } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const char = CharTokenizer.fromCorpus(["0123456789+="]);
 * const tok = await loadTokenizerFromFiles(char.toFiles());
 * assert.ok(tok instanceof CharTokenizer);
 * assert.equal(tok.decode(tok.encode("12+3=15"), { skipSpecialTokens: true }), "12+3=15");
 * const { "tokenizer.json": json } = char.toFiles(); // no config: a Hugging Face tokenizer
 * assert.ok((await loadTokenizerFromFiles({ "tokenizer.json": json! })) instanceof HfTokenizer);
 * ```
 */
export function loadTokenizerFromFiles(
  files: FileContents,
  options: { name?: string } = {},
): Promise<Tokenizer> {
  return Promise.resolve().then(() =>
    loadTokenizerFrom("loadTokenizerFromFiles", filesSource(files, options.name ?? "<files>"))
  );
}

/**
 * Loads a tokenizer from the files under a base URL (`tokenizer.json`, `tokenizer_config.json`
 * and `chat_template.jinja`, a 404 meaning the file is absent), as {@link loadTokenizerFromFiles}
 * does from memory. Runs anywhere `fetch` does.
 *
 * @param baseUrl The folder's URL (a trailing `/` is added when missing).
 * @param options The fetch to use (default: the global `fetch`).
 * @returns The tokenizer.
 *
 * @example Usage
 * ```ts
 * import { CharTokenizer, loadTokenizerFromUrl } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const files: Record<string, string> = CharTokenizer.fromCorpus(["ab"]).toFiles();
 * const fake = (url: string | URL | Request) => {
 *   const body = files[String(url).replace("https://x.test/tok/", "")];
 *   return Promise.resolve(body === undefined ? new Response("", { status: 404 }) : new Response(body));
 * };
 * const tok = await loadTokenizerFromUrl("https://x.test/tok", { fetch: fake as typeof fetch });
 * assert.ok(tok instanceof CharTokenizer);
 * ```
 */
export function loadTokenizerFromUrl(
  baseUrl: string | URL,
  options: { fetch?: typeof fetch } = {},
): Promise<Tokenizer> {
  return Promise.resolve().then(() =>
    loadTokenizerFrom("loadTokenizerFromUrl", urlSource(baseUrl, options.fetch))
  );
}
