/**
 * The repository served over loopback HTTP, and the import map a consumer without the workspace
 * would use to import its packages from there by URL: what `url_import_test.ts` runs against and
 * what `bench/import_cost.ts` measures.
 *
 * Design decisions:
 * - The server serves files read-only, with a content type by extension (`.ts` as
 *   `application/typescript`, as a static host or JSR would), refuses `..` and `.git*` paths,
 *   and records every path asked for, so a test can check what came over HTTP.
 * - The import map has one scope per package holding exactly the imports its `deno.json`
 *   declares (npm specifiers as pinned there; `jsr:@rlvr/...` siblings pointed at the server,
 *   since JSR is not reachable here), so a bare specifier a package uses without declaring it
 *   fails to resolve, as it would for a JSR user.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";

/** The repository root (`file:` URL ending in `/`). */
export const REPO_ROOT: URL = new URL("..", import.meta.url);
const ROOT_PATH = decodeURIComponent(REPO_ROOT.pathname).replace(/\/$/, "");

const TYPES: Record<string, string> = {
  ".ts": "application/typescript; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".yaml": "text/yaml; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
};

/**
 * Serves the repository read-only on 127.0.0.1 (a free port); pushes every path asked for onto
 * `requested`. Stop it with `shutdown()`.
 *
 * @example Usage
 * ```ts
 * import { serveRepository } from "./_repo_server.ts";
 * import assert from "node:assert/strict";
 * const requested: string[] = [];
 * const server = serveRepository(requested);
 * const res = await fetch(`http://127.0.0.1:${server.addr.port}/deno.json`);
 * assert.equal(res.headers.get("content-type"), "application/json");
 * assert.ok(Array.isArray((await res.json()).workspace));
 * assert.deepEqual(requested, ["/deno.json"]);
 * await server.shutdown();
 * ```
 */
export function serveRepository(requested: string[] = []): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    requested.push(path);
    if (path.split("/").some((part) => part === ".." || part.startsWith(".git"))) {
      return new Response(`refused: ${path}`, { status: 403 });
    }
    try {
      const body = await Deno.readFile(new URL(`.${path}`, REPO_ROOT));
      const ext = path.slice(path.lastIndexOf("."));
      return new Response(body, {
        headers: { "content-type": TYPES[ext] ?? "application/octet-stream" },
      });
    } catch {
      return new Response(`not found: ${path}`, { status: 404 });
    }
  });
}

/** An import map (`imports` and `scopes`), as `--import-map` reads it. */
export interface ImportMap {
  /** Top-level entries: every export of every package, by URL. */
  imports: Record<string, string>;
  /** Per package folder URL: the imports its `deno.json` declares. */
  scopes: Record<string, Record<string, string>>;
}

interface PackageConfig {
  name: string;
  exports: string | Record<string, string>;
  imports?: Record<string, string>;
}

/**
 * The import map for the workspace's packages served at `base` (a URL ending in `/`): see the
 * module doc.
 *
 * @example Usage
 * ```ts
 * import { repoImportMap } from "./_repo_server.ts";
 * import assert from "node:assert/strict";
 * const map = await repoImportMap("http://127.0.0.1:8000/");
 * assert.equal(map.imports["@rlvr/rewards/math"], "http://127.0.0.1:8000/packages/rewards/math/mod.ts");
 * assert.equal(map.scopes["http://127.0.0.1:8000/apps/train/"]!["yaml"], "npm:yaml@2.9.1");
 * ```
 */
export async function repoImportMap(base: string): Promise<ImportMap> {
  const members: string[] = JSON.parse(await Deno.readTextFile(join(ROOT_PATH, "deno.json")))
    .workspace;
  const packages = new Map<string, { dir: string; config: PackageConfig }>();
  for (const m of members) {
    const config: PackageConfig = JSON.parse(
      await Deno.readTextFile(join(ROOT_PATH, m, "deno.json")),
    );
    packages.set(config.name, { dir: `${base}${m.replace(/^\.\//, "")}/`, config });
  }
  const entries = (name: string): Record<string, string> => {
    const { dir, config } = packages.get(name)!;
    const exports = typeof config.exports === "string" ? { ".": config.exports } : config.exports;
    return Object.fromEntries(
      Object.entries(exports).map((
        [key, file],
      ) => [key === "." ? name : `${name}${key.slice(1)}`, new URL(file, dir).href]),
    );
  };
  const imports: Record<string, string> = {};
  const scopes: Record<string, Record<string, string>> = {};
  for (const [name, { dir, config }] of packages) {
    Object.assign(imports, entries(name));
    const scope: Record<string, string> = entries(name); // doc examples import their own name
    for (const [key, value] of Object.entries(config.imports ?? {})) {
      const sibling = /^jsr:(@rlvr\/[a-z]+)@/.exec(value)?.[1];
      if (sibling !== undefined) {
        assert.ok(packages.has(sibling), `${name} imports ${value}, not a workspace member`);
        Object.assign(scope, entries(sibling));
      } else {
        assert.match(value, /^npm:/, `${name}: ${key} is ${value}, neither npm: nor jsr:@rlvr/`);
        scope[key] = value;
        scope[`${key}/`] = `${value}/`;
      }
    }
    scopes[dir] = scope;
  }
  return { imports, scopes };
}

/**
 * This machine's npm cache folder (as `deno info --json` reports it, created if missing, links
 * resolved), where a child with an empty `DENO_DIR` can find the npm packages without network.
 *
 * @example Usage
 * ```ts
 * import { npmCacheDir } from "./_repo_server.ts";
 * import assert from "node:assert/strict";
 * assert.ok((await Deno.stat(await npmCacheDir())).isDirectory);
 * ```
 */
export async function npmCacheDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output();
  const dir: string = JSON.parse(new TextDecoder().decode(out.stdout)).npmCache;
  await Deno.mkdir(dir, { recursive: true });
  return Deno.realPathSync(dir);
}
