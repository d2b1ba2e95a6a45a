import assert from "node:assert/strict";
import { parquetWriteBuffer } from "hyparquet-writer";
import { EpochIterator } from "./iterator.ts";
import { loadExamples, openDataset } from "./load.ts";
import { trainTestSplit } from "./split.ts";

Deno.test("loadExamples → split → EpochIterator: the same examples from JSONL and Parquet", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-load-" });
  try {
    const rows = Array.from({ length: 12 }, (_, i) => ({ question: `q${i}`, answer: String(i) }));
    await Deno.writeTextFile(`${dir}/d.jsonl`, rows.map((r) => JSON.stringify(r)).join("\n"));
    await Deno.writeFile(
      `${dir}/d.parquet`,
      new Uint8Array(parquetWriteBuffer({
        columnData: [
          { name: "question", data: rows.map((r) => r.question), type: "STRING" },
          { name: "answer", data: rows.map((r) => r.answer), type: "STRING" },
        ],
      })),
    );
    const fields = { prompt: "question", answer: "answer" };
    const a = await loadExamples(`${dir}/d.jsonl`, { fields });
    const b = await loadExamples(`${dir}/d.parquet`, { fields });
    assert.deepEqual(
      a.examples.map((e) => [e.uid, e.prompt, e.answer]),
      b.examples.map((e) => [e.uid, e.prompt, e.answer]),
    );
    const { train } = trainTestSplit(a.examples, { testFraction: 0.25 });
    const it = new EpochIterator(train, { seed: 3 });
    assert.equal(it.take(train.length).length, train.length);
    assert.throws(() => openDataset(`${dir}/d.csv`), /use a \.jsonl, \.ndjson or \.parquet file/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
