/**
 * The named colours the visual tasks draw with: six saturated shape colours a small vision
 * model can tell apart at a glance, plus the inks of backgrounds, walls, text and hands.
 *
 * Design: the prompt names a colour (`"red"`), the row stores the name and the image uses the
 * RGB value of {@link COLORS}; each shape colour differs from every other named colour by at
 * least 70 in some channel, so a pixel's colour identifies its name exactly and a model sees
 * them as clearly different.
 *
 * @module
 */

import type { Rgb } from "./raster.ts";

/** A colour shapes and bars are drawn in. */
export type ShapeColor = "red" | "green" | "blue" | "yellow" | "purple" | "orange";

/** A named colour of {@link COLORS}. */
export type ColorName = ShapeColor | "white" | "black" | "gray" | "lightgray" | "dark";

/**
 * The RGB value of every named colour.
 *
 * @example Usage
 * ```ts
 * import { COLORS, SHAPE_COLORS } from "@rlvr/rewards/vision";
 * import assert from "node:assert/strict";
 * assert.deepEqual(COLORS.white, [255, 255, 255]);
 * assert.equal(SHAPE_COLORS.length, 6);
 * ```
 */
export const COLORS: Readonly<Record<ColorName, Rgb>> = Object.freeze({
  red: [230, 30, 30],
  green: [20, 170, 60],
  blue: [30, 80, 235],
  yellow: [245, 205, 0],
  purple: [145, 55, 200],
  orange: [250, 130, 0],
  white: [255, 255, 255],
  black: [0, 0, 0],
  gray: [110, 110, 110],
  lightgray: [200, 200, 200],
  dark: [45, 45, 45],
});

/** The shape colours, in a fixed order (the tasks draw a subset per row). */
export const SHAPE_COLORS: readonly ShapeColor[] = Object.freeze([
  "red",
  "green",
  "blue",
  "yellow",
  "purple",
  "orange",
]);
