import assert from "node:assert/strict";
import { join } from "node:path";
import { estimatorNames } from "@rlvr/advantage";
import { policyLossNames } from "@rlvr/objectives";
import { loadConfig } from "../config/load.ts";
import { ConfigError } from "../config/errors.ts";
import { readJsonl } from "../run/jsonl.ts";
import { runTraining } from "./run.ts";

// Every registered estimator (with a PPO-clip loss) and every registered policy loss (with GRPO
// advantages) trains for 3 steps through runTraining, with two mini-batches per step so that the
// ratio-based losses see π_θ ≠ π_old. Keys whose hyper-parameters have no default get them here;
// without them the config check refuses the key before step 1 (checked below).
const SMALL = [
  "rollout.batchSize=8",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=8",
  "algorithm.ppoMiniBatchSize=4",
  "rollout.maxNewTokens=6",
  "trainer.evalProblems=2",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "trainer.saveEvery=0",
  "trainer.samplesEvery=0",
];

const NEEDS: Record<string, string[]> = {
  gae: [
    "model.valueHead=true",
    "algorithm.gae={gamma: 1, lambda: 0.95}",
    "algorithm.value={coef: 0.5, clipRange: 0.2}",
  ],
  passk_analytic: ["algorithm.estimatorOptions={k: 2}"],
  entropy_adv: ["algorithm.estimatorOptions={entropyAlpha: 0.4, entropyKappa: 2}"],
};

/** Losses with a required setting (veRL's dro has no default β). */
const LOSS_NEEDS: Record<string, string[]> = {
  dro: ["algorithm.lossOptions={droBeta: 1}"],
};

async function threeSteps(set: string[]): Promise<Record<string, unknown>[]> {
  const out = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({ out, steps: "3", device: "cpu", set: [...SMALL, ...set] });
    const r = await runTraining(loaded, {
      log: () => {},
      progress: () => {},
      report: false,
      handleSignals: false,
    });
    assert.equal(r.step, 3);
    return (await readJsonl<Record<string, unknown>>(join(r.dir, "metrics.jsonl"))).records;
  } finally {
    await Deno.remove(out, { recursive: true });
  }
}

function checkMetrics(what: string, metrics: Record<string, unknown>[]) {
  assert.deepEqual(metrics.map((m) => m.step), [1, 2, 3]);
  for (const m of metrics) {
    assert.equal(
      (m.optimizer_steps as number) + (m.skipped_steps as number),
      2,
      `${what}: two mini-batches`,
    );
    for (const [k, v] of Object.entries(m)) {
      assert.ok(v === null || Number.isFinite(v), `${what} step ${m.step}: ${k} = ${v}`);
    }
  }
}

// Refused before step 1 (see the last test): per-batch inputs the trainer does not supply.
const UNSUPPLIED = new Set(["optimal_token_baseline", "tir_optimal_token_baseline"]);

for (const key of estimatorNames().filter((k) => !UNSUPPLIED.has(k))) {
  Deno.test(`estimator ${key} trains 3 steps through runTraining`, async () => {
    const metrics = await threeSteps([`algorithm.estimator=${key}`, ...(NEEDS[key] ?? [])]);
    checkMetrics(key, metrics);
  });
}

for (const key of policyLossNames()) {
  Deno.test(`policy loss ${key} trains 3 steps with GRPO advantages through runTraining`, async () => {
    const metrics = await threeSteps([`algorithm.loss=${key}`, ...(LOSS_NEEDS[key] ?? [])]);
    checkMetrics(key, metrics);
    // The later mini-batch is off-policy: the ratio has moved.
    assert.ok(metrics.some((m) => m["ratio/max"] !== 1), `${key}: ratio never moved`);
  });
}

Deno.test("estimators with a hyper-parameter and no default are refused before step 1, with the setting to add", async () => {
  for (
    const [key, hint] of [
      ["passk_analytic", /k is required.*estimatorOptions/],
      [
        "entropy_adv",
        /entropyAlpha is required.*estimatorOptions/,
      ],
      ["gae", /model\.valueHead.*set model\.valueHead: true/],
      [
        "optimal_token_baseline",
        /reads oldLogProbs per batch, which this trainer does not supply yet/,
      ],
      [
        "tir_optimal_token_baseline",
        /reads oldLogProbs per batch, which this trainer does not supply yet/,
      ],
    ] as const
  ) {
    await assert.rejects(
      loadConfig({ set: [...SMALL, `algorithm.estimator=${key}`] }),
      (e: unknown) => e instanceof ConfigError && hint.test(e.message),
      key,
    );
  }
});
