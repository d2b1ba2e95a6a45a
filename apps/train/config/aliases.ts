/**
 * veRL's names for the update's batch sizes, accepted in any layer of a config (recipe or
 * `--set`) and rewritten to ours, so a veRL user's numbers mean what they meant there.
 *
 * | veRL key (`actor_rollout_ref.actor.*`) | here                                                       |
 * | -------------------------------------- | ---------------------------------------------------------- |
 * | `algorithm.ppo_mini_batch_size`        | `algorithm.ppoMiniBatchSize` = value × `rollout.groupSize` |
 * | `algorithm.ppo_epochs`                 | `algorithm.ppoEpochs`                                      |
 *
 * Design decisions:
 * - veRL counts `ppo_mini_batch_size` in prompts and multiplies it by `rollout.n` itself; ours
 *   counts responses, like `rollout.batchSize` and `microBatchSize`, so the alias is multiplied by
 *   the final group size rather than silently meaning 8× less.
 * - An alias is renamed within its own layer before the layers merge ({@link aliasLayers}), so
 *   the usual rule holds: the later layer wins, whichever name it used. The conversion to
 *   responses happens after the merge ({@link scaleAliases}), when the group size is known.
 *
 * @module
 */

import type { ConfigProblem, Provenance } from "./errors.ts";
import { isPlainObject, type Layer } from "./merge.ts";

/** The accepted aliases: alias key under `algorithm` → our key and whether it counts prompts. */
export const VERL_ALIASES: Readonly<Record<string, { key: string; perPrompt: boolean }>> = Object
  .freeze({
    ppo_mini_batch_size: { key: "ppoMiniBatchSize", perPrompt: true },
    ppo_epochs: { key: "ppoEpochs", perPrompt: false },
  });

/** What {@link aliasLayers} returns. */
export interface AliasedLayers {
  /** The layers with every alias renamed to our key. */
  layers: Layer[];
  /** Sources of the layers whose `ppoMiniBatchSize` was given in prompts (veRL's unit). */
  perPrompt: Set<string>;
  /** An alias set beside its own key in one layer. */
  problems: ConfigProblem[];
}

/**
 * Renames the aliases of every layer (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { aliasLayers } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const r = aliasLayers([{ source: "--set", data: { algorithm: { ppo_epochs: 2 } } }]);
 * assert.deepEqual(r.layers[0]!.data, { algorithm: { ppoEpochs: 2 } });
 * assert.deepEqual(r.problems, []);
 * ```
 */
export function aliasLayers(layers: readonly Layer[]): AliasedLayers {
  const perPrompt = new Set<string>();
  const problems: ConfigProblem[] = [];
  const out = layers.map((layer) => {
    const algorithm = layer.data.algorithm;
    if (!isPlainObject(algorithm)) return layer;
    if (!Object.keys(VERL_ALIASES).some((k) => k in algorithm)) return layer;
    const renamed: Record<string, unknown> = { ...algorithm };
    for (const [alias, { key, perPrompt: prompts }] of Object.entries(VERL_ALIASES)) {
      if (!(alias in renamed)) continue;
      if (key in renamed) {
        problems.push({
          path: `algorithm.${alias}`,
          message: `set together with algorithm.${key}, its name here; keep one of them`,
          source: layer.source,
        });
        continue;
      }
      renamed[key] = renamed[alias];
      delete renamed[alias];
      if (prompts) perPrompt.add(layer.source);
    }
    return { source: layer.source, data: { ...layer.data, algorithm: renamed } };
  });
  return { layers: out, perPrompt, problems };
}

/**
 * Converts a merged `algorithm.ppoMiniBatchSize` that came from a layer in prompts (veRL's
 * `ppo_mini_batch_size`) to responses, and notes it in the provenance. A value that is not an
 * integer is left for the schema to report.
 *
 * @example Usage
 * ```ts
 * import { scaleAliases } from "@rlvr/train";
 * import assert from "node:assert/strict";
 * const raw = { rollout: { groupSize: 8 }, algorithm: { ppoMiniBatchSize: 4 } };
 * const provenance = new Map([["algorithm.ppoMiniBatchSize", "--set algorithm.ppo_mini_batch_size=4"]]);
 * scaleAliases(raw, provenance, new Set(["--set algorithm.ppo_mini_batch_size=4"]));
 * assert.equal(raw.algorithm.ppoMiniBatchSize, 32);
 * ```
 */
export function scaleAliases(
  raw: Record<string, unknown>,
  provenance: Provenance,
  perPrompt: ReadonlySet<string>,
): void {
  const source = provenance.get("algorithm.ppoMiniBatchSize");
  if (source === undefined || !perPrompt.has(source)) return;
  const algorithm = raw.algorithm;
  const groupSize = isPlainObject(raw.rollout) ? raw.rollout.groupSize : undefined;
  if (!isPlainObject(algorithm)) return;
  const value = algorithm.ppoMiniBatchSize;
  if (!Number.isInteger(value) || !Number.isInteger(groupSize)) return;
  algorithm.ppoMiniBatchSize = (value as number) * (groupSize as number);
  provenance.set(
    "algorithm.ppoMiniBatchSize",
    `${source} (veRL's ppo_mini_batch_size in prompts, × rollout.groupSize ${groupSize})`,
  );
}
