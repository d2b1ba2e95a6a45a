import assert from "node:assert/strict";
import { createImage } from "@rlvr/image";
import { drawText, FONT_CHARS, GLYPH_HEIGHT, GLYPH_WIDTH, textWidth } from "./font.ts";

function bitmap(c: string, scale = 1): string {
  const image = createImage(GLYPH_WIDTH * scale + 2, GLYPH_HEIGHT * scale + 2);
  drawText(image, c, 1, 1, [255, 255, 255], { scale });
  let s = "";
  for (let i = 0; i < image.data.length; i += 3) s += image.data[i] ? "1" : "0";
  // Nothing outside the glyph cell.
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const inside = x >= 1 && y >= 1 && x <= GLYPH_WIDTH * scale && y <= GLYPH_HEIGHT * scale;
      if (!inside) assert.equal(s[y * image.width + x], "0", `${c} stays in its cell`);
    }
  }
  return s;
}

Deno.test("font: digits and letters are drawn, within their cell, and all distinct", () => {
  assert.equal(FONT_CHARS.slice(0, 36), "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ");
  const seen = new Map<string, string>();
  for (const c of FONT_CHARS) {
    const b = bitmap(c);
    if (c !== " ") assert.ok(b.includes("1"), `${c} paints something`);
    assert.ok(!seen.has(b), `${c} differs from ${seen.get(b)}`);
    seen.set(b, c);
  }
  assert.equal(bitmap("a"), bitmap("A"), "lower case is drawn as upper case");
});

Deno.test("font: scale multiplies every font pixel; width formula", () => {
  for (const c of "08AZ") {
    const one = bitmap(c).split("").filter((v) => v === "1").length;
    const two = bitmap(c, 2).split("").filter((v) => v === "1").length;
    assert.equal(two, 4 * one);
  }
  assert.equal(textWidth(""), 0);
  assert.equal(textWidth("1"), 5);
  assert.equal(textWidth("123"), 17);
  assert.equal(textWidth("123", { scale: 3 }), 51);
  const image = createImage(40, 10);
  assert.ok(drawText(image, "12:05", 0, 0, [255, 255, 255]) > 0);
});

Deno.test("font: unknown characters and bad options are refused with the fix", () => {
  const image = createImage(20, 10);
  assert.throws(
    () => drawText(image, "A!", 0, 0, [0, 0, 0]),
    /drawText: text\[1\] is "!", which the font cannot draw; use only these characters/,
  );
  assert.throws(() => textWidth("é"), /textWidth: text\[0\] is "é"/);
  assert.throws(
    () => textWidth("A", { scale: 0 }),
    /textWidth: options.scale must be an integer in \[1, 16\], got 0/,
  );
  assert.throws(
    () => drawText(image, 5 as unknown as string, 0, 0, [0, 0, 0]),
    /drawText: text must be a string, got 5/,
  );
  // Clipped text paints only what is inside.
  assert.equal(drawText(image, "8", -100, 0, [1, 1, 1]), 0);
});
