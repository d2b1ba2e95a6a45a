/**
 * The packages imported BY URL only, as from a static server or JSR: this process serves the
 * repository on loopback, and a child `deno run` started in an empty temporary folder, with
 * `--no-config`, an empty `DENO_DIR` (its npm cache borrowed, so no network is needed) and no
 * read permission on the repository, imports `@rlvr/train` and `@rlvr/rewards` from the server
 * through an import map built from the packages' own `deno.json` files (one scope per package:
 * a bare specifier a package uses without declaring it fails), then runs three training steps of
 * the default recipe on `builtin:tiny` with a custom reward (`train({ rewards })`), reading the
 * recipe and checkpoint files over HTTP, and one with a rollout Web Worker; a second child runs a Python program in the sandbox and
 * reads the shipped BM25 corpus, both by URL.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { npmCacheDir, repoImportMap, serveRepository } from "./_repo_server.ts";

/** The child's program: nothing but bare `@rlvr/...` imports and files of its own folder. */
const TRAIN_CHILD = `
import { loadConfig, runTraining, train } from "@rlvr/train";
import { defineReward } from "@rlvr/rewards";
import { verifyMath } from "@rlvr/rewards/math";

// The custom reward: the answer, checked by the math verifier.
const exact = defineReward("exact", ({ completion, row }) =>
  verifyMath(completion, String(row.answer)).correct ? 1 : 0);

const small = {
  rollout: { batchSize: 8, groupSize: 4, maxNewTokens: 6 },
  algorithm: { microBatchSize: 8 },
  trainer: { steps: 3, device: "cpu", evalProblems: 4, evalSamples: 2, evalK: 2 },
};
const quiet = { log: () => {}, progress: () => {}, report: false };
const result = await train({ rewards: [exact], config: small, out: "runs", ...quiet });

// One step more with rollouts in a Web Worker, whose module is loaded by URL too.
const offPolicy = await loadConfig({
  steps: "1", out: "runs_workers", device: "cpu",
  set: [
    "rollout.batchSize=8", "rollout.groupSize=4", "algorithm.microBatchSize=8",
    "rollout.maxNewTokens=6", "trainer.evalProblems=4", "trainer.evalSamples=2",
    "trainer.evalK=2", "rollout.mode=one_step_off", "rollout.workers=1",
  ],
});
const workers = await runTraining(offPolicy, quiet);

console.log(JSON.stringify({
  recipe: offPolicy.recipe,
  step: result.step,
  interrupted: result.interrupted,
  dir: result.dir,
  workerSteps: workers.step,
}));
`;

interface ChildRun {
  /** The server's base URL (`http://127.0.0.1:<port>/`). */
  base: string;
  /** The child's folder (removed after `check`). */
  tmp: string;
  /** Exit code, stdout, and stdout plus stderr. */
  code: number;
  stdout: string;
  log: string;
  /** Every path the child asked the server for. */
  requested: string[];
}

/**
 * Serves the repository, writes `program` as `main.ts` of a new temporary folder with the import
 * map, and runs it there with `--no-config`, an empty `DENO_DIR` (the npm cache linked from this
 * machine's, so no network is needed), net and import access to the server only, read and write
 * access to its own folder only (plus `more.read` and `more.flags`); `check` sees the result
 * before the folder is removed.
 */
async function runByUrl(
  program: string,
  more: { read?: string[]; flags?: string[] },
  check: (run: ChildRun) => void | Promise<void>,
): Promise<void> {
  const requested: string[] = [];
  const server = serveRepository(requested);
  const base = `http://127.0.0.1:${server.addr.port}/`;
  const tmp = await Deno.makeTempDir({ prefix: "rlvr-url-import-" });
  try {
    await Deno.writeTextFile(
      join(tmp, "import_map.json"),
      JSON.stringify(await repoImportMap(base)),
    );
    await Deno.writeTextFile(join(tmp, "main.ts"), program);
    for (const d of ["tmp", "cache", "deno_dir"]) await Deno.mkdir(join(tmp, d));
    await Deno.symlink(await npmCacheDir(), join(tmp, "deno_dir", "npm"));
    const host = `127.0.0.1:${server.addr.port}`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-config",
        "--no-prompt",
        `--import-map=${join(tmp, "import_map.json")}`,
        `--allow-import=${host}`,
        `--allow-net=${host}`,
        `--allow-read=${[tmp, ...(more.read ?? [])].join(",")}`,
        `--allow-write=${tmp}`,
        "--allow-env",
        ...(more.flags ?? []),
        "main.ts",
      ],
      cwd: tmp,
      env: {
        DENO_DIR: join(tmp, "deno_dir"),
        TMPDIR: join(tmp, "tmp"),
        XDG_CACHE_HOME: join(tmp, "cache"),
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    const stdout = dec.decode(out.stdout);
    const log = `${stdout}\n${dec.decode(out.stderr)}`;
    await check({ base, tmp, code: out.code, stdout, log, requested });
  } finally {
    await server.shutdown();
    await Deno.remove(tmp, { recursive: true });
  }
}

/** The last stdout line of a child, parsed. */
function lastJson(run: ChildRun): Record<string, unknown> {
  assert.equal(run.code, 0, run.log);
  return JSON.parse(run.stdout.trim().split("\n").at(-1)!);
}

Deno.test("URL import: @rlvr/train and @rlvr/rewards by URL only train 3 steps of the default recipe with a custom reward (and 1 with a rollout worker)", async () => {
  await runByUrl(TRAIN_CHILD, {}, async (run) => {
    const r = lastJson(run);
    const base = run.base;
    // The recipes folder resolves to the server (the checkpoint's files are checked below).
    assert.equal(r.recipe, `${base}apps/train/recipes/grpo.yaml`);
    assert.deepEqual([r.step, r.interrupted, r.workerSteps], [3, false, 1]);
    const dir = String(r.dir);
    assert.equal(dir, join(run.tmp, "runs", "grpo"));
    const metrics = (await Deno.readTextFile(join(dir, "metrics.jsonl"))).trim().split("\n");
    assert.equal(metrics.length, 3);
    for (const line of metrics) {
      const m = JSON.parse(line);
      assert.ok(typeof m["reward/exact/mean"] === "number", `the custom reward scored: ${line}`);
    }
    // Modules and assets came over HTTP (the child could read nothing but its own folder).
    for (
      const path of [
        "/apps/train/mod.ts",
        "/packages/rewards/mod.ts",
        "/packages/rewards/math/mod.ts",
        "/apps/train/train.ts",
        "/apps/train/recipes/grpo.yaml",
        "/apps/train/checkpoints/tiny/model.safetensors",
        "/apps/train/checkpoints/tiny/tokenizer.json",
        "/apps/train/loop/rollout_worker.ts",
      ]
    ) {
      assert.ok(run.requested.includes(path), `the child did not ask the server for ${path}`);
    }
  });
});

/** A Python program checked in the sandbox, and the shipped corpus, by URL. */
const REWARDS_CHILD = `
import { runTests } from "@rlvr/rewards/code";
import { loadCorpus, SHIPPED_CORPUS_DIR } from "@rlvr/rewards/env";

const report = await runTests("print(int(input()) * 2)", "python", [
  { input: "2", output: "4" },
  { input: "5", output: "11" },
]);
const corpus = await loadCorpus(SHIPPED_CORPUS_DIR);
console.log(JSON.stringify({
  statuses: report.results.map((r) => r.status),
  corpusDir: SHIPPED_CORPUS_DIR.href,
  documents: corpus.documents.length,
  facts: corpus.facts.length,
}));
`;

Deno.test("URL import: the Python sandbox and the shipped corpus of @rlvr/rewards work by URL", async () => {
  // The sandbox starts `deno` children that read the Pyodide package (in the npm cache, which
  // the child sees through its DENO_DIR), and watches their memory in /proc.
  const more = {
    read: [await npmCacheDir(), "/proc"],
    flags: [`--allow-run=${Deno.execPath()}`],
  };
  await runByUrl(REWARDS_CHILD, more, (run) => {
    const r = lastJson(run);
    assert.deepEqual(r.statuses, ["pass", "fail"]);
    assert.equal(r.corpusDir, `${run.base}packages/rewards/env/corpus/`);
    assert.deepEqual([r.documents, r.facts], [50, 82]);
    assert.ok(run.requested.includes("/packages/rewards/code/_py_runner.ts"));
    assert.ok(run.requested.includes("/packages/rewards/env/corpus/index.json"));
  });
});
