import assert from "node:assert/strict";
import { join } from "node:path";
import { StalenessGate } from "@rlvr/infra";
import { loadConfig } from "../config/load.ts";
import { runTraining } from "./run.ts";
import { loadSchedulerState, STATE_FILES } from "./state.ts";
import { quiet, records, withoutTiming } from "./_run_test_util.ts";

const SMALL = [
  "rollout.batchSize=8",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=8",
  "optimizer.lr=1e-3",
  "rollout.maxNewTokens=6",
  "trainer.evalEvery=0",
  "trainer.evalProblems=4",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "trainer.samplesEvery=1",
  "trainer.samplesCount=2",
  "trainer.saveEvery=0",
  "trainer.device=cpu",
];

Deno.test("one_step_off: every batch is one version old, and stopping after step 2 then resuming equals an uninterrupted run", async () => {
  const root = await Deno.makeTempDir();
  try {
    const opts = (name: string) => ({
      out: root,
      steps: "5",
      seed: "3",
      set: [
        ...SMALL,
        "rollout.mode=one_step_off",
        "algorithm.lossOptions.offPolicy.tis.cap=2",
        `output.name=${name}`,
      ],
    });
    const full = await runTraining(await loadConfig(opts("full")), quiet);
    const m = await records(full.dir, "metrics.jsonl");
    assert.deepEqual(m.map((r) => r["rollout/policy_version"]), [0, 0, 1, 2, 3]);
    assert.deepEqual(m.map((r) => r["rollout/staleness"]), [0, 1, 1, 1, 1]);
    // step 1 is on-policy (the sampler and learner agree to rounding); then the sampler is one
    // update behind the learner and its log-probs differ from the recomputed ones
    assert.ok((m[0]!.sampler_logprob_diff as number) < 1e-6);
    assert.ok((m[2]!.sampler_logprob_diff as number) > 1e-4);

    const first = await runTraining(await loadConfig(opts("split")), { ...quiet, stopAfter: 2 });
    assert.equal(first.step, 2);
    // the checkpoint holds the batch generated for step 3 under version 1
    const saved = await loadSchedulerState(join(first.dir, "checkpoints/step-2"));
    assert.deepEqual(saved?.ready.map((b) => [b.job.key, b.policyVersion]), [[3, 1]]);
    const second = await runTraining(await loadConfig({ resume: first.dir }), quiet);
    assert.equal(second.step, 5);
    for (const file of ["metrics.jsonl", "samples.jsonl"]) {
      assert.deepEqual(
        withoutTiming(await records(second.dir, file)),
        withoutTiming(await records(full.dir, file)),
        file,
      );
    }
    for (const f of ["model.safetensors", STATE_FILES.optimizerBin, STATE_FILES.data]) {
      assert.deepEqual(
        await Deno.readFile(join(second.dir, "checkpoints/step-5", f)),
        await Deno.readFile(join(full.dir, "checkpoints/step-5", f)),
        f,
      );
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("async with 2 workers: no batch is used with staleness > η, and the run records the gate's histogram", async () => {
  const root = await Deno.makeTempDir();
  try {
    for (const eta of [0, 1, 2]) {
      const r = await runTraining(
        await loadConfig({
          out: root,
          steps: "6",
          set: [
            ...SMALL,
            "rollout.mode=async",
            "rollout.workers=2",
            `rollout.maxStaleness=${eta}`,
            "trainer.saveEvery=3",
            `output.name=eta${eta}`,
          ],
        }),
        quiet,
      );
      assert.equal(r.step, 6);
      const m = await records(r.dir, "metrics.jsonl");
      assert.deepEqual(m.map((x) => x.step), [1, 2, 3, 4, 5, 6]);
      for (const x of m) {
        const s = x["rollout/staleness"] as number;
        assert.ok(s >= 0 && s <= eta, `η ${eta}: step ${x.step} staleness ${s}`);
        assert.equal(x["rollout/policy_version"], (x.step as number) - 1 - s);
      }
      const gate = StalenessGate.fromJSON(
        JSON.parse(await Deno.readTextFile(join(r.dir, "staleness.json"))),
      );
      assert.equal(gate.maxStaleness, eta);
      assert.equal(gate.counts.used, 6);
      assert.equal(gate.histogram.count, 6 + gate.counts.dropped);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("one_step_off with model.lora: workers get the merged weights; the run trains, saves the merged model and resumes exactly", async () => {
  const root = await Deno.makeTempDir();
  try {
    const opts = (name: string) => ({
      out: root,
      steps: "3",
      set: [
        ...SMALL,
        "rollout.mode=one_step_off",
        "model.lora={rank: 4, alpha: 8, targetModules: [q_proj, v_proj, up_proj]}",
        "optimizer.lr=1e-2",
        `output.name=${name}`,
      ],
    });
    const full = await runTraining(await loadConfig(opts("full")), quiet);
    assert.equal(full.step, 3);
    const m = await records(full.dir, "metrics.jsonl");
    assert.deepEqual(m.map((x) => x["rollout/policy_version"]), [0, 0, 1]);
    // step 1 is on-policy: fresh adapters (B = 0) merge to the base bit for bit
    assert.ok((m[0]!.sampler_logprob_diff as number) < 1e-6);
    assert.ok(m.every((x) => Number.isFinite(x.grad_norm as number)));
    await Deno.stat(join(full.dir, "checkpoints/step-3/merged/model.safetensors"));
    // resumed after step 1, the workers get the merged weights of the restored adapters
    const first = await runTraining(await loadConfig(opts("split")), { ...quiet, stopAfter: 1 });
    const second = await runTraining(await loadConfig({ resume: first.dir }), quiet);
    assert.equal(second.step, 3);
    assert.deepEqual(
      withoutTiming(await records(second.dir, "metrics.jsonl")),
      withoutTiming(m),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("async with rollout.partial: the run completes; batches are judged by their oldest token", async () => {
  const root = await Deno.makeTempDir();
  try {
    const r = await runTraining(
      await loadConfig({
        out: root,
        steps: "5",
        set: [
          ...SMALL,
          "rollout.mode=async",
          "rollout.workers=2",
          "rollout.maxStaleness=1",
          "rollout.partial=true",
          "algorithm.lossOptions.offPolicy.tis.cap=2",
          "trainer.saveEvery=2",
          "output.name=partial",
        ],
      }),
      quiet,
    );
    assert.equal(r.step, 5);
    const m = await records(r.dir, "metrics.jsonl");
    assert.deepEqual(m.map((x) => x.step), [1, 2, 3, 4, 5]);
    for (const x of m) {
      const oldest = x["rollout/policy_version"] as number;
      const newest = x["rollout/policy_version_newest"] as number;
      assert.ok(oldest <= newest && newest <= (x.step as number) - 1, JSON.stringify(x));
      assert.ok((x.step as number) - 1 - oldest <= 1, `staleness of the oldest token > η`);
      const mixed = x["rollout/mixed_version_frac"] as number;
      assert.ok(mixed >= 0 && mixed <= 1);
      if (oldest === newest) assert.equal(mixed, 0);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("rollout.mode: config errors name the key and the fix", async () => {
  for (
    const [set, why] of [
      [[], /rollout\.mode is sync/],
      [["rollout.mode=async", "rollout.nats=nats://127.0.0.1:4222"], /rollout\.nats is set/],
    ] as const
  ) {
    await assert.rejects(
      loadConfig({ set: ["rollout.partial=true", ...set] }),
      new RegExp(`rollout\\.partial: true, but ${why.source}.*set rollout\\.partial to false`, "s"),
    );
  }
  // LoRA with rollout workers is accepted (they receive merged weights)
  await loadConfig({
    set: ["rollout.mode=one_step_off", "model.lora={rank: 4, alpha: 8, targetModules: [q_proj]}"],
  });
  await assert.rejects(
    loadConfig({ set: ["rollout.nats=nats://127.0.0.1:4222"] }),
    /rollout\.nats.*set rollout\.mode to one_step_off or async/s,
  );
  await assert.rejects(loadConfig({ set: ["rollout.mode=later"] }), /rollout\.mode/);
  await assert.rejects(loadConfig({ set: ["rollout.workers=0"] }), /rollout\.workers/);
});
