import assert from "node:assert/strict";
import { JsonlSink, parseJsonlMetrics } from "./jsonl.ts";

Deno.test("JsonlSink: read back; non-finite numbers survive; appends on reopen", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/metrics.jsonl`;
    const a = await JsonlSink.open(path);
    const records = [
      { step: 0, loss: 1.25, phase: "warmup", ok: true, kl: null },
      { step: 1, loss: NaN, grad: Infinity, neg: -Infinity },
    ];
    for (const r of records) await a.write(r);
    await a.close();
    const b = await JsonlSink.open(path); // a resumed run
    await b.write({ step: 2 });
    await b.close();
    const text = await Deno.readTextFile(path);
    assert.equal(text.split("\n").length, 4); // 3 lines + the final newline
    assert.deepEqual(parseJsonlMetrics(text), [...records, { step: 2 }]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("JsonlSink: concurrent writes give whole lines in call order", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/m.jsonl`;
    const sink = await JsonlSink.open(path);
    const long = "x".repeat(100_000); // bigger than a pipe buffer: still one line
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => sink.write({ i, pad: i % 10 === 0 ? long : "" })),
    );
    await sink.close();
    const got = parseJsonlMetrics(await Deno.readTextFile(path));
    assert.deepEqual(got.map((r) => r.i), Array.from({ length: 50 }, (_, i) => i));
    assert.equal(got[10]!.pad, long);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("JsonlSink: a torn last line from a crash is cut on open", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/m.jsonl`;
    await Deno.writeTextFile(path, '{"step":0}\n{"step":1}\n{"step":2,"lo');
    const sink = await JsonlSink.open(path);
    assert.equal(sink.repairedBytes, '{"step":2,"lo'.length);
    await sink.write({ step: 2 });
    await sink.close();
    assert.deepEqual(parseJsonlMetrics(await Deno.readTextFile(path)), [
      { step: 0 },
      { step: 1 },
      { step: 2 },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("JsonlSink: invalid records are refused before anything is written", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/m.jsonl`;
    const sink = await JsonlSink.open(path);
    await assert.rejects(
      sink.write({ nested: { a: 1 } as unknown as number }),
      /metric "nested" is object/,
    );
    await assert.rejects(sink.write({ "": 1 }), /empty string/);
    await sink.close();
    assert.equal(await Deno.readTextFile(path), "");
    assert.throws(() => parseJsonlMetrics("{oops\n"), /line 1 is not JSON/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
