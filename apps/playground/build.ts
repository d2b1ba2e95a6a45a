/**
 * Builds the playground's pages: each browser entry (TypeScript, importing workspace packages and
 * npm modules) becomes one self-contained ES module, next to the static files the pages need.
 *
 * Design decisions:
 * - **A real bundler**: `deno bundle --platform browser --format esm` (esbuild underneath, with
 *   Deno's resolution of the workspace, `jsr:` and `npm:` specifiers), run as a subprocess of the
 *   same `deno` executable that runs this module, once per entry, so an error names its entry and
 *   carries the bundler's own stderr.
 * - **No `node:` imports in the output**: a browser cannot load `import ... from "node:path"`,
 *   and the page would fail at its first line with an error that names neither the entry nor the
 *   module that pulled it in. The build reads each bundle's top-level imports and fails naming
 *   them unless `allowNodeImports` is set.
 * - Output names: `<outDir>/<entry basename>.js`; static files (`copy`) keep their base names.
 *
 * CLI: `deno run -A apps/playground/build.ts --out <dir> [--copy <file>]... [--minify]
 * <entry.ts>...`
 *
 * @module
 */

import { basename, extname, join, resolve } from "node:path";
import { parseArgs } from "node:util";

/** Options of {@link bundleForBrowser}. */
export interface BuildOptions {
  /** Browser entry modules (TypeScript or JavaScript). */
  entries: readonly string[];
  /** Output directory (created when missing). */
  outDir: string;
  /** Static files copied into `outDir` under their base names (HTML pages, data). */
  copy?: readonly string[];
  /** Minify the bundles (default false: readable stack traces). */
  minify?: boolean;
  /** Emit an inline source map (default false). */
  sourcemap?: boolean;
  /** Accept bundles that import `node:` modules (default false: such a bundle is an error). */
  allowNodeImports?: boolean;
  /** The deno executable (default `Deno.execPath()`: the one running this code). */
  deno?: string;
  /**
   * Working directory of the bundler (default: the current one). Its `deno.json` (found upwards
   * from there) resolves bare specifiers, so run from inside the workspace (or pass its root) to
   * import workspace packages such as `@rlvr/tensor`.
   */
  cwd?: string;
}

/** One bundle written by {@link bundleForBrowser}. */
export interface BuiltBundle {
  /** The entry, as given. */
  entry: string;
  /** The bundle's path. */
  output: string;
  /** Its size in bytes. */
  bytes: number;
  /** Wall time of the bundler run, in milliseconds. */
  ms: number;
}

/**
 * The `node:` modules a bundle imports at top level (`import ... from "node:x"`,
 * `import "node:x"`, `export ... from "node:x"`), which a browser cannot load. Text inside string
 * literals (such as a worker's source) is not an import and is not reported.
 *
 * @param code The bundle's JavaScript.
 * @returns The module names (`node:path`, ...), sorted, without duplicates.
 *
 * @example Usage
 * ```ts
 * import { nodeImportsOf } from "./build.ts";
 * import assert from "node:assert/strict";
 * const code = 'import { join } from "node:path";\nconst src = `require("node:fs")`;\n';
 * assert.deepEqual(nodeImportsOf(code), ["node:path"]);
 * ```
 */
export function nodeImportsOf(code: string): string[] {
  const found = new Set<string>();
  const re = /^\s*(?:import|export)\b[^;'"`]*?(?:\bfrom\s*)?["'](node:[^"']+)["']/gm;
  for (const m of code.matchAll(re)) found.add(m[1]!);
  return [...found].sort();
}

/**
 * Bundles each entry for the browser into `outDir` (see the module doc) and copies the static
 * files. Fails on the first entry that does not bundle, naming it, with the bundler's stderr.
 *
 * @param options Entries, output directory, static files and bundler flags.
 * @returns One record per entry, in order.
 *
 * @example Usage
 * ```ts
 * import { bundleForBrowser } from "./build.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/hello.ts`, "const n: number = 6 * 7;\nconsole.log(n);\n");
 * const [built] = await bundleForBrowser({ entries: [`${dir}/hello.ts`], outDir: `${dir}/out` });
 * assert.match(await Deno.readTextFile(built!.output), /6 \* 7/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function bundleForBrowser(options: BuildOptions): Promise<BuiltBundle[]> {
  if (options.entries.length === 0) {
    throw new Error("bundleForBrowser: no entries given; pass at least one browser entry module");
  }
  const deno = options.deno ?? Deno.execPath();
  const outDir = resolve(options.outDir);
  await Deno.mkdir(outDir, { recursive: true });
  const names = new Map<string, string>();
  const built: BuiltBundle[] = [];
  for (const entry of options.entries) {
    const name = `${basename(entry, extname(entry))}.js`;
    const clash = names.get(name);
    if (clash !== undefined) {
      throw new Error(
        `bundleForBrowser: entries ${JSON.stringify(clash)} and ${JSON.stringify(entry)} ` +
          `would both be written to ${name}; rename one of them or build them into separate ` +
          `directories`,
      );
    }
    names.set(name, entry);
    try {
      if (!(await Deno.stat(resolve(entry))).isFile) throw new Error("not a file");
    } catch (e) {
      throw new Error(
        `bundleForBrowser: entry ${JSON.stringify(entry)} cannot be read (${
          (e as Error).message
        }); pass the path of a .ts or .js module`,
      );
    }
    const output = join(outDir, name);
    const entryPath = resolve(entry);
    const args = [
      "bundle",
      "--quiet",
      "--platform",
      "browser",
      "--format",
      "esm",
      ...(options.minify ? ["--minify"] : []),
      ...(options.sourcemap ? ["--sourcemap", "inline"] : []),
      "--output",
      output,
      entryPath,
    ];
    const t0 = performance.now();
    let out: Deno.CommandOutput;
    try {
      out = await new Deno.Command(deno, {
        args,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    } catch (e) {
      throw new Error(
        `bundleForBrowser: could not run ${JSON.stringify(deno)} to bundle ${
          JSON.stringify(entry)
        }: ${(e as Error).message}; pass options.deno (the path of a deno >= 2.4 executable)`,
      );
    }
    const ms = performance.now() - t0;
    const stderr = new TextDecoder().decode(out.stderr).trim();
    if (!out.success) {
      throw new Error(
        `bundleForBrowser: ${JSON.stringify(entry)} did not bundle (deno ${args.join(" ")} ` +
          `exited with code ${out.code}):\n${stderr || "(no output on stderr)"}`,
      );
    }
    const code = await Deno.readTextFile(output).catch((e: Error) => {
      throw new Error(
        `bundleForBrowser: ${JSON.stringify(entry)}: the bundler succeeded but ${output} ` +
          `cannot be read (${e.message}):\n${stderr}`,
      );
    });
    const nodeImports = nodeImportsOf(code);
    if (nodeImports.length > 0 && !options.allowNodeImports) {
      throw new Error(
        `bundleForBrowser: the bundle of ${JSON.stringify(entry)} imports ${
          nodeImports.join(", ")
        }, which a browser cannot load; import only browser-safe modules from the entry ` +
          `(see which package pulls ${nodeImports[0]} in with \`deno info ${entry}\`), ` +
          `or pass allowNodeImports to build anyway`,
      );
    }
    built.push({ entry, output, bytes: new TextEncoder().encode(code).length, ms });
  }
  for (const file of options.copy ?? []) {
    const target = join(outDir, basename(file));
    try {
      await Deno.copyFile(file, target);
    } catch (e) {
      throw new Error(
        `bundleForBrowser: cannot copy ${JSON.stringify(file)} to ${target}: ${
          (e as Error).message
        }`,
      );
    }
  }
  return built;
}

/**
 * The command line: `build.ts --out <dir> [--copy <file>]... [--minify] [--sourcemap]
 * [--allow-node-imports] <entry>...`; prints one line per bundle. Returns the exit code.
 *
 * @param args The arguments (without the program name).
 * @returns 0 on success, 1 on a build error, 2 on a usage error.
 *
 * @example Usage
 * ```ts
 * import { main } from "./build.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await main([]), 2); // usage error: no --out and no entries
 * ```
 */
export async function main(args: readonly string[]): Promise<number> {
  const usage = "usage: deno run -A apps/playground/build.ts --out <dir> [--copy <file>]... " +
    "[--minify] [--sourcemap] [--allow-node-imports] <entry.ts>...";
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        out: { type: "string" },
        copy: { type: "string", multiple: true },
        minify: { type: "boolean" },
        sourcemap: { type: "boolean" },
        "allow-node-imports": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    console.error(`build: ${(e as Error).message}\n${usage}`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) {
    console.log(usage);
    return 0;
  }
  if (v.out === undefined || parsed.positionals.length === 0) {
    console.error(`build: ${v.out === undefined ? "--out is required" : "no entries"}\n${usage}`);
    return 2;
  }
  try {
    const built = await bundleForBrowser({
      entries: parsed.positionals,
      outDir: v.out,
      copy: v.copy ?? [],
      minify: v.minify ?? false,
      sourcemap: v.sourcemap ?? false,
      allowNodeImports: v["allow-node-imports"] ?? false,
    });
    for (const b of built) {
      console.log(`${b.output}  ${(b.bytes / 1024).toFixed(1)} KiB  (${b.ms.toFixed(0)} ms)`);
    }
    return 0;
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
