/**
 * Mini-Sudoku: fill a 4×4 grid so that every row, column and 2×2 box holds 1–4 once.
 *
 * Design: a row fills a random complete grid (randomised backtracking), then empties cells in
 * random order, keeping an emptied cell only while a solution counter (backtracking, stopped
 * at 2) still finds exactly one solution, until `holes` cells are empty; grids that cannot reach
 * `holes` are redrawn. So every puzzle has a unique solution. The verifier reads the first 16
 * digits of the answer (any separators) and checks the Sudoku rules and the givens, rather than
 * comparing strings. Difficulty is the number of empty cells.
 *
 * @module
 */

import { checkName, checkOptions } from "../_check.ts";
import { draw, type Knob, knob } from "./_knob.ts";
import type { Rng } from "./rng.ts";
import { defineTask, type Task, type TaskRow } from "./task.ts";

/** A row of {@link sudokuTask}. */
export interface SudokuRow extends TaskRow {
  /** The puzzle, 16 characters row by row, `.` for an empty cell. */
  puzzle: string;
  /** The unique solution, 16 digits row by row. */
  solution: string;
}

/** Knobs of {@link sudokuTask}. */
export interface SudokuOptions {
  /** Empty cells, 1–12 (default 8); a range is drawn per row. Above 10, rows get slow to find. */
  holes?: Knob;
  /** Task name (default `"sudoku4"`). */
  name?: string;
}

const UNITS: number[][] = (() => {
  const units: number[][] = [];
  for (let r = 0; r < 4; r++) units.push([0, 1, 2, 3].map((c) => r * 4 + c));
  for (let c = 0; c < 4; c++) units.push([0, 1, 2, 3].map((r) => r * 4 + c));
  for (const [r0, c0] of [[0, 0], [0, 2], [2, 0], [2, 2]] as const) {
    units.push([0, 1, 2, 3].map((k) => (r0 + (k >> 1)) * 4 + c0 + (k & 1)));
  }
  return units;
})();
const PEERS: number[][] = Array.from({ length: 16 }, (_, cell) => [
  ...new Set(UNITS.filter((u) => u.includes(cell)).flat().filter((p) => p !== cell)),
]);

function allowed(grid: readonly number[], cell: number, digit: number): boolean {
  return PEERS[cell]!.every((p) => grid[p] !== digit);
}

/** Counts solutions of `grid` (0 = empty), stopping at `limit`. */
function countSolutions(grid: number[], limit: number): number {
  const cell = grid.indexOf(0);
  if (cell < 0) return 1;
  let count = 0;
  for (let d = 1; d <= 4 && count < limit; d++) {
    if (!allowed(grid, cell, d)) continue;
    grid[cell] = d;
    count += countSolutions(grid, limit - count);
    grid[cell] = 0;
  }
  return count;
}

function fill(grid: number[], rng: Rng): boolean {
  const cell = grid.indexOf(0);
  if (cell < 0) return true;
  for (const d of rng.shuffle([1, 2, 3, 4])) {
    if (!allowed(grid, cell, d)) continue;
    grid[cell] = d;
    if (fill(grid, rng)) return true;
    grid[cell] = 0;
  }
  return false;
}

/**
 * Checks a 4×4 Sudoku answer against a puzzle (see the module doc); exported for callers with
 * their own puzzles.
 *
 * @example Usage
 * ```ts
 * import { checkSudoku4 } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const puzzle = "1.3." + "34.2" + ".1.3" + "4.21";
 * assert.ok(checkSudoku4(puzzle, "1234 3412 2143 4321"));
 * assert.ok(!checkSudoku4(puzzle, "1234 3412 2143 4312"));
 * ```
 */
export function checkSudoku4(puzzle: string, answer: string): boolean {
  const digits = (String(answer).match(/\d/g) ?? []).slice(0, 16).map(Number);
  if (digits.length !== 16 || digits.some((d) => d < 1 || d > 4)) return false;
  if (typeof puzzle !== "string" || puzzle.length !== 16) return false;
  for (let i = 0; i < 16; i++) {
    const given = puzzle[i]!;
    if (given !== "." && Number(given) !== digits[i]) return false;
  }
  return UNITS.every((u) => new Set(u.map((c) => digits[c])).size === 4);
}

function render(puzzle: string): string {
  const rows = [0, 1, 2, 3].map((r) => {
    const c = [...puzzle.slice(r * 4, r * 4 + 4)];
    return `${c[0]} ${c[1]} | ${c[2]} ${c[3]}`;
  });
  return [rows[0], rows[1], "----+----", rows[2], rows[3]].join("\n");
}

/**
 * The 4×4 Sudoku task (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { sudokuTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = sudokuTask({ holes: 10 });
 * const row = task.row(3, 0);
 * assert.equal([...row.puzzle].filter((c) => c === ".").length, 10);
 * assert.ok(task.verify(row, row.answer));
 * ```
 */
export function sudokuTask(options?: SudokuOptions): Task<SudokuRow> {
  const owner = "sudokuTask";
  const opts = checkOptions<SudokuOptions>(owner, options, "{holes?, name?}");
  const holes = knob(owner, "options.holes", opts.holes, 8, 1, 12);
  const name = checkName(owner, "options.name", opts.name ?? "sudoku4");
  return defineTask<SudokuRow>({
    name,
    generate(rng) {
      const want = draw(rng, holes);
      for (let attempt = 0; attempt < 500; attempt++) {
        const grid = new Array<number>(16).fill(0);
        fill(grid, rng);
        const solution = grid.join("");
        let empty = 0;
        for (const cell of rng.shuffle([...grid.keys()])) {
          if (empty === want) break;
          const keep = grid[cell]!;
          grid[cell] = 0;
          if (countSolutions([...grid], 2) === 1) empty++;
          else grid[cell] = keep;
        }
        if (empty < want) continue;
        const puzzle = grid.map((d) => (d === 0 ? "." : String(d))).join("");
        return {
          puzzle,
          solution,
          prompt:
            `Solve this 4×4 Sudoku: fill the empty cells (.) so that every row, every column ` +
            `and every 2×2 box contains the digits 1 to 4 exactly once.\n\n${render(puzzle)}\n\n` +
            `Give the completed grid inside <answer></answer> as four rows of four digits, ` +
            `e.g. <answer>1234 3412 2143 4321</answer>.`,
          answer: [0, 1, 2, 3].map((r) => solution.slice(r * 4, r * 4 + 4)).join(" "),
          difficulty: want,
        };
      }
      throw new RangeError(
        `${owner}: found no puzzle with ${want} empty cells and a unique solution in 500 grids; lower options.holes`,
      );
    },
    key: (row) => row.puzzle,
    verify: (row, answer) => checkSudoku4(row.puzzle, answer),
  });
}
