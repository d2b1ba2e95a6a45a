import assert from "node:assert/strict";
import fc from "fast-check";
import { createImage, type RgbImage } from "./image.ts";
import { resizeBicubic } from "./resize.ts";

/**
 * The obvious float64 antialiased bicubic (a = -0.5): output pixel i of a pass covers input j with
 * weight cubic((j + 0.5 - (i + 0.5) * in / out) / s), s = max(in / out, 1), normalised to sum 1;
 * horizontal pass, then vertical, then rounded and clamped to 0..255. With `clampFirstPass`, the
 * horizontal pass is clamped to [0, 255] before the vertical one, as Pillow's 8-bit storage of it
 * does (without Pillow's rounding to integers); without, it stays as is, as in torch. Returns the
 * final values unrounded and the horizontal pass's values before clamping.
 */
function referenceResize(
  image: RgbImage,
  outW: number,
  outH: number,
  clampFirstPass: boolean,
): { out: Float64Array; mid: Float64Array; rowWeights: number[][] } {
  const cubic = (x: number) => {
    x = Math.abs(x);
    if (x < 1) return 1.5 * x ** 3 - 2.5 * x ** 2 + 1;
    if (x < 2) return -0.5 * x ** 3 + 2.5 * x ** 2 - 4 * x + 2;
    return 0;
  };
  const weights = (inSize: number, outSize: number) => {
    const scale = inSize / outSize;
    const s = Math.max(scale, 1);
    const rows: number[][] = [];
    for (let i = 0; i < outSize; i++) {
      const center = (i + 0.5) * scale;
      const w = Array.from({ length: inSize }, (_, j) => cubic((j + 0.5 - center) / s));
      const sum = w.reduce((a, b) => a + b, 0);
      rows.push(w.map((v) => v / sum));
    }
    return rows;
  };
  const { width: w, height: h, data } = image;
  const wx = weights(w, outW);
  const wy = weights(h, outH);
  const mid = new Float64Array(outW * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < outW; x++) {
      for (let c = 0; c < 3; c++) {
        let sum = 0;
        for (let j = 0; j < w; j++) sum += wx[x]![j]! * data[3 * (y * w + j) + c]!;
        mid[3 * (y * outW + x) + c] = sum;
      }
    }
  }
  const pass = clampFirstPass ? mid.map((v) => Math.min(255, Math.max(0, v))) : mid;
  const out = new Float64Array(outW * outH * 3);
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      for (let c = 0; c < 3; c++) {
        let sum = 0;
        for (let j = 0; j < h; j++) sum += wy[y]![j]! * pass[3 * (j * outW + x) + c]!;
        out[3 * (y * outW + x) + c] = sum;
      }
    }
  }
  return { out, mid, rowWeights: wy };
}

/**
 * Whether output value `i` (of an `outW`-wide result) is fed only by horizontal-pass values inside
 * [0, 255], so that Pillow's clamping of that pass cannot have changed it.
 */
function noOvershoot(
  ref: { mid: Float64Array; rowWeights: number[][] },
  outW: number,
  i: number,
): boolean {
  const c = i % 3;
  const x = Math.floor(i / 3) % outW;
  const y = Math.floor(i / 3 / outW);
  return ref.rowWeights[y]!.every((w, j) => {
    const v = ref.mid[3 * (j * outW + x) + c]!;
    return w === 0 || (v >= 0 && v <= 255);
  });
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    max = Math.max(max, Math.abs(a[i]! - Math.min(255, Math.max(0, Math.round(b[i]!)))));
  }
  return max;
}

const imageArb = (maxSide: number) =>
  fc.record({
    width: fc.integer({ min: 1, max: maxSide }),
    height: fc.integer({ min: 1, max: maxSide }),
  })
    .chain(({ width, height }) =>
      fc.uint8Array({ minLength: width * height * 3, maxLength: width * height * 3 }).map((data) =>
        createImage(width, height, { data })
      )
    );

Deno.test("resizeBicubic: within one level of the float64 reference with a clamped first pass, for random images and sizes", () => {
  // Pillow (and so resizeBicubic) stores its first pass as integers: each value moves by at most
  // 0.5 (plus the 22-bit fixed-point weights' error, about 255 · taps · 2^-23), and the vertical
  // weights' absolute sum is below 1.3 for this kernel, so the value before the final rounding
  // moves by less than 0.65 and the rounded result by at most one level. (Against a reference
  // that also rounds its first pass, exact ties — common when enlarging by whole factors — can
  // round the other way in both passes, and two levels occur.)
  fc.assert(
    fc.property(
      imageArb(24),
      fc.integer({ min: 1, max: 40 }),
      fc.integer({ min: 1, max: 40 }),
      (image, outW, outH) => {
        const got = resizeBicubic(image, outW, outH);
        assert.equal(got.width, outW);
        assert.equal(got.height, outH);
        assert.ok(maxDiff(got.data, referenceResize(image, outW, outH, true).out) <= 1);
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("resizeBicubic: a flat image stays flat; the same size is an exact copy", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 30 }),
      fc.integer({ min: 1, max: 30 }),
      fc.integer({ min: 1, max: 60 }),
      fc.integer({ min: 1, max: 60 }),
      fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)),
      (w, h, outW, outH, fill) => {
        const got = resizeBicubic(createImage(w, h, { fill }), outW, outH);
        for (let i = 0; i < got.data.length; i += 3) {
          assert.deepEqual([got.data[i], got.data[i + 1], got.data[i + 2]], fill);
        }
      },
    ),
  );
  fc.assert(
    fc.property(imageArb(12), (image) => {
      const copy = resizeBicubic(image, image.width, image.height);
      assert.deepEqual(copy, image);
      assert.notEqual(copy.data, image.data);
    }),
  );
});

Deno.test("resizeBicubic: one dimension changing leaves the other untouched (a row image stays per-row)", () => {
  // Only the horizontal pass runs: each output row depends on its input row alone.
  const image = createImage(9, 3);
  for (let x = 0; x < 9; x++) image.data.set([x * 20, 0, 0], 3 * (1 * 9 + x));
  const got = resizeBicubic(image, 4, 3);
  assert.ok(got.data.subarray(0, 12).every((v) => v === 0));
  assert.ok(got.data.subarray(24).every((v) => v === 0));
  assert.ok(got.data.subarray(12, 24).some((v) => v > 0));
});

interface FixtureCase {
  formula: "ramp" | "checker";
  width: number;
  height: number;
  outWidth: number;
  outHeight: number;
  input: string;
  torch: string;
  pil: string;
}

const FORMULAS = {
  ramp: (c: number, y: number, x: number) => (x * 73 + y * 151 + c * 89 + ((x ^ y) & 7) * 29) & 255,
  checker: (c: number, y: number, x: number) =>
    ((Math.floor(x / 3) + Math.floor(y / 2) + c) % 2) * 255,
};

function fromBase64(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
}

Deno.test("resizeBicubic: equals Pillow's Image.resize(BICUBIC) and is within one level of torch's antialiased bicubic wherever the first pass stays in 0..255 (testdata/resize_fixture.json)", async () => {
  const fixture = JSON.parse(
    await Deno.readTextFile(new URL("./testdata/resize_fixture.json", import.meta.url)),
  ) as { cases: FixtureCase[] };
  assert.equal(fixture.cases.length, 6);
  const worst: string[] = [];
  for (const k of fixture.cases) {
    const label = `${k.formula} ${k.width}×${k.height} → ${k.outWidth}×${k.outHeight}`;
    const image = createImage(k.width, k.height);
    for (let y = 0; y < k.height; y++) {
      for (let x = 0; x < k.width; x++) {
        for (let c = 0; c < 3; c++) {
          image.data[3 * (y * k.width + x) + c] = FORMULAS[k.formula](c, y, x);
        }
      }
    }
    assert.deepEqual(image.data, fromBase64(k.input), `${label}: the input formula drifted`);
    const got = resizeBicubic(image, k.outWidth, k.outHeight);
    // Pillow: the same fixed-point arithmetic, so every byte is equal.
    assert.deepEqual(got.data, fromBase64(k.pil), `${label}: differs from Pillow`);
    // torch (float32, first pass kept in float, rounded and clamped at the end) is the float
    // reference without the 8-bit first pass, to within float32 rounding.
    const torch = fromBase64(k.torch);
    const ref = referenceResize(image, k.outWidth, k.outHeight, false);
    assert.ok(maxDiff(torch, ref.out) <= 1, `${label}: torch is not the float reference`);
    // Pillow rounds the first pass to integers (moving a value by at most 0.5 · Σ|w| < 0.65 of a
    // level) and clamps it to 0..255. Where nothing was clamped the two round to values at most
    // one level apart; where the first pass overshot (hard edges, the cubic's negative lobes),
    // Pillow and torch differ by more, and Pillow is the one the HF processors use.
    let max = 0;
    let maxUnclamped = 0;
    let over1 = 0;
    for (let i = 0; i < got.data.length; i++) {
      const d = Math.abs(got.data[i]! - torch[i]!);
      max = Math.max(max, d);
      if (noOvershoot(ref, k.outWidth, i)) maxUnclamped = Math.max(maxUnclamped, d);
      else if (d > 1) over1++;
    }
    assert.ok(maxUnclamped <= 1, `${label}: ${maxUnclamped} levels from torch with no clamping`);
    worst.push(`${label}: max ${max}, max unclamped ${maxUnclamped}, ${over1} values > 1`);
  }
  // What the fixture shows (also in the package README): 1 level where nothing is clamped, and
  // up to 15 levels next to clamped overshoots. Pinned so that a change of the fixture is noticed.
  assert.deepEqual(worst, EXPECTED_TORCH_DIFFERENCES);
});

Deno.test("resizeBicubic: bad arguments name the field", () => {
  const image = createImage(2, 2);
  assert.throws(() => resizeBicubic(image, 0, 2), /width must be an integer >= 1, got 0/);
  assert.throws(() => resizeBicubic(image, 2, 1.5), /height must be an integer >= 1, got 1.5/);
  assert.throws(
    () => resizeBicubic({ width: 2, height: 2, data: new Uint8Array(5) }, 1, 1),
    /resizeBicubic: image must be an RgbImage/,
  );
});

/** Largest |resizeBicubic − torch| per fixture case, in 8-bit levels. */
const EXPECTED_TORCH_DIFFERENCES = [
  "ramp 23×17 → 11×29: max 1, max unclamped 1, 0 values > 1",
  "ramp 40×30 → 28×28: max 1, max unclamped 1, 0 values > 1",
  "ramp 7×5 → 56×42: max 12, max unclamped 1, 103 values > 1",
  "checker 30×20 → 13×9: max 6, max unclamped 1, 48 values > 1",
  "checker 9×7 → 25×16: max 15, max unclamped 1, 168 values > 1",
  "ramp 64×48 → 56×56: max 7, max unclamped 1, 38 values > 1",
];
