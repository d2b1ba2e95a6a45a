import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("./lora_memory.ts", import.meta.url));

Deno.test("lora_memory: one child per base format; a bf16 base holds half the live bytes of an f32 one; JSON written", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script, "--model", "tiny", "--rank", "2", "--out", dir],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.match(text, /^bf16 /m);
    assert.match(text, /^f32 /m);
    const [file] = [...Deno.readDirSync(dir)].map((e) => e.name);
    const json = JSON.parse(await Deno.readTextFile(`${dir}/${file}`));
    const [half, full] = json.results;
    assert.equal(half.storage, "bf16");
    assert.equal(full.storage, "f32");
    assert.equal(half.parameters.base, full.parameters.base);
    assert.equal(half.liveBytesAfterInit * 2, full.liveBytesAfterInit);
    for (const r of json.results) {
      assert.ok(r.parameters.adapters > 0 && r.seconds.generate > 0, JSON.stringify(r));
    }
    const bad = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script, "--storage", "f16", "--out", dir],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(bad.code, 2);
    assert.match(new TextDecoder().decode(bad.stderr), /--storage f16: use bf16 and\/or f32/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
