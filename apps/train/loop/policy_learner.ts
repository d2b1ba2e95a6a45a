/**
 * The learner of a run built from a policy already loaded: {@link learnerFromPolicy} does what
 * `loadLearner` (`learner.ts`) does once the files are read (the reference, LoRA, the value
 * head, AdamW, a resumed checkpoint's weights and moments), so a browser tab, which loads the
 * policy from fetched bytes, builds the same learner as `deno task train`. See `learner.ts`
 * for the design.
 *
 * Design decision: a file of its own, apart from `loadLearner` and the checkpoint files it
 * reads, so that it imports no file-system code; what only files give (the checkpoint resumed
 * from, a second copy of the policy for the reference) is passed in as functions, called where
 * `loadLearner` has always read them.
 *
 * @module
 */

import {
  attachValueHead,
  CausalLM,
  parameterCount,
  type Tokenizer,
  VisionLanguageModel,
  VisionTower,
} from "@rlvr/policy";
import { AdamW, type Optimizer, type Tensor, tensor } from "@rlvr/tensor";
import type { Config } from "../config/types.ts";
import { needsReference } from "../config/mapping.ts";
import { attachRunLora } from "./lora.ts";
import type { LoadedPolicy } from "./policy.ts";
import type { LoadedTrainState } from "./state.ts";
import { VisionInputs } from "./vision.ts";

/** What {@link learnerFromPolicy} (and `loadLearner`) builds. */
export interface Learner {
  /** The policy being trained (adapters and value head attached when configured). */
  model: CausalLM;
  /** The reference: a frozen copy, `"base"` (LoRA without adapters), or null (none needed). */
  ref: CausalLM | "base" | null;
  /** AdamW over the trained parameters. */
  optimizer: Optimizer;
  /** The tokenizer of `model.checkpoint`. */
  tokenizer: Tokenizer;
  /** `model.checkpoint` as loaded (its EOS ids and generation config are the run's). */
  init: Omit<LoadedPolicy, "model">;
  /** Steps already taken (0 for a new run). */
  start: number;
  /** The training stream's position to continue from. */
  dataPosition: number;
  /** A one-line description for the run's header. */
  description: string;
  /**
   * A vision-language policy's images and models (the policy's and the reference copy's
   * towers), or null for a text model.
   */
  vision: VisionInputs | null;
  /** Frees the policy, the reference and the optimizer's moments. */
  dispose(): void;
}

/** What {@link learnerFromPolicy} reads besides the policy. */
export interface LearnerSources {
  /**
   * The checkpoint resumed from: where it is (named in errors) and how to read it
   * (`loadTrainState`); absent for a new run.
   */
  resume?: { from: string; load: () => Promise<LoadedTrainState> };
  /**
   * Loads a second copy of the policy, the reference of full fine-tuning with a KL term
   * (`algorithm.kl.beta` > 0, PRIME); called only then, and required then.
   */
  copy?: () => Promise<LoadedPolicy>;
}

/**
 * The learner of `config` around `policy` (a load of `model.checkpoint`, which it takes over),
 * resumed when `options.resume` is given (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig, validateConfig } from "@rlvr/train";
 * import { loadPolicy } from "./policy.ts";
 * import { learnerFromPolicy } from "./policy_learner.ts";
 * import assert from "node:assert/strict";
 * const config = await validateConfig(defaultConfig());
 * const learner = await learnerFromPolicy(config, await loadPolicy(config.model.checkpoint));
 * assert.equal(learner.ref, null); // β = 0: no reference is held
 * assert.equal(learner.start, 0);
 * config.algorithm.kl.beta = 0.04; // a reference is needed: a second copy
 * await assert.rejects(
 *   learnerFromPolicy(config, await loadPolicy(config.model.checkpoint)),
 *   /pass options\.copy/,
 * );
 * learner.dispose();
 * ```
 */
export async function learnerFromPolicy(
  config: Config,
  policy: LoadedPolicy,
  options: LearnerSources = {},
): Promise<Learner> {
  const t = config.trainer;
  const lora = config.model.lora ?? null;
  const { model: base, ...init } = policy;
  // Each decoder of a vision-language checkpoint with its model (the tower rides on it).
  const towers = new Map<CausalLM, VisionLanguageModel>();
  if (init.vision !== null) towers.set(base, init.vision.model);
  const withRef = needsReference(config);
  let headWeights: Map<string, Tensor> | undefined = init.extra.size > 0 ? init.extra : undefined;
  const resumed = options.resume === undefined ? null : await options.resume.load();
  if (resumed !== null) {
    const head = new Map([...resumed.extra].filter(([n]) => n.startsWith("v_head.")));
    headWeights = head.size > 0 ? head : undefined;
    if ((resumed.lora !== null) !== (lora !== null)) {
      base.dispose();
      throw new Error(
        `train: checkpoint ${options.resume!.from} is ${
          resumed.lora !== null ? "a LoRA" : "a full"
        } checkpoint but model.lora is ${
          lora !== null ? "set" : "not set"
        }; resume with the config the run was started with`,
      );
    }
  }
  let model: CausalLM;
  let ref: CausalLM | "base" | null = null;
  // A LoRA reference is the decoder without its adapters; when the tower trains, the reference
  // needs the initial tower too: a frozen copy, taken before a resumed tower is restored.
  let refTower: VisionTower | null = null;
  if (
    lora !== null && withRef && init.vision !== null && !(config.model.freezeVisionTower ?? false)
  ) {
    const copy = new Map<string, Tensor>();
    for (const [name, t] of init.vision.model.tower.params) {
      const values = Float32Array.from(await t.data() as Float32Array);
      copy.set(name, tensor(values, { shape: [...t.shape], backend: t.backend }));
    }
    refTower = VisionTower.fromParams(init.vision.model.config.vision, copy);
  }
  if (lora !== null) {
    model = base;
    attachRunLora(model, lora, {
      seed: t.seed,
      ...(resumed?.lora != null ? { weights: resumed.lora.weights } : {}),
    });
    const tower = resumed?.lora?.tower;
    if (tower !== undefined && tower.size > 0) {
      try {
        await restoreTower(init.vision?.model.tower.params ?? null, tower, options.resume!.from);
      } catch (e) {
        model.dispose();
        refTower?.dispose();
        throw e;
      }
    }
    if (withRef) ref = "base";
  } else if (resumed !== null) {
    if (init.vision !== null) {
      // The tower's tensors are the checkpoint's visual.* extras.
      const params = new Map(resumed.params);
      for (const [n, t] of resumed.extra) if (!n.startsWith("v_head.")) params.set(n, t);
      const vlm = VisionLanguageModel.fromParams(init.vision.model.config, params);
      model = vlm.lm;
      towers.set(model, vlm);
    } else {
      model = CausalLM.fromParams(resumed.config!, resumed.params);
    }
    if (withRef) ref = base;
    else base.dispose();
  } else if (withRef) {
    if (options.copy === undefined) {
      base.dispose();
      throw new Error(
        `learnerFromPolicy: algorithm.kl.beta ${config.algorithm.kl.beta} (or PRIME) needs a reference policy, a second copy of ${config.model.checkpoint}; pass options.copy (loads it again), or train with model.lora (the reference is then the base itself)`,
      );
    }
    ref = base;
    const copy = await options.copy();
    model = copy.model;
    if (copy.vision !== null) towers.set(model, copy.vision.model);
  } else {
    model = base;
  }
  if (config.model.storage === "bf16") {
    // The frozen weights only: the LoRA base (also the reference), or the reference copy.
    try {
      if (lora !== null) model.setStorageFormat("bf16");
      else if (ref instanceof CausalLM) ref.setStorageFormat("bf16");
    } catch (e) {
      model.dispose();
      if (ref instanceof CausalLM) ref.dispose();
      refTower?.dispose();
      throw new Error(`train: model.storage bf16: ${(e as Error).message}`);
    }
  }
  let vision: VisionInputs | null = null;
  const policyVlm = towers.get(model);
  if (policyVlm !== undefined) {
    policyVlm.towerTrainable = !(config.model.freezeVisionTower ?? false);
    vision = new VisionInputs(policyVlm, { processor: init.vision!.processor });
    if (refTower !== null) vision.setReferenceTower(refTower);
    const refVlm = ref instanceof CausalLM ? towers.get(ref) : undefined;
    if (refVlm !== undefined) {
      refVlm.towerTrainable = false;
      vision.addModel(refVlm);
    }
  }
  if (config.model.valueHead) {
    attachValueHead(model, headWeights !== undefined ? { weights: headWeights } : { seed: t.seed });
  }
  model.activationCheckpointing = t.activationCheckpointing;
  const optimizer = new AdamW(model.parameters(), {
    lr: config.optimizer.lr,
    betas: config.optimizer.betas,
    weightDecay: config.optimizer.weightDecay,
  });
  if (resumed !== null) optimizer.loadState(resumed.optimizer);
  const trainable = model.parameters().reduce((n, p) => n + p.size, 0);
  const towerSize = policyVlm === undefined
    ? 0
    : [...policyVlm.tower.params.values()].reduce((n, p) => n + p.size, 0);
  const description = `${config.model.checkpoint} (${
    policyVlm !== undefined
      ? `${policyVlm.config.text.modelType} + vision tower`
      : model.config.modelType
  }, ${(parameterCount(model.config) + towerSize).toLocaleString("en-US")} parameters, ${
    trainable.toLocaleString("en-US")
  } trained${
    lora !== null
      ? ` by LoRA r=${lora.rank} alpha=${lora.alpha} on ${lora.targetModules.join(", ")}`
      : ""
  }${
    vision !== null
      ? `; vision tower ${policyVlm!.towerTrainable ? "trained" : "frozen"} (${
        policyVlm!.tower.params.size
      } tensors)`
      : ""
  }${ref !== null ? "; a reference policy is held" : ""}${
    config.model.storage === "bf16"
      ? lora !== null ? "; base held as bf16" : ref !== null ? "; reference held as bf16" : ""
      : ""
  }`;
  return {
    model,
    ref,
    optimizer,
    tokenizer: init.tokenizer,
    init,
    start: resumed?.state.step ?? 0,
    dataPosition: resumed?.state.dataPosition ?? 0,
    description,
    vision,
    dispose() {
      optimizer.dispose();
      vision?.dispose();
      model.dispose();
      if (ref !== "base") ref?.dispose();
    },
  };
}

/**
 * Writes a LoRA checkpoint's trained tower (`vision_tower.safetensors`) into the policy's tower,
 * checking that it is the same tower (names and shapes).
 */
async function restoreTower(
  into: Map<string, Tensor> | null,
  saved: Map<string, Tensor>,
  from: string,
): Promise<void> {
  try {
    const where = `${from} holds a vision tower`;
    if (into === null) throw new Error(`train: ${where}, but the policy is a text-only model`);
    for (const [name, t] of into) {
      const s = saved.get(name);
      if (s === undefined || s.shape.join() !== t.shape.join()) {
        throw new Error(
          `train: ${where} without ${name} [${t.shape.join(", ")}] (${
            s === undefined ? "missing" : `[${s.shape.join(", ")}]`
          }); resume with the model.checkpoint the run was started with`,
        );
      }
    }
    for (const [name, t] of into) t.backend.write(t.buffer, await saved.get(name)!.data());
  } finally {
    saved.forEach((t) => t.dispose());
  }
}
