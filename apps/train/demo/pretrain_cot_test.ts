import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPolicy, TINY_COT_CHECKPOINT_DIR } from "../loop/policy.ts";
import { heldOutProblems } from "../loop/problems.ts";
import { COT_SFT_OPTIONS, cotTasks } from "./cot.ts";
import { cotModelConfig, cotRecipeTask, cotStream, pretrainCot } from "./pretrain_cot.ts";

async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("pretrain:cot: the same seed writes the same bytes; another seed does not", async () => {
  const root = await Deno.makeTempDir();
  try {
    const opts = { steps: 2, batchSize: 4, evalProblems: 0, log: () => {} };
    await pretrainCot({ ...opts, out: join(root, "a"), seed: 1 });
    await pretrainCot({ ...opts, out: join(root, "b"), seed: 1 });
    await pretrainCot({ ...opts, out: join(root, "c"), seed: 2 });
    const file = (d: string) => join(root, d, "model.safetensors");
    assert.equal(await sha256(file("b")), await sha256(file("a")));
    assert.notEqual(await sha256(file("c")), await sha256(file("a")));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("pretrain:cot: the shipped checkpoint is the README's sha256 and the warm start's architecture", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const m = /builtin:tiny-cot` sha256\s+`([0-9a-f]{64})`/.exec(readme);
  assert.ok(m, "apps/train/README.md states the sha256 of builtin:tiny-cot");
  assert.equal(await sha256(join(TINY_COT_CHECKPOINT_DIR, "model.safetensors")), m[1]);
  const { model } = await loadPolicy("builtin:tiny-cot");
  assert.deepEqual(model.config, cotModelConfig());
  model.dispose();
});

Deno.test("pretrain:cot: the SFT stream never shows a held-out problem", () => {
  const tasks = [...cotTasks(COT_SFT_OPTIONS), cotRecipeTask()];
  const held = new Set(
    tasks.flatMap((t) => heldOutProblems(t, 64).map((r) => `${t.name}:${t.key(r)}`)),
  );
  const byName = new Map(tasks.map((t) => [t.name, t]));
  const stream = cotStream(0);
  const names = new Set<string>();
  for (let i = 0; i < 3000; i++) {
    const { row } = stream.next().value!;
    names.add(row.task);
    assert.ok(!held.has(`${row.task}:${byName.get(row.task)!.key(row)}`), row.id);
  }
  assert.deepEqual([...names].sort(), ["arithmetic", "countdown", "knights_knaves"]);
});

Deno.test("pretrain:cot: the recipe's task is harder than the median of the SFT mix's addition", () => {
  const sft = cotTasks(COT_SFT_OPTIONS)[0]!;
  const d = Array.from({ length: 999 }, (_, i) => sft.row(0, i).difficulty).sort((a, b) => a - b);
  const recipe = cotRecipeTask();
  for (let i = 0; i < 20; i++) assert.ok(recipe.row(0, i).difficulty > d[499]!);
});
