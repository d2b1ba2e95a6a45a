import assert from "node:assert/strict";
import { join } from "node:path";
import { getBackend } from "@rlvr/tensor";
import { webgpuSuite } from "@rlvr/tensor/testing";
import { loadConfig } from "../config/load.ts";
import { readJsonl } from "../run/jsonl.ts";
import {
  deviceLine,
  readDeviceRecords,
  recordDevice,
  selectTrainDevice,
  type TrainDevice,
} from "./device.ts";
import { evalMain } from "./eval_main.ts";
import { runTraining } from "./run.ts";

Deno.test("selectTrainDevice: cpu is the process's CPU backend and looks for no adapter; a bad choice names trainer.device", async () => {
  const d = await selectTrainDevice("cpu");
  assert.equal(d.backend, getBackend());
  assert.deepEqual([d.device, d.choice, d.reason, d.adapter], ["cpu", "cpu", "requested", null]);
  assert.equal(deviceLine(d), "device: cpu (trainer.device cpu: requested)");
  await assert.rejects(selectTrainDevice("gpu"), /got "gpu" \(from trainer\.device\)/);
});

Deno.test("recordDevice: device.json keeps one entry per process, in order", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cpu = await selectTrainDevice("cpu");
    const fake: TrainDevice = { ...cpu, choice: "auto", reason: "no adapter" };
    await recordDevice(dir, cpu, 0);
    const all = await recordDevice(dir, fake, 7);
    assert.deepEqual(all, await readDeviceRecords(dir));
    assert.deepEqual(all.map((r) => [r.startStep, r.choice, r.reason]), [
      [0, "cpu", "requested"],
      [7, "auto", "no adapter"],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------------------------
// WebGPU (Mesa's software adapter here): the same run on both devices.

const suite = await webgpuSuite("train --device webgpu");
const gpuTest = (name: string, fn: () => Promise<void>) => suite.test(name, () => fn());

type Metrics = Record<string, number | null>;

async function twoSteps(root: string, device: string, config: string, set: string[]) {
  const loaded = await loadConfig({
    config,
    device,
    out: root,
    steps: "2",
    set: [...set, `output.name=${config}-${device}`],
  });
  const r = await runTraining(loaded, {
    log: () => {},
    progress: () => {},
    report: false,
    handleSignals: false,
  });
  const metrics = (await readJsonl<Metrics>(join(r.dir, "metrics.jsonl"))).records;
  return { r, metrics };
}

/**
 * Two 2-step runs sampled the same tokens: the same held-out pass@1 and lengths before and after,
 * the same rewards and response lengths at every step.
 */
function assertSameSamples(
  dev: Awaited<ReturnType<typeof twoSteps>>,
  host: Awaited<ReturnType<typeof twoSteps>>,
): void {
  for (const k of ["before", "after"] as const) {
    assert.deepEqual(
      [dev.r[k]!.passAt1, dev.r[k]!.meanLength],
      [host.r[k]!.passAt1, host.r[k]!.meanLength],
    );
  }
  for (const key of ["reward/mean", "response_length/mean"] as const) {
    assert.deepEqual(dev.metrics.map((m) => m[key]), host.metrics.map((m) => m[key]), key);
  }
}

// Tiny sizes (8 responses of at most 6 tokens, 4 held-out problems x 2 samples): the software
// adapter runs WGSL on the CPU at about 1 GFLOP/s, and both configs on both devices take about
// 20 s. Two configs together load a policy, a reference (β > 0) and a value head on the device
// and run two micro-batches and two PPO epochs through the update.
const SMALL = [
  "rollout.batchSize=8",
  "algorithm.microBatchSize=4",
  "rollout.maxNewTokens=6",
  "trainer.evalProblems=4",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
];

gpuTest(
  "a 2-step run with --device webgpu agrees with --device cpu at step 1 (GRPO with KL, PPO with a value head)",
  async () => {
    const root = await Deno.makeTempDir();
    try {
      for (
        const [config, set] of [
          ["grpo", [...SMALL, "rollout.groupSize=4", "algorithm.kl.beta=0.04"]],
          ["ppo", SMALL],
        ] as const
      ) {
        const gpu = await twoSteps(root, "webgpu", config, [...set]);
        const cpu = await twoSteps(root, "cpu", config, [...set]);
        assert.equal(gpu.r.device.device, "webgpu");
        assert.match(gpu.r.device.reason, /^requested; (software|hardware) adapter /);
        assert.deepEqual((await readDeviceRecords(gpu.r.dir)).map((d) => d.device), ["webgpu"]);
        assert.equal(cpu.r.device.device, "cpu");
        // Both steps finish and nothing is NaN.
        assert.deepEqual(gpu.metrics.map((m) => m.step), [1, 2]);
        for (const m of gpu.metrics) {
          for (const [k, v] of Object.entries(m)) {
            assert.ok(v === null || Number.isFinite(v), `${config} webgpu ${k} = ${v}`);
          }
        }
        const [g, c] = [gpu.metrics[0]!, cpu.metrics[0]!];
        const report = ["reward/mean", "pg_loss", "grad_norm", "entropy", "kl", "vf_loss"].map((
          k,
        ) => `${k} ${g[k]} vs ${c[k]}`);
        console.log(`${config} step 1, webgpu vs cpu: ${report.join("; ")}`);
        // Tolerances. The draws are keyed, so both devices sample the same tokens unless a logit
        // differs enough (here ~1e-6) to move a draw across a boundary: the rewards must be equal.
        // Losses are O(1) sums of f32 terms, computed with different kernels and summation orders:
        // absolute 1e-5 (GRPO's policy loss is ~1e-8, a sum that cancels, so no relative check).
        // The gradient norm and the entropy: relative 1e-4.
        assert.equal(g["reward/mean"], c["reward/mean"], `${config} reward`);
        assert.ok(Math.abs(g.pg_loss! - c.pg_loss!) <= 1e-5, `${config} pg_loss: ${report}`);
        for (const k of ["grad_norm", "entropy"]) {
          assert.ok(Math.abs(g[k]! - c[k]!) <= 1e-4 * Math.abs(c[k]!), `${config} ${k}: ${report}`);
        }
        assert.ok(c.grad_norm! > 0, `${config}: a zero gradient would compare nothing`);
        if (c.kl != null) assert.ok(Math.abs(g.kl! - c.kl) <= 1e-5, `${config} kl: ${report}`);
        if (c.vf_loss != null) {
          assert.ok(Math.abs(g.vf_loss! - c.vf_loss) <= 1e-5, `${config} vf_loss: ${report}`);
        }
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);

gpuTest(
  "rollout.decodeLoop=device: a 2-step GRPO run samples the host loop's tokens (same rewards)",
  async () => {
    const root = await Deno.makeTempDir();
    try {
      const set = [...SMALL, "rollout.groupSize=4"];
      const host = await twoSteps(root, "webgpu", "grpo", set);
      const dev = await twoSteps(root, "webgpu", "grpo", [...set, "rollout.decodeLoop=device"]);
      // Keyed draws: the device loop draws the same uniforms; its f32 logits and inverse CDF
      // differ from the host loop's by rounding only, so the same tokens and rewards come out
      // (a draw within ~1e-6 of a boundary could flip; these seeds are fixed).
      // The device loop did run: its sampler's log-probs come from other kernels, so they sit
      // at another (small) distance from the learner's recomputation than the host loop's.
      // The held-out evaluations (4 problems × 2 samples) run through the same loop.
      for (const k of ["before", "after"] as const) {
        assert.ok(dev.r[k] !== null);
        assert.deepEqual(
          [dev.r[k]!.passAt1, dev.r[k]!.meanLength],
          [host.r[k]!.passAt1, host.r[k]!.meanLength],
        );
      }
      const diffs = [dev, host].map((r) => r.metrics.map((m) => m.sampler_logprob_diff!));
      assert.notDeepEqual(diffs[0], diffs[1]);
      assert.ok(diffs[0]!.every((d) => d < 1e-5), `sampler_logprob_diff ${diffs[0]}`);
      assert.deepEqual(
        dev.metrics.map((m) => m["reward/mean"]),
        host.metrics.map((m) => m["reward/mean"]),
      );
      assert.deepEqual(
        dev.metrics.map((m) => m["response_length/mean"]),
        host.metrics.map((m) => m["response_length/mean"]),
      );
      assert.ok(Math.abs(dev.metrics[0]!.pg_loss! - host.metrics[0]!.pg_loss!) <= 1e-5);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);

gpuTest(
  "rollout.decodeLoop=device with model.lora: after a step the adapters are non-zero, and the device loop (weights with the adapters folded in) samples the host loop's tokens",
  async () => {
    const root = await Deno.makeTempDir();
    try {
      const set = [
        ...SMALL,
        "rollout.groupSize=4",
        "model.lora={rank: 4, alpha: 16, targetModules: [q_proj, v_proj, up_proj]}",
        "optimizer.lr=2e-2",
      ];
      const host = await twoSteps(root, "webgpu", "grpo", set);
      const dev = await twoSteps(root, "webgpu", "grpo", [...set, "rollout.decodeLoop=device"]);
      assertSameSamples(dev, host);
      // Step 2 samples with adapters one optimizer step away from zero: the learner (adapter
      // path) and the sampler (folded weights) still agree to rounding.
      const diffs = dev.metrics.map((m) => m.sampler_logprob_diff!);
      assert.ok(diffs.every((d) => d < 1e-5), `sampler_logprob_diff ${diffs}`);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);

gpuTest(
  "rollout.decodeLoop=device on tiny-vl: images through the prefill, decode steps on the GPU at the M-RoPE positions; the host loop's rewards and held-out numbers",
  async () => {
    const root = await Deno.makeTempDir();
    try {
      const set = [
        "model.checkpoint=builtin:tiny-vl",
        "task.name=count_shapes",
        "task.options={size: 56, shapeSize: [8, 10], count: [3, 6], distractors: [6, 8]}",
        "rollout.batchSize=8",
        "rollout.groupSize=4",
        "algorithm.microBatchSize=8",
        "rollout.maxNewTokens=60",
        "optimizer.lr=1e-3",
        "trainer.evalProblems=2",
        "trainer.evalSamples=2",
        "trainer.evalK=2",
      ];
      const host = await twoSteps(root, "webgpu", "grpo", set);
      const dev = await twoSteps(root, "webgpu", "grpo", [...set, "rollout.decodeLoop=device"]);
      assertSameSamples(dev, host);
      const diffs = dev.metrics.map((m) => m.sampler_logprob_diff!);
      assert.ok(diffs.every((d) => d < 1e-5), `sampler_logprob_diff ${diffs}`);
      assert.notDeepEqual(diffs, host.metrics.map((m) => m.sampler_logprob_diff!));
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);

gpuTest(
  "deno task eval --decode-loop device: the host loop's completions on WebGPU",
  async () => {
    const root = await Deno.makeTempDir();
    try {
      const run = async (loop: string) => {
        const out = join(root, loop);
        const flags = ["--problems", "6", "--samples", "2", "--device", "webgpu"];
        const r = await evalMain([...flags, "--decode-loop", loop, "--out", out], () => {});
        assert.ok(r !== null);
        return (await readJsonl<{ completion: string }>(join(out, "samples.jsonl"))).records;
      };
      const host = await run("host");
      const device = await run("device");
      assert.equal(device.length, 12);
      assert.deepEqual(device.map((s) => s.completion), host.map((s) => s.completion));
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);
