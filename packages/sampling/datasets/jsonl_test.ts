import assert from "node:assert/strict";
import { DatasetError } from "./errors.ts";
import { readJsonl, readLines } from "./jsonl.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-jsonl-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("readJsonl: maps fields incl. nested paths; blank lines, CRLF and a BOM are fine", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/train.jsonl`;
    await Deno.writeTextFile(
      path,
      '\uFEFF{"q": "1+1?", "meta": {"answer": "2"}, "id": "a"}\r\n\n   \n{"q": "2+2?", "meta": {"answer": 4}, "id": 7}\n',
    );
    const rows = await Array.fromAsync(
      readJsonl(path, { fields: { prompt: "q", answer: "meta.answer", uid: "id" } }),
    );
    assert.deepEqual(rows.map((r) => [r.uid, r.prompt, r.answer, r.index, r.source]), [
      ["a", "1+1?", "2", 0, `${path}:1`],
      ["7", "2+2?", 4, 1, `${path}:4`],
    ]);
    // default fields: prompt / answer; the uid is a hash of the prompt
    await Deno.writeTextFile(
      path,
      '{"prompt": "x", "answer": "y"}\n{"prompt": "x", "answer": "z"}',
    );
    const [a, b] = await Array.fromAsync(readJsonl(path));
    assert.equal(a!.uid, b!.uid);
    assert.match(a!.uid, /^h[0-9a-z]+$/);
  });
});

Deno.test("readJsonl: a malformed line is an error with the file, the line number and a snippet", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/bad.jsonl`;
    const longBad = `{"prompt": "ok", "answer": ${"x".repeat(200)}`;
    await Deno.writeTextFile(
      path,
      `{"prompt": "a", "answer": 1}\n\n${longBad}\n{"prompt": "c", "answer": 3}\n`,
    );
    await assert.rejects(() => Array.fromAsync(readJsonl(path)), DatasetError);
    const e = await Array.fromAsync(readJsonl(path)).catch((x) => x as DatasetError);
    assert.ok(e instanceof DatasetError);
    assert.equal(e.file, path);
    assert.equal(e.line, 3);
    assert.equal(e.row, 1);
    assert.equal(e.snippet, `${longBad.slice(0, 60)}...`);
    assert.ok(e.message.startsWith(`${path}:3: malformed JSON`), e.message);
    assert.ok(e.message.includes(JSON.stringify(`${longBad.slice(0, 60)}...`)), e.message);
  });
});

Deno.test("readJsonl: a missing mapped field names the file, line, field and available keys", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/missing.jsonl`;
    await Deno.writeTextFile(
      path,
      '{"question": "a", "meta": {"answer": 1}}\n{"question": "b", "meta": {}}\n',
    );
    const e = await Array.fromAsync(
      readJsonl(path, { fields: { prompt: "question", answer: "meta.answer" } }),
    ).catch((x) => x as DatasetError);
    assert.ok(e instanceof DatasetError);
    assert.deepEqual([e.line, e.column, e.available], [2, "meta.answer", []]);
    assert.match(
      e.message,
      new RegExp(`${path.replaceAll("/", "\\/")}:2: field "meta\\.answer" is missing`),
    );
    const e2 = await Array.fromAsync(readJsonl(path, { fields: { prompt: "problem" } })).catch((
      x,
    ) => x as DatasetError);
    assert.ok(e2 instanceof DatasetError);
    assert.deepEqual([e2.line, e2.column, e2.available], [1, "problem", ["question", "meta"]]);
    assert.match(e2.message, /available: "question", "meta"/);
    // a JSON value that is not an object
    await Deno.writeTextFile(path, "[1, 2]\n");
    await assert.rejects(
      () => Array.fromAsync(readJsonl(path)),
      /:1: a row must be a JSON object, got \[1,2\]/,
    );
  });
});

Deno.test('readJsonl: onBadRow "skip" skips and counts bad rows; stats reset per pass', async () => {
  await withDir(async (dir) => {
    const path = `${dir}/mixed.jsonl`;
    const lines = [
      '{"prompt": "a", "answer": 1}',
      "{not json",
      '{"prompt": "b"}', // no answer
      '{"prompt": null, "answer": 2}', // null prompt
      '{"prompt": "c", "answer": 3}',
      "42",
    ];
    await Deno.writeTextFile(path, lines.join("\n"));
    const stream = readJsonl(path, { onBadRow: "skip" });
    assert.deepEqual((await Array.fromAsync(stream)).map((r) => r.prompt), ["a", "c"]);
    assert.equal(stream.stats.rows, 2);
    assert.equal(stream.stats.skipped, 4);
    assert.deepEqual(stream.stats.badRows.map((b) => b.line), [2, 3, 4, 6]);
    assert.match(stream.stats.badRows[0]!.reason, /malformed JSON/);
    assert.match(stream.stats.badRows[1]!.reason, /"answer" is missing/);
    assert.match(stream.stats.badRows[2]!.reason, /"prompt" \(prompt\) is null/);
    await Array.fromAsync(stream);
    assert.equal(stream.stats.skipped, 4); // a second pass counts afresh
    assert.throws(
      () => readJsonl(path, { onBadRow: "ignore" as "skip" }),
      /onBadRow must be one of "error", "skip"/,
    );
  });
});

Deno.test("readJsonl streams: a large file read lazily, breaking early closes the file", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/big.jsonl`;
    const n = 20000;
    const body = Array.from({ length: n }, (_, i) => JSON.stringify({ prompt: `p${i}`, answer: i }))
      .join("\n");
    await Deno.writeTextFile(path, body + "\n{broken");
    // lazily parsed: the broken last line is never reached when we stop early
    let count = 0;
    for await (const ex of readJsonl(path)) {
      assert.equal(ex.answer, count);
      if (++count === 5) break; // the resource sanitizer fails the test if the file stays open
    }
    const stream = readJsonl(path, { onBadRow: "skip" });
    let total = 0;
    for await (const _ of stream) total++;
    assert.deepEqual([total, stream.stats.skipped, stream.stats.badRows[0]!.line], [n, 1, n + 1]);
    const lines = await Array.fromAsync(readLines(path));
    assert.equal(lines.length, n + 1);
    assert.deepEqual(lines.at(-1), { line: n + 1, text: "{broken" });
  });
});

Deno.test("readJsonl: a missing file rejects with Deno's NotFound", async () => {
  await assert.rejects(
    () => Array.fromAsync(readJsonl("/nonexistent/x.jsonl")),
    Deno.errors.NotFound,
  );
});
