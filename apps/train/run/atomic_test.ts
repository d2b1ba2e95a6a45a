import assert from "node:assert/strict";
import { join } from "node:path";
import { writeFileAtomic } from "./atomic.ts";

Deno.test("writeFileAtomic: replaces content, leaves no temporary file, writes bytes as given", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "config.yaml");
    await writeFileAtomic(path, "a: 1\n");
    await writeFileAtomic(path, new Uint8Array([0, 255, 10]));
    assert.deepEqual([...await Deno.readFile(path)], [0, 255, 10]);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["config.yaml"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeFileAtomic: concurrent writers never produce a mixed file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "f");
    // 1 MiB each, so a non-atomic write would interleave or truncate.
    const versions = ["a", "b", "c", "d"].map((ch) => ch.repeat(1 << 20));
    await Promise.all(versions.map((v) => writeFileAtomic(path, v)));
    const text = await Deno.readTextFile(path);
    assert.ok(versions.includes(text), "the file is exactly one of the versions");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["f"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeFileAtomic: a failed write leaves the old file and no temporary file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "f");
    await writeFileAtomic(path, "old");
    // Renaming a file over a non-empty directory fails after the temporary file was written.
    const blocker = join(dir, "blocker");
    await Deno.mkdir(join(blocker, "x"), { recursive: true });
    await assert.rejects(writeFileAtomic(blocker, "new"));
    assert.equal(await Deno.readTextFile(path), "old");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["blocker", "f"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
