/**
 * Images as `data:` URLs (what OpenAI-style chat messages carry in `image_url`), and
 * {@link loadImage}, the one entry point that takes any of an {@link RgbImage}, encoded bytes, a
 * data URL or a file path.
 *
 * @module
 */

import {
  decodeImage,
  type DecodeLimits,
  encodePng,
  ImageDecodeError,
  resolveDecodeLimits,
} from "./codec.ts";
import { checkImage, type RgbImage } from "./image.ts";

/** The MIME types {@link parseDataUrl} accepts (`image/jpg` is read as `image/jpeg`). */
export type ImageMime = "image/png" | "image/jpeg";

/** A parsed data URL: its MIME type and its decoded bytes (still PNG or JPEG encoded). */
export interface ParsedDataUrl {
  /** The declared type; the bytes' own magic decides the format when they are decoded. */
  readonly mime: ImageMime;
  /** The base64 payload, decoded. */
  readonly bytes: Uint8Array;
}

/** What {@link loadImage} takes: an image, encoded bytes, a data URL or a file path. */
export type ImageSource = RgbImage | Uint8Array | string;

function base64FromBytes(bytes: Uint8Array): string {
  let binary = "";
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step) {
    binary += String.fromCharCode(...bytes.subarray(i, i + step));
  }
  return btoa(binary);
}

/**
 * `image` as a PNG data URL, `data:image/png;base64,...` (lossless; {@link parseDataUrl} and
 * {@link loadImage} read it back).
 *
 * @example Usage
 * ```ts
 * import { createImage, toDataUrl } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const url = toDataUrl(createImage(1, 1));
 * assert.ok(url.startsWith("data:image/png;base64,iVBORw0KGgo"));
 * ```
 */
export function toDataUrl(image: RgbImage): string {
  return `data:image/png;base64,${base64FromBytes(encodePng(image))}`;
}

/**
 * Encoded PNG or JPEG bytes as a base64 data URL, the MIME type taken from the bytes' own
 * signature: how an image stored as bytes (a Parquet dataset's Hugging Face `Image` feature,
 * `{bytes, path}`) becomes an image source. The size limit (`maxBytes`, default
 * {@link DEFAULT_MAX_BYTES}) is checked first. Errors are {@link ImageDecodeError}s (`limit`,
 * or `format` for bytes that are neither PNG nor JPEG).
 *
 * @example Usage
 * ```ts
 * import { bytesToDataUrl, createImage, encodePng, parseDataUrl } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const png = encodePng(createImage(2, 1));
 * const url = bytesToDataUrl(png);
 * assert.ok(url.startsWith("data:image/png;base64,"));
 * assert.deepEqual(parseDataUrl(url).bytes, png);
 * assert.throws(() => bytesToDataUrl(new Uint8Array([71, 73, 70])), /neither PNG nor JPEG/);
 * ```
 */
export function bytesToDataUrl(bytes: Uint8Array, limits?: DecodeLimits): string {
  const owner = "bytesToDataUrl";
  const { maxBytes } = resolveDecodeLimits(owner, limits);
  if (bytes.length > maxBytes) {
    throw new ImageDecodeError(
      "limit",
      `${owner}: ${bytes.length} bytes, more than maxBytes = ${maxBytes}; compress or downscale ` +
        `the image, or raise limits.maxBytes if you trust its source`,
    );
  }
  const png = bytes.length >= 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e &&
    bytes[3] === 0x47;
  const jpeg = bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
  if (!png && !jpeg) {
    throw new ImageDecodeError(
      "format",
      `${owner}: ${bytes.length} bytes starting ${
        [...bytes.subarray(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join(" ")
      } are neither PNG nor JPEG (no signature); convert the image to PNG`,
    );
  }
  return `data:image/${png ? "png" : "jpeg"};base64,${base64FromBytes(bytes)}`;
}

const DATA_URL = /^data:(image\/(?:png|jpeg|jpg))((?:;[\w.+-]+=[\w.+-]*)*);base64,/i;

function preview(s: string): string {
  return JSON.stringify(s.length > 48 ? `${s.slice(0, 45)}...` : s);
}

/**
 * Splits a base64 data URL of a PNG or JPEG (`data:image/png;base64,...`, also `image/jpeg` and
 * `image/jpg`, parameters such as `;name=x` allowed before `;base64`) into its MIME type and bytes.
 * The size limit (`maxBytes`, default {@link DEFAULT_MAX_BYTES}) is checked on the base64 length
 * before anything is decoded. Errors are {@link ImageDecodeError}s (`format` for anything but a
 * base64 PNG/JPEG data URL, `corrupt` for invalid base64, `limit` for size).
 *
 * @example Usage
 * ```ts
 * import { createImage, parseDataUrl, toDataUrl } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const { mime, bytes } = parseDataUrl(toDataUrl(createImage(2, 2)));
 * assert.equal(mime, "image/png");
 * assert.equal(bytes[1], 0x50); // "P" of the PNG signature
 * assert.throws(() => parseDataUrl("data:image/gif;base64,R0lGOD"), /only base64 PNG or JPEG/);
 * ```
 */
export function parseDataUrl(url: string, limits?: DecodeLimits): ParsedDataUrl {
  const owner = "parseDataUrl";
  if (typeof url !== "string") {
    throw new TypeError(`${owner}: url must be a string, got ${typeof url}`);
  }
  const { maxBytes } = resolveDecodeLimits(owner, limits);
  const match = DATA_URL.exec(url);
  if (match === null) {
    throw new ImageDecodeError(
      "format",
      `${owner}: expected a data URL "data:image/png;base64,..." (or image/jpeg, image/jpg), got ` +
        `${preview(url)}; only base64 PNG or JPEG data URLs are accepted (convert other formats ` +
        `to PNG)`,
    );
  }
  const mimeText = (match[1] as string).toLowerCase();
  const mime: ImageMime = mimeText === "image/png" ? "image/png" : "image/jpeg";
  const payload = url.slice(match[0].length);
  // Every 4 base64 characters are 3 bytes: an upper bound on the decoded size, before decoding.
  const bound = Math.floor(payload.replace(/=+$/, "").length * 3 / 4);
  if (bound > maxBytes) {
    throw new ImageDecodeError(
      "limit",
      `${owner}: the data URL carries about ${bound} bytes (${payload.length} base64 characters), ` +
        `more than maxBytes = ${maxBytes}; refused before decoding. Compress or downscale the ` +
        `image, or raise limits.maxBytes if you trust its source`,
    );
  }
  let binary: string;
  try {
    binary = atob(payload);
  } catch (e) {
    throw new ImageDecodeError(
      "corrupt",
      `${owner}: the data URL's payload is not valid base64 (${
        e instanceof Error ? e.message : String(e)
      }); it must be standard base64 (A-Z a-z 0-9 + /, "=" padding), not URL-encoded`,
      { cause: e },
    );
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return { mime, bytes };
}

/**
 * An {@link RgbImage} from any {@link ImageSource}: an RgbImage (checked, returned as is), encoded
 * PNG/JPEG bytes ({@link decodeImage}), a data URL ({@link parseDataUrl} then decodeImage) or a
 * file path (its size checked with `Deno.stat` before `Deno.readFile`; needs Deno and read
 * permission: elsewhere, a browser, a path is an error saying to pass the bytes).
 * `http(s)://` URLs are refused: fetch them yourself and pass the bytes. All take the same
 * {@link DecodeLimits}.
 *
 * @example Usage
 * ```ts
 * import { createImage, encodePng, loadImage, toDataUrl } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const image = createImage(3, 2, { fill: [1, 2, 3] });
 * assert.deepEqual(await loadImage(toDataUrl(image)), image);
 * assert.deepEqual(await loadImage(encodePng(image)), image);
 * const path = await Deno.makeTempFile({ suffix: ".png" });
 * await Deno.writeFile(path, encodePng(image));
 * assert.deepEqual(await loadImage(path), image);
 * await Deno.remove(path);
 * ```
 */
export async function loadImage(source: ImageSource, limits?: DecodeLimits): Promise<RgbImage> {
  const owner = "loadImage";
  const resolved = resolveDecodeLimits(owner, limits);
  if (source instanceof Uint8Array) return decodeImage(source, resolved);
  if (typeof source === "string") {
    if (/^data:/i.test(source)) return decodeImage(parseDataUrl(source, resolved).bytes, resolved);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source) && !/^file:\/\//i.test(source)) {
      throw new ImageDecodeError(
        "format",
        `${owner}: ${preview(source)} is a URL; loadImage reads data URLs and local files only. ` +
          `Fetch it yourself (with your own size and time limits) and pass the bytes`,
      );
    }
    if (source.length === 0) {
      throw new TypeError(`${owner}: source is an empty string; pass a file path or a data URL`);
    }
    if ((globalThis as { Deno?: unknown }).Deno === undefined) {
      throw new Error(
        `${owner}(${preview(source)}): a file path needs Deno's file system; in a browser pass ` +
          `a data URL, the file's bytes (e.g. from fetch) or an RgbImage`,
      );
    }
    const path = /^file:\/\//i.test(source) ? new URL(source) : source;
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(path);
    } catch (e) {
      throw new Error(
        `${owner}: cannot stat the image file ${preview(source)} (${
          e instanceof Error ? e.message : String(e)
        }); pass an existing file path, a data URL, bytes or an RgbImage`,
        { cause: e },
      );
    }
    if (!info.isFile) {
      throw new Error(`${owner}: ${preview(source)} is not a regular file`);
    }
    if (info.size > resolved.maxBytes) {
      throw new ImageDecodeError(
        "limit",
        `${owner}: the file ${preview(source)} is ${info.size} bytes, more than maxBytes = ` +
          `${resolved.maxBytes}; refused before reading it. Compress or downscale the image, ` +
          `or raise limits.maxBytes if you trust its source`,
      );
    }
    // decodeImage checks maxBytes again, in case the file grew between stat and read.
    return decodeImage(await Deno.readFile(path), resolved);
  }
  if (typeof source === "object" && source !== null && "data" in source) {
    return checkImage(owner, "source", source);
  }
  throw new TypeError(
    `${owner}: source must be an RgbImage, a Uint8Array of PNG/JPEG bytes, a data URL or a ` +
      `file path, got ${source === null ? "null" : typeof source}`,
  );
}
