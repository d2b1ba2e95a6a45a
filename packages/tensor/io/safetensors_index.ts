/**
 * Sharded-checkpoint indexes (`model.safetensors.index.json`, `{metadata, weight_map}`) parsed
 * from their text or bytes, with no file system: {@link parseSafetensorsIndex}. Reading the index
 * from a path is `readSafetensorsIndex` of `@rlvr/tensor/fs`, which calls it.
 *
 * @module
 */

import { SafetensorsError } from "./safetensors.ts";

/**
 * A parsed `model.safetensors.index.json`.
 *
 * @example Usage
 * ```ts
 * import { parseSafetensorsIndex, type SafetensorsIndex } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const text = JSON.stringify({ weight_map: { a: "s1.safetensors" } });
 * const index: SafetensorsIndex = parseSafetensorsIndex(text, "ckpt/i.json");
 * assert.deepEqual(index.shards, ["s1.safetensors"]);
 * assert.equal(index.dir, "ckpt/");
 * ```
 */
export interface SafetensorsIndex {
  /** The index's `metadata` object (e.g. `{ total_size: 988097536 }`); `{}` when absent. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Tensor name → shard file name (relative to the index's directory). */
  readonly weightMap: ReadonlyMap<string, string>;
  /** Distinct shard file names, in order of first appearance. */
  readonly shards: readonly string[];
  /** Directory of the index file, with a trailing separator (`""` for the current directory). */
  readonly dir: string;
}

/**
 * Parses and validates a sharded-checkpoint index (`{metadata, weight_map: {name: file}}`) from
 * its text or bytes. Shard names must be relative paths inside the index's directory (no `..`,
 * not absolute). Errors are {@link SafetensorsError}s naming `indexPath`.
 *
 * @param content The index file's text or bytes.
 * @param indexPath Where the index came from (a path or URL): names it in errors and gives
 *   `dir`, everything up to its last `/` or `\\`.
 * @returns The index with its weight map.
 *
 * @example Usage
 * ```ts
 * import { parseSafetensorsIndex } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const index = { metadata: { total_size: 8 }, weight_map: { a: "one.safetensors", b: "two.safetensors" } };
 * const parsed = parseSafetensorsIndex(JSON.stringify(index), "model.safetensors.index.json");
 * assert.equal(parsed.weightMap.get("b"), "two.safetensors");
 * assert.deepEqual(parsed.shards, ["one.safetensors", "two.safetensors"]);
 * assert.throws(() => parseSafetensorsIndex("{}", "i.json"), /needs "weight_map"/);
 * ```
 */
export function parseSafetensorsIndex(
  content: string | Uint8Array,
  indexPath: string,
): SafetensorsIndex {
  const fail = (tensorName: string | undefined, problem: string): never => {
    throw new SafetensorsError(indexPath, tensorName, problem);
  };
  let json: unknown;
  try {
    json = JSON.parse(typeof content === "string" ? content : new TextDecoder().decode(content));
  } catch (e) {
    fail(undefined, `index is not valid JSON (${(e as Error).message})`);
  }
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObject(json)) {
    fail(undefined, `index must be a JSON object {metadata, weight_map}`);
  }
  const obj = json as Record<string, unknown>;
  const metadata = obj["metadata"] ?? {};
  if (!isObject(metadata)) fail(undefined, `index "metadata" must be an object`);
  const wm = obj["weight_map"];
  if (!isObject(wm)) {
    fail(
      undefined,
      `index needs "weight_map", an object mapping tensor names to shard file names; got ` +
        `${wm === undefined ? "nothing" : JSON.stringify(wm).slice(0, 60)}`,
    );
  }
  const weightMap = new Map<string, string>();
  const shards: string[] = [];
  for (const [name, file] of Object.entries(wm as Record<string, unknown>)) {
    if (typeof file !== "string" || file === "") {
      fail(name, `weight_map value must be a shard file name, got ${JSON.stringify(file)}`);
    }
    const f = file as string;
    if (/^([/\\]|[A-Za-z]:)/.test(f) || f.split(/[/\\]/).includes("..")) {
      fail(
        name,
        `shard file ${JSON.stringify(f)} must be a relative path inside the index's directory`,
      );
    }
    weightMap.set(name, f);
    if (!shards.includes(f)) shards.push(f);
  }
  const cut = Math.max(indexPath.lastIndexOf("/"), indexPath.lastIndexOf("\\"));
  const dir = cut >= 0 ? indexPath.slice(0, cut + 1) : "";
  return {
    metadata: metadata as Record<string, unknown>,
    weightMap,
    shards,
    dir,
  };
}
