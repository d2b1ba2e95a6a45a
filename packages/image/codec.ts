/**
 * PNG and JPEG to {@link RgbImage} and back to PNG, with limits a hostile file cannot get past.
 *
 * Order of the checks in {@link decodeImage}: the byte count against `maxBytes` (before anything
 * else), the magic bytes, the dimensions in the header (PNG's IHDR, JPEG's SOFn marker, both
 * parsed here) against `maxPixels` (before any pixel buffer exists or any data is inflated), then
 * the file's structure: every PNG chunk inside the file with a correct CRC, the zlib stream
 * inflated in small slices and counted, refused as soon as it yields more bytes than the IHDR
 * implies (a decompression bomb costs one slice, never its full size), and every JPEG segment
 * inside the file up to an EOI marker, with at most {@link MAX_JPEG_SCANS} scans. Only then does
 * `fast-png` or `jpeg-js` decode, with jpeg-js's own `maxResolutionInMP` and
 * `maxMemoryUsageInMB` set from the same limits.
 *
 * Colour: everything becomes 8-bit RGB as PIL's `Image.convert("RGB")` gives it: alpha is dropped
 * (not composited), gray is repeated into the three channels, a palette is looked up, gray of 1, 2
 * or 4 bits is scaled to 0..255 (×255, ×85, ×17), and 16-bit samples keep their high byte
 * (`v >> 8`, what PIL does for 16-bit RGB, RGBA and gray+alpha PNGs). One difference from PIL:
 * PIL opens a 16-bit gray PNG as mode `I` and its `convert("RGB")` clips the values at 255
 * (almost every pixel white); the high byte is used here instead.
 *
 * @module
 */

import { decode as decodePngData, encode as encodePngData } from "fast-png";
import jpeg from "jpeg-js";
import { Unzlib } from "fflate";
import { checkImage, createImage, MAX_IMAGE_PIXELS, type RgbImage } from "./image.ts";

/**
 * Default `maxBytes` of {@link DecodeLimits}: 32 MiB of encoded data.
 *
 * @example Usage
 * ```ts
 * import { DEFAULT_MAX_BYTES, resolveDecodeLimits } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * assert.equal(resolveDecodeLimits("example").maxBytes, DEFAULT_MAX_BYTES);
 * ```
 */
export const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;

/**
 * Default `maxPixels` of {@link DecodeLimits}: 40 megapixels (120 MB of RGB).
 *
 * @example Usage
 * ```ts
 * import { DEFAULT_MAX_PIXELS, MAX_IMAGE_PIXELS } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * assert.ok(DEFAULT_MAX_PIXELS <= MAX_IMAGE_PIXELS);
 * ```
 */
export const DEFAULT_MAX_PIXELS = 40_000_000;

/**
 * The most scans (SOS markers) a JPEG may hold. A progressive JPEG has about ten; each scan walks
 * every block of the image, so thousands of tiny scans are a CPU bomb.
 *
 * @example Usage
 * ```ts
 * import { MAX_JPEG_SCANS } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * assert.equal(MAX_JPEG_SCANS, 256);
 * ```
 */
export const MAX_JPEG_SCANS = 256;

/** Limits on untrusted encoded images. Omitted fields take the defaults. */
export interface DecodeLimits {
  /** Largest encoded size accepted, in bytes; checked before anything else. Default {@link DEFAULT_MAX_BYTES}. */
  readonly maxBytes?: number;
  /**
   * Most pixels (width × height) accepted, checked from the file's header before decoding.
   * Default {@link DEFAULT_MAX_PIXELS}; never above {@link MAX_IMAGE_PIXELS}.
   */
  readonly maxPixels?: number;
}

/** The formats {@link decodeImage} reads. */
export type ImageFormat = "png" | "jpeg";

/** What a file's header says, read by {@link readImageHeader} without decoding any pixel. */
export interface ImageHeader {
  /** The format, from the magic bytes. */
  readonly format: ImageFormat;
  /** Width in pixels, from PNG's IHDR or JPEG's SOFn. */
  readonly width: number;
  /** Height in pixels, from PNG's IHDR or JPEG's SOFn. */
  readonly height: number;
}

/**
 * Why {@link decodeImage} refused: `limit` (too many bytes, pixels, scans or too much inflated
 * data), `format` (neither PNG nor JPEG), `corrupt` (malformed structure or bad checksum),
 * `truncated` (the data ends early) or `unsupported` (valid but not handled here).
 */
export type ImageDecodeErrorReason = "limit" | "format" | "corrupt" | "truncated" | "unsupported";

/**
 * The error of every refusal of {@link decodeImage} (and of the loaders built on it), with a
 * machine-readable {@link ImageDecodeErrorReason} beside the message.
 *
 * @example Usage
 * ```ts
 * import { decodeImage, ImageDecodeError } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * try {
 *   decodeImage(new TextEncoder().encode("hello"));
 *   assert.fail("expected a refusal");
 * } catch (e) {
 *   assert.ok(e instanceof ImageDecodeError);
 *   assert.equal(e.reason, "format");
 * }
 * ```
 */
export class ImageDecodeError extends Error {
  /** Why the data was refused. */
  readonly reason: ImageDecodeErrorReason;
  /** An error whose `reason` is `reason`. */
  constructor(reason: ImageDecodeErrorReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ImageDecodeError";
    this.reason = reason;
  }
}

/** {@link DecodeLimits} with both fields filled in and checked. */
export interface ResolvedDecodeLimits {
  /** Largest encoded size accepted, in bytes. */
  readonly maxBytes: number;
  /** Most pixels accepted. */
  readonly maxPixels: number;
}

/**
 * Fills in the defaults of `limits` and checks them: `maxBytes` an integer >= 1, `maxPixels` an
 * integer in [1, {@link MAX_IMAGE_PIXELS}]. `owner` names the caller in the error message.
 *
 * @example Usage
 * ```ts
 * import { DEFAULT_MAX_BYTES, resolveDecodeLimits } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const limits = resolveDecodeLimits("example", { maxPixels: 1000 });
 * assert.deepEqual(limits, { maxBytes: DEFAULT_MAX_BYTES, maxPixels: 1000 });
 * assert.throws(() => resolveDecodeLimits("example", { maxPixels: 2 ** 40 }), /at most 67108864/);
 * ```
 */
export function resolveDecodeLimits(
  owner: string,
  limits: DecodeLimits = {},
): ResolvedDecodeLimits {
  if (typeof limits !== "object" || limits === null) {
    throw new TypeError(`${owner}: limits must be an object {maxBytes?, maxPixels?}`);
  }
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxPixels = limits.maxPixels ?? DEFAULT_MAX_PIXELS;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new RangeError(`${owner}: limits.maxBytes must be an integer >= 1, got ${maxBytes}`);
  }
  if (!Number.isSafeInteger(maxPixels) || maxPixels < 1 || maxPixels > MAX_IMAGE_PIXELS) {
    throw new RangeError(
      `${owner}: limits.maxPixels must be an integer in [1, ${MAX_IMAGE_PIXELS}] (at most ` +
        `${MAX_IMAGE_PIXELS}, the size createImage accepts), got ${maxPixels}`,
    );
  }
  return { maxBytes, maxPixels };
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;

/**
 * The format of `bytes` from its magic bytes (PNG's 8-byte signature, JPEG's `FF D8 FF`), or
 * `undefined` for anything else.
 *
 * @example Usage
 * ```ts
 * import { createImage, encodePng, sniffImageFormat } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * assert.equal(sniffImageFormat(encodePng(createImage(1, 1))), "png");
 * assert.equal(sniffImageFormat(new Uint8Array([0xff, 0xd8, 0xff, 0xe0])), "jpeg");
 * assert.equal(sniffImageFormat(new Uint8Array([0x47, 0x49, 0x46])), undefined);
 * ```
 */
export function sniffImageFormat(bytes: Uint8Array): ImageFormat | undefined {
  if (bytes.length >= 8 && PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return "png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return "jpeg";
  }
  return undefined;
}

function hex(bytes: Uint8Array, count: number): string {
  return [...bytes.subarray(0, count)].map((b) => b.toString(16).padStart(2, "0")).join(" ");
}

/** Names a few formats we do not read, so the error can say what the data probably is. */
function guessOtherFormat(b: Uint8Array): string | undefined {
  const ascii = String.fromCharCode(...b.subarray(0, 12));
  if (ascii.startsWith("GIF87a") || ascii.startsWith("GIF89a")) return "GIF";
  if (ascii.startsWith("RIFF") && ascii.slice(8, 12) === "WEBP") return "WebP";
  if (ascii.startsWith("BM")) return "BMP";
  if (ascii.startsWith("II*\0") || ascii.startsWith("MM\0*")) return "TIFF";
  if (ascii.slice(4, 8) === "ftyp") return "HEIF/AVIF (ISO-BMFF)";
  if (ascii.startsWith("data:")) return "a data URL string (use parseDataUrl or loadImage)";
  if (/^\s*</.test(ascii)) return "text/HTML/SVG";
  return undefined;
}

function notAnImage(owner: string, bytes: Uint8Array): ImageDecodeError {
  if (bytes.length === 0) {
    return new ImageDecodeError("format", `${owner}: the data is empty (0 bytes), not an image`);
  }
  const guess = guessOtherFormat(bytes);
  return new ImageDecodeError(
    "format",
    `${owner}: not a PNG or JPEG: the first bytes are ${hex(bytes, 8)} (${bytes.length} bytes in ` +
      `all)${guess === undefined ? "" : `, which looks like ${guess}`}; PNG starts with ` +
      `89 50 4e 47 0d 0a 1a 0a and JPEG with ff d8 ff; convert the image to PNG first`,
  );
}

function u16(b: Uint8Array, i: number): number {
  return ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
}

function u32(b: Uint8Array, i: number): number {
  return (((b[i] ?? 0) << 24) >>> 0) + (((b[i + 1] ?? 0) << 16) | ((b[i + 2] ?? 0) << 8) |
    (b[i + 3] ?? 0));
}

function checkPixels(
  owner: string,
  what: string,
  width: number,
  height: number,
  maxPixels: number,
): void {
  const pixels = width * height;
  if (pixels > maxPixels) {
    throw new ImageDecodeError(
      "limit",
      `${owner}: the ${what} declares ${width}×${height} = ${pixels} pixels, more than maxPixels = ` +
        `${maxPixels}; refused before decoding. Downscale the image before sending it, or raise ` +
        `limits.maxPixels (at most ${MAX_IMAGE_PIXELS}) if you trust its source`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// PNG

interface PngHeader {
  readonly width: number;
  readonly height: number;
  readonly depth: number;
  readonly colorType: number;
  readonly interlace: number;
}

/** Channels of each PNG colour type, and the bit depths the PNG spec allows for it. */
const PNG_COLOR_TYPES: Readonly<Record<number, { channels: number; depths: readonly number[] }>> = {
  0: { channels: 1, depths: [1, 2, 4, 8, 16] }, // gray
  2: { channels: 3, depths: [8, 16] }, // RGB
  3: { channels: 1, depths: [1, 2, 4, 8] }, // palette
  4: { channels: 2, depths: [8, 16] }, // gray + alpha
  6: { channels: 4, depths: [8, 16] }, // RGBA
};

function parsePngHeader(owner: string, b: Uint8Array): PngHeader {
  // signature (8) + length (4) + "IHDR" (4) + 13 bytes of fields + CRC (4)
  if (b.length < 33) {
    throw new ImageDecodeError(
      "truncated",
      `${owner}: the PNG is truncated: ${b.length} bytes, fewer than the 33 of a signature and ` +
        `an IHDR chunk`,
    );
  }
  const type = String.fromCharCode(...b.subarray(12, 16));
  if (type !== "IHDR" || u32(b, 8) !== 13) {
    throw new ImageDecodeError(
      "corrupt",
      `${owner}: corrupt PNG: the first chunk must be a 13-byte IHDR, got ` +
        `${JSON.stringify(type)} of ${u32(b, 8)} bytes`,
    );
  }
  const width = u32(b, 16);
  const height = u32(b, 20);
  const depth = b[24] ?? 0;
  const colorType = b[25] ?? 0;
  const interlace = b[28] ?? 0;
  if (width < 1 || height < 1 || width > 0x7fffffff || height > 0x7fffffff) {
    throw new ImageDecodeError(
      "corrupt",
      `${owner}: corrupt PNG: IHDR size ${width}×${height} is outside [1, 2^31 - 1]`,
    );
  }
  const kind = PNG_COLOR_TYPES[colorType];
  if (kind === undefined || !kind.depths.includes(depth)) {
    throw new ImageDecodeError(
      "corrupt",
      `${owner}: corrupt PNG: IHDR colour type ${colorType} with bit depth ${depth} is not a ` +
        `combination the PNG spec allows`,
    );
  }
  if ((b[26] ?? 0) !== 0 || (b[27] ?? 0) !== 0 || interlace > 1) {
    throw new ImageDecodeError(
      "corrupt",
      `${owner}: corrupt PNG: IHDR compression ${b[26]}, filter ${b[27]}, interlace ${interlace} ` +
        `(PNG defines 0, 0 and 0 or 1)`,
    );
  }
  return { width, height, depth, colorType, interlace };
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(b: Uint8Array, start: number, end: number): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ (b[i] as number)) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Adam7's seven passes: first column and row, column and row steps. */
const ADAM7_PASSES: readonly (readonly [number, number, number, number])[] = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

/** Bytes of the filtered, uncompressed image data the IHDR implies (filter byte per row). */
function pngRawSize(h: PngHeader): number {
  const bitsPerPixel = (PNG_COLOR_TYPES[h.colorType]?.channels ?? 0) * h.depth;
  const rows = (width: number, height: number) =>
    width === 0 || height === 0 ? 0 : height * (1 + Math.ceil((width * bitsPerPixel) / 8));
  if (h.interlace === 0) return rows(h.width, h.height);
  let total = 0;
  for (const [x0, y0, dx, dy] of ADAM7_PASSES) {
    total += rows(
      Math.max(0, Math.ceil((h.width - x0) / dx)),
      Math.max(0, Math.ceil((h.height - y0) / dy)),
    );
  }
  return total;
}

/** zlib input is pushed in slices of this size, so one push inflates to at most ~1032 × it. */
const INFLATE_SLICE = 8192;

/**
 * Walks every chunk (bounds, CRC, order) and inflates the IDAT stream while counting, without
 * keeping the output: refused as soon as it exceeds what the IHDR implies, or if it falls short.
 */
function checkPngStructure(owner: string, b: Uint8Array, h: PngHeader): void {
  const idat: Uint8Array[] = [];
  let paletteEntries = 0;
  let off = 8;
  let sawIend = false;
  while (!sawIend) {
    if (off + 12 > b.length) {
      throw new ImageDecodeError(
        "truncated",
        `${owner}: the PNG is truncated: it ends at byte ${b.length} without an IEND chunk`,
      );
    }
    const length = u32(b, off);
    const type = String.fromCharCode(...b.subarray(off + 4, off + 8));
    if (!/^[A-Za-z]{4}$/.test(type) || length > 0x7fffffff) {
      throw new ImageDecodeError(
        "corrupt",
        `${owner}: corrupt PNG: invalid chunk header at byte ${off} (type bytes ` +
          `${hex(b.subarray(off + 4), 4)}, length ${length})`,
      );
    }
    const end = off + 8 + length;
    if (end + 4 > b.length) {
      throw new ImageDecodeError(
        "truncated",
        `${owner}: the PNG is truncated: chunk ${type} at byte ${off} declares ${length} bytes ` +
          `but the file ends at byte ${b.length}`,
      );
    }
    if (crc32(b, off + 4, end) !== u32(b, end)) {
      throw new ImageDecodeError(
        "corrupt",
        `${owner}: corrupt PNG: bad CRC in chunk ${type} at byte ${off}`,
      );
    }
    if (type === "IHDR" && off !== 8) {
      throw new ImageDecodeError("corrupt", `${owner}: corrupt PNG: a second IHDR at byte ${off}`);
    } else if (type === "PLTE") {
      if (length % 3 !== 0 || length === 0 || length > 768) {
        throw new ImageDecodeError(
          "corrupt",
          `${owner}: corrupt PNG: PLTE of ${length} bytes (must be 3 × 1..256)`,
        );
      }
      paletteEntries = length / 3;
    } else if (type === "IDAT") {
      if (h.colorType === 3 && paletteEntries === 0) {
        throw new ImageDecodeError(
          "corrupt",
          `${owner}: corrupt PNG: a palette image (colour type 3) without a PLTE chunk before its ` +
            `image data`,
        );
      }
      idat.push(b.subarray(off + 8, end));
    } else if (type === "IEND") {
      sawIend = true;
    }
    off = end + 4;
  }
  if (idat.length === 0) {
    throw new ImageDecodeError("corrupt", `${owner}: corrupt PNG: no IDAT chunk (no image data)`);
  }
  const expected = pngRawSize(h);
  let produced = 0;
  const inflater = new Unzlib((chunk) => {
    produced += chunk.length;
    if (produced > expected) {
      throw new ImageDecodeError(
        "limit",
        `${owner}: the PNG's image data inflates to more than the ${expected} bytes its IHDR ` +
          `(${h.width}×${h.height}) implies: corrupt, or a decompression bomb; refused after ` +
          `${produced} bytes`,
      );
    }
  });
  try {
    for (const chunk of idat) {
      for (let i = 0; i < chunk.length; i += INFLATE_SLICE) {
        inflater.push(chunk.subarray(i, i + INFLATE_SLICE), false);
      }
    }
    inflater.push(new Uint8Array(0), true);
  } catch (e) {
    if (e instanceof ImageDecodeError) throw e;
    throw new ImageDecodeError(
      "corrupt",
      `${owner}: corrupt PNG: the zlib stream of its IDAT chunks does not inflate ` +
        `(${e instanceof Error ? e.message : String(e)})`,
      { cause: e },
    );
  }
  if (produced < expected) {
    throw new ImageDecodeError(
      "truncated",
      `${owner}: the PNG's image data is truncated: it inflates to ${produced} bytes, the IHDR ` +
        `(${h.width}×${h.height}) needs ${expected}`,
    );
  }
}

/** Sample `x` of a row of packed samples of `depth` < 8 bits starting at byte `row`. */
function packed(data: ArrayLike<number>, row: number, x: number, depth: number): number {
  const bit = x * depth;
  const byte = data[row + (bit >> 3)] ?? 0;
  return (byte >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
}

function decodePng(owner: string, b: Uint8Array, h: PngHeader): RgbImage {
  if (h.interlace === 1 && h.depth < 8) {
    // fast-png 8.0.0 de-interlaces with whole bytes per pixel, which is wrong below 8 bits.
    throw new ImageDecodeError(
      "unsupported",
      `${owner}: interlaced (Adam7) PNGs of bit depth ${h.depth} are not supported; save the ` +
        `image without interlacing or with 8-bit samples`,
    );
  }
  checkPngStructure(owner, b, h);
  let png;
  try {
    png = decodePngData(b, { checkCrc: false });
  } catch (e) {
    throw new ImageDecodeError(
      "corrupt",
      `${owner}: corrupt PNG (fast-png: ${e instanceof Error ? e.message : String(e)})`,
      { cause: e },
    );
  }
  const { width, height } = h;
  const out = createImage(width, height);
  const dst = out.data;
  const src = png.data;
  const channels = PNG_COLOR_TYPES[h.colorType]?.channels ?? 0;
  const n = width * height;
  if (h.colorType === 3) {
    const palette = png.palette ?? [];
    const rowBytes = Math.ceil((width * h.depth) / 8);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const index = h.depth === 8
          ? src[y * width + x] ?? 0
          : packed(src, y * rowBytes, x, h.depth);
        const color = palette[index];
        if (color === undefined) {
          throw new ImageDecodeError(
            "corrupt",
            `${owner}: corrupt PNG: pixel (${x}, ${y}) uses palette index ${index} but the PLTE ` +
              `has ${palette.length} entries`,
          );
        }
        const o = 3 * (y * width + x);
        dst[o] = color[0] ?? 0;
        dst[o + 1] = color[1] ?? 0;
        dst[o + 2] = color[2] ?? 0;
      }
    }
  } else if (h.depth < 8) {
    // gray of 1, 2 or 4 bits, scaled as PIL does: 255 / (2^depth - 1) = 255, 85, 17.
    const scale = 255 / ((1 << h.depth) - 1);
    const rowBytes = Math.ceil((width * h.depth) / 8);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const v = packed(src, y * rowBytes, x, h.depth) * scale;
        const o = 3 * (y * width + x);
        dst[o] = dst[o + 1] = dst[o + 2] = v;
      }
    }
  } else {
    const shift = h.depth === 16 ? 8 : 0;
    for (let p = 0; p < n; p++) {
      const i = p * channels;
      const o = 3 * p;
      if (channels <= 2) {
        dst[o] = dst[o + 1] = dst[o + 2] = (src[i] ?? 0) >> shift;
      } else {
        dst[o] = (src[i] ?? 0) >> shift;
        dst[o + 1] = (src[i + 1] ?? 0) >> shift;
        dst[o + 2] = (src[i + 2] ?? 0) >> shift;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// JPEG

interface JpegFrame {
  readonly width: number;
  readonly height: number;
  readonly precision: number;
  readonly components: number;
  readonly marker: number;
}

/** SOF markers: C0..CF except DHT (C4), JPG (C8) and DAC (CC). */
function isSof(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 &&
    marker !== 0xcc;
}

/**
 * Walks the JPEG's segments from SOI. With `untilFrame`, stops at the frame header (SOFn) and
 * returns it; otherwise checks the whole structure up to EOI (segment lengths inside the file, one
 * frame before the first scan, at most {@link MAX_JPEG_SCANS} scans), calling `onFrame` as soon as
 * the frame header is read so that the pixel limit is applied before anything else.
 */
function walkJpeg(
  owner: string,
  b: Uint8Array,
  onFrame: (frame: JpegFrame) => void,
  untilFrame: boolean,
): JpegFrame {
  const n = b.length;
  const truncated = (where: string) =>
    new ImageDecodeError(
      "truncated",
      `${owner}: the JPEG is truncated: it ends at byte ${n} ${where} (no EOI marker)`,
    );
  let frame: JpegFrame | undefined;
  let scans = 0;
  let i = 2;
  for (;;) {
    // Find the next marker; bytes before it are skipped, as libjpeg does ("extraneous bytes").
    const ff = b.indexOf(0xff, i);
    if (ff < 0) throw truncated(frame === undefined ? "before its frame header" : "");
    i = ff;
    while (i < n && b[i] === 0xff) i++;
    if (i >= n) throw truncated("inside a marker");
    const marker = b[i++] as number;
    if (marker === 0xd9) break; // EOI
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // TEM, RSTn: no length
    if (marker === 0x00 || marker === 0xd8) {
      throw new ImageDecodeError(
        "corrupt",
        `${owner}: corrupt JPEG: unexpected marker ff ${hex(b.subarray(i - 1), 1)} at byte ` +
          `${i - 2}`,
      );
    }
    if (i + 2 > n) throw truncated("inside a segment length");
    const length = u16(b, i);
    if (length < 2) {
      throw new ImageDecodeError(
        "corrupt",
        `${owner}: corrupt JPEG: segment ff ${marker.toString(16)} at byte ${i - 2} has length ` +
          `${length} (< 2)`,
      );
    }
    if (i + length > n) throw truncated(`inside segment ff ${marker.toString(16)}`);
    if (isSof(marker)) {
      if (frame !== undefined) {
        throw new ImageDecodeError(
          "unsupported",
          `${owner}: JPEGs with more than one frame (hierarchical) are not supported`,
        );
      }
      if (length < 8) {
        throw new ImageDecodeError(
          "corrupt",
          `${owner}: corrupt JPEG: frame header of ${length} bytes (< 8)`,
        );
      }
      frame = {
        marker,
        precision: b[i + 2] as number,
        height: u16(b, i + 3),
        width: u16(b, i + 5),
        components: b[i + 7] as number,
      };
      onFrame(frame);
      if (untilFrame) return frame;
    } else if (marker === 0xda) {
      if (frame === undefined) {
        throw new ImageDecodeError(
          "corrupt",
          `${owner}: corrupt JPEG: a scan (SOS) at byte ${i - 2} before any frame header (SOFn)`,
        );
      }
      if (++scans > MAX_JPEG_SCANS) {
        throw new ImageDecodeError(
          "limit",
          `${owner}: the JPEG has more than ${MAX_JPEG_SCANS} scans; refused (a progressive JPEG ` +
            `has about ten, thousands make decoding take minutes); re-encode it as baseline`,
        );
      }
      i += length;
      // Skip the entropy-coded data: up to a marker that is neither stuffing (ff 00) nor RSTn.
      for (;;) {
        const f = b.indexOf(0xff, i);
        if (f < 0 || f + 1 >= n) throw truncated("inside scan data");
        const next = b[f + 1] as number;
        if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) {
          i = f + 2;
        } else if (next === 0xff) {
          i = f + 1;
        } else {
          i = f;
          break;
        }
      }
      continue;
    }
    i += length;
  }
  if (frame === undefined) {
    throw new ImageDecodeError("corrupt", `${owner}: corrupt JPEG: no frame header (SOFn)`);
  }
  if (scans === 0) {
    throw new ImageDecodeError("corrupt", `${owner}: corrupt JPEG: no scan (SOS), no image data`);
  }
  return frame;
}

function checkJpegFrame(owner: string, frame: JpegFrame, maxPixels: number): void {
  if (frame.width === 0 || frame.height === 0) {
    throw new ImageDecodeError(
      frame.height === 0 ? "unsupported" : "corrupt",
      `${owner}: the JPEG frame header declares ${frame.width}×${frame.height}` +
        (frame.height === 0 ? " (a height set later by a DNL marker is not supported)" : ""),
    );
  }
  checkPixels(owner, "JPEG frame header (SOFn)", frame.width, frame.height, maxPixels);
  if (frame.marker !== 0xc0 && frame.marker !== 0xc1 && frame.marker !== 0xc2) {
    throw new ImageDecodeError(
      "unsupported",
      `${owner}: JPEG process SOF${frame.marker - 0xc0} (lossless, hierarchical or arithmetic ` +
        `coded) is not supported; re-encode the image as baseline or progressive JPEG, or PNG`,
    );
  }
  if (frame.precision !== 8) {
    throw new ImageDecodeError(
      "unsupported",
      `${owner}: ${frame.precision}-bit JPEG samples are not supported (only 8-bit)`,
    );
  }
  if (frame.components !== 1 && frame.components !== 3 && frame.components !== 4) {
    throw new ImageDecodeError(
      "unsupported",
      `${owner}: JPEGs with ${frame.components} components are not supported (1, 3 or 4)`,
    );
  }
}

/** Bytes jpeg-js may allocate per declared pixel (blocks, component lines, output; padding). */
const JPEG_BYTES_PER_PIXEL = 40;

function decodeJpeg(owner: string, b: Uint8Array, maxPixels: number): RgbImage {
  const frame = walkJpeg(owner, b, (f) => checkJpegFrame(owner, f, maxPixels), false);
  const pixels = frame.width * frame.height;
  let decoded;
  try {
    decoded = jpeg.decode(b, {
      useTArray: true,
      formatAsRGBA: false,
      maxResolutionInMP: maxPixels / 1e6,
      maxMemoryUsageInMB: Math.ceil((pixels * JPEG_BYTES_PER_PIXEL) / 2 ** 20) + 32,
    });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new ImageDecodeError(
      /limit exceeded/.test(message)
        ? "limit"
        : /unsupported/i.test(message)
        ? "unsupported"
        : "corrupt",
      `${owner}: corrupt or unsupported JPEG (jpeg-js: ${message})`,
      { cause: e },
    );
  }
  if (
    decoded.width !== frame.width || decoded.height !== frame.height ||
    decoded.data.length !== pixels * 3
  ) {
    throw new ImageDecodeError(
      "corrupt",
      `${owner}: corrupt JPEG: decoded ${decoded.width}×${decoded.height} with ` +
        `${decoded.data.length} bytes, the frame header says ${frame.width}×${frame.height}`,
    );
  }
  const data = decoded.data instanceof Uint8Array && decoded.data.constructor === Uint8Array
    ? decoded.data
    : new Uint8Array(decoded.data);
  return createImage(frame.width, frame.height, { data });
}

// ---------------------------------------------------------------------------------------------
// Public API

function checkBytes(owner: string, bytes: unknown): Uint8Array {
  if (!(bytes instanceof Uint8Array)) {
    throw new TypeError(
      `${owner}: bytes must be a Uint8Array, got ${
        bytes === null ? "null" : typeof bytes === "object" ? bytes.constructor?.name : typeof bytes
      }`,
    );
  }
  return bytes;
}

/**
 * Reads the format and dimensions of a PNG (IHDR) or JPEG (SOFn) without decoding any pixel or
 * applying any limit. Throws {@link ImageDecodeError} when the header is missing or malformed.
 *
 * @example Usage
 * ```ts
 * import { createImage, encodePng, readImageHeader } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const header = readImageHeader(encodePng(createImage(5, 3)));
 * assert.deepEqual(header, { format: "png", width: 5, height: 3 });
 * ```
 */
export function readImageHeader(bytes: Uint8Array): ImageHeader {
  const owner = "readImageHeader";
  const b = checkBytes(owner, bytes);
  const format = sniffImageFormat(b);
  if (format === "png") {
    const h = parsePngHeader(owner, b);
    return { format, width: h.width, height: h.height };
  }
  if (format === "jpeg") {
    const f = walkJpeg(owner, b, () => {}, true);
    return { format, width: f.width, height: f.height };
  }
  throw notAnImage(owner, b);
}

/**
 * Decodes a PNG or JPEG (found by its magic bytes) into an 8-bit {@link RgbImage}, as PIL's
 * `Image.open(...).convert("RGB")` would (see the module notes for colour and bit depth). Limits
 * (defaults {@link DEFAULT_MAX_BYTES}, {@link DEFAULT_MAX_PIXELS}) are checked before any decoding:
 * the byte count first, then the dimensions in the header, so an oversized or bomb file is refused
 * without allocating its pixels. Every refusal is an {@link ImageDecodeError} naming what failed,
 * the value, and the fix.
 *
 * @example Usage
 * ```ts
 * import { createImage, decodeImage, encodePng } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const image = createImage(2, 2, { fill: [10, 20, 30] });
 * const back = decodeImage(encodePng(image));
 * assert.deepEqual(back, image);
 * assert.throws(() => decodeImage(encodePng(image), { maxPixels: 3 }), /more than maxPixels = 3/);
 * ```
 */
export function decodeImage(bytes: Uint8Array, limits?: DecodeLimits): RgbImage {
  const owner = "decodeImage";
  const b = checkBytes(owner, bytes);
  const { maxBytes, maxPixels } = resolveDecodeLimits(owner, limits);
  if (b.length > maxBytes) {
    throw new ImageDecodeError(
      "limit",
      `${owner}: the data is ${b.length} bytes, more than maxBytes = ${maxBytes}; refused ` +
        `before reading it. Compress or downscale the image, or raise limits.maxBytes if you ` +
        `trust its source`,
    );
  }
  const format = sniffImageFormat(b);
  if (format === "png") {
    const h = parsePngHeader(owner, b);
    checkPixels(owner, "PNG header (IHDR)", h.width, h.height, maxPixels);
    return decodePng(owner, b, h);
  }
  if (format === "jpeg") return decodeJpeg(owner, b, maxPixels);
  throw notAnImage(owner, b);
}

/**
 * Encodes an {@link RgbImage} as an 8-bit RGB PNG (no alpha, not interlaced). Lossless:
 * `decodeImage(encodePng(image))` equals `image`.
 *
 * @example Usage
 * ```ts
 * import { createImage, encodePng } from "@rlvr/image";
 * import assert from "node:assert/strict";
 * const png = encodePng(createImage(3, 2, { fill: [255, 0, 0] }));
 * assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
 * ```
 */
export function encodePng(image: RgbImage): Uint8Array {
  const { width, height, data } = checkImage("encodePng", "image", image);
  return encodePngData({ width, height, data, channels: 3, depth: 8 });
}
