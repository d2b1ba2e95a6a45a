import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bf16ToF32, f32ToBf16 } from "@rlvr/tensor";
import { loadConfig } from "../config/load.ts";
import { REQUIRED_METRICS } from "../run/records.ts";
import { LORA_FILES } from "./lora.ts";
import { loadPolicy } from "./policy.ts";
import { runTraining } from "./run.ts";
import { STATE_FILES } from "./state.ts";
import { quiet, records, withoutTiming } from "./_run_test_util.ts";

// Small enough for a 2-core machine, large enough to exercise every part of a step: groups,
// two micro-batches, two PPO epochs, the reference model (β > 0), evaluation, samples.
const SMALL = [
  "rollout.batchSize=8",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=4",
  "algorithm.ppoEpochs=2",
  "algorithm.kl.beta=0.04",
  "optimizer.lr=1e-3",
  "rollout.maxNewTokens=6",
  "trainer.evalEvery=2",
  "trainer.evalProblems=4",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "trainer.samplesEvery=1",
  "trainer.samplesCount=2",
  "trainer.saveEvery=0",
];

Deno.test("runTraining: stopping after step 2 and resuming gives the metrics, evaluations, samples and weights of an uninterrupted run", async () => {
  const root = await Deno.makeTempDir();
  try {
    const opts = (name: string) => ({
      out: root,
      steps: "4",
      seed: "5",
      set: [...SMALL, `output.name=${name}`],
    });
    const full = await runTraining(await loadConfig(opts("full")), quiet);
    assert.equal(full.step, 4);
    assert.equal(full.interrupted, false);

    const first = await runTraining(await loadConfig(opts("split")), { ...quiet, stopAfter: 2 });
    assert.equal(first.step, 2);
    assert.equal(first.interrupted, true);
    const second = await runTraining(await loadConfig({ resume: first.dir }), quiet);
    assert.equal(second.step, 4);
    assert.equal(second.before, null); // resumed past the step-0 evaluation

    for (const file of ["metrics.jsonl", "eval.jsonl", "samples.jsonl"]) {
      const a = withoutTiming(await records(full.dir, file));
      const b = withoutTiming(await records(second.dir, file));
      assert.ok(a.length > 0, file);
      assert.deepEqual(b, a, file);
    }
    // The final weights and optimizer state are the same bytes.
    for (const f of ["model.safetensors", STATE_FILES.optimizerBin, STATE_FILES.data]) {
      assert.deepEqual(
        await Deno.readFile(join(second.dir, "checkpoints/step-4", f)),
        await Deno.readFile(join(full.dir, "checkpoints/step-4", f)),
        f,
      );
    }
    // Every record has every required key, no NaN, and the KL is reported (β > 0).
    const metrics = await records(full.dir, "metrics.jsonl");
    assert.deepEqual(metrics.map((m) => m.step), [1, 2, 3, 4]);
    for (const m of metrics) {
      for (const key of REQUIRED_METRICS) assert.ok(key in m, `metrics lacks ${key}`);
      for (const [k, v] of Object.entries(m)) {
        assert.ok(v === null || Number.isFinite(v), `${k} = ${v}`);
      }
      assert.equal(typeof m.kl, "number");
    }
    assert.deepEqual((await records(full.dir, "eval.jsonl")).map((e) => e.step), [0, 2, 4]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining: trainer.activationCheckpointing gives the same metrics and weights, bit for bit (untied demo model)", async () => {
  const root = await Deno.makeTempDir();
  try {
    const run = async (ckpt: boolean) =>
      await runTraining(
        await loadConfig({
          out: root,
          steps: "2",
          seed: "3",
          set: [
            ...SMALL,
            `trainer.activationCheckpointing=${ckpt}`,
            `output.name=ckpt-${ckpt}`,
          ],
        }),
        quiet,
      );
    const plain = await run(false);
    const ckpt = await run(true);
    for (const file of ["metrics.jsonl", "eval.jsonl"]) {
      assert.deepEqual(
        withoutTiming(await records(ckpt.dir, file)),
        withoutTiming(await records(plain.dir, file)),
        file,
      );
    }
    assert.deepEqual(
      await Deno.readFile(join(ckpt.dir, "checkpoints", "step-2", "model.safetensors")),
      await Deno.readFile(join(plain.dir, "checkpoints", "step-2", "model.safetensors")),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining: with β = 0 no KL is reported; a checkpoint holds model, optimizer, RNG, data and tokenizer", async () => {
  const root = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({
      out: root,
      steps: "1",
      set: [...SMALL.filter((s) => !s.startsWith("algorithm.kl.beta")), "algorithm.kl.beta=0"],
    });
    const r = await runTraining(loaded, quiet);
    const [m] = await records(r.dir, "metrics.jsonl");
    assert.equal(m!.kl, null);
    const files = [];
    for await (const e of Deno.readDir(join(r.dir, "checkpoints/step-1"))) files.push(e.name);
    for (
      const f of [
        "COMPLETE",
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        ...Object.values(STATE_FILES),
      ]
    ) {
      assert.ok(files.includes(f), `checkpoint lacks ${f}: ${files.join(", ")}`);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining with model.lora: resume is exact; checkpoints hold adapters and optimizer, not the base; the last one has a merged HF model", async () => {
  const root = await Deno.makeTempDir();
  try {
    // SMALL with β > 0, so the reference (the base with the adapters detached) is exercised.
    const opts = (name: string) => ({
      out: root,
      steps: "3",
      seed: "2",
      set: [
        ...SMALL,
        "model.lora={rank: 4, alpha: 8, targetModules: [q_proj, v_proj]}",
        "optimizer.lr=1e-2",
        `output.name=${name}`,
      ],
    });
    const full = await runTraining(await loadConfig(opts("full")), quiet);
    const first = await runTraining(await loadConfig(opts("split")), { ...quiet, stopAfter: 1 });
    assert.equal(first.step, 1);
    const second = await runTraining(await loadConfig({ resume: first.dir }), quiet);
    assert.equal(second.step, 3);
    for (const file of ["metrics.jsonl", "eval.jsonl", "samples.jsonl"]) {
      assert.deepEqual(
        withoutTiming(await records(second.dir, file)),
        withoutTiming(await records(full.dir, file)),
        file,
      );
    }
    const last = "checkpoints/step-3";
    for (const f of [LORA_FILES.adapters, STATE_FILES.optimizerBin, STATE_FILES.data]) {
      assert.deepEqual(
        await Deno.readFile(join(second.dir, last, f)),
        await Deno.readFile(join(full.dir, last, f)),
        f,
      );
    }
    // The step-1 checkpoint: adapters, optimizer, RNG, data, tokenizer; no base weights, no merge.
    const early = [...Deno.readDirSync(join(first.dir, "checkpoints/step-1"))].map((e) => e.name);
    assert.ok(early.includes(LORA_FILES.adapters) && early.includes(LORA_FILES.config), `${early}`);
    assert.ok(!early.includes("model.safetensors") && !early.includes(LORA_FILES.merged));
    const metrics = await records(full.dir, "metrics.jsonl");
    for (const m of metrics) {
      for (const [k, v] of Object.entries(m)) {
        assert.ok(v === null || Number.isFinite(v), `${k} = ${v}`);
      }
      assert.equal(typeof m.kl, "number");
    }
    assert.ok(metrics.some((m) => (m.grad_norm as number) > 0), "the adapters got a gradient");
    // The merged folder loads as a plain policy; the weights LoRA does not target are the base's
    // bit for bit (the run never wrote the base), the targeted ones differ by the update.
    const merged = await loadPolicy(join(full.dir, last, LORA_FILES.merged));
    const base = await loadPolicy("builtin:tiny");
    try {
      assert.equal(merged.model.extension("lora"), undefined);
      let changed = 0;
      for (const [name, t] of merged.model.params) {
        const [a, b] = [await t.data(), await base.model.params.get(name)!.data()];
        const same = a.every((x, i) => x === b[i]);
        if (/\.(q_proj|v_proj)\.weight$/.test(name)) changed += same ? 0 : 1;
        else assert.ok(same, `${name} differs from the base`);
      }
      assert.equal(changed, 2 * merged.model.config.numLayers);
    } finally {
      merged.model.dispose();
      base.model.dispose();
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining with model.lora and model.storage bf16: the base is held as bf16 (the merged model's untargeted weights are the base's rounded to bf16); a bad value names the choices", async () => {
  const root = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({
      out: root,
      steps: "2",
      set: [
        ...SMALL,
        "model.lora={rank: 4, alpha: 8, targetModules: [q_proj]}",
        "model.storage=bf16",
        "output.name=bf16",
      ],
    });
    const run = await runTraining(loaded, quiet);
    const metrics = await records(run.dir, "metrics.jsonl");
    assert.equal(metrics.length, 2);
    for (const m of metrics) {
      assert.ok(Number.isFinite(m["reward/mean"] as number), `reward ${m["reward/mean"]}`);
    }
    const merged = await loadPolicy(join(run.dir, "checkpoints/step-2", LORA_FILES.merged));
    const base = await loadPolicy("builtin:tiny");
    try {
      let rounded = 0;
      for (const [name, t] of merged.model.params) {
        if (/\.q_proj\.weight$/.test(name)) continue;
        const want = bf16ToF32(
          f32ToBf16(Float32Array.from(await base.model.params.get(name)!.data())),
        );
        assert.deepEqual([...await t.data()], [...want], name);
        const orig = await base.model.params.get(name)!.data();
        if (want.some((x, i) => x !== orig[i])) rounded++;
      }
      assert.ok(rounded > 0, "some base weights needed rounding, so the test can fail");
    } finally {
      merged.model.dispose();
      base.model.dispose();
    }
    await assert.rejects(
      () => loadConfig({ out: root, set: [...SMALL, "model.storage=f16"] }),
      /model\.storage/,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining: task.formatWeight > 0 logs format/mean and reward = accuracy + weight x format; 0 logs no format key", async () => {
  const root = await Deno.makeTempDir();
  try {
    const run = async (weight: number) => {
      const loaded = await loadConfig({
        out: root,
        steps: "1",
        set: [
          ...SMALL,
          "algorithm.kl.beta=0",
          `task.formatWeight=${weight}`,
          `output.name=w${weight}`,
        ],
      });
      return (await records((await runTraining(loaded, quiet)).dir, "metrics.jsonl"))[0]!;
    };
    const on = await run(0.5);
    const off = await run(0);
    assert.equal(
      on["reward/mean"],
      (on["accuracy/mean"] as number) + 0.5 * (on["format/mean"] as number),
    );
    assert.equal("format/mean" in off, false);
    assert.equal(off["reward/mean"], off["accuracy/mean"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

// Two steps of 4 responses, a 2-problem evaluation: the smallest run that checkpoints and resumes.
const TINY_RUN = [
  "rollout.batchSize=4",
  "rollout.groupSize=2",
  "algorithm.microBatchSize=4",
  "rollout.maxNewTokens=4",
  "trainer.evalProblems=2",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "trainer.samplesEvery=0",
  "trainer.device=cpu",
];

Deno.test("runTraining holds its run's lock: deno task train --resume of it meanwhile exits 2 naming this PID, and the records stay whole", async () => {
  const root = await Deno.makeTempDir();
  try {
    const main = fileURLToPath(new URL("../main.ts", import.meta.url));
    let second: Deno.CommandOutput | null = null;
    let dir = "";
    const r = await runTraining(
      await loadConfig({ out: root, steps: "2", set: [...TINY_RUN, "output.name=held"] }),
      {
        ...quiet,
        // A second process while this run is between steps 1 and 2.
        onStep: async (m) => {
          if (m.step !== 1) return;
          dir = join(root, "held");
          second = await new Deno.Command(Deno.execPath(), {
            args: ["run", "-A", main, "--resume", dir],
            stdout: "piped",
            stderr: "piped",
            env: { NO_COLOR: "1" },
          }).output();
        },
      },
    );
    const out = second as Deno.CommandOutput | null;
    assert.ok(out !== null);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.match(stderr, new RegExp(`is in use by PID ${Deno.pid} on `));
    assert.equal(r.dir, dir);
    assert.deepEqual((await records(r.dir, "metrics.jsonl")).map((m) => m.step), [1, 2]);
    assert.deepEqual((await records(r.dir, "eval.jsonl")).map((m) => m.step), [0, 2]);
    // Released at the end: resuming it now works (nothing left to train).
    const again = await runTraining(await loadConfig({ resume: r.dir }), quiet);
    assert.equal(again.step, 2);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining: a model that fails to load, or a run that cannot fit it, leaves no run directory", async () => {
  const root = await Deno.makeTempDir();
  try {
    const broken = join(root, "broken-model");
    await Deno.mkdir(broken);
    await Deno.writeTextFile(join(broken, "config.json"), "{not json");
    await assert.rejects(
      runTraining(
        await loadConfig({ out: join(root, "runs"), model: broken, steps: "1", set: TINY_RUN }),
        quiet,
      ),
    );
    // The tiny policy has 256 positions; 300 new tokens after a prompt cannot fit.
    await assert.rejects(
      runTraining(
        await loadConfig({
          out: join(root, "runs"),
          steps: "1",
          set: [...TINY_RUN, "rollout.maxNewTokens=300"],
        }),
        quiet,
      ),
      /^Error: rollout\.maxNewTokens: 300 new tokens after a prompt \(1 tokens\) need 301 positions, but builtin:tiny has 256 \(max_position_embeddings in its config\.json\), and past them .*; set rollout\.maxNewTokens to 255 or less/,
    );
    await assert.rejects(
      runTraining(
        await loadConfig({
          out: join(root, "runs"),
          steps: "1",
          set: [...TINY_RUN, "rollout.maxNewTokens=250"],
        }),
        quiet,
      ),
      /^Error: rollout\.maxNewTokens: 250 new tokens after the longest prompt of task arithmetic \(of \d+ drawn\) \(7 tokens\) need 257 positions, .*set rollout\.maxNewTokens to 249 or less/,
    );
    // A batch that cannot fit the memory the run may use is refused before it is allocated.
    const lines: string[] = [];
    await assert.rejects(
      runTraining(
        await loadConfig({
          out: join(root, "runs"),
          steps: "1",
          set: [...TINY_RUN, "rollout.batchSize=4096", "rollout.maxNewTokens=200"],
        }),
        { ...quiet, log: (l) => lines.push(l), memoryLimit: 256 * 2 ** 20 },
      ),
      /^Error: rollout\.batchSize: 4096 needs at least \d+\.\d MiB of memory \(rollout KV cache .*: 4096 sequences x 2 layers x 2 x 4 KV heads x 16 dims x 207 positions x 4 bytes; .*\), but the run may use \(memoryLimit\) 256\.0 MiB; lower rollout\.batchSize/,
    );
    const runs = join(root, "runs");
    const left = existsSync(runs) ? [...Deno.readDirSync(runs)].map((e) => e.name) : [];
    assert.deepEqual(left, [], "no run directory was left");
    assert.ok(!lines.some((l) => l.startsWith("run directory:")), lines.join("\n"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining --data: rows too long for the model are skipped and counted, never run", async () => {
  const root = await Deno.makeTempDir();
  try {
    const rows = Array.from(
      { length: 30 },
      (_, i) => ({ prompt: `${i}+${i}=`, answer: `${2 * i}` }),
    );
    rows.push({ prompt: "1+".repeat(5000) + "1=", answer: "5001" }); // 10,002 characters
    const data = join(root, "long.jsonl");
    await Deno.writeTextFile(data, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const lines: string[] = [];
    const t0 = performance.now();
    const r = await runTraining(
      await loadConfig({
        out: root,
        data,
        steps: "2",
        set: [...TINY_RUN, "task.data.testFraction=0.2", "trainer.samplesEvery=1"],
      }),
      { ...quiet, log: (l) => lines.push(l) },
    );
    assert.equal(r.step, 2);
    assert.ok(
      lines.some((l) =>
        /^data: skipped 1 of 31 rows of .*long\.jsonl whose prompt is longer than the 256 positions of builtin:tiny less rollout\.maxNewTokens 4 \(the longest: .*long\.jsonl:31, 10003 tokens\)/
          .test(l)
      ),
      lines.join("\n"),
    );
    const sampled = await records(r.dir, "samples.jsonl");
    assert.ok(sampled.length > 0 && sampled.every((s) => (s.prompt as string).length < 100));
    // The row that took minutes and gigabytes is gone: two steps take seconds.
    assert.ok(performance.now() - t0 < 60_000);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining --resume: a damaged latest checkpoint falls back to the one before with a warning", async () => {
  const root = await Deno.makeTempDir();
  try {
    const opts = (name: string) => ({
      out: root,
      steps: "3",
      set: [...TINY_RUN, "trainer.saveEvery=1", `output.name=${name}`],
    });
    const full = await runTraining(await loadConfig(opts("full")), quiet);
    const first = await runTraining(await loadConfig(opts("cut")), { ...quiet, stopAfter: 2 });
    assert.equal(first.step, 2);
    // The step-2 weights are cut short after the checkpoint was complete.
    const weights = join(first.dir, "checkpoints", "step-2", "model.safetensors");
    const bytes = await Deno.readFile(weights);
    await Deno.writeFile(weights, bytes.slice(0, bytes.length >> 1));
    const lines: string[] = [];
    const second = await runTraining(await loadConfig({ resume: first.dir }), {
      ...quiet,
      log: (l) => lines.push(l),
    });
    assert.equal(second.step, 3);
    assert.ok(
      lines.some((l) =>
        /^warning: checkpoint step-2 of .* is damaged \(model\.safetensors: \d+ bytes, COMPLETE recorded \d+\); moved it to checkpoints.step-2\.corrupt and resuming from the one before$/
          .test(l)
      ),
      lines.join("\n"),
    );
    assert.ok(lines.includes(`resume: ${first.dir} from step 1`), lines.join("\n"));
    // Steps 2 and 3 were trained again: the records are an uninterrupted run's.
    assert.deepEqual(
      withoutTiming(await records(second.dir, "metrics.jsonl")),
      withoutTiming(await records(full.dir, "metrics.jsonl")),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining: a new run that fails before its first step removes its directory; one that fails later keeps it", async () => {
  const root = await Deno.makeTempDir();
  try {
    const lines: string[] = [];
    const load = (name: string) =>
      loadConfig({ out: root, steps: "2", set: [...TINY_RUN, `output.name=${name}`] });
    await assert.rejects(
      runTraining(await load("early"), {
        ...quiet,
        log: (l) => lines.push(l),
        onEval: () => {
          throw new Error("boom before step 1");
        },
      }),
      /boom before step 1/,
    );
    assert.ok(!existsSync(join(root, "early")));
    assert.ok(
      lines.includes(`train: removed ${join(root, "early")}: the run failed before its first step`),
    );
    await assert.rejects(
      runTraining(await load("late"), {
        ...quiet,
        onStep: () => {
          throw new Error("boom at step 1");
        },
      }),
      /boom at step 1/,
    );
    assert.deepEqual((await records(join(root, "late"), "metrics.jsonl")).map((m) => m.step), [1]);
    // Its lock was released: it resumes.
    const resumed = await runTraining(await loadConfig({ resume: join(root, "late") }), quiet);
    assert.equal(resumed.step, 2);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("runTraining: trainer.evalProblems 0 trains without a held-out evaluation (no eval records, no before/after)", async () => {
  const root = await Deno.makeTempDir();
  try {
    const r = await runTraining(
      await loadConfig({
        out: root,
        steps: "2",
        set: [...TINY_RUN.filter((s) => !s.startsWith("trainer.eval")), "trainer.evalProblems=0"],
      }),
      quiet,
    );
    assert.equal(r.step, 2);
    assert.equal(r.before, null);
    assert.equal(r.after, null);
    assert.deepEqual(await records(r.dir, "eval.jsonl"), []);
    assert.deepEqual((await records(r.dir, "metrics.jsonl")).map((m) => m.step), [1, 2]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
