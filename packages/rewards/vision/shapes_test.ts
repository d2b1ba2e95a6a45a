import assert from "node:assert/strict";
import fc from "fast-check";
import { createImage } from "@rlvr/image";
import { COLORS, SHAPE_COLORS } from "./palette.ts";
import { drawShape, drawShapes, type Shape, SHAPE_KINDS, shapeBox } from "./shapes.ts";
import { classify, components } from "./_test_utils.ts";

Deno.test("shapes: areas, tight boxes and the look of each kind", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...SHAPE_KINDS),
      fc.integer({ min: 10, max: 40 }),
      fc.integer({ min: 0, max: 10 }),
      (kind, size, x) => {
        const shape: Shape = { kind, color: "blue", x, y: 3, size };
        const image = drawShapes(56, 56, [shape]);
        const cs = components(image, COLORS.blue);
        assert.equal(cs.length, 1, "one connected blob");
        const c = cs[0]!;
        assert.equal(c.size, drawShape(createImage(56, 56), shape));
        const [x1, y1, x2, y2] = shapeBox(shape);
        assert.ok(
          c.box[0] >= x1 && c.box[1] >= y1 && c.box[2] <= x2 && c.box[3] <= y2,
          "inside its box",
        );
        assert.ok(
          c.box[2] - c.box[0] >= size - 1 && c.box[3] - c.box[1] >= size - 1,
          "fills its box",
        );
        assert.equal(classify(c), kind);
        const area = {
          square: size * size,
          circle: (Math.PI * size * size) / 4,
          triangle: (size * size) / 2,
          diamond: (size * size) / 2,
        }[kind];
        assert.ok(Math.abs(c.size - area) <= 2 * size, `${kind} ${size}: ${c.size} vs ${area}`);
      },
    ),
    { numRuns: 80 },
  );
});

Deno.test("shapes: shape colours are far from each other and from the inks; bad shapes are refused", () => {
  for (const name of SHAPE_COLORS) {
    const a = COLORS[name];
    for (const [other, b] of Object.entries(COLORS)) {
      if (other === name) continue;
      assert.ok(Math.max(...a.map((v, k) => Math.abs(v - b[k]!))) >= 70, `${name} vs ${other}`);
    }
  }
  assert.equal(SHAPE_COLORS.length, 6);
  assert.throws(
    () =>
      drawShape(
        createImage(4, 4),
        { kind: "star", color: "red", x: 0, y: 0, size: 3 } as unknown as Shape,
      ),
    /drawShape: shape.kind must be one of "circle", "square", "triangle", "diamond", got "star"/,
  );
  assert.throws(
    () => shapeBox({ kind: "circle", color: "pink", x: 0, y: 0, size: 3 } as unknown as Shape),
    /shapeBox: shape.color must be one of "red"/,
  );
});
