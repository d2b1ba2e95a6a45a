/**
 * `deno run -A bench/import_cost.ts [--runs 3] [--specs @rlvr/rewards,@rlvr/rewards/math]
 * [--workspace @rlvr/rewards]`: what importing an entry point costs a fresh machine, each run in
 * a new, empty `DENO_DIR` (so everything is downloaded: needs network for the npm registry).
 *
 * Two settings:
 * - **by URL** (`--specs`): the repository served over loopback HTTP and imported through the
 *   import map built from the packages' `deno.json` files (`tests/_repo_server.ts`), from an
 *   empty folder with `--no-config`: what a user importing the package from JSR or a URL gets
 *   (its module graph and the npm packages the graph reaches);
 * - **in the workspace** (`--workspace`): `deno eval` in the repository root, as a contributor
 *   gets it (Deno then installs every npm package of `deno.lock`, whatever is imported).
 *
 * Prints, per run: the wall time of the `deno` process (start to exit, downloads included), the
 * time of the `import()` itself as the child measured it, and the bytes in `DENO_DIR` after it
 * (`du -sb`), then a Markdown table of the medians.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { repoImportMap, serveRepository } from "../tests/_repo_server.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** One measured import. */
export interface ImportRun {
  /** `url` or `workspace`. */
  setting: "url" | "workspace";
  /** The specifier imported. */
  spec: string;
  /** Wall milliseconds of the child process. */
  wallMs: number;
  /** Milliseconds of the `import()` inside the child. */
  importMs: number;
  /** Bytes in the child's `DENO_DIR` afterwards (`du -sb`). */
  denoDirBytes: number;
  /** The npm packages in the child's `DENO_DIR`. */
  npm: string[];
}

/** The child's program: times one dynamic import and prints it as JSON. */
function program(spec: string): string {
  return `const t = performance.now(); const m = await import(${JSON.stringify(spec)});
console.log(JSON.stringify({ importMs: performance.now() - t, exports: Object.keys(m).length }));`;
}

async function duBytes(dir: string): Promise<number> {
  const out = await new Deno.Command("du", { args: ["-sb", dir], stdout: "piped" }).output();
  return Number(new TextDecoder().decode(out.stdout).split("\t")[0]);
}

async function npmPackages(denoDir: string): Promise<string[]> {
  const out: string[] = [];
  const registry = join(denoDir, "npm", "registry.npmjs.org");
  try {
    for await (const e of Deno.readDir(registry)) {
      if (!e.isDirectory) continue;
      if (!e.name.startsWith("@")) out.push(e.name);
      else {for await (const s of Deno.readDir(join(registry, e.name))) {
          out.push(`${e.name}/${s.name}`);
        }}
    }
  } catch { /* nothing installed */ }
  return out.sort();
}

/** Runs `args` in `cwd` with a new empty DENO_DIR; returns the measurement. */
async function measure(
  setting: ImportRun["setting"],
  spec: string,
  cwd: string,
  args: string[],
): Promise<ImportRun> {
  const denoDir = await Deno.makeTempDir({ prefix: "rlvr-deno-dir-" });
  try {
    const t0 = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args,
      cwd,
      env: { DENO_DIR: denoDir, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const wallMs = performance.now() - t0;
    const text = new TextDecoder().decode(out.stdout).trim();
    if (out.code !== 0) {
      throw new Error(
        `import_cost: ${spec} (${setting}) exited ${out.code}: ${
          new TextDecoder().decode(out.stderr).slice(-2000)
        }`,
      );
    }
    const { importMs } = JSON.parse(text.split("\n").at(-1)!);
    return {
      setting,
      spec,
      wallMs,
      importMs,
      denoDirBytes: await duBytes(denoDir),
      npm: await npmPackages(denoDir),
    };
  } finally {
    await Deno.remove(denoDir, { recursive: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * The Markdown table of a bench: per setting and specifier, the runs' wall and import times and
 * `DENO_DIR` sizes (median, and every run), and the npm packages installed (their number when
 * more than 8).
 *
 * @example Usage
 * ```ts
 * import { markdownTable } from "./import_cost.ts";
 * import assert from "node:assert/strict";
 * const run = { setting: "url" as const, spec: "@rlvr/rewards/core", npm: [] };
 * const table = markdownTable([
 *   { ...run, wallMs: 300, importMs: 100, denoDirBytes: 2e6 },
 *   { ...run, wallMs: 500, importMs: 120, denoDirBytes: 2e6 },
 *   { ...run, wallMs: 400, importMs: 110, denoDirBytes: 2e6 },
 * ]);
 * assert.match(table, /\| by URL +\| `@rlvr\/rewards\/core` +\| 0\.40 s \(0\.30, 0\.50, 0\.40\) +\| 110 ms/);
 * ```
 */
export function markdownTable(runs: readonly ImportRun[]): string {
  const groups = new Map<string, ImportRun[]>();
  for (const r of runs) {
    const key = `${r.setting}\0${r.spec}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const rows = [...groups.values()].map((g) => {
    const wall = g.map((r) => r.wallMs / 1000);
    const imp = g.map((r) => r.importMs);
    const mb = g.map((r) => r.denoDirBytes / 1e6);
    return [
      g[0]!.setting === "url" ? "by URL" : "in the workspace",
      `\`${g[0]!.spec}\``,
      `${median(wall).toFixed(2)} s (${wall.map((x) => x.toFixed(2)).join(", ")})`,
      `${median(imp).toFixed(0)} ms (${imp.map((x) => x.toFixed(0)).join(", ")})`,
      `${median(mb).toFixed(1)} MB`,
      g[0]!.npm.length === 0
        ? "none"
        : g[0]!.npm.length > 8
        ? `${g[0]!.npm.length} packages`
        : g[0]!.npm.join(", "),
    ];
  });
  const head = [
    "setting",
    "import",
    "wall, median (runs)",
    "import(), median (runs)",
    "DENO_DIR",
    "npm packages",
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** What {@link benchImports} measures. */
export interface ImportBenchOptions {
  /** Runs per specifier and setting. */
  runs: number;
  /** Specifiers imported by URL. */
  specs: readonly string[];
  /** Specifiers imported in the workspace. */
  workspace: readonly string[];
  /** Called with each run as it ends. */
  onRun?: (run: ImportRun) => void;
}

/**
 * Measures every specifier `runs` times in each setting (see the module doc), workspace first.
 *
 * @example Usage
 * ```ts ignore
 * import { benchImports, markdownTable } from "./import_cost.ts";
 * const runs = await benchImports({ runs: 3, specs: ["@rlvr/rewards/math"], workspace: [] });
 * console.log(markdownTable(runs));
 * ```
 */
export async function benchImports(options: ImportBenchOptions): Promise<ImportRun[]> {
  const results: ImportRun[] = [];
  const add = (r: ImportRun) => {
    results.push(r);
    options.onRun?.(r);
  };
  for (const spec of options.workspace) {
    for (let i = 0; i < options.runs; i++) {
      add(await measure("workspace", spec, ROOT, ["eval", program(spec)]));
    }
  }
  if (options.specs.length === 0) return results;
  const server = serveRepository();
  const base = `http://127.0.0.1:${server.addr.port}/`;
  const tmp = await Deno.makeTempDir({ prefix: "rlvr-import-cost-" });
  try {
    await Deno.writeTextFile(
      join(tmp, "import_map.json"),
      JSON.stringify(await repoImportMap(base)),
    );
    for (const spec of options.specs) {
      await Deno.writeTextFile(join(tmp, "main.ts"), program(spec));
      for (let i = 0; i < options.runs; i++) {
        add(
          await measure("url", spec, tmp, [
            "run",
            "--no-config",
            "-A",
            `--import-map=${join(tmp, "import_map.json")}`,
            "main.ts",
          ]),
        );
      }
    }
  } finally {
    await server.shutdown();
    await Deno.remove(tmp, { recursive: true });
  }
  return results;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      runs: { type: "string", default: "3" },
      specs: {
        type: "string",
        default: "@rlvr/rewards,@rlvr/rewards/math,@rlvr/rewards/core,@rlvr/rewards/tasks",
      },
      workspace: { type: "string", default: "@rlvr/rewards" },
    },
  });
  const list = (s: string) => s.split(",").map((x) => x.trim()).filter((x) => x !== "");
  const results = await benchImports({
    runs: Number(values.runs),
    specs: list(values.specs),
    workspace: list(values.workspace),
    onRun: (r) =>
      console.log(
        `${r.setting} ${r.spec}: wall ${(r.wallMs / 1000).toFixed(2)} s, import() ${
          r.importMs.toFixed(0)
        } ms, DENO_DIR ${r.denoDirBytes} bytes, npm: ${r.npm.join(" ") || "none"}`,
      ),
  });
  console.log(`\n${markdownTable(results)}`);
}
