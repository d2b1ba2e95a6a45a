import assert from "node:assert/strict";
import fc from "fast-check";
import { checkSudoku4, type SudokuRow, sudokuTask } from "./sudoku.ts";
import { checkTaskProperties } from "./_test_utils.ts";

/** Change each empty cell of the solution to each other digit. */
function perturb(row: SudokuRow): string[] {
  const out: string[] = [];
  const sol = [...row.solution];
  row.puzzle.split("").forEach((c, i) => {
    if (c !== ".") return;
    const d = Number(sol[i]);
    const wrong = [...sol];
    wrong[i] = String((d % 4) + 1);
    out.push(wrong.join(""));
  });
  return [...out.slice(0, 4), row.solution.slice(0, 15), `${row.solution}5`.replace(/1/, "5")];
}

/** Independent count of completions by brute force over the blanks. */
function countCompletions(puzzle: string): number {
  const blanks = [...puzzle].flatMap((c, i) => (c === "." ? [i] : []));
  let count = 0;
  const grid = [...puzzle];
  const rec = (k: number) => {
    if (k === blanks.length) {
      if (checkSudoku4(puzzle, grid.join(""))) count++;
      return;
    }
    for (const d of "1234") {
      grid[blanks[k]!] = d;
      rec(k + 1);
    }
  };
  rec(0);
  return count;
}

Deno.test("sudokuTask: properties (own answer accepted, perturbed grids rejected, deterministic)", async () => {
  await checkTaskProperties(sudokuTask(), perturb, 30);
  await checkTaskProperties(sudokuTask({ holes: [4, 10] }), perturb, 30);
});

Deno.test("sudokuTask: unique solution (independent brute force) with the asked number of holes", () => {
  fc.assert(
    fc.property(fc.integer(), fc.integer({ min: 1, max: 9 }), (seed, holes) => {
      const row = sudokuTask({ holes }).row(seed, 0);
      assert.equal([...row.puzzle].filter((c) => c === ".").length, holes);
      assert.equal(row.difficulty, holes);
      assert.equal(countCompletions(row.puzzle), 1);
    }),
    { numRuns: 40 },
  );
});

Deno.test("checkSudoku4: separators are free; digits, rules and givens are not", () => {
  const puzzle = "1.3.34.2.1.34.21";
  assert.ok(checkSudoku4(puzzle, "1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 1"));
  assert.ok(checkSudoku4(puzzle, "[[1,2,3,4],[3,4,1,2],[2,1,4,3],[4,3,2,1]]"));
  assert.ok(!checkSudoku4(puzzle, "1234 3412 2143 432"), "15 digits");
  assert.ok(!checkSudoku4("2...............", "1234 3412 2143 4321"), "contradicts a given");
  assert.ok(!checkSudoku4("................", "1234 1234 1234 1234"), "breaks the column rule");
});
