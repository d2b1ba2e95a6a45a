import assert from "node:assert/strict";
import { join } from "node:path";
import { listRecipes, loadConfig } from "../config/load.ts";
import { REQUIRED_METRICS } from "../run/records.ts";
import { readJsonl } from "../run/jsonl.ts";
import { runTraining } from "./run.ts";

// Every recipe as written (sizes, estimator, loss, KL placement, dynamic sampling, value head),
// for 5 steps; only the evaluation is made smaller so the whole file stays fast.
const EVAL = ["trainer.evalProblems=4", "trainer.evalSamples=2", "trainer.evalK=2"];

for (const recipe of listRecipes()) {
  Deno.test(`recipe ${recipe}: 5 steps without NaN write every run file and key`, async () => {
    const root = await Deno.makeTempDir();
    try {
      const loaded = await loadConfig({ config: recipe, steps: "5", out: root, set: EVAL });
      const r = await runTraining(loaded, {
        log: () => {},
        progress: () => {},
        handleSignals: false,
      });
      assert.equal(r.step, 5);
      const metrics = (await readJsonl<Record<string, unknown>>(join(r.dir, "metrics.jsonl")))
        .records;
      assert.deepEqual(metrics.map((m) => m.step), [1, 2, 3, 4, 5]);
      for (const m of metrics) {
        for (const key of REQUIRED_METRICS) assert.ok(key in m, `${recipe}: metrics lacks ${key}`);
        for (const [k, v] of Object.entries(m)) {
          assert.ok(v === null || Number.isFinite(v), `${recipe} step ${m.step}: ${k} = ${v}`);
        }
      }
      const evals = (await readJsonl<Record<string, unknown>>(join(r.dir, "eval.jsonl"))).records;
      assert.deepEqual([evals[0]!.step, evals.at(-1)!.step], [0, 5]);
      for (
        const f of ["config.yaml", "samples.jsonl", "report.html", "checkpoints/step-5/COMPLETE"]
      ) {
        assert.ok((await Deno.stat(join(r.dir, f))).isFile, `${recipe}: ${f}`);
      }
      if (loaded.config.model.valueHead) {
        const m = metrics.at(-1)!;
        assert.equal(typeof m.vf_loss, "number", `${recipe}: value loss reported`);
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}
