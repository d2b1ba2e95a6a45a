import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { findChromium, inspectPage } from "../report/_chromium.ts";
import { STUDIES } from "./studies.ts";
import { runStudy } from "./study.ts";

// Each study end to end with --quick (one step on tiny batches, 2 seeds): the runs are real
// `deno task train` processes from builtin:tiny-cot, so this checks the configs each arm
// writes, the numbers read back, result.json and the report in a real browser. The verdicts of
// such runs mean nothing and are not asserted.
const chromium = await findChromium();

for (const study of STUDIES) {
  Deno.test(`study ${study.name} --quick: result.json, configs and a report without console errors`, async () => {
    const out = await Deno.makeTempDir({ prefix: `rlvr-study-${study.name}-` });
    try {
      const result = await runStudy(study.name, { quick: true, seeds: 2, out, log: () => {} });
      const dir = join(out, study.name);
      const saved = JSON.parse(await Deno.readTextFile(join(dir, "result.json")));
      assert.deepEqual(saved, JSON.parse(JSON.stringify(result)));
      assert.equal(saved.name, study.name);
      assert.equal(saved.claim, study.claim);
      assert.equal(saved.source, study.source);
      assert.ok(["reproduced", "not reproduced", "inconclusive"].includes(saved.verdict));
      assert.equal(saved.quick, true);
      assert.deepEqual(saved.seeds, [0, 1]);
      assert.equal(saved.comparisons.length, study.comparisons.length);
      for (const c of saved.comparisons) {
        assert.equal(c.differences.length, 2, `${c.metric}: one difference per seed`);
      }
      for (const arm of study.arms) {
        const yaml = await Deno.readTextFile(join(dir, "configs", `${arm.name}.yaml`));
        assert.match(yaml, /^extends: grpo_cot$/m);
        if (arm.train !== false) {
          assert.equal(saved.numbers[arm.name]["pass@1/after"].length, 2);
          for (const seed of [0, 1]) {
            const metrics = await Deno.readTextFile(
              join(dir, "runs", `${arm.name}-s${seed}`, "metrics.jsonl"),
            );
            assert.equal(metrics.trim().split("\n").length, 1);
          }
        }
      }
      const html = await Deno.readTextFile(join(dir, "report.html"));
      assert.ok(html.includes(`Verdict: ${saved.verdict}`));
      assert.ok(html.includes("means nothing"), "a quick report says its verdict means nothing");
      const plots = (html.match(/<svg class="plot"/g) ?? []).length;
      assert.equal(plots, 1 + study.plots.length + (study.passK !== undefined ? 1 : 0));
      if (chromium !== null) {
        const page = await inspectPage(
          chromium,
          pathToFileURL(join(dir, "report.html")).href,
          "document.querySelectorAll('svg.plot').length",
        );
        assert.deepEqual(page.errors, []);
        assert.equal(page.value, plots);
      } else if (Deno.env.get("CI") === "true") {
        throw new Error("CI needs chromium for the study report check");
      }
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  });
}
