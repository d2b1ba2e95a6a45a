import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import { dirSource, filesSource, joinPath, urlSource } from "./file_source.ts";

Deno.test("joinPath: node:path's join for a folder and a relative name", () => {
  const segment = fc.constantFrom("a", "bb", ".", "..", "", "c.json");
  const path = fc.array(segment, { maxLength: 5 }).map((s) => s.join("/"));
  fc.assert(
    fc.property(fc.boolean(), path, path, (absolute, dir, name) => {
      const d = (absolute ? "/" : "") + dir;
      fc.pre(d !== "" && name !== "" && !name.startsWith("/"));
      assert.equal(joinPath(d, name), join(d, name));
    }),
    { numRuns: 2000 },
  );
  assert.equal(joinPath("https://x.test/a/b", "c.json"), "https://x.test/a/b/c.json");
  assert.equal(joinPath("https://x.test/a/", "../c.json"), "https://x.test/c.json");
});

Deno.test("filesSource, urlSource, dirSource: the same bytes, null for a missing file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const bytes = new Uint8Array([1, 2, 3]);
    await Deno.writeFile(join(dir, "w.bin"), bytes);
    await Deno.writeTextFile(join(dir, "c.json"), "{}");
    await Deno.mkdir(join(dir, "sub"));
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
      try {
        return new Response(await Deno.readFile(join(dir, new URL(req.url).pathname)));
      } catch {
        return new Response("", { status: 404 });
      }
    });
    try {
      const sources = [
        dirSource(dir),
        filesSource({ "w.bin": bytes.buffer, "c.json": "{}" }, "mem"),
        filesSource(new Map([["w.bin", bytes], ["c.json", new TextEncoder().encode("{}")]]), "m"),
        urlSource(`http://127.0.0.1:${server.addr.port}`),
      ];
      for (const src of sources) {
        assert.deepEqual(await src.read("w.bin"), bytes, src.where);
        assert.equal(new TextDecoder().decode((await src.read("c.json"))!), "{}", src.where);
        assert.equal(await src.read("none.json"), null, src.where);
      }
      assert.deepEqual(await sources[0]!.list(), ["c.json", "w.bin"]);
      assert.deepEqual(await sources[1]!.list(), ["c.json", "w.bin"]);
      assert.equal(await sources[3]!.list(), null);
      assert.equal(sources[1]!.path("c.json"), "mem/c.json");
      assert.equal(sources[3]!.path("c.json"), `http://127.0.0.1:${server.addr.port}/c.json`);
      // A folder where a file is expected is a failure, not a missing file.
      await assert.rejects(sources[0]!.read("sub"));
    } finally {
      await server.shutdown();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  await assert.rejects(
    filesSource({ "a.json": 1 as unknown as string }, "m").read("a.json"),
    /files\["a.json"\] must be a Uint8Array, an ArrayBuffer or a string, got number/,
  );
  assert.throws(() => urlSource("relative/"), /the base URL "relative\/" is not an absolute URL/);
});
