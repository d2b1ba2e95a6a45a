/**
 * {@link loadTokenizer}: opens a tokenizer directory with the class that wrote it.
 *
 * Design: the choice is made by an explicit marker, not by guessing from the vocabulary: a
 * `tokenizer_config.json` with `"rlvr_tokenizer": "CharTokenizer"` (written by
 * {@link CharTokenizer.save}) opens as a {@link CharTokenizer}, which encodes by a direct lookup
 * and checks the files really are its format; everything else opens as an {@link HfTokenizer}.
 * Both give the same ids for a character tokenizer's files, so the marker only picks the faster
 * path and the stricter checks.
 *
 * @module
 */

import { join } from "node:path";
import { checkDir, readJsonObject, TOKENIZER_CONFIG_JSON } from "./_files.ts";
import { CharTokenizer } from "./char_tokenizer.ts";
import { HfTokenizer } from "./hf_tokenizer.ts";
import type { Tokenizer } from "./tokenizer.ts";

/**
 * Loads the tokenizer in `dir`: a {@link CharTokenizer} if its `tokenizer_config.json` says
 * `"rlvr_tokenizer": "CharTokenizer"`, else an {@link HfTokenizer}.
 *
 * @example Usage
 * ```ts
 * import { CharTokenizer, loadTokenizer } from "@rlvr/policy";
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
  const config = await readJsonObject("loadTokenizer", join(dir, TOKENIZER_CONFIG_JSON));
  if (config?.rlvr_tokenizer === "CharTokenizer") return await CharTokenizer.load(dir);
  return await HfTokenizer.load(dir);
}
