/**
 * The learner of a run: the policy (from a checkpoint when resuming), its reference, value head
 * and LoRA adapters, and AdamW over what is trained.
 *
 * Design decisions:
 * - **No reference model unless something reads it** (`needsReference`: `algorithm.kl.beta > 0`
 *   or PRIME's implicit rewards); with LoRA the reference is the base itself, scored with the
 *   adapters detached (`lora.ts`), so no second copy of the weights.
 * - **With LoRA the base is always `model.checkpoint`**: a LoRA checkpoint holds the adapters
 *   only, so resuming attaches them to a freshly loaded base.
 * - **Resume is exact**: the optimizer's moments are restored bit for bit, with the step and data
 *   position the loop continues from.
 * - **Files here, the rest in `policy_learner.ts`**: `loadLearner` reads `model.checkpoint` and
 *   the checkpoint resumed from, and `learnerFromPolicy` builds the learner from what was read,
 *   so a browser tab that has the policy from fetched bytes builds the same learner.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import { loadPolicy } from "./policy.ts";
import { type Learner, learnerFromPolicy } from "./policy_learner.ts";
import { loadTrainState } from "./state.ts";

export type { Learner, LearnerSources } from "./policy_learner.ts";

/**
 * Loads the learner of `config`, from `checkpointPath` when resuming (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { loadLearner } from "./learner.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const learner = await loadLearner(config, null);
 * assert.equal(learner.ref, null); // β = 0: no reference is held
 * assert.equal(learner.start, 0);
 * learner.dispose();
 * ```
 */
export async function loadLearner(
  config: Config,
  checkpointPath: string | null,
): Promise<Learner> {
  return await learnerFromPolicy(config, await loadPolicy(config.model.checkpoint), {
    ...(checkpointPath !== null
      ? { resume: { from: checkpointPath, load: () => loadTrainState(checkpointPath) } }
      : {}),
    copy: () => loadPolicy(config.model.checkpoint),
  });
}
