import assert from "node:assert/strict";
import { validatePolicyInputs } from "./validate.ts";
import { inputsOf, randomCase, t } from "./_test_utils.ts";

Deno.test("validatePolicyInputs: NaN/inf on valid positions, bad masks and shapes are named", async () => {
  const c = randomCase(1, 2, 3);
  await validatePolicyInputs(inputsOf(c));
  const nanAdv = c.adv.map((r) => [...r]);
  nanAdv[1]![0] = NaN;
  await assert.rejects(
    validatePolicyInputs(inputsOf({ ...c, adv: nanAdv })),
    /validatePolicyInputs: advantages\[1, 0\] is NaN at a valid position/,
  );
  const infOld = c.old.map((r) => [...r]);
  infOld[0]![0] = -Infinity;
  await assert.rejects(
    validatePolicyInputs(inputsOf({ ...c, old: infOld })),
    /oldLogProbs\[0, 0\] is -Infinity/,
  );
  await assert.rejects(
    validatePolicyInputs({ ...inputsOf(c), responseMask: t([[1, 0.5, 0], [1, 1, 1]]) }),
    /responseMask\[0, 1\] is 0.5; the mask must hold only 0 and 1/,
  );
  await assert.rejects(
    validatePolicyInputs({ ...inputsOf(c), logProbs: t([[0.5, -1, -1], [-1, -1, -1]]) }),
    /logProbs\[0, 0\] is 0.5, a log-probability above 0/,
  );
  await assert.rejects(
    async () => await validatePolicyInputs({ ...inputsOf(c), advantages: t([[1]]) }),
    /advantages shape \[1,1\] must equal logProbs shape \[2,3\]/,
  );
  // NaN on masked positions is allowed (losses zero them before any arithmetic)
  const masked = c.adv.map((r, i) => r.map((v, j) => (c.mask[i]![j] ? v : NaN)));
  await validatePolicyInputs(inputsOf({ ...c, adv: masked }));
});
