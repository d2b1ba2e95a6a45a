/**
 * The studies of the laptop lab: each a controlled experiment on the reasoning recipe
 * (`grpo_cot`, from the same `builtin:tiny-cot` warm start), with only the studied factor
 * changed between its arms, and its comparisons fixed here, before any run.
 *
 * Design decisions:
 * - **A study is data**: arms are config layers over the recipe (what a user would `--set`), so
 *   `runs/studies/<name>/configs/` holds the exact YAML each arm ran, runnable by hand.
 * - **Shorter than the recipe.** A full study runs every arm for every seed, two runs at a time
 *   on 2 cores, within 20 minutes; its runs are therefore shorter than `grpo_cot` itself
 *   ({@link STUDY_BASE}); `--quick` shrinks them to a smoke test of the pipeline (its verdict
 *   means nothing and the report says so).
 * - **Comparisons are the source's claim as a direction**, on per-run numbers computed the same
 *   way for every study (`study.ts`): `pass@1/after`, `pass@1/gain`, `<metric>/last` (the mean
 *   of a `metrics.jsonl` key over the last quarter of steps), `samples_per_useful`, `wall_s`,
 *   `pass@<k>`.
 *
 * @module
 */

import type { Comparison } from "./verdict.ts";

/** One arm: a config layer over the study's base. */
export interface StudyArm {
  /** Short name (a directory name part). */
  name: string;
  /** Config values over the study's base (nested, as in a YAML file). */
  config: Record<string, unknown>;
  /** False for an arm that only evaluates the warm start (default true). */
  train?: boolean;
}

/** A study (see the module doc). */
export interface Study {
  /** Its name (`deno task study <name>`). */
  name: string;
  /** The claim tested, in one sentence. */
  claim: string;
  /** The source: authors, title, arXiv id. */
  source: string;
  /** Config values over {@link STUDY_BASE} shared by every arm. */
  config: Record<string, unknown>;
  /** The arms, the baseline first. */
  arms: StudyArm[];
  /** The comparisons the verdict is decided by (see `verdict.ts`). */
  comparisons: Comparison[];
  /** The `metrics.jsonl` keys plotted per step, with seed bands. */
  plots: string[];
  /** pass@k of the final policies for k = 1, 2, 4, … up to this (default: none). */
  passK?: number;
  /** What the scale of the lab may explain, written before running. */
  scaleNote: string;
}

/**
 * Config values every full study run has over `grpo_cot` (shorter runs; see the module doc): the
 * recipe's batch (64 responses, 8 groups) and rate for 40 of its 400 steps, held-out pass@1 on 64
 * problems × 4 samples at steps 0, 20 and 40. Sized so that two arms × three seeds fit in 20
 * minutes on the 2-core lab machine (each run about 3.5 minutes, two at a time), set before any
 * full run; 24 steps of 32 responses moved nothing at this rate.
 */
export const STUDY_BASE: Readonly<Record<string, unknown>> = Object.freeze({
  rollout: { batchSize: 64, groupSize: 8 },
  trainer: {
    steps: 40,
    evalEvery: 20,
    evalProblems: 64,
    evalSamples: 4,
    evalK: 4,
    saveEvery: 40,
    samplesEvery: 20,
  },
  output: { tensorboard: false },
});

/** What `--quick` sets over everything else: a smoke test of the pipeline. */
export const QUICK_OVERRIDES: Readonly<Record<string, unknown>> = Object.freeze({
  rollout: { batchSize: 8, groupSize: 4, maxNewTokens: 48 },
  algorithm: { microBatchSize: 8 },
  trainer: {
    steps: 1,
    evalEvery: 1,
    evalProblems: 2,
    evalSamples: 2,
    evalK: 2,
    saveEvery: 1,
    samplesEvery: 1,
  },
});

const R1 = "entropy";
const SMALL =
  "a 0.9M-parameter char-level policy trained for minutes, against models of 1.5B-32B " +
  "parameters trained for days: effects that need a large model's prior";

/** The studies, in `--list` order. */
export const STUDIES: readonly Study[] = Object.freeze([
  {
    name: "clip-higher",
    claim:
      "Raising the upper clip bound (epsilon_high 0.2 -> 0.28) keeps the policy's entropy higher " +
      "and does not lower accuracy.",
    source: "Yu et al., DAPO: An Open-Source LLM Reinforcement Learning System at Scale, " +
      "arXiv 2503.14476",
    // The clip acts only when a batch is used for several optimizer steps.
    config: { algorithm: { ppoMiniBatchSize: 8, ppoEpochs: 1 } },
    arms: [
      { name: "eps_high-0.20", config: { algorithm: { clip: { low: 0.2, high: 0.2 } } } },
      { name: "eps_high-0.28", config: { algorithm: { clip: { low: 0.2, high: 0.28 } } } },
    ],
    comparisons: [
      { metric: `${R1}/last`, a: "eps_high-0.20", b: "eps_high-0.28", claim: ">" },
      {
        metric: "pass@1/after",
        a: "eps_high-0.20",
        b: "eps_high-0.28",
        claim: ">=",
        margin: 0.05,
      },
    ],
    plots: [R1, "clip_frac/high", "reward/mean"],
    scaleNote: `${SMALL}; the entropy collapse DAPO fights develops over thousands of steps.`,
  },
  {
    name: "passk",
    claim: "RL raises pass@k at small k but the base model wins at large k (RL narrows what the " +
      "model can reach rather than extending it).",
    source: "Yue et al., Does Reinforcement Learning Really Incentivize Reasoning Capacity in " +
      "LLMs Beyond the Base Model?, arXiv 2504.13837",
    config: {},
    arms: [
      { name: "base", config: {}, train: false },
      { name: "rl", config: {} },
    ],
    comparisons: [
      { metric: "pass@1", a: "base", b: "rl", claim: ">" },
      { metric: "pass@max", a: "base", b: "rl", claim: "<" },
    ],
    plots: ["reward/mean", R1],
    passK: 256,
    scaleNote: `${SMALL}; at k = 256 both may saturate on a task this small.`,
  },
  {
    name: "length-bias",
    claim:
      "GRPO's per-response length normalisation lets wrong responses grow longer; Dr. GRPO's " +
      "constant normalisation does not.",
    source: "Liu et al., Understanding R1-Zero-Like Training: A Critical Perspective, " +
      "arXiv 2503.20783",
    config: {},
    arms: [
      {
        name: "dr_grpo",
        config: { algorithm: { estimator: "dr_grpo", aggregation: "seq-mean-token-sum-norm" } },
      },
      {
        name: "grpo",
        config: { algorithm: { estimator: "grpo", aggregation: "seq-mean-token-mean" } },
      },
    ],
    comparisons: [
      { metric: "response_length/wrong_mean/last", a: "dr_grpo", b: "grpo", claim: ">" },
    ],
    plots: ["response_length/wrong_mean", "response_length/correct_mean", "reward/mean"],
    scaleNote:
      `${SMALL}; the traces here have a fixed shape, so there is little room to pad a wrong answer.`,
  },
  {
    name: "kl",
    claim:
      "A larger KL penalty keeps the policy closer to the reference (lower KL) at the cost of " +
      "reward.",
    source: "Shao et al., DeepSeekMath, arXiv 2402.03300 (the k3 KL term of GRPO)",
    config: {},
    arms: [0, 0.001, 0.01, 0.1].map((beta) => ({
      name: `beta-${beta}`,
      config: { algorithm: { kl: { beta, estimator: "low_var_kl", placement: "loss" } } },
    })),
    comparisons: [
      { metric: "kl/last", a: "beta-0.001", b: "beta-0.1", claim: "<" },
      { metric: "reward/mean/last", a: "beta-0", b: "beta-0.1", claim: "<" },
    ],
    plots: ["kl", "reward/mean"],
    scaleNote: `${SMALL}; in 40 steps the policy may not move far enough for β to bind.`,
  },
  {
    name: "dynamic-sampling",
    claim:
      "Dynamic sampling (dropping groups whose rewards are all equal and sampling more) costs " +
      "more samples per step but reaches a given accuracy in fewer steps.",
    source: "Yu et al., DAPO, arXiv 2503.14476",
    config: {},
    arms: [
      { name: "off", config: { rollout: { dynamicSampling: { enabled: false, maxRetries: 4 } } } },
      { name: "on", config: { rollout: { dynamicSampling: { enabled: true, maxRetries: 4 } } } },
    ],
    comparisons: [
      { metric: "samples_per_useful", a: "off", b: "on", claim: "<" },
      { metric: "pass@1/after", a: "off", b: "on", claim: ">" },
    ],
    plots: ["frac_zero_std_groups", "rollout/rounds", "reward/mean"],
    scaleNote:
      `${SMALL}; with ~50% accuracy few groups are all-correct or all-wrong, so there is little ` +
      "to drop.",
  },
  {
    name: "one-shot",
    claim: "RL on one training example improves held-out accuracy about as much as the full set.",
    source: "Wang et al., Reinforcement Learning for Reasoning in Large Language Models with " +
      "One Training Example, arXiv 2504.20571",
    config: {},
    arms: [
      { name: "full", config: { task: { trainProblems: null } } },
      { name: "one", config: { task: { trainProblems: 1 } } },
    ],
    comparisons: [
      { metric: "pass@1/gain", a: "full", b: "one", claim: ">=", margin: 0.05 },
    ],
    plots: ["reward/mean", R1],
    scaleNote:
      `${SMALL}; the paper's gains ride on a pretrained model's latent skills, which a model ` +
      "trained only on these traces lacks.",
  },
  {
    name: "spurious-rewards",
    claim: "Random or format-only rewards improve held-out accuracy almost as much as the true " +
      "reward.",
    source: "Shao et al., Spurious Rewards: Rethinking Training Signals in RLVR, " +
      "arXiv 2506.10947",
    // The recipe's format bonus is off in every arm, so each arm's reward is exactly its one.
    config: { task: { formatWeight: 0 } },
    arms: [
      { name: "true", config: { rewards: [{ type: "task" }] } },
      {
        name: "random",
        config: { rewards: [{ type: "random", options: { p: 0.5 } }] },
      },
      { name: "format", config: { rewards: [{ type: "format" }] } },
    ],
    comparisons: [
      { metric: "pass@1/gain", a: "true", b: "random", claim: ">=", margin: 0.05 },
      { metric: "pass@1/gain", a: "true", b: "format", claim: ">=", margin: 0.05 },
    ],
    plots: ["reward/mean", "accuracy/mean"],
    scaleNote:
      `${SMALL}; the paper found the effect for Qwen2.5-Math and not for Llama or OLMo, and ` +
      "traced it to code reasoning learned in pretraining.",
  },
  {
    name: "entropy-tokens",
    claim: "Training only on the 20% highest-entropy tokens matches training on all tokens.",
    source: "Wang et al., Beyond the 80/20 Rule: High-Entropy Minority Tokens Drive Effective " +
      "RLVR, arXiv 2506.01939",
    config: {},
    arms: [
      { name: "all", config: { algorithm: { lossOptions: { topEntropyFraction: 1 } } } },
      { name: "top20", config: { algorithm: { lossOptions: { topEntropyFraction: 0.2 } } } },
    ],
    comparisons: [
      { metric: "pass@1/gain", a: "all", b: "top20", claim: ">=", margin: 0.05 },
    ],
    plots: [R1, "reward/mean"],
    scaleNote: `${SMALL}; the paper's effect grew with model size and was weak at 8B.`,
  },
]);

/**
 * The study named `name`, or an error listing the names.
 *
 * @example Usage
 * ```ts
 * import { studyByName } from "./studies.ts";
 * import assert from "node:assert/strict";
 * assert.equal(studyByName("kl").arms.length, 4);
 * assert.throws(() => studyByName("klx"), /unknown study "klx"; use one of clip-higher, passk/);
 * ```
 */
export function studyByName(name: string): Study {
  const s = STUDIES.find((x) => x.name === name);
  if (s === undefined) {
    throw new RangeError(
      `unknown study ${JSON.stringify(name)}; use one of ${STUDIES.map((x) => x.name).join(", ")}`,
    );
  }
  return s;
}
