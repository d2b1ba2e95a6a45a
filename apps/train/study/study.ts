/**
 * Runs a study of `studies.ts`: every arm for every seed as a `deno task train` run, the
 * per-run numbers, the verdict of `verdict.ts`, and `runs/studies/<name>/` with `result.json`,
 * `report.html`, `configs/<arm>.yaml` and the runs themselves.
 *
 * Design decisions:
 * - **Runs are separate processes**, two at a time by default: the CPU backend computes on one
 *   thread, so two runs use the 2 cores of the lab machine, and a run is exactly what
 *   `deno task train --config runs/studies/<name>/configs/<arm>.yaml --set trainer.seed=<s>`
 *   does by hand (its output is in the run's `train.log`).
 * - **Per-run numbers are computed one way for every study**: `pass@1/before` and
 *   `pass@1/after` (the first and last held-out evaluation of `eval.jsonl`), `pass@1/gain`
 *   (their difference), `<key>/last` (the mean of a `metrics.jsonl` key over the last quarter of
 *   the steps, at least one), `samples_per_useful` (responses generated per response in a group
 *   whose rewards differ, the ones with a gradient), `wall_s`; a `passK` study adds `pass@<k>`
 *   for k = 1, 2, 4, … (the unbiased estimator from n = kMax samples per held-out problem) and
 *   `pass@1` / `pass@max`.
 * - **The verdict is computed, not written**: `result.json` holds the rule, the per-seed
 *   differences and intervals it was decided from; a `--quick` run says `quick: true` and its
 *   verdict only proves the pipeline.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { passAtK } from "@rlvr/sampling";
import { writeFileAtomic } from "../run/atomic.ts";
import { readJsonl } from "@rlvr/common/fs";
import { evaluate } from "../loop/eval.ts";
import { loadPolicy } from "../loop/policy.ts";
import { heldOutProblems } from "../loop/problems.ts";
import { cotRecipeTask } from "../demo/pretrain_cot.ts";
import { QUICK_OVERRIDES, type Study, STUDY_BASE, studyByName } from "./studies.ts";
import {
  judgeComparison,
  type JudgedComparison,
  type Verdict,
  VERDICT_RULE,
  verdictOf,
} from "./verdict.ts";
import { writeStudyReport } from "./report.ts";

/** Options of {@link runStudy}. */
export interface StudyOptions {
  /** Smoke-test sizes ({@link QUICK_OVERRIDES}); default false. */
  quick?: boolean;
  /** Seeds 0..N-1 (default 3; at least 2 for an interval). */
  seeds?: number;
  /** Parent folder (default `runs/studies`). */
  out?: string;
  /** Runs at a time (default 2). */
  concurrency?: number;
  /** Progress lines (default console.log). */
  log?: (line: string) => void;
}

/** One run's numbers (see the module doc). */
export type RunNumbers = Record<string, number>;

/** Per-step curves of one arm, one array per seed. */
export interface ArmCurves {
  /** `metrics.jsonl` records' `[step, value]` per plotted key, per seed. */
  metrics: Record<string, [number, number | null][][]>;
  /** `[step, pass@1]` of `eval.jsonl`, per seed. */
  passAt1: [number, number][][];
  /** `[k, pass@k]` per seed, for a `passK` study. */
  passK?: [number, number][][];
}

/** `result.json` of a study. */
export interface StudyResult {
  /** The study's name. */
  name: string;
  /** The claim tested. */
  claim: string;
  /** The source paper. */
  source: string;
  /** The computed verdict. */
  verdict: Verdict;
  /** The rule it was computed by. */
  rule: string;
  /** Whether this was a `--quick` smoke test (its verdict then means nothing). */
  quick: boolean;
  /** The seeds. */
  seeds: number[];
  /** Arm names. */
  arms: string[];
  /** Per arm, per number, the values in seed order. */
  numbers: Record<string, Record<string, number[]>>;
  /** The comparisons with their differences, intervals and outcomes. */
  comparisons: JudgedComparison[];
  /** What the lab's scale may explain. */
  scaleNote: string;
  /** The command that reproduces it. */
  command: string;
  /** Wall time of the whole study, seconds. */
  wallS: number;
}

const MAIN_TS = fileURLToPath(new URL("../main.ts", import.meta.url));

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/**
 * Deep merge of config layers: objects merge, anything else (arrays too) replaces.
 *
 * @example Usage
 * ```ts
 * import { mergeLayers } from "./study.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   mergeLayers({ a: { x: 1, y: [1] } }, { a: { y: [2] }, b: 3 }),
 *   { a: { x: 1, y: [2] }, b: 3 },
 * );
 * ```
 */
export function mergeLayers(
  ...layers: readonly Record<string, unknown>[]
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [k, v] of Object.entries(layer)) {
      out[k] = isObject(v) && isObject(out[k])
        ? mergeLayers(out[k] as Record<string, unknown>, v)
        : structuredClone(v);
    }
  }
  return out;
}

/**
 * The YAML an arm runs: `extends: grpo_cot` plus the merged layers.
 *
 * @example Usage
 * ```ts
 * import { armConfigYaml } from "./study.ts";
 * import { studyByName } from "./studies.ts";
 * import assert from "node:assert/strict";
 * const yaml = armConfigYaml(studyByName("clip-higher"), "eps_high-0.28", false);
 * assert.match(yaml, /^extends: grpo_cot$/m);
 * assert.match(yaml, /high: 0.28/);
 * ```
 */
export function armConfigYaml(study: Study, arm: string, quick: boolean): string {
  const a = study.arms.find((x) => x.name === arm)!;
  const layers = mergeLayers(
    STUDY_BASE,
    study.config,
    a.config,
    quick ? QUICK_OVERRIDES : {},
  );
  return `# Study ${study.name}, arm ${arm}${quick ? " (--quick)" : ""}: ${study.claim}\n` +
    YAML.stringify({ extends: "grpo_cot", ...layers });
}

async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(n, jobs.length)) }, worker));
  return out;
}

async function trainRun(
  config: string,
  dir: string,
  name: string,
  seed: number,
): Promise<number> {
  const started = performance.now();
  const logPath = join(dir, `${name}.train.log`);
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      MAIN_TS,
      "--config",
      config,
      "--set",
      `trainer.seed=${seed}`,
      "--set",
      `output.dir=${dir}`,
      "--set",
      `output.name=${name}`,
    ],
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  await Deno.writeTextFile(logPath, text);
  if (code !== 0) {
    throw new Error(
      `study run ${name} failed (exit ${code}); the end of ${logPath}:\n${text.slice(-2000)}`,
    );
  }
  return (performance.now() - started) / 1000;
}

function lastQuarterMean(records: readonly Record<string, unknown>[], key: string): number {
  const values = records.map((r) => r[key]).filter((v): v is number =>
    typeof v === "number" && Number.isFinite(v)
  );
  if (values.length === 0) return NaN;
  const tail = values.slice(-Math.max(1, Math.ceil(values.length / 4)));
  return tail.reduce((a, b) => a + b, 0) / tail.length;
}

async function passKCurve(
  checkpoint: string,
  seed: number,
  kMax: number,
  problems: number,
  maxNewTokens: number,
): Promise<[number, number][]> {
  const { model, tokenizer, eosTokenIds } = await loadPolicy(checkpoint);
  try {
    const task = cotRecipeTask();
    const rows = heldOutProblems(task, problems);
    const correct = new Array<number>(rows.length).fill(0);
    await evaluate(model, tokenizer, task, rows, {
      samples: kMax,
      k: kMax,
      seed: 1000 + seed,
      sampling: { temperature: 1 },
      maxNewTokens,
      eosTokenIds,
      onSample: (s) => {
        correct[s.problem]! += s.reward;
      },
    });
    const curve: [number, number][] = [];
    for (let k = 1; k <= kMax; k *= 2) {
      curve.push([k, correct.reduce((a, c) => a + passAtK(kMax, c, k), 0) / rows.length]);
    }
    return curve;
  } finally {
    model.dispose();
  }
}

async function lastCheckpoint(runDir: string): Promise<string> {
  const steps: number[] = [];
  for await (const e of Deno.readDir(join(runDir, "checkpoints"))) {
    const m = /^step-(\d+)$/.exec(e.name);
    if (m !== null && e.isDirectory) steps.push(Number(m[1]));
  }
  if (steps.length === 0) throw new Error(`study: no checkpoint in ${runDir}/checkpoints`);
  return join(runDir, "checkpoints", `step-${Math.max(...steps)}`);
}

/**
 * Runs the study `name` and writes its folder; see the module doc.
 *
 * @example Usage
 * ```ts ignore
 * import { runStudy } from "./study.ts";
 * const result = await runStudy("clip-higher", { quick: true, seeds: 2 });
 * console.log(result.verdict);
 * ```
 */
export async function runStudy(name: string, options: StudyOptions = {}): Promise<StudyResult> {
  const study = studyByName(name);
  const quick = options.quick ?? false;
  const nSeeds = options.seeds ?? 3;
  if (!Number.isInteger(nSeeds) || nSeeds < 2 || nSeeds > 32) {
    throw new RangeError(
      `study: --seeds must be an integer from 2 to 32 (an interval needs 2), got ${nSeeds}`,
    );
  }
  const seeds = Array.from({ length: nSeeds }, (_, i) => i);
  const log = options.log ?? ((line: string) => console.log(line));
  const root = resolve(options.out ?? "runs/studies", study.name);
  const started = performance.now();
  await Deno.remove(root, { recursive: true }).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  const configsDir = join(root, "configs");
  const runsDir = join(root, "runs");
  await Deno.mkdir(configsDir, { recursive: true });
  await Deno.mkdir(runsDir, { recursive: true });
  const configPath: Record<string, string> = {};
  for (const arm of study.arms) {
    configPath[arm.name] = join(configsDir, `${arm.name}.yaml`);
    await Deno.writeTextFile(configPath[arm.name]!, armConfigYaml(study, arm.name, quick));
  }
  const trained = study.arms.filter((a) => a.train !== false);
  log(
    `study ${study.name}${
      quick ? " (--quick)" : ""
    }: ${trained.length} trained arm(s) x ${nSeeds} seeds, ${
      options.concurrency ?? 2
    } at a time, in ${root}`,
  );
  let done = 0;
  const total = trained.length * nSeeds;
  const wall: Record<string, number> = {};
  await pool(
    seeds.flatMap((seed) =>
      trained.map((arm) => async () => {
        const runName = `${arm.name}-s${seed}`;
        wall[runName] = await trainRun(configPath[arm.name]!, runsDir, runName, seed);
        done++;
        log(
          `  ${runName} done in ${wall[runName]!.toFixed(0)} s (${done}/${total}, ${
            ((performance.now() - started) / 1000).toFixed(0)
          } s)`,
        );
      })
    ),
    options.concurrency ?? 2,
  );

  // The numbers of every run, and the curves of the report.
  const numbers: Record<string, Record<string, number[]>> = {};
  const curves: Record<string, ArmCurves> = {};
  const metricKeys = new Set<string>(study.plots);
  for (const c of study.comparisons) {
    const m = /^(.*)\/last$/.exec(c.metric);
    if (m !== null) metricKeys.add(m[1]!);
  }
  const quickSizes = QUICK_OVERRIDES as { rollout: { maxNewTokens: number } };
  for (const arm of study.arms) {
    const per: Record<string, number[]> = {};
    const cv: ArmCurves = { metrics: {}, passAt1: [] };
    const push = (k: string, v: number) => (per[k] ??= []).push(v);
    for (const seed of seeds) {
      const runDir = join(runsDir, `${arm.name}-s${seed}`);
      if (arm.train !== false) {
        const metrics = (await readJsonl<Record<string, number | null>>(
          join(runDir, "metrics.jsonl"),
        )).records;
        const evals = (await readJsonl<Record<string, number>>(join(runDir, "eval.jsonl"))).records;
        const before = evals[0]?.["pass@1"] ?? NaN;
        const after = evals.at(-1)?.["pass@1"] ?? NaN;
        push("pass@1/before", before);
        push("pass@1/after", after);
        push("pass@1/gain", after - before);
        for (const key of metricKeys) {
          push(`${key}/last`, lastQuarterMean(metrics, key));
          (cv.metrics[key] ??= []).push(
            metrics.map((
              m,
            ) => [m.step as number, typeof m[key] === "number" ? m[key] as number : null]),
          );
        }
        const batch = (YAML.parse(await Deno.readTextFile(join(runDir, "config.yaml"))) as {
          rollout: { batchSize: number };
        }).rollout.batchSize;
        const generated = metrics.reduce((a, m) => a + (m["rollout/rounds"] ?? 1) * batch, 0);
        const useful = metrics.reduce(
          (a, m) => a + (m["batch/responses"] ?? 0) * (1 - (m.frac_zero_std_groups ?? 0)),
          0,
        );
        push("samples_per_useful", useful > 0 ? generated / useful : NaN);
        push("wall_s", wall[`${arm.name}-s${seed}`]!);
        cv.passAt1.push(evals.map((e) => [e.step ?? 0, e["pass@1"] ?? NaN] as [number, number]));
      }
      if (study.passK !== undefined) {
        const kMax = quick ? 4 : study.passK;
        const checkpoint = arm.train === false ? "builtin:tiny-cot" : await lastCheckpoint(runDir);
        const curve = await passKCurve(
          checkpoint,
          seed,
          kMax,
          quick ? 2 : 16,
          quick ? quickSizes.rollout.maxNewTokens : 128,
        );
        (cv.passK ??= []).push(curve);
        for (const [k, p] of curve) push(`pass@${k}`, p);
        push("pass@max", curve.at(-1)![1]);
        log(
          `  pass@k of ${arm.name}-s${seed}: ${
            curve.map(([k, p]) => `${k}:${p.toFixed(3)}`).join(" ")
          }`,
        );
      }
    }
    numbers[arm.name] = per;
    curves[arm.name] = cv;
  }
  const comparisons = study.comparisons.map((c) =>
    judgeComparison(c, numbers[c.a]![c.metric]!, numbers[c.b]![c.metric]!)
  );
  const result: StudyResult = {
    name: study.name,
    claim: study.claim,
    source: study.source,
    verdict: verdictOf(comparisons),
    rule: VERDICT_RULE,
    quick,
    seeds,
    arms: study.arms.map((a) => a.name),
    numbers,
    comparisons,
    scaleNote: study.scaleNote,
    command: `deno task study ${study.name}${quick ? " --quick" : ""} --seeds ${nSeeds}`,
    wallS: (performance.now() - started) / 1000,
  };
  await writeFileAtomic(join(root, "result.json"), JSON.stringify(result, null, 2) + "\n");
  await writeStudyReport(join(root, "report.html"), study, result, curves);
  log(
    `study ${study.name}: ${result.verdict} (${result.wallS.toFixed(0)} s); ${
      join(root, "report.html")
    }`,
  );
  return result;
}
