import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig, runTraining } from "@rlvr/train";

// The judge reward of apps/train against the example judge server (examples/judge/server.ts),
// served on loopback: real HTTP requests, the reward's cache and the run's metrics. Here rather
// than beside the train app's tests because it imports an example (packages and apps import only
// the packages below them).
const SMALL = [
  "rollout.batchSize=16",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=16",
  "trainer.evalProblems=2",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "trainer.samplesEvery=0",
  "trainer.device=cpu",
];
const quiet = { log: () => {}, progress: () => {}, report: false, handleSignals: false };

async function records(dir: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(join(dir, "metrics.jsonl"));
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

Deno.test("rewards: a judge reward grades over HTTP with a real server on loopback (examples/judge/server.ts)", async () => {
  const { handler } = await import("../examples/judge/server.ts");
  let requests = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    requests++;
    return handler(req);
  });
  const out = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({
      out,
      steps: "2",
      set: SMALL,
      overrides: {
        rewards: [{
          type: "judge",
          options: {
            baseUrl: `http://127.0.0.1:${server.addr.port}`,
            model: "rule-judge",
            promptTemplate: "Expression: {{expression}}\nResponse: {{completion}}",
          },
        }],
      },
    });
    const r = await runTraining(loaded, quiet);
    const metrics = await records(r.dir);
    for (const m of metrics) {
      assert.equal(m["reward/judge/errors"], 0);
      const mean = m["reward/judge/mean"] as number;
      assert.ok(mean >= 0 && mean <= 1, `judge mean ${mean}`);
      assert.equal(m["reward/mean"], mean);
    }
    assert.ok(requests > 0 && requests <= 32, `${requests} requests (identical ones are cached)`);
  } finally {
    await server.shutdown();
    await Deno.remove(out, { recursive: true });
  }
});
