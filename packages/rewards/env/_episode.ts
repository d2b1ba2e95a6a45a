/**
 * Internal: the tool-calling episode shared by the environments of this folder: an action is
 * either a tool call (written in a {@link CallSyntax}) or the final answer; calls go through
 * `callTool` and come back as observations; the episode ends at the final answer or after
 * `maxTurns` actions, and records every call.
 *
 * Parsing rules (documented once, used by every environment):
 * - An action that contains the call opener is a call turn. The input is the text between the
 *   first opener and the next closer (trimmed); text around it is ignored. An opener without a
 *   closer is a malformed call: the observation is an error and the episode goes on.
 * - Any other action is the final answer: with `answerOpen`, the text inside the last
 *   `answerOpen … answerClose` (a missing closer reads to the end); without it, the whole
 *   trimmed action, or the inside of its last `<answer>…</answer>` when it has one (task
 *   prompts ask for that tag). An empty answer counts as none (reward 0).
 * - The last allowed turn ends the episode even when it is a call; that call is not run
 *   (its observation could never be used) and is recorded with status `not_run`.
 *
 * @module
 */

import { callTool, type Tool, type ToolLimits, type ToolStatus } from "./tool.ts";
import type { Environment, Episode, ResetOptions, StepResult } from "./types.ts";
import type { Task, TaskRow } from "../tasks/task.ts";
import { checkNumber } from "../_check.ts";

/** How tool calls, their results and the final answer are written in the text. */
export interface CallSyntax {
  /** Opens a tool call (`{`, `<calc>`). */
  readonly callOpen: string;
  /** Closes a tool call; it is the environment's stop string (`}`, `</calc>`). */
  readonly callClose: string;
  /** Written before a tool's result (`""`, `<result>`). */
  readonly resultOpen: string;
  /** Written after a tool's result (`|`, `</result>`). */
  readonly resultClose: string;
  /**
   * Opens the final answer (`<answer>`); absent: a turn without a call is the answer (its
   * trimmed text, or the inside of its `<answer>…</answer>` when it has one).
   */
  readonly answerOpen?: string;
  /** Closes the final answer (`</answer>`). */
  readonly answerClose?: string;
}

/** How a recorded call ended: {@link ToolStatus}, `malformed` (unparsable) or `not_run`. */
export type CallStatus = ToolStatus | "malformed" | "not_run";

/** One tool call of an episode. */
export interface ToolCallRecord {
  /** The turn (1-based) that made the call. */
  turn: number;
  /** The call's input text. */
  input: string;
  /** How it ended. */
  status: CallStatus;
  /** Characters the tool returned (0 when it failed or did not run). */
  outputChars: number;
  /** Milliseconds the call took. */
  ms: number;
}

/** What an episode records for logs and metrics. */
export interface EpisodeRecord {
  /** The episode's seed. */
  seed: number;
  /** Actions taken so far. */
  turns: number;
  /** Every tool call, in order. */
  calls: ToolCallRecord[];
  /** The final answer, or `null` (none given yet, or an empty one). */
  answer: string | null;
  /** Why the episode ended: a final answer, the turn limit, or `null` while it runs. */
  endedBy: "answer" | "max_turns" | null;
}

/** An episode of a tool-using environment: an {@link Episode} that also shows its record. */
export interface ToolEpisode extends Episode {
  /** A copy of what happened so far (calls, statuses, the answer). */
  record(): EpisodeRecord;
}

/** An environment whose episodes are {@link ToolEpisode}s. */
export interface ToolEnvironment<R extends TaskRow = TaskRow> extends Environment<R> {
  /** Starts an episode on `row`. */
  reset(row: R, options: ResetOptions): ToolEpisode;
}

/** How a final answer scores. */
export interface Verdict {
  /** The episode reward. */
  reward: number;
  /** Whether the episode counts as a success. */
  success: boolean;
}

/** What {@link toolEpisode} needs. */
export interface ToolEpisodeSpec {
  prompt: string;
  seed: number;
  syntax: CallSyntax;
  tool: Tool;
  limits: Omit<ToolLimits, "signal">;
  maxTurns: number;
  /** Scores the final answer (`null`: none). */
  judge(answer: string | null): Verdict;
}

/** Checks a syntax object (non-empty call opener and closer; answer tags both or neither). */
export function checkSyntax(owner: string, syntax: unknown): CallSyntax {
  const s = syntax as Partial<CallSyntax> | null;
  const str = (v: unknown) => typeof v === "string";
  if (
    typeof s !== "object" || s === null || !str(s.callOpen) || s.callOpen === "" ||
    !str(s.callClose) || s.callClose === "" || !str(s.resultOpen) || !str(s.resultClose) ||
    (s.answerOpen !== undefined && (!str(s.answerOpen) || s.answerOpen === "")) ||
    (s.answerOpen === undefined) !== (s.answerClose === undefined)
  ) {
    throw new TypeError(
      `${owner}: syntax must be "compact", "tagged" or {callOpen, callClose, resultOpen, ` +
        `resultClose, answerOpen?, answerClose?} with non-empty call tags, got ${
          JSON.stringify(syntax)
        }`,
    );
  }
  return Object.freeze({ ...s }) as CallSyntax;
}

/** The final answer of an action with no call (see the module doc), or `null`. */
export function parseAnswer(action: string, syntax: CallSyntax): string | null {
  let text = action;
  // without answer tags, an <answer>…</answer> in the text still counts (the task prompts ask
  // for it), else the whole text
  const open = syntax.answerOpen ?? (action.includes("<answer>") ? "<answer>" : undefined);
  const close = syntax.answerOpen === undefined ? "</answer>" : syntax.answerClose;
  if (open !== undefined) {
    const i = action.lastIndexOf(open);
    if (i < 0) return null;
    text = action.slice(i + open.length);
    const j = close ? text.indexOf(close) : -1;
    if (j >= 0) text = text.slice(0, j);
  }
  text = text.trim();
  return text === "" ? null : text;
}

/** Starts an episode (see the module doc). */
export function toolEpisode(spec: ToolEpisodeSpec): ToolEpisode {
  const { syntax, tool, maxTurns } = spec;
  const record: EpisodeRecord = {
    seed: spec.seed,
    turns: 0,
    calls: [],
    answer: null,
    endedBy: null,
  };
  let verdict: Verdict | null = null;
  const wrap = (text: string) => `${syntax.resultOpen}${text}${syntax.resultClose}`;
  const finish = (endedBy: "answer" | "max_turns"): Verdict => {
    record.endedBy = endedBy;
    verdict = spec.judge(record.answer);
    return verdict;
  };
  const summary = () => ({
    turns: record.turns,
    toolCalls: record.calls.length,
    statuses: record.calls.map((c) => c.status),
    answer: record.answer,
    endedBy: record.endedBy,
  });
  return {
    prompt: spec.prompt,
    async step(action: string, signal?: AbortSignal): Promise<StepResult> {
      if (record.endedBy !== null) {
        throw new Error(
          `episode is over (ended by ${record.endedBy} after ${record.turns} turns); reset a new one`,
        );
      }
      if (typeof action !== "string") {
        throw new TypeError(`Episode.step: action must be a string, got ${typeof action}`);
      }
      const turn = ++record.turns;
      const last = turn >= maxTurns;
      const open = action.indexOf(syntax.callOpen);
      if (open < 0) {
        record.answer = parseAnswer(action, syntax);
        const v = finish("answer");
        return { observation: "", done: true, info: { ...summary(), reward: v.reward } };
      }
      const close = action.indexOf(syntax.callClose, open + syntax.callOpen.length);
      const input = close < 0
        ? action.slice(open + syntax.callOpen.length).trim()
        : action.slice(open + syntax.callOpen.length, close).trim();
      if (last) {
        record.calls.push({ turn, input, status: "not_run", outputChars: 0, ms: 0 });
        const v = finish("max_turns");
        return { observation: "", done: true, info: { ...summary(), reward: v.reward } };
      }
      if (close < 0) {
        record.calls.push({ turn, input, status: "malformed", outputChars: 0, ms: 0 });
        const text = `error: the call is not closed with ${syntax.callClose}`;
        return {
          observation: wrap(text),
          done: false,
          info: { tool: tool.name, status: "malformed", error: text },
        };
      }
      const r = await callTool(tool, input, { ...spec.limits, ...(signal ? { signal } : {}) });
      record.calls.push({ turn, input, status: r.status, outputChars: r.outputChars, ms: r.ms });
      return {
        observation: wrap(r.text),
        done: false,
        info: { tool: tool.name, status: r.status, ms: r.ms, outputChars: r.outputChars },
      };
    },
    finalReward(): Promise<number> {
      return Promise.resolve((verdict ?? spec.judge(record.answer)).reward);
    },
    success(): boolean {
      return (verdict ?? spec.judge(record.answer)).success;
    },
    record(): EpisodeRecord {
      return { ...record, calls: record.calls.map((c) => ({ ...c })) };
    },
  };
}

/** A line for the prompt on how to call `tool` and answer in the syntax `s`. */
export function syntaxHint(s: CallSyntax, tool: Tool): string {
  const answer = s.answerOpen === undefined
    ? "a reply without a call is your final answer"
    : `give the final answer as ${s.answerOpen}…${s.answerClose}`;
  return `Tool ${tool.name}: ${tool.description}. Call it as ${s.callOpen}EXPR${s.callClose}; ` +
    `its result comes back as ${s.resultOpen}RESULT${s.resultClose}; ${answer}.`;
}

/** What {@link verifiedToolEnv} builds an environment from. */
export interface VerifiedToolEnvSpec<R extends TaskRow> {
  name: string;
  task: Task<R>;
  syntax: CallSyntax;
  tool: Tool;
  limits: Omit<ToolLimits, "signal">;
  maxTurns: number;
  /** The first observation of a row's episode. */
  render(row: R): string;
}

/**
 * A tool environment over a task's rows whose final answer scores 1 when the task's verifier
 * accepts it, else 0 (`calcEnv`, `shapesCalcEnv`); the call closer is its stop string.
 */
export function verifiedToolEnv<R extends TaskRow>(
  spec: VerifiedToolEnvSpec<R>,
): ToolEnvironment<R> {
  const { name, task, syntax, tool, limits, maxTurns, render } = spec;
  return Object.freeze({
    name,
    task,
    maxTurns,
    stop: Object.freeze([syntax.callClose]),
    reset(row: R, { seed }: ResetOptions): ToolEpisode {
      checkNumber(name, "seed", seed, { integer: true });
      return toolEpisode({
        prompt: render(row),
        seed,
        syntax,
        tool,
        limits,
        maxTurns,
        judge(answer) {
          const ok = answer !== null && task.verify(row, answer);
          return { reward: ok ? 1 : 0, success: ok };
        },
      });
    },
  });
}
