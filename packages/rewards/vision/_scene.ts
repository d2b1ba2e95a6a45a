/**
 * Placement of non-overlapping shapes (private to the shape tasks).
 *
 * Design: the canvas is cut into square cells of side `maxSize + 4`, centred; each shape gets
 * its own cell (drawn without replacement) and a random offset inside it that keeps a 2-pixel
 * margin, so two shapes are always at least 4 pixels apart and 2 pixels from the border.
 *
 * @module
 */

import { checkNumber } from "../_check.ts";
import { draw } from "../tasks/_knob.ts";
import type { Rng } from "../tasks/rng.ts";
import { SHAPE_COLORS, type ShapeColor } from "./palette.ts";
import { type Shape, SHAPE_KINDS, type ShapeKind } from "./shapes.ts";

/**
 * The `colors` (1–6, default 3) and `kinds` (1–4, default 3) options of a shape task, checked.
 */
export function vocabularyOptions(
  owner: string,
  opts: { colors?: number; kinds?: number },
): { colors: number; kinds: number } {
  return {
    colors: checkNumber(owner, "options.colors", opts.colors ?? 3, {
      min: 1,
      max: SHAPE_COLORS.length,
      integer: true,
    }),
    kinds: checkNumber(owner, "options.kinds", opts.kinds ?? 3, {
      min: 1,
      max: SHAPE_KINDS.length,
      integer: true,
    }),
  };
}

/** A row's colours and kinds in play: `colors` and `kinds` of them, shuffled (the first are the target's). */
export function drawVocabulary(
  rng: Rng,
  colors: number,
  kinds: number,
): { palette: ShapeColor[]; shapeKinds: ShapeKind[] } {
  return {
    palette: rng.shuffle(SHAPE_COLORS).slice(0, colors),
    shapeKinds: rng.shuffle(SHAPE_KINDS).slice(0, kinds),
  };
}

/** The cell grid of a canvas. */
export interface Layout {
  /** Cells per row. */
  cols: number;
  /** Cells per column. */
  rows: number;
  /** Side of a cell. */
  cell: number;
  /** Left edge of the grid. */
  ox: number;
  /** Top edge of the grid. */
  oy: number;
  /** The largest shape side. */
  maxSize: number;
}

/** Margin between a shape and its cell's edge. */
const PAD = 2;

/** The cell grid for shapes of side at most `maxSize` on a `width × height` canvas. */
export function layout(width: number, height: number, maxSize: number): Layout {
  const cell = maxSize + 2 * PAD;
  const cols = Math.floor(width / cell);
  const rows = Math.floor(height / cell);
  return {
    cols,
    rows,
    cell,
    ox: Math.floor((width - cols * cell) / 2),
    oy: Math.floor((height - rows * cell) / 2),
    maxSize,
  };
}

/** Places one shape per spec in distinct random cells, sorted top to bottom, left to right. */
export function place(
  rng: Rng,
  grid: Layout,
  specs: readonly { kind: ShapeKind; color: ShapeColor }[],
  sizes: readonly [number, number],
): Shape[] {
  const cells = rng.shuffle(Array.from({ length: grid.cols * grid.rows }, (_, i) => i));
  const shapes = specs.map((spec, i): Shape => {
    const c = cells[i]!;
    const size = draw(rng, sizes);
    const x = grid.ox + (c % grid.cols) * grid.cell + PAD + rng.int(0, grid.maxSize - size);
    const y = grid.oy + Math.floor(c / grid.cols) * grid.cell + PAD +
      rng.int(0, grid.maxSize - size);
    return { kind: spec.kind, color: spec.color, x, y, size };
  });
  return shapes.sort((a, b) => a.y - b.y || a.x - b.x);
}

/** Canonical text of a scene, for task keys. */
export function sceneKey(shapes: readonly Shape[]): string {
  return shapes.map((s) => `${s.kind[0]}${s.color}${s.x},${s.y},${s.size}`).join(";");
}
