import assert from "node:assert/strict";
import fc from "fast-check";
import { encode as encodePngData, type ImageData as PngImageData } from "fast-png";
import jpeg from "jpeg-js";
import { zlibSync } from "fflate";
import {
  decodeImage,
  DEFAULT_MAX_PIXELS,
  encodePng,
  ImageDecodeError,
  MAX_JPEG_SCANS,
  readImageHeader,
  resolveDecodeLimits,
  sniffImageFormat,
} from "./codec.ts";
import { createImage, MAX_IMAGE_PIXELS, type RgbImage } from "./image.ts";

const imageArb = (maxSide: number) =>
  fc.record({
    width: fc.integer({ min: 1, max: maxSide }),
    height: fc.integer({ min: 1, max: maxSide }),
  }).chain(({ width, height }) =>
    fc.uint8Array({ minLength: width * height * 3, maxLength: width * height * 3 }).map((data) =>
      createImage(width, height, { data })
    )
  );

/** Asserts that `f` throws an ImageDecodeError with `reason` whose message matches `pattern`. */
function assertRefused(f: () => unknown, reason: string, pattern: RegExp): ImageDecodeError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ImageDecodeError, `expected an ImageDecodeError, got ${caught}`);
  assert.equal(caught.reason, reason, caught.message);
  assert.match(caught.message, pattern);
  return caught;
}

// --- hand-made PNG chunks ---------------------------------------------------------------------

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set([...type].map((ch) => ch.charCodeAt(0)), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

function ihdr(width: number, height: number, depth: number, colorType: number, interlace = 0) {
  const data = new Uint8Array(13);
  const view = new DataView(data.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  data.set([depth, colorType, 0, 0, interlace], 8);
  return chunk("IHDR", data);
}

function png(...chunks: Uint8Array[]): Uint8Array {
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ...chunks];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const IEND = chunk("IEND", new Uint8Array(0));

// --- round trips --------------------------------------------------------------------------------

Deno.test("encodePng → decodeImage is the identity on random images (and through Adam7 interlacing)", () => {
  fc.assert(
    fc.property(imageArb(40), (image) => {
      const bytes = encodePng(image);
      assert.equal(sniffImageFormat(bytes), "png");
      assert.deepEqual(readImageHeader(bytes), {
        format: "png",
        width: image.width,
        height: image.height,
      });
      assert.deepEqual(decodeImage(bytes), image);
      const interlaced = encodePngData(
        { width: image.width, height: image.height, data: image.data, channels: 3, depth: 8 },
        { interlace: "Adam7" },
      );
      assert.equal(interlaced[28], 1); // IHDR's interlace byte
      assert.deepEqual(decodeImage(interlaced), image);
    }),
    { numRuns: 60 },
  );
});

// --- colour types and bit depths ----------------------------------------------------------------

function pixelsOf(image: RgbImage): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < image.data.length; i += 3) out.push([...image.data.subarray(i, i + 3)]);
  return out;
}

function encoded(data: PngImageData): RgbImage {
  return decodeImage(encodePngData(data));
}

Deno.test("decodeImage: 16-bit PNGs keep the high byte (v >> 8), as PIL's RGB;16B unpacker does", () => {
  // RGB, 2×1: 0x1280 → 0x12, 0x80ff → 0x80, 0xfe01 → 0xfe (round(v / 257) would give 0x81 and 0xfd
  // for the second and third).
  const rgb = encoded({
    width: 2,
    height: 1,
    channels: 3,
    depth: 16,
    data: Uint16Array.from([0x1280, 0x80ff, 0xfe01, 0xffff, 0x0000, 0x00ff]),
  });
  assert.deepEqual(pixelsOf(rgb), [[0x12, 0x80, 0xfe], [0xff, 0x00, 0x00]]);
  const rgba = encoded({
    width: 1,
    height: 1,
    channels: 4,
    depth: 16,
    data: Uint16Array.from([0x1280, 0x80ff, 0xfe01, 0]),
  });
  assert.deepEqual(pixelsOf(rgba), [[0x12, 0x80, 0xfe]]);
  const gray = encoded({
    width: 2,
    height: 1,
    channels: 1,
    depth: 16,
    data: Uint16Array.from([0x1234, 0xff80]),
  });
  assert.deepEqual(pixelsOf(gray), [[0x12, 0x12, 0x12], [0xff, 0xff, 0xff]]);
  const grayAlpha = encoded({
    width: 1,
    height: 1,
    channels: 2,
    depth: 16,
    data: Uint16Array.from([0x7f01, 0x0000]),
  });
  assert.deepEqual(pixelsOf(grayAlpha), [[0x7f, 0x7f, 0x7f]]);
  // Random 16-bit RGB images: every sample is its high byte.
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer(),
      (w, h, seed) => {
        const data = new Uint16Array(w * h * 3);
        let s = seed >>> 0;
        for (let i = 0; i < data.length; i++) {
          s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
          data[i] = s >>> 16;
        }
        const got = encoded({ width: w, height: h, channels: 3, depth: 16, data });
        assert.deepEqual([...got.data], [...data].map((v) => v >> 8));
      },
    ),
    { numRuns: 30 },
  );
});

Deno.test("decodeImage: gray of 1, 2, 4 and 8 bits is scaled to 0..255 (×255, ×85, ×17, ×1) and repeated", () => {
  // 2-bit, 5 pixels in one row: 00 01 10 11 | 01 (+ 6 padding bits).
  const two = encoded({
    width: 5,
    height: 1,
    channels: 1,
    depth: 2,
    data: Uint8Array.from([0b00011011, 0b01000000]),
  });
  assert.deepEqual(pixelsOf(two).map((p) => p[0]), [0, 85, 170, 255, 85]);
  assert.ok(pixelsOf(two).every(([r, g, b]) => r === g && g === b));
  // 1-bit, 3×2 (rows padded to a byte): 101 / 010.
  const one = encoded({
    width: 3,
    height: 2,
    channels: 1,
    depth: 1,
    data: Uint8Array.from([0b10100000, 0b01000000]),
  });
  assert.deepEqual(pixelsOf(one).map((p) => p[0]), [255, 0, 255, 0, 255, 0]);
  // 4-bit: 0x0, 0xf, 0x8.
  const four = encoded({
    width: 3,
    height: 1,
    channels: 1,
    depth: 4,
    data: Uint8Array.from([0x0f, 0x80]),
  });
  assert.deepEqual(pixelsOf(four).map((p) => p[0]), [0, 255, 136]);
  const eight = encoded({
    width: 2,
    height: 1,
    channels: 1,
    depth: 8,
    data: Uint8Array.from([7, 200]),
  });
  assert.deepEqual(pixelsOf(eight), [[7, 7, 7], [200, 200, 200]]);
});

Deno.test("decodeImage: RGBA and gray+alpha drop the alpha without compositing (PIL convert('RGB'))", () => {
  const rgba = encoded({
    width: 2,
    height: 1,
    channels: 4,
    depth: 8,
    data: Uint8Array.from([10, 20, 30, 0, 40, 50, 60, 255]),
  });
  assert.deepEqual(pixelsOf(rgba), [[10, 20, 30], [40, 50, 60]]);
  const ga = encoded({
    width: 2,
    height: 1,
    channels: 2,
    depth: 8,
    data: Uint8Array.from([99, 0, 1, 128]),
  });
  assert.deepEqual(pixelsOf(ga), [[99, 99, 99], [1, 1, 1]]);
});

Deno.test("decodeImage: palette PNGs of 8 and 2 bits look their colours up (tRNS alpha dropped)", () => {
  const palette = [[255, 0, 0], [0, 255, 0], [0, 0, 255, 128], [7, 8, 9]];
  const eight = encoded({
    width: 4,
    height: 1,
    channels: 1,
    depth: 8,
    palette,
    data: Uint8Array.from([3, 2, 1, 0]),
  });
  assert.deepEqual(pixelsOf(eight), [[7, 8, 9], [0, 0, 255], [0, 255, 0], [255, 0, 0]]);
  const two = encoded({
    width: 3,
    height: 2,
    channels: 1,
    depth: 2,
    palette,
    data: Uint8Array.from([0b11100100, 0b00011000]),
  });
  assert.deepEqual(pixelsOf(two), [[7, 8, 9], [0, 0, 255], [0, 255, 0], [255, 0, 0], [0, 255, 0], [
    0,
    0,
    255,
  ]]);
  // An index past the palette is refused, not read as black.
  const bad = encodePngData({
    width: 1,
    height: 1,
    channels: 1,
    depth: 8,
    palette: [[1, 2, 3]],
    data: Uint8Array.from([5]),
  });
  assertRefused(() => decodeImage(bad), "corrupt", /palette index 5 but the PLTE has 1 entries/);
});

Deno.test("decodeImage: interlaced PNGs below 8 bits are refused as unsupported (fast-png mis-decodes them)", () => {
  const bytes = png(ihdr(4, 4, 1, 0, 1), chunk("IDAT", zlibSync(new Uint8Array(8))), IEND);
  assertRefused(
    () => decodeImage(bytes),
    "unsupported",
    /interlaced \(Adam7\) PNGs of bit depth 1/,
  );
});

// --- JPEG -----------------------------------------------------------------------------------------

function smoothImage(width: number, height: number): RgbImage {
  const image = createImage(width, height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      image.data.set(
        [
          Math.round(127.5 + 127.5 * Math.sin(x / 9)),
          Math.round((255 * y) / Math.max(1, height - 1)),
          Math.round(127.5 + 100 * Math.cos((x + y) / 13)),
        ],
        3 * (y * width + x),
      );
    }
  }
  return image;
}

function encodeJpeg(image: RgbImage, quality: number): Uint8Array {
  const rgba = new Uint8Array(image.width * image.height * 4);
  for (let p = 0; p < image.width * image.height; p++) {
    rgba.set(image.data.subarray(3 * p, 3 * p + 3), 4 * p);
    rgba[4 * p + 3] = 255;
  }
  return new Uint8Array(
    jpeg.encode({ width: image.width, height: image.height, data: rgba }, quality).data,
  );
}

Deno.test("decodeImage: a JPEG made with jpeg-js's encoder decodes within a small tolerance", () => {
  for (const [w, h] of [[64, 48], [37, 23], [1, 1], [200, 9]] as const) {
    const image = smoothImage(w, h);
    const bytes = encodeJpeg(image, 95);
    assert.equal(sniffImageFormat(bytes), "jpeg");
    assert.deepEqual(readImageHeader(bytes), { format: "jpeg", width: w, height: h });
    const got = decodeImage(bytes);
    assert.equal(got.width, w);
    assert.equal(got.height, h);
    let max = 0;
    let sum = 0;
    for (let i = 0; i < got.data.length; i++) {
      const d = Math.abs(got.data[i]! - image.data[i]!);
      max = Math.max(max, d);
      sum += d;
    }
    // Quality 95 on a smooth image: a few levels of DCT quantisation and colour conversion error.
    assert.ok(max <= 12, `${w}×${h}: max error ${max}`);
    assert.ok(sum / got.data.length <= 2, `${w}×${h}: mean error ${sum / got.data.length}`);
  }
});

Deno.test("decodeImage: Pillow-made grayscale, progressive 4:2:0 and Adobe CMYK JPEGs decode close to Pillow's own decoding (testdata/jpeg_fixture.json)", async () => {
  const fixture = JSON.parse(
    await Deno.readTextFile(new URL("./testdata/jpeg_fixture.json", import.meta.url)),
  ) as { cases: { name: string; width: number; height: number; jpeg: string; pilRgb: string }[] };
  const fromBase64 = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
  const found: Record<string, number> = {};
  for (const k of fixture.cases) {
    const got = decodeImage(fromBase64(k.jpeg));
    assert.equal(got.width, k.width);
    assert.equal(got.height, k.height);
    const want = fromBase64(k.pilRgb);
    let max = 0;
    for (let i = 0; i < want.length; i++) max = Math.max(max, Math.abs(got.data[i]! - want[i]!));
    found[k.name] = max;
  }
  // jpeg-js's IDCT and colour conversion differ from libjpeg's by a level or so; its chroma
  // upsampling is nearest-neighbour where libjpeg interpolates ("fancy upsampling"), so 4:2:0
  // images differ by more next to colour edges. Pinned, so that a change is noticed.
  assert.deepEqual(found, EXPECTED_PIL_JPEG_DIFFERENCES);
});

function jpegSegment(marker: number, payload: number[]): number[] {
  return [0xff, marker, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload];
}

function sof(
  marker: number,
  width: number,
  height: number,
  components = 1,
  precision = 8,
): number[] {
  const comps = Array.from({ length: components }, (_, i) => [i + 1, 0x11, 0]).flat();
  return jpegSegment(marker, [
    precision,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    components,
    ...comps,
  ]);
}

Deno.test("decodeImage: JPEG frame headers are checked before decoding (size, process, precision, scans)", () => {
  const soi = [0xff, 0xd8];
  const eoi = [0xff, 0xd9];
  const scan = [...jpegSegment(0xda, [1, 1, 0, 0, 63, 0]), 0x12, 0x34];
  // 65535×65535 declared: refused from the SOF0 alone (the rest is not even valid).
  const bomb = new Uint8Array([...soi, ...sof(0xc0, 65535, 65535), ...scan, ...eoi]);
  assertRefused(
    () => decodeImage(bomb),
    "limit",
    /declares 65535×65535 = 4294836225 pixels, more than maxPixels = 40000000/,
  );
  assert.deepEqual(readImageHeader(bomb), { format: "jpeg", width: 65535, height: 65535 });
  assertRefused(
    () => decodeImage(new Uint8Array([...soi, ...sof(0xc3, 8, 8), ...scan, ...eoi])),
    "unsupported",
    /JPEG process SOF3/,
  );
  assertRefused(
    () => decodeImage(new Uint8Array([...soi, ...sof(0xc0, 8, 8, 1, 12), ...scan, ...eoi])),
    "unsupported",
    /12-bit JPEG samples/,
  );
  assertRefused(
    () => decodeImage(new Uint8Array([...soi, ...sof(0xc0, 8, 0), ...scan, ...eoi])),
    "unsupported",
    /DNL marker/,
  );
  const many = Array.from({ length: MAX_JPEG_SCANS + 1 }, () => scan).flat();
  assertRefused(
    () => decodeImage(new Uint8Array([...soi, ...sof(0xc2, 8, 8), ...many, ...eoi])),
    "limit",
    /more than 256 scans/,
  );
  assertRefused(
    () => decodeImage(new Uint8Array([...soi, ...scan, ...eoi])),
    "corrupt",
    /before any frame header/,
  );
});

// --- limits and hostile input ---------------------------------------------------------------------

Deno.test("decodeImage: a PNG whose IHDR claims 100000×100000 is refused from the header, before its data is read", () => {
  // The IDAT is not zlib and its CRC is wrong: reaching it would give a 'corrupt' error, not 'limit'.
  const idat = chunk("IDAT", new Uint8Array([1, 2, 3, 4]));
  idat[idat.length - 1]! ^= 0xff;
  const bytes = png(ihdr(100000, 100000, 8, 2), idat, IEND);
  const t0 = performance.now();
  const e = assertRefused(
    () => decodeImage(bytes),
    "limit",
    /the PNG header \(IHDR\) declares 100000×100000 = 10000000000 pixels, more than maxPixels = 40000000; refused before decoding/,
  );
  assert.ok(performance.now() - t0 < 100);
  assert.match(e.message, /raise limits\.maxPixels \(at most 67108864\)/);
  // The same file with a permissive pixel limit fails on its data instead.
  const small = png(ihdr(2, 2, 8, 2), idat, IEND);
  assertRefused(() => decodeImage(small), "corrupt", /bad CRC in chunk IDAT/);
});

Deno.test("decodeImage: a decompression bomb (small IHDR, huge zlib stream) stops after one slice of inflation", () => {
  const zeros = zlibSync(new Uint8Array(40 * 1024 * 1024), { level: 9 }); // 40 MiB → ~40 KB
  const bytes = png(ihdr(100, 100, 8, 2), chunk("IDAT", zeros), IEND);
  assert.ok(bytes.length < 100_000);
  const e = assertRefused(
    () => decodeImage(bytes),
    "limit",
    /inflates to more than the 30100 bytes its IHDR \(100×100\) implies: corrupt, or a decompression bomb/,
  );
  const after = Number(/refused after (\d+) bytes/.exec(e.message)?.[1]);
  // One 8 KiB slice of input inflates to at most ~8.5 MB: far from the 40 MiB of the stream.
  assert.ok(after > 30100 && after < 9_000_000, `inflated ${after} bytes`);
  // Too little data is refused too (a short zlib stream).
  const short = png(ihdr(100, 100, 8, 2), chunk("IDAT", zlibSync(new Uint8Array(1000))), IEND);
  assertRefused(
    () => decodeImage(short),
    "truncated",
    /inflates to 1000 bytes, the IHDR \(100×100\) needs 30100/,
  );
});

Deno.test("decodeImage: maxBytes is checked first; the limits themselves are checked", () => {
  const bytes = encodePng(createImage(4, 4));
  assertRefused(
    () => decodeImage(bytes, { maxBytes: 10 }),
    "limit",
    new RegExp(`the data is ${bytes.length} bytes, more than maxBytes = 10`),
  );
  // Garbage over the limit is refused for its size, before its format is looked at.
  assertRefused(
    () => decodeImage(new Uint8Array(11), { maxBytes: 10 }),
    "limit",
    /more than maxBytes/,
  );
  assertRefused(
    () => decodeImage(bytes, { maxPixels: 15 }),
    "limit",
    /4×4 = 16 pixels, more than maxPixels = 15/,
  );
  assert.equal(decodeImage(bytes, { maxPixels: 16 }).width, 4);
  assert.throws(
    () => decodeImage(bytes, { maxPixels: MAX_IMAGE_PIXELS + 1 }),
    /limits\.maxPixels must be an integer in \[1, 67108864\]/,
  );
  assert.throws(
    () => decodeImage(bytes, { maxBytes: 0 }),
    /limits\.maxBytes must be an integer >= 1, got 0/,
  );
  assert.deepEqual(resolveDecodeLimits("x"), {
    maxBytes: 32 * 1024 * 1024,
    maxPixels: DEFAULT_MAX_PIXELS,
  });
  assert.throws(
    () => decodeImage("not bytes" as unknown as Uint8Array),
    /bytes must be a Uint8Array, got string/,
  );
});

Deno.test("decodeImage: not PNG or JPEG: the error names the first bytes and a guess", () => {
  const gif = new TextEncoder().encode("GIF89a\x01\x00\x01\x00");
  assertRefused(
    () => decodeImage(gif),
    "format",
    /not a PNG or JPEG: the first bytes are 47 49 46 38 39 61 01 00 \(10 bytes in all\), which looks like GIF/,
  );
  assertRefused(() => decodeImage(new Uint8Array(0)), "format", /empty \(0 bytes\)/);
  assertRefused(
    () => decodeImage(new TextEncoder().encode("<svg></svg>")),
    "format",
    /text\/HTML\/SVG/,
  );
  assertRefused(
    () => readImageHeader(new Uint8Array([1, 2, 3])),
    "format",
    /first bytes are 01 02 03/,
  );
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      fc.pre(sniffImageFormat(bytes) === undefined);
      assertRefused(() => decodeImage(bytes), "format", /not a PNG or JPEG|empty/);
    }),
  );
});

Deno.test("decodeImage: every truncation of a PNG and of a JPEG is refused with a clear error (never a hang or a partial image)", () => {
  const image = smoothImage(21, 13);
  for (
    const [name, bytes] of [["PNG", encodePng(image)], ["JPEG", encodeJpeg(image, 80)]] as const
  ) {
    assert.equal(decodeImage(bytes).width, 21);
    for (let n = 0; n < bytes.length; n++) {
      const cut = bytes.subarray(0, n);
      let caught: unknown;
      try {
        decodeImage(cut);
      } catch (e) {
        caught = e;
      }
      assert.ok(caught instanceof ImageDecodeError, `${name} cut at ${n}: ${caught}`);
      assert.ok(
        ["truncated", "format"].includes(caught.reason) || (name === "PNG" && n < 33),
        `${name} cut at ${n}: ${caught.reason}: ${caught.message}`,
      );
    }
  }
});

Deno.test("decodeImage: corrupted bytes give an ImageDecodeError or an image of the declared size, nothing else", () => {
  const image = smoothImage(16, 12);
  const sources = [encodePng(image), encodeJpeg(image, 75)];
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 1 }),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), {
        minLength: 1,
        maxLength: 8,
      }),
      (which, flips) => {
        const bytes = sources[which]!.slice();
        for (const [at, mask] of flips) bytes[2 + (at % (bytes.length - 2))]! ^= mask;
        try {
          const got = decodeImage(bytes);
          const header = readImageHeader(bytes);
          assert.equal(got.width, header.width);
          assert.equal(got.data.length, header.width * header.height * 3);
        } catch (e) {
          assert.ok(e instanceof ImageDecodeError, `not an ImageDecodeError: ${e}`);
        }
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("decodeImage: structural PNG errors are named (CRC, missing chunks, bad IHDR)", () => {
  const good = encodePng(createImage(3, 3));
  const flipped = good.slice();
  flipped[good.length - 20]! ^= 1; // inside the IDAT
  assertRefused(() => decodeImage(flipped), "corrupt", /bad CRC in chunk IDAT/);
  assertRefused(() => decodeImage(png(ihdr(1, 1, 8, 2), IEND)), "corrupt", /no IDAT chunk/);
  assertRefused(
    () => decodeImage(png(ihdr(1, 1, 8, 3), chunk("IDAT", zlibSync(new Uint8Array(2))), IEND)),
    "corrupt",
    /without a PLTE chunk/,
  );
  assertRefused(
    () => decodeImage(png(ihdr(1, 1, 3, 2), IEND)),
    "corrupt",
    /colour type 2 with bit depth 3/,
  );
  assertRefused(() => decodeImage(png(ihdr(0, 5, 8, 2), IEND)), "corrupt", /IHDR size 0×5/);
  assertRefused(
    () => decodeImage(png(chunk("tEXt", new Uint8Array(13)), IEND)),
    "corrupt",
    /first chunk must be a 13-byte IHDR, got "tEXt"/,
  );
  assertRefused(
    () => decodeImage(png(ihdr(1, 1, 8, 2), chunk("IDAT", zlibSync(new Uint8Array(4))))),
    "truncated",
    /without an IEND chunk/,
  );
});

/** Largest |decodeImage − Pillow| per fixture JPEG, in 8-bit levels. */
const EXPECTED_PIL_JPEG_DIFFERENCES: Record<string, number> = {
  gray: 1,
  progressive420: 21,
  cmyk: 1,
};
