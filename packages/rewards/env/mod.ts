/**
 * `@rlvr/rewards/env`: the environment API of multi-turn, agentic rollouts
 * ({@link Environment}, {@link Episode}), tools and their limits ({@link callTool}), the built-in
 * tools (calculator, sandboxed code interpreter, BM25 search over a corpus) and the multi-turn
 * environments ({@link calcEnv}, {@link multiHopQaEnv}). The code interpreter tool runs programs
 * in the sandbox of `@rlvr/rewards/code`.
 *
 * @example Usage
 * ```ts
 * import { calcEnv } from "@rlvr/rewards/env";
 * import assert from "node:assert/strict";
 * const env = calcEnv();
 * const row = env.task.row(0, 0);
 * const episode = env.reset(row, { seed: 0 });
 * assert.equal(typeof episode.prompt, "string");
 * ```
 *
 * @module
 */

export type { Environment, Episode, ResetOptions, StepResult } from "./types.ts";
export {
  callTool,
  DEFAULT_TOOL_LIMITS,
  type Tool,
  type ToolContext,
  type ToolLimits,
  type ToolResult,
  type ToolStatus,
} from "./tool.ts";

// Agent environments (issue 11, part 3): built-in tools (calculator, sandboxed code
// interpreter, BM25 search) and multi-turn environments (the API itself is exported above).
export type {
  CallStatus,
  CallSyntax,
  EpisodeRecord,
  ToolCallRecord,
  ToolEnvironment,
  ToolEpisode,
} from "./_episode.ts";
export { calculate, type CalculatorOptions, calculatorTool } from "./calculator.ts";
export { type CodeInterpreterOptions, codeInterpreterTool } from "./code_tool.ts";
export {
  Bm25Index,
  type Bm25Options,
  type Corpus,
  CORPUS_INDEX_FILE,
  type CorpusDocument,
  type Fact,
  loadCorpus,
  parseDocument,
  type SearchHit,
  searchTool,
  type SearchToolOptions,
  snippet,
  tokenize,
} from "./search.ts";
export {
  generateCorpus,
  SHIPPED_CORPUS_DIR,
  SHIPPED_CORPUS_SEED,
  writeCorpus,
} from "./corpus/generate.ts";
export { calcEnv, type CalcEnvOptions, COMPACT_SYNTAX, TAGGED_SYNTAX } from "./calc_env.ts";
export {
  answerWords,
  citedIds,
  multiHopQaEnv,
  multiHopQaTask,
  type QaEnvOptions,
  type QaRow,
  type QaTaskOptions,
  SEARCH_SYNTAX,
} from "./qa_env.ts";
