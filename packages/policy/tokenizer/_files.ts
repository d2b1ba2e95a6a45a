/**
 * File and field helpers shared by the tokenizers (not exported from the package).
 *
 * Design: every read error names the function, the full path and what was expected there, and
 * every field error names the file, the field, the bad value and what is accepted, because a
 * tokenizer directory is usually copied by hand and a bare `SyntaxError: Unexpected token` or
 * `undefined` says nothing about which of its files is wrong.
 *
 * @module
 */

import { type FileSource, joinPath, requireDeno } from "../file_source.ts";

/** The Hugging Face tokenizer file names. */
export const TOKENIZER_JSON = "tokenizer.json";
/** The Hugging Face tokenizer configuration file name. */
export const TOKENIZER_CONFIG_JSON = "tokenizer_config.json";
/** Newer `transformers` versions save the chat template in this file instead of the config. */
export const CHAT_TEMPLATE_JINJA = "chat_template.jinja";

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** A short, single-line rendering of a value for error messages. */
export function show(value: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** True for a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Throws unless `dir` is an existing directory; names `owner` (e.g. `HfTokenizer.load`) and the
 * browser alternative where there is no Deno.
 */
export async function checkDir(owner: string, dir: string): Promise<void> {
  if (typeof dir !== "string" || dir === "") {
    throw new TypeError(`${owner}: dir must be a non-empty path string, got ${show(dir)}`);
  }
  const deno = requireDeno(`${owner}(dir)`, "loadTokenizerFromFiles or loadTokenizerFromUrl");
  let info: Deno.FileInfo;
  try {
    info = await deno.stat(dir);
  } catch (e) {
    if (e instanceof deno.errors.NotFound) {
      throw new Error(`${owner}: tokenizer directory ${dir} does not exist`);
    }
    throw new Error(`${owner}: cannot stat ${dir}: ${(e as Error).message}`);
  }
  if (!info.isDirectory) {
    throw new Error(
      `${owner}: ${dir} is a file; pass the directory that holds ${TOKENIZER_JSON}`,
    );
  }
}

/** The text of file `name` of `src`, or null if it does not exist. */
export async function readTextIfExists(
  owner: string,
  src: FileSource,
  name: string,
): Promise<string | null> {
  let bytes: Uint8Array | null;
  try {
    bytes = await src.read(name);
  } catch (e) {
    throw new Error(`${owner}: cannot read ${src.path(name)}: ${(e as Error).message}`);
  }
  return bytes === null ? null : new TextDecoder().decode(bytes);
}

/**
 * The JSON object in file `name` of `src`; null if the file is missing and `missing` is
 * undefined, else an error whose message ends with `missing` (the hint on what to do).
 */
export async function readJsonObject(
  owner: string,
  src: FileSource,
  name: string,
  missing?: string,
): Promise<JsonObject | null> {
  const path = src.path(name);
  const text = await readTextIfExists(owner, src, name);
  if (text === null) {
    if (missing === undefined) return null;
    throw new Error(`${owner}: ${path} does not exist; ${missing}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new SyntaxError(
      `${owner}: ${path} is not valid JSON (${(e as Error).message}); re-save or re-download it`,
    );
  }
  if (!isObject(value)) {
    throw new TypeError(`${owner}: ${path} must hold a JSON object, got ${show(value)}`);
  }
  return value;
}

/** `value` as JSON indented by 2, as `save_pretrained` writes it. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

/**
 * Writes `files` (name → text) into `dir`, created if missing; `owner` (e.g.
 * `CharTokenizer.save`) is named where there is no Deno.
 */
export async function writeFiles(
  owner: string,
  dir: string,
  files: Readonly<Record<string, string>>,
): Promise<void> {
  const deno = requireDeno(`${owner}(dir)`, "toFiles() and keep or offer the files yourself");
  await deno.mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    await deno.writeTextFile(joinPath(dir, name), text);
  }
}

/**
 * The token string of a special-token field of `tokenizer_config.json`: a string, null/absent,
 * or an `AddedToken` object `{content: "...", ...}` (how older `transformers` save them).
 */
export function tokenContent(where: string, field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  if (isObject(value) && typeof value.content === "string") return value.content;
  throw new TypeError(
    `${where}: ${field} must be a token string, null or {"content": string}, got ${show(value)}`,
  );
}

/** Checks that `ids` is a list of integers in `[0, vocabSize)`. */
export function checkIds(owner: string, ids: readonly number[], vocabSize: number): void {
  if (!Array.isArray(ids)) {
    throw new TypeError(`${owner}: ids must be an array of token ids, got ${show(ids)}`);
  }
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id >= vocabSize) {
      throw new RangeError(
        `${owner}: ids[${i}] must be an integer in [0, ${vocabSize}) (the vocabulary size), ` +
          `got ${show(id)}`,
      );
    }
  }
}
