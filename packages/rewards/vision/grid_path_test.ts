import assert from "node:assert/strict";
import fc from "fast-check";
import { drawGridPath, gridDistance, type GridPathRow, gridPathTask } from "./grid_path.ts";
import { COLORS } from "./palette.ts";
import { checkVisionTask, decodeRowImage, isColor } from "./_test_utils.ts";

const perturb = (row: GridPathRow) => {
  const d = Number(row.answer);
  return [String(d + 1), String(d - 1), String(d + 2), `${d}${d}`, "S-G"];
};

Deno.test("gridPathTask: properties over hundreds of rows (deterministic, verified, adversarial)", async () => {
  await checkVisionTask(gridPathTask(), { perturb, draw: drawGridPath });
  await checkVisionTask(gridPathTask({ side: [3, 12], walls: 0.45, size: 140 }), {
    perturb,
    draw: drawGridPath,
    rows: 100,
  });
});

/** The maze read back from the pixels alone: grid lines give the cells, centres the kinds. */
function readMaze(row: GridPathRow): string[] {
  const image = decodeRowImage(row);
  let x0 = image.width, x1 = -1, y0 = image.height;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      if (!isColor(image, x, y, COLORS.white)) {
        x0 = Math.min(x0, x);
        x1 = Math.max(x1, x);
        y0 = Math.min(y0, y);
      }
    }
  }
  // Vertical grid lines are light gray through the whole height of the grid; count them on
  // the row just under the top line.
  let lines = 0;
  for (let x = x0; x <= x1; x++) if (isColor(image, x, y0 + 1, COLORS.lightgray)) lines++;
  const n = lines - 1;
  const cell = (x1 - x0) / n;
  const kinds: [string, readonly number[]][] = [
    ["#", COLORS.dark],
    [".", COLORS.white],
    ["S", COLORS.green],
    ["G", COLORS.red],
  ];
  return Array.from({ length: n }, (_, r) =>
    Array.from({ length: n }, (_, c) => {
      const x = x0 + Math.floor(c * cell + cell / 2);
      const y = y0 + Math.floor(r * cell + cell / 2);
      return kinds.find(([, rgb]) => isColor(image, x, y, rgb as [number, number, number]))![0];
    }).join(""));
}

Deno.test("gridPathTask: the maze read from the pixels has the answer's shortest path", () => {
  for (const task of [gridPathTask(), gridPathTask({ side: [6, 10], walls: 0.35, size: 112 })]) {
    for (const row of task.rows(21, 40)) {
      const maze = readMaze(row);
      assert.deepEqual(maze, row.grid, row.id);
      assert.equal(String(gridDistance(maze)), row.answer);
    }
  }
});

/** Independent shortest path: Bellman–Ford-style relaxation until nothing changes. */
function relax(grid: readonly string[]): number | null {
  const n = grid.length, m = grid[0]!.length;
  const d = grid.map((r) => [...r].map((ch) => (ch === "S" ? 0 : Infinity)));
  for (let changed = true; changed;) {
    changed = false;
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < m; c++) {
        if (grid[r]![c] === "#") continue;
        for (const [a, b] of [[r - 1, c], [r + 1, c], [r, c - 1], [r, c + 1]]) {
          const v = d[a!]?.[b!];
          if (v !== undefined && v + 1 < d[r]![c]!) {
            d[r]![c] = v + 1;
            changed = true;
          }
        }
      }
    }
  }
  const g = grid.join("").indexOf("G");
  const v = d[Math.floor(g / m)]![g % m]!;
  return Number.isFinite(v) ? v : null;
}

Deno.test("gridDistance: agrees with an independent relaxation; malformed grids give null", () => {
  fc.assert(fc.property(
    fc.integer({ min: 2, max: 7 }),
    fc.array(fc.boolean(), { minLength: 49, maxLength: 49 }),
    fc.nat(48),
    fc.nat(48),
    (n, walls, s, g) => {
      const cells: string[] = walls.slice(0, n * n).map((w) => (w ? "#" : "."));
      s %= n * n;
      g %= n * n;
      if (s === g) return;
      cells[s] = "S";
      cells[g] = "G";
      const grid = Array.from({ length: n }, (_, r) => cells.slice(r * n, r * n + n).join(""));
      assert.equal(gridDistance(grid), relax(grid));
    },
  ));
  for (const bad of [[], ["S.", "G"], ["S.G", "..S"], ["S..", "..."], ["SxG"], [5], "S.G"]) {
    assert.equal(gridDistance(bad as unknown as string[]), null);
  }
});

Deno.test("gridPathTask: only solvable mazes; difficulty formula; monotone in the grid side", () => {
  for (const row of gridPathTask({ side: [3, 9], walls: 0.6 }).rows(4, 100)) {
    const d = gridDistance(row.grid)!;
    assert.ok(d >= 2);
    const cells = row.grid.join("");
    const n = row.grid.length;
    const [s, g] = [cells.indexOf("S"), cells.indexOf("G")];
    const straight = Math.abs(Math.floor(s / n) - Math.floor(g / n)) + Math.abs((s % n) - (g % n));
    assert.equal(row.difficulty, n + d + (d - straight));
  }
  const mean = (o: Parameters<typeof gridPathTask>[0]) => {
    const rows = gridPathTask(o).rows(8, 200);
    return rows.reduce((a, r) => a + r.difficulty, 0) / rows.length;
  };
  const bySide = [3, 5, 8, 12].map((side) => mean({ side, size: 112 }));
  for (let i = 1; i < bySide.length; i++) assert.ok(bySide[i - 1]! < bySide[i]!, `${bySide}`);
  const byWalls = [0, 0.2, 0.4].map((walls) => mean({ side: 7, walls }));
  for (let i = 1; i < byWalls.length; i++) assert.ok(byWalls[i - 1]! < byWalls[i]!, `${byWalls}`);
});

Deno.test("gridPathTask: bad knobs name the field and the fix", () => {
  assert.throws(
    () => gridPathTask({ side: 2 }),
    /gridPathTask: options.side must be an integer in \[3, 16\], got 2/,
  );
  assert.throws(
    () => gridPathTask({ walls: 0.9 }),
    /options.walls must be a finite number in \[0, 0.6\], got 0.9/,
  );
  assert.throws(
    () => gridPathTask({ side: 16, size: 56 }),
    /leaves cells of 3 pixels.*raise options.size or lower options.side/,
  );
  assert.throws(
    () => drawGridPath({ width: 56, height: 56, grid: ["S#", "x"] }),
    /drawGridPath: maze.grid must be/,
  );
});
