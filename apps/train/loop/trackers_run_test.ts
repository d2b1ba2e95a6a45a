import assert from "node:assert/strict";
import { join } from "node:path";
import type { MetricsRecord, MetricsSink } from "@rlvr/infra";
import { loadConfig } from "../config/load.ts";
import { RUN_FILES } from "../run/run_dir.ts";
import { samplesMarkdown } from "../run/trackers.ts";
import {
  eventFiles,
  readEvents,
  scalarsByTag,
  textsOf,
  tfRecords,
} from "../run/_tensorboard_test_util.ts";
import { runTraining } from "./run.ts";
import { quiet, records, SMALL_SET } from "./_run_test_util.ts";

const SET = [
  ...SMALL_SET,
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "trainer.evalEvery=2",
  "trainer.samplesEvery=1",
  "trainer.samplesCount=2",
  "trainer.saveEvery=0",
  "output.tensorboard=true",
  "output.sinks=[jsonl, csv]",
];

class MemorySink implements MetricsSink {
  records: MetricsRecord[] = [];
  closed = false;
  write(r: MetricsRecord): Promise<void> {
    this.records.push(r);
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

Deno.test("runTraining with output.tensorboard and sinks: a stopped and resumed run's event files hold metrics.jsonl and eval.jsonl as scalars and the samples as texts (read back independently); CSVs and a MetricsSink get every record", async () => {
  const out = await Deno.makeTempDir();
  try {
    const first = new MemorySink();
    const second = new MemorySink();
    // A non-literal options object: `sinks` is a RunOptions key once run.ts passes it on.
    const opts1 = { ...quiet, stopAfter: 2, sinks: [first] };
    const a = await runTraining(
      await loadConfig({ out, steps: "3", seed: "3", set: [...SET, "output.name=tb"] }),
      opts1,
    );
    assert.equal(a.step, 2);
    const opts2 = { ...quiet, sinks: [second] };
    const b = await runTraining(await loadConfig({ resume: a.dir }), opts2);
    assert.equal(b.step, 3);

    const metrics = await records(b.dir, RUN_FILES.metrics);
    const evals = await records(b.dir, RUN_FILES.eval);
    const samples = await records(b.dir, RUN_FILES.samples);
    assert.deepEqual(metrics.map((m) => m.step), [1, 2, 3]);
    assert.deepEqual(evals.map((e) => e.step), [0, 2, 3]);

    // Two event files (one per process), every record CRC-checked by the independent reader.
    const tb = join(b.dir, RUN_FILES.tensorboard);
    const files = await eventFiles(tb);
    assert.equal(files.length, 2);
    for (const f of files) assert.ok(tfRecords(await Deno.readFile(f), f).length > 1);
    const events = await readEvents(tb);

    // Every numeric value of every record, at its step, as float32; nulls skipped.
    const expected = new Map<string, Map<number, number>>();
    const add = (tag: string, step: number, v: unknown) => {
      if (typeof v !== "number") return;
      if (!expected.has(tag)) expected.set(tag, new Map());
      expected.get(tag)!.set(step, Math.fround(v));
    };
    for (const m of metrics) {
      for (const [k, v] of Object.entries(m)) if (k !== "step") add(k, m.step as number, v);
    }
    for (const e of evals) {
      for (const [k, v] of Object.entries(e)) {
        if (k !== "step") add(`eval/${k}`, e.step as number, v);
      }
    }
    assert.deepEqual(scalarsByTag(events), expected);
    assert.ok(expected.has("reward/mean") && expected.has("eval/pass@1"));
    // Each (tag, step) once: the resumed file starts after the checkpoint.
    const seen = new Set<string>();
    for (const e of events) {
      for (const v of e.summary?.value ?? []) {
        assert.ok(!seen.has(`${v.tag}@${e.step}`), `${v.tag}@${e.step} twice`);
        seen.add(`${v.tag}@${e.step}`);
      }
    }
    // One samples text per step, the step's samples.
    const bySteps = new Map<number, { prompt: string; completion: string; reward: number }[]>();
    for (
      const s of samples as { step: number; prompt: string; completion: string; reward: number }[]
    ) {
      if (!bySteps.has(s.step)) bySteps.set(s.step, []);
      bySteps.get(s.step)!.push(s);
    }
    assert.deepEqual([...bySteps.keys()], [1, 2, 3]);
    assert.deepEqual(
      textsOf(events, "samples"),
      new Map([...bySteps].map(([step, rows]) => [step, samplesMarkdown(rows)])),
    );

    // The programmatic sinks got each process's records, metrics as they are, evals prefixed;
    // they are not closed by the run.
    const all = [...first.records, ...second.records];
    assert.deepEqual(all.filter((r) => !("eval/pass@1" in r)), metrics);
    assert.deepEqual(
      all.filter((r) => "eval/pass@1" in r).map((r) => [r.step, r["eval/pass@1"]]),
      evals.map((e) => [e.step, e["pass@1"]]),
    );
    assert.equal(first.closed || second.closed, false);

    // The CSVs: one row per record, across the resume.
    const csv = (await Deno.readTextFile(join(b.dir, RUN_FILES.metricsCsv))).trim().split("\n");
    assert.equal(csv.length, 1 + metrics.length);
    assert.equal(csv[0]!.split(",")[0], "step");
    const evalCsv = (await Deno.readTextFile(join(b.dir, RUN_FILES.evalCsv))).trim().split("\n");
    assert.equal(evalCsv.length, 1 + evals.length);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
