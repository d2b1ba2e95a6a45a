/**
 * The types of a validated training config, written out by hand (not inferred from the zod
 * schema) so the public API documents every field and does not expose zod's types; `schema.ts`
 * is checked against them at compile time.
 *
 * Conventions: every field is required in a resolved config unless marked optional; `null`
 * means "off" where a field says so; the allowed values are those the schema enforces.
 *
 * @module
 */

/** LoRA adapters (`model.lora`). */
export type LoraConfig = NonNullable<ModelSection["lora"]>;

/** `model`: what is trained. */
export type ModelSection = Config["model"];

/** `task.data`: a dataset file instead of a built-in task. */
export type DataSection = NonNullable<TaskSection["data"]>;

/** `task.env`: a multi-turn environment instead of a single-turn task (`loop/episode.ts`). */
export type EnvSection = NonNullable<TaskSection["env"]>;

/** `task`: the problems and the reward. */
export type TaskSection = Config["task"];

/** `rollout.sampler`: token sampling. */
export type SamplerSection = RolloutSection["sampler"];

/** `rollout`: what is sampled per step. */
export type RolloutSection = Config["rollout"];

/** `algorithm`: estimator, loss and their settings. */
export type AlgorithmSection = Config["algorithm"];

/**
 * `sampling`: which training problems each step draws and what is mixed into its batch (see
 * `apps/train/loop/prompt_source.ts`). Everything but `stream` selection draws from a finite
 * pool of training problems (`pool`), so that a problem is seen again and its history counts.
 */
export type SamplingSection = NonNullable<Config["sampling"]>;

/**
 * One component of `rewards:`: exactly one of `type` (a built-in reward, `config/rewards.ts`),
 * `path` (`./my_reward.ts#exportName`: a `Reward` object or a TRL-style batch function) or
 * `inline` (a reward passed in code to `train()`, by name); the total is the weighted sum.
 */
export interface RewardSpec {
  /** A built-in reward type (`task`, `math`, `code`, `format`, `length`, `majority_vote` ...). */
  type?: string | undefined;
  /** A module and export, `./file.ts#name` (`default` without `#`), relative to the working directory. */
  path?: string | undefined;
  /** A reward passed in code to `train({ rewards })`, by its name. */
  inline?: string | undefined;
  /** The metric name, `reward/<name>/mean` (default: the type, the export or the inline name). */
  name?: string | undefined;
  /** Weight in the total (default 1). */
  weight: number;
  /** The reward's options (a built-in's factory options; a function's second argument). */
  options: Record<string, unknown>;
}

/** `optimizer`: AdamW and the schedule. */
export type OptimizerSection = Config["optimizer"];

/** `trainer`: the loop. */
export type TrainerSection = Config["trainer"];

/** `output`: where the run directory goes. */
export type OutputSection = Config["output"];

/** A validated, fully resolved training config. */
export interface Config {
  /** The model. */
  model: {
    /** `builtin:tiny` or a path to a Hugging Face checkpoint directory. */
    checkpoint: string;
    /** Train a value head (a critic) on the policy; required by estimator `gae` (PPO). */
    valueHead: boolean;
    /** LoRA adapters instead of full fine-tuning; absent or null = full fine-tuning. */
    lora?:
      | {
        /** Adapter rank r (integer >= 1). */
        rank: number;
        /** Scale α (> 0); the update is scaled by α / r. */
        alpha: number;
        /** Module names to adapt (`q_proj`, `v_proj`, ... see `LORA_TARGETS`). */
        targetModules: string[];
      }
      | null
      | undefined;
    /**
     * How frozen weights are held: `f32` (default) or `bf16` (half the memory, values rounded
     * once; CPU only). With `lora`, the learner's base (which is also the reference); without,
     * the reference model only (the trained policy stays f32). Rollout workers load merged f32
     * snapshots either way. Absent = f32.
     */
    storage?: "f32" | "bf16" | undefined;
    /**
     * A vision-language checkpoint only: keep the vision tower (encoder and merger) frozen,
     * training the language model alone (veRL's `actor.freeze_vision_tower`). Absent = false:
     * the tower trains with the decoder; with `lora` beside the adapters (a LoRA checkpoint then
     * holds the tower too, and the LoRA reference keeps a frozen copy of the initial tower).
     */
    freezeVisionTower?: boolean | undefined;
  };
  /** The task. */
  task: {
    /**
     * A built-in task (`arithmetic`, `countdown`, `knights_knaves`, `sudoku4`, `shortest_path`;
     * visual, for a vision-language policy: `count_shapes`, `bar_chart`, `grid_path`, `clock`,
     * `grounding`).
     */
    name?: string | null | undefined;
    /** The built-in task's options (checked by the task). */
    options?: Record<string, unknown> | null | undefined;
    /** A dataset instead of `name`. */
    data?: {
      /** Path of a `.jsonl` or `.parquet` file, relative to the working directory. */
      path: string;
      /** File format. */
      format: "jsonl" | "parquet";
      /** Field holding the prompt (dotted paths allowed; default `prompt`; unused with a template). */
      promptField: string;
      /**
       * Field holding the reference answer (default `answer`); a GSM8K solution `... #### 42` is
       * reduced to `42`, a MATH solution to its last `\boxed{}`.
       */
      answerField: string | null;
      /** A `{{field}}` prompt template; absent or null = the prompt field as it is. */
      template?: string | null | undefined;
      /** Fraction of rows held out for evaluation by a stable hash of the prompt (in (0, 1); default 0.1). */
      testFraction: number;
      /**
       * Rows whose prompt tokens + `rollout.maxNewTokens` exceed the model's
       * `max_position_embeddings` (checked once the model is loaded): `skip` them (absent: skip;
       * counted and reported), `truncate` their prompt (its start is cut, its end kept) or stop with
       * an `error`. No such row is ever run.
       */
      overlong?: "skip" | "truncate" | "error" | undefined;
    } | undefined;
    /** A multi-turn environment instead of `name` or `data`; absent or null = single-turn. */
    env?:
      | {
        /** A built-in environment (`calc`, `qa`; see `config/envs.ts`). */
        name: string;
        /** Its options (checked by the environment). */
        options: Record<string, unknown>;
        /** Policy turns per episode (integer >= 1). */
        maxTurns: number;
        /** Tool-call syntax: `compact` (`{EXPR}`, for char-level models) or `tagged` (`<calc>EXPR</calc>`). */
        syntax: "compact" | "tagged";
      }
      | null
      | undefined;
    /** Distinct training problems (1 for 1-shot RLVR); absent or null = a fresh stream. */
    trainProblems?: number | null | undefined;
    /** Weight of the `<think>/<answer>` format reward added to the task reward (>= 0). */
    formatWeight: number;
  };
  /** The rewards (absent or null: the task's verifier, plus `task.formatWeight` and overlong shaping). */
  rewards?: RewardSpec[] | null | undefined;
  /** Sampling. */
  rollout: {
    /** Responses per step (integer >= 1). */
    batchSize: number;
    /** Responses per prompt; must divide `batchSize`. */
    groupSize: number;
    /** Generation limit in tokens. */
    maxNewTokens: number;
    /** Token sampler parameters. */
    sampler: {
      /** Temperature (>= 0; 0 = greedy). */
      temperature: number;
      /** Nucleus mass in (0, 1] (1 = off). */
      topP: number;
      /** Top-k (0 or -1 = off). */
      topK: number;
      /** Min-p in [0, 1] (0 = off). */
      minP: number;
    };
    /** DAPO dynamic sampling: drop groups with equal rewards and sample more. */
    dynamicSampling: {
      /** On or off. */
      enabled: boolean;
      /** Extra sampling rounds allowed per step to fill the batch. */
      maxRetries: number;
    };
    /**
     * Where rollouts run relative to training (`scheduler.ts`): `sync` (the trainer's thread,
     * on-policy), `one_step_off` (one Web Worker generates the next batch under the previous
     * weights, η = 1, deterministic), `async` (`workers` Web Workers, newest weights, batches at
     * most `maxStaleness` versions old). Absent in configs written before it existed: `sync`.
     */
    mode?: "sync" | "one_step_off" | "async" | undefined;
    /** Rollout workers of `async` mode (integer >= 1; `one_step_off` uses one). */
    workers?: number | undefined;
    /** η of `async` mode: the most updates a batch may lag the trainer by (integer >= 0). */
    maxStaleness?: number | undefined;
    /** What happens to a batch older than η in `async` mode: `drop` or `regenerate`. */
    stalePolicy?: "drop" | "regenerate" | undefined;
    /**
     * A NATS server URL: the rollouts of `one_step_off` / `async` run on remote workers
     * (`deno task worker --nats <url>`) through JetStream instead of Web Workers; null = local.
     */
    nats?: string | null | undefined;
    /**
     * `rollout.natsAuth`: how the trainer logs in to `rollout.nats`; absent or null: nothing from
     * the config (the environment's `NATS_*` variables still apply). Only the user name and names
     * of files: a secret here would be saved in the run's `config.yaml` and sent to every worker,
     * so passwords and tokens come from files or from `NATS_PASSWORD` / `NATS_TOKEN` (also
     * `NATS_USER`, `NATS_CREDS`, `NATS_NKEY`, `NATS_CA`, read for what is not set here). One way
     * to log in.
     */
    natsAuth?:
      | {
        /** User name; the password comes from `passwordFile` or `NATS_PASSWORD`. */
        user?: string | undefined;
        /** A file holding the password (trailing newlines ignored). */
        passwordFile?: string | undefined;
        /** A file holding a token. */
        tokenFile?: string | undefined;
        /** A `.creds` file (JWT and nkey seed, as `nsc` writes it). */
        credsFile?: string | undefined;
        /** A file holding a user nkey seed (`SU...`). */
        nkeyFile?: string | undefined;
        /** Refused: put the password in `passwordFile` or `NATS_PASSWORD`. */
        password?: undefined;
        /** Refused: put the token in `tokenFile` or `NATS_TOKEN`. */
        token?: undefined;
        /** TLS: the CA of the server's certificate, a client certificate, whether TLS is required. */
        tls?:
          | {
            /** The CA (PEM) that signed the server's certificate (default: the system's). */
            caFile?: string | undefined;
            /** A client certificate (PEM), with `keyFile`, for servers that verify clients. */
            certFile?: string | undefined;
            /** The client certificate's key (PEM). */
            keyFile?: string | undefined;
            /** Refuse a server without TLS (default true). */
            required: boolean;
          }
          | null
          | undefined;
      }
      | null
      | undefined;
    /**
     * Partial rollouts (AReaL) in `one_step_off` / `async` mode: a generation running when the
     * trainer publishes new weights switches to them between two decoding steps (the KV cache is
     * recomputed) instead of finishing under the old ones; every token records the version that
     * sampled it, and a batch's version is the oldest of its tokens'. Absent: false.
     */
    partial?: boolean | undefined;
    /**
     * Where the decode steps of training rollouts and held-out evaluations run (`generate`'s
     * `decodeLoop`). `host`: each step's logits are read back and sampled on the host. `device`:
     * on WebGPU, steps run as fixed GPU programs that sample on the GPU, 16 steps per host round
     * trip (sampler filters run on the GPU; LoRA adapters are folded into copies of the adapted
     * weights for each batch; images go through the prefill on the host). Absent: host.
     */
    decodeLoop?: "host" | "device" | undefined;
  };
  /** The RL algorithm. */
  algorithm: {
    /** Advantage estimator key of `@rlvr/advantage` (`estimatorNames()`). */
    estimator: string;
    /** Extra estimator settings (checked by the estimator registry). */
    estimatorOptions: Record<string, unknown>;
    /** Policy-loss key of `@rlvr/objectives` (`policyLossNames()`). */
    loss: string;
    /** Extra policy-loss options (checked by the loss). */
    lossOptions: Record<string, unknown>;
    /** Aggregation key of `@rlvr/objectives` (`aggregationNames()`). */
    aggregation: string;
    /** Clip ranges: ratio bounds `1 - low` and `1 + high`; `dual` > 1 or null (off). */
    clip: { low: number; high: number; dual: number | null };
    /**
     * KL to the reference: coefficient, estimator key, and whether it is in the loss or the reward;
     * with `target` (veRL `kl_ctrl.type: adaptive`) β adapts towards that KL over `horizon` samples.
     */
    kl: {
      beta: number;
      estimator: string;
      placement: "loss" | "reward";
      target?: number | null | undefined;
      horizon?: number | undefined;
    };
    /** Entropy bonus coefficient (the loss gets `- entropyCoef · H`). */
    entropyCoef: number;
    /** Passes over each batch (veRL `ppo_epochs`, TRL `num_iterations`). */
    ppoEpochs: number;
    /**
     * Responses per optimizer step (veRL `ppo_mini_batch_size` times `rollout.n`): each epoch splits
     * the batch into mini-batches of this size, one AdamW step each; must divide
     * `rollout.batchSize`. null or absent: the whole batch, one step per epoch.
     */
    ppoMiniBatchSize?: number | null | undefined;
    /** Shuffle the responses before splitting each epoch into mini-batches (seeded; default true). */
    shuffleMiniBatches?: boolean | undefined;
    /**
     * Where π_old, the ratio's denominator, comes from: `recompute` (default; the learner scores
     * the batch before the first optimizer step) or `rollout` (the sampler's log-probs, veRL's
     * `rollout_correction.bypass_mode`, slime's `--use-rollout-logprobs`: one forward pass fewer
     * per step, and the clip acts against the policy that really sampled each token).
     */
    oldLogProbs?: "recompute" | "rollout" | undefined;
    /** Responses per forward/backward pass (gradient accumulation); must divide the mini-batch. */
    microBatchSize: number;
    /** GAE discount and λ, for estimator `gae` only. */
    gae?: { gamma: number; lambda: number } | null | undefined;
    /** Value-loss coefficient and clip range, for estimator `gae` only. */
    value?: { coef: number; clipRange: number } | null | undefined;
    /** DAPO overlong shaping: penalty up to `penalty` over the last `buffer` tokens. */
    overlong: { enabled: boolean; buffer: number; penalty: number };
    /** PRIME (estimator `prime`): β of the implicit process reward `β·(log π_old − log π_ref)`. */
    prime?: { beta: number } | null | undefined;
  };
  /** Problem selection, curricula, replay and budgets (absent in runs written before it). */
  sampling?: {
    /** Training problems to draw from: the first `pool` distinct ones; null = the endless stream. */
    pool: number | null;
    /**
     * `stream` (the task's problems in order, each once), `uniform` (uniform draws from the pool),
     * or `priority` (Kimi k1.5: `p ∝ max(1 − s, ε)` with `s` the problem's tracked pass rate).
     */
    selection: "stream" | "uniform" | "priority";
    /** Floor ε of the priority weights, and the pass rate assumed for a problem never drawn. */
    priority: { epsilon: number; unseenRate: number };
    /** EMA decay of the tracked pass rates (weight of the old rate). */
    passRateDecay: number;
    /** POLARIS: remove a problem once its last `consecutive` groups passed at `threshold` or more. */
    mastery: { threshold: number; consecutive: number } | null;
    /** GRESO: skip problems whose recent groups were all correct or all wrong, before sampling. */
    greso: {
      pEasy: number;
      pHard: number;
      targetZeroVariance: number;
      adjust: number;
      minP: number;
      maxP: number;
    } | null;
    /** Easy→hard: only problems whose difficulty rank is within the step's competence are drawn. */
    curriculum: {
      schedule: "linear" | "root";
      steps: number;
      initial: number;
      power: number;
    } | null;
    /**
     * Replay (RLEP, prioritised): responses of earlier steps kept per problem and added to its
     * group when it is drawn again, tagged with the step that sampled them.
     */
    replay: {
      mode: "success" | "prioritized";
      perGroup: number;
      capacity: number;
      maxAge: number;
    } | null;
    /** DARS-style budgets: samples per problem between `min` and `max` by its pass rate. */
    budget: { min: number; max: number; shape: "medium" | "hard" } | null;
  } | undefined;
  /** The optimizer. */
  optimizer: {
    /** Peak learning rate (> 0). */
    lr: number;
    /** Adam β1, β2 in [0, 1). */
    betas: [number, number];
    /** Decoupled weight decay (>= 0). */
    weightDecay: number;
    /** Linear warm-up steps. */
    warmupSteps: number;
    /** Schedule after warm-up. */
    schedule: "constant" | "cosine" | "linear";
    /** Gradient-norm clip (> 0) or null (off). */
    gradClip: number | null;
  };
  /** The loop. */
  trainer: {
    /** Training steps. */
    steps: number;
    /** Seed of everything random. */
    seed: number;
    /** `auto`, `cpu` or `webgpu`. */
    device: "auto" | "webgpu" | "cpu";
    /**
     * On the CPU, which native BLAS the matmuls take: `auto` (OpenBLAS for the backward pass's
     * products when it loads), `openblas` (every product; decode then agrees with recomputation
     * within rounding only), `wasm` or `ts` (none).
     */
    blas: "auto" | "openblas" | "wasm" | "ts";
    /**
     * Activation checkpointing of the policy's decoder layers while training: each keeps only
     * its input for the backward pass and runs again there (about a third more compute, the
     * activations of one tensor per layer instead of about ten).
     */
    activationCheckpointing: boolean;
    /** Evaluate every N steps (0 = off). */
    evalEvery: number;
    /** Held-out problems per evaluation. */
    evalProblems: number;
    /** Samples per held-out problem (n of pass@k). */
    evalSamples: number;
    /** k of pass@k (<= evalSamples). */
    evalK: number;
    /** Checkpoint every N steps (0 = off). */
    saveEvery: number;
    /** Log samples every N steps (0 = off). */
    samplesEvery: number;
    /** Samples logged each time (<= batchSize). */
    samplesCount: number;
  };
  /** The output. */
  output: {
    /** Directory the run directory is created in (default `runs`). */
    dir: string;
    /** Run directory name (default: the recipe's file name). */
    name?: string | undefined;
    /**
     * Write TensorBoard event files to `<run>/tb/` (default false): a scalar per numeric metric of
     * every `metrics.jsonl` record (tag = the key) and `eval.jsonl` record (tag `eval/<key>`), and
     * the logged samples as one text summary per step (tag `samples`). See the README's Trackers.
     */
    tensorboard?: boolean | undefined;
    /**
     * Metrics sinks of `@rlvr/infra` the records also go to (default `[jsonl]`): `jsonl` the run's
     * `metrics.jsonl` / `eval.jsonl` (always written: resume, the report and the summary read
     * them; listing it changes nothing), `csv` `metrics.csv` and `eval.csv` in the run directory
     * (columns fixed by the first record), `console` one `key=value` line per record (eval keys
     * prefixed `eval/`).
     */
    sinks?: ("jsonl" | "csv" | "console")[] | undefined;
  };
  /** Modules that register estimators, losses or aggregations when imported (`./my_methods.ts`). */
  plugins?: string[] | null | undefined;
}
