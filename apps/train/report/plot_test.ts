import fc from "fast-check";
import assert from "node:assert/strict";
import { escapeXml, formatTick, linePlot, niceTicks } from "./plot.ts";

Deno.test("niceTicks: cover [lo, hi], equal 1-2-5 steps, a bounded count", () => {
  fc.assert(
    fc.property(
      fc.double({ min: -1e6, max: 1e6, noNaN: true }),
      fc.double({ min: 1e-9, max: 1e6, noNaN: true }),
      fc.integer({ min: 2, max: 8 }),
      (lo, span, count) => {
        const hi = lo + span;
        // Spans below a millionth of the values are beyond what float ticks can resolve.
        fc.pre(hi > lo && span > 1e-6 * Math.abs(lo));
        const t = niceTicks(lo, hi, count);
        const step = t[1]! - t[0]!;
        // Tolerance 1e-9 steps: an end within float noise of a tick is not given a tick of its own.
        assert.ok(
          t[0]! <= lo + 1e-9 * step && t.at(-1)! >= hi - 1e-9 * step,
          `[${t[0]}, ${t.at(-1)}] covers [${lo}, ${hi}]`,
        );
        const mantissa = step / 10 ** Math.floor(Math.log10(step));
        // tolerance: the step is read back from two rounded ticks
        assert.ok([1, 2, 5, 10].some((m) => Math.abs(mantissa - m) < 1e-3), `step ${step}`);
        for (let i = 1; i < t.length; i++) {
          // equal spacing up to the 12-significant-digit rounding of each tick
          assert.ok(Math.abs(t[i]! - t[i - 1]! - step) <= 1e-3 * step);
        }
        assert.ok(t.length <= 2 * count + 3, `${t.length} ticks for count ${count}`);
      },
    ),
    { numRuns: 500 },
  );
  assert.deepEqual(niceTicks(2, 2), [2]);
  assert.throws(() => niceTicks(1, 0), /need finite lo <= hi/);
  assert.throws(() => niceTicks(-1e308, 1e308), /too large or too small/);
  assert.deepEqual(niceTicks(0.1, 0.3, 2), [0.1, 0.2, 0.3]); // no 0.30000000000000004
});

Deno.test("formatTick: fixed decimals from the spacing, exponents for tiny or huge values", () => {
  assert.equal(formatTick(0, 0.5), "0");
  assert.equal(formatTick(1.5, 0.5), "1.5");
  assert.equal(formatTick(-0.25, 0.05), "-0.25");
  assert.equal(formatTick(1e-5, 2e-6), "1e-5");
  assert.equal(formatTick(1.2e-5, 2e-6), "1.2e-5");
  assert.equal(formatTick(250000, 50000), "2.5e+5");
});

Deno.test("escapeXml", () => {
  assert.equal(escapeXml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
});

const value = fc.oneof(
  fc.double(),
  fc.constant(null),
  fc.constantFrom(NaN, Infinity, -Infinity, 0, 1e-12, 1e12),
);

Deno.test("linePlot: any input gives one well-formed SVG with only finite coordinates", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          name: fc.string({ maxLength: 10 }),
          points: fc.array(fc.tuple(fc.integer({ min: -5, max: 50 }), value), { maxLength: 12 }),
        }),
        { maxLength: 3 },
      ),
      fc.string({ maxLength: 10 }),
      (series, title) => {
        const svg = linePlot({ title, series });
        assert.ok(svg.startsWith('<svg class="plot"') && svg.endsWith("</svg>"));
        assert.equal(svg.match(/<svg/g)!.length, 1);
        // every numeric attribute is a finite number
        for (const m of svg.matchAll(/ (?:x|y|x1|x2|y1|y2|cx|cy|width|height)="([^"]*)"/g)) {
          assert.ok(Number.isFinite(Number(m[1])), `attribute value ${m[1]}`);
        }
        for (const m of svg.matchAll(/ (?:d|points)="([^"]*)"/g)) {
          assert.ok(!/NaN|Infinity/.test(m[1]!), m[1]);
        }
        // text nodes never contain raw markup from the input
        assert.ok(!/<(?!\/?(svg|title|rect|text|g|line|path|circle|polygon)\b)/.test(svg), svg);
        const finitePoints = series.some((s) =>
          s.points.some(([, y]) =>
            typeof y === "number" && Number.isFinite(y) && Math.abs(y) <= 1e100
          )
        );
        assert.equal(svg.includes('class="empty"'), !finitePoints);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("linePlot: gaps split lines, single points are dots, bands are polygons, legends for 2+ series", () => {
  const svg = linePlot({
    title: "t",
    series: [
      { name: "a", points: [[1, 1], [2, 2], [3, null], [4, 3], [5, 4], [6, NaN], [7, 5]] },
      { name: "b", points: [[1, 0]], band: [[1, -1, 1], [2, -1, 1]] },
    ],
  });
  assert.equal((svg.match(/<path class="line"/g) ?? []).length, 2); // 1-2 and 4-5
  assert.equal((svg.match(/<circle class="dot"/g) ?? []).length, 2); // 7 and b's single point
  assert.equal((svg.match(/<polygon class="band"/g) ?? []).length, 1);
  assert.equal((svg.match(/class="legend"/g) ?? []).length, 2);
  const flat = linePlot({ title: "flat", series: [{ name: "c", points: [[1, 3], [2, 3]] }] });
  assert.match(flat, /<path class="line" d="M[\d.]+,[\d.]+L[\d.]+,[\d.]+"/);
  assert.ok(!flat.includes("legend"));
});
