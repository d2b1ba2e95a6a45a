import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "../config/errors.ts";
import { loadConfig } from "../config/load.ts";
import { readJsonl } from "../run/jsonl.ts";
import { BATCH16_SET } from "./_run_test_util.ts";
import { SAMPLING_FILE } from "./state.ts";
import { runTraining } from "./run.ts";

// Each example config of apps/train/examples/sampling/ runs through runTraining and its strategy
// shows in the metrics. Sizes are small, and the pools tiny, so that problems come back within a
// few steps.
const EXAMPLES = fileURLToPath(new URL("../examples/sampling/", import.meta.url));
const SMALL = BATCH16_SET;

async function run(example: string, set: string[], steps = 8) {
  const out = await Deno.makeTempDir();
  const loaded = await loadConfig({
    config: join(EXAMPLES, `${example}.yaml`),
    out,
    steps: String(steps),
    device: "cpu",
    set: [...SMALL, ...set],
  });
  const r = await runTraining(loaded, {
    log: () => {},
    progress: () => {},
    report: false,
    handleSignals: false,
  });
  const metrics = (await readJsonl<Record<string, number | null>>(join(r.dir, "metrics.jsonl")))
    .records;
  return { out, dir: r.dir, metrics };
}

async function withRun(
  example: string,
  set: string[],
  check: (m: Record<string, number | null>[], dir: string) => void | Promise<void>,
  steps = 8,
) {
  const r = await run(example, set, steps);
  try {
    await check(r.metrics, r.dir);
  } finally {
    await Deno.remove(r.out, { recursive: true });
  }
}

Deno.test("example priority: draws from the pool by pass rate; the checkpoint keeps the tracker", async () => {
  await withRun("priority", ["sampling.pool=6"], async (m, dir) => {
    assert.equal(m.length, 8);
    const state = JSON.parse(
      await Deno.readTextFile(join(dir, "checkpoints", "step-8", SAMPLING_FILE)),
    );
    assert.equal(Object.keys(state.prompts.tracker.entries).length, 6, "every pool problem seen");
  });
});

Deno.test("example greso: uninformative problems are skipped before sampling", async () => {
  await withRun("greso", ["sampling.pool=8"], (m) => {
    const last = m.at(-1)!;
    assert.ok(last["greso/skipped_easy"]! + last["greso/skipped_hard"]! > 0, JSON.stringify(last));
    assert.ok(m.some((r) => r["greso/p_easy"] !== 0.5 || r["greso/p_hard"] !== 0.5));
  }, 12);
});

Deno.test("example mastery: mastered problems leave the pool", async () => {
  // A low bar so that the tiny model masters some problems within a few steps.
  await withRun("mastery", ["sampling.pool=6", "sampling.mastery.threshold=0.5"], (m) => {
    assert.ok(m.some((r) => r["sampling/mastered"]! > 0), JSON.stringify(m.at(-1)));
  }, 12);
});

Deno.test("example curriculum: the difficulty drawn rises over the steps", async () => {
  await withRun("curriculum", ["sampling.pool=64", "sampling.curriculum.steps=8"], (m) => {
    const d = m.map((r) => r["sampling/difficulty_mean"]!);
    assert.ok(d[0]! < d.at(-1)!, `difficulty ${d.join(", ")}`);
    assert.equal(d[0], 1, "step 1 draws 1-digit sums only");
  });
});

Deno.test("example replay: stored successes join later batches with their age", async () => {
  await withRun("replay", ["sampling.pool=4"], (m) => {
    const replayed = m.filter((r) => r["replay/items"]! > 0);
    assert.ok(replayed.length > 0, "some step replays");
    for (const r of replayed) {
      assert.equal(r["batch/responses"], 16 + r["replay/items"]!);
      assert.ok(r["replay/age_mean"]! >= 1);
    }
  });
});

Deno.test("example budget: group sizes follow pass rates, the batch stays 16", async () => {
  await withRun("budget", ["sampling.pool=4", "sampling.budget={min: 2, max: 8}"], (m) => {
    assert.ok(m.every((r) => r["batch/responses"] === 16));
    assert.ok(m.some((r) => r["budget/group_min"] !== r["budget/group_max"]), "ragged groups");
  });
});

Deno.test("example adaptive_kl: β moves towards the KL target and is logged", async () => {
  await withRun("adaptive_kl", [], (m) => {
    const coefs = m.map((r) => r.kl_coef!);
    assert.equal(coefs[0], 0.01);
    assert.ok(new Set(coefs).size > 1, `kl_coef ${coefs.join(", ")}`);
  });
});

Deno.test("sampling strategies resume exactly: stop at step 3 and resume equals an uninterrupted run", async () => {
  const set = [
    ...SMALL,
    "sampling.pool=6",
    "sampling.selection=priority",
    "sampling.greso={}",
    "sampling.replay={perGroup: 1}",
    "algorithm.kl={beta: 0.01, target: 0.002, horizon: 1000}",
  ];
  const strip = (rows: Record<string, number | null>[]) =>
    rows.map((r) =>
      Object.fromEntries(
        Object.entries(r).filter(([k]) => !k.startsWith("time/") && k !== "tokens_per_s"),
      )
    );
  const a = await Deno.makeTempDir();
  const b = await Deno.makeTempDir();
  try {
    const opts = { log: () => {}, progress: () => {}, report: false, handleSignals: false };
    const whole = await runTraining(
      await loadConfig({ out: a, steps: "6", device: "cpu", set }),
      opts,
    );
    const first = await runTraining(
      await loadConfig({ out: b, steps: "6", device: "cpu", set }),
      { ...opts, stopAfter: 3 },
    );
    assert.equal(first.step, 3);
    const resumed = await runTraining(await loadConfig({ resume: first.dir }), opts);
    assert.equal(resumed.step, 6);
    const read = async (d: string) =>
      strip((await readJsonl<Record<string, number | null>>(join(d, "metrics.jsonl"))).records);
    assert.deepEqual(await read(first.dir), await read(whole.dir));
  } finally {
    await Deno.remove(a, { recursive: true });
    await Deno.remove(b, { recursive: true });
  }
});

Deno.test("sampling strategies without a pool, and budgets with dynamic sampling, are refused", async () => {
  await assert.rejects(
    loadConfig({ set: ["sampling.selection=priority"] }),
    (e: unknown) =>
      e instanceof ConfigError && /sampling\.pool: null, but sampling\.selection/.test(e.message),
  );
  await assert.rejects(
    loadConfig({
      set: [
        "sampling.pool=8",
        "sampling.budget={min: 4, max: 12}",
        "rollout.dynamicSampling.enabled=true",
      ],
    }),
    (e: unknown) => e instanceof ConfigError && /rollout\.dynamicSampling\.enabled/.test(e.message),
  );
  await assert.rejects(
    loadConfig({ set: ["algorithm.kl.target=0.01"] }),
    (e: unknown) =>
      e instanceof ConfigError && /algorithm\.kl\.target.*kl\.beta > 0/.test(e.message),
  );
});
