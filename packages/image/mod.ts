/**
 * `@rlvr/image`: images for vision-language RLVR. One type ({@link RgbImage}), decoders and an
 * encoder with limits a hostile file cannot get past, data URLs and a loader for every source,
 * Pillow's bicubic resize, and the Qwen2-VL image processor. Everything runs on the web platform
 * too, except `loadImage` of a file path, which needs Deno (a browser passes the bytes or a data
 * URL).
 *
 * @example Usage
 * ```ts
 * import { createImage, decodeImage, encodePng, processQwen2VLImages } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const image = decodeImage(encodePng(createImage(64, 48, { fill: [200, 100, 50] })));
 * const { gridThw, imageTokenCounts } = processQwen2VLImages([image]);
 * assert.deepEqual(gridThw, [[1, 4, 4]]); // 64×48 → 56×56 pixels → 4×4 patches of 14
 * assert.deepEqual(imageTokenCounts, [4]);
 * ```
 *
 * @module
 */

export * from "./image.ts";
export * from "./codec.ts";
export * from "./data_url.ts";
export * from "./resize.ts";
export * from "./qwen2vl.ts";
