import fc from "fast-check";
import assert from "node:assert/strict";
import { join } from "node:path";
import { JsonlWriter, parseJsonl, readJsonl, truncateJsonl } from "./jsonl.ts";

const record = fc.record({
  step: fc.nat(),
  value: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null)),
  text: fc.string(),
});

Deno.test("parseJsonl: a file cut at any byte reads as the complete lines before the cut", () => {
  fc.assert(
    fc.property(fc.array(record, { maxLength: 8 }), fc.nat(), (records, cutAt) => {
      const lines = records.map((r) => JSON.stringify(r) + "\n");
      const text = lines.join("");
      const cut = text.length === 0 ? 0 : cutAt % (text.length + 1);
      const prefix = text.slice(0, cut);
      const { records: got, partial } = parseJsonl(prefix, "m.jsonl");
      let complete = 0;
      let offset = 0;
      while (complete < lines.length && offset + lines[complete]!.length <= cut) {
        offset += lines[complete]!.length;
        complete++;
      }
      assert.deepEqual(got, records.slice(0, complete).map((r) => JSON.parse(JSON.stringify(r))));
      assert.equal(partial, cut === offset ? null : prefix.slice(offset));
    }),
    { numRuns: 300 },
  );
});

Deno.test("parseJsonl: a partial last line is ignored even when it parses; blank lines are skipped", () => {
  const r = parseJsonl('{"step":1}\n\n{"step":2}', "m.jsonl");
  assert.deepEqual(r.records, [{ step: 1 }]);
  assert.equal(r.partial, '{"step":2}');
});

Deno.test("JsonlWriter: each append is one line, visible at once; un-awaited appends do not interleave", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "m.jsonl");
    const w = await JsonlWriter.open(path, { durable: true });
    const big = "x".repeat(200_000);
    const pending = Array.from({ length: 20 }, (_, step) => w.append({ step, big }));
    await Promise.all(pending);
    const r = await readJsonl<{ step: number; big: string }>(path);
    assert.deepEqual(r.records.map((x) => x.step), Array.from({ length: 20 }, (_, i) => i));
    assert.ok(r.records.every((x) => x.big === big));
    await w.close();
    await w.close(); // idempotent
    await assert.rejects(w.append({ step: 21 }), /is closed/);
    // reopening appends after the existing lines
    const w2 = await JsonlWriter.open(path);
    await w2.append({ step: 20 });
    await assert.rejects(w2.append(undefined), /must be JSON-serialisable/);
    await w2.close();
    assert.equal((await readJsonl(path)).records.length, 21);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("JsonlWriter.open refuses a file with a partial last line; truncateJsonl repairs it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "m.jsonl");
    await Deno.writeTextFile(path, '{"step":1}\n{"step":2}\n{"step":3, "rew');
    await assert.rejects(
      JsonlWriter.open(path),
      /ends with a partial line "\{\\"step\\":3, \\"rew"/,
    );
    assert.deepEqual(await truncateJsonl<{ step: number }>(path, () => true), {
      kept: 2,
      dropped: 0,
      partialRemoved: true,
    });
    const w = await JsonlWriter.open(path);
    await w.append({ step: 3 });
    await w.close();
    assert.equal(await Deno.readTextFile(path), '{"step":1}\n{"step":2}\n{"step":3}\n');
    assert.deepEqual(await truncateJsonl(join(dir, "none.jsonl"), () => true), {
      kept: 0,
      dropped: 0,
      partialRemoved: false,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readJsonl: corruption before the last line is an error naming the file and line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "eval.jsonl");
    await Deno.writeTextFile(path, '{"step":1}\n{"step":\n{"step":3}\n');
    await assert.rejects(readJsonl(path), /eval\.jsonl line 2 is not JSON/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
