/**
 * Internal: the location of a file shipped with this package (recipes, the tiny checkpoints) and
 * reading it, whether the package was loaded from the file system or by URL (`https:`, `http:`,
 * e.g. from JSR or a static server).
 *
 * Design: a location is a string, a file-system path when the module was loaded from a `file:`
 * URL (so local runs, error messages and tests see plain paths, as before) and otherwise the URL
 * itself, read with `fetch`; a URL has no directory listing and no synchronous read, so callers
 * branch on {@link isRemote} where they list or read synchronously.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

/**
 * Where a shipped file is: the path of a `file:` URL, else the URL's text.
 *
 * @example Usage
 * ```ts
 * import { assetLocation } from "./_assets.ts";
 * import assert from "node:assert/strict";
 * assert.equal(assetLocation(new URL("file:///srv/recipes/")), "/srv/recipes/");
 * assert.equal(assetLocation(new URL("https://x.test/recipes/")), "https://x.test/recipes/");
 * ```
 */
export function assetLocation(url: URL): string {
  return url.protocol === "file:" ? fileURLToPath(url) : url.href;
}

/**
 * Whether a location is an `https:` or `http:` URL (read with `fetch`), not a path.
 *
 * @example Usage
 * ```ts
 * import { isRemote } from "./_assets.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isRemote("https://x.test/a.yaml"), true);
 * assert.equal(isRemote("apps/train/recipes/dapo.yaml"), false);
 * ```
 */
export function isRemote(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

/**
 * Fetches a file by URL: its bytes, or `null` when the server answers 404. Any other failure
 * throws an error naming `what` (e.g. `loadPolicy`), the URL and the HTTP status.
 *
 * @example Usage
 * ```ts
 * import { fetchBytes } from "./_assets.ts";
 * import assert from "node:assert/strict";
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) =>
 *   new URL(req.url).pathname === "/a.txt" ? new Response("hi") : new Response("", { status: 404 }));
 * const base = `http://127.0.0.1:${server.addr.port}/`;
 * assert.equal(new TextDecoder().decode((await fetchBytes(`${base}a.txt`, "example"))!), "hi");
 * assert.equal(await fetchBytes(`${base}b.txt`, "example"), null);
 * await server.shutdown();
 * ```
 */
export async function fetchBytes(url: string, what: string): Promise<Uint8Array | null> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`${what}: cannot fetch ${url}: ${(e as Error).message}`);
  }
  if (res.status === 404) {
    await res.body?.cancel();
    return null;
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`${what}: cannot fetch ${url}: HTTP ${res.status} ${res.statusText}`);
  }
  return new Uint8Array(await res.arrayBuffer());
}
