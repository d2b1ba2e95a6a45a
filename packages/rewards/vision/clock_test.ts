import assert from "node:assert/strict";
import fc from "fast-check";
import type { RgbImage } from "@rlvr/image";
import { type ClockRow, clockTask, drawClock, parseClockTime } from "./clock.ts";
import { COLORS } from "./palette.ts";
import { checkVisionTask, decodeRowImage, isColor } from "./_test_utils.ts";

const pad = (m: number) => String(m).padStart(2, "0");
const perturb = (row: ClockRow) => [
  `${(row.hour % 12) + 1}:${pad(row.minute)}`,
  `${((row.hour + 5) % 12) + 1}:${pad(row.minute)}`,
  `${row.hour}:${
    pad(
      (row.minute + row.step) % 60 === row.minute
        ? (row.minute + 1) % 60
        : (row.minute + row.step) % 60,
    )
  }`,
  `${row.hour}:${pad(row.minute)}:00`,
  `${row.hour}${pad(row.minute)}`,
  `${row.hour}:${row.minute + 60}`,
  String(row.hour),
];

Deno.test("clockTask: properties over hundreds of rows (deterministic, verified, adversarial)", async () => {
  await checkVisionTask(clockTask(), { perturb, draw: drawClock });
  await checkVisionTask(clockTask({ step: 1, numbers: false, size: 84 }), {
    perturb,
    draw: drawClock,
    rows: 100,
  });
});

/** Share of the points sampled along the ray at `degrees` between radii `from` and `to` that are black. */
function blackShare(image: RgbImage, degrees: number, from: number, to: number): number {
  const cx = Math.floor(image.width / 2);
  const cy = Math.floor(image.height / 2);
  const a = (degrees * Math.PI) / 180;
  let black = 0, all = 0;
  for (let r = from; r <= to; r += 0.5) {
    const x = Math.floor(cx + r * Math.sin(a));
    const y = Math.floor(cy - r * Math.cos(a));
    if (isColor(image, x, y, COLORS.black)) black++;
    all++;
  }
  return black / all;
}

/** The index of the largest value, when it is the only one above `floor`. */
function only(values: readonly number[], floor: number): number {
  const above = values.map((v, i) => [v, i] as const).filter(([v]) => v > floor);
  return above.length === 1 ? above[0]![1] : -1;
}

/**
 * The time read from the pixels: the minute hand is the only black ray between 0.56 and 0.8 of
 * the radius; the hour hand the black ray between 0.2 and 0.42 at `hour·30 + minute/2` degrees
 * (`null` when the minute hand lies within 8° of it, hiding it).
 */
function readClock(row: ClockRow): { hour: number | null; minute: number } {
  const image = decodeRowImage(row);
  const r = Math.floor(Math.min(image.width, image.height) / 2) - 2;
  const minuteShares = Array.from(
    { length: 60 },
    (_, m) => blackShare(image, m * 6, 0.56 * r, 0.8 * r),
  );
  const minute = only(minuteShares, 0.5);
  assert.ok(
    minute >= 0,
    `${row.id}: one minute hand, got ${minuteShares.map((v) => v.toFixed(1))}`,
  );
  assert.ok(minuteShares[minute]! > 0.9);
  const angle = (h: number) => (h % 12) * 30 + minute / 2;
  const apart = (h: number) => Math.abs(((angle(h) - minute * 6 + 540) % 360) - 180) > 8;
  const hourShares = Array.from({ length: 12 }, (_, k) => {
    const h = k + 1;
    return apart(h) ? blackShare(image, angle(h), 0.2 * r, 0.42 * r) : 0;
  });
  if (!apart(row.hour)) return { hour: null, minute };
  const k = only(hourShares, 0.5);
  assert.ok(k >= 0, `${row.id}: one hour hand, got ${hourShares.map((v) => v.toFixed(1))}`);
  return { hour: k + 1, minute };
}

Deno.test("clockTask: the hands in the pixels show the answer's time", () => {
  for (const task of [clockTask(), clockTask({ step: 1 }), clockTask({ step: 1, size: 56 })]) {
    for (const row of task.rows(9, 60)) {
      const got = readClock(row);
      assert.equal(got.minute, row.minute, row.id);
      if (got.hour !== null) assert.equal(got.hour, row.hour, row.id);
    }
  }
});

Deno.test("parseClockTime: equivalent spellings; everything else null", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 59 }), (h, m) => {
      const want = { hour: h, minute: m };
      for (
        const s of [
          `${h}:${pad(m)}`,
          `${pad(h)}:${pad(m)}`,
          `${h}:${pad(m)} pm`,
          `${h % 12}:${pad(m)}`,
          `${h + 12 === 24 ? 0 : h + 12}:${pad(m)}`,
          ` ${h} : ${pad(m)}. `,
        ]
      ) {
        assert.deepEqual(parseClockTime(s), want, s);
      }
    }),
  );
  for (
    const s of [
      "3:5",
      "3:60",
      "24:00",
      "3.05",
      "3h05",
      "three o'clock",
      "3:05:00",
      "-3:05",
      "1e3:05",
      "",
      "12:345",
    ]
  ) {
    assert.equal(parseClockTime(s), null, s);
  }
});

Deno.test("clockTask: step granularity and the difficulty formula (monotone in the step)", () => {
  const difficulty = (step: number, numbers = true) =>
    clockTask({ step, numbers }).row(0, 0).difficulty;
  assert.deepEqual([60, 15, 5, 1].map((s) => difficulty(s)), [1, 4, 12, 60]);
  assert.equal(difficulty(5, false), 13);
  for (const step of [60, 15, 5]) {
    const rows = clockTask({ step }).rows(2, 100);
    assert.ok(rows.every((r) => r.minute % step === 0 && r.hour >= 1 && r.hour <= 12));
    assert.equal(
      new Set(rows.map((r) => r.minute)).size,
      Math.min(60 / step, 100) === 12 ? 12 : new Set(rows.map((r) => r.minute)).size,
    );
  }
  const hours = clockTask({ step: 60 }).rows(0, 200);
  assert.equal(new Set(hours.map((r) => r.answer)).size, 12, "all twelve whole hours appear");
});

Deno.test("clockTask: bad knobs name the field and the fix", () => {
  assert.throws(
    () => clockTask({ step: 7 }),
    /clockTask: options.step must be a divisor of 60 \(1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60\), got 7/,
  );
  assert.throws(() => clockTask({ size: 42 }), /at least 56 pixels.*raise options.size/);
  assert.throws(
    () => clockTask({ numbers: "yes" as unknown as boolean }),
    /options.numbers must be a boolean, got "yes"/,
  );
});
