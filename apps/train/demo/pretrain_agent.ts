/**
 * `deno task pretrain:agent`: supervised warm start of a tool-using tiny policy, written to
 * `apps/train/checkpoints/tiny-agent/` (`builtin:tiny-agent`), the starting point of the
 * `agent_calc` recipe.
 *
 * Design decisions:
 * - **A cold start, then RL** (as ReTool and most tool-use RL do): a 120K-parameter char-level
 *   model cannot discover a tool-call syntax by sampling, so it first imitates episodes of the
 *   calculator environment in the compact syntax: `347+589=` → `{347+589}` → (the environment
 *   writes `1036|`) → `1036<eos>`. The loss covers the policy's tokens only; the observation is
 *   context, exactly as in RL (`lossMask` 0).
 * - **It starts from the shipped `builtin:tiny`** (which already reads and writes the compact
 *   arithmetic format) and is **deliberately under-trained**, as `pretrain.ts` is: it stops at
 *   the first held-out evaluation (episodes in the real environment, temperature 1) whose success
 *   rate reaches {@link PretrainAgentOptions.targetSuccess}, so RL has room to improve it.
 * - The problems are the environment's own task (3-digit additions), with the held-out problems
 *   of `deno task train` skipped; initialisation, data order and evaluation follow `seed`.
 *
 * @module
 */

import { resolve } from "node:path";
import { saveCheckpoint } from "@rlvr/policy/fs";
import type { ArithmeticRow, TaskRow } from "@rlvr/rewards";
import { calcEnv, type Environment } from "@rlvr/rewards/env";
import { AdamW } from "@rlvr/tensor";
import { evaluateEpisodes } from "../loop/episode.ts";
import { TINY_AGENT_CHECKPOINT_DIR, TINY_CHECKPOINT_DIR } from "../loop/policy.ts";
import { loadPolicy } from "../loop/policy.ts";
import { heldOutProblems, TrainStream } from "../loop/problems.ts";
import { encodeRendered, promptIds } from "../loop/prompt.ts";
import { promptText } from "./format.ts";
import { sftStep } from "./sft.ts";

/** The task of the agent demo: 3-digit additions, one operator. */
export const AGENT_TASK_OPTIONS: Readonly<
  { digits: number; operators: readonly ["+"]; chainLength: number }
> = Object.freeze({ digits: 3, operators: ["+"] as const, chainLength: 1 });

/**
 * The calculator environment of the agent demo in the compact syntax, prompts `347+589=`.
 *
 * @example Usage
 * ```ts
 * import { agentCalcEnv } from "./pretrain_agent.ts";
 * import assert from "node:assert/strict";
 * const env = agentCalcEnv();
 * const row = env.task.row(0, 0);
 * const ep = env.reset(row, { seed: 0 });
 * assert.match(ep.prompt, /^\d{3}\+\d{3}=$/);
 * const call = await ep.step(`{${ep.prompt.slice(0, -1)}}`);
 * assert.equal(call.observation, `${row.answer}|`);
 * assert.equal((await ep.step(row.answer)).done, true);
 * assert.equal(await ep.finalReward(), 1);
 * ```
 */
export function agentCalcEnv(maxTurns = 3): Environment<ArithmeticRow> {
  return calcEnv({
    task: { ...AGENT_TASK_OPTIONS, operators: [...AGENT_TASK_OPTIONS.operators] },
    syntax: "compact",
    maxTurns,
    render: (row) => promptText(row),
  });
}

/** Options of {@link pretrainAgent}. */
export interface PretrainAgentOptions {
  /** Output folder (default the shipped `tiny-agent` folder). */
  out?: string;
  /** The checkpoint to start from (default the shipped `builtin:tiny`). */
  from?: string;
  /** Seed of data order and evaluation (default 0). */
  seed?: number;
  /** Most SFT steps (default 2000). */
  maxSteps?: number;
  /** Episodes per step (default 64). */
  batchSize?: number;
  /** Peak learning rate (default 2e-3). */
  lr?: number;
  /** Evaluate every N steps (default 5: success rises fast once the syntax is learnt). */
  evalEvery?: number;
  /** Stop at the first evaluation with held-out success >= this (default 0.25). */
  targetSuccess?: number;
  /** Held-out problems (default 64). */
  evalProblems?: number;
  /** Episodes per held-out problem (default 8). */
  evalSamples?: number;
  /** Progress lines (default console.log). */
  log?: (line: string) => void;
}

/** What {@link pretrainAgent} returns. */
export interface PretrainAgentResult {
  /** SFT steps taken. */
  steps: number;
  /** Held-out success rate (pass@1) at the end. */
  success: number;
  /** Held-out pass@k at the end. */
  passAtK: number;
  /** Seconds. */
  seconds: number;
}

/**
 * The demonstration of one episode: the policy's call, the environment's answer (loss 0) and
 * the policy's final answer with EOS.
 */
function trace(
  encode: (text: string) => number[],
  row: ArithmeticRow,
  eos: number,
): { completionIds: number[]; lossMask: number[] } {
  const call = encode(`{${promptText(row).slice(0, -1)}}`); // `{347+589}`: the prompt less `=`
  const obs = encode(`${row.answer}|`);
  const answer = [...encode(row.answer), eos];
  return {
    completionIds: [...call, ...obs, ...answer],
    lossMask: [...call.map(() => 1), ...obs.map(() => 0), ...answer.map(() => 1)],
  };
}

/**
 * Warm-starts the tool-using tiny policy and saves it; see the module doc.
 *
 * @example Usage
 * ```ts
 * import { pretrainAgent } from "./pretrain_agent.ts";
 * import assert from "node:assert/strict";
 * const out = await Deno.makeTempDir();
 * const r = await pretrainAgent({ out, maxSteps: 2, evalEvery: 2, evalProblems: 2, evalSamples: 2, log: () => {} });
 * assert.equal(r.steps, 2);
 * assert.ok((await Deno.stat(`${out}/model.safetensors`)).isFile);
 * await Deno.remove(out, { recursive: true });
 * ```
 */
export async function pretrainAgent(
  options: PretrainAgentOptions = {},
): Promise<PretrainAgentResult> {
  const out = options.out ?? TINY_AGENT_CHECKPOINT_DIR;
  const seed = options.seed ?? 0;
  const maxSteps = options.maxSteps ?? 2000;
  const batchSize = options.batchSize ?? 64;
  const lr = options.lr ?? 2e-3;
  const evalEvery = options.evalEvery ?? 5;
  const target = options.targetSuccess ?? 0.25;
  const evalSamples = options.evalSamples ?? 8;
  const log = options.log ?? ((line: string) => console.log(line));
  const started = performance.now();
  const { model, tokenizer, generationConfig, eosTokenIds } = await loadPolicy(
    options.from ?? TINY_CHECKPOINT_DIR,
  );
  const env = agentCalcEnv();
  const held = heldOutProblems(env.task, options.evalProblems ?? 64) as ArithmeticRow[];
  const stream = new TrainStream(env.task, seed, held);
  const eos = tokenizer.eosTokenIds[0]!;
  const plain = (text: string) => tokenizer.encode(text, { addSpecialTokens: false });
  const encodePrompt = (text: string) => encodeRendered(tokenizer, text);
  const opt = new AdamW(model.parameters(), { lr, betas: [0.9, 0.98], weightDecay: 0.01 });
  log(
    `pretrain:agent: from ${options.from ?? "builtin:tiny"}, calculator episodes on ${
      JSON.stringify(AGENT_TASK_OPTIONS)
    }, batch ${batchSize}, lr ${lr}, stop at held-out success >= ${target} or ${maxSteps} steps`,
  );
  const evalNow = () =>
    evaluateEpisodes(model, tokenizer, env as unknown as Environment<TaskRow>, held, {
      samples: evalSamples,
      k: evalSamples,
      seed,
      sampling: { temperature: 1 },
      maxNewTokens: 12,
      eosTokenIds,
      encode: encodePrompt,
    });
  let step = 0;
  let last = { passAt1: 0, passAtK: 0 };
  try {
    last = await evalNow();
    log(
      `step 0: held-out success ${(100 * last.passAt1).toFixed(1)}%, pass@${evalSamples} ${
        (100 * last.passAtK).toFixed(1)
      }%`,
    );
    while (step < maxSteps && last.passAt1 < target) {
      const rows = stream.take(batchSize) as ArithmeticRow[];
      const traces = rows.map((row) => trace(plain, row, eos));
      opt.lr = lr * Math.min(1, (step + 1) / 20);
      const lossValue = await sftStep(
        model,
        opt,
        rows.map((row, i) => ({ promptIds: promptIds(tokenizer, row), ...traces[i]! })),
      );
      step++;
      if (step % evalEvery === 0 || step === maxSteps) {
        last = await evalNow();
        log(
          `step ${step}: loss ${lossValue.toFixed(4)}, held-out success ${
            (100 * last.passAt1).toFixed(1)
          }%, pass@${evalSamples} ${(100 * last.passAtK).toFixed(1)}% (${
            ((performance.now() - started) / 1000).toFixed(0)
          } s)`,
        );
      }
    }
    await saveCheckpoint(out, {
      config: model.config,
      params: model.params,
      ...(generationConfig !== null ? { generationConfig } : {}),
    });
    await tokenizer.save(out);
  } finally {
    opt.dispose();
    model.dispose();
  }
  const seconds = (performance.now() - started) / 1000;
  log(
    `pretrain:agent: saved ${out} after ${step} steps (${seconds.toFixed(0)} s): held-out success ${
      (100 * last.passAt1).toFixed(1)
    }%, pass@${evalSamples} ${(100 * last.passAtK).toFixed(1)}%`,
  );
  return { steps: step, success: last.passAt1, passAtK: last.passAtK, seconds };
}

if (import.meta.main) {
  const out = Deno.args[0];
  await pretrainAgent(out !== undefined ? { out: resolve(out) } : {});
}
