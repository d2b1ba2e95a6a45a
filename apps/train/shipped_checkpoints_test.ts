import assert from "node:assert/strict";
import {
  type Checkpoint,
  loadCheckpointFromFiles,
  loadTokenizerFromFiles,
  loadVisionLanguageModelFromFiles,
  type Tokenizer,
} from "@rlvr/policy";
import { loadCheckpoint, loadTokenizer, loadVisionLanguageModel } from "@rlvr/policy/fs";
import type { Tensor } from "@rlvr/tensor";

// The tiny checkpoints shipped in checkpoints/ load the same from their folder (Deno) and from
// their files' bytes (what a browser loads): the same config and the same tensors, bit for bit,
// and a tokenizer that gives the same ids.

const DIR = new URL("./checkpoints/", import.meta.url);
const SHIPPED = [...Deno.readDirSync(DIR)].filter((e) => e.isDirectory).map((e) => e.name).sort();

async function readFolder(dir: URL): Promise<Record<string, Uint8Array>> {
  const files: Record<string, Uint8Array> = {};
  for (const e of Deno.readDirSync(dir)) {
    if (e.isFile) files[e.name] = await Deno.readFile(new URL(e.name, dir));
  }
  return files;
}

async function assertSameTensors(
  actual: ReadonlyMap<string, Tensor>,
  expected: ReadonlyMap<string, Tensor>,
  label: string,
): Promise<void> {
  assert.deepEqual([...actual.keys()], [...expected.keys()], label);
  for (const [name, t] of expected) {
    const a = await actual.get(name)!.data();
    const b = await t.data();
    assert.deepEqual(actual.get(name)!.shape, t.shape, `${label} ${name}`);
    assert.deepEqual(
      new Uint32Array(a.buffer, a.byteOffset, a.length),
      new Uint32Array(b.buffer, b.byteOffset, b.length),
      `${label} ${name}: bits`,
    );
  }
}

function assertSameTokenizer(actual: Tokenizer, expected: Tokenizer, label: string): void {
  assert.equal(actual.constructor, expected.constructor, label);
  assert.deepEqual(actual.specialTokenIds, expected.specialTokenIds, label);
  for (const text of ["12+3=15", "What is 7*8? <think>56</think>", "def f(x): return x"]) {
    assert.deepEqual(actual.encode(text), expected.encode(text), `${label}: ${text}`);
  }
}

Deno.test("shipped checkpoints: the tiny demo models are there", () => {
  for (const name of ["tiny", "tiny-agent", "tiny-code", "tiny-cot", "tiny-vl"]) {
    assert.ok(SHIPPED.includes(name), `checkpoints/${name} is missing (found ${SHIPPED})`);
  }
});

for (const name of SHIPPED) {
  Deno.test(`shipped checkpoints: ${name} loads the same from its folder and from its bytes`, async () => {
    const dir = new URL(`${name}/`, DIR);
    const path = decodeURIComponent(dir.pathname);
    const files = await readFolder(dir);
    const vl = JSON.parse(new TextDecoder().decode(files["config.json"])).model_type === "qwen2_vl";
    if (vl) {
      const fromDir = await loadVisionLanguageModel(path);
      const fromFiles = await loadVisionLanguageModelFromFiles(files, { name });
      assert.deepEqual(fromFiles.config, fromDir.config);
      await assertSameTensors(fromFiles.lm.params, fromDir.lm.params, `${name} decoder`);
      await assertSameTensors(fromFiles.tower.params, fromDir.tower.params, `${name} tower`);
      fromDir.dispose();
      fromFiles.dispose();
    } else {
      const fromDir: Checkpoint = await loadCheckpoint(path);
      const fromFiles = await loadCheckpointFromFiles(files, { name });
      assert.deepEqual(fromFiles.config, fromDir.config);
      assert.deepEqual(fromFiles.generationConfig, fromDir.generationConfig);
      await assertSameTensors(fromFiles.params, fromDir.params, name);
      for (const t of [...fromDir.params.values(), ...fromFiles.params.values()]) t.dispose();
    }
    assertSameTokenizer(await loadTokenizerFromFiles(files), await loadTokenizer(path), name);
  });
}
