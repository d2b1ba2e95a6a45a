/**
 * Cross-package checks of the workspace layout and of the dependency rule: packages depend
 * downward only (`common` and `image` at the bottom import no workspace package; advantage and
 * rewards need no tensor library; nothing imports apps/).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const config = JSON.parse(await Deno.readTextFile(join(root, "deno.json")));
const members: string[] = config.workspace;

/** Which workspace packages each package may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  "@rlvr/common": [],
  "@rlvr/image": [],
  "@rlvr/tensor": ["@rlvr/common"],
  "@rlvr/advantage": ["@rlvr/common"],
  "@rlvr/rewards": ["@rlvr/common", "@rlvr/image"],
  "@rlvr/sampling": ["@rlvr/common"],
  "@rlvr/objectives": ["@rlvr/common", "@rlvr/tensor", "@rlvr/advantage"],
  "@rlvr/policy": ["@rlvr/common", "@rlvr/image", "@rlvr/tensor", "@rlvr/sampling"],
  "@rlvr/infra": [
    "@rlvr/common",
    "@rlvr/image",
    "@rlvr/tensor",
    "@rlvr/policy",
    "@rlvr/rewards",
    "@rlvr/advantage",
    "@rlvr/objectives",
    "@rlvr/sampling",
  ],
  "@rlvr/train": [
    "@rlvr/common",
    "@rlvr/image",
    "@rlvr/tensor",
    "@rlvr/policy",
    "@rlvr/rewards",
    "@rlvr/advantage",
    "@rlvr/objectives",
    "@rlvr/sampling",
    "@rlvr/infra",
  ],
  // The browser app: what the training app may import, and the training loop it runs in a tab.
  "@rlvr/playground": ["@rlvr/train"],
};
ALLOWED["@rlvr/playground"]!.push(...ALLOWED["@rlvr/train"]!);

async function* tsFiles(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory && e.name !== "node_modules") yield* tsFiles(p);
    else if (e.isFile && e.name.endsWith(".ts")) yield p;
  }
}

Deno.test("workspace: every member has deno.json (name, version, exports, license), mod.ts and README.md", async () => {
  assert.deepEqual(
    [...members].sort(),
    [
      "./apps/playground",
      "./apps/train",
      ...[
        "advantage",
        "common",
        "image",
        "infra",
        "objectives",
        "policy",
        "rewards",
        "sampling",
        "tensor",
      ]
        .map((p) => `./packages/${p}`),
    ].sort(),
  );
  for (const m of members) {
    const dir = join(root, m);
    const pkg = JSON.parse(await Deno.readTextFile(join(dir, "deno.json")));
    assert.match(pkg.name, /^@rlvr\/[a-z]+$/, `${m}: name`);
    assert.match(pkg.version, /^\d+\.\d+\.\d+$/, `${m}: version`);
    assert.ok(pkg.exports, `${m}: exports`);
    assert.equal(pkg.license, "MIT", `${m}: license`);
    assert.ok(ALLOWED[pkg.name], `${m}: ${pkg.name} is not in the dependency table of this test`);
    const mod = await Deno.readTextFile(join(dir, "mod.ts"));
    assert.match(mod, /@module/, `${m}: mod.ts needs a @module doc`);
    assert.ok((await Deno.stat(join(dir, "README.md"))).isFile, `${m}: README.md`);
  }
});

Deno.test("workspace: packages import only the packages below them and never apps/", async () => {
  const problems: string[] = [];
  for (const m of members) {
    const dir = join(root, m);
    const name: string = JSON.parse(await Deno.readTextFile(join(dir, "deno.json"))).name;
    for await (const file of tsFiles(dir)) {
      const src = await Deno.readTextFile(file);
      for (const match of src.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
        const spec = match[1]!;
        const pkg = spec.match(/^@rlvr\/[a-z]+/)?.[0];
        // Doc examples import their own package by name; that is allowed.
        if (pkg && pkg !== name && !ALLOWED[name]!.includes(pkg)) {
          problems.push(`${file}: imports ${spec}`);
        }
        if (!m.startsWith("./apps") && /(^|\/)apps\//.test(spec)) {
          problems.push(`${file}: imports ${spec} from apps/`);
        }
        // The one exception: the playground runs apps/train's platform-neutral loop modules
        // (session, sinks, policy from bytes) in a browser, and @rlvr/train's entry is Deno's.
        const intoTrain = m === "./apps/playground" &&
          join(file, "..", spec).startsWith(join(root, "apps/train") + "/");
        if (spec.startsWith("../") && !join(file, "..", spec).startsWith(dir) && !intoTrain) {
          problems.push(
            `${file}: reaches outside its package with ${spec}; import the package by name`,
          );
        }
      }
    }
  }
  assert.deepEqual(problems, []);
});

/** The bare specifiers a source file imports, doc examples included (`node:` and URLs aside). */
function bareImports(src: string): string[] {
  const out: string[] = [];
  const re =
    /(?:^|[\s;*])(?:import|export)\b[^"'`;]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|^\s*(?:\*\s*)?import\s+["']([^"']+)["']/gm;
  for (const match of src.matchAll(re)) {
    const spec = match[1] ?? match[2] ?? match[3]!;
    if (/^(node:|\.|\/|npm:|jsr:|https?:|data:|file:)/.test(spec)) continue;
    // Code a test runs in a child process, importing a module by its computed URL.
    if (spec.startsWith("${")) continue;
    out.push(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!);
  }
  return out;
}

Deno.test("workspace: each member's deno.json declares what it imports and publishes no tests", async () => {
  const problems: string[] = [];
  for (const m of members) {
    const dir = join(root, m);
    const pkg = JSON.parse(await Deno.readTextFile(join(dir, "deno.json")));
    const imports: Record<string, string> = pkg.imports ?? {};
    for (const [name, target] of Object.entries(imports)) {
      // Pinned as in the root deno.json (npm), or a sibling at this workspace's version (JSR).
      const sibling = /^jsr:(@rlvr\/[a-z]+)@\^(\d+\.\d+\.\d+)$/.exec(target);
      if (sibling === null && config.imports[name] !== target) {
        problems.push(
          `${m}/deno.json: ${name} is ${target}, the root pins ${config.imports[name]}`,
        );
      }
      if (sibling !== null && (sibling[1] !== name || sibling[2] !== pkg.version)) {
        problems.push(`${m}/deno.json: ${name} is ${target}; use jsr:${name}@^${pkg.version}`);
      }
    }
    for await (const file of tsFiles(dir)) {
      for (const name of bareImports(await Deno.readTextFile(file))) {
        if (name !== pkg.name && !(name in imports)) {
          problems.push(`${file}: imports ${name}, which ${m}/deno.json does not declare`);
        }
      }
    }
    // An app that is never published (`"publish": false`) has nothing to exclude.
    const exclude: string[] = pkg.publish?.exclude ?? [];
    for (
      const pattern of pkg.publish === false ? [] : ["**/*_test.ts", "**/_test_*.ts", "bench/"]
    ) {
      if (!exclude.includes(pattern)) {
        problems.push(`${m}/deno.json: publish.exclude lacks ${pattern}`);
      }
    }
  }
  assert.deepEqual([...new Set(problems)], []);
});
