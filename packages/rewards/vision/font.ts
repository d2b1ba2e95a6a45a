/**
 * A 5×7 bitmap font (digits, A–Z, space and `: - . ?`) for chart labels, values and clock
 * numbers, drawn pixel by pixel at an integer scale.
 *
 * Design: the glyphs are the classic 5×7 dot-matrix shapes (as on HD44780 character LCDs), one
 * string of `0`/`1` a row; each glyph differs from every other (the digit `0` has a slash, the
 * letter `O` has not). A character `c` at scale `s` occupies a `5s × 7s` cell; characters are
 * separated by `s` blank columns. Lower-case letters are drawn as upper-case ones.
 *
 * @module
 */

import type { RgbImage } from "@rlvr/image";
import { checkImage } from "@rlvr/image";
import { checkNumber, show } from "../_check.ts";
import { fillRect, type Rgb } from "./raster.ts";
import { checkRgb } from "./_util.ts";

/**
 * Width of a glyph in font pixels.
 *
 * @example Usage
 * ```ts
 * import { GLYPH_WIDTH, textWidth } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.equal(textWidth("A", { scale: 2 }), 2 * GLYPH_WIDTH);
 * ```
 */
export const GLYPH_WIDTH = 5;
/**
 * Height of a glyph in font pixels (text at scale `s` is `7·s` pixels high).
 *
 * @example Usage
 * ```ts
 * import { GLYPH_HEIGHT } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.equal(GLYPH_HEIGHT, 7);
 * ```
 */
export const GLYPH_HEIGHT = 7;

const GLYPHS: Readonly<Record<string, readonly string[]>> = {
  "0": ["01110", "10001", "10011", "10101", "11001", "10001", "01110"],
  "1": ["00100", "01100", "00100", "00100", "00100", "00100", "01110"],
  "2": ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
  "3": ["11111", "00010", "00100", "00010", "00001", "10001", "01110"],
  "4": ["00010", "00110", "01010", "10010", "11111", "00010", "00010"],
  "5": ["11111", "10000", "11110", "00001", "00001", "10001", "01110"],
  "6": ["00110", "01000", "10000", "11110", "10001", "10001", "01110"],
  "7": ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
  "8": ["01110", "10001", "10001", "01110", "10001", "10001", "01110"],
  "9": ["01110", "10001", "10001", "01111", "00001", "00010", "01100"],
  A: ["01110", "10001", "10001", "10001", "11111", "10001", "10001"],
  B: ["11110", "10001", "10001", "11110", "10001", "10001", "11110"],
  C: ["01110", "10001", "10000", "10000", "10000", "10001", "01110"],
  D: ["11100", "10010", "10001", "10001", "10001", "10010", "11100"],
  E: ["11111", "10000", "10000", "11110", "10000", "10000", "11111"],
  F: ["11111", "10000", "10000", "11110", "10000", "10000", "10000"],
  G: ["01110", "10001", "10000", "10111", "10001", "10001", "01111"],
  H: ["10001", "10001", "10001", "11111", "10001", "10001", "10001"],
  I: ["01110", "00100", "00100", "00100", "00100", "00100", "01110"],
  J: ["00111", "00010", "00010", "00010", "00010", "10010", "01100"],
  K: ["10001", "10010", "10100", "11000", "10100", "10010", "10001"],
  L: ["10000", "10000", "10000", "10000", "10000", "10000", "11111"],
  M: ["10001", "11011", "10101", "10101", "10001", "10001", "10001"],
  N: ["10001", "10001", "11001", "10101", "10011", "10001", "10001"],
  O: ["01110", "10001", "10001", "10001", "10001", "10001", "01110"],
  P: ["11110", "10001", "10001", "11110", "10000", "10000", "10000"],
  Q: ["01110", "10001", "10001", "10001", "10101", "10010", "01101"],
  R: ["11110", "10001", "10001", "11110", "10100", "10010", "10001"],
  S: ["01111", "10000", "10000", "01110", "00001", "00001", "11110"],
  T: ["11111", "00100", "00100", "00100", "00100", "00100", "00100"],
  U: ["10001", "10001", "10001", "10001", "10001", "10001", "01110"],
  V: ["10001", "10001", "10001", "10001", "10001", "01010", "00100"],
  W: ["10001", "10001", "10001", "10101", "10101", "10101", "01010"],
  X: ["10001", "10001", "01010", "00100", "01010", "10001", "10001"],
  Y: ["10001", "10001", "10001", "01010", "00100", "00100", "00100"],
  Z: ["11111", "00001", "00010", "00100", "01000", "10000", "11111"],
  " ": ["00000", "00000", "00000", "00000", "00000", "00000", "00000"],
  ":": ["00000", "01100", "01100", "00000", "01100", "01100", "00000"],
  "-": ["00000", "00000", "00000", "11111", "00000", "00000", "00000"],
  ".": ["00000", "00000", "00000", "00000", "00000", "01100", "01100"],
  "?": ["01110", "10001", "00001", "00010", "00100", "00000", "00100"],
};

/**
 * Every character the font draws (lower-case letters are drawn as upper-case).
 *
 * @example Usage
 * ```ts
 * import { FONT_CHARS } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.ok(FONT_CHARS.startsWith("0123456789ABC"));
 * assert.ok(FONT_CHARS.includes(":"));
 * ```
 */
export const FONT_CHARS: string = Object.keys(GLYPHS).join("");

/** Options of {@link drawText} and {@link textWidth}. */
export interface TextOptions {
  /** Size of a font pixel in image pixels (integer 1–16, default 1). */
  scale?: number;
}

function scaleOf(owner: string, options: TextOptions | undefined): number {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw new TypeError(`${owner}: options must be an object {scale?}, got ${show(options)}`);
  }
  return checkNumber(owner, "options.scale", options?.scale ?? 1, {
    min: 1,
    max: 16,
    integer: true,
  });
}

function glyphs(owner: string, text: unknown): (readonly string[])[] {
  if (typeof text !== "string") {
    throw new TypeError(`${owner}: text must be a string, got ${show(text)}`);
  }
  return [...text.toUpperCase()].map((c, i) => {
    const g = GLYPHS[c];
    if (g === undefined) {
      throw new RangeError(
        `${owner}: text[${i}] is ${show(text[i])}, which the font cannot draw; ` +
          `use only these characters: ${show(FONT_CHARS)} (and lower-case letters)`,
      );
    }
    return g;
  });
}

/**
 * Width in pixels of `text` drawn by {@link drawText}: `n·5·s + (n − 1)·s` for `n` characters
 * at scale `s` (0 for the empty string). Its height is always `7·s`.
 *
 * @example Usage
 * ```ts
 * import { textWidth } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.equal(textWidth("12"), 11);
 * assert.equal(textWidth("12", { scale: 2 }), 22);
 * ```
 */
export function textWidth(text: string, options?: TextOptions): number {
  const scale = scaleOf("textWidth", options);
  const n = glyphs("textWidth", text).length;
  return n === 0 ? 0 : scale * (GLYPH_WIDTH * n + n - 1);
}

/**
 * Draws `text` with its top-left corner at `(x, y)` (integers; clipped at the edges) and
 * returns the number of pixels painted. Throws a RangeError naming the first character the
 * font lacks (see {@link FONT_CHARS}).
 *
 * @example Usage
 * ```ts
 * import { createImage } from "@rlvr/image";
 * import { drawText, getPixel, textWidth } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * const image = createImage(textWidth("A1"), 7, { fill: [255, 255, 255] });
 * assert.ok(drawText(image, "A1", 0, 0, [0, 0, 0]) > 0);
 * assert.deepEqual(getPixel(image, 0, 0), [255, 255, 255]); // the A's top-left is blank
 * assert.deepEqual(getPixel(image, 0, 6), [0, 0, 0]); // its left leg is not
 * ```
 */
export function drawText(
  image: RgbImage,
  text: string,
  x: number,
  y: number,
  color: Rgb,
  options?: TextOptions,
): number {
  const owner = "drawText";
  checkImage(owner, "image", image);
  checkNumber(owner, "x", x, { integer: true });
  checkNumber(owner, "y", y, { integer: true });
  checkRgb(owner, "color", color);
  const scale = scaleOf(owner, options);
  let painted = 0;
  for (const [i, glyph] of glyphs(owner, text).entries()) {
    const left = x + i * scale * (GLYPH_WIDTH + 1);
    for (let row = 0; row < GLYPH_HEIGHT; row++) {
      for (let col = 0; col < GLYPH_WIDTH; col++) {
        if (glyph[row]![col] === "1") {
          painted += fillRect(image, left + col * scale, y + row * scale, scale, scale, color);
        }
      }
    }
  }
  return painted;
}
