/**
 * `deno run -A bench/policy.ts [--quick] [--backend cpu|webgpu]`: generation and scoring
 * tokens/s of `@rlvr/policy` for a ~10M-parameter Qwen2-shaped model, per backend; a table on
 * stdout and JSON under `bench/results/policy-<backend>-<date>.json`. The bench itself lives
 * with its package (`packages/policy/bench/policy_bench.ts`, where its tests are); this file is
 * the entry point beside the other root benches.
 *
 * @module
 */

import { main } from "../packages/policy/bench/policy_bench.ts";

if (import.meta.main) Deno.exit(await main(Deno.args));
