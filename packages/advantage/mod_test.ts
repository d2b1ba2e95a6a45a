import assert from "node:assert/strict";
import * as mod from "./mod.ts";

Deno.test("mod: the public surface exports every estimator, helper and the registry", () => {
  const functions = [
    "broadcastScalars",
    "discountedReturns",
    "drGrpo",
    "entropyShapedAdvantages",
    "estimatorNames",
    "fixedGroupIndex",
    "fromRows",
    "gae",
    "getEstimator",
    "gigpo",
    "gpg",
    "groupMembers",
    "groupStatistics",
    "grpo",
    "grpoBatchStd",
    "grpoPassk",
    "klPenalty",
    "klShapedRewards",
    "gdpo",
    "maskedMean",
    "maskedRowMeans",
    "maskedSum",
    "optimalTokenBaseline",
    "tirOptimalTokenBaseline",
    "maskedVar",
    "maskedWhiten",
    "opo",
    "outcomeTokenRewards",
    "passAtK",
    "passkAnalytic",
    "prime",
    "psrNsr",
    "registerEstimator",
    "reinforcePlusPlus",
    "reinforcePlusPlusBaseline",
    "remax",
    "responseLengths",
    "rloo",
    "sequenceRewards",
    "toRows",
    "tokenMatrix",
    "vapoLambda",
  ];
  assert.deepEqual(Object.keys(mod).sort(), [...functions].sort());
  for (const f of functions) {
    assert.equal(typeof (mod as Record<string, unknown>)[f], "function", f);
  }
});
