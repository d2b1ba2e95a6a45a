import assert from "node:assert/strict";
import { join } from "node:path";
import { estimatorNames } from "@rlvr/advantage";
import { policyLossNames } from "@rlvr/objectives";
import { ConfigError } from "./errors.ts";
import { loadConfig } from "./load.ts";
import { isMethodPath, methodKey } from "./methods.ts";
import { runTraining } from "../loop/run.ts";

const ROOT = join(import.meta.dirname!, "..", "..", "..");
const MEDIAN = `${ROOT}/examples/methods/median_baseline.ts#medianBaseline`;
const CLIPPED = `${ROOT}/examples/methods/clipped_pg.ts#clippedPg`;
const SMALL = [
  "rollout.batchSize=16",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=16",
  "trainer.evalProblems=4",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "trainer.device=cpu",
];

Deno.test("methodKey / isMethodPath: a module export's registry key is its name in snake_case", () => {
  assert.equal(isMethodPath("./a.ts#b"), true);
  assert.equal(isMethodPath("/abs/x.js"), true);
  assert.equal(isMethodPath("https://x.test/m.ts#f"), true);
  assert.equal(isMethodPath("grpo"), false);
  assert.equal(isMethodPath("seq-mean-token-mean"), false);
  assert.equal(methodKey("./x.ts#myAdvEstimator"), "my_adv_estimator");
  assert.equal(methodKey("./lib/my-loss.ts"), "my_loss");
  assert.equal(methodKey("./_x.ts#_9"), "user_9");
  assert.equal(methodKey("vanilla"), "vanilla");
});

Deno.test("algorithm.estimator / loss from a module: registered, validated, trained and kept as the path", async () => {
  const out = await Deno.makeTempDir();
  try {
    const loaded = await loadConfig({
      out,
      steps: "2",
      set: [
        ...SMALL,
        `algorithm.estimator=${MEDIAN}`,
        `algorithm.loss=${CLIPPED}`,
        "algorithm.ppoMiniBatchSize=8",
      ],
    });
    assert.equal(loaded.config.algorithm.estimator, MEDIAN);
    assert.ok(estimatorNames().includes("median_baseline"));
    assert.ok(policyLossNames().includes("clipped_pg"));
    const r = await runTraining(loaded, { log: () => {}, progress: () => {}, report: false });
    assert.equal(r.step, 2);
    // The saved config names the module, so --resume loads it again.
    const yaml = await Deno.readTextFile(join(r.dir, "config.yaml"));
    assert.ok(yaml.includes("median_baseline.ts#medianBaseline"));
    const resumed = await loadConfig({ resume: r.dir, steps: "3" });
    assert.equal(resumed.config.algorithm.loss, CLIPPED);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("user methods: a missing export, a built-in name, an unloadable module and a method that throws are config errors naming the module", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/m.ts`,
      [
        "export const grpo = () => { throw new Error('never'); };",
        "export const brokenAdv = () => { throw new Error('my estimator is broken'); };",
        "export const notAFunction = 3;",
      ].join("\n"),
    );
    const attempt = async (value: string) => {
      try {
        await loadConfig({ set: [...SMALL, `algorithm.estimator=${value}`] });
      } catch (e) {
        assert.ok(e instanceof ConfigError, String(e));
        return e.message;
      }
      assert.fail(`${value} was accepted`);
    };
    assert.match(
      await attempt(`${dir}/m.ts#nope`),
      /has no function export "nope" \(its functions: brokenAdv, grpo\)/,
    );
    assert.match(
      await attempt(`${dir}/m.ts#notAFunction`),
      /algorithm\.estimator: .*no function export "notAFunction"/,
    );
    assert.match(
      await attempt(`${dir}/m.ts#grpo`),
      /the name of a built-in estimator; rename the export/,
    );
    assert.match(await attempt(`${dir}/missing.ts#x`), /algorithm\.estimator: cannot load/);
    const broken = await attempt(`${dir}/m.ts#brokenAdv`);
    assert.match(broken, /m\.ts#brokenAdv/);
    assert.match(broken, /my estimator is broken/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("plugins: a module that registers its own names on import", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const advantage = import.meta.resolve("@rlvr/advantage");
    await Deno.writeTextFile(
      `${dir}/plugin.ts`,
      `import { registerEstimator } from "${advantage}";\n` +
        `registerEstimator("plugin_zero", (x) => {\n` +
        `  const a = new Float64Array(x.tokenRewards.batch * x.tokenRewards.length);\n` +
        `  return { advantages: a, returns: a.slice() };\n` +
        `}, { override: true });\n`,
    );
    const loaded = await loadConfig({
      set: [...SMALL, `plugins=["${dir}/plugin.ts"]`, "algorithm.estimator=plugin_zero"],
    });
    assert.equal(loaded.config.algorithm.estimator, "plugin_zero");
    await assert.rejects(
      loadConfig({ set: [...SMALL, `plugins=["${dir}/absent.ts"]`] }),
      /plugins\[0\]: cannot load/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
