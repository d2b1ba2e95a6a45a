/**
 * The policy-loss registry itself. The public functions over it (`registerPolicyLoss`,
 * `getPolicyLoss`, `policyLossNames`, `computePolicyLoss`) and the list of built-in files are in
 * `registry.ts`; this module imports no loss, so each loss's file can register itself without
 * an import cycle.
 *
 * @module
 */

import { Registry } from "@rlvr/common";
import type { PolicyLossFn } from "./types.ts";

/** Every policy loss, by key (built-in ones register at the end of their files). */
export const POLICY_LOSSES: Registry<PolicyLossFn> = new Registry<PolicyLossFn>("policy loss");
