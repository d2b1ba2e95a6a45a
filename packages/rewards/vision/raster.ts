/**
 * A minimal rasterizer over `RgbImage` for the visual tasks: filled rectangles, circles,
 * polygons (triangles) and thick lines in solid colours, without anti-aliasing.
 *
 * Design: coordinates are pixel-edge coordinates (x to the right, y downwards, the image's
 * top-left corner at `(0, 0)`), so pixel `(px, py)` is the unit square `[px, px + 1) × [py, py + 1)`
 * with its centre at `(px + ½, py + ½)`. A shape paints exactly the pixels whose centre lies
 * inside it (each function states how it treats its boundary), so an integer `w × h` rectangle
 * paints `w·h` pixels and a shape's pixels do not depend on the image size. Anything may lie
 * partly or wholly outside the image: it is clipped at the edges. With coordinates that are
 * multiples of ½ (the tasks use integers), every inside test is exact arithmetic (sums and
 * products of small dyadic numbers; the polygon's crossing points are rounded only where the
 * exact value is at least a quarter pixel from the pixel boundary), so the same call paints the
 * same pixels on every platform. Every fill returns the number of pixels it painted.
 *
 * @module
 */

import { checkImage, type RgbImage } from "@rlvr/image";
import { checkNumber, show } from "../_check.ts";
import { checkRgb } from "./_util.ts";

/** An RGB colour, three integers in [0, 255]. */
export type Rgb = readonly [number, number, number];

/** A point `[x, y]` in pixel-edge coordinates. */
export type Point = readonly [number, number];

function put(image: RgbImage, px: number, py: number, color: Rgb): void {
  const i = 3 * (py * image.width + px);
  image.data[i] = color[0];
  image.data[i + 1] = color[1];
  image.data[i + 2] = color[2];
}

/** The inclusive pixel range whose centres lie in `[lo, hi)`, clipped to `[0, size)`. */
function span(lo: number, hi: number, size: number): [number, number] {
  return [Math.max(0, Math.ceil(lo - 0.5)), Math.min(size - 1, Math.ceil(hi - 0.5) - 1)];
}

/**
 * The colour of pixel `(x, y)` (integers inside the image).
 *
 * @example Usage
 * ```ts
 * import { createImage } from "@rlvr/image";
 * import { getPixel } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.deepEqual(getPixel(createImage(2, 2, { fill: [1, 2, 3] }), 1, 1), [1, 2, 3]);
 * ```
 */
export function getPixel(image: RgbImage, x: number, y: number): Rgb {
  const owner = "getPixel";
  checkImage(owner, "image", image);
  checkNumber(owner, "x", x, { min: 0, max: image.width - 1, integer: true });
  checkNumber(owner, "y", y, { min: 0, max: image.height - 1, integer: true });
  const i = 3 * (y * image.width + x);
  return [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!];
}

/**
 * Paints pixel `(x, y)` (integers; a pixel outside the image is ignored). Returns the number
 * of pixels painted (0 or 1).
 *
 * @example Usage
 * ```ts
 * import { createImage } from "@rlvr/image";
 * import { getPixel, setPixel } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = createImage(3, 3);
 * assert.equal(setPixel(image, 1, 2, [255, 0, 0]), 1);
 * assert.equal(setPixel(image, 5, 0, [255, 0, 0]), 0); // clipped
 * assert.deepEqual(getPixel(image, 1, 2), [255, 0, 0]);
 * ```
 */
export function setPixel(image: RgbImage, x: number, y: number, color: Rgb): number {
  const owner = "setPixel";
  checkImage(owner, "image", image);
  checkNumber(owner, "x", x, { integer: true });
  checkNumber(owner, "y", y, { integer: true });
  checkRgb(owner, "color", color);
  if (x < 0 || y < 0 || x >= image.width || y >= image.height) return 0;
  put(image, x, y, color);
  return 1;
}

/**
 * Fills the rectangle `[x, x + width) × [y, y + height)`: the pixels whose centre lies in it
 * (left and top edges inclusive, right and bottom exclusive, so rectangles that share an edge
 * never overlap). Returns the number of pixels painted after clipping.
 *
 * @example Usage
 * ```ts
 * import { createImage } from "@rlvr/image";
 * import { fillRect } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = createImage(10, 10);
 * assert.equal(fillRect(image, 2, 3, 4, 5, [0, 0, 255]), 20);
 * assert.equal(fillRect(image, 8, 8, 5, 5, [0, 0, 255]), 4); // clipped at the corner
 * ```
 */
export function fillRect(
  image: RgbImage,
  x: number,
  y: number,
  width: number,
  height: number,
  color: Rgb,
): number {
  const owner = "fillRect";
  checkImage(owner, "image", image);
  checkNumber(owner, "x", x);
  checkNumber(owner, "y", y);
  checkNumber(owner, "width", width, { min: 0 });
  checkNumber(owner, "height", height, { min: 0 });
  checkRgb(owner, "color", color);
  const [x0, x1] = span(x, x + width, image.width);
  const [y0, y1] = span(y, y + height, image.height);
  let painted = 0;
  for (let py = y0; py <= y1; py++) {
    for (let px = x0; px <= x1; px++) put(image, px, py, color);
    painted += Math.max(0, x1 - x0 + 1);
  }
  return painted;
}

/**
 * Fills the disc of centre `(cx, cy)` and radius `r`: the pixels whose centre is at distance
 * at most `r` (boundary inclusive). A disc of integer centre and radius paints a symmetric
 * block of about `π r²` pixels whose bounding box is `[cx − r, cx + r)` on both axes.
 * Returns the number of pixels painted after clipping.
 *
 * @example Usage
 * ```ts
 * import { createImage } from "@rlvr/image";
 * import { fillCircle } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = createImage(40, 40);
 * const n = fillCircle(image, 20, 20, 10, [255, 0, 0]);
 * assert.ok(Math.abs(n - Math.PI * 100) < 20); // 316 pixels
 * assert.equal(fillCircle(image, 0, 20, 10, [255, 0, 0]), n / 2); // half of it is clipped
 * ```
 */
export function fillCircle(
  image: RgbImage,
  cx: number,
  cy: number,
  r: number,
  color: Rgb,
): number {
  const owner = "fillCircle";
  checkImage(owner, "image", image);
  checkNumber(owner, "cx", cx);
  checkNumber(owner, "cy", cy);
  checkNumber(owner, "r", r, { min: 0 });
  checkRgb(owner, "color", color);
  const r2 = r * r;
  const [y0, y1] = span(cy - r, cy + r + 1, image.height);
  let painted = 0;
  for (let py = y0; py <= y1; py++) {
    const dy = py + 0.5 - cy;
    const [x0, x1] = span(cx - r, cx + r + 1, image.width);
    for (let px = x0; px <= x1; px++) {
      const dx = px + 0.5 - cx;
      if (dx * dx + dy * dy <= r2) {
        put(image, px, py, color);
        painted++;
      }
    }
  }
  return painted;
}

/**
 * Fills a polygon (any simple or self-intersecting one; the even-odd rule decides what is
 * inside). On each pixel row the pixels whose centre lies in `[xa, xb)` between crossing
 * points are painted; an edge counts on a row when the row's centre line is in
 * `[min(y0, y1), max(y0, y1))`, so polygons that share an edge never overlap (the two
 * triangles of a rectangle cut along its diagonal paint each of its pixels exactly once) and
 * an axis-aligned polygon of integer vertices paints exactly its area. Returns the number of
 * pixels painted after clipping.
 *
 * @example Usage
 * ```ts
 * import { createImage } from "@rlvr/image";
 * import { fillPolygon } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = createImage(20, 20);
 * // An L: a 10×10 square less its 5×5 bottom-right quarter.
 * const l = [[0, 0], [10, 0], [10, 5], [5, 5], [5, 10], [0, 10]] as const;
 * assert.equal(fillPolygon(image, l, [0, 128, 0]), 75);
 * // A right triangle of legs 10 (area 50): the 10 pixels centred on its hypotenuse are out.
 * assert.equal(fillPolygon(image, [[0, 0], [10, 0], [0, 10]], [0, 128, 0]), 45);
 * ```
 */
export function fillPolygon(image: RgbImage, points: readonly Point[], color: Rgb): number {
  const owner = "fillPolygon";
  checkImage(owner, "image", image);
  if (!Array.isArray(points) || points.length < 3) {
    throw new TypeError(
      `${owner}: points must be an array of at least 3 points [x, y], got ${show(points)}`,
    );
  }
  for (const [k, p] of points.entries()) {
    if (!Array.isArray(p) || p.length !== 2 || !p.every(Number.isFinite)) {
      throw new TypeError(
        `${owner}: points[${k}] must be a point [x, y] of finite numbers, got ${show(p)}`,
      );
    }
  }
  checkRgb(owner, "color", color);
  const ys = points.map((p) => p[1]);
  const [y0, y1] = span(Math.min(...ys), Math.max(...ys), image.height);
  let painted = 0;
  const xs: number[] = [];
  for (let py = y0; py <= y1; py++) {
    const y = py + 0.5;
    xs.length = 0;
    for (let i = 0; i < points.length; i++) {
      const [ax, ay] = points[i]!;
      const [bx, by] = points[(i + 1) % points.length]!;
      if ((ay <= y && y < by) || (by <= y && y < ay)) {
        xs.push(ax + ((y - ay) * (bx - ax)) / (by - ay));
      }
    }
    xs.sort((a, b) => a - b);
    for (let k = 0; k + 1 < xs.length; k += 2) {
      const [x0, x1] = span(xs[k]!, xs[k + 1]!, image.width);
      for (let px = x0; px <= x1; px++) put(image, px, py, color);
      painted += Math.max(0, x1 - x0 + 1);
    }
  }
  return painted;
}

/**
 * Fills the triangle `a, b, c` (see {@link fillPolygon} for the pixel rule).
 *
 * @example Usage
 * ```ts
 * import { createImage } from "@rlvr/image";
 * import { fillTriangle } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = createImage(20, 20);
 * assert.equal(fillTriangle(image, [0, 10], [10, 10], [5, 0], [0, 0, 255]), 50);
 * ```
 */
export function fillTriangle(image: RgbImage, a: Point, b: Point, c: Point, color: Rgb): number {
  return fillPolygon(image, [a, b, c], color);
}

/**
 * Draws a thick line from `(x0, y0)` to `(x1, y1)`: the pixels whose centre is at distance at
 * most `width / 2` from the segment (a capsule with round caps, boundary inclusive). Returns
 * the number of pixels painted after clipping.
 *
 * @example Usage
 * ```ts
 * import { createImage } from "@rlvr/image";
 * import { drawLine } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = createImage(20, 20);
 * // 2 pixels wide along y = 10 from x = 5 to 15: two pixel rows, columns 4 to 15 (the
 * // round caps reach the centres half a pixel beyond each end).
 * assert.equal(drawLine(image, 5, 10, 15, 10, 2, [0, 0, 0]), 2 * 12);
 * ```
 */
export function drawLine(
  image: RgbImage,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  width: number,
  color: Rgb,
): number {
  const owner = "drawLine";
  checkImage(owner, "image", image);
  checkNumber(owner, "x0", x0);
  checkNumber(owner, "y0", y0);
  checkNumber(owner, "x1", x1);
  checkNumber(owner, "y1", y1);
  checkNumber(owner, "width", width, { min: 0, minExclusive: true });
  checkRgb(owner, "color", color);
  const r = width / 2;
  const r2 = r * r;
  const dx = x1 - x0;
  const dy = y1 - y0;
  const len2 = dx * dx + dy * dy;
  const [ya, yb] = span(Math.min(y0, y1) - r, Math.max(y0, y1) + r + 1, image.height);
  const [xa, xb] = span(Math.min(x0, x1) - r, Math.max(x0, x1) + r + 1, image.width);
  let painted = 0;
  for (let py = ya; py <= yb; py++) {
    const qy = py + 0.5 - y0;
    for (let px = xa; px <= xb; px++) {
      const qx = px + 0.5 - x0;
      const dot = qx * dx + qy * dy;
      let inside: boolean;
      if (dot <= 0 || len2 === 0) inside = qx * qx + qy * qy <= r2;
      else if (dot >= len2) {
        const ex = px + 0.5 - x1;
        const ey = py + 0.5 - y1;
        inside = ex * ex + ey * ey <= r2;
      } else {
        const cross = qx * dy - qy * dx;
        inside = cross * cross <= r2 * len2;
      }
      if (inside) {
        put(image, px, py, color);
        painted++;
      }
    }
  }
  return painted;
}
