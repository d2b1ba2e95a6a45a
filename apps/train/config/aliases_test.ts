import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ALIASES, aliasLayers, aliasOf, aliasTable, resolveAliases } from "./aliases.ts";
import { defaultConfig } from "./defaults.ts";
import { ConfigError, type ConfigProblem, type Provenance } from "./errors.ts";
import { loadConfig } from "./load.ts";
import { mergeLayers } from "./merge.ts";
import { overrideLayers } from "./overrides.ts";

interface Translated {
  value: Record<string, unknown>;
  provenance: Provenance;
  problems: ConfigProblem[];
  notices: string[];
}

/** The alias steps of `loadConfig` on the defaults and `--set` expressions, without validation. */
function translate(set: readonly string[]): Translated {
  const base = defaultConfig() as unknown as Record<string, unknown>;
  const aliased = aliasLayers([{ source: "defaults", data: base }, ...overrideLayers(set)]);
  const { value, provenance } = mergeLayers(aliased.layers);
  if (aliased.problems.length > 0) {
    return { value, provenance, problems: aliased.problems, notices: [] };
  }
  const r = resolveAliases(value, provenance, aliased);
  return { value, provenance, problems: r.problems, notices: r.notices };
}

function at(value: unknown, path: string): unknown {
  let cur = value;
  for (const part of path.split(".")) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

type Case =
  | { set: string[]; expect: Record<string, unknown> }
  | { set: string[]; refused: RegExp };

const A = "actor_rollout_ref.actor";
const O = "actor_rollout_ref.actor.optim";
const R = "actor_rollout_ref.rollout";

/** Every alias key → cases; the first expression of a case's `set` that starts with the key is its. */
const CASES: Record<string, Case[]> = {
  // veRL: data and rollout
  "data.train_batch_size": [
    { set: ["data.train_batch_size=16"], expect: { "rollout.batchSize": 128 } },
    {
      set: ["data.train_batch_size=16", `${R}.n=4`],
      expect: { "rollout.batchSize": 64, "rollout.groupSize": 4 },
    },
    { set: [`${R}.n=4`, "data.train_batch_size=16"], expect: { "rollout.batchSize": 64 } },
  ],
  [`${R}.n`]: [{ set: [`${R}.n=4`], expect: { "rollout.groupSize": 4 } }],
  "data.max_response_length": [
    { set: ["data.max_response_length=32"], expect: { "rollout.maxNewTokens": 32 } },
  ],
  [`${R}.response_length`]: [
    { set: [`${R}.response_length=32`], expect: { "rollout.maxNewTokens": 32 } },
  ],
  "data.max_prompt_length": [
    { set: ["data.max_prompt_length=512"], refused: /^512 has no equivalent here: prompts/ },
  ],
  "data.train_files": [
    {
      set: ["data.train_files=[gsm8k/train.parquet]"],
      expect: { "task.data.path": "gsm8k/train.parquet", "task.data.format": "parquet" },
    },
    { set: ["data.train_files=a.jsonl"], expect: { "task.data.format": "jsonl" } },
    { set: ["data.train_files=[a.jsonl, b.jsonl]"], refused: /one dataset file is read/ },
  ],
  "data.prompt_key": [
    { set: ["data.prompt_key=question"], expect: { "task.data.promptField": "question" } },
  ],
  "data.seed": [{ set: ["data.seed=7"], expect: { "trainer.seed": 7 } }],
  [`${R}.temperature`]: [
    { set: [`${R}.temperature=0.7`], expect: { "rollout.sampler.temperature": 0.7 } },
  ],
  [`${R}.top_p`]: [{ set: [`${R}.top_p=0.9`], expect: { "rollout.sampler.topP": 0.9 } }],
  [`${R}.top_k`]: [{ set: [`${R}.top_k=-1`], expect: { "rollout.sampler.topK": -1 } }],
  "actor_rollout_ref.model.enable_gradient_checkpointing": [
    {
      set: ["actor_rollout_ref.model.enable_gradient_checkpointing=true"],
      expect: { "trainer.activationCheckpointing": true },
    },
  ],
  "actor_rollout_ref.actor.freeze_vision_tower": [
    {
      set: ["actor_rollout_ref.actor.freeze_vision_tower=true"],
      expect: { "model.freezeVisionTower": true },
    },
  ],
  "actor_rollout_ref.model.path": [
    {
      set: ["actor_rollout_ref.model.path=models/qwen"],
      expect: { "model.checkpoint": "models/qwen" },
    },
  ],
  // veRL: the actor's loss
  [`${A}.clip_ratio`]: [
    {
      set: [`${A}.clip_ratio=0.3`],
      expect: { "algorithm.clip.low": 0.3, "algorithm.clip.high": 0.3 },
    },
    {
      set: [`${A}.clip_ratio_high=0.28`, `${A}.clip_ratio=0.3`],
      expect: { "algorithm.clip.low": 0.3, "algorithm.clip.high": 0.28 },
    },
  ],
  [`${A}.clip_ratio_low`]: [
    { set: [`${A}.clip_ratio_low=0.1`], expect: { "algorithm.clip.low": 0.1 } },
  ],
  [`${A}.clip_ratio_high`]: [
    { set: [`${A}.clip_ratio_high=0.28`], expect: { "algorithm.clip.high": 0.28 } },
  ],
  [`${A}.clip_ratio_c`]: [{ set: [`${A}.clip_ratio_c=3`], expect: { "algorithm.clip.dual": 3 } }],
  [`${A}.loss_agg_mode`]: [
    { set: [`${A}.loss_agg_mode=token-mean`], expect: { "algorithm.aggregation": "token-mean" } },
  ],
  [`${A}.loss_scale_factor`]: [
    {
      set: [`${A}.loss_scale_factor=1024`],
      expect: { "algorithm.lossOptions.lossScaleFactor": 1024 },
    },
  ],
  [`${A}.policy_loss.loss_mode`]: [
    { set: [`${A}.policy_loss.loss_mode=gspo`], expect: { "algorithm.loss": "gspo" } },
  ],
  [`${A}.use_kl_loss`]: [
    {
      set: ["algorithm.kl.placement=reward", `${A}.use_kl_loss=true`, `${A}.kl_loss_coef=0.001`],
      expect: { "algorithm.kl.placement": "loss", "algorithm.kl.beta": 0.001 },
    },
    { set: [`${A}.use_kl_loss=true`], refused: /algorithm\.kl\.beta is 0.*give .*kl_loss_coef/ },
    {
      set: ["algorithm.kl.beta=0.04", `${A}.use_kl_loss=false`],
      expect: { "algorithm.kl.beta": 0 },
    },
    {
      set: [`${A}.use_kl_loss=true`, "algorithm.use_kl_in_reward=true"],
      refused: /in the loss or in the reward, not both/,
    },
  ],
  [`${A}.kl_loss_coef`]: [
    { set: [`${A}.kl_loss_coef=0.01`], expect: { "algorithm.kl.beta": 0.01 } },
    {
      // Inert beside use_kl_loss=false, as in veRL, whatever the order.
      set: [`${A}.kl_loss_coef=0.01`, `${A}.use_kl_loss=false`],
      expect: { "algorithm.kl.beta": 0 },
    },
    {
      set: ["algorithm.kl.placement=reward", `${A}.kl_loss_coef=0.01`],
      refused: /algorithm\.kl\.placement is reward.*add actor_rollout_ref\.actor\.use_kl_loss=true/,
    },
  ],
  [`${A}.kl_loss_type`]: [
    { set: [`${A}.kl_loss_type=k2`], expect: { "algorithm.kl.estimator": "k2" } },
  ],
  [`${A}.entropy_coeff`]: [
    { set: [`${A}.entropy_coeff=0.001`], expect: { "algorithm.entropyCoef": 0.001 } },
  ],
  [`${A}.ppo_epochs`]: [{ set: [`${A}.ppo_epochs=2`], expect: { "algorithm.ppoEpochs": 2 } }],
  [`${A}.ppo_mini_batch_size`]: [
    { set: [`${A}.ppo_mini_batch_size=4`], expect: { "algorithm.ppoMiniBatchSize": 32 } },
  ],
  [`${A}.ppo_micro_batch_size_per_gpu`]: [
    { set: [`${A}.ppo_micro_batch_size_per_gpu=8`], expect: { "algorithm.microBatchSize": 8 } },
  ],
  [`${A}.ppo_micro_batch_size`]: [
    { set: [`${A}.ppo_micro_batch_size=8`], expect: { "algorithm.microBatchSize": 8 } },
  ],
  [`${A}.shuffle`]: [
    { set: [`${A}.shuffle=false`], expect: { "algorithm.shuffleMiniBatches": false } },
  ],
  [`${A}.grad_clip`]: [{ set: [`${A}.grad_clip=0.5`], expect: { "optimizer.gradClip": 0.5 } }],
  // veRL: the actor's optimizer
  [`${O}.lr`]: [{ set: [`${O}.lr=1e-6`], expect: { "optimizer.lr": 1e-6 } }],
  [`${O}.weight_decay`]: [
    { set: [`${O}.weight_decay=0.1`], expect: { "optimizer.weightDecay": 0.1 } },
  ],
  [`${O}.betas`]: [{ set: [`${O}.betas=[0.9, 0.95]`], expect: { "optimizer.betas": [0.9, 0.95] } }],
  [`${O}.clip_grad`]: [{ set: [`${O}.clip_grad=0.5`], expect: { "optimizer.gradClip": 0.5 } }],
  [`${O}.lr_warmup_steps`]: [
    { set: [`${O}.lr_warmup_steps=10`], expect: { "optimizer.warmupSteps": 10 } },
    { set: [`${O}.lr_warmup_steps=-1`], expect: { "optimizer.warmupSteps": 0 } },
  ],
  [`${O}.lr_warmup_steps_ratio`]: [
    {
      set: [`${O}.lr_warmup_steps_ratio=0.1`, "trainer.total_training_steps=55"],
      expect: { "optimizer.warmupSteps": 5, "trainer.steps": 55 },
    },
    {
      set: [`${O}.lr_warmup_steps=-1`, `${O}.lr_warmup_steps_ratio=0.5`, "trainer.steps=10"],
      expect: { "optimizer.warmupSteps": 5 },
    },
  ],
  [`${O}.lr_scheduler_type`]: [
    { set: [`${O}.lr_scheduler_type=cosine`], expect: { "optimizer.schedule": "cosine" } },
    { set: [`${O}.lr_scheduler_type=wsd`], refused: /^"wsd" has no equivalent here; use one of/ },
  ],
  [`${O}.warmup_style`]: [
    { set: [`${O}.warmup_style=constant`], expect: { "optimizer.schedule": "constant" } },
  ],
  [`${O}.min_lr_ratio`]: [
    { set: [`${O}.min_lr_ratio=0`], expect: { "optimizer.schedule": "cosine" } },
    { set: [`${O}.min_lr_ratio=0.1`], refused: /decay to 0/ },
  ],
  // veRL: algorithm
  "algorithm.adv_estimator": [
    { set: ["algorithm.adv_estimator=rloo"], expect: { "algorithm.estimator": "rloo" } },
    {
      set: ["algorithm.adv_estimator=grpo_vectorized"],
      expect: { "algorithm.estimator": "grpo_vectorized" },
    },
    { set: ["algorithm.adv_estimator=optimal_token_baseline"], refused: /use one of gae, grpo/ },
  ],
  "algorithm.norm_adv_by_std_in_grpo": [
    {
      set: ["algorithm.norm_adv_by_std_in_grpo=false"],
      expect: { "algorithm.estimatorOptions.normByStd": false },
    },
  ],
  "algorithm.rollout_correction.bypass_mode": [
    {
      set: ["algorithm.rollout_correction.bypass_mode=true"],
      expect: { "algorithm.oldLogProbs": "rollout" },
    },
    {
      set: ["algorithm.rollout_correction.bypass_mode=false"],
      expect: { "algorithm.oldLogProbs": "recompute" },
    },
    { set: ["algorithm.rollout_correction.bypass_mode=1"], refused: /is not a boolean/ },
  ],
  "algorithm.gamma": [
    {
      // Given before the estimator that reads it: still applied (veRL reads the merged config).
      set: ["algorithm.gamma=0.99", "algorithm.adv_estimator=reinforce_plus_plus"],
      expect: { "algorithm.estimatorOptions.gamma": 0.99 },
    },
    {
      set: ["algorithm.adv_estimator=gae", "algorithm.gamma=0.99"],
      expect: { "algorithm.gae": { gamma: 0.99, lambda: 1 } },
    },
    { set: ["algorithm.gamma=1"], expect: { "algorithm.gae": undefined } },
    { set: ["algorithm.gamma=0.9"], refused: /estimator grpo reads no discount/ },
  ],
  "algorithm.lam": [
    {
      set: ["algorithm.adv_estimator=gae", "algorithm.lam=0.95"],
      expect: { "algorithm.gae": { gamma: 1, lambda: 0.95 } },
    },
    { set: ["algorithm.lam=0.95"], refused: /estimator grpo reads no λ/ },
  ],
  "algorithm.use_kl_in_reward": [
    {
      set: [
        "algorithm.use_kl_in_reward=true",
        "algorithm.kl_ctrl.kl_coef=0.01",
        "algorithm.kl_penalty=kl",
      ],
      expect: {
        "algorithm.kl.placement": "reward",
        "algorithm.kl.beta": 0.01,
        "algorithm.kl.estimator": "kl",
      },
    },
  ],
  "algorithm.kl_ctrl.kl_coef": [
    {
      set: ["algorithm.kl_ctrl.kl_coef=0.01"],
      refused: /algorithm\.kl\.placement is loss.*add algorithm\.use_kl_in_reward=true/,
    },
  ],
  "algorithm.kl_penalty": [
    {
      set: ["algorithm.kl.placement=reward", "algorithm.kl_penalty=abs"],
      expect: { "algorithm.kl.estimator": "abs" },
    },
  ],
  "algorithm.kl_ctrl.type": [
    {
      set: ["algorithm.kl_ctrl.type=adaptive", "algorithm.kl_ctrl.target_kl=0.05"],
      expect: { "algorithm.kl.target": 0.05 },
    },
    { set: ["algorithm.kl_ctrl.type=adaptive"], expect: { "algorithm.kl.target": 0.1 } },
    { set: ["algorithm.kl_ctrl.type=fixed"], expect: { "algorithm.kl.target": null } },
  ],
  "algorithm.kl_ctrl.target_kl": [
    {
      set: ["algorithm.kl_ctrl.target_kl=0.05", "algorithm.kl_ctrl.type=fixed"],
      expect: { "algorithm.kl.target": null },
    },
    {
      set: ["algorithm.kl_ctrl.target_kl=0.05"],
      refused: /only with algorithm\.kl_ctrl\.type=adaptive/,
    },
  ],
  "algorithm.kl_ctrl.horizon": [
    { set: ["algorithm.kl_ctrl.horizon=5000"], expect: { "algorithm.kl.horizon": 5000 } },
  ],
  "algorithm.filter_groups.enable": [
    {
      set: ["algorithm.filter_groups.enable=true"],
      expect: { "rollout.dynamicSampling.enabled": true },
    },
  ],
  "algorithm.filter_groups.max_num_gen_batches": [
    {
      set: ["algorithm.filter_groups.max_num_gen_batches=5"],
      expect: { "rollout.dynamicSampling.maxRetries": 4 },
    },
    { set: ["algorithm.filter_groups.max_num_gen_batches=0"], refused: /bounded/ },
  ],
  "algorithm.filter_groups.metric": [
    { set: ["algorithm.filter_groups.metric=score"], expect: {} },
    { set: ["algorithm.filter_groups.metric=acc"], refused: /use metric score/ },
  ],
  "algorithm.ppo_mini_batch_size": [
    { set: ["algorithm.ppo_mini_batch_size=2"], expect: { "algorithm.ppoMiniBatchSize": 16 } },
  ],
  "algorithm.ppo_epochs": [{
    set: ["algorithm.ppo_epochs=3"],
    expect: { "algorithm.ppoEpochs": 3 },
  }],
  // veRL: trainer and rewards
  "trainer.total_training_steps": [
    { set: ["trainer.total_training_steps=50"], expect: { "trainer.steps": 50 } },
  ],
  "trainer.total_epochs": [
    { set: ["trainer.total_epochs=3"], refused: /counted in steps.*total_training_steps/ },
  ],
  "trainer.test_freq": [
    { set: ["trainer.test_freq=-1"], expect: { "trainer.evalEvery": 0 } },
    { set: ["trainer.test_freq=5"], expect: { "trainer.evalEvery": 5 } },
  ],
  "trainer.save_freq": [{ set: ["trainer.save_freq=20"], expect: { "trainer.saveEvery": 20 } }],
  "reward_model.overlong_buffer.enable": [
    {
      set: ["reward_model.overlong_buffer.enable=true"],
      expect: { "algorithm.overlong.enabled": true },
    },
  ],
  "reward_model.overlong_buffer.len": [
    { set: ["reward_model.overlong_buffer.len=4"], expect: { "algorithm.overlong.buffer": 4 } },
  ],
  "reward_model.overlong_buffer.penalty_factor": [
    {
      set: ["reward_model.overlong_buffer.penalty_factor=0.5"],
      expect: { "algorithm.overlong.penalty": 0.5 },
    },
  ],
  "custom_reward_function.path": [
    { set: ["custom_reward_function.path=r.py"], refused: /Python.*--reward/ },
  ],
  "custom_reward_function.name": [
    { set: ["custom_reward_function.name=score"], refused: /Python.*--reward/ },
  ],
  // TRL
  "num_generations": [{ set: ["num_generations=4"], expect: { "rollout.groupSize": 4 } }],
  "generation_batch_size": [
    { set: ["generation_batch_size=32"], expect: { "rollout.batchSize": 32 } },
    {
      set: ["generation_batch_size=32", "per_device_train_batch_size=8"],
      expect: { "rollout.batchSize": 32, "algorithm.ppoMiniBatchSize": 8 },
    },
    { set: ["generation_batch_size=32", "steps_per_generation=4"], refused: /give one/ },
  ],
  "per_device_train_batch_size": [
    {
      set: ["per_device_train_batch_size=16"],
      expect: { "algorithm.ppoMiniBatchSize": 16, "rollout.batchSize": 16 },
    },
    {
      set: ["steps_per_generation=4", "per_device_train_batch_size=16"],
      expect: { "algorithm.ppoMiniBatchSize": 16, "rollout.batchSize": 64 },
    },
  ],
  "steps_per_generation": [
    { set: ["steps_per_generation=4"], expect: { "algorithm.ppoMiniBatchSize": 16 } },
    { set: ["steps_per_generation=3"], refused: /does not divide rollout\.batchSize 64/ },
  ],
  "gradient_accumulation_steps": [
    { set: ["gradient_accumulation_steps=1"], expect: { "algorithm.ppoMiniBatchSize": null } },
    { set: ["gradient_accumulation_steps=4"], refused: /per_device_train_batch_size ×/ },
  ],
  "num_iterations": [{ set: ["num_iterations=2"], expect: { "algorithm.ppoEpochs": 2 } }],
  "max_steps": [
    { set: ["max_steps=100"], expect: { "trainer.steps": 100 } },
    {
      set: ["max_steps=100", "steps_per_generation=4", "num_iterations=2"],
      expect: { "trainer.steps": 13 }, // 100 / (2 × 4), rounded up
    },
    { set: ["max_steps=-1"], refused: /not a whole number of optimizer steps/ },
  ],
  "save_steps": [
    { set: ["save_steps=40", "steps_per_generation=4"], expect: { "trainer.saveEvery": 10 } },
  ],
  "eval_steps": [
    { set: ["eval_steps=6", "steps_per_generation=4"], expect: { "trainer.evalEvery": 2 } },
  ],
  "warmup_steps": [
    { set: ["warmup_steps=10", "num_iterations=4"], expect: { "optimizer.warmupSteps": 3 } },
  ],
  "warmup_ratio": [
    {
      set: ["warmup_ratio=0.05", "max_steps=30"],
      expect: { "optimizer.warmupSteps": 2, "trainer.steps": 30 },
    },
  ],
  "num_train_epochs": [{ set: ["num_train_epochs=3"], refused: /set max_steps/ }],
  "learning_rate": [{ set: ["learning_rate=1e-6"], expect: { "optimizer.lr": 1e-6 } }],
  "weight_decay": [{ set: ["weight_decay=0.1"], expect: { "optimizer.weightDecay": 0.1 } }],
  "max_grad_norm": [
    { set: ["max_grad_norm=0.5"], expect: { "optimizer.gradClip": 0.5 } },
    { set: ["max_grad_norm=0"], expect: { "optimizer.gradClip": null } },
  ],
  "adam_beta1": [{ set: ["adam_beta1=0.8"], expect: { "optimizer.betas": [0.8, 0.999] } }],
  "adam_beta2": [
    { set: ["adam_beta2=0.95", "adam_beta1=0.85"], expect: { "optimizer.betas": [0.85, 0.95] } },
  ],
  "lr_scheduler_type": [
    { set: ["lr_scheduler_type=linear"], expect: { "optimizer.schedule": "linear" } },
    {
      set: ["lr_scheduler_type=constant_with_warmup"],
      expect: { "optimizer.schedule": "constant" },
    },
    { set: ["lr_scheduler_type=cosine_with_min_lr"], refused: /use one of linear, cosine/ },
  ],
  "seed": [{ set: ["seed=3"], expect: { "trainer.seed": 3 } }],
  "gradient_checkpointing": [
    { set: ["gradient_checkpointing=true"], expect: { "trainer.activationCheckpointing": true } },
  ],
  "max_completion_length": [
    { set: ["max_completion_length=256"], expect: { "rollout.maxNewTokens": 256 } },
  ],
  "temperature": [{ set: ["temperature=0.7"], expect: { "rollout.sampler.temperature": 0.7 } }],
  "top_p": [{ set: ["top_p=0.95"], expect: { "rollout.sampler.topP": 0.95 } }],
  "top_k": [
    { set: ["top_k=20"], expect: { "rollout.sampler.topK": 20 } },
    { set: ["top_k=null"], expect: { "rollout.sampler.topK": 0 } },
  ],
  "min_p": [
    { set: ["min_p=0.05"], expect: { "rollout.sampler.minP": 0.05 } },
    { set: ["min_p=null"], expect: { "rollout.sampler.minP": 0 } },
  ],
  "beta": [
    {
      set: ["algorithm.kl.placement=reward", "beta=0.04"],
      expect: {
        "algorithm.kl.beta": 0.04,
        "algorithm.kl.placement": "loss",
        "algorithm.kl.estimator": "k3",
      },
    },
  ],
  "epsilon": [
    { set: ["epsilon=0.1"], expect: { "algorithm.clip.low": 0.1, "algorithm.clip.high": 0.1 } },
    {
      // epsilon_high is read with epsilon whatever the order, as TRL reads its config.
      set: ["epsilon_high=0.28", "epsilon=0.1"],
      expect: { "algorithm.clip.low": 0.1, "algorithm.clip.high": 0.28 },
    },
    { set: ["loss_type=cispo", "epsilon=0.2"], refused: /epsilon_high defaults to epsilon/ },
  ],
  "epsilon_high": [
    { set: ["epsilon_high=0.28"], expect: { "algorithm.clip.high": 0.28 } },
    {
      set: ["loss_type=cispo", "epsilon_high=5"],
      expect: { "algorithm.loss": "cispo", "algorithm.clip.high": 4, "algorithm.clip.low": 1 },
    },
  ],
  "delta": [
    { set: ["delta=1.5"], expect: { "algorithm.clip.dual": 1.5 } },
    { set: ["delta=null"], expect: { "algorithm.clip.dual": null } },
  ],
  "loss_type": [
    {
      set: ["loss_type=grpo"],
      expect: { "algorithm.loss": "vanilla", "algorithm.aggregation": "seq-mean-token-mean" },
    },
    {
      set: ["loss_type=bnpo"],
      expect: { "algorithm.loss": "vanilla", "algorithm.aggregation": "token-mean" },
    },
    {
      set: ["loss_type=dr_grpo"],
      expect: { "algorithm.loss": "vanilla", "algorithm.aggregation": "seq-mean-token-sum-norm" },
    },
    {
      set: ["loss_type=dapo"],
      expect: { "algorithm.loss": "vanilla", "algorithm.aggregation": "token-mean" },
    },
    {
      set: ["loss_type=cispo"],
      expect: {
        "algorithm.loss": "cispo",
        "algorithm.aggregation": "token-mean",
        "algorithm.clip.low": 1,
      },
    },
    {
      set: ["loss_type=sapo"],
      expect: { "algorithm.loss": "sapo", "algorithm.aggregation": "seq-mean-token-mean" },
    },
    { set: ["loss_type=luspo"], refused: /no luspo loss/ },
    {
      set: ["importance_sampling_level=sequence", "loss_type=cispo"],
      refused: /no sequence-level cispo/,
    },
  ],
  "importance_sampling_level": [
    { set: ["importance_sampling_level=sequence"], expect: { "algorithm.loss": "gspo_token" } },
    {
      set: ["importance_sampling_level=sequence", "loss_type=dapo"],
      expect: { "algorithm.loss": "gspo_token", "algorithm.aggregation": "token-mean" },
    },
    { set: ["importance_sampling_level=token"], expect: { "algorithm.loss": "vanilla" } },
  ],
  "sapo_temperature_pos": [
    { set: ["sapo_temperature_pos=1.2"], expect: { "algorithm.lossOptions.tauPos": 1.2 } },
  ],
  "sapo_temperature_neg": [
    { set: ["sapo_temperature_neg=1.1"], expect: { "algorithm.lossOptions.tauNeg": 1.1 } },
  ],
  "scale_rewards": [
    {
      set: ["algorithm.estimator=rloo", "scale_rewards=group"],
      expect: {
        "algorithm.estimator": "grpo",
        "algorithm.estimatorOptions": { epsilon: 1e-4, normByStd: true },
      },
    },
    { set: ["scale_rewards=batch"], expect: { "algorithm.estimator": "grpo_batch_std" } },
    {
      set: ["scale_rewards=false"],
      expect: { "algorithm.estimator": "grpo", "algorithm.estimatorOptions.normByStd": false },
    },
    { set: ["scale_rewards=mean"], refused: /use group, batch or none/ },
  ],
  "mask_truncated_completions": [
    { set: ["mask_truncated_completions=false"], expect: {} },
    { set: ["mask_truncated_completions=true"], refused: /not masked out of the loss/ },
  ],
};

Deno.test("aliases: every veRL/TRL key has cases, and at least 20 veRL keys are mapped", () => {
  const keys = ALIASES.map((a) => a.key);
  assert.equal(new Set(keys).size, keys.length, "no key twice");
  assert.deepEqual(Object.keys(CASES).sort(), [...keys].sort());
  const mapped = ALIASES.filter((a) => a.targets.length > 0);
  assert.ok(mapped.filter((a) => a.framework === "veRL").length >= 20);
  assert.ok(mapped.filter((a) => a.framework === "TRL").length >= 20);
});

for (const [key, cases] of Object.entries(CASES)) {
  Deno.test(`aliases: ${key}`, () => {
    for (const c of cases) {
      const label = c.set.join(" ");
      const r = translate(c.set);
      if ("refused" in c) {
        const own = r.problems.find((p) => p.path === key);
        assert.ok(own, `${label}: a problem naming ${key}, got ${JSON.stringify(r.problems)}`);
        assert.match(own.message, c.refused, label);
        // The value as given starts the message, the expression that gave it is the source.
        const text = c.set.find((s) => s.startsWith(`${key}=`))!;
        assert.equal(own.source, `--set ${text}`, label);
        continue;
      }
      assert.deepEqual(r.problems, [], label);
      for (const [path, want] of Object.entries(c.expect)) {
        assert.deepEqual(at(r.value, path), want, `${label}: ${path}`);
      }
      assert.ok(
        r.notices.some((n) => n.startsWith(`note: ${key}=`)),
        `${label}: a notice for ${key} in ${JSON.stringify(r.notices)}`,
      );
      // Translated keys leave nothing foreign behind for the schema.
      assert.equal(at(r.value, key), undefined, label);
    }
  });
}

Deno.test("aliases: notices are one line naming both keys, the unit conversion and the layer", () => {
  assert.deepEqual(
    translate(["data.train_batch_size=16", "actor_rollout_ref.rollout.n=4", "beta=0.04"]).notices,
    [
      "note: data.train_batch_size=16 (veRL) is rollout.batchSize=64 (16 prompts × rollout.groupSize 4)",
      "note: actor_rollout_ref.rollout.n=4 (veRL) is rollout.groupSize=4",
      "note: beta=0.04 (TRL) is algorithm.kl.beta=0.04, algorithm.kl.placement=loss, algorithm.kl.estimator=k3",
    ],
  );
  assert.deepEqual(translate(["max_steps=10", "steps_per_generation=2"]).notices, [
    "note: max_steps=10 (TRL) is trainer.steps=5 (10 optimizer steps ÷ 2 per rollout step (ppoEpochs 1 × 2 mini-batches), rounded up)",
    "note: steps_per_generation=2 (TRL) is algorithm.ppoMiniBatchSize=32 (rollout.batchSize 64 ÷ 2)",
  ]);
  // Inert values and our own behaviour are said, not dropped silently.
  assert.deepEqual(translate(["mask_truncated_completions=false"]).notices, [
    "note: mask_truncated_completions=false (TRL): truncated completions stay in the loss, as here",
  ]);
  // A later layer's own key wins over an alias, and the notice says so.
  assert.deepEqual(translate(["actor_rollout_ref.rollout.n=4", "rollout.groupSize=2"]).notices, [
    "note: actor_rollout_ref.rollout.n=4 (veRL) is rollout.groupSize (overridden by --set rollout.groupSize=2)",
  ]);
});

Deno.test("aliases: the provenance of a converted key names the alias and the conversion", () => {
  const r = translate(["data.train_batch_size=16"]);
  assert.equal(
    r.provenance.get("rollout.batchSize"),
    "--set data.train_batch_size=16 (16 prompts × rollout.groupSize 8)",
  );
  // Our own key in a later layer replaces the alias, in its own unit (responses).
  const later = translate(["data.train_batch_size=16", "rollout.batchSize=32"]);
  assert.equal(at(later.value, "rollout.batchSize"), 32);
  assert.equal(later.provenance.get("rollout.batchSize"), "--set rollout.batchSize=32");
});

Deno.test("aliases: leftover keys of veRL-only sections are refused by name", () => {
  const r = translate(["actor_rollout_ref.rollout.gpu_memory_utilization=0.5", `${R}.n=4`]);
  assert.deepEqual(r.problems, [{
    path: "actor_rollout_ref.rollout.gpu_memory_utilization",
    message:
      "0.5: a veRL key with no equivalent here; drop it (the veRL and TRL keys read here are listed in apps/train/README.md#config)",
    source: "--set actor_rollout_ref.rollout.gpu_memory_utilization=0.5",
  }]);
  assert.equal(aliasOf(`${R}.n`)?.framework, "veRL");
});

Deno.test("aliases: the README's table is aliasTable()", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const begin = readme.indexOf("<!-- aliases:begin -->");
  const end = readme.indexOf("<!-- aliases:end -->");
  assert.ok(begin >= 0 && end > begin, "README.md has the aliases:begin/end markers");
  // Compared cell by cell, so `deno fmt`'s column widths do not matter.
  const cells = (text: string) =>
    text.split("\n").filter((l) => l.startsWith("|")).map((l) =>
      l.slice(1, -1).split("|").map((c) => c.trim())
    );
  assert.deepEqual(cells(readme.slice(begin, end)), cells(aliasTable()));
});

Deno.test("loadConfig with aliases: validated, in recipes too, with notices and errors naming the alias", async () => {
  const { config, provenance, notices } = await loadConfig({
    set: [
      "algorithm.adv_estimator=rloo",
      "actor_rollout_ref.actor.ppo_mini_batch_size=2",
      "trainer.total_training_steps=5",
    ],
  });
  assert.equal(config.algorithm.estimator, "rloo");
  assert.equal(config.algorithm.ppoMiniBatchSize, 16);
  assert.equal(config.trainer.steps, 5);
  assert.equal(notices.length, 3);
  assert.match(provenance.get("algorithm.ppoMiniBatchSize")!, /ppo_mini_batch_size=2 \(2 prompts/);
  const dir = await Deno.makeTempDir();
  try {
    const recipe = `${dir}/verl.yaml`;
    await Deno.writeTextFile(
      recipe,
      "extends: grpo\nactor_rollout_ref:\n  rollout: { n: 4 }\n  actor: { clip_ratio_high: 0.28 }\nnum_iterations: 2\n",
    );
    const r = await loadConfig({ config: recipe, set: ["data.train_batch_size=16"] });
    assert.equal(r.config.rollout.groupSize, 4);
    assert.equal(r.config.rollout.batchSize, 64);
    assert.equal(r.config.algorithm.clip.high, 0.28);
    assert.equal(r.config.algorithm.ppoEpochs, 2);
    assert.ok(
      r.notices.includes(`note: num_iterations=2 (TRL, recipe ${recipe}) is algorithm.ppoEpochs=2`),
    );
    assert.match(
      r.provenance.get("rollout.groupSize")!,
      /verl\.yaml, as veRL actor_rollout_ref\.rollout\.n$/,
    );
    // An alias beside its own name in one layer is an error naming both.
    const both = `${dir}/both.yaml`;
    await Deno.writeTextFile(both, "extends: grpo\nalgorithm:\n  ppo_epochs: 2\n  ppoEpochs: 3\n");
    await assert.rejects(
      loadConfig({ config: both }),
      (e: unknown) =>
        e instanceof ConfigError &&
        /algorithm\.ppo_epochs: set together with algorithm\.ppoEpochs/.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  // A bad translated value fails the schema, naming the alias that gave it.
  await assert.rejects(
    loadConfig({ set: ["actor_rollout_ref.actor.ppo_mini_batch_size=0"] }),
    (e: unknown) =>
      e instanceof ConfigError &&
      /algorithm\.ppoMiniBatchSize: .*\(from --set actor_rollout_ref\.actor\.ppo_mini_batch_size=0\)/
        .test(e.message),
  );
  // A refusal names the key, the value, why and the fix.
  await assert.rejects(
    loadConfig({ set: ["mask_truncated_completions=true"] }),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message ===
        "config: mask_truncated_completions: true has no equivalent here: truncated completions are not masked out of the loss; drop it, or penalise them with DAPO's overlong shaping (algorithm.overlong.enabled=true) (from --set mask_truncated_completions=true)",
  );
});

const TRL_RECIPE = `extends: grpo
num_generations: 8
per_device_train_batch_size: 16
steps_per_generation: 4
num_iterations: 2
max_steps: 40
learning_rate: 1.0e-4
beta: 0.04
epsilon: 0.2
epsilon_high: 0.28
loss_type: dapo
scale_rewards: group
max_completion_length: 8
temperature: 1.0
top_p: 1.0
warmup_ratio: 0.1
lr_scheduler_type: cosine
max_grad_norm: 1.0
seed: 3
mask_truncated_completions: false
`;

const VERL_RECIPE = `extends: grpo
data: { train_batch_size: 8, max_response_length: 8 }
actor_rollout_ref:
  rollout: { n: 8, temperature: 1.0, top_p: 1.0, top_k: -1 }
  actor:
    clip_ratio_low: 0.2
    clip_ratio_high: 0.28
    clip_ratio_c: 10.0
    loss_agg_mode: token-mean
    use_kl_loss: false
    kl_loss_coef: 0.0
    entropy_coeff: 0
    ppo_epochs: 1
    ppo_mini_batch_size: 2
    ppo_micro_batch_size_per_gpu: 16
    grad_clip: 1.0
    optim: { lr: 1.0e-6, weight_decay: 0.1, lr_warmup_steps: 10 }
algorithm:
  adv_estimator: grpo
  norm_adv_by_std_in_grpo: true
  use_kl_in_reward: false
  filter_groups: { enable: true, metric: score, max_num_gen_batches: 3 }
reward_model:
  overlong_buffer: { enable: true, len: 4, penalty_factor: 1.0 }
trainer: { total_training_steps: 20, test_freq: 5, save_freq: -1 }
`;

Deno.test("a TRL GRPOConfig and a veRL DAPO config, as recipes, pass validation with the meaning they had", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/trl.yaml`, TRL_RECIPE);
    await Deno.writeTextFile(`${dir}/verl.yaml`, VERL_RECIPE);
    const trl = (await loadConfig({ config: `${dir}/trl.yaml` })).config;
    assert.deepEqual(
      [trl.rollout.groupSize, trl.rollout.batchSize, trl.algorithm.ppoMiniBatchSize],
      [8, 64, 16], // 16 completions per optimizer step, 4 steps per generation
    );
    assert.equal(trl.algorithm.ppoEpochs, 2);
    assert.equal(trl.trainer.steps, 5); // 40 optimizer steps ÷ (2 epochs × 4 mini-batches)
    assert.equal(trl.optimizer.warmupSteps, 1); // ⌈0.1 × 5⌉
    assert.deepEqual(trl.algorithm.kl, {
      beta: 0.04,
      estimator: "k3",
      placement: "loss",
      target: null,
      horizon: 10000,
    });
    assert.deepEqual(trl.algorithm.clip, { low: 0.2, high: 0.28, dual: null });
    assert.deepEqual([trl.algorithm.loss, trl.algorithm.aggregation], ["vanilla", "token-mean"]);
    assert.deepEqual(trl.algorithm.estimatorOptions, { epsilon: 1e-4, normByStd: true });
    assert.deepEqual([trl.optimizer.lr, trl.optimizer.schedule, trl.trainer.seed], [
      1e-4,
      "cosine",
      3,
    ]);
    const verl = (await loadConfig({ config: `${dir}/verl.yaml` })).config;
    assert.deepEqual(
      [verl.rollout.batchSize, verl.algorithm.ppoMiniBatchSize, verl.algorithm.microBatchSize],
      [64, 16, 16],
    );
    assert.deepEqual(verl.algorithm.clip, { low: 0.2, high: 0.28, dual: 10 });
    assert.equal(verl.algorithm.kl.beta, 0);
    assert.deepEqual(verl.rollout.dynamicSampling, { enabled: true, maxRetries: 2 });
    assert.deepEqual(verl.algorithm.overlong, { enabled: true, buffer: 4, penalty: 1 });
    assert.deepEqual([verl.trainer.steps, verl.trainer.evalEvery, verl.trainer.saveEvery], [
      20,
      5,
      0,
    ]);
    assert.deepEqual([verl.optimizer.lr, verl.optimizer.warmupSteps], [1e-6, 10]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
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
