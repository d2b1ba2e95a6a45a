import assert from "node:assert/strict";
import { parseJsonl, reviveNonFinite } from "./jsonl.ts";
import { AppendFile, JsonlWriter, readJsonl, readLines, truncateJsonl } from "./jsonl_fs.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("parseJsonl: text cut at any point reads as the complete lines before the cut", () => {
  const records = [{ step: 1, s: "a\nb" }, {}, { step: 3, x: [1, { y: null }] }];
  const text = records.map((r) => JSON.stringify(r) + "\n").join("");
  for (let cut = 0; cut <= text.length; cut++) {
    const prefix = text.slice(0, cut);
    const complete = prefix.split("\n").length - 1;
    const { records: got, partial } = parseJsonl(prefix, "m.jsonl");
    assert.deepEqual(got, records.slice(0, complete), `cut at ${cut}`);
    assert.equal(partial, prefix.endsWith("\n") || cut === 0 ? null : prefix.split("\n").at(-1));
  }
});

Deno.test("JsonlWriter: torn 'error' refuses, 'repair' cuts; nonFinite 'string' round-trips through reviveNonFinite, 'null' is JSON.stringify", () =>
  withDir(async (dir) => {
    const path = `${dir}/m.jsonl`;
    await Deno.writeTextFile(path, '{"a":1}\n{"a":');
    await assert.rejects(
      JsonlWriter.open(path, { owner: "RunDir" }),
      /RunDir\.open: .* partial line "\{\\"a\\":"/,
    );
    const w = await JsonlWriter.open(path, { torn: "repair", nonFinite: "string", durable: true });
    assert.equal(w.repairedBytes, 5);
    await w.append({ loss: NaN, up: Infinity, down: -Infinity, ok: 1 });
    await w.close();
    const { records } = await readJsonl<Record<string, unknown>>(path);
    assert.deepEqual(records[1], { loss: "NaN", up: "Infinity", down: "-Infinity", ok: 1 });
    assert.deepEqual(reviveNonFinite(records[1]!), {
      loss: NaN,
      up: Infinity,
      down: -Infinity,
      ok: 1,
    });
    const plain = await JsonlWriter.open(path);
    assert.equal(plain.line({ loss: NaN }), '{"loss":null}\n');
    await plain.close();
  }));

Deno.test("AppendFile: writers on one file never interleave; each keeps its call order", () =>
  withDir(async (dir) => {
    const path = `${dir}/shared.jsonl`;
    const a = await JsonlWriter.open(path);
    const b = await AppendFile.open(path);
    const big = "x".repeat(70_000);
    await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) => [a.append({ w: "a", i, big }), b.append(`{"w":"b","i":${i}}\n`)],
      ).flat(),
    );
    await a.close();
    await b.close();
    const { records, partial } = await readJsonl<{ w: string; i: number }>(path);
    assert.equal(partial, null);
    for (const who of ["a", "b"]) {
      assert.deepEqual(
        records.filter((r) => r.w === who).map((r) => r.i),
        Array.from({ length: 20 }, (_, i) => i),
      );
    }
  }));

Deno.test("truncateJsonl and readLines: a missing file is nothing to truncate; readLines takes CRLF, a BOM and a last line without newline", () =>
  withDir(async (dir) => {
    assert.deepEqual(await truncateJsonl(`${dir}/none.jsonl`, () => true), {
      kept: 0,
      dropped: 0,
      partialRemoved: false,
    });
    await Deno.writeFile(
      `${dir}/d.jsonl`,
      new TextEncoder().encode('\ufeff{"a":1}\r\n\r\n{"a":2}'),
    );
    const lines: string[] = [];
    for await (const { line, text } of readLines(`${dir}/d.jsonl`)) lines.push(`${line}:${text}`);
    assert.deepEqual(lines, ['1:{"a":1}', "2:", '3:{"a":2}']);
    await assert.rejects(
      (async () => {
        for await (const _ of readLines(`${dir}/missing.jsonl`)) { /* nothing */ }
      })(),
      Deno.errors.NotFound,
    );
  }));
