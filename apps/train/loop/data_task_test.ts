import assert from "node:assert/strict";
import { parquetWriteBuffer } from "hyparquet-writer";
import { createImage, encodePng, loadImage } from "@rlvr/image";
import type { DataSection } from "../config/types.ts";
import { additionRows, withTempDir, writeJsonl, writeParquet } from "./_test_data.ts";
import { type DataRow, dataTask, fitDataTask, isDataTask, referenceAnswers } from "./data_task.ts";
import { loadPolicy } from "./policy.ts";
import { promptIds } from "./prompt.ts";
import { HELD_OUT_SEED, heldOutProblems, TrainStream } from "./problems.ts";

// 40 rows: enough for both splits to be non-empty at testFraction 0.25 (about 10 test rows) and
// for the training stream to wrap into a second and third epoch within a few hundred draws.
const N = 40;

function section(path: string, extra: Partial<DataSection> = {}): DataSection {
  return {
    path,
    format: path.endsWith(".parquet") ? "parquet" : "jsonl",
    promptField: "question",
    answerField: "answer",
    template: "{{meta.expr}}=",
    testFraction: 0.25,
    ...extra,
  };
}

const quiet = { log: () => {} };

Deno.test("dataTask: JSONL and Parquet give the same rows; GSM8K answers reduced; a nested template field", async () => {
  await withTempDir(async (dir) => {
    const rows = additionRows(N);
    const a = await dataTask(section(await writeJsonl(`${dir}/add.jsonl`, rows)), quiet);
    const b = await dataTask(section(await writeParquet(`${dir}/add.parquet`, rows)), quiet);
    const view = (r: DataRow) => [r.uid, r.prompt, r.answer, r.index];
    for (const t of [a, b]) {
      assert.ok(isDataTask(t));
      assert.equal(t.train.length + t.test.length, N);
      assert.deepEqual(t.skipped, []);
    }
    assert.deepEqual(a.train.map(view), b.train.map(view));
    assert.deepEqual(a.test.map(view), b.test.map(view));
    // With a template the prompt field is not read: the default "prompt", absent here, is fine.
    const c = await dataTask(section(`${dir}/add.jsonl`, { promptField: "prompt" }), quiet);
    assert.deepEqual(c.test.map(view), a.test.map(view));
    const byIndex = [...a.train, ...a.test].sort((x, y) => x.index - y.index);
    byIndex.forEach((r, i) => {
      const src = rows[i]!;
      assert.equal(r.prompt, `${src.meta.expr}=`); // {{meta.expr}}= rendered
      assert.equal(r.answer, String(src.meta.a + src.meta.b)); // "... #### c" -> "c"
      assert.equal(r.id, `add.jsonl#${i}`);
      assert.equal(r.source, `${dir}/add.jsonl:${i + 1}`);
      assert.equal(r.expression, undefined); // so promptText uses the rendered prompt
    });
  });
});

Deno.test("dataTask: held-out rows come from the test split only, training rows from the train split only", async () => {
  await withTempDir(async (dir) => {
    const task = await dataTask(
      section(await writeJsonl(`${dir}/add.jsonl`, additionRows(N))),
      quiet,
    );
    const trainKeys = new Set(task.train.map((r) => r.uid));
    const testKeys = new Set(task.test.map((r) => r.uid));
    assert.ok(task.test.length > 0 && task.train.length > 0);
    assert.ok([...testKeys].every((k) => !trainKeys.has(k)), "the splits overlap");
    assert.equal(task.testProblems, testKeys.size);

    // The held-out problems are the test rows in file order, whatever the training seed.
    const held = heldOutProblems(task, task.testProblems);
    assert.deepEqual(held, task.test);
    assert.throws(
      () => heldOutProblems(task, task.testProblems + 1),
      /only \d+ distinct problems/,
    );

    // Training: 3 epochs' worth of rows, each epoch a permutation of the train split.
    const stream = new TrainStream(task, 0, held);
    const n = task.train.length;
    const drawn = stream.take(3 * n);
    assert.ok(drawn.every((r) => trainKeys.has(r.uid) && !testKeys.has(r.uid)));
    for (let e = 0; e < 3; e++) {
      const epoch = drawn.slice(e * n, (e + 1) * n).map((r) => r.index).sort((x, y) => x - y);
      assert.deepEqual(epoch, task.train.map((r) => r.index));
    }
    assert.notDeepEqual(drawn.slice(0, n), drawn.slice(n, 2 * n)); // reshuffled per epoch
    // Deterministic per seed, resumable from the raw position, different for another seed.
    assert.deepEqual(new TrainStream(task, 0, held).take(3 * n), drawn);
    const resumed = new TrainStream(task, 0, held, null, 17);
    assert.deepEqual(resumed.take(20), drawn.slice(17, 37));
    assert.notDeepEqual(new TrainStream(task, 1, held).take(n), drawn.slice(0, n));
    // A held-out row index past the split wraps (the stream is cyclic, the rows finite).
    assert.equal(task.row(HELD_OUT_SEED, task.test.length), task.test[0]);
  });
});

Deno.test("dataTask: the reward is the math verifier on the final answer (tags, box or last number)", async () => {
  await withTempDir(async (dir) => {
    const task = await dataTask(
      section(await writeJsonl(`${dir}/add.jsonl`, additionRows(N))),
      quiet,
    );
    const row = task.test[0]!;
    const c = row.answer;
    const wrong = String(Number(c) + 1);
    for (const good of [c, ` ${c} `, `${c}.0`, `the total is ${c} apples`, `$${c}`]) {
      assert.ok(task.verify(row, good), good);
    }
    for (const bad of [wrong, "", "no idea", `${c}1`]) assert.ok(!task.verify(row, bad), bad);
    const ctx = { signal: new AbortController().signal };
    const score = (completion: string, r: Record<string, unknown> = row) =>
      task.reward.score!({ completion, prompt: row.prompt, row: r }, ctx);
    assert.equal(await score(`<answer>${c}</answer>`), 1);
    assert.equal(await score(`so \\boxed{${c}}`), 1);
    assert.equal(await score(`I think ${wrong}, no: ${c}`), 1); // the last number
    assert.equal(await score(`<answer>${wrong}</answer> ${c}`), 0); // the tag wins
    assert.equal(await score(c, { ...row, task: "arithmetic" }), null); // another task's row
    assert.equal(task.extract(row, `it is <answer>\\boxed{${c}}</answer>`), c);
    assert.equal(task.extract(row, `${c} apples`), c);
    assert.equal(task.extract(row, "   "), null);
  });
});

Deno.test("dataTask: bad rows are skipped and reported once; message-list prompts are read", async () => {
  await withTempDir(async (dir) => {
    const rows = additionRows(N);
    const path = await writeJsonl(`${dir}/mixed.jsonl`, [
      ...rows,
      { question: "no answer here" },
      { question: "an empty one", answer: "  " },
      { question: "a hash with nothing after", answer: "2 + 2 = 4\n####" },
      { question: { nested: true }, answer: "1" },
    ], ["{not json"]);
    const lines: string[] = [];
    const task = await dataTask(section(path, { template: null }), { log: (l) => lines.push(l) });
    assert.equal(task.train.length + task.test.length, N);
    assert.equal(lines.length, 1, "one warning, not one per bad row");
    assert.match(lines[0]!, new RegExp(`^data: skipped 5 of 45 rows of ${path}`));
    assert.deepEqual(
      task.skipped.map((s) => s.where),
      [41, 42, 43, 44, 45].map((l) => `${path}:${l}`),
    );
    assert.match(task.skipped[0]!.reason, /field "answer" is missing/);
    assert.match(task.skipped[1]!.reason, /answer " {2}" is empty/);
    assert.match(task.skipped[2]!.reason, /is empty/);
    assert.match(task.skipped[3]!.reason, /prompt field "question" holds object/);
    assert.match(task.skipped[4]!.reason, /malformed JSON/);

    // veRL's layout: the prompt is a chat message list.
    const chat = await writeJsonl(`${dir}/chat.jsonl`, [
      {
        prompt: [{ role: "system", content: "Be brief." }, { role: "user", content: "2+2?" }],
        answer: 4,
      },
      { prompt: [{ role: "user", content: "3+3?" }], answer: "6" },
    ]);
    const t = await dataTask(
      {
        path: chat,
        format: "jsonl",
        promptField: "prompt",
        answerField: "answer",
        testFraction: 0.5,
      },
      quiet,
    );
    const first = [...t.train, ...t.test].find((r) => r.index === 0)!;
    assert.equal(first.prompt, "Be brief.\n\n2+2?");
    assert.equal(first.messages?.length, 2);
    assert.equal(first.answer, "4");
  });
});

Deno.test("dataTask: a file without usable rows fails naming the file, the field and the fix", async () => {
  await withTempDir(async (dir) => {
    const rows = additionRows(4);
    const jsonl = await writeJsonl(`${dir}/add.jsonl`, rows);
    await assert.rejects(
      dataTask(section(jsonl, { promptField: "problem", template: null }), quiet),
      (e: Error) => {
        assert.match(
          e.message,
          new RegExp(`task.data: ${jsonl} has no usable rows \\(all 4 skipped`),
        );
        assert.match(e.message, /field "problem" is missing/);
        assert.match(e.message, /available: "question", "meta", "answer"/);
        assert.match(e.message, /--set task\.data\.promptField=<field>/);
        return true;
      },
    );
    const parquet = await writeParquet(`${dir}/add.parquet`, rows);
    await assert.rejects(
      dataTask(section(parquet, { answerField: "solution" }), quiet),
      /task\.data: .*"solution".*question.*--set task\.data\.answerField=<field>/s,
    );
    await assert.rejects(
      dataTask(section(`${dir}/missing.jsonl`), quiet),
      /task\.data\.path: .*missing\.jsonl does not exist/,
    );
    await Deno.writeTextFile(`${dir}/empty.jsonl`, "\n");
    await assert.rejects(dataTask(section(`${dir}/empty.jsonl`), quiet), /has no data rows/);
  });
});

Deno.test("referenceAnswers: GSM8K, MATH, numbers and lists; an empty answer is an error", () => {
  assert.deepEqual(referenceAnswers("So 3 * 4 = 12 eggs.\n#### 1,200"), ["1,200"]);
  assert.deepEqual(referenceAnswers("Hence $x = \\boxed{\\frac{1}{2}}$."), ["\\frac{1}{2}"]);
  assert.deepEqual(referenceAnswers(7n), ["7"]);
  assert.deepEqual(referenceAnswers(["3", 3.5]), ["3", "3.5"]);
  assert.throws(() => referenceAnswers([]), /empty list/);
  assert.throws(() => referenceAnswers(null), /null/);
  assert.throws(() => referenceAnswers({ a: 1 }), /object/);
});

Deno.test("dataTask: the file's other fields ride on the row; answerField null reads rows without answers", async () => {
  await withTempDir(async (dir) => {
    const rows = Array.from({ length: 20 }, (_, i) => ({
      prompt: `f(1)=${i + 1}`,
      tests: [`assert f(2)==${i + 2}`],
      meta: { level: i % 3 },
      expression: "not the prompt",
      id: "the file's id loses to ours",
    }));
    const path = await writeJsonl(`${dir}/code.jsonl`, rows);
    const task = await dataTask(
      { path, format: "jsonl", promptField: "prompt", answerField: null, testFraction: 0.25 },
      quiet,
    );
    const all = [...task.train, ...task.test];
    assert.equal(all.length, 20);
    for (const r of all) {
      const src = rows[r.index]!;
      assert.deepEqual(r.tests, src.tests);
      assert.deepEqual(r.meta, src.meta);
      assert.equal(r.prompt, src.prompt);
      assert.equal(r.expression, undefined);
      assert.equal(r.id, `code.jsonl#${r.index}`);
      assert.equal(r.answer, "");
      assert.deepEqual(r.references, []);
      // No reference: the task's own reward does not apply and nothing is extracted.
      const ctx = { signal: new AbortController().signal };
      assert.equal(
        await task.reward.score!({ prompt: r.prompt, completion: "3", row: r }, ctx),
        null,
      );
      assert.equal(task.extract(r, "3"), null);
    }
    // The same file with the default answerField: every row lacks `answer` and is skipped.
    await assert.rejects(
      dataTask({
        path,
        format: "jsonl",
        promptField: "prompt",
        answerField: "answer",
        testFraction: 0.25,
      }, quiet),
      /no usable rows/,
    );
  });
});

Deno.test("fitDataTask: rows too long for the model are skipped and counted, truncated to fit, or an error; never kept", async () => {
  await withTempDir(async (dir) => {
    const rows: Record<string, unknown>[] = additionRows(N).map((r) => ({
      question: r.meta.expr + "=",
      answer: r.answer,
    }));
    // A 10,000-character row and a 300-character one, where the tiny policy has 256 positions.
    rows.push({ question: "1+".repeat(5000) + "1=", answer: "5001" });
    rows.push({ question: "0+".repeat(150) + "7=", answer: "7" });
    const path = await writeJsonl(`${dir}/long.jsonl`, rows);
    const task = await dataTask(section(path, { template: null, testFraction: 0.1 }), quiet);
    assert.equal(task.train.length + task.test.length, N + 2);
    const { model, tokenizer } = await loadPolicy("builtin:tiny");
    model.dispose();
    const maxNewTokens = 8;
    const max = model.config.maxPositions - maxNewTokens; // 248 prompt tokens
    const promptTokens = (r: DataRow) => promptIds(tokenizer, r).length;
    const limit = `the 256 positions of builtin:tiny less rollout.maxNewTokens 8`;
    const all = (t: typeof task) => [...t.train, ...t.test];

    const lines: string[] = [];
    const skipped = fitDataTask(task, {
      maxPromptTokens: max,
      promptTokens,
      limit,
      log: (l) => lines.push(l),
    });
    assert.equal(all(skipped).length, N);
    assert.ok(all(skipped).every((r) => promptTokens(r) <= max));
    assert.deepEqual(skipped.overlong, { skipped: 2, truncated: 0 });
    assert.equal(skipped.skipped.length, 2);
    assert.match(
      skipped.skipped[0]!.reason,
      /^the prompt has 10003 tokens, more than the 256 positions/,
    );
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!,
      /^data: skipped 2 of 42 rows of .*long\.jsonl whose prompt is longer than .* \(the longest: .*long\.jsonl:41, 10003 tokens\); they are never run \(task\.data\.overlong: skip/,
    );
    // Rows keep their split side.
    assert.deepEqual(
      skipped.test.map((r) => r.uid),
      task.test.filter((r) => promptTokens(r) <= max).map((r) => r.uid),
    );

    const truncated = fitDataTask(task, {
      maxPromptTokens: max,
      promptTokens,
      limit,
      mode: "truncate",
      log: () => {},
    });
    assert.equal(all(truncated).length, N + 2);
    assert.deepEqual(truncated.overlong, { skipped: 0, truncated: 2 });
    const cut = all(truncated).find((r) => r.index === 40)!;
    assert.equal(promptTokens(cut), max, "as much as fits");
    assert.ok(("1+".repeat(5000) + "1=").endsWith(cut.prompt), "its end is kept");
    assert.equal(cut.messages, undefined);

    assert.throws(
      () => fitDataTask(task, { maxPromptTokens: max, promptTokens, limit, mode: "error" }),
      /^Error: task\.data: .*long\.jsonl:41: the prompt has 10003 tokens, more than the 256 positions .*; set task\.data\.overlong to skip .* or truncate .*, lower rollout\.maxNewTokens/,
    );
    // Every row fits: the task itself comes back.
    assert.equal(fitDataTask(task, { maxPromptTokens: 1e6, promptTokens, limit }), task);
    // No row fits: an error, not an empty task.
    assert.throws(
      () => fitDataTask(task, { maxPromptTokens: 2, promptTokens, limit, log: () => {} }),
      /all 42 rows of .* have prompts longer than/,
    );
  });
});

Deno.test("dataTask: Parquet images stored as bytes (Hugging Face Image structs) become data URLs of the same pixels; a path struct resolves; bytes that are no image make a skipped row", async () => {
  await withTempDir(async (dir) => {
    const images = [0, 1, 2, 3, 4].map((i) => createImage(4, 3, { fill: [40 * i, 10, 200] }));
    const entries: unknown[] = images.map((im) => [{ bytes: encodePng(im), path: null }]);
    entries.push([{ bytes: null, path: "img/x.png" }], [{
      bytes: new Uint8Array([1, 2, 3]),
      path: null,
    }]);
    const n = entries.length;
    await Deno.writeFile(
      `${dir}/shapes.parquet`,
      new Uint8Array(parquetWriteBuffer({
        columnData: [
          { name: "question", data: Array.from({ length: n }, (_, i) => `colour ${i}?`) },
          { name: "answer", data: Array.from({ length: n }, (_, i) => `${i}`) },
          { name: "images", data: entries },
        ],
        schema: [
          { name: "root", num_children: 3 },
          {
            name: "question",
            type: "BYTE_ARRAY",
            converted_type: "UTF8",
            repetition_type: "REQUIRED",
          },
          {
            name: "answer",
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
    const logs: string[] = [];
    const data = await dataTask(section(`${dir}/shapes.parquet`, { template: null }), {
      log: (l) => logs.push(l),
    });
    const rows = [...data.train, ...data.test];
    assert.equal(rows.length, 6);
    for (const r of rows) {
      const i = Number(r.answer);
      const src = (r.images as string[])[0]!;
      if (i === 5) assert.equal(src, `${dir}/img/x.png`);
      else assert.deepEqual(await loadImage(src), images[i]);
    }
    assert.equal(data.skipped.length, 1);
    assert.match(
      data.skipped[0]!.reason,
      /images\[0\]: bytesToDataUrl: 3 bytes .* neither PNG nor JPEG/,
    );
    assert.equal(new Set(rows.map((r) => data.key(r))).size, 6);
  });
});
