import assert from "node:assert/strict";
import fc from "fast-check";
import jpeg from "jpeg-js";
import { encodePng, ImageDecodeError } from "./codec.ts";
import { bytesToDataUrl, loadImage, parseDataUrl, toDataUrl } from "./data_url.ts";
import { createImage } from "./image.ts";

const imageArb = fc.record({
  width: fc.integer({ min: 1, max: 20 }),
  height: fc.integer({ min: 1, max: 20 }),
}).chain(({ width, height }) =>
  fc.uint8Array({ minLength: width * height * 3, maxLength: width * height * 3 }).map((data) =>
    createImage(width, height, { data })
  )
);

async function refusal(f: () => Promise<unknown> | unknown): Promise<Error> {
  try {
    await f();
  } catch (e) {
    assert.ok(e instanceof Error);
    return e;
  }
  assert.fail("expected an error");
}

Deno.test("toDataUrl → parseDataUrl → decode, and loadImage of the URL, give the image back", async () => {
  await fc.assert(
    fc.asyncProperty(imageArb, async (image) => {
      const url = toDataUrl(image);
      assert.match(url, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
      const { mime, bytes } = parseDataUrl(url);
      assert.equal(mime, "image/png");
      assert.deepEqual(bytes, encodePng(image));
      assert.deepEqual(await loadImage(url), image);
    }),
    { numRuns: 40 },
  );
});

Deno.test("parseDataUrl: image/jpeg, image/jpg (read as image/jpeg), any case, with parameters", () => {
  const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
  const b64 = btoa(String.fromCharCode(...bytes));
  assert.deepEqual(parseDataUrl(`data:image/jpeg;base64,${b64}`), { mime: "image/jpeg", bytes });
  assert.deepEqual(parseDataUrl(`data:image/jpg;base64,${b64}`), { mime: "image/jpeg", bytes });
  assert.deepEqual(parseDataUrl(`DATA:IMAGE/PNG;BASE64,${b64}`), { mime: "image/png", bytes });
  assert.deepEqual(parseDataUrl(`data:image/png;name=a.png;base64,${b64}`), {
    mime: "image/png",
    bytes,
  });
});

Deno.test("parseDataUrl: anything but a base64 PNG/JPEG data URL is refused with what was expected", async () => {
  for (
    const url of [
      "data:image/gif;base64,R0lGODlh",
      "data:image/png,rawbytes",
      "data:text/plain;base64,aGVsbG8=",
      "https://example.com/cat.png",
      "",
    ]
  ) {
    const e = await refusal(() => parseDataUrl(url));
    assert.ok(e instanceof ImageDecodeError && e.reason === "format", e.message);
    assert.match(e.message, /only base64 PNG or JPEG data URLs are accepted/);
  }
  const bad = await refusal(() => parseDataUrl("data:image/png;base64,iVBO%%%"));
  assert.ok(bad instanceof ImageDecodeError && bad.reason === "corrupt");
  assert.match(bad.message, /not valid base64/);
  assert.throws(() => parseDataUrl(42 as unknown as string), /url must be a string, got number/);
});

Deno.test("parseDataUrl: the size limit is checked on the base64 length, before decoding", () => {
  const url = toDataUrl(createImage(10, 10));
  const size = parseDataUrl(url).bytes.length;
  assert.equal(parseDataUrl(url, { maxBytes: size }).bytes.length, size);
  assert.throws(() => parseDataUrl(url, { maxBytes: size - 1 }), (e: unknown) => {
    assert.ok(e instanceof ImageDecodeError && e.reason === "limit");
    assert.match(
      e.message,
      new RegExp(`carries about ${size} bytes .* more than maxBytes = ${size - 1}`),
    );
    return true;
  });
  // A payload that is not even base64 but is too long is refused for its length (never decoded).
  const huge = `data:image/png;base64,${"%".repeat(4000)}`;
  assert.throws(() => parseDataUrl(huge, { maxBytes: 1000 }), /more than maxBytes = 1000/);
});

Deno.test("loadImage: an RgbImage (checked), bytes, a JPEG data URL, a file path and a file: URL", async () => {
  const image = createImage(5, 4, { fill: [9, 8, 7] });
  assert.equal(await loadImage(image), image);
  assert.deepEqual(await loadImage(encodePng(image)), image);
  const rgba = new Uint8Array(5 * 4 * 4).fill(128);
  const jpg = new Uint8Array(jpeg.encode({ width: 5, height: 4, data: rgba }, 90).data);
  const fromJpegUrl = await loadImage(
    `data:image/jpeg;base64,${btoa(String.fromCharCode(...jpg))}`,
  );
  assert.equal(fromJpegUrl.width, 5);
  assert.ok(fromJpegUrl.data.every((v) => Math.abs(v - 128) <= 2));
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/image.png`;
    await Deno.writeFile(path, encodePng(image));
    assert.deepEqual(await loadImage(path), image);
    assert.deepEqual(await loadImage(new URL(`file://${path}`).href), image);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadImage: bad sources are refused with what to pass instead", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/big.png`;
    const bytes = encodePng(createImage(30, 30));
    await Deno.writeFile(path, bytes);
    const big = await refusal(() => loadImage(path, { maxBytes: 50 }));
    assert.ok(big instanceof ImageDecodeError && big.reason === "limit");
    assert.match(
      big.message,
      new RegExp(`is ${bytes.length} bytes, more than maxBytes = 50; refused before reading it`),
    );
    assert.match(
      (await refusal(() => loadImage(`${dir}/missing.png`))).message,
      /cannot stat the image file .*missing\.png.*pass an existing file path/,
    );
    assert.match((await refusal(() => loadImage(dir))).message, /is not a regular file/);
    await Deno.writeTextFile(`${dir}/text.png`, "hello");
    const text = await refusal(() => loadImage(`${dir}/text.png`));
    assert.ok(text instanceof ImageDecodeError && text.reason === "format");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const url = await refusal(() => loadImage("https://example.com/cat.png"));
  assert.match(url.message, /is a URL; loadImage reads data URLs and local files only/);
  assert.match((await refusal(() => loadImage(""))).message, /empty string/);
  assert.match(
    (await refusal(() => loadImage(42 as unknown as string))).message,
    /source must be an RgbImage, a Uint8Array/,
  );
  assert.match(
    (await refusal(() => loadImage({ width: 2, height: 2, data: new Uint8Array(3) }))).message,
    /loadImage: source must be an RgbImage \{width, height, data/,
  );
  assert.match(
    (await refusal(() => loadImage("data:image/png;base64,AAAA", { maxPixels: 0 }))).message,
    /limits\.maxPixels must be an integer in \[1, 67108864\].*got 0/,
  );
});

Deno.test("bytesToDataUrl: PNG and JPEG bytes by their signature, the same bytes back; others and oversize refused", async () => {
  await fc.assert(
    fc.asyncProperty(imageArb, async (image) => {
      const png = encodePng(image);
      const url = bytesToDataUrl(png);
      assert.ok(url.startsWith("data:image/png;base64,"));
      assert.deepEqual(parseDataUrl(url).bytes, png);
      assert.deepEqual(await loadImage(url), image);
    }),
    { numRuns: 25 },
  );
  const rgba = new Uint8Array(3 * 2 * 4).fill(77);
  const jpg = new Uint8Array(jpeg.encode({ width: 3, height: 2, data: rgba }, 90).data);
  const url = bytesToDataUrl(jpg);
  assert.ok(url.startsWith("data:image/jpeg;base64,"));
  assert.deepEqual(parseDataUrl(url), { mime: "image/jpeg", bytes: jpg });
  const gif = new TextEncoder().encode("GIF89a");
  const e = await refusal(() => bytesToDataUrl(gif));
  assert.ok(e instanceof ImageDecodeError && e.reason === "format", e.message);
  assert.match(e.message, /6 bytes starting 47 49 46 38 are neither PNG nor JPEG/);
  const big = await refusal(() => bytesToDataUrl(encodePng(createImage(8, 8)), { maxBytes: 10 }));
  assert.ok(big instanceof ImageDecodeError && big.reason === "limit", big.message);
});
