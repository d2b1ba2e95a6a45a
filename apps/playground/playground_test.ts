import assert from "node:assert/strict";
import { join } from "node:path";
import { nodeImportsOf } from "./build.ts";
import { checkCatalog } from "./page/catalog.ts";
import { buildPlayground, main, MODEL_FILES, MODEL_MANIFEST } from "./playground.ts";

const TINY = join(import.meta.dirname!, "..", "train", "checkpoints", "tiny");

Deno.test("buildPlayground: the page, the tiny policy's files with their manifest, the recipes", async () => {
  const outDir = await Deno.makeTempDir({ prefix: "rlvr-playground-build-" });
  try {
    const built = await buildPlayground({ outDir });
    const listing = [];
    for await (const e of Deno.readDir(outDir)) listing.push(e.name);
    assert.deepEqual(listing.sort(), [
      "app.js",
      "index.html",
      "model",
      "recipes.json",
      "run_worker.js",
    ]);
    for (const bundle of ["app.js", "run_worker.js"]) {
      const code = await Deno.readTextFile(join(outDir, bundle));
      assert.deepEqual(nodeImportsOf(code), [], `${bundle} imports no node: module`);
      assert.doesNotMatch(code, /\bfrom\s*["']https?:/, `${bundle}: nothing from the network`);
    }
    // The page itself bundles no model code: the training worker does.
    assert.ok(built.bundleBytes < built.workerBytes / 10, `app.js ${built.bundleBytes} bytes`);
    assert.match(await Deno.readTextFile(join(outDir, "index.html")), /src="app\.js"/);
    for (const name of MODEL_FILES) {
      assert.deepEqual(
        await Deno.readFile(join(outDir, "model", name)),
        await Deno.readFile(join(TINY, name)),
        name,
      );
    }
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(join(outDir, "model", MODEL_MANIFEST))),
      { name: "builtin:tiny", files: MODEL_FILES },
    );
    const catalog = checkCatalog(JSON.parse(await Deno.readTextFile(join(outDir, "recipes.json"))));
    assert.deepEqual(catalog.recipes.map((r) => r.name), built.recipes);
    assert.equal(catalog.default, "grpo");
    assert.ok(built.excluded.some((e) => e.name === "grpo_async"));
  } finally {
    await Deno.remove(outDir, { recursive: true });
  }
});

Deno.test("deno task playground: builds, serves on the port and host given, prints the URL, stops on the signal", async () => {
  const outDir = await Deno.makeTempDir({ prefix: "rlvr-playground-main-" });
  const lines: string[] = [];
  const log = console.log;
  console.log = (...a: unknown[]) => lines.push(a.join(" "));
  const stop = new AbortController();
  try {
    const done = main(["--port", "0", "--host", "127.0.0.1", "--out", outDir], stop.signal);
    while (!lines.some((l) => l.startsWith("playground: "))) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const url = lines.find((l) => l.startsWith("playground: "))!.slice("playground: ".length);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const res = await fetch(url);
    assert.equal(res.headers.get("cross-origin-opener-policy"), "same-origin");
    assert.match(await res.text(), /<title>rlvr playground/);
    const model = await fetch(`${url}model/model.safetensors`);
    assert.equal(
      (await model.bytes()).length,
      (await Deno.stat(join(TINY, "model.safetensors"))).size,
    );
    stop.abort();
    assert.equal(await done, 0);
  } finally {
    console.log = log;
    await Deno.remove(outDir, { recursive: true });
  }
});

Deno.test("deno task playground: usage errors exit 2, --help 0, --build-only does not serve", async () => {
  const errors: string[] = [];
  const error = console.error;
  const log = console.log;
  console.error = (...a: unknown[]) => errors.push(a.join(" "));
  console.log = () => {};
  const outDir = await Deno.makeTempDir({ prefix: "rlvr-playground-main-" });
  try {
    assert.equal(await main(["--port", "65536"]), 2);
    assert.match(errors.at(-1)!, /--port must be an integer in \[0, 65535\], got 65536/);
    assert.equal(await main(["--nope"]), 2);
    assert.equal(await main(["--help"]), 0);
    assert.equal(await main(["--build-only", "--out", outDir]), 0);
    assert.ok((await Deno.stat(join(outDir, "app.js"))).isFile);
  } finally {
    console.error = error;
    console.log = log;
    await Deno.remove(outDir, { recursive: true });
  }
});
