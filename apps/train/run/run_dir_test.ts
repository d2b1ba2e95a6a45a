import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RUN_FILES, RunDir } from "./run_dir.ts";
import { REQUIRED_METRICS } from "./records.ts";

/**
 * A stand-in for a deterministic trainer: every number of step s is a function of (seed, s)
 * only, as it is for a real run whose RNG state and data position are restored from the
 * checkpoint. Writes steps `from..to`, with evals every 3 steps, samples every 4 and a
 * checkpoint every `saveEvery` steps (files first, COMPLETE last).
 */
async function fakeTrain(run: RunDir, from: number, to: number, saveEvery = 5): Promise<void> {
  for (let step = from; step <= to; step++) {
    const x = Math.sin(step * 12.9898) * 43758.5453;
    const noise = x - Math.floor(x);
    const record: Record<string, number | null> = {};
    for (const key of REQUIRED_METRICS) record[key] = noise;
    record.step = step;
    record.kl = step === 1 ? null : noise / 10;
    await run.appendMetrics(record);
    if (step % 3 === 0) {
      await run.appendEval({ step, "pass@1": noise / 2, "pass@k": noise, k: 4, n: 8 });
    }
    if (step % 4 === 0) {
      await run.appendSample({ step, prompt: `p${step}`, completion: `c${step}`, reward: noise });
    }
    if (step % saveEvery === 0) {
      const dir = await run.beginCheckpoint(step);
      await Deno.writeTextFile(join(dir, "state.json"), JSON.stringify({ step, noise }));
      await run.completeCheckpoint(step);
    }
  }
}

async function snapshot(run: RunDir): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of ["metrics", "eval", "samples"] as const) {
    out[f] = await Deno.readTextFile(run.file(f));
  }
  return out;
}

Deno.test("RunDir: create (suffix or error on an existing run), open, config, records", async () => {
  const root = await Deno.makeTempDir();
  try {
    const run = await RunDir.create(root, "exp");
    await run.writeConfig("a: 1\n");
    assert.equal(await run.readConfigText(), "a: 1\n");
    assert.ok(Deno.statSync(run.file("checkpoints")).isDirectory);
    await assert.rejects(
      RunDir.create(root, "exp", { ifExists: "error" }),
      /already exists; pass --resume/,
    );
    const second = await RunDir.create(root, "exp");
    assert.equal(second.path, join(root, "exp-2"));
    await assert.rejects(RunDir.create(root, "../up"), /one directory name/);
    await assert.rejects(RunDir.open(join(root, "nothing")), /has no config\.yaml/);
    const opened = await RunDir.open(run.path);
    assert.equal(opened.path, run.path);
    // an empty existing directory is reused
    await Deno.mkdir(join(root, "empty"));
    assert.equal((await RunDir.create(root, "empty")).path, join(root, "empty"));
    await fakeTrain(run, 1, 4);
    assert.deepEqual((await run.readMetrics()).map((m) => m.step), [1, 2, 3, 4]);
    assert.deepEqual((await run.readEval()).map((m) => m.step), [3]);
    assert.deepEqual((await run.readSamples()).map((m) => m.completion), ["c4"]);
    await assert.rejects(
      run.appendMetrics({ ...(await run.readMetrics())[0]! }),
      /step 1 after step 4/,
    );
    await assert.rejects(run.appendEval({ step: 1 }), /pass@1/);
    await run.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("RunDir.resume after a simulated crash: partial lines ignored on read and removed, incomplete checkpoint dropped", async () => {
  const root = await Deno.makeTempDir();
  try {
    const run = await RunDir.create(root, "crash");
    await run.writeConfig("x: 1\n");
    await fakeTrain(run, 1, 12, 5); // complete checkpoints at 5 and 10
    await run.beginCheckpoint(12); // the crash hit while step 12's checkpoint was written
    await run.close();
    // ... and in the middle of a metrics line and a samples line
    await Deno.writeTextFile(run.file("metrics"), '{"step":13,"reward/me', { append: true });
    await Deno.writeTextFile(run.file("samples"), '{"step":16,"prompt":"p', { append: true });

    const reopened = await RunDir.open(run.path);
    assert.deepEqual(
      (await reopened.readMetrics()).map((m) => m.step).at(-1),
      12,
      "partial line ignored",
    );
    // appending before resuming is refused: it would glue a record to the fragment
    await assert.rejects(
      reopened.appendSample({ step: 13, prompt: "", completion: "", reward: 0 }),
      /partial line/,
    );

    const info = await reopened.resume();
    assert.equal(info.checkpoint!.step, 10);
    assert.deepEqual(info.removedCheckpoints, [12]);
    assert.deepEqual(info.dropped, { metrics: 2, eval: 1, samples: 1, evalSamples: 0 }); // steps 11-12, eval 12, sample 12
    assert.deepEqual(info.partialLines.sort(), ["metrics", "samples"]);
    assert.deepEqual((await reopened.readMetrics()).map((m) => m.step), [
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8,
      9,
      10,
    ]);
    assert.deepEqual((await reopened.readEval()).map((m) => m.step), [3, 6, 9]);
    assert.deepEqual((await reopened.readSamples()).map((m) => m.step), [4, 8]);
    assert.deepEqual((await reopened.checkpoints()).map((c) => c.step), [5, 10]);
    assert.ok(!(await Deno.readTextFile(reopened.file("metrics"))).includes('reward/me"'));
    await reopened.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("RunDir.resume: a deterministic run resumed after a crash ends byte-identical to an uninterrupted one", async () => {
  const root = await Deno.makeTempDir();
  try {
    const straight = await RunDir.create(root, "straight");
    await fakeTrain(straight, 1, 20);
    await straight.close();

    const crashed = await RunDir.create(root, "crashed");
    await crashed.writeConfig("x: 1\n");
    await fakeTrain(crashed, 1, 13);
    await crashed.close();
    await Deno.writeTextFile(crashed.file("eval"), '{"step":14,', { append: true });

    const resumed = await RunDir.open(crashed.path);
    const info = await resumed.resume();
    assert.equal(info.checkpoint!.step, 10);
    await fakeTrain(resumed, info.checkpoint!.step + 1, 20);
    await resumed.close();

    assert.deepEqual(await snapshot(resumed), await snapshot(straight));
    assert.deepEqual(
      (await resumed.checkpoints()).map((c) => [c.step, c.complete]),
      (await straight.checkpoints()).map((c) => [c.step, c.complete]),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("RunDir.resume without a complete checkpoint empties the files (restart from scratch)", async () => {
  const root = await Deno.makeTempDir();
  try {
    const run = await RunDir.create(root, "early");
    await fakeTrain(run, 1, 3);
    const info = await run.resume();
    assert.equal(info.checkpoint, null);
    assert.deepEqual(await run.readMetrics(), []);
    await fakeTrain(run, 1, 2);
    assert.deepEqual((await run.readMetrics()).map((m) => m.step), [1, 2]);
    await run.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test({
  name:
    "RunDir: a writer process killed with SIGKILL leaves a run that resumes to its last complete checkpoint",
  ignore: Deno.build.os === "windows",
  async fn() {
    const root = await Deno.makeTempDir();
    try {
      const runDirUrl = new URL("./run_dir.ts", import.meta.url).href;
      const script = join(root, "writer.ts");
      // Writes steps forever, a checkpoint every 4 steps; big padding makes each line many
      // kilobytes, so a kill can land in any phase of the loop.
      await Deno.writeTextFile(
        script,
        `import { RunDir } from ${JSON.stringify(runDirUrl)};
const run = await RunDir.create(Deno.args[0], "killed");
await run.writeConfig("x: 1\\n");
const pad = "p".repeat(50000);
for (let step = 1; ; step++) {
  const r = { step, pad: 0 };
  for (const k of ${JSON.stringify(REQUIRED_METRICS)}) if (k !== "step") r[k] = step / 1000;
  await run.appendMetrics(r);
  await run.appendSample({ step, prompt: pad, completion: pad, reward: 0 });
  if (step % 4 === 0) {
    const dir = await run.beginCheckpoint(step);
    await Deno.writeTextFile(dir + "/state.bin", pad);
    await run.completeCheckpoint(step);
  }
}
`,
      );
      // The script lives outside the workspace: --config gives it the workspace's packages
      // (run_dir.ts imports @rlvr/common and @rlvr/infra).
      const config = fileURLToPath(new URL("../../../deno.json", import.meta.url));
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--config", config, script, root],
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const metrics = join(root, "killed", RUN_FILES.metrics);
      const t0 = performance.now();
      for (;;) {
        await new Promise((r) => setTimeout(r, 20));
        const text = await Deno.readTextFile(metrics).catch(() => "");
        if (text.split("\n").length > 25) break;
        if (performance.now() - t0 > 15_000) {
          child.kill("SIGKILL");
          await child.status;
          assert.fail("the writer did not reach step 25 within 15 s");
        }
      }
      child.kill("SIGKILL");
      const status = await child.status;
      await child.stderr.cancel();
      assert.equal(status.signal, "SIGKILL");

      const run = await RunDir.open(join(root, "killed"));
      const before = (await run.readMetrics()).map((m) => m.step);
      assert.deepEqual(before, before.map((_, i) => i + 1), "complete lines are contiguous steps");
      const info = await run.resume();
      const k = info.checkpoint!.step;
      assert.equal(k % 4, 0);
      assert.ok(k >= 20, `latest complete checkpoint ${k}`);
      assert.deepEqual(
        (await run.readMetrics()).map((m) => m.step),
        Array.from({ length: k }, (_, i) => i + 1),
      );
      assert.ok((await run.readSamples()).every((s) => s.step <= k));
      assert.ok((await run.checkpoints()).every((c) => c.complete));
      await run.close();
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("RunDir.resume: a damaged latest checkpoint is moved aside and the run resumes from the one before", async () => {
  const root = await Deno.makeTempDir();
  try {
    const run = await RunDir.create(root, "damaged");
    await run.writeConfig("x: 1\n");
    await fakeTrain(run, 1, 12, 5); // checkpoints 5 and 10
    await run.close();
    const expected = await snapshot(run);
    // step-10 was complete; then its file was cut short (a full disk while copying it, say).
    const state = join(run.file("checkpoints"), "step-10", "state.json");
    await Deno.writeTextFile(state, '{"step": 10, "no');

    const info = await run.resume();
    assert.equal(info.checkpoint!.step, 5);
    assert.deepEqual(
      info.corruptCheckpoints.map((c) => [c.step, c.movedTo]),
      [[10, join("checkpoints", "step-10.corrupt")]],
    );
    assert.match(
      info.corruptCheckpoints[0]!.reason,
      /^state\.json: 16 bytes, COMPLETE recorded \d+$/,
    );
    assert.deepEqual((await run.readMetrics()).map((m) => m.step), [1, 2, 3, 4, 5]);
    assert.deepEqual((await run.checkpoints()).map((c) => c.step), [5]);
    // Training again from step 6 writes step-10 anew and ends where an undamaged run ends.
    await fakeTrain(run, 6, 12, 5);
    await run.close();
    assert.deepEqual(await snapshot(run), expected);
    assert.deepEqual((await run.checkpoints()).map((c) => [c.step, c.complete]), [
      [5, true],
      [10, true],
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
