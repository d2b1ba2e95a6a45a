import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../config/load.ts";
import { readJsonl } from "../run/jsonl.ts";
import { additionRows, withTempDir, writeJsonl, writeParquet } from "./_test_data.ts";
import { dataTask } from "./data_task.ts";
import { evalMain } from "./eval_main.ts";
import { TINY_CHECKPOINT_DIR } from "./policy.ts";
import { runTraining } from "./run.ts";

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const quiet = { log: () => {}, progress: () => {}, report: false, handleSignals: false };

interface SampleLine {
  problem: string;
  sample: number;
  prompt: string;
  completion: string;
  answer: string | null;
  reference: string;
  reward: number;
  correct: boolean;
}

Deno.test("evalMain: the default flags give deno task train's held-out numbers before training, with intervals and files", async () => {
  await withTempDir(async (dir) => {
    // The default recipe's run, one step: its `before` evaluation is the one `deno task train`
    // prints as "held-out before training" (64 problems x 8 samples).
    const loaded = await loadConfig({ out: `${dir}/runs`, steps: "1", device: "cpu" });
    const trained = await runTraining(loaded, quiet);
    const before = trained.before!;

    const lines: string[] = [];
    const r = await evalMain(["--out", `${dir}/eval`], (l) => lines.push(l));
    assert.ok(r !== null);
    assert.equal(r.passAt1, before.passAt1);
    assert.equal(r.passAtK, before.passAtK);
    assert.deepEqual([r.problems, r.n, r.k], [64, 8, 8]);
    // The shipped checkpoint's numbers, as apps/train/README.md states them.
    assert.deepEqual([pct(r.passAt1), pct(r.passAtK)], ["29.5%", "84.4%"]);
    assert.match(
      lines[0]!,
      /^eval builtin:tiny: held-out pass@1 29\.5%, pass@8 84\.4% \(64 problems x 8 samples, temperature 1, seed 0\)$/,
    );
    assert.match(lines.join("\n"), /\nmaj@8 +\d+\.\d% +\[\d+\.\d%, \d+\.\d%\]/);
    assert.match(
      lines.join("\n"),
      /95% CI: percentile bootstrap over problems \(64 problems, 10000 resamples, seed 0\)/,
    );

    const m = r.metrics.metrics;
    assert.equal(m["pass@1"].estimate, r.passAt1);
    assert.equal(m["pass@k"].estimate, r.passAtK);
    assert.equal(m["avg@k"].estimate, r.passAt1);
    for (const ci of Object.values(m)) {
      assert.ok(ci.lower <= ci.estimate && ci.estimate <= ci.upper);
    }
    assert.ok(m["pass@1"].upper - m["pass@1"].lower > 0.01); // 64 problems: not a point

    const { records: [record, ...more] } = await readJsonl<Record<string, unknown>>(
      `${dir}/eval/eval.jsonl`,
    );
    assert.equal(more.length, 0);
    assert.equal(record!.model, "builtin:tiny");
    assert.equal(record!.task, "arithmetic");
    assert.deepEqual([record!.n, record!.k, record!.problems, record!.seed], [8, 8, 64, 0]);
    assert.deepEqual(record!["maj@k"], {
      estimate: m["maj@k"].estimate,
      lower: m["maj@k"].lower,
      upper: m["maj@k"].upper,
    });
    assert.deepEqual(record!.ci, r.metrics.ci);

    const { records: samples } = await readJsonl<SampleLine>(`${dir}/eval/samples.jsonl`);
    assert.equal(samples.length, 64 * 8);
    const right = samples.filter((s) => s.correct).length;
    assert.equal(right / samples.length, r.passAt1);
    assert.ok(samples.every((s) => s.correct === (s.reward === 1)));
    const s0 = samples[0]!;
    assert.match(s0.problem, /^arithmetic-1000003-\d+$/);
    assert.match(s0.prompt, /^\d\d\+\d\d=$/);
    assert.equal(s0.answer, s0.completion.trim() === "" ? null : s0.completion.trim());
  });
});

Deno.test("evalMain: the positional checkpoint and --model name the same policy", async () => {
  await withTempDir(async (dir) => {
    // 8 problems x 4 samples: enough to compare two runs number for number.
    const flags = ["--problems", "8", "--samples", "4", "--k", "2"];
    const folder = relative(Deno.cwd(), TINY_CHECKPOINT_DIR);
    const a = await evalMain([folder, ...flags, "--out", `${dir}/a`], () => {});
    const b = await evalMain(["--model", "builtin:tiny", ...flags, "--out", `${dir}/b`], () => {});
    assert.ok(a !== null && b !== null);
    assert.equal(a.model, folder);
    assert.deepEqual(a.metrics, b.metrics);
    assert.equal(a.k, 2);
  });
});

Deno.test("evalMain --data: the test split a 2-step training run on the file holds out, evaluated the same way", async () => {
  await withTempDir(async (dir) => {
    // 40 GSM8K-shaped rows; testFraction 0.25 leaves about 10 test rows. The template renders
    // the nested `meta.expr` (`37+45=`), the format the tiny model reads, so pass rates are not 0.
    const rows = additionRows(40);
    const parquet = await writeParquet(`${dir}/add.parquet`, rows);
    const jsonl = await writeJsonl(`${dir}/add.jsonl`, rows);
    const mapping = ["task.data.promptField=question", "task.data.template={{meta.expr}}="];
    const task = await dataTask({
      path: jsonl,
      format: "jsonl",
      promptField: "question",
      answerField: "answer",
      template: "{{meta.expr}}=",
      testFraction: 0.25,
    }, { log: () => {} });
    const held = task.testProblems;

    // Tiny sizes: 8 responses (2 prompts x 4) per step, 2 steps, 4 samples per held-out row.
    const loaded = await loadConfig({
      data: parquet,
      out: `${dir}/runs`,
      steps: "2",
      device: "cpu",
      set: [
        ...mapping,
        "task.data.testFraction=0.25",
        "rollout.batchSize=8",
        "rollout.groupSize=4",
        "algorithm.microBatchSize=8",
        `trainer.evalProblems=${held}`,
        "trainer.evalSamples=4",
        "trainer.evalK=4",
      ],
    });
    assert.equal(loaded.config.task.name, undefined); // --data replaced the recipe's task
    const trained = await runTraining(loaded, quiet);
    assert.equal(trained.step, 2);
    const metrics = await readJsonl<{ step: number }>(`${trained.dir}/metrics.jsonl`);
    assert.deepEqual(metrics.records.map((m) => m.step), [1, 2]);
    await Deno.stat(`${trained.dir}/checkpoints/step-2/COMPLETE`);
    const trainedOn = await readJsonl<{ prompt: string }>(`${trained.dir}/samples.jsonl`);
    const testPrompts = new Set(task.test.map((r) => r.prompt));
    assert.ok(trainedOn.records.length > 0);
    assert.ok(trainedOn.records.every((s) => !testPrompts.has(s.prompt)), "trained on a test row");

    const flags = [
      "--prompt-field",
      "question",
      "--template",
      "{{meta.expr}}=",
      "--set",
      "task.data.testFraction=0.25",
      "--samples",
      "4",
    ];
    const lines: string[] = [];
    const e = await evalMain(
      ["--data", parquet, ...flags, "--out", `${dir}/eval`],
      (l) => lines.push(l),
    );
    assert.ok(e !== null);
    assert.equal(e.problems, held); // every test row: fewer than 64
    assert.equal(e.passAt1, trained.before!.passAt1);
    assert.equal(e.passAtK, trained.before!.passAtK);
    assert.ok(e.passAtK > 0); // the template reaches the model's format
    assert.match(lines[1]!, /^task: data .*add\.parquet \(test split: \d+ of 40 usable rows/);
    const { records: samples } = await readJsonl<SampleLine>(`${dir}/eval/samples.jsonl`);
    assert.equal(samples.length, held * 4);
    assert.ok(samples.every((s) => testPrompts.has(s.prompt)));
    assert.ok(samples.every((s) => /^\d+$/.test(s.reference))); // "... #### c" -> "c"
    const { records: [record] } = await readJsonl<Record<string, unknown>>(
      `${dir}/eval/eval.jsonl`,
    );
    assert.deepEqual(record!.data, {
      path: parquet,
      format: "parquet",
      promptField: "question",
      answerField: "answer",
      template: "{{meta.expr}}=",
      testFraction: 0.25,
      split: "test",
    });
    assert.equal(record!.task, null);

    // The JSONL file holds the same rows: the same numbers.
    const j = await evalMain(["--data", jsonl, ...flags, "--out", `${dir}/eval-jsonl`], () => {});
    assert.deepEqual(j!.metrics, e.metrics);
    // Every row of the file, in file order.
    const all = await evalMain(
      ["--data", jsonl, ...flags, "--split", "all", "--problems", "all", "--out", `${dir}/all`],
      () => {},
    );
    assert.equal(all!.problems, 40);
    const allSamples = await readJsonl<SampleLine>(`${dir}/all/samples.jsonl`);
    assert.equal(allSamples.records[0]!.problem, "add.jsonl#0");
    assert.equal(allSamples.records[0]!.prompt, `${rows[0]!.meta.expr}=`);
  });
});

Deno.test("evalMain: a bad flag prints the flag, its value and the usage, and returns null", async () => {
  await withTempDir(async (dir) => {
    const data = await writeJsonl(`${dir}/add.jsonl`, additionRows(40));
    const cases: [string[], RegExp][] = [
      [["--bogus"], /Unknown option '--bogus'/],
      [["--samples", "0"], /--samples "0" is not an integer >= 1/],
      [["--k", "9"], /--k 9 is more than --samples 8; use --k 8 or less/],
      [["--seed", "1.5"], /--seed "1\.5" is not an integer >= 0/],
      [["--temperature", "hot"], /--temperature "hot" is not a number >= 0/],
      [["--max-new-tokens", "0"], /--max-new-tokens "0" is not an integer >= 1/],
      [["--device", "gpu"], /"gpu" \(from --device\)/],
      [["--decode-loop", "gpu"], /--decode-loop "gpu" is not host or device/],
      [["a", "b"], /one checkpoint at most, got "a" "b"/],
      [["builtin:tiny", "--model", "x"], /checkpoint "builtin:tiny" and --model "x" differ/],
      [["--model", "builtin:huge"], /--model "builtin:huge" is not a built-in model/],
      [["--model", `${dir}/none`], /--model ".*none" does not exist/],
      [
        ["--task", "chess"],
        /task\.name: "chess" is not a known built-in task.*\(from --task chess\)/,
      ],
      [["--task", "countdown", "--data", data], /--task "countdown" and --data ".*": give one/],
      [["--set", "task.options.digits=99"], /task\.options\.digits: .*\[1, 12\], got 99/],
      [["--set", "optimizer.lr=1"], /--set optimizer\.lr=1: only task\.options\.<key>/],
      [["--set", "task.data.promptField=q"], /applies to --data <file> only/],
      [["--prompt-field", "q"], /--prompt-field "q" applies to --data <file> only/],
      [["--problems", "all"], /--problems all applies to --data <file> only/],
      [["--data", `${dir}/add.csv`], /cannot tell the format of ".*add\.csv"/],
      [["--data", `${dir}/no.jsonl`], /task\.data\.path: ".*no\.jsonl" does not exist/],
      [["--data", data, "--split", "some"], /--split "some": use test or all/],
      [
        ["--data", data, "--prompt-field", "problem"],
        /no usable rows .*field "problem" is missing/,
      ],
      [
        ["--data", data, "--prompt-field", "question", "--problems", "39"],
        /--problems 39: the test split of .* has \d+ distinct problems/,
      ],
      // Sizes past what an evaluation can hold: a clear error, not "Invalid array length".
      [
        ["--samples", "1000000000"],
        /--samples 1000000000 is more than 4096, the most an evaluation takes/,
      ],
      [["--seed", "99999999999999999999"], /--seed 99999999999999999999 is more than \d+/],
      [
        ["--problems", "100000", "--samples", "200"],
        /--problems 100000 x --samples 200 is 20000000 samples, more than 10000000/,
      ],
      // Past the tiny policy's 256 positions (checked once it is loaded).
      [
        ["--max-new-tokens", "300"],
        /--max-new-tokens: 300 new tokens after a prompt \(1 tokens\) need 301 positions, but builtin:tiny has 256 .*; set --max-new-tokens to 255 or less/,
      ],
      [
        ["--max-new-tokens", "252"],
        /--max-new-tokens: 252 new tokens after the longest prompt evaluated \(\d+ tokens\) need \d+ positions, but builtin:tiny has 256/,
      ],
    ];
    for (const [args, message] of cases) {
      const lines: string[] = [];
      assert.equal(await evalMain([...args, "--out", `${dir}/out`], (l) => lines.push(l)), null);
      const text = lines.join("\n");
      assert.match(text, /^eval: /, args.join(" "));
      assert.match(text, message, args.join(" "));
      assert.match(text, /\nUsage: deno task eval /, args.join(" "));
    }
  });
});

Deno.test("deno task eval: exit code 2 on a bad flag, 0 for --help", async () => {
  const main = fileURLToPath(new URL("./eval_main.ts", import.meta.url));
  const run = async (...args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", main, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, text: new TextDecoder().decode(out.stdout) };
  };
  const bad = await run("--samples", "x");
  assert.equal(bad.code, 2);
  assert.match(bad.text, /eval: --samples "x" is not an integer >= 1\nUsage:/);
  const help = await run("--help");
  assert.equal(help.code, 0);
  assert.match(help.text, /^Usage: deno task eval/);
});

Deno.test("evalMain: an empty --out is refused (it would write into the working directory)", async () => {
  for (const out of ["", "  "]) {
    const lines: string[] = [];
    assert.equal(
      await evalMain(["--problems", "2", "--samples", "1", "--out", out], (l) => lines.push(l)),
      null,
    );
    assert.match(
      lines.join("\n"),
      /^eval: --out ".*" is empty, which would write eval\.jsonl and samples\.jsonl into the working directory; give a directory/,
    );
  }
});

Deno.test("evalMain --data: rows too long for the model are skipped and counted", async () => {
  await withTempDir(async (dir) => {
    const rows: Record<string, unknown>[] = additionRows(20).map((r) => ({
      question: `${r.meta.expr}=`,
      answer: r.answer,
    }));
    rows.push({ question: "1+".repeat(5000) + "1=", answer: "5001" });
    const data = await writeJsonl(`${dir}/long.jsonl`, rows);
    const lines: string[] = [];
    const r = await evalMain(
      [
        "--data",
        data,
        "--prompt-field",
        "question",
        "--split",
        "all",
        "--problems",
        "all",
        "--samples",
        "1",
        "--out",
        `${dir}/out`,
      ],
      (l) => lines.push(l),
    );
    assert.ok(r !== null, lines.join("\n"));
    assert.equal(r.problems, 20);
    assert.match(
      lines.join("\n"),
      /data: skipped 1 of 21 rows of .*long\.jsonl whose prompt is longer than the 256 positions of builtin:tiny less --max-new-tokens 8/,
    );
  });
});

Deno.test("evalMain on builtin:tiny-vl with --task count_shapes: the images reach the policy; its pass@1 is the README's", async () => {
  await withTempDir(async (dir) => {
    const lines: string[] = [];
    const args = [
      "builtin:tiny-vl",
      "--task",
      "count_shapes",
      ...[
        "size=56",
        "shapeSize=[8, 10]",
        "count=[3, 6]",
        "distractors=[6, 8]",
        "colors=3",
        "kinds=3",
      ]
        .flatMap((o) => ["--set", `task.options.${o}`]),
      "--max-new-tokens",
      "64",
      "--problems",
      "64",
      "--samples",
      "8",
      "--out",
      `${dir}/eval`,
    ];
    const r = await evalMain(args, (l) => lines.push(l));
    assert.ok(r !== null, lines.join("\n"));
    // grpo_vision's task, 64 held-out problems x 8 samples: the warm start's number
    // (apps/train/README.md, "Vision-language warm start").
    assert.equal(pct(r.passAt1), "60.2%");
    const { records: samples } = await readJsonl<SampleLine>(`${dir}/eval/samples.jsonl`);
    assert.match(
      samples[0]!.prompt,
      /^<\|vision_start\|><\|image_pad\|><\|vision_end\|>\w+ \w+s\?$/,
    );
  });
});
