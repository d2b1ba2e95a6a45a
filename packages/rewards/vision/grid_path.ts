/**
 * Grid mazes: the length of the shortest path from the green start cell to the red goal cell
 * through open cells, moving up, down, left or right.
 *
 * Design: a row draws a `side × side` grid, makes each cell a wall with probability `walls`,
 * picks a start and a goal among the other cells and keeps the maze only when the goal is
 * reachable at least two moves away (else it draws again), so every row is solvable. The
 * image ({@link drawGridPath}) shows each cell as a square between light gray grid lines:
 * walls dark, open cells white, the start green and the goal red. The verifier reads an integer
 * and compares it with a fresh breadth-first search over `row.grid` ({@link gridDistance}).
 * Difficulty is `side + distance + detour`, where `distance` is the answer and
 * `detour = distance − |Δrow| − |Δcolumn|` the moves that walls force beyond the straight route.
 *
 * @module
 */

import { createImage, type RgbImage, toDataUrl } from "@rlvr/image";
import { checkName, checkNumber, checkOptions, show } from "../_check.ts";
import { draw, type Knob } from "../tasks/_knob.ts";
import { defineTask, type Task } from "../tasks/task.ts";
import { imageSize, knobOr, parseInteger } from "./_util.ts";
import { COLORS } from "./palette.ts";
import { fillRect, type Rgb } from "./raster.ts";
import type { ImageSizeOption, VisionRow } from "./vision_row.ts";

/** A row of {@link gridPathTask}; its image is `drawGridPath(row)`. */
export interface GridPathRow extends VisionRow {
  /** The maze, rows top to bottom: `#` wall, `.` open, `S` start, `G` goal. */
  grid: string[];
}

/** Knobs of {@link gridPathTask}. */
export interface GridPathOptions {
  /** Cells per side, 3–16 (default `[4, 6]`); a range is drawn per row. */
  side?: Knob;
  /** Probability that a cell is a wall, in [0, 0.6] (default 0.3). */
  walls?: number;
  /** Image side or `[width, height]` (default 112). */
  size?: ImageSizeOption;
  /** Task name (default `"grid_path"`). */
  name?: string;
}

/** Smallest cell side in pixels, grid line included. */
const MIN_CELL = 4;

const INK: Readonly<Record<string, Rgb>> = {
  "#": COLORS.dark,
  ".": COLORS.white,
  S: COLORS.green,
  G: COLORS.red,
};

/**
 * Moves on the shortest path from `S` to `G` in a maze (`#` wall, `.` open; four-neighbour
 * moves), or `null` when the goal is unreachable or the grid is malformed (rows of unequal
 * length, other characters, not exactly one `S` and one `G`). Never throws.
 *
 * @example Usage
 * ```ts
 * import { gridDistance } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.equal(gridDistance(["S.#", "#.#", "..G"]), 4);
 * assert.equal(gridDistance(["S#", "#G"]), null);
 * ```
 */
export function gridDistance(grid: readonly string[]): number | null {
  if (!Array.isArray(grid) || grid.length === 0 || grid.length > 1024) return null;
  const cols = typeof grid[0] === "string" ? grid[0].length : 0;
  if (cols === 0 || cols > 1024) return null;
  const cells = grid.join("");
  if (
    !grid.every((r) => typeof r === "string" && r.length === cols) || !/^[#.SG]*$/.test(cells) ||
    cells.indexOf("S") !== cells.lastIndexOf("S") || cells.indexOf("G") !== cells.lastIndexOf("G")
  ) return null;
  const start = cells.indexOf("S");
  const goal = cells.indexOf("G");
  if (start < 0 || goal < 0) return null;
  const dist = new Int32Array(cells.length).fill(-1);
  dist[start] = 0;
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const u = queue[head]!;
    if (u === goal) return dist[u]!;
    const r = Math.floor(u / cols);
    const c = u % cols;
    for (const [nr, nc] of [[r - 1, c], [r + 1, c], [r, c - 1], [r, c + 1]] as const) {
      if (nr < 0 || nc < 0 || nr >= grid.length || nc >= cols) continue;
      const v = nr * cols + nc;
      if (dist[v] !== -1 || cells[v] === "#") continue;
      dist[v] = dist[u]! + 1;
      queue.push(v);
    }
  }
  return null;
}

/** Side of a cell (grid line included) and the grid's top-left corner. */
function cellGeometry(width: number, height: number, rows: number, cols: number) {
  const cell = Math.floor(Math.min((width - 1) / cols, (height - 1) / rows));
  return {
    cell,
    ox: Math.floor((width - cols * cell - 1) / 2),
    oy: Math.floor((height - rows * cell - 1) / 2),
  };
}

/** The fields {@link drawGridPath} reads. */
export type GridPathDrawing = Pick<GridPathRow, "width" | "height" | "grid">;

/**
 * Draws a maze: light gray grid lines on white, cells of side `floor(min((width − 1) / cols,
 * (height − 1) / rows))` pixels (line included) centred in the image, coloured wall dark, open
 * white, start green, goal red.
 *
 * @example Usage
 * ```ts
 * import { COLORS, drawGridPath, getPixel } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = drawGridPath({ width: 56, height: 56, grid: ["S#", ".G"] });
 * // 2 cells of 27 pixels: the start cell's middle is green, the wall's middle dark.
 * assert.deepEqual(getPixel(image, 14, 14), COLORS.green);
 * assert.deepEqual(getPixel(image, 41, 14), COLORS.dark);
 * ```
 */
export function drawGridPath(maze: GridPathDrawing): RgbImage {
  const owner = "drawGridPath";
  const { width, height, grid } = checkOptions<GridPathDrawing>(
    owner,
    maze,
    "{width, height, grid}",
  );
  const cols = Array.isArray(grid) && typeof grid[0] === "string" ? grid[0].length : 0;
  if (
    !Array.isArray(grid) || cols === 0 ||
    !grid.every((r) => typeof r === "string" && r.length === cols && /^[#.SG]*$/.test(r))
  ) {
    throw new TypeError(
      `${owner}: maze.grid must be a non-empty array of equal-length strings of "#", ".", ` +
        `"S", "G", got ${show(grid)}`,
    );
  }
  const image = createImage(width, height, { fill: COLORS.white });
  const { cell, ox, oy } = cellGeometry(width, height, grid.length, cols);
  checkNumber(owner, "the cell side (from maze.width, maze.height and the grid)", cell, {
    min: 2,
  });
  fillRect(image, ox, oy, cols * cell + 1, grid.length * cell + 1, COLORS.lightgray);
  for (const [r, line] of grid.entries()) {
    for (let c = 0; c < cols; c++) {
      fillRect(image, ox + c * cell + 1, oy + r * cell + 1, cell - 1, cell - 1, INK[line[c]!]!);
    }
  }
  return image;
}

/**
 * The grid-maze task (see the module doc for the knobs and the difficulty).
 *
 * @example Usage
 * ```ts
 * import { gridDistance, gridPathTask } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const task = gridPathTask({ side: 5, walls: 0.25 });
 * const row = task.row(1, 0);
 * assert.equal(Number(row.answer), gridDistance(row.grid));
 * assert.ok(task.verify(row, row.answer));
 * assert.ok(!task.verify(row, String(Number(row.answer) + 2)));
 * ```
 */
export function gridPathTask(options?: GridPathOptions): Task<GridPathRow> {
  const owner = "gridPathTask";
  const opts = checkOptions<GridPathOptions>(owner, options, "{side?, walls?, size?, name?}");
  const sides = knobOr(owner, "options.side", opts.side, [4, 6], 3, 16);
  const walls = checkNumber(owner, "options.walls", opts.walls ?? 0.3, { min: 0, max: 0.6 });
  const [width, height] = imageSize(owner, "options.size", opts.size, 112);
  const name = checkName(owner, "options.name", opts.name ?? "grid_path");
  const { cell } = cellGeometry(width, height, sides[1], sides[1]);
  if (cell < MIN_CELL) {
    throw new RangeError(
      `${owner}: a ${sides[1]}×${sides[1]} grid (options.side) leaves cells of ${cell} pixels ` +
        `in a ${width}×${height} image, under ${MIN_CELL}; raise options.size or lower options.side`,
    );
  }
  return defineTask<GridPathRow>({
    name,
    generate(rng) {
      for (let attempt = 0; attempt < 1000; attempt++) {
        const n = draw(rng, sides);
        const cells: string[] = Array.from(
          { length: n * n },
          () => (rng.chance(walls) ? "#" : "."),
        );
        const [start, goal] = rng.shuffle(cells.map((_, i) => i)).slice(0, 2) as [number, number];
        cells[start] = "S";
        cells[goal] = "G";
        const grid = Array.from({ length: n }, (_, r) => cells.slice(r * n, r * n + n).join(""));
        const distance = gridDistance(grid);
        if (distance === null || distance < 2) continue;
        const straight = Math.abs(Math.floor(start / n) - Math.floor(goal / n)) +
          Math.abs((start % n) - (goal % n));
        return {
          width,
          height,
          grid,
          images: [toDataUrl(drawGridPath({ width, height, grid }))],
          prompt: `The image shows a maze on a grid of ${n}×${n} cells: dark cells are walls, ` +
            `white cells are open, the green cell is the start and the red cell is the goal. ` +
            `Moving one cell at a time up, down, left or right and never into a wall, what is ` +
            `the smallest number of moves from the start to the goal? Give the number inside ` +
            `<answer></answer>.`,
          answer: String(distance),
          difficulty: n + distance + (distance - straight),
        };
      }
      throw new RangeError(
        `${owner}: no solvable maze in 1000 draws; lower options.walls or raise options.side`,
      );
    },
    key: (row) => `${row.width}x${row.height}|${row.grid.join("/")}`,
    verify(row, answer) {
      const got = parseInteger(answer);
      return got !== null && got === gridDistance(row.grid);
    },
  });
}
