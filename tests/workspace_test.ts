/**
 * Cross-package checks of the workspace layout and of the dependency rule: packages depend
 * downward only (advantage and rewards need no tensor library; nothing imports apps/).
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
  "@rlvr/tensor": [],
  "@rlvr/advantage": [],
  "@rlvr/rewards": [],
  "@rlvr/sampling": [],
  "@rlvr/objectives": ["@rlvr/tensor", "@rlvr/advantage"],
  "@rlvr/policy": ["@rlvr/tensor", "@rlvr/sampling"],
  "@rlvr/infra": [
    "@rlvr/tensor",
    "@rlvr/policy",
    "@rlvr/rewards",
    "@rlvr/advantage",
    "@rlvr/objectives",
    "@rlvr/sampling",
  ],
  "@rlvr/train": [
    "@rlvr/tensor",
    "@rlvr/policy",
    "@rlvr/rewards",
    "@rlvr/advantage",
    "@rlvr/objectives",
    "@rlvr/sampling",
    "@rlvr/infra",
  ],
};

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
      "./apps/train",
      ...["advantage", "infra", "objectives", "policy", "rewards", "sampling", "tensor"].map((p) =>
        `./packages/${p}`
      ),
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
        if (spec.startsWith("../") && !join(file, "..", spec).startsWith(dir)) {
          problems.push(
            `${file}: reaches outside its package with ${spec}; import the package by name`,
          );
        }
      }
    }
  }
  assert.deepEqual(problems, []);
});
