import assert from "node:assert/strict";
import { formatDuration, plotPanels, progressText } from "./view.ts";

Deno.test("plotPanels: five plots over the run's steps; a missing metric is a gap, not a zero", () => {
  const records = [
    { step: 1, "reward/mean": 0.25, entropy: 0.5, "response_length/mean": 3.5, pg_loss: 1e-8 },
    { step: 2, "reward/mean": 0.5, entropy: 0.45, "response_length/mean": 3.6, pg_loss: null },
  ];
  const panels = plotPanels(records, [], 30);
  assert.equal(panels.length, 5);
  const loss = panels.find((p) => p.id === "plot-loss")!.svg;
  assert.doesNotMatch(loss, /<polyline/, "one finite point: no line");
  assert.match(loss, /<circle /, "a lone point is drawn as a dot");
  assert.match(panels.find((p) => p.id === "plot-pass")!.svg, /waiting for the first evaluation/);
  assert.match(
    panels[0]!.svg,
    /<text [^>]*class="plot-tick plot-tick-x">30<\/text>/,
    "x axis to 30",
  );
});

Deno.test("progress line and durations", () => {
  assert.equal(formatDuration(0), "0.0 s");
  assert.equal(formatDuration(59_940), "59.9 s");
  assert.equal(formatDuration(61_000), "1 min 01 s");
  assert.equal(
    progressText({ completed: 30, steps: 30, elapsedMs: 99_500, status: "done" }),
    "step 30/30 · 1 min 39 s · done",
  );
});
