import assert from "node:assert/strict";
import fc from "fast-check";
import { createImage, type RgbImage } from "./image.ts";
import {
  OPENAI_CLIP_MEAN,
  OPENAI_CLIP_STD,
  processQwen2VLImages,
  qwen2VLImageGrid,
  qwen2VLOptionsFromConfig,
  smartResize,
} from "./qwen2vl.ts";
import { resizeBicubic } from "./resize.ts";

Deno.test("smartResize: exact values of HF's formula, worked by hand", () => {
  // Defaults: factor 28, minPixels 3136, maxPixels 1003520. Python's round ties to even.
  // 1080/28 = 38.57 → 39 → 1092; 1920/28 = 68.57 → 69 → 1932; 1092·1932 = 2109744 > 1003520, so
  // β = √(1080·1920 / 1003520) = √2.0663 = 1.43747; 1080/β/28 = 26.83 → 26 → 728;
  // 1920/β/28 = 47.70 → 47 → 1316.
  assert.deepEqual(smartResize(1080, 1920), { height: 728, width: 1316 });
  // With Qwen's released max_pixels 12845056 the rounded 1092×1932 fits.
  assert.deepEqual(smartResize(1080, 1920, { maxPixels: 12845056 }), { height: 1092, width: 1932 });
  // 70/28 = 2.5 → 2 (ties to even; Math.round would say 3) → 56; 56·56 = 3136, not < 3136.
  assert.deepEqual(smartResize(70, 70), { height: 56, width: 56 });
  // 42/28 = 1.5 → 2 → 56; 98/28 = 3.5 → 4 → 112.
  assert.deepEqual(smartResize(42, 42), { height: 56, width: 56 });
  assert.deepEqual(smartResize(98, 98), { height: 112, width: 112 });
  // 10/28 = 0.36 → 0; 0 < 3136, so β = √(3136/100) = 5.6 and ceil(10·5.6/28) = ceil(2) = 2 → 56.
  assert.deepEqual(smartResize(10, 10), { height: 56, width: 56 });
  // 500/28 = 17.86 → 18 → 504; 375/28 = 13.39 → 13 → 364; 504·364 = 183456 is within bounds.
  assert.deepEqual(smartResize(500, 375), { height: 504, width: 364 });
  // 4000/28 = 142.86 → 143 → 4004; 3000/28 = 107.14 → 107 → 2996; 11995984 > 1003520:
  // β = √(12000000/1003520) = 3.45802; 4000/β/28 = 41.31 → 41 → 1148; 3000/β/28 = 30.98 → 30 → 840.
  assert.deepEqual(smartResize(4000, 3000), { height: 1148, width: 840 });
  // 33/28 = 1.18 → 1 → 28; 17/28 = 0.61 → 1 → 28; 784 < 3136: β = √(3136/561) = 2.36432;
  // ceil(33·β/28) = ceil(2.79) = 3 → 84; ceil(17·β/28) = ceil(1.44) = 2 → 56.
  assert.deepEqual(smartResize(33, 17), { height: 84, width: 56 });
  // Aspect ratio exactly 200 is accepted: 10/28 → 0, 2000/28 = 71.43 → 71 → 1988, area 0 < 3136:
  // β = √(3136/20000) = 0.39598; ceil(10·β/28) = ceil(0.14) = 1 → 28; ceil(2000·β/28) = ceil(28.28)
  // = 29 → 812.
  assert.deepEqual(smartResize(10, 2000), { height: 28, width: 812 });
  // Floored to 0 and clamped to factor (transformers 5's max(factor, ·)), which exceeds the budget:
  // 28×5600 with maxPixels 15680: β = √10; 28/β/28 = 0.32 → 0 → 28; 5600/β/28 = 63.2 → 63 → 1764.
  assert.deepEqual(smartResize(28, 5600, { maxPixels: 15680 }), { height: 28, width: 1764 });
  // The usual Qwen2.5-VL budget min 256·28·28: 300/28 = 10.71 → 11 → 308; 400/28 = 14.29 → 14 →
  // 392; 120736 < 200704: β = √(200704/120000) = 1.29326; ceil(13.86) = 14 → 392;
  // ceil(18.48) = 19 → 532.
  assert.deepEqual(smartResize(300, 400, { minPixels: 256 * 28 * 28, maxPixels: 1280 * 28 * 28 }), {
    height: 392,
    width: 532,
  });
});

Deno.test("smartResize: HF's errors (aspect ratio over 200) and bad arguments", () => {
  assert.throws(
    () => smartResize(10, 2001),
    /absolute aspect ratio must be smaller than 200, got 200\.1 \(10×2001\)/,
  );
  assert.throws(() => smartResize(3000, 14), /aspect ratio must be smaller than 200/);
  assert.throws(() => smartResize(0, 10), /height must be an integer in \[1, 67108864\], got 0/);
  assert.throws(() => smartResize(10, 2.5), /width must be an integer/);
  assert.throws(() => smartResize(10, 10, { factor: 0 }), /factor must be an integer/);
  assert.throws(
    () => smartResize(10, 10, { minPixels: 5000, maxPixels: 4000 }),
    /minPixels \(5000\) must not exceed maxPixels \(4000\)/,
  );
  assert.throws(
    () => smartResize(10, 10, { maxPixels: -1 }),
    /maxPixels must be a number in \(0, 2\^40\]/,
  );
});

Deno.test("smartResize: multiples of factor, within [minPixels, maxPixels] when reachable, aspect kept to within one factor", () => {
  const roundHalfEven = (x: number) => {
    const f = Math.floor(x);
    return x - f === 0.5 ? (f % 2 === 0 ? f : f + 1) : Math.round(x);
  };
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 8000 }),
      fc.integer({ min: 1, max: 8000 }),
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 4_000_000 }),
      fc.integer({ min: 0, max: 20_000_000 }),
      (height, width, factor, minPixels, extra) => {
        fc.pre(Math.max(height, width) / Math.min(height, width) <= 200);
        const maxPixels = minPixels + extra;
        const { height: h, width: w } = smartResize(height, width, {
          factor,
          minPixels,
          maxPixels,
        });
        assert.ok(h % factor === 0 && w % factor === 0 && h >= factor && w >= factor);
        const rh = roundHalfEven(height / factor) * factor;
        const rw = roundHalfEven(width / factor) * factor;
        if (rh * rw >= minPixels && rh * rw <= maxPixels) {
          // In bounds after rounding: the nearest multiples.
          assert.deepEqual([h, w], [rh, rw]);
          assert.ok(Math.abs(h - height) <= factor / 2 && Math.abs(w - width) <= factor / 2);
          return;
        }
        // Scaled by one common s: each side is side·s floored (too many pixels) or ceiled (too
        // few) to a multiple of factor, so h/height and w/width agree to within factor/side.
        const clamped = h === factor || w === factor;
        if (rh * rw > maxPixels) {
          if (!clamped) assert.ok(h * w <= maxPixels, `${h}×${w} > ${maxPixels}`);
        } else {
          assert.ok(h * w >= minPixels, `${h}×${w} < ${minPixels}`);
        }
        if (!clamped) {
          const gap = Math.abs(h / height - w / width);
          assert.ok(gap <= factor / height + factor / width + 1e-9, `aspect gap ${gap}`);
        }
      },
    ),
    { numRuns: 2000 },
  );
});

/** Pixel (c, y, x) of temporal copy tt → [row, column] of pixel_values, per HF's reshape/transpose. */
function patchIndex(
  c: number,
  tt: number,
  y: number,
  x: number,
  gridW: number,
  P: number,
  m: number,
  T: number,
): [number, number] {
  const row = (Math.floor(y / (m * P)) * (gridW / m) + Math.floor(x / (m * P))) * m * m +
    (Math.floor(y / P) % m) * m + (Math.floor(x / P) % m);
  const col = ((c * T + tt) * P + (y % P)) * P + (x % P);
  return [row, col];
}

/** The float64 reference of one (already resized) image's rows, by the direct index formula. */
function referencePatches(
  image: RgbImage,
  P: number,
  m: number,
  T: number,
  mean: readonly number[],
  std: readonly number[],
): { values: Float64Array; hits: Uint8Array } {
  const patchDim = 3 * T * P * P;
  const gridW = image.width / P;
  const rows = (image.height / P) * gridW;
  const values = new Float64Array(rows * patchDim);
  const hits = new Uint8Array(rows * patchDim);
  for (let tt = 0; tt < T; tt++) {
    for (let c = 0; c < 3; c++) {
      for (let y = 0; y < image.height; y++) {
        for (let x = 0; x < image.width; x++) {
          const [row, col] = patchIndex(c, tt, y, x, gridW, P, m, T);
          const v = image.data[3 * (y * image.width + x) + c]!;
          values[row * patchDim + col] = (v / 255 - mean[c]!) / std[c]!;
          hits[row * patchDim + col]!++;
        }
      }
    }
  }
  return { values, hits };
}

function randomImage(width: number, height: number, seed: number): RgbImage {
  const image = createImage(width, height);
  let s = seed >>> 0;
  for (let i = 0; i < image.data.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    image.data[i] = s >>> 24;
  }
  return image;
}

Deno.test("processQwen2VLImages: row r, column k is the pixel the index formula puts there (random sizes and patch settings, no resize)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5 }), // patchSize
      fc.integer({ min: 1, max: 3 }), // mergeSize
      fc.integer({ min: 1, max: 3 }), // temporalPatchSize
      fc.integer({ min: 1, max: 4 }), // merge blocks down
      fc.integer({ min: 1, max: 4 }), // merge blocks across
      fc.integer(),
      (P, m, T, blocksH, blocksW, seed) => {
        const image = randomImage(blocksW * m * P, blocksH * m * P, seed);
        const out = processQwen2VLImages([image], {
          patchSize: P,
          mergeSize: m,
          temporalPatchSize: T,
          doResize: false,
        });
        const patchDim = 3 * T * P * P;
        assert.equal(out.patchDim, patchDim);
        assert.deepEqual(out.gridThw, [[1, blocksH * m, blocksW * m]]);
        assert.deepEqual(out.imageTokenCounts, [blocksH * blocksW]);
        const ref = referencePatches(image, P, m, T, OPENAI_CLIP_MEAN, OPENAI_CLIP_STD);
        assert.equal(out.pixelValues.length, ref.values.length);
        assert.ok(ref.hits.every((h) => h === 1), "the formula must hit every cell once");
        for (let i = 0; i < ref.values.length; i++) {
          assert.ok(Math.abs(out.pixelValues[i]! - ref.values[i]!) < 2e-6, `cell ${i}`);
        }
      },
    ),
    { numRuns: 120 },
  );
});

Deno.test("processQwen2VLImages: with the defaults, resized images follow one another (random sizes)", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.integer({ min: 1, max: 90 }), fc.integer({ min: 1, max: 90 }), fc.integer()),
        { minLength: 1, maxLength: 3 },
      ),
      (specs) => {
        fc.pre(specs.every(([w, h]) => Math.max(w, h) / Math.min(w, h) <= 200));
        const images = specs.map(([w, h, seed]) => randomImage(w, h, seed));
        const out = processQwen2VLImages(images);
        let offset = 0;
        images.forEach((image, i) => {
          const size = smartResize(image.height, image.width);
          const grid = qwen2VLImageGrid(image.height, image.width);
          assert.deepEqual(grid.resized, size);
          assert.deepEqual(out.gridThw[i], [1, size.height / 14, size.width / 14]);
          assert.deepEqual(grid.gridThw, out.gridThw[i]);
          assert.equal(out.imageTokenCounts[i], (size.height / 14) * (size.width / 14) / 4);
          assert.equal(grid.tokens, out.imageTokenCounts[i]);
          const resized = resizeBicubic(image, size.width, size.height);
          const ref = referencePatches(resized, 14, 2, 2, OPENAI_CLIP_MEAN, OPENAI_CLIP_STD);
          for (let k = 0; k < ref.values.length; k++) {
            assert.ok(Math.abs(out.pixelValues[offset + k]! - ref.values[k]!) < 2e-6);
          }
          offset += ref.values.length;
        });
        assert.equal(out.pixelValues.length, offset);
      },
    ),
    { numRuns: 25 },
  );
});

Deno.test("processQwen2VLImages: values are numpy's float32 (v · (1/255) in float64, then (x − mean) / std in float32), bit for bit", () => {
  // Printed by numpy 1.24: ((np.float64(v) * (1/255)).astype(np.float32) - mean32) / std32.
  const numpy: Record<number, [number, number, number]> = {
    0: [-1.7922625541687012, -1.7520971298217773, -1.480219841003418],
    1: [-1.777664065361023, -1.7370892763137817, -1.465999722480774],
    77: [-0.6681836247444153, -0.5964989066123962, -0.38527464866638184],
    128: [0.07633614540100098, 0.16889731585979462, 0.33994877338409424],
    254: [1.9157377481460571, 2.059875965118408, 2.1316771507263184],
    255: [1.9303361177444458, 2.0748836994171143, 2.1458969116210938],
  };
  for (const [v, want] of Object.entries(numpy)) {
    const value = Number(v);
    const out = processQwen2VLImages([createImage(28, 28, { fill: [value, value, value] })]);
    // 28×28 is below minPixels: smartResize gives 56×56, and a flat image stays flat.
    assert.deepEqual(out.gridThw, [[1, 4, 4]]);
    for (let c = 0; c < 3; c++) {
      // Column c · T · P² is channel c, temporal copy 0, patch pixel (0, 0).
      assert.equal(out.pixelValues[c * 2 * 196], want[c], `v ${v}, channel ${c}`);
      assert.equal(out.pixelValues[16 * 1176 - 1 - (2 - c) * 2 * 196], want[c]);
    }
  }
});

Deno.test("processQwen2VLImages: options and their refusals", () => {
  const image = createImage(56, 56, { fill: [255, 0, 128] });
  const custom = processQwen2VLImages([image], {
    imageMean: [0.5, 0.5, 0.5],
    imageStd: [0.5, 0.5, 0.5],
  });
  assert.equal(custom.pixelValues[0], 1);
  assert.equal(custom.pixelValues[2 * 196], -1);
  // doResize false keeps the size (no minPixels/maxPixels), and needs multiples of 28.
  const tall = createImage(28, 28 * 3); // width 28, height 84: below minPixels, kept
  assert.deepEqual(processQwen2VLImages([tall], { doResize: false }).gridThw, [[1, 6, 2]]);
  assert.deepEqual(processQwen2VLImages([tall]).gridThw, [[1, 8, 4]]); // resized to 112×56
  assert.throws(
    () => processQwen2VLImages([createImage(30, 28)], { doResize: false }),
    /sides must be multiples of patchSize · mergeSize = 28, got 28×30/,
  );
  assert.deepEqual(processQwen2VLImages([]).pixelValues.length, 0);
  assert.throws(
    () => processQwen2VLImages(image as unknown as RgbImage[]),
    /images must be an array/,
  );
  assert.throws(
    () => processQwen2VLImages([{ width: 1, height: 1, data: new Uint8Array(1) }]),
    /images\[0\] must be an RgbImage/,
  );
  assert.throws(
    () => processQwen2VLImages([image], { imageStd: [1, 0, 1] }),
    /imageStd must not contain 0/,
  );
  assert.throws(
    () => processQwen2VLImages([image], { imageMean: [1, 2] }),
    /imageMean must be 3 finite numbers/,
  );
  assert.throws(
    () => processQwen2VLImages([image], { patchSize: 0 }),
    /patchSize must be an integer/,
  );
  assert.throws(
    () => processQwen2VLImages([createImage(1, 300)]),
    /absolute aspect ratio must be smaller than 200, got 300/,
  );
});

Deno.test("qwen2VLOptionsFromConfig: Qwen2-VL's preprocessor_config.json, the size form, precedence and refusals", () => {
  const qwen2vl = {
    min_pixels: 3136,
    max_pixels: 12845056,
    patch_size: 14,
    temporal_patch_size: 2,
    merge_size: 2,
    image_mean: [0.48145466, 0.4578275, 0.40821073],
    image_std: [0.26862954, 0.26130258, 0.27577711],
    image_processor_type: "Qwen2VLImageProcessor",
    processor_class: "Qwen2VLProcessor",
  };
  assert.deepEqual(qwen2VLOptionsFromConfig(qwen2vl), {
    minPixels: 3136,
    maxPixels: 12845056,
    patchSize: 14,
    temporalPatchSize: 2,
    mergeSize: 2,
    imageMean: [0.48145466, 0.4578275, 0.40821073],
    imageStd: [0.26862954, 0.26130258, 0.27577711],
  });
  const newer = {
    size: { shortest_edge: 65536, longest_edge: 16777216 },
    patch_size: 16,
    rescale_factor: 1 / 255,
    do_resize: true,
  };
  assert.deepEqual(qwen2VLOptionsFromConfig(newer), {
    minPixels: 65536,
    maxPixels: 16777216,
    patchSize: 16,
    rescaleFactor: 1 / 255,
    doResize: true,
  });
  // min_pixels / max_pixels override size, as in transformers.
  assert.deepEqual(
    qwen2VLOptionsFromConfig({ size: { shortest_edge: 1, longest_edge: 2 }, max_pixels: 1000 }),
    { minPixels: 1, maxPixels: 1000 },
  );
  assert.deepEqual(qwen2VLOptionsFromConfig({ size: { min_pixels: 10, max_pixels: 20 } }), {
    minPixels: 10,
    maxPixels: 20,
  });
  assert.deepEqual(qwen2VLOptionsFromConfig({}), {});
  const options = qwen2VLOptionsFromConfig(qwen2vl);
  assert.deepEqual(qwen2VLImageGrid(1080, 1920, options).resized, { height: 1092, width: 1932 });
  assert.throws(
    () => qwen2VLOptionsFromConfig({ do_normalize: false }),
    /do_normalize: false is not supported/,
  );
  assert.throws(
    () => qwen2VLOptionsFromConfig({ resample: 2 }),
    /resample 2 is not supported \(only 3, bicubic\)/,
  );
  assert.throws(
    () => qwen2VLOptionsFromConfig({ patch_size: "14" }),
    /patch_size must be a number, got "14"/,
  );
  assert.throws(
    () => qwen2VLOptionsFromConfig({ image_std: [1, 2] }),
    /image_std must be 3 numbers/,
  );
  assert.throws(
    () => qwen2VLOptionsFromConfig({ merge_size: 2.5 }),
    /mergeSize must be an integer/,
  );
  assert.throws(
    () => qwen2VLOptionsFromConfig([] as unknown as Record<string, unknown>),
    /config must be the parsed/,
  );
});
