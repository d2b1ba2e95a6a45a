import assert from "node:assert/strict";
import {
  checkChoice,
  checkIndex,
  checkMask,
  checkMatrix,
  checkNumber,
  checkSequence,
  checkTokens,
  show,
} from "./_validate.ts";
import { fromRows } from "./layout.ts";

Deno.test("_validate: messages name the owner, the argument, the value and the accepted range", () => {
  assert.equal(show("a"), '"a"');
  assert.equal(show(NaN), "NaN");
  assert.equal(show(undefined), "undefined");
  assert.throws(
    () => checkNumber("f", "x", 2, { min: 0, max: 1 }),
    /f: x must be a finite number in \[0, 1\], got 2/,
  );
  assert.throws(
    () => checkNumber("f", "n", 1.5, { min: 1, integer: true }),
    /f: n must be an integer >= 1, got 1.5/,
  );
  assert.throws(() => checkNumber("f", "x", "1", {}), /f: x must be a finite number, got "1"/);
  assert.throws(
    () => checkChoice("f", "mode", "c", ["a", "b"]),
    /f: mode must be one of "a", "b", got "c"/,
  );
  assert.throws(
    () => checkMatrix("f", "m", null),
    /f: m must be a TokenMatrix \{data, batch, length\}/,
  );
  assert.throws(
    () => checkMatrix("f", "m", { data: [1], batch: 1.5, length: 1 }),
    /f: m must be a TokenMatrix/,
  );
  assert.throws(
    () => checkMask("f", "mask", fromRows([[1, -0.5]])),
    /f: mask\[0, 1\] is -0.5; a mask must hold only 0 and 1/,
  );
  const mask = fromRows([[1, 0]]);
  // masked positions are never read: a string there passes, a NaN under a 1 does not
  checkTokens("f", "v", { data: [1, "x" as never], batch: 1, length: 2 }, mask);
  assert.throws(
    () => checkTokens("f", "v", fromRows([[NaN, 0]]), mask),
    /f: v\[0, 0\] is NaN; v must be finite numbers where responseMask is 1/,
  );
  assert.throws(
    () => checkSequence("f", "r", [1, 2], 3),
    /f: r has 2 entries but responseMask has batch 3; they must match/,
  );
  assert.throws(
    () => checkSequence("f", "r", 5, 1),
    /f: r must be an array or typed array of 1 numbers, got 5/,
  );
  assert.throws(
    () => checkIndex("f", "index", [0, NaN], 2),
    /f: index\[1\] is NaN; group ids must be strings or finite numbers/,
  );
});
