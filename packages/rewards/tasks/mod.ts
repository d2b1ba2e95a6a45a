/**
 * `@rlvr/rewards/tasks`: seeded procedural tasks with verifiers (arithmetic, Countdown, Knights
 * and Knaves, 4×4 Sudoku, shortest path), the task contract ({@link defineTask},
 * {@link splitTrainTest}), the seeded random numbers and the exact-fraction expressions they use.
 * Importing this entry point loads neither the math CAS nor the code sandbox.
 *
 * @example Usage
 * ```ts
 * import { countdownTask } from "@rlvr/rewards/tasks";
 * import assert from "node:assert/strict";
 * const task = countdownTask({ count: 3 });
 * const row = task.row(0, 0);
 * assert.equal(task.verify(row, row.answer), true);
 * assert.equal(task.verify(row, "1 + 1"), false);
 * ```
 *
 * @module
 */

export { type Rng, seededRng } from "./rng.ts";
export type { Knob } from "./_knob.ts";
export {
  defineTask,
  type Split,
  type SplitOptions,
  splitTrainTest,
  type Task,
  type TaskRow,
  type TaskSpec,
} from "./task.ts";
export {
  evaluateExpression,
  type Expr,
  expressionLiterals,
  formatExpression,
  formatFraction,
  type Fraction,
  fraction,
  fractionEquals,
  type Op,
  parseExpression,
  parseFraction,
  type ParseOptions,
} from "./expr.ts";
export { type ArithmeticOptions, type ArithmeticRow, arithmeticTask } from "./arithmetic.ts";
export {
  checkCountdown,
  type CountdownOptions,
  type CountdownRow,
  countdownTask,
} from "./countdown.ts";
export {
  knightsKnavesTask,
  type KnightsOptions,
  type KnightsRow,
  parseKnightsAnswer,
} from "./knights.ts";
export { checkSudoku4, type SudokuOptions, type SudokuRow, sudokuTask } from "./sudoku.ts";
export {
  type Edge,
  shortestDistances,
  type ShortestPathOptions,
  type ShortestPathRow,
  shortestPathTask,
} from "./shortest_path.ts";
