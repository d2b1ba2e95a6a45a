// Helpers of the tests that run `runTraining` and read its run directory (not exported).

import { join } from "node:path";
import { readJsonl } from "../run/jsonl.ts";

/** Run options that print nothing, write no report and leave SIGINT alone. */
export const quiet = { log: () => {}, progress: () => {}, report: false, handleSignals: false };

/** `--set` overrides of a small CPU config: 8 responses in groups of 4, 6 new tokens. */
export const SMALL_SET: readonly string[] = [
  "rollout.batchSize=8",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=8",
  "rollout.maxNewTokens=6",
  "trainer.evalProblems=4",
  "trainer.device=cpu",
];

/** `--set` overrides of a 16-response batch with a minimal evaluation and no sample logging. */
export const BATCH16_SET: readonly string[] = [
  "rollout.batchSize=16",
  "rollout.groupSize=4",
  "algorithm.microBatchSize=16",
  "trainer.evalProblems=2",
  "trainer.evalSamples=2",
  "trainer.evalK=2",
  "trainer.samplesEvery=0",
];

/** Keys allowed to differ between two runs of one config: the timings. */
export const TIMING = /^(time\/|tokens_per_s$|rollout\/worker_tokens_per_s$)/;

/** The records of a run directory's JSONL file. */
export async function records(dir: string, file: string): Promise<Record<string, unknown>[]> {
  return (await readJsonl<Record<string, unknown>>(join(dir, file))).records;
}

/** The records without their {@link TIMING} keys. */
export function withoutTiming(rs: Record<string, unknown>[]): Record<string, unknown>[] {
  return rs.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !TIMING.test(k))));
}
