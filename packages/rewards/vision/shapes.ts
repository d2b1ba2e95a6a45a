/**
 * Coloured shapes (circles, squares, triangles, diamonds) placed on a white canvas: the scenes
 * of {@link countShapesTask} and {@link groundingTask}.
 *
 * Design: a shape is plain data `{kind, color, x, y, size}`: it fills the `size × size` square
 * whose top-left corner is `(x, y)` (integers): a square fills it all, a circle is the
 * inscribed disc, a triangle points up (apex at the top middle, base along the bottom edge) and
 * a diamond joins the middles of the four edges. So a shape's box is `[x, y, x + size,
 * y + size]` ({@link shapeBox}), and a scene is redrawn exactly from its rows' fields
 * ({@link drawShapes}).
 *
 * @module
 */

import { createImage, type RgbImage } from "@rlvr/image";
import { checkChoice, checkNumber, checkOptions, show } from "../_check.ts";
import type { Box } from "./box.ts";
import { COLORS, SHAPE_COLORS, type ShapeColor } from "./palette.ts";
import { fillCircle, fillPolygon, fillRect } from "./raster.ts";

/** A kind of shape. */
export type ShapeKind = "circle" | "square" | "triangle" | "diamond";

/**
 * Every shape kind, in a fixed order (the tasks draw a subset per row).
 *
 * @example Usage
 * ```ts
 * import { SHAPE_KINDS } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.deepEqual(SHAPE_KINDS, ["circle", "square", "triangle", "diamond"]);
 * ```
 */
export const SHAPE_KINDS: readonly ShapeKind[] = Object.freeze([
  "circle",
  "square",
  "triangle",
  "diamond",
]);

/** A shape filling the `size × size` square at `(x, y)`. */
export interface Shape {
  /** What it is. */
  kind: ShapeKind;
  /** Its colour's name (RGB in `COLORS`). */
  color: ShapeColor;
  /** Left edge in pixels (integer). */
  x: number;
  /** Top edge in pixels (integer). */
  y: number;
  /** Side of its square in pixels (integer >= 2). */
  size: number;
}

function checkShape(owner: string, field: string, value: unknown): Shape {
  const s = checkOptions<Shape>(owner, value, "{kind, color, x, y, size}");
  checkChoice(owner, `${field}.kind`, s.kind, SHAPE_KINDS);
  checkChoice(owner, `${field}.color`, s.color, SHAPE_COLORS);
  checkNumber(owner, `${field}.x`, s.x, { integer: true });
  checkNumber(owner, `${field}.y`, s.y, { integer: true });
  checkNumber(owner, `${field}.size`, s.size, { min: 2, integer: true });
  return s;
}

/**
 * The box `[x, y, x + size, y + size]` of a shape (pixel-edge coordinates).
 *
 * @example Usage
 * ```ts
 * import { shapeBox } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.deepEqual(shapeBox({ kind: "circle", color: "red", x: 4, y: 6, size: 10 }), [4, 6, 14, 16]);
 * ```
 */
export function shapeBox(shape: Shape): Box {
  const s = checkShape("shapeBox", "shape", shape);
  return [s.x, s.y, s.x + s.size, s.y + s.size];
}

/**
 * Draws one shape into `image` in its colour (clipped at the edges) and returns the number of
 * pixels painted.
 *
 * @example Usage
 * ```ts
 * import { createImage } from "@rlvr/image";
 * import { drawShape } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = createImage(20, 20);
 * assert.equal(drawShape(image, { kind: "square", color: "blue", x: 2, y: 2, size: 10 }), 100);
 * assert.equal(drawShape(image, { kind: "triangle", color: "red", x: 2, y: 2, size: 10 }), 50);
 * ```
 */
export function drawShape(image: RgbImage, shape: Shape): number {
  const { kind, color, x, y, size } = checkShape("drawShape", "shape", shape);
  const rgb = COLORS[color];
  const h = size / 2;
  switch (kind) {
    case "square":
      return fillRect(image, x, y, size, size, rgb);
    case "circle":
      return fillCircle(image, x + h, y + h, h, rgb);
    case "triangle":
      return fillPolygon(image, [[x + h, y], [x + size, y + size], [x, y + size]], rgb);
    case "diamond":
      return fillPolygon(
        image,
        [[x + h, y], [x + size, y + h], [x + h, y + size], [x, y + h]],
        rgb,
      );
  }
}

/**
 * A `width × height` white image with `shapes` drawn in order (later ones on top).
 *
 * @example Usage
 * ```ts
 * import { COLORS, drawShapes, getPixel } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = drawShapes(56, 56, [{ kind: "circle", color: "green", x: 10, y: 10, size: 20 }]);
 * assert.deepEqual(getPixel(image, 20, 20), COLORS.green);
 * assert.deepEqual(getPixel(image, 0, 0), COLORS.white);
 * ```
 */
export function drawShapes(width: number, height: number, shapes: readonly Shape[]): RgbImage {
  if (!Array.isArray(shapes)) {
    throw new TypeError(`drawShapes: shapes must be an array of shapes, got ${show(shapes)}`);
  }
  const image = createImage(width, height, { fill: COLORS.white });
  for (const shape of shapes) drawShape(image, shape);
  return image;
}
