/**
 * Value checks of policy-loss inputs that need the numbers on the host: NaN/±∞ on valid
 * positions and mask values other than 0/1. The losses check shapes, dtypes and options
 * synchronously but never read values (that would block a GPU backend every step), so call this
 * where a host read is acceptable: in tests, on the first steps, or behind a debug flag.
 *
 * @module
 */

import { fmtShape, type Tensor } from "@rlvr/tensor";
import { check2d, checkSameShape } from "./_util.ts";
import type { PolicyLossInputs } from "./types.ts";

function position(flat: number, shape: readonly number[]): string {
  const idx: number[] = [];
  for (let d = shape.length - 1; d >= 0; d--) {
    idx.unshift(flat % shape[d]!);
    flat = Math.floor(flat / shape[d]!);
  }
  return `[${idx.join(", ")}]`;
}

/**
 * Checks shapes and values of policy-loss inputs: the mask holds only 0/1 (or is bool), and
 * `logProbs`, `oldLogProbs`, `advantages`, `refLogProbs`, `rolloutLogProbs`, `entropy` and
 * `isWeights` are finite on valid positions, and log-probabilities are ≤ 0 (up to 1e-6).
 * Throws a RangeError naming the argument, the position and the value. Reads the tensors back.
 *
 * @example Usage
 * ```ts
 * import { validatePolicyInputs } from "@rlvr/objectives";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const base = {
 *   logProbs: tensor([[-1, -2]]),
 *   oldLogProbs: tensor([[-1, -2]]),
 *   responseMask: tensor([[1, 0]]),
 * };
 * await validatePolicyInputs({ ...base, advantages: tensor([[1, NaN]]) }); // NaN is masked: fine
 * await assert.rejects(
 *   validatePolicyInputs({ ...base, advantages: tensor([[NaN, 1]]) }),
 *   /advantages\[0, 0\] is NaN/,
 * );
 * ```
 */
export async function validatePolicyInputs(inputs: PolicyLossInputs): Promise<void> {
  const name = "validatePolicyInputs";
  check2d(name, "logProbs", inputs.logProbs);
  const keys = [
    "oldLogProbs",
    "advantages",
    "responseMask",
    "refLogProbs",
    "rolloutLogProbs",
    "entropy",
    "isWeights",
  ] as const;
  for (const key of keys) checkSameShape(name, key, inputs[key], inputs.logProbs, "logProbs");
  const shape = inputs.logProbs.shape;
  const mask = await inputs.responseMask.data();
  for (let i = 0; i < mask.length; i++) {
    const m = mask[i]!;
    if (m !== 0 && m !== 1) {
      throw new RangeError(
        `${name}: responseMask${position(i, shape)} is ${m}; the mask must hold only 0 and 1`,
      );
    }
  }
  const checked: [string, Tensor | undefined, boolean][] = [
    ["logProbs", inputs.logProbs, true],
    ["oldLogProbs", inputs.oldLogProbs, true],
    ["advantages", inputs.advantages, false],
    ["refLogProbs", inputs.refLogProbs, true],
    ["rolloutLogProbs", inputs.rolloutLogProbs, true],
    ["entropy", inputs.entropy, false],
    ["isWeights", inputs.isWeights, false],
  ];
  for (const [key, t, isLogProb] of checked) {
    if (t === undefined) continue;
    const values = await t.data();
    for (let i = 0; i < values.length; i++) {
      if (mask[i] === 0) continue;
      const v = values[i]!;
      if (!Number.isFinite(v)) {
        throw new RangeError(
          `${name}: ${key}${position(i, shape)} is ${v} at a valid position (shape ${
            fmtShape(shape)
          }); values must be finite where responseMask is 1`,
        );
      }
      if (isLogProb && v > 1e-6) {
        throw new RangeError(
          `${name}: ${key}${position(i, shape)} is ${v}, a log-probability above 0`,
        );
      }
    }
  }
}
