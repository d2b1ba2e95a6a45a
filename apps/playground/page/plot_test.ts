import assert from "node:assert/strict";
import { linearScale, niceTicks, paddedExtent, plotSvg } from "./plot.ts";

/** The `x,y` pairs of every polyline of a plot, as numbers. */
function polylines(svg: string): [number, number][][] {
  return [...svg.matchAll(/<polyline points="([^"]*)"/g)].map((m) =>
    m[1]!.split(" ").map((p) => p.split(",").map(Number) as [number, number])
  );
}

Deno.test("linearScale: ends map to ends, inside is proportional, a decreasing range flips (SVG y)", () => {
  const x = linearScale([0, 30], [44, 312]);
  assert.equal(x(0), 44);
  assert.equal(x(30), 312);
  assert.equal(x(15), 178);
  const y = linearScale([-1, 1], [158, 22]);
  assert.equal(y(-1), 158);
  assert.equal(y(1), 22);
  assert.equal(y(0), 90);
  assert.equal(y(2), -46, "outside the domain: extrapolated, not clamped");
  assert.equal(linearScale([5, 5], [10, 20])(123), 15, "degenerate domain: the middle");
});

Deno.test("niceTicks: 1, 2 or 5 times a power of ten, inside the interval, rounded", () => {
  assert.deepEqual(niceTicks(0, 1, 4), [0, 0.5, 1]);
  assert.deepEqual(niceTicks(0.4263, 0.5385, 4), [0.45, 0.5]);
  assert.deepEqual(niceTicks(0.4263, 0.5385, 10), [0.44, 0.46, 0.48, 0.5, 0.52]);
  assert.deepEqual(niceTicks(-2.3e-8, 2.1e-8, 4), [-2e-8, 0, 2e-8]);
  assert.deepEqual(niceTicks(0, 600, 5), [0, 200, 400, 600]);
  assert.deepEqual(niceTicks(3, 2), []);
  assert.deepEqual(niceTicks(0, Infinity), []);
  for (const [lo, hi] of [[0.1, 0.7], [3.4, 3.9], [-5, 95], [1e-3, 2e-3]] as const) {
    const ticks = niceTicks(lo, hi, 5);
    assert.ok(ticks.length >= 2 && ticks.length <= 11, `${lo}..${hi}: ${ticks}`);
    assert.ok(ticks.every((t) => t >= lo - 1e-12 && t <= hi + 1e-12), `${lo}..${hi}: ${ticks}`);
  }
});

Deno.test("paddedExtent: the data's range padded; flat and empty series get a usable range", () => {
  assert.deepEqual(paddedExtent([1, 3, 2]), [0.9, 3.1]);
  assert.deepEqual(paddedExtent([0, 0]), [-0.05, 0.05]);
  assert.deepEqual(paddedExtent([100, null, NaN, 100]), [95, 105]);
  assert.deepEqual(paddedExtent([]), [0, 1]);
});

Deno.test("plotSvg: points land inside the plot area at their scaled positions; nulls break the line", () => {
  const svg = plotSvg(
    [{
      label: "reward",
      color: "#123456",
      points: [[0, 0], [10, 1], [20, null], [30, 0.5], [40, 0.25]],
    }],
    { title: "reward <mean>", width: 320, height: 180, xDomain: [0, 40], yDomain: [0, 1] },
  );
  // Plot area: x in [44, 312] (margins 44 and 8), y in [158, 22] (margins 22 top and bottom).
  assert.deepEqual(polylines(svg), [
    [[44, 158], [111, 22]],
    [[245, 90], [312, 124]],
  ]);
  assert.match(svg, /reward &lt;mean&gt;/);
  assert.doesNotMatch(svg, /plot-legend/, "one series: the title says what it is");
  const two = plotSvg([
    { label: "pass@1", color: "green", points: [[0, 0.3]], dots: true },
    { label: "pass@8", color: "lime", points: [[0, 0.8]], dots: true },
  ], { title: "pass", yDomain: [0, 1] });
  assert.equal([...two.matchAll(/plot-legend/g)].length, 2);
  assert.equal([...two.matchAll(/<circle /g)].length, 2);
  assert.match(plotSvg([], { title: "t", empty: "nothing yet" }), /nothing yet/);
});
