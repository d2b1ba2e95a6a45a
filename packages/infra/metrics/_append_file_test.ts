import assert from "node:assert/strict";
import { AppendFile } from "./_append_file.ts";

Deno.test("AppendFile: two writers on one file never interleave within a line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/shared.log`;
    const a = await AppendFile.open(path);
    const b = await AppendFile.open(path);
    const line = (who: string, i: number) => `${who}:${i}:${who.repeat(5000)}\n`;
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => [a.append(line("a", i)), b.append(line("b", i))]).flat(),
    );
    await a.close();
    await b.close();
    const lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "");
    assert.equal(lines.length, 80);
    for (const l of lines) {
      const [who, i, body] = l.split(":");
      assert.equal(body, who!.repeat(5000), `line ${who}:${i} was interleaved`);
    }
    // each writer's lines keep their call order
    for (const who of ["a", "b"]) {
      const order = lines.filter((l) => l.startsWith(`${who}:`)).map((l) =>
        Number(l.split(":")[1])
      );
      assert.deepEqual(order, Array.from({ length: 40 }, (_, i) => i));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("AppendFile: repairs a torn tail, a file without any newline becomes empty", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/f`;
    await Deno.writeTextFile(path, "half");
    const f = await AppendFile.open(path);
    assert.equal(f.repairedBytes, 4);
    assert.equal(f.existed, false);
    await f.close();
    assert.equal(await Deno.readTextFile(path), "");
    assert.equal(await AppendFile.firstLine(`${dir}/missing`), null);
    await assert.rejects(f.append("x\n"), /closed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
