import assert from "node:assert/strict";
import { formatDuration, ProgressBar, progressLine, summaryTable } from "./progress.ts";

Deno.test("formatDuration", () => {
  assert.equal(formatDuration(0), "0s");
  assert.equal(formatDuration(59.4), "59s");
  assert.equal(formatDuration(59.6), "1m00s");
  assert.equal(formatDuration(3599), "59m59s");
  assert.equal(formatDuration(3600), "1h00m");
  assert.equal(formatDuration(-1), "-");
  assert.equal(formatDuration(Infinity), "-");
});

Deno.test("progressLine: bar, counts, ETA from this process's rate, metrics left out when absent", () => {
  assert.equal(
    progressLine({ done: 0, total: 10, elapsedS: 0, width: 4 }),
    "train [----]   0/10    0%  elapsed 0s  ETA -",
  );
  // resumed at step 50: 10 steps in 20 s here, 40 to go: 80 s
  assert.equal(
    progressLine({
      done: 60,
      total: 100,
      start: 50,
      elapsedS: 20,
      width: 10,
      metrics: { pass1: 0.5, reward: null },
    }),
    "train [######----]   60/100   60%  elapsed 20s  ETA 1m20s  pass@1 0.5",
  );
  assert.equal(
    progressLine({
      done: 100,
      total: 100,
      elapsedS: 3700,
      width: 2,
      label: "eval",
      metrics: { tokensPerS: 1500.4 },
    }),
    "eval [##]  100/100  100%  elapsed 1h01m  ETA 0s  tok/s 1500",
  );
});

function fakeBar(
  options: { tty: boolean; total: number; start?: number; plainEvery?: number; columns?: number },
) {
  const out: string[] = [];
  let t = 0;
  const bar = new ProgressBar({
    ...options,
    width: 10,
    write: (s) => out.push(s),
    now: () => t,
  });
  return { bar, out, tick: (s: number) => t += s * 1000 };
}

Deno.test("ProgressBar on a TTY: redraws one line in place, truncated to the terminal width", () => {
  const { bar, out, tick } = fakeBar({ tty: true, total: 3, columns: 40 });
  for (let step = 1; step <= 3; step++) {
    tick(2);
    bar.update(step, { reward: step / 10 });
  }
  bar.finish({ pass1: 0.75 });
  assert.equal(out.length, 4);
  for (const s of out.slice(0, 3)) {
    assert.ok(s.startsWith("\r") && s.endsWith("\x1b[K") && !s.includes("\n"), JSON.stringify(s));
    assert.ok(s.length <= 1 + 39 + 3, `fits 40 columns: ${JSON.stringify(s)}`);
  }
  assert.equal(out[0], "\rtrain [###-------]  1/3   33%  elapsed \x1b[K"); // 39 columns
  assert.ok(out[3]!.endsWith("\x1b[K\n"));
  const wide = fakeBar({ tty: true, total: 3, columns: 200 });
  wide.tick(2);
  wide.bar.update(1, { reward: 0.1 });
  assert.equal(
    wide.out[0],
    "\rtrain [###-------]  1/3   33%  elapsed 2s  ETA 4s  reward 0.1\x1b[K",
  );
});

Deno.test("ProgressBar without a TTY: a plain line every N percent, the last line once", () => {
  const { bar, out, tick } = fakeBar({ tty: false, total: 20, plainEvery: 25 });
  for (let step = 1; step <= 20; step++) {
    tick(1);
    bar.update(step, { reward: step });
  }
  bar.finish();
  assert.deepEqual(out.map((s) => s.match(/(\d+)\/20/)![1]), ["5", "10", "15", "20"]);
  assert.ok(out.every((s) => s.endsWith("\n") && !s.includes("\r")));
  assert.equal(out[0], "train [##--------]   5/20   25%  elapsed 5s  ETA 15s  reward 5\n");
  // finish() before the end prints the current state once
  const early = fakeBar({ tty: false, total: 10, start: 4, plainEvery: 50 });
  early.tick(3);
  early.bar.update(5);
  early.bar.finish();
  assert.deepEqual(early.out, ["train [#####-----]   5/10   50%  elapsed 3s  ETA 15s\n"]);
  assert.throws(
    () => new ProgressBar({ total: 0, write: () => {} }),
    /total must be an integer >= 1/,
  );
});

Deno.test("summaryTable: aligned columns, numbers right-aligned and formatted, '-' for missing", () => {
  const table = summaryTable([
    { metric: "steps", value: 100, note: "done" },
    { metric: "reward/mean", value: 0.4123456 },
    { metric: "kl", value: null },
  ]);
  assert.equal(
    table,
    [
      "metric        value  note",
      "-----------  ------  ----",
      "steps           100  done",
      "reward/mean  0.4123  -",
      "kl                -  -",
    ].join("\n"),
  );
  assert.equal(summaryTable([]), "");
});
