/**
 * Where the loaders of `@rlvr/policy` read a folder's files from: one interface,
 * {@link FileSource}, over three places, so that a checkpoint or a tokenizer read from a folder
 * (Deno), from bytes in memory ({@link FileContents}: a browser's `File`s, a zip, a test) or
 * from a base URL (`fetch`) goes through the same parsing and validation and fails with the same
 * errors.
 *
 * Design decisions:
 * - **Lazy reads.** A loader asks for one file at a time and only for the files it needs (a
 *   sharded checkpoint's shards one after another), so a folder or a URL never holds more than
 *   one shard's bytes at once; in-memory files are already there.
 * - **Missing is `null`, not an error.** Whether a missing file is an error (`config.json`) or
 *   not (`generation_config.json`) is the loader's decision, and its message names the file and
 *   what belongs there; any other failure (a permission, an HTTP 500) is thrown and the loader
 *   wraps it with the path.
 * - **Paths in messages** are the folder joined with the name (`node:path`'s POSIX `join`
 *   rules), the URL resolved against the base, or `<name>/<file>` for in-memory files.
 * - **Deno only where needed.** {@link dirSource} touches `Deno` only when it is called, and
 *   {@link requireDeno} turns a missing `Deno` (a browser) into an error naming the function
 *   that needs it and the one to use instead.
 *
 * @module
 */

/**
 * A folder's files in memory, by file name (`config.json`, `model.safetensors`,
 * `tokenizer.json`, ...): what `loadCheckpointFromFiles` and `loadTokenizerFromFiles` read. JSON
 * files may be given as text; any file as bytes.
 *
 * @example Usage
 * ```ts
 * import type { FileContents } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const files: FileContents = { "config.json": "{}", "model.safetensors": new Uint8Array(8) };
 * assert.equal(Object.keys(files).length, 2);
 * ```
 */
export type FileContents =
  | ReadonlyMap<string, Uint8Array | ArrayBuffer | string>
  | Readonly<Record<string, Uint8Array | ArrayBuffer | string>>;

/** A folder's worth of files, read one at a time (see the module doc). */
export interface FileSource {
  /** The folder, the base URL or the name of the in-memory files, for messages. */
  readonly where: string;
  /** How messages name file `name` of this source. */
  path(name: string): string;
  /** The bytes of file `name`, or null when there is no such file; other failures throw. */
  read(name: string): Promise<Uint8Array | null>;
  /** The file names, for hints in errors; null where the source cannot list (a URL). */
  list(): Promise<string[] | null>;
}

const encoder = new TextEncoder();

/**
 * `dir` joined with the relative `name` as `node:path`'s POSIX `join` does (`.` and `..`
 * resolved, one `/` between), or, for a URL, `name` resolved against it as a folder.
 *
 * @param dir A folder path or a base URL.
 * @param name A file name relative to it.
 * @returns The joined path or URL.
 *
 * @example Usage
 * ```ts
 * import { joinPath } from "./file_source.ts";
 * import assert from "node:assert/strict";
 * assert.equal(joinPath("./ckpt/", "config.json"), "ckpt/config.json");
 * assert.equal(joinPath("/a/b", "../c/d.json"), "/a/c/d.json");
 * assert.equal(joinPath("https://x.test/m", "config.json"), "https://x.test/m/config.json");
 * ```
 */
export function joinPath(dir: string, name: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(dir)) {
    return new URL(name, dir.endsWith("/") ? dir : `${dir}/`).href;
  }
  const absolute = dir.startsWith("/");
  const out: string[] = [];
  for (const part of `${dir}/${name}`.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else if (part !== ".." || !absolute) out.push(part);
  }
  const joined = absolute ? `/${out.join("/")}` : out.length === 0 ? "." : out.join("/");
  return name.endsWith("/") && !joined.endsWith("/") ? `${joined}/` : joined;
}

/**
 * `Deno`, or an error naming `call` (e.g. `loadCheckpoint(dir)`) and what to use instead where
 * there is none (a browser).
 *
 * @param call The function that needs Deno's file system, as the message names it.
 * @param instead What a browser uses instead.
 * @returns The `Deno` namespace.
 *
 * @example Usage
 * ```ts
 * import { requireDeno } from "./file_source.ts";
 * import assert from "node:assert/strict";
 * assert.equal(requireDeno("loadTokenizer(dir)", "loadTokenizerFromFiles"), Deno);
 * ```
 */
export function requireDeno(call: string, instead: string): typeof Deno {
  const deno = (globalThis as { Deno?: typeof Deno }).Deno;
  if (deno === undefined) {
    throw new Error(`${call} needs Deno's file system; in a browser use ${instead}`);
  }
  return deno;
}

function bytesOf(value: unknown, where: string): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typeof value === "string") return encoder.encode(value);
  throw new TypeError(
    `${where} must be a Uint8Array, an ArrayBuffer or a string, got ${
      value === null ? "null" : typeof value
    }`,
  );
}

/**
 * A source over files in memory, keyed by file name.
 *
 * @param files The files.
 * @param where What messages call them (e.g. `"tiny"`).
 * @returns The source.
 *
 * @example Usage
 * ```ts
 * import { filesSource } from "./file_source.ts";
 * import assert from "node:assert/strict";
 * const src = filesSource({ "a.json": "{}" }, "mem");
 * assert.deepEqual(await src.read("a.json"), new TextEncoder().encode("{}"));
 * assert.equal(await src.read("b.json"), null);
 * assert.equal(src.path("a.json"), "mem/a.json");
 * ```
 */
export function filesSource(files: FileContents, where: string): FileSource {
  if (typeof files !== "object" || files === null) {
    throw new TypeError(
      `files must be a Map or an object from file name to contents, got ${
        files === null ? "null" : typeof files
      }`,
    );
  }
  const map: ReadonlyMap<string, unknown> = files instanceof Map
    ? files
    : new Map(Object.entries(files));
  return {
    where,
    path: (name) => `${where}/${name}`,
    // deno-lint-ignore require-await
    read: async (name) =>
      map.has(name) ? bytesOf(map.get(name), `files[${JSON.stringify(name)}]`) : null,
    list: () => Promise.resolve([...map.keys()].sort()),
  };
}

/**
 * A source over the files under a base URL, fetched one by one; a 404 is a missing file.
 *
 * @param base The folder's URL (a `/` is added when it lacks one).
 * @param fetchFn The fetch to use (default: the global one).
 * @returns The source.
 *
 * @example Usage
 * ```ts
 * import { urlSource } from "./file_source.ts";
 * import assert from "node:assert/strict";
 * const fake = (url: string | URL | Request) =>
 *   Promise.resolve(String(url).endsWith("/a.json") ? new Response("{}") : new Response("", { status: 404 }));
 * const src = urlSource("https://x.test/m", fake as typeof fetch);
 * assert.equal(src.path("a.json"), "https://x.test/m/a.json");
 * assert.equal(new TextDecoder().decode((await src.read("a.json"))!), "{}");
 * assert.equal(await src.read("b.json"), null);
 * ```
 */
export function urlSource(base: string | URL, fetchFn: typeof fetch = fetch): FileSource {
  const href = String(base);
  let root: URL;
  try {
    root = new URL(href.endsWith("/") ? href : `${href}/`);
  } catch {
    throw new TypeError(`the base URL ${JSON.stringify(href)} is not an absolute URL`);
  }
  return {
    where: root.href,
    path: (name) => new URL(name, root).href,
    read: async (name) => {
      const res = await fetchFn(new URL(name, root));
      if (res.status === 404) {
        await res.body?.cancel();
        return null;
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`HTTP ${res.status} ${res.statusText}`.trim());
      }
      return new Uint8Array(await res.arrayBuffer());
    },
    list: () => Promise.resolve(null),
  };
}

/**
 * A source over a folder on disk (needs Deno and `--allow-read`; call {@link requireDeno} first
 * where a browser may get here).
 *
 * @param dir The folder.
 * @returns The source.
 *
 * @example Usage
 * ```ts
 * import { dirSource } from "./file_source.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/a.json`, "{}");
 * const src = dirSource(dir);
 * assert.deepEqual(await src.list(), ["a.json"]);
 * assert.equal(await src.read("b.json"), null);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function dirSource(dir: string): FileSource {
  return {
    where: dir,
    path: (name) => joinPath(dir, name),
    read: async (name) => {
      try {
        return await Deno.readFile(joinPath(dir, name));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      }
    },
    list: async () => {
      const names: string[] = [];
      for await (const e of Deno.readDir(dir)) if (e.isFile) names.push(e.name);
      return names.sort();
    },
  };
}
