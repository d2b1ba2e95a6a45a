/**
 * `deno task train` as a process: a short run end to end, and Ctrl-C (SIGINT) saving a
 * checkpoint that `--resume` continues.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";

const MAIN = new URL("../apps/train/main.ts", import.meta.url).pathname;
const SMALL = [
  "--set",
  "rollout.batchSize=8",
  "--set",
  "rollout.groupSize=4",
  "--set",
  "algorithm.microBatchSize=8",
  "--set",
  "rollout.maxNewTokens=6",
  "--set",
  "trainer.evalProblems=4",
  "--set",
  "trainer.evalSamples=2",
  "--set",
  "trainer.evalK=2",
];

async function train(args: string[]): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

Deno.test("deno task train: a short run prints pass@1 and pass@k before and after and writes the run directory", async () => {
  const root = await Deno.makeTempDir();
  try {
    const r = await train(["--steps", "2", "--out", root, ...SMALL]);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /held-out before training: pass@1 \d+\.\d%, pass@2 \d+\.\d%/);
    assert.match(r.out, /held-out pass@1: \d+\.\d% -> \d+\.\d% \(-?\d+\.\d points\); pass@2: /);
    for (
      const f of ["config.yaml", "metrics.jsonl", "eval.jsonl", "samples.jsonl", "report.html"]
    ) {
      assert.ok((await Deno.stat(join(root, "grpo", f))).isFile, f);
    }
    assert.ok((await Deno.stat(join(root, "grpo/checkpoints/step-2/COMPLETE"))).isFile);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test({
  name: "deno task train: Ctrl-C saves a checkpoint and exits 130; --resume continues from it",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const root = await Deno.makeTempDir();
    const run = join(root, "grpo");
    try {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", MAIN, "--steps", "100000", "--out", root, ...SMALL],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const output = child.output();
      // Wait for the first step's metrics, then interrupt.
      const metrics = join(run, "metrics.jsonl");
      for (let i = 0; i < 600; i++) {
        try {
          if ((await Deno.readTextFile(metrics)).includes("\n")) break;
        } catch { /* not created yet */ }
        await new Promise((r) => setTimeout(r, 100));
      }
      child.kill("SIGINT");
      const r = await output;
      const out = new TextDecoder().decode(r.stdout);
      assert.equal(r.code, 130, out + new TextDecoder().decode(r.stderr));
      const stopped = /stopped at step (\d+); continue with --resume/.exec(out);
      assert.ok(stopped, out);
      const step = Number(stopped[1]);
      assert.ok((await Deno.stat(join(run, `checkpoints/step-${step}/COMPLETE`))).isFile);

      const again = await train(["--resume", run, "--steps", String(step + 1)]);
      assert.equal(again.code, 0, again.out);
      assert.match(again.out, new RegExp(`resume: .* from step ${step}`));
      const lines = (await Deno.readTextFile(metrics)).trim().split("\n");
      assert.deepEqual(
        lines.map((l) => JSON.parse(l).step),
        Array.from({ length: step + 1 }, (_, i) => i + 1),
      );
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
