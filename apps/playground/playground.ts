/**
 * `deno task playground`: builds the training page (`page/`) and serves it. GRPO, and the other
 * recipes a tab can run, train the shipped tiny policy live in the browser tab.
 *
 * What the build writes to the output directory (default `apps/playground/dist/`, gitignored):
 * - `app.js`, the page's entry, and `run_worker.js`, its training worker, bundled for the
 *   browser (`build.ts`: `deno bundle --platform browser`, no `node:` imports), and `index.html`;
 * - `model/`: the files of `builtin:tiny` (`apps/train/checkpoints/tiny/`) and `files.json`,
 *   their list, which the page fetches and loads with `policyFromFiles`;
 * - `recipes.json`: the shipped recipes resolved by the config loader in Deno (`catalog_build.ts`),
 *   those a tab can run with the group sizes their schema accepts, and the others with the reason.
 *
 * Everything the page needs is in that directory (no CDN), so once loaded it works offline.
 * The server is `static_server.ts` (cross-origin isolated, 127.0.0.1 by default: a secure
 * context, so the browser exposes WebGPU).
 *
 * CLI: `deno task playground [--port 8000] [--host 127.0.0.1] [--out <dir>] [--build-only]`;
 * prints `playground: http://127.0.0.1:8000/` and serves until Ctrl-C.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { bundleForBrowser } from "./build.ts";
import { buildCatalog } from "./page/catalog_build.ts";
import { serveDirectory } from "./static_server.ts";

const HERE = import.meta.dirname!;
const ROOT = join(HERE, "..", "..");

/** The default output directory (gitignored). */
export const DEFAULT_OUT_DIR: string = join(HERE, "dist");

/** The files of `builtin:tiny` the page serves as `model/`. */
export const MODEL_FILES: readonly string[] = Object.freeze([
  "config.json",
  "generation_config.json",
  "model.safetensors",
  "tokenizer.json",
  "tokenizer_config.json",
]);

/**
 * The manifest in `model/` that lists {@link MODEL_FILES}, so the page fetches exactly those
 * (a folder by URL has no listing, and each optional file it probed would be a 404).
 */
export const MODEL_MANIFEST = "files.json";

/** The shipped tiny policy's folder. */
const TINY_DIR = join(ROOT, "apps", "train", "checkpoints", "tiny");

/** Options of {@link buildPlayground}. */
export interface PlaygroundBuildOptions {
  /** Output directory (default {@link DEFAULT_OUT_DIR}); created when missing. */
  outDir?: string;
  /** Minify the bundle (default false: readable stack traces). */
  minify?: boolean;
  /** The recipes to consider (default: every shipped one). */
  recipes?: readonly string[];
}

/** What {@link buildPlayground} built. */
export interface PlaygroundBuild {
  /** The output directory (absolute). */
  outDir: string;
  /** The page bundle's size in bytes. */
  bundleBytes: number;
  /** The training worker bundle's size in bytes. */
  workerBytes: number;
  /** The recipes a tab can run. */
  recipes: string[];
  /** The shipped recipes left out, with the reason. */
  excluded: { name: string; reason: string }[];
  /** Wall time of the build, in milliseconds. */
  ms: number;
}

/**
 * Builds the page into `outDir` (see the module doc).
 *
 * @param options Output directory, minification, recipes.
 * @returns What was built.
 *
 * @example Usage
 * ```ts
 * import { buildPlayground } from "./playground.ts";
 * import assert from "node:assert/strict";
 * const outDir = await Deno.makeTempDir();
 * const built = await buildPlayground({ outDir, recipes: ["grpo", "grpo_async"] });
 * assert.deepEqual(built.recipes, ["grpo"]);
 * assert.ok((await Deno.stat(`${outDir}/model/model.safetensors`)).isFile);
 * assert.ok((await Deno.stat(`${outDir}/app.js`)).size > 0);
 * await Deno.remove(outDir, { recursive: true });
 * ```
 */
export async function buildPlayground(
  options: PlaygroundBuildOptions = {},
): Promise<PlaygroundBuild> {
  const t0 = performance.now();
  const outDir = resolve(options.outDir ?? DEFAULT_OUT_DIR);
  const [bundle, worker] = await bundleForBrowser({
    entries: [join(HERE, "page", "app.ts"), join(HERE, "page", "run_worker.ts")],
    copy: [join(HERE, "page", "index.html")],
    outDir,
    cwd: ROOT,
    minify: options.minify ?? false,
  });
  const modelDir = join(outDir, "model");
  await Deno.mkdir(modelDir, { recursive: true });
  for (const name of MODEL_FILES) {
    try {
      await Deno.copyFile(join(TINY_DIR, name), join(modelDir, name));
    } catch (e) {
      throw new Error(
        `buildPlayground: cannot copy ${join(TINY_DIR, name)} (builtin:tiny): ${
          (e as Error).message
        }; restore apps/train/checkpoints/tiny/ (deno task pretrain writes it)`,
      );
    }
  }
  await Deno.writeTextFile(
    join(modelDir, MODEL_MANIFEST),
    JSON.stringify({ name: "builtin:tiny", files: MODEL_FILES }) + "\n",
  );
  const catalog = await buildCatalog(options.recipes ? { names: options.recipes } : {});
  await Deno.writeTextFile(join(outDir, "recipes.json"), JSON.stringify(catalog) + "\n");
  return {
    outDir,
    bundleBytes: bundle!.bytes,
    workerBytes: worker!.bytes,
    recipes: catalog.recipes.map((r) => r.name),
    excluded: catalog.excluded,
    ms: performance.now() - t0,
  };
}

/**
 * The command line (see the module doc): builds, then serves until SIGINT unless
 * `--build-only`. Returns the exit code.
 *
 * @param args The arguments (without the program name).
 * @param signal Stops serving when aborted (default: SIGINT does).
 * @returns 0 on success, 1 on a build or serve error, 2 on a usage error.
 *
 * @example Usage
 * ```ts
 * import { main } from "./playground.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await main(["--port", "x"]), 2); // usage error: not a port
 * ```
 */
export async function main(args: readonly string[], signal?: AbortSignal): Promise<number> {
  const usage = "usage: deno task playground [--port 8000] [--host 127.0.0.1] [--out <dir>] " +
    "[--minify] [--build-only]";
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: {
        port: { type: "string" },
        host: { type: "string" },
        out: { type: "string" },
        minify: { type: "boolean" },
        "build-only": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    console.error(`playground: ${(e as Error).message}\n${usage}`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) {
    console.log(usage);
    return 0;
  }
  const port = Number(v.port ?? "8000");
  if (!(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    console.error(`playground: --port must be an integer in [0, 65535], got ${v.port}\n${usage}`);
    return 2;
  }
  let built: PlaygroundBuild;
  try {
    built = await buildPlayground({ outDir: v.out ?? DEFAULT_OUT_DIR, minify: v.minify ?? false });
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
  console.log(
    `built ${built.outDir} in ${(built.ms / 1000).toFixed(1)} s (app.js ${
      (built.bundleBytes / 2 ** 20).toFixed(1)
    } MiB, run_worker.js ${(built.workerBytes / 2 ** 20).toFixed(1)} MiB); recipes: ${
      built.recipes.join(", ")
    }`,
  );
  for (const e of built.excluded) console.log(`  not in the page: ${e.name}: ${e.reason}`);
  if (v["build-only"]) return 0;
  let server;
  try {
    server = await serveDirectory(built.outDir, { port, hostname: v.host ?? "127.0.0.1" });
  } catch (e) {
    console.error(
      `playground: cannot serve on ${v.host ?? "127.0.0.1"}:${port}: ${
        (e as Error).message
      }; pass another --port (0: any free one)`,
    );
    return 1;
  }
  console.log(`playground: ${server.url}`);
  const stop = signal ?? sigint();
  await new Promise<void>((done) => {
    if (stop.aborted) done();
    stop.addEventListener("abort", () => done(), { once: true });
  });
  await server.close();
  return 0;
}

/** A signal aborted by the first SIGINT (Ctrl-C). */
function sigint(): AbortSignal {
  const controller = new AbortController();
  const onSigint = () => {
    Deno.removeSignalListener("SIGINT", onSigint);
    controller.abort();
  };
  Deno.addSignalListener("SIGINT", onSigint);
  return controller.signal;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
