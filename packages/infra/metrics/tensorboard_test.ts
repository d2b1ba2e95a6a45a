import assert from "node:assert/strict";
import { basename } from "node:path";
import { eventStep } from "./_event_proto.ts";
import {
  isEventFileName,
  TensorBoardSink,
  TensorBoardWriter,
  truncateEventFiles,
} from "./tensorboard.ts";
import { readTfRecords } from "./tfrecord.ts";

async function steps(path: string): Promise<number[]> {
  const { records, tornBytes } = readTfRecords(await Deno.readFile(path), path);
  assert.equal(tornBytes, 0);
  return records.map((r, i) => eventStep(r, `record ${i}`));
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("TensorBoardWriter: TensorFlow's file name; file_version first; events in call order, each on disk when its call resolves", () =>
  withDir(async (dir) => {
    const tb = await TensorBoardWriter.open(`${dir}/tb`, { host: "my host/1", now: () => 1.7e12 });
    assert.equal(basename(tb.path), `events.out.tfevents.1700000000.my_host_1.${Deno.pid}.0`);
    assert.ok(isEventFileName(basename(tb.path)));
    await tb.scalars(1, { a: 1 });
    assert.deepEqual(await steps(tb.path), [0, 1]); // visible before close
    // Un-awaited calls do not interleave.
    await Promise.all([5, 2, 9].map((s) => tb.scalars(s, { a: s, b: -s })));
    await tb.text(9, "samples", "x".repeat(70_000));
    await tb.close();
    assert.deepEqual(await steps(tb.path), [0, 1, 5, 2, 9, 9]);
    await assert.rejects(tb.text(1, "t", "x"), /is closed/);
  }));

Deno.test("TensorBoardWriter: bad steps, tags and values are refused with the value and nothing is written", () =>
  withDir(async (dir) => {
    const tb = await TensorBoardWriter.open(dir);
    await assert.rejects(
      tb.scalars(1.5, { a: 1 }),
      /step must be a non-negative integer .*got 1\.5/,
    );
    await assert.rejects(tb.scalars(1, { "": 1 }), /a tag must be a non-empty string, got ""/);
    await assert.rejects(
      tb.scalars(1, { a: "1" as unknown as number }),
      /"a" is string; values must be numbers/,
    );
    await tb.scalars(2, {}); // no values: no event
    await tb.close();
    assert.deepEqual(await steps(tb.path), [0]);
  }));

Deno.test("TensorBoardWriter: startStep writes a SessionLog START at that step after file_version", () =>
  withDir(async (dir) => {
    const tb = await TensorBoardWriter.open(dir, { startStep: 7 });
    await tb.scalars(7, { a: 1 });
    await tb.close();
    const { records } = readTfRecords(await Deno.readFile(tb.path));
    assert.deepEqual(records.map((r) => eventStep(r, "e")), [0, 7, 7]);
    // Event { step: 7, session_log (field 7): { status (field 1): START = 1 } } after the wall
    // time (key and 8 bytes).
    assert.deepEqual([...records[1]!.subarray(9)], [0x10, 7, 0x3a, 2, 0x08, 1]);
  }));

Deno.test("TensorBoardSink: numbers become scalars at the record's step, others are skipped; prefix and step key", () =>
  withDir(async (dir) => {
    const sink = await TensorBoardSink.open(dir, { prefix: "eval/", stepKey: "iteration" });
    await sink.write({ iteration: 3, score: 0.5, note: "x", ok: true, none: null });
    await assert.rejects(
      sink.write({ score: 1 }),
      /"iteration" must be a non-negative integer, got undefined/,
    );
    await assert.rejects(
      sink.write({ iteration: 1, nested: {} as unknown as number }),
      /metric "nested" is object/,
    );
    await sink.close();
    const { records } = readTfRecords(await Deno.readFile(sink.writer.path));
    assert.equal(records.length, 2);
    const text = new TextDecoder().decode(records[1]!);
    assert.ok(text.includes("eval/score"));
    assert.ok(!text.includes("note") && !text.includes("none") && !text.includes("iteration"));
  }));

Deno.test("truncateEventFiles: drops later steps and a torn tail, keeps file_version, leaves untouched files alone", () =>
  withDir(async (dir) => {
    const a = await TensorBoardWriter.open(dir, { now: () => 1e12 });
    for (const s of [1, 2, 3, 4]) await a.scalars(s, { x: s });
    await a.close();
    const b = await TensorBoardWriter.open(dir, { now: () => 2e12 });
    await b.scalars(2, { x: 2 });
    await b.close();
    await Deno.writeFile(b.path, new Uint8Array([5, 0, 0]), { append: true }); // torn write

    assert.deepEqual(await truncateEventFiles(dir, 2), { files: 2, dropped: 2, tornBytes: 3 });
    assert.deepEqual(await steps(a.path), [0, 1, 2]);
    assert.deepEqual(await steps(b.path), [0, 2]);
    assert.deepEqual(await truncateEventFiles(dir, 2), { files: 0, dropped: 0, tornBytes: 0 });
    assert.deepEqual(await truncateEventFiles(dir, -1), { files: 2, dropped: 3, tornBytes: 0 });
    assert.deepEqual(await steps(a.path), [0]);
    const names: string[] = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.equal(names.length, 2, "no temporary file is left");
    assert.deepEqual(await truncateEventFiles(`${dir}/missing`, 0), {
      files: 0,
      dropped: 0,
      tornBytes: 0,
    });
  }));
