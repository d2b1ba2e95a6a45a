/**
 * {@link loadTokenizer}: opens a tokenizer directory with the class that wrote it
 * (`@rlvr/policy/fs`, needs Deno): it checks the folder and loads its files through the loader
 * `loadTokenizerFromFiles` and `loadTokenizerFromUrl` use (`load.ts`), so the choice of class,
 * the checks and the errors are the same.
 *
 * @module
 */

import { dirSource } from "../file_source.ts";
import { checkDir } from "./_files.ts";
import { loadTokenizerFrom } from "./load.ts";
import type { Tokenizer } from "./tokenizer.ts";

/**
 * Loads the tokenizer in `dir`: a `CharTokenizer` if its `tokenizer_config.json` says
 * `"rlvr_tokenizer": "CharTokenizer"`, else an `HfTokenizer`. Needs `--allow-read`.
 *
 * @param dir The tokenizer's folder.
 * @returns The tokenizer.
 *
 * @example Usage
 * ```ts
 * import { loadTokenizer } from "@rlvr/policy/fs";
 * import { CharTokenizer } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await CharTokenizer.fromCorpus(["0123456789+="]).save(dir);
 * const tok = await loadTokenizer(dir);
 * assert.ok(tok instanceof CharTokenizer);
 * assert.equal(tok.decode(tok.encode("12+3=15"), { skipSpecialTokens: true }), "12+3=15");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadTokenizer(dir: string): Promise<Tokenizer> {
  await checkDir("loadTokenizer", dir);
  return await loadTokenizerFrom("loadTokenizer", dirSource(dir), {
    char: "CharTokenizer.load",
    hf: "HfTokenizer.load",
  });
}
