/**
 * The one image type of the workspace: 8-bit RGB, row-major, three bytes a pixel. Decoders
 * (`codec.ts`) produce it, the Qwen2-VL processor (`qwen2vl.ts`) consumes it and the visual
 * tasks of `@rlvr/rewards` draw into it. Alpha is dropped on decode, as PIL's `convert("RGB")`
 * does in the Hugging Face image processors.
 *
 * @module
 */

/** An 8-bit RGB image: `data[3 * (y * width + x) + c]` is channel `c` of pixel `(x, y)`. */
export interface RgbImage {
  /** Width in pixels (integer >= 1). */
  readonly width: number;
  /** Height in pixels (integer >= 1). */
  readonly height: number;
  /** `width * height * 3` bytes, RGB interleaved, rows top to bottom. */
  readonly data: Uint8Array;
}

/** The most pixels {@link createImage} accepts (64 megapixels, 192 MiB of RGB). */
export const MAX_IMAGE_PIXELS = 64 * 1024 * 1024;

function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (value === undefined) return "undefined";
  if (value instanceof Uint8Array) return `a Uint8Array of ${value.length} bytes`;
  try {
    const s = JSON.stringify(value) ?? String(value);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    return String(value);
  }
}

function checkSide(owner: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`${owner}: ${field} must be an integer >= 1, got ${describe(value)}`);
  }
  return value;
}

/**
 * A new image of `width × height`, filled with `fill` (RGB, default black), or wrapping `data`
 * when given (not copied; it must hold exactly `width * height * 3` bytes).
 *
 * @example Usage
 * ```ts
 * import { createImage } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const white = createImage(2, 1, { fill: [255, 255, 255] });
 * assert.deepEqual([...white.data], [255, 255, 255, 255, 255, 255]);
 * ```
 */
export function createImage(
  width: number,
  height: number,
  options: { data?: Uint8Array; fill?: readonly [number, number, number] } = {},
): RgbImage {
  const owner = "createImage";
  checkSide(owner, "width", width);
  checkSide(owner, "height", height);
  if (width * height > MAX_IMAGE_PIXELS) {
    throw new RangeError(
      `${owner}: ${width}×${height} is ${width * height} pixels, more than the limit of ` +
        `${MAX_IMAGE_PIXELS}; resize it first`,
    );
  }
  const size = width * height * 3;
  if (options.data !== undefined) {
    if (!(options.data instanceof Uint8Array) || options.data.length !== size) {
      throw new RangeError(
        `${owner}: data must be a Uint8Array of width*height*3 = ${size} bytes, got ` +
          describe(options.data),
      );
    }
    return { width, height, data: options.data };
  }
  const data = new Uint8Array(size);
  const fill = options.fill;
  if (fill !== undefined) {
    if (
      !Array.isArray(fill) || fill.length !== 3 ||
      !fill.every((v) => Number.isInteger(v) && v >= 0 && v <= 255)
    ) {
      throw new RangeError(
        `${owner}: fill must be [r, g, b] with integers in [0, 255], got ${describe(fill)}`,
      );
    }
    for (let i = 0; i < size; i += 3) {
      data[i] = fill[0];
      data[i + 1] = fill[1];
      data[i + 2] = fill[2];
    }
  }
  return { width, height, data };
}

/**
 * Returns `value` as an {@link RgbImage} after checking its shape, or throws a TypeError naming
 * `field` (for functions that take images from users or peers).
 *
 * @example Usage
 * ```ts
 * import { checkImage, createImage } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const image = checkImage("resize", "image", createImage(1, 1));
 * assert.equal(image.width, 1);
 * assert.throws(() => checkImage("resize", "image", { width: 2, height: 2, data: new Uint8Array(3) }));
 * ```
 */
export function checkImage(owner: string, field: string, value: unknown): RgbImage {
  const v = value as Partial<RgbImage> | null;
  const ok = typeof v === "object" && v !== null && Number.isInteger(v.width) &&
    Number.isInteger(v.height) && (v.width as number) >= 1 && (v.height as number) >= 1 &&
    v.data instanceof Uint8Array &&
    v.data.length === (v.width as number) * (v.height as number) * 3;
  if (!ok) {
    throw new TypeError(
      `${owner}: ${field} must be an RgbImage {width, height, data: Uint8Array of ` +
        `width*height*3 bytes}, got ${describe(value)}; decode bytes with decodeImage()`,
    );
  }
  return v as RgbImage;
}
