import assert from "node:assert/strict";
import { join } from "node:path";
import { bundleForBrowser, main, nodeImportsOf } from "./build.ts";

const ROOT = join(import.meta.dirname!, "..", "..");

Deno.test("bundleForBrowser: bundles a workspace import into one ES module and copies static files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-build-" });
  try {
    // Bundled from the workspace root, whose deno.json resolves @rlvr/tensor.
    const entry = join(dir, "entry.ts");
    await Deno.writeTextFile(
      entry,
      'import { assertClose } from "@rlvr/tensor/testing";\n' +
        "assertClose([1, 2], [1, 2]);\n" +
        'document.title = "bundled";\n',
    );
    const page = join(dir, "page.html");
    await Deno.writeTextFile(page, "<!doctype html>");
    const [built] = await bundleForBrowser({
      entries: [entry],
      outDir: join(dir, "out"),
      copy: [page],
      cwd: ROOT,
      allowNodeImports: true, // whatever @rlvr/tensor/testing pulls in today
    });
    assert.equal(built!.output, join(dir, "out", "entry.js"));
    assert.ok(built!.bytes > 0);
    const code = await Deno.readTextFile(built!.output);
    assert.match(code, /document\.title = "bundled"/);
    assert.match(code, /function assertClose/, "the workspace import is inlined");
    assert.equal(await Deno.readTextFile(join(dir, "out", "page.html")), "<!doctype html>");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bundleForBrowser: a type or syntax error names the entry and shows the bundler's stderr", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-build-" });
  try {
    const bad = join(dir, "broken.ts");
    await Deno.writeTextFile(bad, "export const x = ;\n");
    await assert.rejects(
      () => bundleForBrowser({ entries: [bad], outDir: join(dir, "out") }),
      (e: Error) => {
        assert.match(e.message, /bundleForBrowser: ".*broken\.ts" did not bundle/);
        assert.match(e.message, /exited with code [1-9]/);
        assert.match(e.message, /Unexpected|Expected|error/i, "the bundler's message is shown");
        return true;
      },
    );
    await assert.rejects(
      () => bundleForBrowser({ entries: [join(dir, "missing.ts")], outDir: dir }),
      /entry ".*missing\.ts" cannot be read .*pass the path of a \.ts or \.js module/,
    );
    await assert.rejects(
      () => bundleForBrowser({ entries: [], outDir: dir }),
      /no entries given/,
    );
    await Deno.writeTextFile(join(dir, "a.ts"), "");
    await Deno.mkdir(join(dir, "sub"));
    await Deno.writeTextFile(join(dir, "sub", "a.ts"), "");
    await assert.rejects(
      () =>
        bundleForBrowser({ entries: [join(dir, "a.ts"), join(dir, "sub", "a.ts")], outDir: dir }),
      /would both be written to a\.js/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bundleForBrowser: a bundle importing node: modules is refused, naming them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-build-" });
  try {
    const entry = join(dir, "uses_node.ts");
    await Deno.writeTextFile(
      entry,
      'import { join } from "node:path";\nconsole.log(join("a", "b"));\n',
    );
    await assert.rejects(
      () => bundleForBrowser({ entries: [entry], outDir: join(dir, "out") }),
      /the bundle of ".*uses_node\.ts" imports node:path, which a browser cannot load/,
    );
    const [built] = await bundleForBrowser({
      entries: [entry],
      outDir: join(dir, "out"),
      allowNodeImports: true,
    });
    assert.deepEqual(nodeImportsOf(await Deno.readTextFile(built!.output)), ["node:path"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("nodeImportsOf: static imports and re-exports only, not strings or comments", () => {
  const code = [
    'import { a } from "node:fs";',
    "import 'node:process';",
    'export { b } from "node:path";',
    'import {\n  c,\n} from "node:url";',
    ' * import assert from "node:assert/strict";',
    'const worker = `const { w } = require("node:worker_threads");`;',
    'import { d } from "./local.js";',
  ].join("\n");
  assert.deepEqual(nodeImportsOf(code), ["node:fs", "node:path", "node:process", "node:url"]);
});

Deno.test("build CLI: usage errors exit 2, build errors exit 1", async () => {
  const errors: string[] = [];
  const saved = console.error;
  console.error = (...a: unknown[]) => void errors.push(a.join(" "));
  try {
    assert.equal(await main(["x.ts"]), 2);
    assert.match(errors.at(-1)!, /--out is required/);
    assert.equal(await main(["--out", "/tmp"]), 2);
    assert.match(errors.at(-1)!, /no entries/);
    assert.equal(await main(["--bogus"]), 2);
    assert.equal(await main(["--out", "/tmp", "/surely/missing.ts"]), 1);
    assert.match(errors.at(-1)!, /cannot be read/);
  } finally {
    console.error = saved;
  }
});
