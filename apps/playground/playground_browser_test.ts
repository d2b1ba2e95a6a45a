/**
 * The playground page in real headless Chromium, against `deno task train`: the `grpo` recipe,
 * 30 steps, seed 1, held-out evaluations every 10 steps on 32 problems × 4 samples (pass@4),
 * once on WebAssembly and once on WebGPU (SwiftShader), each compared with the same config run
 * by `deno task train` (a subprocess, started while the browser runs) on the matching backend.
 * Each run is stopped after a few steps and resumed (the same session continues), the page must
 * log no error, throw nothing and load every resource, and it must need no network once loaded
 * (its server is closed before Start). A screenshot of each finished page is saved
 * (`$RLVR_ARTIFACTS/playground`, else a temporary directory); the README's picture, of a run
 * long enough to learn, is made by `screenshot.ts`.
 *
 * Tolerances (decided before comparing):
 *
 * - **WebAssembly vs `deno task train --set trainer.device=cpu --set trainer.blas=wasm`: exact.**
 *   Same kernels (the CPU backend's WebAssembly matmul; its thread count never changes a bit),
 *   same V8 arithmetic, same seeded draws: every step record, evaluation record and held-out
 *   sample must be equal except the timing fields (`time/*`, `tokens_per_s`), and the trained
 *   `model.safetensors` in the page's zip must be byte-identical to the run's step-30
 *   checkpoint.
 * - **WebGPU (Chromium's SwiftShader) vs `deno task train --set trainer.device=webgpu` (Mesa
 *   llvmpipe): sampled outcomes exact, floats within 1e-3 relative (+1e-6 absolute).** The WGSL
 *   kernels are the same but the two Vulkan implementations round differently (fused
 *   multiply-add, reduction order, transcendental functions), so float metrics (entropy, losses,
 *   gradient norm, ratios, KL) differ in their last bits and drift a little through 30 Adam
 *   steps; 1e-3 relative is three orders of magnitude above what llvmpipe vs the CPU backend
 *   shows (3e-7 on entropy over the same 30 steps) and far below what a broken kernel gives.
 *   Everything decided by sampled tokens (rewards, accuracy, response lengths, pass@1, pass@k,
 *   the held-out completions) must be equal: a token flips only if a rounding difference
 *   crosses a sampling threshold, and then the runs diverge for good, which this test reports
 *   (the first step and key that differ) instead of hiding it behind a looser bound.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { unzipSync } from "fflate";
import { loadConfig } from "../train/config/load.ts";
import { TIMING } from "../train/loop/_run_test_util.ts";
import { readJsonl } from "../train/run/jsonl.ts";
import { launchBrowser } from "./browser.ts";
import { serveDirectory } from "./static_server.ts";
import { buildPlayground } from "./playground.ts";
import { WASM_OVERRIDES, WEBGPU_OVERRIDES } from "./page/backend.ts";
import { knobDefaults, knobOverrides, knobQuery, type Knobs, setFlags } from "./page/knobs.ts";
import type { PlaygroundState } from "./page/state.ts";
import { artifactDir, chromiumOrSkip } from "./_test_utils.ts";

const HERE = import.meta.dirname!;
const ROOT = join(HERE, "..", "..");

/** The run: the grpo recipe, 30 steps, seed 1, evaluations at 0, 10, 20, 30 on 32 × 4. */
const KNOBS = {
  recipe: "grpo",
  steps: 30,
  seed: 1,
  evalEvery: 10,
  evalProblems: 32,
  evalSamples: 4,
} as const;

/** Limit on one browser run (SwiftShader trains a step in ~5 s on a busy 2-core machine). */
const RUN_TIMEOUT_MS = 420_000;

/** Float metrics of the WebGPU comparison: |a - b| <= ABS + REL · max(|a|, |b|). */
const WEBGPU_REL = 1e-3;
const WEBGPU_ABS = 1e-6;

/**
 * Metrics decided by sampled tokens and their rewards, or by the config: exact on WebGPU too.
 * Everything else (entropy, losses, grad norm, ratios, KL, clip fractions) is a float metric.
 */
const DISCRETE =
  /^(step|lr|reward\/|accuracy\/|response_length\/|batch\/|frac_zero_std_groups$|rollout\/rounds$|skipped_steps$|optimizer_steps$|pass@|k$|n$|problems$|problem$|reward$)/;

type Rec = Record<string, unknown>;

function withoutTiming(rs: readonly Rec[]): Rec[] {
  return rs.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !TIMING.test(k))));
}

/** The `deno task train` arguments of the run on one backend (what the page must report). */
async function trainArgs(device: "wasm" | "webgpu"): Promise<string[]> {
  const { config } = await loadConfig({ config: KNOBS.recipe });
  const knobs: Knobs = {
    ...knobDefaults({ name: KNOBS.recipe, title: "", summary: "", config, groupSizes: [] }),
    ...KNOBS,
    backend: device,
  };
  const overrides = [
    ...knobOverrides(knobs, config),
    ...(device === "wasm" ? WASM_OVERRIDES : WEBGPU_OVERRIDES),
  ];
  return ["--config", KNOBS.recipe, ...setFlags(overrides).flatMap((f) => ["--set", f])];
}

/** The records of a `deno task train` run. */
interface Reference {
  /** The output directory (removed at the end). */
  out: string;
  /** The run directory in it. */
  dir: string;
  metrics: Rec[];
  evals: Rec[];
  evalSamples: Rec[];
  seconds: number;
}

/** Starts `deno task train <args> --out <tmp>`; resolves with its records. */
function startReference(args: readonly string[]): Promise<Reference> {
  return (async () => {
    const out = await Deno.makeTempDir({ prefix: "rlvr-playground-ref-" });
    const t0 = performance.now();
    const result = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", join(ROOT, "apps", "train", "main.ts"), ...args, "--out", out],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const seconds = (performance.now() - t0) / 1000;
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    if (!result.success) {
      throw new Error(
        `deno task train ${args.join(" ")} failed (exit ${result.code}):\n${
          text(result.stdout).slice(-2000)
        }\n${text(result.stderr).slice(-4000)}`,
      );
    }
    const dir = join(out, KNOBS.recipe);
    const read = async (file: string) => (await readJsonl<Rec>(join(dir, file))).records;
    return {
      out,
      dir,
      metrics: await read("metrics.jsonl"),
      evals: await read("eval.jsonl"),
      evalSamples: await read("eval_samples.jsonl"),
      seconds,
    };
  })();
}

/** Differences of the WebGPU comparison: exact keys, then floats within the tolerance. */
/** Per float metric: values compared, how many differed, the largest differences. */
interface FloatDiff {
  compared: number;
  differing: number;
  maxAbs: number;
  maxRel: number;
}

function compareWebGpu(
  what: string,
  page: readonly Rec[],
  ref: readonly Rec[],
  floats: Map<string, FloatDiff>,
): string[] {
  const problems: string[] = [];
  if (page.length !== ref.length) problems.push(`${what}: ${page.length} vs ${ref.length} records`);
  for (let i = 0; i < Math.min(page.length, ref.length); i++) {
    const a = page[i]!, b = ref[i]!;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)].filter((k) => !TIMING.test(k)));
    for (const k of keys) {
      const x = a[k], y = b[k];
      const float = typeof x === "number" && typeof y === "number" && !DISCRETE.test(k);
      const d = float ? floats.get(k) ?? { compared: 0, differing: 0, maxAbs: 0, maxRel: 0 } : null;
      if (d !== null) {
        floats.set(k, d);
        d.compared++;
      }
      if (x === y) continue;
      const at = `${what} #${i} (step ${b.step}) ${k}: page ${JSON.stringify(x)}, deno ${
        JSON.stringify(y)
      }`;
      if (d === null) {
        problems.push(`${at} (must be equal)`);
        continue;
      }
      const scale = Math.max(Math.abs(x as number), Math.abs(y as number));
      const diff = Math.abs((x as number) - (y as number));
      d.differing++;
      d.maxAbs = Math.max(d.maxAbs, diff);
      d.maxRel = Math.max(d.maxRel, diff / scale);
      if (diff > WEBGPU_ABS + WEBGPU_REL * scale) {
        problems.push(
          `${at} (|diff| ${diff.toExponential(2)} > ${WEBGPU_ABS} + ${WEBGPU_REL}·max)`,
        );
      }
    }
  }
  return problems;
}

Deno.test({
  name: "playground page in headless Chromium: grpo for 30 steps on WebAssembly (every record " +
    "equal to deno task train --set trainer.blas=wasm) and on WebGPU (SwiftShader vs llvmpipe: " +
    "sampled outcomes equal, floats within 1e-3), stopped and resumed, offline, no console errors",
  async fn(t) {
    const chromium = await chromiumOrSkip("the playground browser test");
    if (chromium === null) return;
    const t0 = performance.now();
    const seconds = () => ((performance.now() - t0) / 1000).toFixed(1);
    const out = await Deno.makeTempDir({ prefix: "rlvr-playground-page-" });
    const artifacts = await artifactDir();
    const args = { wasm: await trainArgs("wasm"), webgpu: await trainArgs("webgpu") };
    // The references run while the browser does (the WebGPU one takes ~1 min on llvmpipe).
    const refs = { wasm: startReference(args.wasm), webgpu: startReference(args.webgpu) };
    refs.wasm.catch(() => {});
    refs.webgpu.catch(() => {});
    try {
      const built = await buildPlayground({ outDir: out });
      console.log(
        `built the page in ${(built.ms / 1000).toFixed(1)} s (app.js ${
          (built.bundleBytes / 2 ** 10).toFixed(0)
        } KiB, run_worker.js ${(built.workerBytes / 2 ** 20).toFixed(1)} MiB; recipes ${
          built.recipes.join(", ")
        })`,
      );
      assert.ok(built.recipes.includes("grpo"));
      for (const device of ["wasm", "webgpu"] as const) {
        await t.step(device === "wasm" ? "WebAssembly" : "WebGPU (SwiftShader)", async () => {
          const started = performance.now();
          await using server = await serveDirectory(out);
          await using browser = await launchBrowser({
            webgpu: device === "webgpu",
            executablePath: chromium,
            timeoutMs: RUN_TIMEOUT_MS,
          });
          await using page = await browser.openPage(
            `${server.url}?${knobQuery({ ...KNOBS, backend: device })}`,
          );
          await page.waitFor(
            "window.__playground?.status === 'ready' || window.__playground?.errors.length > 0",
          );
          // Offline from here: everything the run needs is loaded.
          await server.close();
          await page.evaluate("document.getElementById('start').click()");
          await page.waitFor("window.__playground.records.length >= 3", {
            timeoutMs: RUN_TIMEOUT_MS,
          });
          await page.evaluate("document.getElementById('stop').click()");
          await page.waitFor("window.__playground.status === 'stopped'", {
            timeoutMs: RUN_TIMEOUT_MS,
          });
          const stoppedAt = await page.evaluate<number>("window.__playground.step");
          assert.ok(stoppedAt >= 3 && stoppedAt < KNOBS.steps, `stopped at step ${stoppedAt}`);
          await page.evaluate("document.getElementById('resume').click()");
          await page.waitFor("window.__playground.done || window.__playground.errors.length > 0", {
            timeoutMs: RUN_TIMEOUT_MS,
          });
          const state = await page.evaluate<PlaygroundState>("window.__playground");
          const shot = join(artifacts, `playground_${device}.png`);
          await page.screenshot(shot);
          const wall = (performance.now() - started) / 1000;
          console.log(
            `${device}: ${state.backend?.line}; ${state.step} steps in ${
              (state.elapsedMs / 1000).toFixed(1)
            } s of training (page wall ${wall.toFixed(1)} s; stopped at step ${stoppedAt} and ` +
              `resumed); screenshot: ${shot}`,
          );
          assert.deepEqual(state.errors, [], "the page reported errors");
          assert.deepEqual(page.problems(), [], "console errors, exceptions or failed requests");
          assert.equal(state.status, "done");
          assert.equal(state.backend?.device, device, `the page ran on ${device}`);
          if (device === "webgpu") assert.match(state.backend!.line, /^WebGPU \(.*swiftshader/i);
          assert.deepEqual(state.trainArgs, args[device], "the page's deno task train arguments");
          assert.deepEqual(
            state.records.map((r) => r.step),
            [...Array(KNOBS.steps).keys()].map((i) => i + 1),
          );
          assert.deepEqual(state.evals.map((r) => r.step), [0, 10, 20, 30]);

          const ref = await refs[device];
          console.log(
            `${device}: deno task train ${args[device].join(" ")}: ${ref.seconds.toFixed(1)} s; ` +
              `held-out pass@1 page ${state.evals.map((e) => e["pass@1"]).join(", ")}; deno ${
                ref.evals.map((e) => e["pass@1"]).join(", ")
              }`,
          );
          if (device === "wasm") {
            assert.deepEqual(withoutTiming(state.records), withoutTiming(ref.metrics));
            assert.deepEqual(withoutTiming(state.evals), withoutTiming(ref.evals));
            assert.deepEqual(state.evalSamples, ref.evalSamples);
            const zip = unzipSync(
              Uint8Array.from(
                atob(await page.evaluate<string>("window.__playgroundApi.modelZipBase64()")),
                (c) => c.charCodeAt(0),
              ),
            );
            const folder = `tiny-grpo-step${KNOBS.steps}`;
            assert.deepEqual(Object.keys(zip).sort(), [
              `${folder}/config.json`,
              `${folder}/generation_config.json`,
              `${folder}/model.safetensors`,
              `${folder}/tokenizer.json`,
              `${folder}/tokenizer_config.json`,
            ]);
            const saved = await Deno.readFile(
              join(ref.dir, "checkpoints", `step-${KNOBS.steps}`, "model.safetensors"),
            );
            assert.ok(
              zip[`${folder}/model.safetensors`]!.length === saved.length &&
                zip[`${folder}/model.safetensors`]!.every((b, i) => b === saved[i]),
              "the downloaded model.safetensors equals deno task train's step-30 checkpoint",
            );
            console.log(
              `wasm: ${state.records.length} step records, ${state.evals.length} evaluations and ` +
                `${state.evalSamples.length} held-out samples equal to deno task train's; ` +
                `model.safetensors byte-identical (${saved.length} bytes)`,
            );
          } else {
            const floats = new Map<string, FloatDiff>();
            const problems = [
              ...compareWebGpu("metrics", state.records, ref.metrics, floats),
              ...compareWebGpu("eval", state.evals, ref.evals, floats),
              ...compareWebGpu("eval_samples", state.evalSamples, ref.evalSamples, floats),
            ];
            const differing = [...floats].filter(([, d]) => d.differing > 0);
            const same = [...floats].filter(([, d]) => d.differing === 0).map(([k]) => k);
            console.log(
              `webgpu: sampled outcomes (rewards, lengths, pass@1, pass@k, completions) ${
                problems.length === 0 ? "all equal" : "differ"
              }; float metrics that differ: ${
                differing.map(([k, d]) =>
                  `${k} in ${d.differing}/${d.compared} records (max |diff| ${
                    d.maxAbs.toExponential(1)
                  }, relative ${d.maxRel.toExponential(1)})`
                ).join(", ") || "none"
              }; equal bit for bit: ${same.join(", ") || "none"}`,
            );
            assert.deepEqual(problems, [], "WebGPU page vs deno task train --device webgpu");
          }
        });
      }
    } finally {
      for (const r of await Promise.allSettled([refs.wasm, refs.webgpu])) {
        if (r.status === "fulfilled") await Deno.remove(r.value.out, { recursive: true });
      }
      await Deno.remove(out, { recursive: true });
      console.log(`playground browser test: ${seconds()} s`);
    }
  },
});
