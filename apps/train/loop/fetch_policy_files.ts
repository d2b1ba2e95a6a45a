/**
 * Fetching a checkpoint folder's files into memory ({@link fetchPolicyFiles}): what a browser
 * tab loads once, before it trains offline, and gives to `policyFromFiles` (`policy_files.ts`).
 * Its own module, importing nothing, so a page that only fetches does not bundle the loaders.
 *
 * @module
 */

const decoder = new TextDecoder();

/**
 * The files {@link fetchPolicyFiles} asks a checkpoint folder URL for besides the weights,
 * `true` for those that must exist.
 */
export const POLICY_FILE_NAMES: readonly (readonly [string, boolean])[] = Object.freeze([
  ["config.json", true],
  ["generation_config.json", false],
  ["tokenizer.json", false],
  ["tokenizer_config.json", false],
  ["chat_template.jinja", false],
]);

/**
 * The page's address in a browser; undefined in Deno (whose `location` may throw).
 *
 * @returns `location.href`, or undefined.
 *
 * @example Usage
 * ```ts
 * import { pageHref } from "./fetch_policy_files.ts";
 * import assert from "node:assert/strict";
 * assert.equal(pageHref(), undefined); // Deno
 * ```
 */
export function pageHref(): string | undefined {
  try {
    return (globalThis as { location?: { href: string } }).location?.href;
  } catch {
    return undefined;
  }
}

/**
 * The body of `url`, or null on a 404; other failures throw naming `who` and the URL.
 *
 * @param fetchFn The fetch to use.
 * @param url The URL.
 * @param who What messages name as the caller.
 * @returns The bytes, or null.
 *
 * @example Usage
 * ```ts
 * import { fetchOrNull } from "./fetch_policy_files.ts";
 * import assert from "node:assert/strict";
 * const fake = () => Promise.resolve(new Response("", { status: 404 }));
 * assert.equal(await fetchOrNull(fake as typeof fetch, new URL("https://x.test/a"), "t"), null);
 * ```
 */
export async function fetchOrNull(
  fetchFn: typeof fetch,
  url: URL,
  who: string,
): Promise<Uint8Array | null> {
  let res: Response;
  try {
    res = await fetchFn(url);
  } catch (e) {
    throw new Error(`${who}: cannot fetch ${url.href}: ${(e as Error).message}`);
  }
  if (res.status === 404) {
    await res.body?.cancel();
    return null;
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`${who}: ${url.href}: HTTP ${res.status} ${res.statusText}`.trim());
  }
  return new Uint8Array(await res.arrayBuffer());
}

/** Options of {@link fetchPolicyFiles}. */
export interface FetchPolicyFilesOptions {
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * The folder's file names, when known (a manifest): exactly these are fetched, each required,
   * so no request is made for a file the folder lacks (a browser logs every 404 as an error).
   */
  names?: readonly string[];
}

/**
 * Fetches the files of a checkpoint folder URL into memory: `names` when given, else
 * `config.json` (required), the generation and tokenizer files when present (a 404 means
 * absent), and `model.safetensors`, else `model.safetensors.index.json` and the shards it
 * names. What {@link policyFromFiles} loads.
 *
 * @param baseUrl The folder's URL (a trailing `/` is added when missing; a relative one resolves
 *   against the page).
 * @param options The fetch to use and the file names.
 * @returns The files by name.
 * @throws Error naming the URL on a missing required file or an HTTP error.
 *
 * @example Usage
 * ```ts
 * import { fetchPolicyFiles } from "./fetch_policy_files.ts";
 * import assert from "node:assert/strict";
 * const files: Record<string, string> = { "config.json": "{}", "model.safetensors": "x" };
 * const fake = (url: string | URL | Request) => {
 *   const body = files[String(url).replace("https://x.test/m/", "")];
 *   return Promise.resolve(new Response(body ?? "", { status: body === undefined ? 404 : 200 }));
 * };
 * const got = await fetchPolicyFiles("https://x.test/m", { fetch: fake as typeof fetch });
 * assert.deepEqual([...got.keys()].sort(), ["config.json", "model.safetensors"]);
 * await assert.rejects(
 *   fetchPolicyFiles("https://x.test/m", { fetch: fake as typeof fetch, names: ["tokenizer.json"] }),
 *   /tokenizer\.json does not exist/,
 * );
 * ```
 */
export async function fetchPolicyFiles(
  baseUrl: string | URL,
  options: FetchPolicyFilesOptions = {},
): Promise<Map<string, Uint8Array>> {
  const fetchFn = options.fetch ?? fetch;
  const href = String(baseUrl);
  // A relative URL (a page's `model/`) resolves against the page.
  const base = new URL(href.endsWith("/") ? href : `${href}/`, pageHref());
  const out = new Map<string, Uint8Array>();
  const get = async (name: string, required: boolean): Promise<boolean> => {
    const url = new URL(name, base);
    const bytes = await fetchOrNull(fetchFn, url, "fetchPolicyFiles");
    if (bytes === null) {
      if (required) {
        throw new Error(
          `fetchPolicyFiles: ${url.href} does not exist (HTTP 404); a checkpoint folder needs ` +
            `config.json and model.safetensors (or model.safetensors.index.json with its ` +
            `shards), and every file its manifest names`,
        );
      }
      return false;
    }
    out.set(name, bytes);
    return true;
  };
  if (options.names !== undefined) {
    await Promise.all(options.names.map((name) => get(name, true)));
    return out;
  }
  await Promise.all(POLICY_FILE_NAMES.map(([name, required]) => get(name, required)));
  if (!(await get("model.safetensors", false))) {
    await get("model.safetensors.index.json", true);
    let index: { weight_map?: Record<string, unknown> } | null;
    try {
      index = JSON.parse(decoder.decode(out.get("model.safetensors.index.json")!));
    } catch (e) {
      throw new Error(
        `fetchPolicyFiles: ${base.href}model.safetensors.index.json is not JSON: ${
          (e as Error).message
        }`,
      );
    }
    for (const shard of new Set(Object.values(index?.weight_map ?? {}))) {
      if (typeof shard !== "string" || !/^[^/\\]+$/.test(shard)) {
        throw new Error(
          `fetchPolicyFiles: ${base.href}model.safetensors.index.json names the shard ${
            JSON.stringify(shard)
          }; use file names of the same folder`,
        );
      }
      await get(shard, true);
    }
  }
  return out;
}
