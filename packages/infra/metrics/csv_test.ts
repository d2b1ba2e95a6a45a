import assert from "node:assert/strict";
import { csvCell, CsvSchemaError, CsvSink, parseCsvLine } from "./csv.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function readCsv(text: string): string[][] {
  return text.split("\n").filter((l) => l !== "").map(parseCsvLine);
}

Deno.test("CsvSink: header from the first record, rows read back, quoting", () =>
  withDir(async (dir) => {
    const path = `${dir}/m.csv`;
    const sink = await CsvSink.open(path);
    await sink.write({ step: 0, loss: 0.5, note: 'a "quoted", text', done: false });
    await sink.write({ note: "line\nbreak", step: 1, loss: NaN });
    await sink.write({ step: 2 });
    await sink.close();
    const text = await Deno.readTextFile(path);
    assert.ok(text.startsWith("step,loss,note,done\n"));
    // "line\nbreak" is quoted, so split on lines only for rows without embedded newlines
    assert.deepEqual(readCsv(text.replace('"line\nbreak"', "LB")), [
      ["step", "loss", "note", "done"],
      ["0", "0.5", 'a "quoted", text', "false"],
      ["1", "NaN", "LB", ""],
      ["2", "", "", ""],
    ]);
    assert.ok(text.includes(',"line\nbreak",'));
  }));

Deno.test("CsvSink: a new key is a CsvSchemaError naming it, and the row is not written", () =>
  withDir(async (dir) => {
    const path = `${dir}/m.csv`;
    const sink = await CsvSink.open(path);
    await sink.write({ step: 0, loss: 1 });
    const err = await sink.write({ step: 1, loss: 2, kl: 0.1, "clip/frac": 0 }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof CsvSchemaError);
    assert.deepEqual(err.newKeys, ["kl", "clip/frac"]);
    assert.deepEqual(err.columns, ["step", "loss"]);
    assert.match(err.message, /keys "kl", "clip\/frac" that are not columns/);
    assert.match(err.message, /JsonlSink/);
    await sink.write({ step: 1, loss: 2 });
    await sink.close();
    assert.equal(await Deno.readTextFile(path), "step,loss\n0,1\n1,2\n");
  }));

Deno.test("CsvSink: fixed columns, resume with the file's header, mismatch refused", () =>
  withDir(async (dir) => {
    const path = `${dir}/m.csv`;
    const a = await CsvSink.open(path, { columns: ["step", "a,b"] });
    assert.equal(await Deno.readTextFile(path), 'step,"a,b"\n'); // header before any record
    await a.write({ "a,b": 3, step: 0 });
    await a.close();
    const b = await CsvSink.open(path); // resumed: the header comes from the file
    assert.deepEqual(b.columns, ["step", "a,b"]);
    await b.write({ step: 1 });
    await b.close();
    assert.equal(await Deno.readTextFile(path), 'step,"a,b"\n0,3\n1,\n');
    await assert.rejects(CsvSink.open(path, { columns: ["step"] }), /header is step,a,b/);
    await assert.rejects(CsvSink.open(`${dir}/x.csv`, { columns: ["a", "a"] }), /"a" twice/);
  }));

Deno.test("CsvSink: a torn last row is cut on reopen", () =>
  withDir(async (dir) => {
    const path = `${dir}/m.csv`;
    await Deno.writeTextFile(path, "step,loss\n0,1\n1,0.");
    const sink = await CsvSink.open(path);
    await sink.write({ step: 1, loss: 0.5 });
    await sink.close();
    assert.equal(await Deno.readTextFile(path), "step,loss\n0,1\n1,0.5\n");
  }));

Deno.test("csvCell / parseCsvLine round trip", () => {
  const values = ["plain", "", 'q"uote', "com,ma", " spaced ", "1e-7"];
  assert.deepEqual(parseCsvLine(values.map(csvCell).join(",")), values);
});
