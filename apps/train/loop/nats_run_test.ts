// End-to-end: `runTraining` / `deno task train` with `rollout.nats`, against a real nats-server
// and real `deno task worker` subprocesses.
//
// Enabled once run.ts uses startNatsExecutors when config.rollout.nats is set (WIRED below).
import assert from "node:assert/strict";
import { join } from "node:path";
import { type NatsServer, natsTest } from "@rlvr/infra";
import { loadConfig } from "../config/load.ts";
import { readJsonl } from "../run/jsonl.ts";
import { runTraining } from "./run.ts";
import { ProcessLines, TINY, TRAIN_MAIN, WORKER } from "./_nats_test_util.ts";

/** Flip to true once run.ts starts NATS executors for `rollout.nats`. */
const WIRED = true;

function nats(name: string, fn: (server: NatsServer) => Promise<void>, timeoutMs: number): void {
  if (WIRED) natsTest(name, fn, { timeoutMs });
  else Deno.test({ name, ignore: true, fn: () => {} });
}

function worker(url: string, id: string, env: Record<string, string> = {}): ProcessLines {
  return new ProcessLines(id, [WORKER, "--nats", url, "--id", id, "--verbose"], env);
}

async function steps(runDir: string): Promise<number[]> {
  const { records } = await readJsonl<{ step: number }>(join(runDir, "metrics.jsonl"));
  return records.map((r) => r.step);
}

/** Resolves once `p` has printed `count` lines matching `re`. */
async function nthLine(p: ProcessLines, re: RegExp, count: number, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (p.lines.filter((l) => re.test(l)).length < count) {
    if (Date.now() > deadline) {
      throw new Error(
        `${p.name}: fewer than ${count} lines matching ${re}:\n${p.lines.join("\n")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ACK_WAIT_MS = "2000";

const quietRun = { progress: () => {}, report: false, handleSignals: false };

nats(
  "runTraining over NATS: async with two remote workers, one SIGKILLed mid-run, completes",
  async (server) => {
    const out = await Deno.makeTempDir();
    Deno.env.set("RLVR_NATS_ACK_WAIT_MS", ACK_WAIT_MS);
    // w1 freezes on the first job it takes (the worker's test hook) and is killed holding it
    const w1 = worker(server.url, "w1", { RLVR_WORKER_TEST_HANG_AFTER_TAKE: "1" });
    // w2 starts once w1 is dead, so w1 surely takes a job first
    let w2: ProcessLines | null = null;
    try {
      const loaded = await loadConfig({
        out,
        steps: "12",
        device: "cpu",
        set: [
          ...TINY,
          "rollout.mode=async",
          "rollout.workers=2",
          "rollout.maxStaleness=2",
          `rollout.nats=${server.url}`,
          "rollout.maxNewTokens=32",
          "rollout.sampler.temperature=8",
          "trainer.saveEvery=0",
        ],
      });
      const logs: string[] = [];
      const run = runTraining(loaded, {
        log: (l) => logs.push(l),
        progress: () => {},
        report: false,
        handleSignals: false,
      });
      run.catch(() => {}); // awaited below
      // w1 takes a job and freezes: kill it with the job taken and not acknowledged
      await nthLine(w1, /^take job \d+ \(\S+, delivery 1\)$/, 1);
      assert.equal((await w1.kill("SIGKILL")).signal, "SIGKILL");
      assert.ok(!w1.lines.some((l) => /^job \d+ v\d+ /.test(l)), w1.lines.join("\n"));
      w2 = worker(server.url, "w2");
      const result = await run;
      assert.equal(result.step, 12);
      assert.equal(result.interrupted, false);
      assert.deepEqual(await steps(result.dir), Array.from({ length: 12 }, (_, i) => i + 1));
      assert.ok(logs.some((l) => /NATS/.test(l)), logs.join("\n"));
      // w2 did every job, and the one w1 died with came back to it
      const survivor = w2;
      assert.ok(survivor.lines.some((l) => /^job \d+ v\d+ /.test(l)), survivor.lines.join("\n"));
      assert.ok(survivor.lines.some((l) => /delivery 2\)$/.test(l)), survivor.lines.join("\n"));
    } finally {
      Deno.env.delete("RLVR_NATS_ACK_WAIT_MS");
      await w1.kill();
      await w2?.kill();
      await Deno.remove(out, { recursive: true });
    }
  },
  240_000,
);

nats(
  "deno task train over NATS: a trainer SIGKILLed after its first checkpoint resumes and completes",
  async (server) => {
    const out = await Deno.makeTempDir();
    const w = worker(server.url, "w1");
    const env = { RLVR_NATS_ACK_WAIT_MS: ACK_WAIT_MS };
    let trainer: ProcessLines | null = null;
    try {
      const set = [
        ...TINY,
        "rollout.mode=async",
        "rollout.workers=2",
        `rollout.nats=${server.url}`,
        "trainer.saveEvery=2",
      ];
      trainer = new ProcessLines("trainer", [
        TRAIN_MAIN,
        "--out",
        out,
        "--steps",
        "6",
        "--device",
        "cpu",
        ...set.flatMap((s) => ["--set", s]),
      ], env);
      const runDir = (await trainer.waitFor(/^run directory: (.+)$/, 60_000))[1]!;
      const ckpt = join(runDir, "checkpoints", "step-2", "model.safetensors");
      for (let i = 0;; i++) {
        if (await Deno.stat(ckpt).then(() => true, () => false)) break;
        assert.ok(i < 1200, `no checkpoint at step 2:\n${trainer.lines.join("\n")}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal((await trainer.kill("SIGKILL")).signal, "SIGKILL");

      trainer = new ProcessLines("trainer2", [TRAIN_MAIN, "--resume", runDir], env);
      const status = await trainer.status();
      assert.equal(status.code, 0, trainer.lines.join("\n"));
      assert.deepEqual(await steps(runDir), [1, 2, 3, 4, 5, 6]);
      // the worker followed the restarted trainer (a new incarnation)
      await nthLine(w, /^worker w1: serving run /, 2);
    } finally {
      await trainer?.kill();
      await w.kill();
      await Deno.remove(out, { recursive: true });
    }
  },
  300_000,
);

nats(
  "runTraining over NATS: a remote worker serves a LoRA run (merged weights) and then an agent run (episodes)",
  async (server) => {
    const out = await Deno.makeTempDir();
    const w = worker(server.url, "w1");
    try {
      const runs = [
        {
          set: [
            ...TINY,
            "model.lora={rank: 4, alpha: 8, targetModules: [q_proj, v_proj]}",
            "optimizer.lr=1e-2",
          ],
        },
        {
          config: "agent_calc",
          set: [...TINY, "rollout.maxNewTokens=12"],
        },
      ];
      for (const [i, r] of runs.entries()) {
        const loaded = await loadConfig({
          ...r,
          out,
          steps: "3",
          device: "cpu",
          set: [
            ...r.set,
            "rollout.mode=one_step_off",
            `rollout.nats=${server.url}`,
            "trainer.saveEvery=0",
            `output.name=run${i}`,
          ],
        });
        const result = await runTraining(loaded, { ...quietRun, log: () => {} });
        assert.equal(result.step, 3);
        const { records } = await readJsonl<Record<string, number>>(
          join(result.dir, "metrics.jsonl"),
        );
        assert.deepEqual(records.map((x) => x["rollout/policy_version"]), [0, 0, 1]);
        // step 1 is on-policy: the remote worker sampled what the learner scores
        assert.ok(records[0]!.sampler_logprob_diff! < 1e-5, JSON.stringify(records[0]));
        if (r.config === "agent_calc") {
          assert.ok(records.every((x) => x["episode/turns"]! >= 1), JSON.stringify(records));
        }
      }
      await nthLine(w, /^worker w1: serving run /, 2);
    } finally {
      await w.kill();
      await Deno.remove(out, { recursive: true });
    }
  },
  240_000,
);

nats(
  "runTraining over NATS: a remote worker serves a vision-language run (the tower in every snapshot, the images processed there)",
  async (server) => {
    const out = await Deno.makeTempDir();
    const w = worker(server.url, "w1");
    try {
      const loaded = await loadConfig({
        out,
        steps: "3",
        device: "cpu",
        set: [
          ...TINY,
          "model.checkpoint=builtin:tiny-vl",
          "task.name=count_shapes",
          "task.options={size: 56, shapeSize: [8, 10], count: [3, 6], distractors: [6, 8]}",
          "rollout.maxNewTokens=60",
          // grpo_vision's rate: at 1e-3 one update breaks tiny-vl's answers (reward 0 from step
          // 2), and the rewards below check that the worker's samples still make sense.
          "optimizer.lr=1e-4",
          "rollout.mode=async",
          "rollout.maxStaleness=0",
          `rollout.nats=${server.url}`,
          "trainer.saveEvery=0",
        ],
      });
      const result = await runTraining(loaded, { ...quietRun, log: () => {} });
      assert.equal(result.step, 3);
      const { records } = await readJsonl<Record<string, number>>(
        join(result.dir, "metrics.jsonl"),
      );
      assert.deepEqual(records.map((x) => x["rollout/policy_version"]), [0, 1, 2]);
      // Every batch is on-policy: the remote worker sampled with the images and with the tower
      // the trainer had trained up to then (the tower trains with the decoder), as the learner
      // scores.
      for (const x of records) {
        assert.ok(x.sampler_logprob_diff! < 1e-5, JSON.stringify(x));
        assert.ok(x["reward/mean"]! > 0, JSON.stringify(x));
      }
      assert.ok(w.lines.some((l) => /^job \d+ v2 /.test(l)), w.lines.join("\n"));
    } finally {
      await w.kill();
      await Deno.remove(out, { recursive: true });
    }
  },
  240_000,
);
