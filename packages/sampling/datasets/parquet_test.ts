import assert from "node:assert/strict";
import { parquetMetadata } from "hyparquet";
import { parquetWriteBuffer } from "hyparquet-writer";
import { DatasetError } from "./errors.ts";
import { parquetColumns, readParquet } from "./parquet.ts";

// Fixtures are written with hyparquet-writer (npm) into a temp dir.

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-parquet-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function fixture(n: number, rowGroupSize: number): Uint8Array {
  return new Uint8Array(parquetWriteBuffer({
    columnData: [
      { name: "id", data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i)), type: "INT64" },
      {
        name: "problem",
        data: Array.from({ length: n }, (_, i) => `What is ${i}+${i}?`),
        type: "STRING",
      },
      {
        name: "reward_model",
        data: Array.from({ length: n }, (_, i) => ({ ground_truth: String(2 * i), style: "rule" })),
        type: "JSON",
      },
      { name: "level", data: Int32Array.from({ length: n }, (_, i) => i % 5), type: "INT32" },
    ],
    rowGroupSize,
  }));
}

Deno.test("readParquet: maps columns incl. nested JSON paths, in order, across row groups", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/train.parquet`;
    await Deno.writeFile(path, fixture(25, 10));
    const stream = readParquet(path, {
      fields: { prompt: "problem", answer: "reward_model.ground_truth", uid: "id" },
    });
    const rows = await Array.fromAsync(stream);
    assert.equal(rows.length, 25);
    assert.deepEqual(rows.map((r) => r.uid), Array.from({ length: 25 }, (_, i) => String(i)));
    assert.deepEqual([rows[13]!.prompt, rows[13]!.answer, rows[13]!.source], [
      "What is 13+13?",
      "26",
      `${path} row 13`,
    ]);
    assert.equal(rows[13]!.row.level, 3);
    assert.deepEqual(stream.stats, { rows: 25, skipped: 0, badRows: [] });
    assert.deepEqual(await parquetColumns(path), ["id", "problem", "reward_model", "level"]);
    // `columns` limits what lands in `row`; mapped columns are always read
    const [first] = await Array.fromAsync(
      readParquet(path, { fields: { prompt: "problem" }, columns: ["level"] }),
    );
    assert.deepEqual(Object.keys(first!.row).sort(), ["level", "problem"]);
  });
});

Deno.test("readParquet: a missing mapped column names the file, the column and the available columns", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/train.parquet`;
    await Deno.writeFile(path, fixture(3, 10));
    for (
      const [fields, column] of [
        [{ prompt: "question" }, "question"],
        [{ prompt: "problem", answer: "meta.answer" }, "meta"],
        [{ prompt: "problem", uid: "uuid" }, "uuid"],
      ] as const
    ) {
      const e = await Array.fromAsync(readParquet(path, { fields, onBadRow: "skip" })).catch((x) =>
        x as DatasetError
      );
      assert.ok(e instanceof DatasetError, String(e));
      assert.equal(e.file, path);
      assert.equal(e.column, column);
      assert.deepEqual(e.available, ["id", "problem", "reward_model", "level"]);
      assert.ok(e.message.includes(path), e.message);
      assert.ok(e.message.includes(`column "${column}"`), e.message);
      assert.ok(
        e.message.includes('available columns: "id", "problem", "reward_model", "level"'),
        e.message,
      );
    }
    await assert.rejects(
      () =>
        Array.fromAsync(readParquet(path, { fields: { prompt: "problem" }, columns: ["nope"] })),
      /column "nope" \(in options\.columns\) is not in the file/,
    );
  });
});

Deno.test('readParquet: null values are bad rows (error with row and column, or "skip" counts them)', async () => {
  await withDir(async (dir) => {
    const path = `${dir}/nulls.parquet`;
    await Deno.writeFile(
      path,
      new Uint8Array(parquetWriteBuffer({
        columnData: [
          { name: "prompt", data: ["a", null, "c", "d"], type: "STRING", nullable: true },
          { name: "answer", data: ["1", "2", null, "4"], type: "STRING", nullable: true },
        ],
      })),
    );
    const e = await Array.fromAsync(readParquet(path)).catch((x) => x as DatasetError);
    assert.ok(e instanceof DatasetError);
    assert.deepEqual([e.file, e.row, e.column], [path, 1, "prompt"]);
    assert.match(e.message, /row 1: field "prompt" \(prompt\) is null/);
    const stream = readParquet(path, { onBadRow: "skip" });
    assert.deepEqual((await Array.fromAsync(stream)).map((r) => r.prompt), ["a", "d"]);
    assert.equal(stream.stats.skipped, 2);
    assert.deepEqual(stream.stats.badRows.map((b) => b.row), [1, 2]);
  });
});

Deno.test("readParquet streams row groups: rows of early groups arrive before later groups are decoded", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/stream.parquet`;
    const bytes = fixture(30, 10); // three row groups
    // Corrupt every column chunk of the last row group: reading it must fail, so if the first
    // 20 rows can be read and the loop left, the reader never touched the third group.
    const meta = parquetMetadata(bytes.buffer as ArrayBuffer);
    assert.equal(meta.row_groups.length, 3);
    for (const col of meta.row_groups[2]!.columns) {
      const m = col.meta_data!;
      const start = Number(m.dictionary_page_offset ?? m.data_page_offset);
      bytes.fill(0xff, start, start + Number(m.total_compressed_size));
    }
    await Deno.writeFile(path, bytes);
    const seen: number[] = [];
    for await (const ex of readParquet(path, { fields: { prompt: "problem", uid: "id" } })) {
      seen.push(Number(ex.uid));
      if (seen.length === 20) break;
    }
    assert.deepEqual(seen, Array.from({ length: 20 }, (_, i) => i));
    await assert.rejects(() =>
      Array.fromAsync(readParquet(path, { fields: { prompt: "problem", uid: "id" } }))
    );
  });
});

Deno.test("readParquet: a file that is not Parquet is a DatasetError naming it", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/fake.parquet`;
    await Deno.writeTextFile(path, "this is not parquet");
    const e = await Array.fromAsync(readParquet(path)).catch((x) => x as DatasetError);
    assert.ok(e instanceof DatasetError);
    assert.match(e.message, /fake\.parquet: not a readable Parquet file/);
  });
});

Deno.test("readParquet bytesColumns: an unannotated byte-array column (images as Hugging Face Image structs) keeps its bytes; without it they are decoded as text", async () => {
  await withDir(async (dir) => {
    const blob = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00, 0xfe]); // not UTF-8
    const path = `${dir}/img.parquet`;
    await Deno.writeFile(
      path,
      new Uint8Array(parquetWriteBuffer({
        columnData: [
          { name: "prompt", data: ["a", "b"] },
          {
            name: "images",
            data: [[{ bytes: blob, path: null }], [{ bytes: null, path: "x.png" }]],
          },
        ],
        schema: [
          { name: "root", num_children: 2 },
          {
            name: "prompt",
            type: "BYTE_ARRAY",
            converted_type: "UTF8",
            repetition_type: "REQUIRED",
          },
          { name: "images", repetition_type: "OPTIONAL", num_children: 1, converted_type: "LIST" },
          { name: "list", repetition_type: "REPEATED", num_children: 1 },
          { name: "element", repetition_type: "OPTIONAL", num_children: 2 },
          { name: "bytes", type: "BYTE_ARRAY", repetition_type: "OPTIONAL" },
          { name: "path", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" },
        ],
      })),
    );
    const read = (bytesColumns?: string[]) =>
      Array.fromAsync(
        readParquet(path, {
          fields: { prompt: "prompt" },
          ...(bytesColumns ? { bytesColumns } : {}),
        }),
      );
    const kept = await read(["images", "not_a_column"]);
    assert.deepEqual(kept.map((e) => e.prompt), ["a", "b"]);
    assert.deepEqual(kept[0]!.row.images, [{ bytes: blob, path: null }]);
    assert.deepEqual(kept[1]!.row.images, [{ bytes: null, path: "x.png" }]);
    assert.deepEqual(Object.keys(kept[0]!.row).sort(), ["images", "prompt"]);
    const text = await read();
    assert.equal(typeof (text[0]!.row.images as { bytes: unknown }[])[0]!.bytes, "string");
    // With columns given, a bytes column is read only when asked for.
    const only = await Array.fromAsync(
      readParquet(path, {
        fields: { prompt: "prompt" },
        columns: ["prompt"],
        bytesColumns: ["images"],
      }),
    );
    assert.equal(only[0]!.row.images, undefined);
  });
});
