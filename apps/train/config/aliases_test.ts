import assert from "node:assert/strict";
import { ConfigError } from "./errors.ts";
import { loadConfig } from "./load.ts";

Deno.test("veRL aliases: ppo_mini_batch_size counts prompts (× rollout.groupSize), ppo_epochs renames; the later layer wins", async () => {
  const { config, provenance } = await loadConfig({
    set: ["algorithm.ppo_mini_batch_size=2", "algorithm.ppo_epochs=3"],
  });
  assert.equal(config.rollout.groupSize, 8);
  assert.equal(config.algorithm.ppoMiniBatchSize, 16);
  assert.equal(config.algorithm.ppoEpochs, 3); // over grpo.yaml's ppoEpochs: 1
  assert.match(provenance.get("algorithm.ppoMiniBatchSize")!, /veRL's ppo_mini_batch_size/);
  // Our own key in a later layer replaces the alias, in responses.
  const later = await loadConfig({
    set: ["algorithm.ppo_mini_batch_size=2", "algorithm.ppoMiniBatchSize=32"],
  });
  assert.equal(later.config.algorithm.ppoMiniBatchSize, 32);
  // The group size is the final one, whatever the order of the flags.
  const grouped = await loadConfig({
    set: ["algorithm.ppo_mini_batch_size=2", "rollout.groupSize=4"],
  });
  assert.equal(grouped.config.algorithm.ppoMiniBatchSize, 8);
});

Deno.test("veRL aliases: an alias beside its own key in one layer, or a bad value, names the key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const recipe = `${dir}/both.yaml`;
    await Deno.writeTextFile(
      recipe,
      "extends: grpo\nalgorithm:\n  ppo_epochs: 2\n  ppoEpochs: 3\n",
    );
    await assert.rejects(
      loadConfig({ config: recipe }),
      (e: unknown) =>
        e instanceof ConfigError && /algorithm\.ppo_epochs.*set together with algorithm\.ppoEpochs/
          .test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  await assert.rejects(
    loadConfig({ set: ["algorithm.ppo_mini_batch_size=0"] }),
    (e: unknown) => e instanceof ConfigError && /algorithm\.ppoMiniBatchSize/.test(e.message),
  );
});

Deno.test("ppoMiniBatchSize must divide the batch; microBatchSize must divide a larger mini-batch", async () => {
  await assert.rejects(
    loadConfig({ set: ["algorithm.ppoMiniBatchSize=24"] }),
    (e: unknown) =>
      e instanceof ConfigError &&
      /algorithm\.ppoMiniBatchSize: 24 does not divide rollout\.batchSize 64; use one of 1, 2, 4, 8, 16, 32, 64/
        .test(e.message),
  );
  await assert.rejects(
    loadConfig({
      set: ["algorithm.ppoMiniBatchSize=32", "algorithm.microBatchSize=12", "rollout.batchSize=96"],
    }),
    (e: unknown) =>
      e instanceof ConfigError &&
      /algorithm\.microBatchSize: 12 does not divide algorithm\.ppoMiniBatchSize 32/.test(
        e.message,
      ),
  );
  const { config } = await loadConfig({ set: ["algorithm.ppoMiniBatchSize=16"] });
  // A micro-batch larger than the mini-batch is capped at it: no error.
  assert.equal(config.algorithm.microBatchSize, 64);
  const fine = await loadConfig({
    set: ["algorithm.ppoMiniBatchSize=32", "algorithm.microBatchSize=16"],
  });
  assert.equal(fine.config.algorithm.ppoMiniBatchSize, 32);
});
