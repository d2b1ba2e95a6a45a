import assert from "node:assert/strict";
import { join } from "node:path";
import type { MetricsRecord } from "@rlvr/infra";
import { RunDir } from "./run_dir.ts";
import { samplesMarkdown, TRACKER_FILES } from "./trackers.ts";
import {
  eventFiles,
  readEvents,
  scalarsByTag,
  textsOf,
  tfRecords,
} from "./_tensorboard_test_util.ts";

function metrics(step: number, extra: Record<string, number | null> = {}) {
  return {
    step,
    "reward/mean": step / 10,
    "reward/std": 0.1 + step / 100,
    frac_zero_std_groups: 0,
    "response_length/mean": 3 + step,
    entropy: 1 / (step + 1),
    kl: null,
    "clip_frac/low": 0,
    "clip_frac/high": 0.01 * step,
    grad_norm: 1.5 * step,
    lr: 1e-3,
    tokens_per_s: 100 + step,
    "time/rollout_s": 0.25,
    "time/train_s": 0.5,
    ...extra,
  };
}

function evalRecord(step: number) {
  return { step, "pass@1": step / 20, "pass@k": step / 10, k: 2, n: 2, problems: 4 };
}

function sample(step: number, i: number) {
  return { step, prompt: `${step}+${i}=`, completion: `<b>${step + i}</b> | *x*`, reward: i % 2 };
}

function memorySink(into: MetricsRecord[]) {
  return {
    write: (r: MetricsRecord) => Promise.resolve(void into.push(r)),
    close: () => Promise.resolve(),
  };
}

/** Writes steps `from..to` the way the training loop does (metrics, samples, eval, checkpoint). */
async function writeSteps(run: RunDir, from: number, to: number, checkpointAt: number[] = []) {
  for (let step = from; step <= to; step++) {
    await run.appendMetrics(metrics(step, step === 3 ? { late_key: 7 } : {}));
    for (let i = 0; i < 2; i++) await run.appendSample(sample(step, i));
    if (step % 2 === 0) await run.appendEval(evalRecord(step));
    if (checkpointAt.includes(step)) {
      await run.beginCheckpoint(step);
      await run.completeCheckpoint(step);
    }
  }
}

/** Checks that the event files say what the JSONL files say (as float32), step for step. */
async function assertTensorBoardMatches(run: RunDir) {
  const events = await readEvents(run.file("tensorboard"));
  assert.equal(events[0]!.file_version, "brain.Event:2");
  const scalars = scalarsByTag(events);
  const expected = new Map<string, Map<number, number>>();
  const add = (tag: string, step: number, v: number) => {
    if (!expected.has(tag)) expected.set(tag, new Map());
    expected.get(tag)!.set(step, Math.fround(v));
  };
  for (const m of await run.readMetrics()) {
    for (const [k, v] of Object.entries(m)) if (k !== "step" && v !== null) add(k, m.step, v);
  }
  for (const e of await run.readEval()) {
    for (const [k, v] of Object.entries(e)) {
      if (k !== "step" && typeof v === "number") add(`eval/${k}`, e.step, v);
    }
  }
  assert.deepEqual(scalars, expected);
  assert.ok(!scalars.has("kl"), "null values are skipped");
  // One text per step with samples, the step's samples in order.
  const bySteps = new Map<number, { prompt: string; completion: string; reward: number }[]>();
  for (const s of await run.readSamples()) {
    if (!bySteps.has(s.step)) bySteps.set(s.step, []);
    bySteps.get(s.step)!.push(s);
  }
  const texts = textsOf(events, "samples");
  assert.deepEqual(
    texts,
    new Map([...bySteps].map(([step, rows]) => [step, samplesMarkdown(rows)])),
  );
  for (const e of events) {
    for (const v of e.summary?.value ?? []) {
      if (v.tensor === undefined) continue;
      assert.equal(v.metadata?.plugin_data?.plugin_name, "text");
      assert.equal(v.tensor.dtype, 7); // DT_STRING
    }
  }
  return events;
}

Deno.test("RunDir trackers: TensorBoard scalars and sample texts, CSV files, console and programmatic sinks get every record", async () => {
  const root = await Deno.makeTempDir();
  try {
    const seen: MetricsRecord[] = [];
    const lines: string[] = [];
    const run = await RunDir.create(root, "r", {
      tensorboard: true,
      sinks: ["jsonl", "csv", "console"],
      metricsSinks: [memorySink(seen)],
      print: (l) => lines.push(l),
      warn: () => {},
    });
    await run.writeConfig("x: 1\n");
    await run.appendEval(evalRecord(0));
    await writeSteps(run, 1, 4);
    await run.close();

    await assertTensorBoardMatches(run);
    // Programmatic sink: metrics as they are, evals prefixed.
    assert.equal(seen.length, 4 + 3);
    assert.deepEqual(seen[0], {
      step: 0,
      "eval/pass@1": 0,
      "eval/pass@k": 0,
      "eval/k": 2,
      "eval/n": 2,
      "eval/problems": 4,
    });
    assert.deepEqual(seen[1], metrics(1));
    assert.equal(lines.length, 7);
    assert.match(lines[1]!, /^step=1 reward\/mean=0\.1 /);
    // CSV: the header is the first record's keys; late_key (first seen at step 3) is left out
    // with one warning.
    const csv = (await Deno.readTextFile(join(run.path, TRACKER_FILES.metricsCsv))).split("\n");
    assert.equal(csv[0], Object.keys(metrics(1)).join(","));
    assert.equal(csv.length, 1 + 4 + 1);
    assert.equal(csv[1]!.split(",")[6], ""); // kl: null
    const evalCsv = await Deno.readTextFile(join(run.path, TRACKER_FILES.evalCsv));
    assert.equal(evalCsv.split("\n")[0], "step,pass@1,pass@k,k,n,problems");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("RunDir trackers: a CSV key that first appears later is named once through warn and left out", async () => {
  const root = await Deno.makeTempDir();
  try {
    const warnings: string[] = [];
    const run = await RunDir.create(root, "r", { sinks: ["csv"], warn: (l) => warnings.push(l) });
    await writeSteps(run, 1, 4);
    await run.close();
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /"late_key" first appeared at step 3/);
    const text = await Deno.readTextFile(join(run.path, "metrics.csv"));
    assert.ok(!text.includes("late_key"));
    assert.equal(text.split("\n").length, 6);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("RunDir trackers: resuming after a crash truncates the event files and CSVs to the checkpoint; the new file starts after it and the result equals an uninterrupted run", async () => {
  const root = await Deno.makeTempDir();
  try {
    const options = { tensorboard: true, warn: () => {} };
    // Uninterrupted: steps 1-6.
    const straight = await RunDir.create(root, "straight", { ...options, sinks: ["csv"] });
    await straight.writeConfig("x: 1\n");
    await writeSteps(straight, 1, 6, [2, 4]);
    await straight.close();

    // Crashed: steps 1-5 with a checkpoint at 2 and 4, then a write torn mid-event.
    const crashed = await RunDir.create(root, "crashed", { ...options, sinks: ["csv"] });
    await crashed.writeConfig("x: 1\n");
    await writeSteps(crashed, 1, 5, [2, 4]);
    await crashed.close();
    const [first] = await eventFiles(crashed.file("tensorboard"));
    const whole = await Deno.readFile(first!);
    await Deno.writeFile(first!, new Uint8Array([0x20, 0, 0, 0, 0, 0, 0, 0, 1, 2]), {
      append: true,
    });
    await Deno.writeTextFile(join(crashed.path, "metrics.csv"), "6,0.", { append: true });

    const resumed = await RunDir.open(crashed.path, { ...options, sinks: ["csv"] });
    const info = await resumed.resume();
    assert.equal(info.checkpoint?.step, 4);
    assert.deepEqual(info.trackers.csvRows, { "metrics.csv": 1, "eval.csv": 0 });
    // Step 5: one metrics event, one samples text (eval at odd steps: none).
    assert.equal(info.trackers.events, 2);
    assert.equal(
      tfRecords(await Deno.readFile(first!), first!).length < tfRecords(whole, "whole").length,
      true,
    );
    await writeSteps(resumed, 5, 6, [6]);
    await resumed.close();

    const files = await eventFiles(resumed.file("tensorboard"));
    assert.equal(files.length, 2, "one event file per process");
    const events = await assertTensorBoardMatches(resumed);
    // No step after the checkpoint is left in the first file, and no tag has a step twice.
    const firstEvents = tfRecords(await Deno.readFile(files[0]!), files[0]!).length;
    const steps = events.slice(0, firstEvents).map((e) => e.step ?? 0);
    assert.ok(Math.max(...steps) <= 4);
    const second = events.slice(firstEvents);
    assert.equal(second[0]!.file_version, "brain.Event:2");
    assert.deepEqual(second[1]!.session_log, { status: 1 }); // SessionLog START ...
    assert.equal(second[1]!.step, 5); // ... at the step the run continues from
    const seen = new Set<string>();
    for (const e of events) {
      for (const v of e.summary?.value ?? []) {
        const key = `${v.tag}@${e.step}`;
        assert.ok(!seen.has(key), `${key} written twice`);
        seen.add(key);
      }
    }
    // Same scalars and texts as the uninterrupted run; same CSV bytes.
    assert.deepEqual(
      scalarsByTag(events),
      scalarsByTag(await readEvents(straight.file("tensorboard"))),
    );
    for (const f of ["metrics.csv", "eval.csv"]) {
      assert.equal(
        await Deno.readTextFile(join(resumed.path, f)),
        await Deno.readTextFile(join(straight.path, f)),
        f,
      );
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("RunDir trackers: without options nothing but the JSONL files is written", async () => {
  const root = await Deno.makeTempDir();
  try {
    const run = await RunDir.create(root, "r");
    await writeSteps(run, 1, 2, [2]);
    await run.close();
    const names: string[] = [];
    for await (const e of Deno.readDir(run.path)) names.push(e.name);
    assert.deepEqual(names.sort(), ["checkpoints", "eval.jsonl", "metrics.jsonl", "samples.jsonl"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
