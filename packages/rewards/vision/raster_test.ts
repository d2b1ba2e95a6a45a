import assert from "node:assert/strict";
import fc from "fast-check";
import { createImage, type RgbImage } from "@rlvr/image";
import {
  drawLine,
  fillCircle,
  fillPolygon,
  fillRect,
  fillTriangle,
  getPixel,
  type Rgb,
  setPixel,
} from "./raster.ts";

const RED: Rgb = [255, 0, 0];

/** Pixels of `image` that are not black. */
function painted(image: RgbImage): number {
  let n = 0;
  for (let i = 0; i < image.data.length; i += 3) {
    if (image.data[i] || image.data[i + 1] || image.data[i + 2]) n++;
  }
  return n;
}

Deno.test("fillRect: paints exactly the clipped area and returns it", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: -30, max: 50 }),
      fc.integer({ min: -30, max: 50 }),
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 0, max: 40 }),
      (x, y, w, h) => {
        const image = createImage(32, 24);
        const n = fillRect(image, x, y, w, h, RED);
        const cw = Math.max(0, Math.min(32, x + w) - Math.max(0, x));
        const ch = Math.max(0, Math.min(24, y + h) - Math.max(0, y));
        assert.equal(n, cw * ch);
        assert.equal(painted(image), n);
      },
    ),
  );
});

Deno.test("fillRect: half-pixel edges follow the pixel-centre rule", () => {
  const image = createImage(10, 10);
  // Centres at 2.5 and 3.5 lie in [2.5, 4): 2 columns; 1 row (centre 0.5 in [0, 1)).
  assert.equal(fillRect(image, 2.5, 0, 1.5, 1, RED), 2);
  assert.deepEqual(getPixel(image, 2, 0), RED);
  assert.deepEqual(getPixel(image, 4, 0), [0, 0, 0]);
});

Deno.test("fillCircle: about π r² pixels, symmetric, bounding box [c − r, c + r)", () => {
  for (let r = 1; r <= 30; r++) {
    const side = 2 * r + 4;
    const image = createImage(side, side);
    const c = r + 2;
    const n = fillCircle(image, c, c, r, RED);
    assert.equal(painted(image), n);
    assert.ok(Math.abs(n - Math.PI * r * r) <= 4 * r, `r = ${r}: ${n} pixels`);
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) {
        const v = getPixel(image, x, y)[0];
        assert.equal(getPixel(image, side - 1 - x, y)[0], v, "mirror symmetric");
        assert.equal(getPixel(image, y, x)[0], v, "diagonal symmetric");
      }
    }
    assert.deepEqual(getPixel(image, c - r, c), RED, "leftmost column reached");
    assert.deepEqual(getPixel(image, c - r - 1, c), [0, 0, 0]);
    assert.deepEqual(getPixel(image, c + r - 1, c), RED, "rightmost column reached");
    assert.deepEqual(getPixel(image, c + r, c), [0, 0, 0]);
  }
});

Deno.test("fillCircle: clipping paints only the visible part", () => {
  const whole = fillCircle(createImage(40, 40), 20, 20, 12, RED);
  assert.equal(fillCircle(createImage(40, 40), 0, 20, 12, RED), whole / 2);
  assert.equal(fillCircle(createImage(40, 40), 0, 0, 12, RED), whole / 4);
  assert.equal(fillCircle(createImage(40, 40), -20, -20, 12, RED), 0);
  assert.equal(fillCircle(createImage(40, 40), 20, 20, 0, RED), 0);
});

Deno.test("fillPolygon: integer polygons cover their exact area; shared edges never overlap", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 20 }),
      fc.integer({ min: 0, max: 20 }),
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 1, max: 20 }),
      (x, y, w, h) => {
        // A rectangle cut along its diagonal into two triangles.
        const image = createImage(48, 48);
        const a = fillTriangle(image, [x, y], [x + w, y], [x + w, y + h], RED);
        const b = fillTriangle(image, [x, y], [x + w, y + h], [x, y + h], [0, 255, 0]);
        assert.equal(a + b, w * h, "the two halves tile the rectangle");
        assert.equal(painted(image), w * h, "no pixel painted twice or missed");
      },
    ),
  );
  const image = createImage(30, 30);
  // Centres on the hypotenuse are outside (half-open spans): 9 + 8 + … + 0.
  assert.equal(fillPolygon(image, [[0, 0], [10, 0], [0, 10]], RED), 45);
  // A concave L of area 10·10 − 5·5.
  const l = fillPolygon(
    createImage(30, 30),
    [[0, 0], [10, 0], [10, 5], [5, 5], [5, 10], [0, 10]],
    RED,
  );
  assert.equal(l, 75);
});

Deno.test("fillPolygon: clipping and degenerate polygons", () => {
  const image = createImage(10, 10);
  assert.equal(fillPolygon(image, [[-10, -10], [20, -10], [20, 20], [-10, 20]], RED), 100);
  assert.equal(fillPolygon(createImage(10, 10), [[0, 0], [5, 5], [10, 10]], RED), 0);
  assert.equal(fillPolygon(createImage(10, 10), [[20, 20], [30, 20], [30, 30]], RED), 0);
  assert.throws(() => fillPolygon(image, [[0, 0], [1, 1]], RED), /at least 3 points/);
  assert.throws(
    () => fillPolygon(image, [[0, 0], [1, NaN], [2, 2]], RED),
    /fillPolygon: points\[1\] must be a point/,
  );
});

Deno.test("drawLine: a thick capsule; axis-aligned lines paint exact rectangles plus caps", () => {
  const image = createImage(30, 30);
  // Width 2 along y = 10 from x = 5 to 15: rows 9 and 10, columns 4..15 (round caps reach ½).
  assert.equal(drawLine(image, 5, 10, 15, 10, 2, RED), 2 * 12);
  assert.equal(painted(image), 24);
  // Same length vertical: same count (symmetry).
  assert.equal(drawLine(createImage(30, 30), 10, 5, 10, 15, 2, RED), 24);
  // A zero-length line is a disc.
  assert.equal(
    drawLine(createImage(30, 30), 10, 10, 10, 10, 6, RED),
    fillCircle(createImage(30, 30), 10, 10, 3, RED),
  );
  // Diagonal lines stay within width/2 of the segment and paint every pixel on it.
  const d = createImage(40, 40);
  drawLine(d, 5, 5, 30, 20, 3, RED);
  for (let t = 0; t <= 1; t += 0.01) {
    const x = Math.floor(5 + 25 * t);
    const y = Math.floor(5 + 15 * t);
    assert.deepEqual(getPixel(d, x, y), RED);
  }
  assert.equal(drawLine(createImage(10, 10), -50, -50, -40, -40, 4, RED), 0, "clipped away");
});

Deno.test("raster: same call, same pixels", () => {
  const draw = () => {
    const image = createImage(56, 56);
    fillCircle(image, 20, 20, 9.5, RED);
    fillPolygon(image, [[3, 40], [50, 33], [27, 55]], [0, 0, 255]);
    drawLine(image, 0, 0, 55, 37, 2.5, [0, 255, 0]);
    return image.data;
  };
  assert.deepEqual(draw(), draw());
});

Deno.test("raster: bad arguments name the function, the field and the value", () => {
  const image = createImage(4, 4);
  assert.throws(
    () => fillRect(image, 0, 0, -1, 2, RED),
    /fillRect: width must be a finite number >= 0, got -1/,
  );
  assert.throws(
    () => fillCircle(image, NaN, 0, 1, RED),
    /fillCircle: cx must be a finite number, got NaN/,
  );
  assert.throws(
    () => fillRect(image, 0, 0, 1, 1, [256, 0, 0]),
    /fillRect: color must be \[r, g, b\] with integers in \[0, 255\], got \[256,0,0\]/,
  );
  assert.throws(
    () => drawLine(image, 0, 0, 1, 1, 0, RED),
    /drawLine: width must be a finite number in \(0|drawLine: width must be a finite number > 0/,
  );
  assert.throws(
    () => fillRect({ width: 2, height: 2, data: new Uint8Array(3) }, 0, 0, 1, 1, RED),
    /fillRect: image must be an RgbImage/,
  );
  assert.throws(() => getPixel(image, 4, 0), /getPixel: x must be an integer in \[0, 3\], got 4/);
  assert.equal(setPixel(image, -1, 0, RED), 0);
});
