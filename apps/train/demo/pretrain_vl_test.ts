import assert from "node:assert/strict";
import { join } from "node:path";
import { qwen2VLOptionsFromConfig } from "@rlvr/image";
import { loadVisionLanguageModel } from "@rlvr/policy/fs";
import { heldOutProblems } from "../loop/problems.ts";
import {
  pretrainVl,
  TINY_VL_CHECKPOINT_DIR,
  VL_PROCESSOR,
  VL_RECIPE_TASKS,
  VL_SFT_TASKS,
  vlModelConfig,
  vlStream,
  vlTask,
  type VlTaskSpec,
  vlTokenizer,
} from "./pretrain_vl.ts";

async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("pretrain:vl: the same seed writes the same bytes; another seed does not", async () => {
  const root = await Deno.makeTempDir();
  try {
    const opts = { steps: 2, batchSize: 4, evalProblems: 0, log: () => {} };
    await pretrainVl({ ...opts, out: join(root, "a"), seed: 1 });
    await pretrainVl({ ...opts, out: join(root, "b"), seed: 1 });
    await pretrainVl({ ...opts, out: join(root, "c"), seed: 2 });
    const file = (d: string) => join(root, d, "model.safetensors");
    assert.equal(await sha256(file("b")), await sha256(file("a")));
    assert.notEqual(await sha256(file("c")), await sha256(file("a")));
    for (
      const name of [
        "config.json",
        "generation_config.json",
        "preprocessor_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
      ]
    ) {
      assert.ok((await Deno.stat(join(root, "a", name))).isFile, name);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("pretrain:vl: the shipped checkpoint is the README's sha256, the warm start's architecture and its processor", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const m = /builtin:tiny-vl` sha256\s+`([0-9a-f]{64})`/.exec(readme);
  assert.ok(m, "apps/train/README.md states the sha256 of builtin:tiny-vl");
  assert.equal(await sha256(join(TINY_VL_CHECKPOINT_DIR, "model.safetensors")), m[1]);
  const model = await loadVisionLanguageModel(TINY_VL_CHECKPOINT_DIR);
  assert.deepEqual(model.config, vlModelConfig());
  model.dispose();
  const pre = JSON.parse(
    await Deno.readTextFile(join(TINY_VL_CHECKPOINT_DIR, "preprocessor_config.json")),
  );
  assert.deepEqual({ ...qwen2VLOptionsFromConfig(pre) }, { ...VL_PROCESSOR });
  const tokenizer = JSON.parse(
    await Deno.readTextFile(join(TINY_VL_CHECKPOINT_DIR, "tokenizer.json")),
  );
  assert.equal(Object.keys(tokenizer.model.vocab).length, vlTokenizer().vocabSize);
});

Deno.test("pretrain:vl: the SFT stream never shows a held-out problem", () => {
  const tasks = [...VL_SFT_TASKS, ...VL_RECIPE_TASKS].map(vlTask);
  const held = new Set(
    tasks.flatMap((t) => heldOutProblems(t, 64).map((r) => `${t.name}:${t.key(r)}`)),
  );
  const key = vlTask(VL_SFT_TASKS[0]!).key;
  const stream = vlStream(0);
  for (let i = 0; i < 1000; i++) {
    const { row } = stream.next().value!;
    assert.ok(!held.has(`${row.task}:${key(row)}`), row.id);
  }
  // The same filter on a task of 96 problems, where the stream's rows do hit held-out ones.
  const tiny: VlTaskSpec = {
    name: "count_shapes",
    label: "tiny",
    options: { size: 28, shapeSize: [10, 10], count: [1, 1], distractors: [0, 0], colors: 1 },
  };
  const task = vlTask(tiny);
  const tinyHeld = new Set(heldOutProblems(task, 8).map((r) => task.key(r)));
  const raw = Array.from({ length: 300 }, (_, i) => task.row(0, i));
  assert.ok(raw.some((r) => tinyHeld.has(task.key(r))));
  const filtered = vlStream(0, { sftTasks: [tiny], recipeTasks: [tiny], heldOutEvalProblems: 8 });
  for (let i = 0; i < 300; i++) {
    const { row } = filtered.next().value!;
    assert.ok(!tinyHeld.has(task.key(row)), row.id);
  }
});

Deno.test("pretrain:vl: the recipe's tasks are harder than the median of the SFT data", () => {
  const sft = vlTask(VL_SFT_TASKS[0]!);
  const d = Array.from({ length: 999 }, (_, i) => sft.row(0, i).difficulty).sort((a, b) => a - b);
  for (const spec of VL_RECIPE_TASKS) {
    const recipe = vlTask(spec);
    const mean = Array.from({ length: 200 }, (_, i) => recipe.row(0, i).difficulty)
      .reduce((a, b) => a + b) / 200;
    assert.ok(mean > d[499]!, `${spec.label}: mean difficulty ${mean} vs SFT median ${d[499]}`);
  }
});

Deno.test("pretrain:vl: an unknown --style is refused with the choices before any work", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./pretrain_vl.ts", import.meta.url).pathname, "--style", "tally"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 2);
  assert.match(
    new TextDecoder().decode(out.stderr),
    /--style must be rows or running, got "tally"/,
  );
});
