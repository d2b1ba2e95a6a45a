/**
 * A static file server for the playground's pages: one directory on 127.0.0.1 (or a host
 * given), cross-origin isolated, nothing outside the directory reachable.
 *
 * Design decisions:
 * - **Isolation headers on every response**: `Cross-Origin-Opener-Policy: same-origin` and
 *   `Cross-Origin-Embedder-Policy: require-corp` make the pages cross-origin isolated, which a
 *   browser requires before it exposes `SharedArrayBuffer` (threaded WebAssembly). Everything is
 *   served from the one origin, so no resource needs a CORP header of its own; one is sent anyway
 *   (`same-origin`) so that a page of another origin cannot embed these files.
 * - **Loopback by default**: the server binds 127.0.0.1 (a secure context for the browser, like
 *   https, so WebGPU is exposed) and port 0 by default, and returns the port the OS chose.
 *   Another `hostname` (e.g. `0.0.0.0` to reach it from another machine) is allowed, but a page
 *   served over plain http from a non-loopback address is not a secure context: the browser
 *   hides WebGPU there.
 * - **No traversal**: the request path is percent-decoded, rejected when it holds a NUL, a
 *   backslash or a `..` segment, joined under the root, and the real path of what it names
 *   (symbolic links resolved) must still lie under the real root; anything else is a 404 that
 *   never says what exists outside. Paths longer than `maxPathLength` are refused with 414.
 * - **Content types** by extension (`.js`, `.html`, `.wasm`, `.json`, `.safetensors`, ...), so
 *   that `WebAssembly.instantiateStreaming` and module scripts are accepted; unknown extensions
 *   are `application/octet-stream`, with `X-Content-Type-Options: nosniff`.
 * - Files are streamed (model weights may be large) and never cached (`Cache-Control: no-store`),
 *   so a rebuilt bundle is what the next page load sees.
 *
 * @module
 */

import { extname, join, resolve, sep } from "node:path";

/** Content types by lower-case extension; anything else is `application/octet-stream`. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = Object.freeze({
  ".html": "text/html; charset=utf-8",
  ".htm": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".wasm": "application/wasm",
  ".safetensors": "application/octet-stream",
  ".bin": "application/octet-stream",
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".ico": "image/x-icon",
});

/** Headers sent with every response (cross-origin isolation and no caching). */
export const ISOLATION_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-embedder-policy": "require-corp",
  "cross-origin-resource-policy": "same-origin",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
});

/**
 * The content type served for `path`, from its extension.
 *
 * @param path A file name or path.
 * @returns The `Content-Type` header value.
 *
 * @example Usage
 * ```ts
 * import { contentTypeOf } from "./static_server.ts";
 * import assert from "node:assert/strict";
 * assert.equal(contentTypeOf("model.safetensors"), "application/octet-stream");
 * assert.equal(contentTypeOf("kernels.JS"), "text/javascript; charset=utf-8");
 * ```
 */
export function contentTypeOf(path: string): string {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
}

/** Options of {@link serveDirectory}. */
export interface StaticServerOptions {
  /** Port to listen on (default 0: the OS picks a free one, see {@link StaticServer.port}). */
  port?: number;
  /** Address to bind (default `127.0.0.1`; see the module doc for other hosts). */
  hostname?: string;
  /** Longest URL path accepted, in characters before decoding (default 1024); longer: 414. */
  maxPathLength?: number;
  /** Where unexpected errors (500s) are reported (default `console.error`). */
  onError?: (message: string) => void;
}

/** A running {@link serveDirectory} server. */
export interface StaticServer extends AsyncDisposable {
  /** The real path of the directory served. */
  readonly root: string;
  /** The port it listens on. */
  readonly port: number;
  /** The address it is bound to (`127.0.0.1` unless another `hostname` was given). */
  readonly hostname: string;
  /** `http://<hostname>:<port>/` (an IPv6 address in brackets). */
  readonly url: string;
  /** Stops listening and waits for open requests to finish. */
  close(): Promise<void>;
}

/**
 * Maps a request's URL path to a file path under `root`, or null when it is not allowed (a NUL,
 * a backslash, a `..` segment or invalid percent-encoding). Pure: it does not touch the file
 * system, so symbolic links are checked separately by the server.
 *
 * @param root The directory served (absolute).
 * @param pathname The URL path, still percent-encoded (e.g. `/parity/index.html`).
 * @returns The absolute file path, or null.
 *
 * @example Usage
 * ```ts
 * import { resolveUnder } from "./static_server.ts";
 * import assert from "node:assert/strict";
 * assert.equal(resolveUnder("/srv/www", "/a%20b/index.html"), "/srv/www/a b/index.html");
 * assert.equal(resolveUnder("/srv/www", "/..%2f..%2fetc/passwd"), null);
 * assert.equal(resolveUnder("/srv/www", "/x%00.js"), null);
 * ```
 */
export function resolveUnder(root: string, pathname: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null; // malformed percent-encoding
  }
  if (decoded.includes("\0") || decoded.includes("\\")) return null;
  const segments = decoded.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.some((s) => s === "..")) return null;
  const base = resolve(root);
  const full = resolve(join(base, ...segments));
  if (full !== base && !full.startsWith(base.endsWith(sep) ? base : base + sep)) {
    return null;
  }
  return full;
}

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function plain(status: number, text: string, extra: Record<string, string> = {}): Response {
  return new Response(`${text}\n`, {
    status,
    headers: { ...ISOLATION_HEADERS, "content-type": "text/plain; charset=utf-8", ...extra },
  });
}

/**
 * Serves the directory `root` on 127.0.0.1 (or `options.hostname`) with the cross-origin isolation headers (see the
 * module doc); a directory URL serves its `index.html`. Close it with `close()` or `await using`.
 *
 * @param root The directory to serve.
 * @param options Port, path length limit and error reporting.
 * @returns The running server, with the port chosen.
 *
 * @example Usage
 * ```ts
 * import { serveDirectory } from "./static_server.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/index.html`, "<!doctype html><title>hi</title>");
 * {
 *   await using server = await serveDirectory(dir);
 *   const res = await fetch(server.url);
 *   assert.equal(res.headers.get("cross-origin-embedder-policy"), "require-corp");
 *   assert.match(await res.text(), /<title>hi<\/title>/);
 * }
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function serveDirectory(
  root: string,
  options: StaticServerOptions = {},
): Promise<StaticServer> {
  const maxPathLength = options.maxPathLength ?? 1024;
  if (!(Number.isInteger(maxPathLength) && maxPathLength >= 1)) {
    throw new RangeError(
      `serveDirectory: maxPathLength must be an integer >= 1, got ${maxPathLength}`,
    );
  }
  const port = options.port ?? 0;
  const hostname = options.hostname ?? "127.0.0.1";
  if (hostname === "" || /[\s/]/.test(hostname)) {
    throw new RangeError(
      `serveDirectory: hostname must be an address or host name, got ${JSON.stringify(hostname)}`,
    );
  }
  if (!(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    throw new RangeError(`serveDirectory: port must be an integer in [0, 65535], got ${port}`);
  }
  let realRoot: string;
  try {
    realRoot = await Deno.realPath(root);
    if (!(await Deno.stat(realRoot)).isDirectory) throw new Error("not a directory");
  } catch (e) {
    throw new Error(
      `serveDirectory: cannot serve ${JSON.stringify(root)}: ${(e as Error).message}; ` +
        `pass an existing directory (build the pages first)`,
    );
  }
  const onError = options.onError ?? ((m: string) => console.error(m));

  async function handle(req: Request): Promise<Response> {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return plain(405, "method not allowed", { allow: "GET, HEAD" });
    }
    const pathname = new URL(req.url).pathname;
    if (pathname.length > maxPathLength) {
      return plain(414, `path longer than ${maxPathLength} characters`);
    }
    const path = resolveUnder(realRoot, pathname);
    if (path === null) return plain(404, "not found");
    let file = path;
    try {
      file = await Deno.realPath(path);
      if (!inside(realRoot, file)) return plain(404, "not found"); // a link leading outside
      let info = await Deno.stat(file);
      if (info.isDirectory) {
        if (!pathname.endsWith("/")) {
          return new Response(null, {
            status: 301,
            headers: { ...ISOLATION_HEADERS, location: `${pathname}/` },
          });
        }
        file = await Deno.realPath(join(file, "index.html"));
        if (!inside(realRoot, file)) return plain(404, "not found");
        info = await Deno.stat(file);
      }
      if (!info.isFile) return plain(404, "not found");
      const headers = {
        ...ISOLATION_HEADERS,
        "content-type": contentTypeOf(file),
        "content-length": String(info.size),
      };
      if (req.method === "HEAD") return new Response(null, { status: 200, headers });
      const handle = await Deno.open(file, { read: true });
      return new Response(handle.readable, { status: 200, headers });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
        return plain(404, "not found");
      }
      onError(`serveDirectory: ${req.method} ${pathname} (${file}): ${(e as Error).message}`);
      return plain(500, "internal error");
    }
  }

  const { promise: listening, resolve: onListen } = Promise.withResolvers<void>();
  const server = Deno.serve({
    hostname,
    port,
    onListen: () => onListen(),
    onError: (e) => {
      onError(`serveDirectory: ${(e as Error).message}`);
      return plain(500, "internal error");
    },
  }, handle);
  await listening;
  const chosen = server.addr.port;
  let closed: Promise<void> | null = null;
  const close = () => closed ??= server.shutdown();
  return {
    root: realRoot,
    port: chosen,
    hostname,
    url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${chosen}/`,
    close,
    [Symbol.asyncDispose]: close,
  };
}
