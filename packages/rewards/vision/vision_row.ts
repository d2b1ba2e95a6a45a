/**
 * The row shape every visual task shares: a {@link TaskRow} plus its images as PNG data URLs.
 *
 * Design: images travel inside the row as `data:image/png;base64,…` strings, so a row stays
 * plain JSON through logs, datasets and message queues; a rollout worker decodes them
 * (`@rlvr/image`) and places them where the prompt says "the image". Each task also exports
 * the function that draws its image from the row's structured fields, so the picture is a pure
 * function of the problem the verifier checks.
 *
 * @module
 */

import type { TaskRow } from "../tasks/task.ts";

/** A row of a visual task. */
export interface VisionRow extends TaskRow {
  /** The images the prompt refers to, as PNG data URLs (`data:image/png;base64,…`). */
  images: string[];
  /** Width of the image in pixels. */
  width: number;
  /** Height of the image in pixels. */
  height: number;
}

/**
 * An image size option: one side for a square image, or `[width, height]`; integers in
 * [28, 1024]. Sides that are multiples of 28 reach a Qwen2-VL-style processor (14-pixel patches
 * merged 2×2) without being resized, which keeps pixel coordinates in the prompt exact.
 */
export type ImageSizeOption = number | readonly [number, number];
